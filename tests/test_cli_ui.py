"""The terminal front ends and the files they write: the demo, the replay viewer's step mode,
the hints of the terminal game, the arena heatmap's title, the modes of written files."""

from __future__ import annotations

import os
import re
import stat

import pytest

from rummyzoo.agents.checkpoints import atomic_write_bytes, atomic_write_text
from rummyzoo.cli.demo import play_demo
from rummyzoo.cli.main import main

VARIANTS = ("knock_rummy", "ditch_rummy", "rummy500")


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


# ------------------------------------------------------------------ demo
def _final_points(lines: list[str], n: int) -> list[float]:
    """The game's points from the last ``n`` lines, which must be the points lines."""
    tail = lines[-n:]
    for seat, line in enumerate(tail):
        assert re.fullmatch(rf"player_{seat}: [+-]\d+(\.\d+)? points", line), tail
    assert lines[-n - 1].startswith("game over after ")
    return [float(line.split()[1]) for line in tail]


@pytest.mark.parametrize("variant", VARIANTS)
def test_demo_ends_with_the_games_points_and_quiet_is_short(variant) -> None:
    out: list[str] = []
    episode = play_demo(variant, 2, seed=1, quiet=True, output=out.append)
    quiet = "\n".join(out).splitlines()
    hand_lines = [line for line in quiet if re.match(r"hand \d+: ", line)]
    assert len(hand_lines) == episode.hands
    summed = [0.0, 0.0]
    for line in hand_lines:
        for seat, points in re.findall(r"player_(\d) ([+-]\d+)", line.split(" (totals")[0]):
            summed[int(seat)] += float(points)
    # The final lines are the game's points: every hand's points added up (not the last hand's).
    assert _final_points(quiet, 2) == summed == episode.points.tolist()
    assert len(quiet) <= episode.hands + 20  # no moves: a line per hand and the final table
    assert not any(re.match(r"player_\d: (draw|take|discard|dig)", line) for line in quiet)

    out = []
    again = play_demo(variant, 2, seed=1, output=out.append)
    full = "\n".join(out).splitlines()
    assert again.points.tolist() == episode.points.tolist()  # the same seeded game
    assert _final_points(full, 2) == summed
    assert sum(line.startswith(("player_0: ", "player_1: ")) for line in full) >= episode.decisions
    assert [line for line in full if line.startswith("== hand ") and "over" not in line] == [
        f"== hand {k} (dealer player_{(k % 2)}) ==" for k in range(1, episode.hands + 1)
    ]
    points_lines = [line for line in full if line.startswith("hand points: ")]
    assert [line.removeprefix("hand points: ") for line in points_lines] == [
        line.split(": ", 1)[1].split(" (totals")[0] for line in hand_lines
    ]


def test_demo_command_quiet_and_help(capsys) -> None:
    assert main(["demo", "ditch_rummy", "--seed", "1", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) < 120  # the full game prints thousands
    _final_points(lines, 2)
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    assert "--quiet print only one line per hand (its points), the final table" in helptext
