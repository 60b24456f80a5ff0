"""Helpers for Ditch Rummy tests: everything a hand's state holds, to compare two states."""

from __future__ import annotations

import numpy as np


def ditch_state(s) -> tuple:
    """Every field of a Ditch Rummy hand's state (the table's melds by their fields, the types of
    the phase, the active flag and the points), equal for two states exactly when they are."""
    return (
        s.hands,
        s.pile,
        s.pile_pos,
        s.views.tobytes(),
        s.discard,
        [(m.owner, m.kind, m.cards, m.low, m.high, m.suit, m.added) for m in s.melds],
        s.singles,
        (s.set_count, s.below, s.above, s.earned),
        (s.current, s.phase, type(s.phase), s.drawn, type(s.active), s.active, s.idle, s.turn),
        (s.over, list(s.points), type(s.points), s.end_reason, s.ended_by, s.totals_key),
        (s.dealer, type(s.pile), type(s.hands), [type(h) for h in s.hands]),
        # each seat's row: a view of ``views`` at the seat's offset
        [
            (np.shares_memory(r, s.views), r.ctypes.data - s.views.ctypes.data, r.shape)
            for r in s.rows
        ],
    )
