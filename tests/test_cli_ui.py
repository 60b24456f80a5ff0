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
