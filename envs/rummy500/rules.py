"""500 Rum: pure rules over a compact state (docs/rules.md section 3). No PettingZoo here.

The state keeps every 52-card plane the observation needs (the cards each seat holds, the cards
laid on the table by each seat, the cards each seat is known to hold, the discard pile, the
"what fits" planes, the pending card) as bytes in one ``bytearray`` (``cells``: a count per
card, or a card's place in the discard pile), and the per-hand numbers in a small float32
buffer (``buf``), so an observation is one gather from the two. The logic itself runs on
52-bit card masks (hand presence, discard pile presence, lay-off targets) kept with the table
points in one ``array('Q')`` (``words``), on the counts in ``cells`` and on small lists (the
stock, the discard pile, the melds on the table), all kept up to date incrementally by
``apply``; the compiled kernel (envs/_rummy500.c) reads and writes the same objects.

With two decks (5-8 players) hands, the table and the known cards are counts (0-2 per card id).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, ClassVar

import numpy as np

from rummyzoo.envs.cards import (
    CARD_NAMES,
    NUM_CARDS,
    NUM_RANKS,
    NUM_SUITS,
    card_count,
    format_card,
    format_cards,
    mask_cards,
    parse_cards,
    vector_to_mask,
)
from rummyzoo.envs.core import (
    ConfigError,
    Game,
    HandState,
    ObservationTail,
    check_choice,
    check_observe_args,
    check_range,
    validate_fields,
)
from rummyzoo.envs.match import Match
from rummyzoo.envs.native import resolve_kernels
from rummyzoo.envs.rummy500.tables import (
    ACE_HIGH_POS,
    ACE_LOW_POS,
    ACTION_NAMES,
    BIT,
    CARD_VALUE,
    DIG_BASE,
    DIG_DEEP_BASE,
    DISCARD_BASE,
    DRAW_STOCK,
    LAY_HIGH_BASE,
    LAY_LOW,
    LAY_LOW_BASE,
    LAY_SET,
    LAY_SET_BASE,
    MELD_BASE,
    MELD_BY_CARDS,
    MELD_TEST,
    MELDS,
    MELDS_WITH,
    NUM_ACTIONS,
    PASS,
    QKA_AT_BIT,
    RANK_REPEAT,
    RUN_AT_BIT,
    RUN_OK,
    SET_IDS,
    SUIT_BITS,
    meldable,
    melds_in,
    pos_card,
    pos_value,
)

DEFAULT_HAND_SIZE = {2: 10}  # 7 for 3-8 players
STOCK_EXHAUSTION_MODES = ("discard_only", "end_after_last_stock_turn")


class Phase(IntEnum):
    """Steps of a 500 Rum turn."""

    DRAW = 0  # draw from the stock, dig into the discard pile (or pass)
    PLAY = 1  # meld, lay off, discard


class ObsPhase(IntEnum):
    """Slots of the observation's ``phase`` one-hot: the play step is split in two."""

    DRAW = 0
    MUST_USE = 1  # play, while a card dug out of the pile is still to be used
    PLAY = 2  # play, freely


# The members under module names for the per-step code (an enum class lookup costs more).
_DRAW = Phase.DRAW
_PLAY = Phase.PLAY
_OBS_DRAW = ObsPhase.DRAW
_OBS_MUST_USE = ObsPhase.MUST_USE
_OBS_PLAY = ObsPhase.PLAY

# Where Rummy500State.words keeps the discard pile, the cards in it twice, the three lay-off
# targets (on a set, below a run, above a run) and their union (52-bit masks), then each seat's
# hand (a mask), then each seat's table points.
_PILE_BITS, _PILE_DOUBLE, _FITS, _FITS_ANY, _HANDS = 0, 1, 2, 5, 6

#: Discard piles longer than this are pre-filtered with one whole-pile meld search.
LONG_PILE = 3

#: Scale of the per-seat table points in the observation.
TABLE_POINTS_SCALE = 100.0


def decks_for(num_players: int) -> int:
    """One deck for 2-4 players, two for 5-8."""
    return 1 if num_players <= 4 else 2


@dataclass(frozen=True)
class Rummy500Rules:
    """Every rule option of 500 Rum; validated on construction.

    :param num_players: 2-8 (one deck for 2-4, two decks of 104 cards for 5-8).
    :param hand_size: cards dealt to each player (default 10 for 2 players, 7 for 3-8).
    :param top_discard_free: whether taking only the top discard is free of the must-use rule
        (False: the top card, like any card dug out, must be used by the first play).
    :param stock_exhaustion: after the last stock card is taken: ``"discard_only"`` (play goes
        on from the discard pile; the hand ends when the player to move cannot or does not take
        from it) or ``"end_after_last_stock_turn"`` (the hand ends after that turn).
    """

    #: the name its errors give it ("rummy500 option hand_size must be ...")
    options_of: ClassVar[str] = "rummy500"

    num_players: int = 2
    hand_size: int | None = None
    top_discard_free: bool = False
    stock_exhaustion: str = "discard_only"

    def __post_init__(self) -> None:
        validate_fields(self)
        check_range(self, "num_players", 2, 8)
        if self.hand_size is None:
            object.__setattr__(self, "hand_size", DEFAULT_HAND_SIZE.get(self.num_players, 7))
        check_range(self, "hand_size", 1, None)
        cards = NUM_CARDS * self.num_decks
        if self.num_players * self.hand_size + 2 > cards:
            raise ConfigError(
                f"rummy500 option hand_size={self.hand_size} leaves no stock for "
                f"{self.num_players} players (need players*hand_size + 2 <= {cards})"
            )
        check_choice(self, "stock_exhaustion", STOCK_EXHAUSTION_MODES)

    @property
    def num_decks(self) -> int:
        """Decks in play: 1 for 2-4 players, 2 for 5-8."""
        return decks_for(self.num_players)


def run_extensions(suit: int, lo: int, hi: int) -> tuple[int, int]:
    """The cards (as masks) that extend a run of ``suit`` on positions ``lo..hi`` below and
    above: none past an ace, and none that would take a run round the corner (K-A-2)."""
    below = above = 0
    if lo >= 1 and not (lo == 1 and hi == ACE_HIGH_POS):
        below = BIT[pos_card(suit, lo - 1)]
    if hi <= 12 and not (hi == 12 and lo == ACE_LOW_POS):
        above = BIT[pos_card(suit, hi + 1)]
    return below, above


