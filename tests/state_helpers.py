"""Helpers for the rules' tests: everything a hand's state holds, to compare two states."""

from __future__ import annotations


def ditch_state(s) -> tuple:
    """Every field of a Ditch Rummy hand's state (the table's melds by their fields, the types of
    the phase, the active flag and the points), equal for two states exactly when they are."""
    return (
        s.hands,
        s.pile,
        s.pile_pos,
        s.flat.tobytes(),
        (type(s.flat), s.flat.dtype, s.flat.shape, s.flat.flags.writeable),
        s.bits.tobytes(),
        (type(s.bits), s.bits.dtype, s.bits.shape, s.bits.flags.writeable),
        s.discard,
        [(m.owner, m.kind, m.cards, m.low, m.high, m.suit, m.added) for m in s.melds],
        s.singles,
        (s.set_count, s.below, s.above, s.earned),
        (s.current, s.phase, type(s.phase), s.drawn, type(s.active), s.active, s.idle, s.turn),
        (
            s.over,
            list(s.points),
            type(s.points),
            s.end_reason,
            s.ended_by,
            None if s.totals is None else s.totals.tolist(),
        ),
        (s.dealer, type(s.pile), type(s.hands), [type(h) for h in s.hands]),
    )


def rummy500_state(s) -> tuple:
    """Every field of a 500 Rum hand's state (its card planes and its numbers), equal for two
    states exactly when they are."""
    return (
        s.buf.tobytes(),
        (type(s.buf), s.buf.dtype, s.buf.shape, s.buf.flags.writeable),
        (type(s.cells), bytes(s.cells)),
        (type(s.words), s.words),
        s.pile,
        (s.stock, s.stock_pos),
        (s.runs, s.sets),
        (s.current, s.phase, type(s.phase), s.turn, s.pending, s.dealer),
        (s.over, list(s.points), type(s.points), s.hand_values, s.went_out, s.end_reason),
        None if s.mask_cache is None else s.mask_cache.tolist(),
    )
