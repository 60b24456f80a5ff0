"""Progress of a long job: a live bar on a terminal, a compact line every N seconds elsewhere.

``mode="bar"`` draws a tqdm bar (steps, steps/s, time left and the latest evaluation in its
postfix); ``mode="lines"`` prints one line every ``every`` seconds and at the end (for logs and
CI, where a bar would print a line per refresh); ``mode="off"`` prints nothing. ``"auto"``
is ``bar`` when the stream is a terminal and ``lines`` otherwise.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

__all__ = ["PROGRESS_MODES", "Progress", "resolve_mode"]

PROGRESS_MODES = ("auto", "bar", "lines", "off")


def resolve_mode(mode: str, stream: TextIO) -> str:
    """``auto`` made concrete for ``stream``: a bar on a terminal, lines elsewhere."""
    if mode not in PROGRESS_MODES:
        raise ValueError(f"progress must be one of {', '.join(PROGRESS_MODES)}, got {mode!r}")
    if mode != "auto":
        return mode
    isatty = getattr(stream, "isatty", None)
    return "bar" if isatty is not None and isatty() else "lines"


def _terminal_size(stream: TextIO) -> tuple[int, int]:
    """The terminal's (columns, lines) of ``stream`` (0 where unknown)."""
    import os

    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 0, 0
    return size.columns, size.lines


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds)) if seconds == seconds else 0
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Steps ``start .. total`` of one phase of a job (see the module docstring).

    :param label: what is counted, e.g. ``"train"`` or ``"warm start"``.
    :param unit: the unit of a step (``"step"``, ``"decision"``).
    :param every: seconds between lines in ``lines`` mode.
    """

    def __init__(
        self,
        label: str,
        total: int,
        start: int = 0,
        mode: str = "auto",
        every: float = 30.0,
        unit: str = "step",
        stream: TextIO | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.mode = resolve_mode(mode, self.stream)
        self.label = label
        self.total = int(total)
        self.start = self.done = int(start)
        self.every = float(every)
        self.unit = unit
        self.clock = clock
        self.began = self._last_line = clock()
        self.note = ""
        self._printed = ""
        self._printed_done: int | None = None
        self._bar = None
        if self.mode == "bar":
            from tqdm import tqdm

            # A terminal that reports no size (some pseudo-terminals say 0 x 0) gets a fixed
            # one: tqdm would take 0 lines for a bar it may not draw, and draw nothing.
            width, height = _terminal_size(self.stream)
            known = width > 0 and height > 0
            self._bar = tqdm(
                total=self.total,
                initial=self.start,
                desc=label,
                unit=unit,
                file=self.stream,
                dynamic_ncols=known,
                ncols=None if known else width or 100,
                nrows=None if known else height or 24,
                smoothing=0.1,
            )

    @property
    def rate(self) -> float:
        """Steps per second since this phase began."""
        elapsed = self.clock() - self.began
        return (self.done - self.start) / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        """One compact line: steps, share, rate, elapsed, time left and the latest note."""
        rate = self.rate
        left = max(0, self.total - self.done) / rate if rate > 0 else float("nan")
        share = min(100.0, 100.0 * self.done / self.total) if self.total else 100.0
        text = (
            f"{self.label}: {self.done:,}/{self.total:,} {self.unit}s ({share:.0f}%), "
            f"{rate:,.0f} {self.unit}s/s, elapsed {_duration(self.clock() - self.began)}, "
            f"left {_duration(left) if left == left else '?'}"
        )
        return text + (f" | {self.note}" if self.note else "")

    def update(self, done: int) -> None:
        """Report that ``done`` steps (absolute) are done (a phase may end past its total:
        PPO finishes its last rollout)."""
        done = int(done)
        if self._bar is not None:
            if done > self._bar.n:
                self._bar.update(done - self._bar.n)
            self.done = done
            return
        self.done = done
        if self.mode == "lines" and self.clock() - self._last_line >= self.every:
            self._print()

    def _print(self) -> None:
        text = self.line()
        self._last_line = self.clock()
        if text != self._printed:
            print(text, file=self.stream, flush=True)
            self._printed = text
            self._printed_done = self.done

    def restart_clock(self) -> None:
        """Count rate and time left from now (after work that is not steps, e.g. a first
        evaluation, so it does not read as a slow start)."""
        self.began = self._last_line = self.clock()
        self.start = self.done
        if self._bar is not None:
            bar = self._bar
            bar.start_t = bar.last_print_t = bar._time()
            bar.initial = bar.last_print_n = bar.n

    def set_note(self, note: str, short: str | None = None) -> None:
        """Show ``note`` (e.g. the latest evaluation) with the progress. A bar prints it whole
        on a line of its own above the bar, which keeps it, and shows ``short`` (default: the
        note) beside the bar, where the terminal's width may cut it."""
        self.note = note
        if self._bar is not None:
            self._bar.write(note, file=self.stream)
            self._bar.set_postfix_str(short or note, refresh=True)
        elif self.mode == "lines":
            self._print()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self.mode == "lines" and self.done != self._printed_done:
            self._print()  # not again when only the clock moved since the last line

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