def dig_start(pile: Sequence[int], card: int, deep: bool) -> int:
    """Where a dig to ``card`` starts in ``pile`` (bottom first): at its topmost copy, or for a
    deep dig (two decks) at the copy under that; the dig takes this card and all above it."""
    index = len(pile) - 1 - pile[::-1].index(card)
    if deep:
        index = index - 1 - pile[index - 1 :: -1].index(card)
    return index


def completes_meld(card: int, cards: int) -> bool:
    """Whether ``card`` makes a three-card meld with two of the cards of the mask ``cards`` (the
    test :meth:`Rummy500Game.dig_options` applies to each card it could dig to)."""
    rank, shift, others, runs = MELD_TEST[card]
    acc = cards | BIT[card]
    return ((acc >> rank) & others).bit_count() > 1 or bool(runs[acc >> shift & SUIT_BITS])


@dataclass(frozen=True, slots=True)
class Rummy500View:
    """What one 500 Rum observation shows, as :meth:`Rummy500Game.decode` reads it back.

    Seats are relative to the observer: 0 is the observer, 1..N-1 the seats after it in play
    order. Sets of cards are 52-bit masks over card ids (bit ``c`` set = card id ``c``); with two
    decks a mask says which card ids are there at all.

    :ivar hand: the observer's cards.
    :ivar doubles: the cards it holds twice (two decks only).
    :ivar discards: the discard pile, bottom to top (card ids).
    :ivar top_discard: card id of the top discard (-1 when the pile is empty).
    :ivar laid: per seat, the cards it laid on the table (its melds and lay-offs).
    :ivar run_cards: the cards on the table that are in runs.
    :ivar fits: the lay-off targets ``(on a set, below a run, above a run)``.
    :ivar opponent_known: per opponent (index ``k`` = relative seat ``k + 1``), the cards it dug
        out of the discard pile and still holds.
    :ivar unseen: the card ids in none of the above (in the stock or another hand).
    :ivar pending: the card dug out of the pile that the observer must use in this play step
        (-1 when none).
    :ivar stock: cards left in the stock.
    :ivar hand_sizes: per seat, the cards in its hand.
    :ivar table_points: per seat, the points it laid on the table this hand.
    :ivar phase: the observer's :class:`Phase` when it is to act, else None (also once the hand
        is over); the must-use step is :attr:`Phase.PLAY` with a ``pending`` card.
    :ivar to_act: relative seat of the player to act.
    :ivar dealer: relative seat of the dealer.
    :ivar turn: turns completed in this hand.
    :ivar scores: per seat, its match total (all 0 in single-hand play).
    """

    hand: int
    doubles: int
    discards: tuple[int, ...]
    top_discard: int
    laid: tuple[int, ...]
    run_cards: int
    fits: tuple[int, int, int]
    opponent_known: tuple[int, ...]
    unseen: int
    pending: int
    stock: int
    hand_sizes: tuple[int, ...]
    table_points: tuple[int, ...]
    phase: Phase | None
    to_act: int
    dealer: int
    turn: int
    scores: tuple[int, ...]

    @property
    def table(self) -> int:
        """Every card laid on the table."""
        out = 0
        for m in self.laid:
            out |= m
        return out

    @property
    def fits_any(self) -> int:
        """Cards that can be laid off somewhere."""
        return self.fits[0] | self.fits[1] | self.fits[2]


class Rummy500State(HandState):
    """Mutable state of one 500 Rum hand.

    ``words`` (an ``array('Q')``) holds the card masks as 52-bit ints (the discard pile, the
    cards in it twice, the three lay-off targets and their union, then each seat's hand) and
    each seat's table points: read them as :attr:`pile_bits`, :attr:`pile_double`,
    :attr:`fits`, :attr:`fits_any`, :attr:`bits` and :attr:`table_points`.

    Runs on the table are ``[suit, lo, hi, owners]`` (``owners[pos]`` = seat that laid the card at
    run position ``pos``, -1 where empty); sets are ``[rank, suit_mask, owners]`` (by suit).

    ``cells`` (a ``bytearray``) holds the card planes, 52 bytes each, in the game's row order
    (:class:`Rummy500Game`): per seat the cards it holds, then the cards it laid on the table,
    then the cards it is known to hold (counts: 0-2 with two decks); the discard pile (each card's
    place in it, 1 at the bottom, 0 where not there; with two decks a second row for the lower
    copy); the top discard, the cards in runs on the table (counts), the three "what fits" rows
    and the pending card (0 or 1), then a row whose first bytes are each seat's hand size
    (:attr:`sizes`). ``buf`` (float32) holds the numbers: ``[0, stock size,
    discard pile size, turn]``, then per seat (by absolute seat) to act, dealer, hand size,
    table points and match total.
    """

    __slots__ = (
        "buf",
        "cells",
        "current",
        "dealer",
        "end_reason",
        "hand_values",
        "mask_cache",
        "over",
        "pending",
        "phase",
        "pile",
        "points",
        "runs",
        "sets",
        "stock",
        "stock_pos",
        "totals",
        "turn",
        "went_out",
        "words",
    )

    @property
    def stock_size(self) -> int:
        return len(self.stock) - self.stock_pos

    def stock_cards(self) -> list[int]:
        """Stock from the top down."""
        return self.stock[self.stock_pos :]

    def hand_cards(self, seat: int) -> list[int]:
        """Cards held by ``seat`` in id order (a card held twice is listed twice)."""
        cells, at = self.cells, seat * NUM_CARDS
        return [c for c in mask_cards(self.words[_HANDS + seat]) for _ in range(cells[at + c])]

    @property
    def num_players(self) -> int:
        return (len(self.words) - _HANDS) // 2

    @property
    def bits(self) -> tuple[int, ...]:
        """Each seat's cards (52-bit masks)."""
        return tuple(self.words[_HANDS : _HANDS + self.num_players])

    @property
    def table_points(self) -> tuple[int, ...]:
        """Each seat's points laid on the table this hand."""
        return tuple(self.words[_HANDS + self.num_players :])

    @property
    def sizes(self) -> tuple[int, ...]:
        """Each seat's hand size (the first bytes of the last row of ``cells``)."""
        at = len(self.cells) - NUM_CARDS
        return tuple(self.cells[at : at + self.num_players])

    @property
    def pile_bits(self) -> int:
        """Cards in the discard pile (a 52-bit mask)."""
        return self.words[_PILE_BITS]

    @property
    def pile_double(self) -> int:
        """Cards in the discard pile twice (two decks)."""
        return self.words[_PILE_DOUBLE]

    @property
    def fits(self) -> tuple[int, int, int]:
        """The lay-off targets: cards that fit on a set, below a run, above a run."""
        return tuple(self.words[_FITS : _FITS + 3])

    @property
    def fits_any(self) -> int:
        """Cards that can be laid off somewhere."""
        return self.words[_FITS_ANY]


