"""The terminal front ends and the files they write: the demo, the replay viewer's step mode,
the hints of the terminal game, the arena heatmap's title, the modes of written files."""

from __future__ import annotations

import os
import stat

from rummyzoo.agents.checkpoints import atomic_write_bytes, atomic_write_text


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------ written files
def test_atomic_writes_get_the_mode_of_a_plain_open(tmp_path) -> None:
    expected = 0o666 & ~_umask()
    atomic_write_text(tmp_path / "state.json", "{}\n")
    atomic_write_bytes(tmp_path / "sub" / "data.bin", b"\x00\x01")
    with open(tmp_path / "plain.txt", "w") as fh:
        fh.write("x")
    for name in ("state.json", "sub/data.bin", "plain.txt"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected, name
    assert (tmp_path / "state.json").read_text() == "{}\n"
    # Replacing a file keeps its mode, as writing it with open() would.
    os.chmod(tmp_path / "state.json", 0o640)
    atomic_write_text(tmp_path / "state.json", "[]\n")
    assert stat.S_IMODE((tmp_path / "state.json").stat().st_mode) == 0o640
    assert (tmp_path / "state.json").read_text() == "[]\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.txt", "state.json", "sub"]


# ------------------------------------------------------------------ arena heatmap
def _arena_report(**options):
    from rummyzoo.agents.arena import run_arena, summarize

    result = run_arena(
        "knock_rummy", 2, ["knock.greedy", "random"], deals=3, seed=1, options=options
    )
    return summarize(result, resamples=20)


def test_heatmap_title_names_the_run(tmp_path, monkeypatch) -> None:
    import matplotlib.figure

    from rummyzoo.agents.arena import heatmap_figure, write_heatmap

    report = _arena_report(target_score=100, max_turns=200)
    report["deals"] = 2000  # as a long run would report
    title = heatmap_figure(report).get_suptitle()
    flat = " ".join(title.split())  # the title is wrapped to the figure's width
    assert flat == (
        "knock_rummy, 2 players, 2,000 deals, target_score=100, max_turns=200 "
        "row's score against column"
    )
    assert title.splitlines()[-1] == "row's score against column"
    # write_heatmap saves that figure.
    saved = []
    original = matplotlib.figure.Figure.savefig

    def savefig(fig, *args, **kwargs):
        saved.append(fig.get_suptitle())
        return original(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    path = write_heatmap(report, tmp_path / "cross.png")
    assert saved == [title]
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plain = _arena_report()
    plain_title = " ".join(heatmap_figure(plain).get_suptitle().split())
    assert plain_title.startswith("knock_rummy, 2 players, 3 deals, default options")
