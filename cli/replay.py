"""``rummyzoo replay FILE``: step through a saved game after checking that it re-plays."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rummyzoo.cli.common import Parents, output_file, printable
from rummyzoo.cli.display import colour_cards, hand_over_text, render_table
from rummyzoo.envs.replay import (
    HandOver,
    Move,
    ReplaySimulation,
    hands_played,
    load_replay,
    verify_replay,
)

__all__ = ["STEP_PROMPT", "show_replay"]

#: What ``--step`` asks after every move.
STEP_PROMPT = "[Enter] next, q quit> "
STOP_WORDS = ("q", "quit")


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    replay = sub.add_parser(
        "replay",
        help="step through a saved game (checked to re-play exactly)",
        description="Re-play a saved game from its decks and actions, check every hand's "
        "points against the record (a mismatch is reported as corrupt), then print it move by "
        "move.",
    )
    replay.add_argument("file", help="a replay JSON file (arena --save-games, play --save)")
    view = replay.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, default=None, help="show only this seat's hand")
    view.add_argument("--open", action="store_true", help="show every hand (the default)")
    replay.add_argument(
        "--step",
        action="store_true",
        help="wait after every move: Enter shows the next one, q stops the replay there, end of "
        "input (Ctrl-D) runs on to the end",
    )
    replay.add_argument("--no-color", action="store_true", help="no ANSI colours")
    replay.add_argument(
        "--html",
        metavar="OUT",
        help="write one self-contained HTML page (no network, no server) that steps through the "
        "game instead of printing it: every hand (open, or --seat's view), the piles, melds, "
        "scores, each move and its legal alternatives; buttons, a hand picker and keys (OUT "
        "ends in .html or .htm; none: .html is added)",
    )
    replay.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Step through a saved game after checking that it re-plays exactly."""
    import os

    color = not args.no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    if args.html is not None:
        ignored = [
            flag for flag, on in (("--step", args.step), ("--no-color", args.no_color)) if on
        ]
        if ignored:
            raise ValueError(
                f"{' and '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} for the "
                "terminal: --html writes a page (its buttons and keys step through the game)"
            )
        from rummyzoo.cli.viewer import write_replay_html

        # a page's name (none: .html), so that a slip of the name cannot replace a replay
        html = output_file(args.html, "--html", ".html", (".html", ".htm"), inputs=[args.file])
        view = None if args.open else args.seat
        if view is not None:
            _check_seat(load_replay(args.file), view)
        out = write_replay_html(args.file, html, view)
        print(f"wrote {out}: open it in a browser (arrows step, PageUp/PageDown change hand)")
        return 0

    def read_line(prompt: str) -> str | None:
        try:
            return input(prompt)
        except EOFError:
            print()
            return None

    show_replay(  # Ctrl-C: the command's one line and exit status 130, as every command's
        args.file,
        view=None if args.open else args.seat,
        step=args.step,
        read_line=read_line,
        color=color,
    )
    return 0


class _Stopped(Exception):
    """The viewer asked to stop (``q`` at a ``--step`` prompt) after ``moves`` moves."""

    def __init__(self, moves: int) -> None:
        super().__init__(moves)
        self.moves = moves


def _check_seat(data: dict[str, Any], view: int) -> None:
    n = data["num_players"]
    if not 0 <= view < n:
        raise ValueError(f"--seat must be 0..{n - 1} for this {n}-player game, got {view}")


def show_replay(
    path: str | Path,
    view: int | None = None,
    step: bool = False,
    output: Callable[[str], None] = print,
    read_line: Callable[[str], str | None] | None = None,
    color: bool = False,
) -> dict[str, Any]:
    """Print a saved game move by move (``rummyzoo replay``), after checking it re-plays.

    :param view: the seat whose hand is shown (None: every hand open).
    :param step: wait for a line of input after every move: ``read_line(prompt)`` shows
        ``prompt`` (:data:`STEP_PROMPT`) and returns the line, or None at end of input. ``q`` or
        ``quit`` stops the replay there (a line says so); end of input runs on to the end
        without waiting.
    :raises ReplayError: the file is unreadable or corrupt (nothing is printed then).
    """
    data = load_replay(path)
    n = data["num_players"]
    if view is not None:
        _check_seat(data, view)
    summary = verify_replay(data, str(path))

    def paint(text: str) -> str:
        return colour_cards(text, symbols=True, color=color)

    sim = ReplaySimulation(data, str(path))
    match = sim.match
    # a file's names as text, their control characters escaped: a crafted name cannot clear
    # the screen, set the window's title or write "replay verified" of its own
    names = [printable(a) for a in data["agents"]]
    who = ", ".join(f"player_{s} = {a}" for s, a in enumerate(names))
    options = ", ".join(f"{k}={v!r}" for k, v in data["options"].items()) or "defaults"
    seed = f"; seed {data['seed']}"
    if not data.get("dealt_from_seed", True):  # only what came after the first deal checks it
        seed += " (the first deck was given, not dealt from the seed)"
    if view is not None:  # one seat's view: the seed deals every card (as the page leaves it)
        seed = ""
    output(f"replay of {data['variant']}, {n} players ({who}){seed}; options: {options}")
    output("view: " + ("every hand open" if view is None else f"player_{view}'s hand only"))
    waiting = step
    last_seat: int | None = None
    total = len(data["actions"])

    ended_hand = False  # the last event shown was a hand's end

    def show(event: Move | HandOver, sim: ReplaySimulation) -> None:
        nonlocal waiting, last_seat, ended_hand
        ended_hand = isinstance(event, HandOver)
        if isinstance(event, Move):
            if event.seat != last_seat:
                output("")
                output(paint(render_table(match, view)))
                last_seat = event.seat
            # from a seat's view, another seat's move as the table saw it (no hand positions)
            who = f"player_{event.seat} ({names[event.seat]})"
            output(paint(f"  {event.index + 1:>4}. {who}: {event.seen_by(view)}"))
            if waiting and read_line is not None:
                answer = read_line(STEP_PROMPT)
                if answer is None:
                    waiting = False  # end of input: run on to the end without waiting
                elif answer.strip().lower() in STOP_WORDS:
                    raise _Stopped(event.index + 1)
        else:
            last_seat = None
            output("")
            output(paint(hand_over_text(match, event)))

    try:
        sim.run(show)
    except _Stopped as stop:
        output("")
        output(
            f"replay stopped after move {stop.moves} of {total} (the whole game was verified "
            "before it was shown: every hand's points match the record)"
        )
        return summary
    if not data.get("finished", True) and not ended_hand:
        output("")  # where the recording stops mid-hand: the table as it stands (or the deal)
        output(paint(render_table(match, view)))
    output("")
    final = ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(summary["final"]))
    if data.get("finished", True):
        hands = hands_played(data, summary["hands"])
        output(f"game over after {summary['moves']} moves, {hands}: {final}")
    else:
        output(
            f"the recording stops here, mid-game, after {summary['moves']} moves and "
            f"{summary['hands']} finished hand(s): {final}"
        )
    output("replay verified: every hand's points match the record")
    return summary