class Rummy500Game(Game):
    """500 Rum rules for one config (see :mod:`rummyzoo.envs.rummy500_v0` for the docs)."""

    name = "rummy500"
    rules_class = Rummy500Rules
    match_defaults: ClassVar[dict[str, Any]] = {"target_score": 500, "max_turns": 300}

    def illegal_reason(self, state: Rummy500State, action: int) -> str:
        """Why a dig (or a play before the dug card is used) is illegal now; empty when "not a
        legal move" says enough."""
        if state.over:
            return ""
        pending = state.pending
        must_use = (
            "the deepest card taken from the discard pile must be used at once (the turn's "
            "first play puts it on the table, in a new meld or as a lay-off; no discard before "
            "that)"
        )
        if not DIG_BASE <= action < MELD_BASE:
            if pending >= 0:
                return f"you must first use {format_card(pending)}: {must_use}"
            return ""
        if state.phase != Phase.DRAW:
            if pending >= 0:
                return (
                    "you have taken from the discard pile already and must now use "
                    f"{format_card(pending)}: {must_use}"
                )
            return "you have drawn this turn already (draw or dig only at the start of a turn)"
        deep = action >= DIG_DEEP_BASE
        card = action - (DIG_DEEP_BASE if deep else DIG_BASE)
        name = format_card(card)
        pile = state.pile
        copies = pile.count(card)
        if not copies:
            return f"{name} is not in the discard pile"
        if deep and copies < 2:
            return (
                f"there is only one {name} in the discard pile (a deep dig takes the lower of two)"
            )
        index = dig_start(pile, card, deep)
        above = pile[index + 1 :]
        taken = f" and the cards above it ({format_cards(above)})" if above else ""
        text = (
            f"{must_use}, and {name} makes no meld with your hand{taken} and fits no meld on the "
            "table"
        )
        if not above and not self.rules.top_discard_free:
            text += "; this holds for the top card too (option top_discard_free is off)"
        return text

    def __init__(self, rules: Rummy500Rules, match: Any, kernels: Any = None) -> None:
        # ``kernels``: None = the compiled kernels where built, PURE = the Python code, or a
        # kernels module (rummyzoo.envs.native.resolve_kernels).
        kernels = self.kernels = resolve_kernels(kernels)
        self.rules = rules
        self.match = match
        n = self.num_players = rules.num_players
        self.num_decks = rules.num_decks
        self.num_actions = NUM_ACTIONS
        self.score_groups = np.arange(n)
        self.action_names = ACTION_NAMES
        self._index_names()
        self._empty_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._free_top = rules.top_discard_free
        self._end_after_stock = rules.stock_exhaustion == "end_after_last_stock_turn"
        self._inv_cards = 1.0 / (NUM_CARDS * self.num_decks)
        # Plane rows: hands 0..n-1, laid n..2n-1, known 2n..3n-1, then the shared rows.
        row = 3 * n
        self._row_pile = row
        row += 1
        self._row_pile_low = -1
        if self.num_decks == 2:
            self._row_pile_low = row
            row += 1
        self._row_top = row
        self._row_runs = row + 1
        self._row_fits = row + 2  # three rows: set, below a run, above a run
        self._row_pending = row + 5
        self._num_rows = row + 6
        shared_pile = [self._row_pile] + ([self._row_pile_low] if self.num_decks == 2 else [])
        self._view_rows = []
        for v in range(n):
            rel = [(v + r) % n for r in range(n)]
            rows = (
                [v, *shared_pile, self._row_top]
                + [n + s for s in rel]
                + [self._row_runs, self._row_fits, self._row_fits + 1, self._row_fits + 2]
                + [2 * n + s for s in rel[1:]]
                + [self._row_pending]
            )
            self._view_rows.append(np.asarray(rows, dtype=np.intp))
        sizes = [("hand", 52), ("discard_pile", 52)]
        if self.num_decks == 2:
            sizes.append(("discard_pile_lower", 52))
        sizes += [
            ("discard_top", 52),
            ("table_laid", 52 * n),
            ("table_runs", 52),
            ("fits_set", 52),
            ("fits_below_run", 52),
            ("fits_above_run", 52),
            ("opponent_known", 52 * (n - 1)),
            ("pending", 52),
            ("stock_size", 1),
            ("discard_size", 1),
            ("phase", 3),
            ("to_act", n),
            ("dealer", n),
            ("hand_sizes", n),
            ("table_points", n),
            ("turn", 1),
            ("scores", n),
        ]
        layout: dict[str, tuple[int, int]] = {}
        pos = 0
        for name, size in sizes:
            layout[name] = (pos, pos + size)
            pos += size
        self.observation_layout = layout
        self.obs_size = pos
        # The state keeps the planes as bytes (``cells``) and the per-hand numbers in a float32
        # buffer (``buf``); an observation is one gather from the two.
        # (and one more row: its first bytes each seat's hand size)
        self._cells_size = cells = (self._num_rows + 1) * NUM_CARDS
        at = {"pile": self._row_pile, "top": self._row_top, "runs": self._row_runs}
        at |= {"fits": self._row_fits, "pending": self._row_pending}
        self._at = {name: row * NUM_CARDS for name, row in at.items()}
        self._at["laid"], self._at["known"] = n * NUM_CARDS, 2 * n * NUM_CARDS
        self._at["pile_low"] = self._row_pile_low * NUM_CARDS if self.num_decks == 2 else -1
        self._at["sizes"] = self._num_rows * NUM_CARDS
        self._points_at = _HANDS + n  # each seat's table points in the state's words
        # buf: [0, stock size, discard size, turn], then per absolute seat: to act, dealer,
        # hand size, table points, match total (gathered in relative seat order).
        self._buf_size = 4 + 5 * n
        self._at_act, self._at_dealer, self._at_size, self._at_points, self._at_totals = (
            4 + block * n for block in range(5)
        )
        # The gather's indices: below buf_size a float of buf; from there a byte of cells; from
        # buf_size + cells a byte of cells times 1 / (cards in the decks): a place in the pile.
        scaled_rows = {self._row_pile, self._row_pile_low}
        self._gather = []
        self._gather_parts = []
        for v in range(n):
            rel = [(v + r) % n for r in range(n)]
            index = [
                self._buf_size + (cells if row in scaled_rows else 0) + row * NUM_CARDS + c
                for row in self._view_rows[v].tolist()
                for c in range(NUM_CARDS)
            ]
            index += [1, 2]  # stock size, discard size
            index += [0] * 3  # phase: written per observation
            for block in range(4):  # to act, dealer, hand sizes, table points
                index += [4 + block * n + s for s in rel]
            index += [3]  # turn
            index += [self._at_totals + s for s in rel]  # match totals
            assert len(index) == self.obs_size
            index = np.asarray(index, dtype=np.intp)
            self._gather.append(index)
            floats = index < self._buf_size
            scaled = index >= self._buf_size + cells
            plain = ~floats & ~scaled
            self._gather_parts.append(
                tuple(
                    part
                    for which, base in (
                        (floats, 0),
                        (plain, self._buf_size),
                        (scaled, self._buf_size + cells),
                    )
                    for part in (np.flatnonzero(which), index[which] - base)
                )
            )
        self._off_phase = layout["phase"][0]
        self._inv_turns = 1.0 / match.max_turns
        self._score_scale = float(match.target_score or 500)
        self._build_decoder()
        self._rel = [np.asarray([(v + r) % n for r in range(n)], dtype=np.intp) for v in range(n)]
        self._deal_seats = [[(d + 1 + k) % n for k in range(n * rules.hand_size)] for d in range(n)]
        # The compiled turn (envs/_rummy500.c: every move, the legal mask, the observation), when
        # built; the Python code below is its twin, giving the same states and arrays.
        self._kernel = None if kernels is None else kernels.Rummy500Kernel(self._native_layout())
        #: The vector engine's step and rows over many games (see :class:`~rummyzoo.envs.core.Game`).
        self.play_batch = None if self._kernel is None else self._kernel.step
        self.rows_batch = None if self._kernel is None else self._kernel.rows

    def _native_layout(self) -> dict[str, Any]:
        """The constants of this config that the compiled turn reads."""
        n = self.num_players
        return {
            "players": n,
            "decks": self.num_decks,
            "free_top": int(self._free_top),
            "end_after_stock": int(self._end_after_stock),
            "max_turns": self.match.max_turns,
            "obs_size": self.obs_size,
            "cells_size": self._cells_size,
            "buf_size": self._buf_size,
            "row_pile": self._row_pile,
            "row_pile_low": self._row_pile_low,
            "row_top": self._row_top,
            "row_known": 2 * n,
            "row_laid": n,
            "row_runs": self._row_runs,
            "row_fits": self._row_fits,
            "row_pending": self._row_pending,
            "row_sizes": self._num_rows,
            "hand_size": self.rules.hand_size,
            "melds": [(m.cards, m.positions, m.suit, m.rank, m.value) for m in MELDS],
            "off_phase": self._off_phase,
            "scores_at": -1 if self.match.target_score is None else self._at_totals,
            "inv_cards": self._inv_cards,
            "inv_turns": self._inv_turns,
            "score_scale": self._score_scale,
            "card_value": list(CARD_VALUE),
            "run_at_bit": [RUN_AT_BIT.get(c, -1) for c in range(NUM_CARDS)],
            "qka_at_bit": [QKA_AT_BIT.get(c, -1) for c in range(NUM_CARDS)],
            "melds_with": MELDS_WITH,
            "set_ids": SET_IDS,
            "run_ok": b"".join(RUN_OK),
            "gather": self._gather,
            "phases": (_DRAW, _PLAY),
            "end_reasons": ("pass", "stock exhausted", "went out"),
            "empty_mask": self._empty_mask,
            "state_class": Rummy500State,
            "zero_words": array("Q", [0] * (_HANDS + 2 * n)),
            "words_layout": (_PILE_BITS, _PILE_DOUBLE, _FITS, _FITS_ANY, _HANDS),
            "match_class": Match,
        }

    def action_index(self, name: str) -> int:
        """Action id of a readable name; a meld's cards may be named in any order."""
        words = str(name).split()
        if len(words) == 4 and words[0].lower() == "meld":
            try:
                cards = frozenset(parse_cards(words[1:]))
            except ValueError:
                cards = frozenset()
            meld = MELD_BY_CARDS.get(cards)
            if meld is not None:
                return MELD_BASE + meld
        return super().action_index(name)

    # ------------------------------------------------------------------ deal
    def new_hand(self, rng: np.random.Generator, dealer: int, deck: np.ndarray) -> Rummy500State:
        kernel = self._kernel
        if kernel is not None:
            return kernel.deal(dealer, deck)
        n, size = self.num_players, self.rules.hand_size
        s = Rummy500State()
        s.buf = buf = np.zeros(self._buf_size, dtype=np.float32)
        s.cells = cells = bytearray(self._cells_size)
        s.totals = None  # the match totals last written to the buffer
        cards = deck.tolist()
        bits = [0] * n
        # One card at a time, clockwise from the dealer's left.
        for seat, card in zip(self._deal_seats[dealer], cards[: n * size], strict=False):
            cells[seat * NUM_CARDS + card] += 1
            bits[seat] |= 1 << card
        cells[self._at["sizes"] : self._at["sizes"] + n] = bytes([size] * n)
        up = cards[n * size]
        s.pile = [up]
        s.words = array("Q", [1 << up, 0, 0, 0, 0, 0, *bits, *[0] * n])
        cells[self._at["pile"] + up] = 1
        cells[self._at["top"] + up] = 1
        s.stock = cards[n * size + 1 :]
        s.stock_pos = 0
        s.runs = []
        s.sets = []
        buf[self._at_size : self._at_size + n] = size / NUM_CARDS
        buf[1] = len(s.stock) * self._inv_cards
        buf[2] = self._inv_cards
        s.dealer = dealer
        s.current = (dealer + 1) % n
        buf[self._at_act + s.current] = 1.0
        buf[self._at_dealer + dealer] = 1.0
        s.turn = 0
        s.phase = _DRAW
        s.pending = -1
        s.over = False
        s.points = np.zeros(n, dtype=np.float64)
        s.hand_values = None
        s.went_out = -1
        s.end_reason = ""
        s.mask_cache = None
        return s

    # ------------------------------------------------------------------ mask
    def legal_mask(self, s: Rummy500State) -> np.ndarray:
        kernel = self._kernel
        if kernel is not None:
            return kernel.mask(s)
        cached = s.mask_cache
        if cached is not None:  # computed by the end of the previous turn (stock exhausted)
            s.mask_cache = None
            return cached
        mask = self._empty_mask.copy()
        if s.over:
            return mask
        seat = s.current
        if s.phase == _DRAW:
            mask[DRAW_STOCK if s.stock_pos < len(s.stock) else PASS] = 1
            top, deep = self.dig_options(s, seat)
            while top:
                low = top & -top
                top ^= low
                mask[DIG_BASE + low.bit_length() - 1] = 1
            while deep:
                low = deep & -deep
                deep ^= low
                mask[DIG_DEEP_BASE + low.bit_length() - 1] = 1
            return mask
        masks = s.words
        hand = masks[_HANDS + seat]
        fit_set, fit_low, fit_high = masks[_FITS], masks[_FITS + 1], masks[_FITS + 2]
        pending = s.pending
        if pending >= 0:
            for m, meld_mask in MELDS_WITH[pending]:
                if not meld_mask & ~hand:
                    mask[MELD_BASE + m] = 1
            b = BIT[pending]
            if fit_set & b:
                mask[LAY_SET_BASE + pending] = 1
            if fit_low & b:
                mask[LAY_LOW_BASE + pending] = 1
            if fit_high & b:
                mask[LAY_HIGH_BASE + pending] = 1
            return mask
        held = np.frombuffer(s.cells, dtype=np.uint8, count=NUM_CARDS, offset=seat * NUM_CARDS)
        mask[DISCARD_BASE:] = held != 0
        for m in melds_in(hand):
            mask[MELD_BASE + m] = 1
        lay = hand & masks[_FITS_ANY]
        while lay:
            low = lay & -lay
            lay ^= low
            c = low.bit_length() - 1
            if fit_set & low:
                mask[LAY_SET_BASE + c] = 1
            if fit_low & low:
                mask[LAY_LOW_BASE + c] = 1
            if fit_high & low:
                mask[LAY_HIGH_BASE + c] = 1
        return mask

    def dig_options(self, s: Rummy500State, seat: int) -> tuple[int, int]:
        """Cards ``seat`` may dig to, as 52-bit masks: ``(topmost copy, lower copy)``.

        Digging to a card is legal when some meld or lay-off uses it with the hand plus every
        card taken (the top card alone is always legal when ``top_discard_free``).
        """
        pile = s.pile
        if not pile:
            return 0, 0
        masks = s.words
        pile_bits = masks[_PILE_BITS]
        hand = masks[_HANDS + seat]
        fits = masks[_FITS_ANY]
        usable = pile_bits & fits  # a lay-off exists whatever else is taken
        cand = pile_bits & ~fits
        if len(pile) > LONG_PILE:  # rule out cards without a meld in hand + whole pile first
            cand &= meldable(hand | pile_bits)
        deep_found = 0
        if cand:
            acc = hand
            seen = 0
            for idx in range(len(pile) - 1, -1, -1):
                card = pile[idx]
                b = BIT[card]
                acc |= b
                if cand & b:
                    rank, shift, others, runs = MELD_TEST[card]
                    if ((acc >> rank) & others).bit_count() > 1 or runs[acc >> shift & SUIT_BITS]:
                        if seen & b:
                            deep_found |= b
                        else:
                            usable |= b
                        cand ^= b
                    if not cand:
                        break
                seen |= b
        deep = masks[_PILE_DOUBLE] & (usable | deep_found)
        if self._free_top:
            usable |= BIT[pile[-1]]
        return usable, deep

    # ----------------------------------------------------------------- apply
    def apply(self, s: Rummy500State, action: int, rng: np.random.Generator) -> None:
        kernel = self._kernel
        if kernel is not None and kernel.apply(s, action):
            return
        s.mask_cache = None
        seat = s.current
        if action >= DISCARD_BASE:
            self._discard(s, seat, action - DISCARD_BASE)
        elif action >= LAY_SET_BASE:
            kind, card = divmod(action - LAY_SET_BASE, NUM_CARDS)
            self._lay_off(s, seat, card, kind)
        elif action >= MELD_BASE:
            self._meld(s, seat, action - MELD_BASE)
        elif action >= DIG_BASE:
            deep = action >= DIG_DEEP_BASE
            self._dig(s, seat, action - (DIG_DEEP_BASE if deep else DIG_BASE), deep)
        elif action == DRAW_STOCK:
            card = s.stock[s.stock_pos]
            s.stock_pos += 1
            s.buf[1] = (len(s.stock) - s.stock_pos) * self._inv_cards
            self._add(s, seat, card)
            s.phase = _PLAY
        else:  # PASS: the stock is gone and the player declines the discard pile
            self._finish(s, "pass")

    def _add(self, s: Rummy500State, seat: int, card: int) -> None:
        cells, at = s.cells, seat * NUM_CARDS + card
        count = cells[at] + 1
        cells[at] = count
        if count == 1:
            s.words[_HANDS + seat] |= BIT[card]
        at = self._at["sizes"] + seat
        size = cells[at] = cells[at] + 1
        s.buf[self._at_size + seat] = size / NUM_CARDS

    def _remove(self, s: Rummy500State, seat: int, card: int) -> None:
        cells, at = s.cells, seat * NUM_CARDS + card
        count = cells[at] - 1
        cells[at] = count
        if not count:
            s.words[_HANDS + seat] &= ~BIT[card]
        # A played copy lowers the known count by one whichever copy it was: the table cannot
        # tell two copies apart, so the count stays public (never the hidden holding).
        at += self._at["known"]
        if cells[at]:
            cells[at] -= 1
        at = self._at["sizes"] + seat
        size = cells[at] = cells[at] - 1
        s.buf[self._at_size + seat] = size / NUM_CARDS

    def _dig(self, s: Rummy500State, seat: int, card: int, deep: bool) -> None:
        pile = s.pile
        size = len(pile)
        index = dig_start(pile, card, deep)
        taken = pile[index:]
        del pile[index:]
        cells, at = s.cells, self._at
        top, on_pile, low = at["top"], at["pile"], at["pile_low"]
        cells[top + taken[-1]] = 0
        # the copies of each card the pile keeps: those it held (its places) less those taken
        left = {c: (cells[on_pile + c] != 0) + (low >= 0 and cells[low + c] != 0) for c in taken}
        for c in taken:
            left[c] -= 1
        known = at["known"] + seat * NUM_CARDS
        words = s.words
        for c in taken:
            if not left[c]:
                cells[on_pile + c] = 0
                words[_PILE_BITS] &= ~BIT[c]
                if low >= 0:
                    cells[low + c] = 0
            else:  # the lower copy stays: it becomes the topmost one
                cells[on_pile + c] = cells[low + c]
                cells[low + c] = 0
            words[_PILE_DOUBLE] &= ~BIT[c]
            self._add(s, seat, c)
            cells[known + c] += 1
        if pile:
            cells[top + pile[-1]] = 1
        s.buf[2] = len(pile) * self._inv_cards
        if not (self._free_top and index == size - 1):
            s.pending = card
            cells[at["pending"] + card] = 1
        s.phase = _PLAY

    def _meld(self, s: Rummy500State, seat: int, meld: int) -> None:
        spec = MELDS[meld]
        cells = s.cells
        laid = self._at["laid"] + seat * NUM_CARDS
        for c in spec.cards:
            self._remove(s, seat, c)
            cells[laid + c] += 1
        if spec.is_run:
            owners = [-1] * (ACE_HIGH_POS + 1)
            runs = self._at["runs"]
            for p, c in zip(spec.positions, spec.cards, strict=True):
                owners[p] = seat
                cells[runs + c] += 1
            run = [spec.suit, spec.positions[0], spec.positions[-1], owners]
            s.runs.append(run)
        else:
            owners = [-1] * NUM_SUITS
            for suit in spec.positions:
                owners[suit] = seat
            group = [spec.rank, sum(1 << x for x in spec.positions), owners]
            s.sets.append(group)
        self._score_play(s, seat, spec.value)
        if s.pending >= 0 and s.pending in spec.cards:
            self._clear_pending(s)
        if spec.is_run:
            self._refresh_run_fits(s, spec.suit)
        else:
            self._refresh_set_fits(s, spec.rank)
        if not cells[self._at["sizes"] + seat]:
            self._go_out(s, seat)

    def _lay_off(self, s: Rummy500State, seat: int, card: int, kind: int) -> None:
        rank, suit = card % NUM_RANKS, card // NUM_RANKS
        if kind == LAY_SET:
            target = next(m for m in s.sets if m[0] == rank and not m[1] >> suit & 1)
            target[1] |= 1 << suit
            target[2][suit] = seat
            value = CARD_VALUE[card]
        elif kind == LAY_LOW:
            pos = ACE_LOW_POS if rank == 0 else rank
            # Several runs may take it with two decks: the shortest keeps the others' ends open.
            target = min(
                (
                    r
                    for r in s.runs
                    if r[0] == suit and r[1] == pos + 1 and not (pos == 0 and r[2] == 13)
                ),
                key=lambda r: r[2],
            )
            target[1] = pos
            target[3][pos] = seat
            value = pos_value(pos, card)
            s.cells[self._at["runs"] + card] += 1
        else:
            pos = ACE_HIGH_POS if rank == 0 else rank
            target = max(
                (
                    r
                    for r in s.runs
                    if r[0] == suit and r[2] == pos - 1 and not (pos == 13 and r[1] == 0)
                ),
                key=lambda r: r[1],
            )
            target[2] = pos
            target[3][pos] = seat
            value = CARD_VALUE[card]
            s.cells[self._at["runs"] + card] += 1
        self._remove(s, seat, card)
        s.cells[self._at["laid"] + seat * NUM_CARDS + card] += 1
        self._score_play(s, seat, value)
        if s.pending == card:
            self._clear_pending(s)
        if kind == LAY_SET:
            self._refresh_set_fits(s, rank)
        else:
            self._refresh_run_fits(s, suit)
        if not s.cells[self._at["sizes"] + seat]:
            self._go_out(s, seat)

    def _score_play(self, s: Rummy500State, seat: int, value: int) -> None:
        words, at = s.words, self._points_at + seat
        points = words[at] = words[at] + value
        s.buf[self._at_points + seat] = points / TABLE_POINTS_SCALE

    def _clear_pending(self, s: Rummy500State) -> None:
        s.cells[self._at["pending"] + s.pending] = 0
        s.pending = -1

    def _refresh_set_fits(self, s: Rummy500State, rank: int) -> None:
        """Recompute where cards of ``rank`` could be laid off on sets."""
        fit = 0
        for of_rank, suits, _ in s.sets:
            if of_rank != rank:
                continue
            for suit in range(NUM_SUITS):
                if not suits >> suit & 1:
                    fit |= BIT[suit * NUM_RANKS + rank]
        fit_set, fit_low, fit_high = s.fits
        fit_set = (fit_set & ~(RANK_REPEAT << rank)) | fit
        self._set_fits(s, (fit_set, fit_low, fit_high))

    def _refresh_run_fits(self, s: Rummy500State, suit: int) -> None:
        """Recompute which cards of ``suit`` could extend a run below or above."""
        low = high = 0
        for of_suit, lo, hi, _ in s.runs:
            if of_suit != suit:
                continue
            below, above = run_extensions(suit, lo, hi)
            low |= below
            high |= above
        keep = ~(SUIT_BITS << (suit * NUM_RANKS))
        fit_set, fit_low, fit_high = s.fits
        self._set_fits(s, (fit_set, (fit_low & keep) | low, (fit_high & keep) | high))

    def _set_fits(self, s: Rummy500State, new: tuple[int, int, int]) -> None:
        """Store the lay-off targets and update their observation planes where they changed."""
        old = s.fits
        masks = s.words
        cells = s.cells
        for k in range(3):
            changed = old[k] ^ new[k]
            row = self._at["fits"] + k * NUM_CARDS - 1
            while changed:  # only a few cards change per play
                low = changed & -changed
                changed ^= low
                cells[row + low.bit_length()] = 1 if new[k] & low else 0
        masks[_FITS : _FITS + 3] = array("Q", new)
        masks[_FITS_ANY] = new[0] | new[1] | new[2]

    def _discard(self, s: Rummy500State, seat: int, card: int) -> None:
        self._remove(s, seat, card)
        pile = s.pile
        cells, at = s.cells, self._at
        top = at["top"]
        if pile:
            cells[top + pile[-1]] = 0
        pile.append(card)
        cells[top + card] = 1
        words = s.words
        if cells[at["pile"] + card]:  # the other copy is in the pile and becomes the lower one
            cells[at["pile_low"] + card] = cells[at["pile"] + card]
            words[_PILE_DOUBLE] |= BIT[card]
        words[_PILE_BITS] |= BIT[card]
        cells[at["pile"] + card] = len(pile)
        s.buf[2] = len(pile) * self._inv_cards
        if not cells[at["sizes"] + seat]:
            self._go_out(s, seat)
            return
        s.turn += 1
        buf = s.buf
        buf[3] = s.turn * self._inv_turns
        nxt = s.current = (seat + 1) % self.num_players
        buf[self._at_act + seat] = 0.0
        buf[self._at_act + nxt] = 1.0
        s.phase = _DRAW
        if s.stock_pos >= len(s.stock):
            if self._end_after_stock:
                self._finish(s, "stock exhausted")
                return
            mask = self.legal_mask(s)
            if not mask[DIG_BASE:MELD_BASE].any():
                self._finish(s, "stock exhausted")
                return
            s.mask_cache = mask

    def _go_out(self, s: Rummy500State, seat: int) -> None:
        s.turn += 1
        s.buf[3] = s.turn * self._inv_turns
        s.went_out = seat
        self._finish(s, "went out")

    def _finish(self, s: Rummy500State, reason: str) -> None:
        values = []
        cells = s.cells
        for seat in range(self.num_players):
            at = seat * NUM_CARDS
            hand = s.words[_HANDS + seat]
            values.append(sum(CARD_VALUE[c] * cells[at + c] for c in mask_cards(hand)))
        s.hand_values = values
        s.points = np.asarray(
            [s.words[self._points_at + i] - values[i] for i in range(self.num_players)],
            dtype=np.float64,
        )
        s.end_reason = reason
        s.over = True
        s.mask_cache = None

    # ----------------------------------------------------------- observation
    def observe(self, s: Rummy500State, seat: int, totals: np.ndarray) -> np.ndarray:
        kernel = self._kernel
        if kernel is not None:
            return kernel.observe(s, seat, totals)
        check_observe_args(seat, totals, self.num_players)
        if totals is not s.totals or s.over or totals.flags.writeable:
            # A match's totals are a new read-only array when they change (a hand ends);
            # refresh the buffer then, and for any other array (a writeable one may have
            # changed in place since it was last written).
            s.totals = totals
            if self.match.target_score is not None:
                s.buf[self._at_totals :] = totals / self._score_scale
        floats_at, floats, bytes_at, plain, scaled_at, scaled = self._gather_parts[seat]
        obs = np.empty(self.obs_size, dtype=np.float32)
        obs[floats_at] = s.buf[floats]
        cells = np.frombuffer(s.cells, dtype=np.uint8)
        obs[bytes_at] = cells[plain]
        obs[scaled_at] = cells[scaled] * self._inv_cards
        if seat == s.current and not s.over:
            if s.phase == _DRAW:
                phase = _OBS_DRAW
            else:
                phase = _OBS_MUST_USE if s.pending >= 0 else _OBS_PLAY
            obs[self._off_phase + phase] = 1.0
        return obs

    def _build_decoder(self) -> None:
        """What :meth:`decode` reads: where each part of an observation lies, and the bit of
        each card id (a plane times these is its card mask: a sum of distinct powers of two
        below 2**52, so exact in float64)."""
        lay = self.observation_layout
        self._dec_planes = lay["pending"][1]
        self._dec_bits = np.asarray([float(1 << c) for c in range(NUM_CARDS)])
        names = ["discard_pile"] + (["discard_pile_lower"] if self.num_decks > 1 else [])
        self._dec_pile = [lay[name] for name in names]
        tail = lay["stock_size"][0]  # the numbers and one-hots after the card planes
        self._dec_tail = ObservationTail(lay, tail)
        self._dec_plane = {name: a // NUM_CARDS for name, (a, b) in lay.items() if a < tail}

    def decode(self, obs: np.ndarray) -> Rummy500View:
        """Read an observation of :meth:`observe` back (see :class:`Rummy500View`)."""
        self.check_observation(obs)
        n = self.num_players
        cards = NUM_CARDS * self.num_decks
        planes = obs[: self._dec_planes].reshape(-1, NUM_CARDS) != 0
        masks = (planes @ self._dec_bits).astype(np.int64).tolist()
        plane = self._dec_plane
        laid = tuple(masks[plane["table_laid"] : plane["table_laid"] + n])
        known = tuple(masks[plane["opponent_known"] : plane["opponent_known"] + n - 1])
        hand = masks[0]
        doubles = 0
        if self.num_decks > 1:
            doubles = vector_to_mask(obs[slice(*self.observation_layout["hand"])] > 1.5)
        tail = self._dec_tail.read(obs)
        # Each discard plane holds a card's place in the pile (1-based, over the deck size).
        size = round(tail.one("discard_size") * cards)
        pile = [-1] * size
        for start, stop in self._dec_pile:
            values = obs[start:stop]
            held = np.flatnonzero(values)
            for c, value in zip(held.tolist(), values[held].tolist(), strict=True):
                index = round(value * cards) - 1
                if 0 <= index < size:
                    pile[index] = c
        discards = tuple(c for c in pile if c >= 0)
        seen = hand
        for m in laid + known:
            seen |= m
        for c in discards:
            seen |= BIT[c]
        top = masks[plane["discard_top"]]
        pending = masks[plane["pending"]]
        phase = tail.first("phase")
        return Rummy500View(
            hand=hand,
            doubles=doubles,
            discards=discards,
            top_discard=top.bit_length() - 1,
            laid=laid,
            run_cards=masks[plane["table_runs"]],
            fits=(
                masks[plane["fits_set"]],
                masks[plane["fits_below_run"]],
                masks[plane["fits_above_run"]],
            ),
            opponent_known=known,
            unseen=(1 << NUM_CARDS) - 1 & ~seen,
            pending=pending.bit_length() - 1,
            stock=round(tail.one("stock_size") * cards),
            hand_sizes=tail.ints("hand_sizes", NUM_CARDS),
            table_points=tail.ints("table_points", TABLE_POINTS_SCALE),
            phase=(_DRAW if phase == _OBS_DRAW else _PLAY) if phase >= 0 else None,
            to_act=tail.first("to_act"),
            dealer=tail.first("dealer"),
            turn=round(tail.one("turn") * self.match.max_turns),
            scores=tail.ints("scores", self._score_scale),
        )

    # ------------------------------------------------------------------ info
    def hand_info(self, s: Rummy500State, seat: int) -> dict[str, Any]:
        return {
            "end_reason": s.end_reason,
            "went_out": None if s.went_out < 0 else f"player_{s.went_out}",
            "melded_points": int(s.table_points[seat]),
            "hand_penalty": int(s.hand_values[seat]) if s.hand_values is not None else 0,
            "hand_cards": [CARD_NAMES[c] for c in s.hand_cards(seat)],
        }

    # ---------------------------------------------------------------- render
    def table_lines(self, s: Rummy500State) -> list[str]:
        """One line per meld on the table: its cards in order, each tagged with who laid it."""
        lines = []
        for suit, lo, hi, owners in s.runs:
            cards = " ".join(
                f"{format_card(pos_card(suit, p))}/p{owners[p]}" for p in range(lo, hi + 1)
            )
            lines.append(f"run {cards}")
        for rank, suits, owners in s.sets:
            cards = " ".join(
                f"{format_card(x * NUM_RANKS + rank)}/p{owners[x]}"
                for x in range(NUM_SUITS)
                if suits >> x & 1
            )
            lines.append(f"set {cards}")
        return lines

    def status_text(self, s: Rummy500State) -> str:
        """Who is to do what, or how the hand ended."""
        if s.over:
            who = f" by player_{s.went_out}" if s.went_out >= 0 else ""
            return f"hand over ({s.end_reason.replace('_', ' ')}{who})"
        if s.phase == Phase.DRAW:
            return f"player_{s.current} to draw"
        if s.pending >= 0:
            return f"player_{s.current} must use {format_card(s.pending)}"
        return f"player_{s.current} to meld, lay off or discard"

    def render(self, s: Rummy500State, view: int | None, totals: np.ndarray) -> str:
        n = self.num_players
        status = self.status_text(s)
        lines = [f"500 Rum | dealer player_{s.dealer} | turn {s.turn} | {status}"]
        pile = " ".join(CARD_NAMES[c] for c in s.pile) or "-"
        lines.append(f"stock: {card_count(s.stock_size)} | discard pile (bottom to top): {pile}")
        table = self.table_lines(s)
        lines.append("table: " + (" ; ".join(table) if table else "-"))
        for seat in range(n):
            head = f"player_{seat} (table {s.table_points[seat]})"
            if s.over:
                cards = " ".join(CARD_NAMES[c] for c in s.hand_cards(seat))
                held = f"hand {cards} = -{s.hand_values[seat]}" if cards else "hand empty"
                lines.append(f"{head}: {held} ; points {s.points[seat]:+g}")
            elif view is None or view == seat:
                lines.append(f"{head}: {' '.join(CARD_NAMES[c] for c in s.hand_cards(seat))}")
            else:
                known = [CARD_NAMES[c] for c in self.known_cards(s, seat)]
                lines.append(
                    f"{head}: [{card_count(s.sizes[seat])}]"
                    + (f" holds {' '.join(known)}" if known else "")
                )
        line = self.scores_line(totals)
        if line is not None:
            lines.append(line)
        return "\n".join(lines)

    def table_view(self, s: Rummy500State, view: int | None, totals: np.ndarray) -> dict[str, Any]:
        """The table as data (see :meth:`Game.table_view`): every meld with who laid each card."""
        status = self.status_text(s)
        frame = self._view_frame(s, status, totals, "500 Rum")
        frame["piles"] = [
            {"name": "stock", "count": int(s.stock_size), "cards": None},
            {
                "name": "discard pile",
                "count": len(s.pile),
                "cards": [CARD_NAMES[c] for c in s.pile],
            },
        ]
        for suit, lo, hi, owners in s.runs:
            positions = range(lo, hi + 1)
            frame["table"].append(
                {
                    "kind": "run",
                    "cards": [CARD_NAMES[pos_card(suit, p)] for p in positions],
                    "owner": [int(owners[p]) for p in positions],
                }
            )
        for rank, suits, owners in s.sets:
            present = [x for x in range(NUM_SUITS) if suits >> x & 1]
            frame["table"].append(
                {
                    "kind": "set",
                    "cards": [CARD_NAMES[x * NUM_RANKS + rank] for x in present],
                    "owner": [int(owners[x]) for x in present],
                }
            )
        for seat in range(self.num_players):
            entry: dict[str, Any] = {
                "seat": seat,
                "name": f"player_{seat}",
                "count": int(s.sizes[seat]),
                "hand": None,
                "known": [],
                "melds": [],
                "notes": [f"on the table {s.table_points[seat]}"],
                "points": None,
            }
            if s.over or view is None or view == seat:
                entry["hand"] = [CARD_NAMES[c] for c in s.hand_cards(seat)]
            else:
                entry["known"] = [CARD_NAMES[c] for c in self.known_cards(s, seat)]
            if s.over:
                left = s.hand_values[seat]  # (counted against the seat: none left is 0)
                entry["notes"].append(f"in hand -{left}" if left else "in hand 0")
                entry["points"] = float(s.points[seat])
            frame["seats"].append(entry)
        return frame

    # ------------------------------------------------------------- checking
    def card_locations(self, s: Rummy500State) -> np.ndarray:
        """How many places hold each card (hands, stock, pile, table): ``num_decks`` when sound."""
        rows = self.planes(s).astype(np.int64)
        n = self.num_players
        count = rows[:n].sum(axis=0) + rows[n : 2 * n].sum(axis=0)  # hands, the table
        count += np.bincount(np.asarray(s.stock_cards(), dtype=np.int64), minlength=NUM_CARDS)
        count += np.bincount(np.asarray(s.pile, dtype=np.int64), minlength=NUM_CARDS)
        return count

    def planes(self, s: Rummy500State) -> np.ndarray:
        """The state's card planes (its ``cells``) as a uint8 array of rows of 52, a view that
        writes through: seat ``k``'s hand is row ``k``, its cards on the table row ``n + k``, the
        cards it is known to hold row ``2n + k``, then the shared rows (see
        :class:`Rummy500State`)."""
        return np.frombuffer(s.cells, dtype=np.uint8).reshape(-1, NUM_CARDS)

    def known_cards(self, s: Rummy500State, seat: int) -> list[int]:
        """Cards ``seat`` is known to hold (dug out of the discard pile and not played since) in
        id order, a card known twice listed twice."""
        cells, at = s.cells, self._at["known"] + seat * NUM_CARDS
        return [c for c in range(NUM_CARDS) for _ in range(cells[at + c])]
