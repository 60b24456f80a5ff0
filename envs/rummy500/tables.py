"""500 Rum tables built once at import: card values, run positions, the meld table, the action table.

The meld table is the shared builder's (:func:`rummyzoo.envs.melds.meld_table` of
:data:`~rummyzoo.envs.melds.RUMMY500_MELDS`); the look-ups below are read from it.

Cards inside the rules are handled as 52-bit Python ints (bit ``c`` = card id ``c`` present), as in
:mod:`rummyzoo.envs.melds`; with two decks such a mask says which card ids are present at all.

Run positions: a run lives on positions 0-13 of its suit, where position ``p`` is rank ``p`` for
``p`` 0-12 (position 0 is the ace low, A-2-3) and position 13 is the ace high (Q-K-A). A run
never holds both position 0 and position 13, so it never goes round the corner (no K-A-2).
"""

from __future__ import annotations

import numpy as np

from rummyzoo.envs.cards import CARD_NAMES, NUM_CARDS, NUM_RANKS, NUM_SUITS
from rummyzoo.envs.melds import RUMMY500_MELDS, meld_table

# ---------------------------------------------------------------- values
#: Value of a card in hand, in a set or at the top of a run: ace 15, J/Q/K 10, others pip.
CARD_VALUE: tuple[int, ...] = tuple(
    15 if r == 0 else min(r + 1, 10) for _ in range(NUM_SUITS) for r in range(NUM_RANKS)
)
#: Value of an ace at the low end of a run (A-2-3...).
LOW_ACE_VALUE = 1
ACE_LOW_POS = 0
ACE_HIGH_POS = 13


def pos_value(pos: int, card: int) -> int:
    """Value of ``card`` sitting at run position ``pos`` (the low ace is worth 1)."""
    return LOW_ACE_VALUE if pos == ACE_LOW_POS else CARD_VALUE[card]


def pos_card(suit: int, pos: int) -> int:
    """Card id at run position ``pos`` (0-13) of ``suit``."""
    return suit * NUM_RANKS + pos % NUM_RANKS


# ------------------------------------------------------------ bit masks
SUIT_BITS = (1 << NUM_RANKS) - 1
#: One bit per suit at the given rank.
RANK_REPEAT = sum(1 << (NUM_RANKS * s) for s in range(NUM_SUITS))
#: The ace of every suit (the ace of Q-K-A sits on the ace bit).
ACE_BITS = RANK_REPEAT
BIT: tuple[int, ...] = tuple(1 << c for c in range(NUM_CARDS))


def meldable(cards: int) -> int:
    """Cards of the 52-bit mask ``cards`` that belong to some 3-card meld inside it."""
    t = cards & (cards >> 1) & (cards >> 2) & RUN_START_BITS
    covered = t | (t << 1) | (t << 2)
    t = cards & (cards >> 11) & (cards >> 12) & ACE_BITS  # Q-K-A, flagged on the ace bit
    covered |= t | (t << 11) | (t << 12)
    a = cards & SUIT_BITS
    b = (cards >> 13) & SUIT_BITS
    c = (cards >> 26) & SUIT_BITS
    d = (cards >> 39) & SUIT_BITS
    three = (a & b & (c | d)) | (c & d & (a | b))
    if three:
        covered |= cards & (three * RANK_REPEAT)
    return covered


# ----------------------------------------------------------- meld table
class MeldSpec:
    """One entry of the meld table: a 3-card run or a 3-card set of distinct suits."""

    __slots__ = ("cards", "is_run", "mask", "name", "positions", "rank", "suit", "value")

    def __init__(self, cards: tuple[int, ...], is_run: bool, positions: tuple[int, ...]) -> None:
        self.cards = cards
        self.is_run = is_run
        self.positions = positions  # run positions (runs) or suits (sets)
        self.mask = sum(1 << c for c in cards)
        self.suit = cards[0] // NUM_RANKS if is_run else -1
        self.rank = -1 if is_run else cards[0] % NUM_RANKS
        if is_run:
            self.value = sum(pos_value(p, c) for p, c in zip(positions, cards, strict=True))
        else:
            self.value = sum(CARD_VALUE[c] for c in cards)
        self.name = " ".join(CARD_NAMES[c] for c in cards)


