"""Text display shared by the terminal front ends: cards with suit symbols and colours, the
end of a hand, and the replay viewer (``rummyzoo replay``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.envs.match import Match
from rummyzoo.envs.replay import HandOver, Move, ReplaySimulation, load_replay, verify_replay

__all__ = ["colour_cards", "hand_over_text", "show_replay"]


_CARD_TOKEN = re.compile(r"(?<!\w)(10|[A2-9TJQK])([cdhs])(?!\w)")
_SUIT_SYMBOL = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
_RED = "\x1b[1;31m"
_BLACK = "\x1b[1m"
_RESET = "\x1b[0m"


def colour_cards(text: str, symbols: bool = True, color: bool = False) -> str:
    """Draw every card in ``text`` (``Kh``, ``Td``, ``10s``) with a suit symbol, and in colour.

    With ``symbols`` a card reads ``K♥``, ``10♦``; with ``color`` diamonds and hearts are red and clubs and spades bold (ANSI escapes).
    """

    def draw(match: re.Match[str]) -> str:
        rank, suit = match.group(1), match.group(2)
        if symbols:
            card = ("10" if rank == "T" else rank) + _SUIT_SYMBOL[suit]
        else:
            card = rank + suit
        if not color:
            return card
        return f"{_RED if suit in 'dh' else _BLACK}{card}{_RESET}"

    return _CARD_TOKEN.sub(draw, text)


# ---------------------------------------------------------------------------- the viewer
def show_replay(
    path: str | Path,
    view: int | None = None,
    step: bool = False,
    output: Callable[[str], None] = print,
    read_line: Callable[[], str | None] | None = None,
    color: bool = False,
) -> dict[str, Any]:
    """Print a saved game move by move (``rummyzoo replay``), after checking it re-plays.

    :param view: the seat whose hand is shown (None: every hand open).
    :param step: wait for a line of input between moves: ``read_line`` returns the line, or None
        at end of input; EOF or ``q`` runs on to the end without waiting.
    :raises ReplayError: the file is unreadable or corrupt (nothing is printed then).
    """
    data = load_replay(path)
    n = data["num_players"]
    if view is not None and not 0 <= view < n:
        raise ValueError(f"--seat must be 0..{n - 1} for this {n}-player game, got {view}")
    summary = verify_replay(data, str(path))

    def paint(text: str) -> str:
        return colour_cards(text, symbols=True, color=color)

    sim = ReplaySimulation(data, str(path))
    match = sim.match
    who = ", ".join(f"player_{s} = {a}" for s, a in enumerate(data["agents"]))
    options = ", ".join(f"{k}={v!r}" for k, v in data["options"].items()) or "defaults"
    output(
        f"replay of {data['variant']}, {n} players ({who}); seed {data['seed']}; options: {options}"
    )
    output("view: " + ("every hand open" if view is None else f"player_{view}'s hand only"))
    waiting = step
    last_seat: int | None = None

    def show(event: Move | HandOver, sim: ReplaySimulation) -> None:
        nonlocal waiting, last_seat
        if isinstance(event, Move):
            if event.seat != last_seat:
                output("")
                output(paint(render_table(match, view)))
                last_seat = event.seat
            # A description names only cards the move puts face up, so every view may see it.
            text = event.description
            output(
                paint(
                    f"  {event.index + 1:>4}. player_{event.seat} ({data['agents'][event.seat]}): {text}"
                )
            )
            if waiting and read_line is not None:
                answer = read_line()
                if answer is None or answer.strip().lower() in ("q", "quit"):
                    waiting = False  # EOF or q: run on to the end without waiting
        else:
            last_seat = None
            output("")
            output(paint(hand_over_text(match, event)))

    sim.run(show)
    output("")
    final = ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(summary["final"]))
    output(f"game over after {summary['moves']} moves, {summary['hands']} hand(s): {final}")
    output("replay verified: every hand's points match the record")
    return summary


def render_table(match: Match, view: int | None) -> str:
    """The table as text: ``view``'s hand (every hand when None), the piles, the totals."""
    return match.game.render(match.state, view, match.totals_by_seat())


def hand_over_text(match: Match, event: HandOver) -> str:
    """The end of a hand with every hand open and its points (the render shows match totals)."""
    lines = []
    if event.truncated and event.points is None:
        lines.append(f"== hand {event.number} stopped: {_truncation_reason(event)} (no points) ==")
    else:
        lines.append(f"== hand {event.number} over ==")
    totals = np.asarray(event.totals, dtype=np.float64)
    lines.append(match.game.render(event.state, None, totals))
    if event.points is not None:
        lines.append(
            "hand points: " + ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(event.points))
        )
    if event.truncated and event.points is not None:
        lines.append(f"the match stops: {_truncation_reason(event)}")
    return "\n".join(lines)


def _truncation_reason(event: HandOver) -> str:
    for info in event.infos.values():
        if "truncated_by" in info:
            return f"cap {info['truncated_by']} reached"
    return "cap reached"
