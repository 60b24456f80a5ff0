"""Progress lines and bars (training/progress.py), on a fake clock."""

from __future__ import annotations

import io

import pytest

from rummyzoo.training.progress import Progress, resolve_mode

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels


def _run(every: float, steps: int = 130, dt: float = 0.6) -> list[str]:
    stream, now = io.StringIO(), [0.0]
    bar = Progress("train", 100, mode="lines", every=every, stream=stream, clock=lambda: now[0])
    for done in range(0, steps, 10):
        now[0] += dt
        bar.update(done)
    bar.set_note("eval @120: 0.9")
    bar.close()
    return stream.getvalue().splitlines()


def test_a_line_every_n_seconds_and_one_closing_line() -> None:
    lines = _run(every=1.0)
    assert len(lines) == 7  # 13 updates 0.6 s apart: a line at most once a second, then the note
    assert lines[0] == "train: 10/100 steps (10%), 8 steps/s, elapsed 0:01, left 0:11"
    assert lines[-1].endswith("| eval @120: 0.9") and "120/100 steps (100%)" in lines[-1]
    assert len(set(lines)) == len(lines)  # closing does not repeat the last line
    assert len(_run(every=100.0)) == 1  # a long interval: only the closing line


def test_closing_does_not_repeat_a_line_when_only_the_clock_moved() -> None:
    stream, now = io.StringIO(), [0.0]
    bar = Progress("train", 100, mode="lines", every=1000, stream=stream, clock=lambda: now[0])
    now[0] = 5.0
    bar.update(100)
    bar.set_note("eval @100: 0.9")  # the final evaluation's line
    now[0] = 9.0  # the last checkpoint is saved
    bar.close()
    assert len(stream.getvalue().splitlines()) == 1
    bar = Progress("train", 100, mode="lines", every=1000, stream=stream, clock=lambda: now[0])
    bar.update(40)
    bar.close()  # steps done since the last line: the closing line says where it stopped
    assert stream.getvalue().splitlines()[-1].startswith("train: 40/100 steps")


def test_modes() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert resolve_mode("auto", io.StringIO()) == "lines"
    assert resolve_mode("auto", Tty()) == "bar"
    with pytest.raises(ValueError, match="progress must be one of auto, bar, lines, off"):
        resolve_mode("loud", io.StringIO())
    quiet = io.StringIO()
    with Progress("x", 10, mode="off", stream=quiet) as bar:
        bar.update(10)
    assert quiet.getvalue() == ""
    drawn = Tty()
    with Progress("x", 10, mode="auto", stream=drawn) as bar:
        bar.update(5)
        bar.restart_clock()
        bar.update(6)
        bar.set_note("hello")
    assert "x:" in drawn.getvalue() and "6/10" in drawn.getvalue() and "hello" in drawn.getvalue()


def test_restart_clock_counts_the_rate_from_then() -> None:
    stream, now = io.StringIO(), [0.0]
    bar = Progress("train", 100, mode="lines", every=1000, stream=stream, clock=lambda: now[0])
    now[0] = 60.0  # a first evaluation took a minute
    bar.restart_clock()
    now[0] = 70.0
    bar.update(50)
    assert bar.rate == 5.0 and "left 0:10" in bar.line()


@pytest.mark.parametrize("size", [(0, 0), (0, 30), (120, 0), (120, 30)])
def test_a_bar_is_drawn_on_a_terminal_of_any_reported_size(size, monkeypatch) -> None:
    """Some pseudo-terminals report 0 x 0: the bar still draws (tqdm alone drew nothing when
    the terminal reported no lines, and the progress lines were off, as on a terminal)."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    columns, lines = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    stream = os.fdopen(slave, "w")
    monkeypatch.setattr("sys.stderr", stream)  # as in a run: tqdm sizes only stderr / stdout
    try:
        with Progress("train", 10, mode="auto") as bar:
            bar.update(7)
            bar.set_note("eval @7: 0.9")
        stream.flush()
        drawn = b""
        while True:
            import select

            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                break
            drawn += os.read(master, 65536)
    finally:
        stream.close()
        os.close(master)
    text = drawn.decode(errors="replace")
    assert "train:" in text and "7/10" in text and "eval @7: 0.9" in text


def test_a_bar_keeps_each_note_whole_on_a_line_above_it() -> None:
    """Beside the bar a note may be cut by the terminal's width: each one is also printed
    whole above the bar, and stays there."""

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    drawn = Tty()
    long = (
        "eval @100: win rate vs knock.greedy 0.960 [0.924, 0.979], knock.smart 0.783 [0.772, 0.794]"
    )
    with Progress("x", 10, mode="auto", stream=drawn) as bar:
        bar.update(5)
        bar.set_note(long, "eval @100: knock.greedy 0.96, knock.smart 0.78")
        bar.set_note("eval @200: second", "eval @200")
        bar.update(10)
    lines = drawn.getvalue().replace("\r", "\n").splitlines()
    assert long in lines and "eval @200: second" in lines
