"""Text display shared by the terminal front ends: cards with suit symbols and colours, the
table and the end of a hand."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from rummyzoo.envs.match import Match
from rummyzoo.envs.replay import HandOver

__all__ = ["colour_cards", "hand_over_text", "render_table"]


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


def verdict(totals: list[float], seat: int, groups: list[int], name: Any) -> str:
    """How a match ended, said to the player in ``seat``: ``a tie`` (every side level), ``you
    win`` / ``your team wins``, ``you share the win`` / ``your team shares the win`` (level
    with another side), or who won (``name(seat)`` names a seat). ``groups``: each seat's side
    (a team's partners share one, and win together: that is not a shared win)."""
    best = max(totals)
    winners = [s for s, t in enumerate(totals) if t == best]
    sides = {groups[s] for s in winners}
    mine = groups[seat]
    team = sum(g == mine for g in groups) > 1
    if len(sides) == len(set(groups)):
        return "a tie"
    if sides == {mine}:
        return "your team wins" if team else "you win"
    if mine in sides:
        return "your team shares the win" if team else "you share the win"
    shown = [name(s) for s in winners]
    return " and ".join(shown) + (" wins" if len(shown) == 1 else " win")