#: The shared meld table of 500 Rum's meld actions: 3-card runs (A-2-3 ... J-Q-K, then Q-K-A of
#: each suit, positions as above) and 3-card sets of distinct suits.
TABLE = meld_table(RUMMY500_MELDS)
MELDS: tuple[MeldSpec, ...] = tuple(MeldSpec(m.cards, m.is_run, m.positions) for m in TABLE.melds)
NUM_MELDS = len(MELDS)  # 48 runs + 52 sets = 100
RUNS_PER_SUIT = len(TABLE.suit_runs(SUIT_BITS))  # 12
FIRST_SET = NUM_SUITS * RUNS_PER_SUIT
#: Meld id of the run whose lowest card is the bit index (ranks A..J), as found by ``meldable``.
RUN_AT_BIT: dict[int, int] = {
    m.cards[0]: i for i, m in enumerate(MELDS) if m.is_run and m.positions[-1] < ACE_HIGH_POS
}
#: Meld id of Q-K-A by the bit index of its ace.
QKA_AT_BIT: dict[int, int] = {
    m.cards[-1]: i for i, m in enumerate(MELDS) if m.is_run and m.positions[-1] == ACE_HIGH_POS
}
#: Possible lowest cards of a 3-card run inside one suit's ranks (A..J of every suit).
RUN_START_BITS = sum(1 << c for c in RUN_AT_BIT)
#: Set meld ids of a rank inside a 4-bit suit pattern.
SET_IDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(
            m
            for m in range(FIRST_SET, NUM_MELDS)
            if MELDS[m].rank == rank and all(pattern >> s & 1 for s in MELDS[m].positions)
        )
        for pattern in range(16)
    )
    for rank in range(NUM_RANKS)
)
#: Meld id by its set of cards.
MELD_BY_CARDS: dict[frozenset[int], int] = {frozenset(m.cards): i for i, m in enumerate(MELDS)}
#: For each card, the (meld id, meld mask) of every table meld containing it.
MELDS_WITH: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    tuple((m, spec.mask) for m, spec in enumerate(MELDS) if c in spec.cards)
    for c in range(NUM_CARDS)
)
#: For each card, the other two cards of every meld containing it (as masks).
MELD_PAIRS: tuple[tuple[int, ...], ...] = tuple(
    tuple(mask & ~(1 << c) for _, mask in MELDS_WITH[c]) for c in range(NUM_CARDS)
)


def _run_ok_tables() -> tuple[bytes, ...]:
    """Per rank, for every 13-bit rank pattern of one suit: does a 3-card run of the table with
    that rank have its other two cards in the pattern?"""
    pats = np.arange(1 << NUM_RANKS)
    ok = np.zeros((NUM_RANKS, len(pats)), dtype=bool)
    for run, _, _ in TABLE.suit_runs(SUIT_BITS):
        for rank in range(NUM_RANKS):
            if run >> rank & 1:
                others = run & ~(1 << rank)
                ok[rank] |= (pats & others) == others
    return tuple(row.astype(np.uint8).tobytes() for row in ok)


#: Per rank, 8192 bytes (see :func:`_run_ok_tables`).
RUN_OK = _run_ok_tables()
#: Per card: (rank, shift of its suit, the other suits' bits at rank 0, run table of its rank).
#: A card has a meld inside ``cards`` when at least two other suits of its rank are there
#: (``((cards >> rank) & other).bit_count() >= 2``) or ``run_table[(cards >> shift) & SUIT_BITS]``.
MELD_TEST: tuple[tuple[int, int, int, bytes], ...] = tuple(
    (
        c % NUM_RANKS,
        NUM_RANKS * (c // NUM_RANKS),
        RANK_REPEAT & ~(1 << (NUM_RANKS * (c // NUM_RANKS))),
        RUN_OK[c % NUM_RANKS],
    )
    for c in range(NUM_CARDS)
)


def melds_in(hand: int) -> list[int]:
    """Meld ids of every table meld whose three cards are all in the 52-bit mask ``hand``."""
    found: list[int] = []
    t = hand & (hand >> 1) & (hand >> 2) & RUN_START_BITS
    while t:
        low = t & -t
        found.append(RUN_AT_BIT[low.bit_length() - 1])
        t ^= low
    t = hand & (hand >> 11) & (hand >> 12) & ACE_BITS
    while t:
        low = t & -t
        found.append(QKA_AT_BIT[low.bit_length() - 1])
        t ^= low
    a = hand & SUIT_BITS
    b = (hand >> 13) & SUIT_BITS
    c = (hand >> 26) & SUIT_BITS
    d = (hand >> 39) & SUIT_BITS
    three = (a & b & (c | d)) | (c & d & (a | b))
    while three:
        low = three & -three
        rank = low.bit_length() - 1
        three ^= low
        pattern = (
            (a >> rank & 1) | (b >> rank & 1) << 1 | (c >> rank & 1) << 2 | (d >> rank & 1) << 3
        )
        found.extend(SET_IDS[rank][pattern])
    return found


# --------------------------------------------------------- action table
DRAW_STOCK = 0
PASS = 1
DIG_BASE = 2
DIG_DEEP_BASE = DIG_BASE + NUM_CARDS
MELD_BASE = DIG_DEEP_BASE + NUM_CARDS
LAY_SET_BASE = MELD_BASE + NUM_MELDS
LAY_LOW_BASE = LAY_SET_BASE + NUM_CARDS
LAY_HIGH_BASE = LAY_LOW_BASE + NUM_CARDS
DISCARD_BASE = LAY_HIGH_BASE + NUM_CARDS
NUM_ACTIONS = DISCARD_BASE + NUM_CARDS  # 414

#: Lay-off kinds, in action-table order.
LAY_SET, LAY_LOW, LAY_HIGH = 0, 1, 2


def _action_names() -> tuple[str, ...]:
    names = ["draw stock", "pass"]
    names += [f"dig {c}" for c in CARD_NAMES]
    names += [f"dig {c} deep" for c in CARD_NAMES]
    names += [f"meld {m.name}" for m in MELDS]
    names += [f"lay off {c} on set" for c in CARD_NAMES]
    names += [f"lay off {c} below run" for c in CARD_NAMES]
    names += [f"lay off {c} above run" for c in CARD_NAMES]
    names += [f"discard {c}" for c in CARD_NAMES]
    return tuple(names)


ACTION_NAMES = _action_names()
