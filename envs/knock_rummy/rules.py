"""Knock Rummy: pure rules over numpy state (docs/rules.md section 1). No PettingZoo here.

The state keeps every 52-card plane the observation needs in one float32 matrix ``planes`` so an
observation is a single gather of rows: per seat its hand, the cards it is known to hold (taken
from the discard pile) and the cards it threw; then the top discard and the buried discards.

Where the compiled kernels are built, the moves that touch no random stream (drawing, taking
the top discard, discarding before the stock's end, knocking and its showdown), the legal mask
and the observation run compiled (``envs/_knock.c``), called by :meth:`KnockRummyGame.apply`, ``legal_mask`` and
``observe`` for one game and by the vector engine for all its games at once
(:attr:`KnockRummyGame.play_batch`). The Python code here is their twin: it runs every move
under ``kernels=PURE``, and the test suite compares the two move for move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from rummyzoo.envs.cards import (
    CARD_NAMES,
    NUM_CARDS,
    card_count,
    format_card,
    format_cards,
    mask_cards,
    plane_masks,
)
from rummyzoo.envs.core import (
    ConfigError,
    Game,
    HandState,
    check_choice,
    check_observe_args,
    check_range,
    validate_fields,
)
from rummyzoo.envs.match import Match
from rummyzoo.envs.melds import knock_solver
from rummyzoo.envs.native import PURE, resolve_kernels

POW2 = [1 << c for c in range(NUM_CARDS)]

DEFAULT_HAND_SIZE = {2: 10, 3: 7, 4: 7, 5: 6, 6: 6}

# Action table (flat Discrete(106)).
DRAW_STOCK = 0
TAKE_DISCARD = 1
DISCARD_BASE = 2
KNOCK_BASE = DISCARD_BASE + NUM_CARDS
NUM_ACTIONS = KNOCK_BASE + NUM_CARDS


class Phase(IntEnum):
    """Turn phases of Knock Rummy, in the order of the observation's ``phase`` one-hot."""

    DRAW = 0  # draw from the stock or take the top discard
    DISCARD = 1  # discard, or knock with a discard


# The members under module names for the per-step code (an enum class lookup costs more).
_DRAW = Phase.DRAW
_DISCARD = Phase.DISCARD


def _draw_masks() -> list[np.ndarray]:
    """Read-only draw-phase masks by (stock not empty) + 2 * (discard pile not empty)."""
    out = []
    for k in range(4):
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[DRAW_STOCK] = k & 1
        mask[TAKE_DISCARD] = k >> 1
        mask.flags.writeable = False
        out.append(mask)
    return out


_DRAW_MASKS = _draw_masks()


@dataclass(frozen=True)
class KnockRummyRules:
    """Every rule option of Knock Rummy; validated on construction.

    :param num_players: 2-6.
    :param hand_size: cards dealt to each player (default 10 for 2, 7 for 3-4, 6 for 5-6).
    :param knock_max_deadwood: highest deadwood a knocker may hold after discarding
        (None = no limit; 10 reproduces gin rummy).
    :param allow_discard_of_taken: whether the card just taken from the discard pile may be
        discarded (or knocked with) in the same turn.
    :param rummy_bonus: paid by each opponent to a knocker who wins alone with 0 deadwood.
    :param undercut_penalty: paid by the knocker to each opponent with strictly lower deadwood.
    :param undercut_penalty_to: ``"all_lower"`` or ``"winners_only"``.
    :param split_rounding: ``"exact"`` (fractional shares) or ``"floor"`` (shares rounded down;
        the odd points are not paid out).
    :param stock_exhaustion: when a turn ends without a knock and the stock holds no more than
        ``void_threshold`` cards: ``"void"`` (everyone scores 0), ``"reshuffle"`` (the discard
        pile under its top card is shuffled under the stock) or ``"showdown"`` (hands are scored
        as if nobody knocked: no bonus, no penalty).
    :param void_threshold: stock size at or below which the stock counts as exhausted (0; 2 = gin).
    """

    #: the name its errors give it ("knock_rummy option knock_max_deadwood must be ...")
    options_of: ClassVar[str] = "knock_rummy"

    num_players: int = 2
    hand_size: int | None = None
    knock_max_deadwood: int | None = None
    allow_discard_of_taken: bool = False
    rummy_bonus: int = 25
    undercut_penalty: int = 10
    undercut_penalty_to: str = "all_lower"
    split_rounding: str = "exact"
    stock_exhaustion: str = "void"
    void_threshold: int = 0

    def __post_init__(self) -> None:
        validate_fields(self)
        check_range(self, "num_players", 2, 6)
        if self.hand_size is None:
            object.__setattr__(self, "hand_size", DEFAULT_HAND_SIZE[self.num_players])
        check_range(self, "hand_size", 1, None)
        if self.num_players * self.hand_size + 2 > NUM_CARDS:
            raise ConfigError(
                f"knock_rummy option hand_size={self.hand_size} leaves no stock for "
                f"{self.num_players} players (need players*hand_size + 2 <= 52)"
            )
        check_range(self, "knock_max_deadwood", 0, None)
        check_range(self, "rummy_bonus", 0, None)
        check_range(self, "undercut_penalty", 0, None)
        check_choice(self, "undercut_penalty_to", ("all_lower", "winners_only"))
        check_choice(self, "split_rounding", ("exact", "floor"))
        check_choice(self, "stock_exhaustion", ("void", "reshuffle", "showdown"))
        stock = NUM_CARDS - self.num_players * self.hand_size - 1
        check_range(self, "void_threshold", 0, stock - 1)


class KnockState(HandState):
    """Mutable state of one Knock Rummy hand.

    ``planes`` rows: hands ``0..n-1``, known cards ``n..2n-1``, thrown cards ``2n..3n-1``, the
    top discard ``3n``, the buried discards ``3n+1`` (and a scratch row); ``hands``, ``known``,
    ``thrown``, ``top`` and ``buried`` are views of them. ``bits`` holds each hand as a 52-bit
    mask, ``stock`` the deck's undealt cards (a list, top first, read from ``stock_pos``).
    """

    __slots__ = (
        "bits",
        "current",
        "deadwood",
        "dealer",
        "discard",
        "knocker",
        "melds",
        "n",
        "over",
        "phase",
        "planes",
        "points",
        "stock",
        "stock_pos",
        "taken",
        "turn",
        "void",
        "winners",
    )

    @property
    def hands(self) -> np.ndarray:
        return self.planes[: self.n]

    @property
    def known(self) -> np.ndarray:
        return self.planes[self.n : 2 * self.n]

    @property
    def thrown(self) -> np.ndarray:
        return self.planes[2 * self.n : 3 * self.n]

    @property
    def top(self) -> np.ndarray:
        return self.planes[3 * self.n]

    @property
    def buried(self) -> np.ndarray:
        return self.planes[3 * self.n + 1]

    @property
    def stock_size(self) -> int:
        return len(self.stock) - self.stock_pos

    def stock_cards(self) -> list[int]:
        """Stock from the top down."""
        return list(self.stock[self.stock_pos :])

    def hand_cards(self, seat: int) -> list[int]:
        return np.flatnonzero(self.hands[seat]).tolist()


@dataclass(frozen=True, slots=True)
class KnockView:
    """What one Knock Rummy observation shows, as :meth:`KnockRummyGame.decode` reads it back.

    Seats are relative to the observer: 0 is the observer, 1..N-1 the seats after it in play
    order. Sets of cards are 52-bit masks over card ids (bit ``c`` set = card id ``c``).

    :ivar hand: the observer's cards.
    :ivar top_discard: card id of the top discard (-1 when the pile is empty).
    :ivar buried_discards: the discards under the top one.
    :ivar opponent_known: per opponent (index ``k`` = relative seat ``k + 1``), the cards it
        took from the discard pile and still holds.
    :ivar opponent_thrown: per opponent (same order), the cards it discarded this hand.
    :ivar unseen: the cards in none of the above (in the stock or an opponent's hidden cards).
    :ivar stock: cards left in the stock.
    :ivar phase: the observer's :class:`Phase` when it is to act, else None (also once the
        hand is over).
    :ivar to_act: relative seat of the player to act.
    :ivar dealer: relative seat of the dealer.
    :ivar turn: turns completed in this hand.
    :ivar scores: match totals per relative seat, to float32 precision (all 0 in single-hand
        play, where the observation carries none).
    """

    hand: int
    top_discard: int
    buried_discards: int
    opponent_known: tuple[int, ...]
    opponent_thrown: tuple[int, ...]
    unseen: int
    stock: int
    phase: Phase | None
    to_act: int
    dealer: int
    turn: int
    scores: tuple[float, ...]


def showdown_winners(deadwood: list[int], knocker: int | None) -> list[int]:
    """Seats that win a showdown: the lowest deadwood, but a knocker tying for it loses the
    win to the tying opponents."""
    low = min(deadwood)
    winners = [i for i, d in enumerate(deadwood) if d == low]
    if len(winners) > 1 and knocker in winners:
        winners.remove(knocker)
    return winners


def score_showdown(
    deadwood: list[int],
    knocker: int | None,
    rules: KnockRummyRules,
    winners: list[int] | None = None,
) -> list[int | Fraction]:
    """Point transfers of a showdown (exact; the sum is 0 with ``split_rounding="exact"``).

    ``knocker`` is None for a showdown forced by stock exhaustion (no bonus, no penalty).
    A share that does not divide evenly is a :class:`~fractions.Fraction`.
    """
    n = len(deadwood)
    low = min(deadwood)
    points: list[int | Fraction] = [low - d for d in deadwood]  # the winners' entries are 0
    if winners is None:
        winners = showdown_winners(deadwood, knocker)
    k = len(winners)
    pot = -sum(points)
    if k == 1:
        points[winners[0]] += pot
    else:
        if pot % k == 0 or rules.split_rounding == "floor":
            share: int | Fraction = pot // k
        else:
            share = Fraction(pot, k)
        for w in winners:
            points[w] += share
    if knocker is not None:
        mine = deadwood[knocker]
        if mine == 0 and winners == [knocker]:
            bonus = rules.rummy_bonus
            for i in range(n):
                if i != knocker:
                    points[i] -= bonus
                    points[knocker] += bonus
        penalty = rules.undercut_penalty
        only_winners = rules.undercut_penalty_to == "winners_only"
        for i in range(n):
            if deadwood[i] < mine and not (only_winners and i not in winners):
                points[knocker] -= penalty
                points[i] += penalty
    return points


class KnockRummyGame(Game):
    """Knock Rummy rules for one config (see :mod:`rummyzoo.envs.knock_rummy_v0` for the docs)."""

    name = "knock_rummy"
    rules_class = KnockRummyRules
    match_defaults: ClassVar[dict[str, Any]] = {"target_score": None, "max_turns": 300}
    #: Actions per card, for card-shared networks: two card-free actions (draw stock, take
    #: discard), then two per card (discard it, knock with it), each block in card-id order.
    action_segments = (("global", 2), ("card", 2))

    def move_hint(self, state: KnockState, seat: int, legal: Sequence[int]) -> str | None:
        """``seat`` to discard: the deadwood of its hand as held and, for every card it may knock
        with, the deadwood that discard leaves (lowest first), by the game's own solver.

        E.g. ``your deadwood: 14 (after discarding: Kh 4, Qh 4, 9c 13)``; None outside a discard.
        """
        if state.over or state.current != seat or state.phase != Phase.DISCARD:
            return None
        hand = state.bits[seat]
        now = self.solver.solve_mask(hand)[0]
        knocks = [a - KNOCK_BASE for a in legal if a >= KNOCK_BASE]
        limit = self.rules.knock_max_deadwood
        if not knocks:
            return f"your deadwood: {now} (knocking needs {limit} or less after the discard)"
        after = self.solver.deadwood_after_discards(hand)
        order = sorted(knocks, key=lambda c: (after[c], c))
        shown = ", ".join(f"{format_card(c)} {after[c]}" for c in order)
        allowed = "" if limit is None else f"you may knock at {limit} or less; "
        return f"your deadwood: {now} ({allowed}after discarding: {shown})"

    def illegal_reason(self, state: KnockState, action: int) -> str:
        """Why ``action`` is illegal now: a draw after drawing or a discard before it, a card
        not in the hand, the card just taken from the discard pile, a knock over
        ``knock_max_deadwood``; empty where "not a legal move" says enough."""
        s = state
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
            return ""  # (no action id: the caller's own check names it)
        if s.over or not 0 <= action < NUM_ACTIONS:
            return ""
        if s.phase == _DRAW:
            if action == TAKE_DISCARD and not s.discard:
                return "the discard pile is empty: draw from the stock"
            if action == DRAW_STOCK and s.stock_pos >= len(s.stock):
                return "the stock is empty"
            if action >= DISCARD_BASE:
                return "draw first: a turn starts with a card from the stock or the discard pile"
            return ""
        if action < DISCARD_BASE:
            return "you have drawn this turn already: discard a card, or knock with one"
        card = (action - DISCARD_BASE) % NUM_CARDS
        name = format_card(card)
        if not s.bits[s.current] >> card & 1:
            return f"{name} is not in your hand"
        if card == s.taken and not self.rules.allow_discard_of_taken:
            return (
                f"{name} was just taken from the discard pile: it cannot be thrown back this "
                "turn (option allow_discard_of_taken)"
            )
        limit = self.rules.knock_max_deadwood
        if action >= KNOCK_BASE and limit is not None:
            left = self.solver.deadwood_after_discards(s.bits[s.current])[card]
            if left > limit:
                return (
                    f"knocking with {name} leaves {left} deadwood, more than {limit} "
                    "(option knock_max_deadwood)"
                )
        return ""

    def __init__(self, rules: KnockRummyRules, match: Any, kernels: Any = None) -> None:
        # ``kernels``: None = the compiled kernels where built, PURE = the Python code, or a
        # kernels module (rummyzoo.envs.native.resolve_kernels).
        kernels = self.kernels = resolve_kernels(kernels)
        self.rules = rules
        self.match = match
        n = self.num_players = rules.num_players
        self.num_actions = NUM_ACTIONS
        self.score_groups = np.arange(n)
        self.solver = knock_solver(PURE if kernels is None else kernels)
        names = ["draw stock", "take discard"]
        names += [f"discard {c}" for c in CARD_NAMES]
        names += [f"knock {c}" for c in CARD_NAMES]
        self.action_names = tuple(names)
        self._index_names()
        # Plane rows: hands 0..n-1, known n..2n-1, thrown 2n..3n-1, top 3n, buried 3n+1,
        # then one all-zero row that becomes the viewer's scalar features in an observation,
        # so an observation is a single gather of rows.
        self._row_top = 3 * n
        self._row_buried = 3 * n + 1
        self._row_scalars = 3 * n + 2
        self._num_rows = 3 * n + 3
        self._view_rows = []
        for v in range(n):
            opp = [(v + r) % n for r in range(1, n)]
            rows = [v, self._row_top, self._row_buried]
            rows += [n + o for o in opp] + [2 * n + o for o in opp] + [self._row_scalars]
            self._view_rows.append(np.asarray(rows, dtype=np.intp))
        layout: dict[str, tuple[int, int]] = {}
        pos = 0
        for name, size in [
            ("hand", 52),
            ("top_discard", 52),
            ("buried_discards", 52),
            ("opponent_known", 52 * (n - 1)),
            ("opponent_thrown", 52 * (n - 1)),
            ("stock_size", 1),
            ("phase", 2),
            ("to_act", n),
            ("dealer", n),
            ("turn", 1),
            ("scores", n),
        ]:
            layout[name] = (pos, pos + size)
            pos += size
        scalars_start = layout["stock_size"][0]
        layout["padding"] = (pos, scalars_start + NUM_CARDS)
        self.observation_layout = layout
        self.obs_size = scalars_start + NUM_CARDS
        # Where each scalar feature goes: per viewer, the cell of the to-act and of the dealer
        # one-hots for each absolute seat (relative seats in the observation).
        self._stock_at = layout["stock_size"][0]
        self._phase_at = layout["phase"][0]
        self._turn_at = layout["turn"][0]
        self._scores_at = layout["scores"][0]
        self._seat_cells = [
            (
                [layout["to_act"][0] + (seat - v) % n for seat in range(n)],
                [layout["dealer"][0] + (seat - v) % n for seat in range(n)],
            )
            for v in range(n)
        ]
        self._score_scale = float(match.target_score or 100)
        self._max_turns = float(match.max_turns)
        # Flat plane index offset of each dealt card (one at a time from the dealer's left).
        self._deal_offsets = [
            np.asarray(
                [NUM_CARDS * ((d + 1 + k) % n) for k in range(n * rules.hand_size)], dtype=np.intp
            )
            for d in range(n)
        ]
        self._plane_shape = (self._num_rows, NUM_CARDS)
        self._seat_names = tuple(f"player_{i}" for i in range(n))
        self._rel = [np.asarray([(v + r) % n for r in range(n)], dtype=np.intp) for v in range(n)]
        # The compiled deal, card names and turn (envs/_knock.c: the simple moves, the legal
        # mask, the observation), when built; the Python code below is their twin, giving the
        # same states, arrays and names.
        self._deal = None if kernels is None else kernels.deal
        self._mask_names = _card_names if kernels is None else kernels.mask_names
        self._kernel = (
            None
            if kernels is None
            else kernels.KnockKernel(self.solver.compiled_solver, self._native_layout())
        )
        #: The vector engine's step and rows over many games (see :class:`~rummyzoo.envs.core.Game`).
        self.play_batch = None if self._kernel is None else self._kernel.step
        self.rows_batch = None if self._kernel is None else self._kernel.rows

    def _native_layout(self) -> dict[str, Any]:
        """The constants of this config that the compiled turn reads."""
        limit = self.rules.knock_max_deadwood
        return {
            "players": self.num_players,
            "knock_limit": -1 if limit is None else limit,
            "allow_taken": int(self.rules.allow_discard_of_taken),
            "void_threshold": self.rules.void_threshold,
            "max_turns": self.match.max_turns,
            "rummy_bonus": self.rules.rummy_bonus,
            "undercut_penalty": self.rules.undercut_penalty,
            "penalty_to_winners_only": int(self.rules.undercut_penalty_to == "winners_only"),
            "floor_shares": int(self.rules.split_rounding == "floor"),
            "view_rows": [bytes(rows.tolist()) for rows in self._view_rows],
            "stock_at": self._stock_at,
            "phase_at": self._phase_at,
            "turn_at": self._turn_at,
            "scores_at": -1 if self.match.target_score is None else self._scores_at,
            "score_scale": self._score_scale,
            "turn_scale": self._max_turns,
            "to_act_cells": [cells[0] for cells in self._seat_cells],
            "dealer_cells": [cells[1] for cells in self._seat_cells],
            "draw_masks": _DRAW_MASKS,
            "phases": (_DRAW, _DISCARD),
            "match_class": Match,
            "state_class": KnockState,
        }

    # ------------------------------------------------------------------ deal
    def new_hand(self, rng: np.random.Generator, dealer: int, deck: np.ndarray) -> KnockState:
        n = self.num_players
        cut = n * self.rules.hand_size
        s = KnockState()
        s.n = n
        planes = s.planes = np.zeros(self._plane_shape, dtype=np.float32)
        # One card at a time, clockwise from the dealer's left.
        deal = self._deal
        if deal is not None:
            s.bits, cards = deal(planes, deck, cut, n, (dealer + 1) % n)
        else:
            planes.reshape(-1)[self._deal_offsets[dealer] + deck[:cut]] = 1.0
            cards = deck.tolist()
            bits = s.bits = [0] * n
            for j in range(n):
                bits[(dealer + 1 + j) % n] = sum(map(POW2.__getitem__, cards[j:cut:n]))
        up = cards[cut]
        s.discard = [up]
        planes[self._row_top, up] = 1.0
        s.stock = cards  # the undealt cards start at stock_pos
        s.stock_pos = cut + 1
        s.dealer = dealer
        s.current = (dealer + 1) % n
        s.turn = 0
        s.phase = _DRAW
        s.taken = -1
        s.knocker = -1
        s.over = False
        s.void = False
        s.points = [0.0] * n
        s.deadwood = None
        s.melds = None
        s.winners = None
        return s

    # ------------------------------------------------------------------ mask
    def legal_mask(self, s: KnockState) -> np.ndarray:
        """Legal actions (int8, 0/1). Masks of the draw phase and of a finished hand are
        shared read-only arrays; copy one before changing it."""
        kernel = self._kernel
        if kernel is not None:
            return kernel.mask(s)
        if s.over:
            return _DRAW_MASKS[0]
        if s.phase == _DRAW:
            return _DRAW_MASKS[(s.stock_pos < len(s.stock)) + 2 * (len(s.discard) > 0)]
        # Every card in hand may be discarded (but the card just taken, unless the rules allow
        # it), and knocked with when there is no deadwood limit.
        excluded = -1 if self.rules.allow_discard_of_taken else s.taken
        limit = self.rules.knock_max_deadwood
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[DISCARD_BASE:KNOCK_BASE] = s.planes[s.current]
        if excluded >= 0:
            mask[DISCARD_BASE + excluded] = 0
        if limit is None:
            mask[KNOCK_BASE:] = mask[DISCARD_BASE:KNOCK_BASE]
        if limit is not None:
            after = self.solver.deadwood_after_discards(s.bits[s.current])
            for c, d in after.items():
                if d <= limit and mask[DISCARD_BASE + c]:
                    mask[KNOCK_BASE + c] = 1
        return mask

    # ----------------------------------------------------------------- apply
    def apply(self, s: KnockState, action: int, rng: np.random.Generator) -> None:
        kernel = self._kernel
        if kernel is not None and kernel.apply(s, action):
            return  # played by the compiled turn
        seat = s.current
        planes = s.planes
        if action == DRAW_STOCK:
            card = s.stock[s.stock_pos]
            s.stock_pos += 1
            planes[seat, card] = 1.0
            s.bits[seat] |= POW2[card]
            s.taken = -1
            s.phase = _DISCARD
            return
        n = self.num_players
        top = self._row_top
        discard = s.discard
        if action == TAKE_DISCARD:
            card = discard.pop()
            planes[top, card] = 0.0
            if discard:
                new_top = discard[-1]
                planes[top, new_top] = 1.0
                planes[top + 1, new_top] = 0.0
            planes[seat, card] = 1.0
            planes[n + seat, card] = 1.0
            s.bits[seat] |= POW2[card]
            s.taken = card
            s.phase = _DISCARD
            return
        knock = action >= KNOCK_BASE
        card = action - (KNOCK_BASE if knock else DISCARD_BASE)
        planes[seat, card] = 0.0
        planes[n + seat, card] = 0.0
        planes[2 * n + seat, card] = 1.0
        s.bits[seat] &= ~POW2[card]
        if discard:
            old = discard[-1]
            planes[top, old] = 0.0
            planes[top + 1, old] = 1.0
        discard.append(card)
        planes[top, card] = 1.0
        s.taken = -1
        s.turn += 1
        if knock:
            s.knocker = seat
            self._showdown(s, seat)
            return
        if len(s.stock) - s.stock_pos <= self.rules.void_threshold:
            mode = self.rules.stock_exhaustion
            if mode == "reshuffle" and len(discard) > 1:
                self._reshuffle(s, rng)
            elif mode == "showdown":
                self._showdown(s, None)
                return
            if s.stock_size <= self.rules.void_threshold:
                s.void = True
                s.over = True
                return
        s.current = (seat + 1) % n
        s.phase = _DRAW

    def _reshuffle(self, s: KnockState, rng: np.random.Generator) -> None:
        """The discard pile under its top card is shuffled and put under the stock."""
        under = np.asarray(s.discard[:-1], dtype=np.int64)
        rng.shuffle(under)
        s.stock = s.stock[s.stock_pos :] + under.tolist()
        s.stock_pos = 0
        s.discard = s.discard[-1:]
        s.planes[self._row_buried] = 0.0

    def _showdown(self, s: KnockState, knocker: int | None) -> None:
        solve = self.solver.solve_mask
        deadwood, melds = [], []
        for bits in s.bits:
            d, chosen = solve(bits)
            deadwood.append(d)
            melds.append(chosen)
        s.deadwood = deadwood
        s.melds = melds  # per seat: meld bitmasks
        winners = s.winners = showdown_winners(deadwood, knocker)
        s.points = [float(p) for p in score_showdown(deadwood, knocker, self.rules, winners)]
        s.over = True

    @staticmethod
    def seat_melds(s: KnockState, seat: int) -> tuple[list[list[int]], list[int]]:
        """A seat's melds (card ids, lowest card first) and deadwood cards at the showdown."""
        chosen = sorted(s.melds[seat], key=lambda m: m & -m)
        union = 0
        for m in chosen:
            union |= m
        return [mask_cards(m) for m in chosen], mask_cards(s.bits[seat] & ~union)

    # ----------------------------------------------------------- observation
    def observe(self, s: KnockState, seat: int, totals: np.ndarray) -> np.ndarray:
        kernel = self._kernel
        if kernel is not None:
            return kernel.observe(s, seat, totals)
        check_observe_args(seat, totals, self.num_players)
        to_act_cells, dealer_cells = self._seat_cells[seat]
        current = s.current
        # One gather of rows; the last (scratch) row of the planes is all zeros, and the
        # viewer's scalar features are written into the copy.
        obs = s.planes.take(self._view_rows[seat], axis=0).ravel()  # a view: take copies
        obs[self._stock_at] = (len(s.stock) - s.stock_pos) / NUM_CARDS
        # The phase one-hot is set only for the player to act (else its cell stays 0).
        obs[self._phase_at + s.phase] = 1.0 if seat == current and not s.over else 0.0
        obs[to_act_cells[current]] = 1.0
        obs[dealer_cells[s.dealer]] = 1.0
        obs[self._turn_at] = s.turn / self._max_turns
        if self.match.target_score is not None:
            start = self._scores_at
            obs[start : start + self.num_players] = totals[self._rel[seat]] / self._score_scale
        return obs

    def decode(self, obs: np.ndarray) -> KnockView:
        """Read an observation of :meth:`observe` back (see :class:`KnockView`)."""
        self.check_observation(obs)
        n = self.num_players
        lay = self.observation_layout
        masks = plane_masks(obs[: lay["opponent_thrown"][1]])
        hand, top, buried = masks[:3]
        known = tuple(masks[3 : n + 2])
        public = hand | top | buried
        for k in known:
            public |= k
        phase = np.flatnonzero(obs[slice(*lay["phase"])])
        to_act = np.flatnonzero(obs[slice(*lay["to_act"])])
        dealer = np.flatnonzero(obs[slice(*lay["dealer"])])
        start, stop = lay["scores"]
        return KnockView(
            hand=hand,
            top_discard=top.bit_length() - 1,
            buried_discards=buried,
            opponent_known=known,
            opponent_thrown=tuple(masks[n + 2 :]),
            unseen=(1 << NUM_CARDS) - 1 & ~public,
            stock=round(float(obs[lay["stock_size"][0]]) * NUM_CARDS),
            phase=Phase(int(phase[0])) if phase.size else None,
            to_act=int(to_act[0]) if to_act.size else -1,
            dealer=int(dealer[0]) if dealer.size else -1,
            turn=round(float(obs[lay["turn"][0]]) * self._max_turns),
            scores=tuple(x * self._score_scale for x in obs[start:stop].tolist()),
        )

    # ------------------------------------------------------------------ info
    def hand_winners(self, s: KnockState) -> list[int] | None:
        """The showdown's winners (none in a void hand)."""
        return [] if s.winners is None else s.winners

    def hand_info(self, s: KnockState, seat: int) -> dict[str, Any]:
        info: dict[str, Any] = {
            "void": s.void,
            "knocker": None if s.knocker < 0 else self._seat_names[s.knocker],
        }
        if s.deadwood is not None:
            chosen = s.melds[seat]
            if len(chosen) > 1:
                chosen = sorted(chosen, key=_lowest_bit)
            card_names = self._mask_names
            melds = []
            union = 0
            for m in chosen:
                union |= m
                melds.append(card_names(m, CARD_NAMES))
            info["deadwood"] = s.deadwood[seat]
            info["melds"] = melds
            info["deadwood_cards"] = card_names(s.bits[seat] & ~union, CARD_NAMES)
        return info

    # ---------------------------------------------------------------- render
    def status_text(self, s: KnockState) -> str:
        """Who is to do what, or that the hand is over."""
        if s.over:
            return "hand over" + (" (void: stock exhausted)" if s.void else "")
        return f"player_{s.current} to {'draw' if s.phase == Phase.DRAW else 'discard or knock'}"

    def render(self, s: KnockState, view: int | None, totals: np.ndarray) -> str:
        n = self.num_players
        lines = []
        status = self.status_text(s)
        lines.append(f"Knock Rummy | dealer player_{s.dealer} | turn {s.turn} | {status}")
        top = format_cards(s.discard[-1:]) or "-"
        under = format_cards(reversed(s.discard[:-1]))
        lines.append(
            f"stock: {card_count(s.stock_size)} | top discard: {top}"
            + (f" | under it: {under}" if under else "")
        )
        for seat in range(n):
            tag = " (knocker)" if seat == s.knocker else ""
            if s.over and s.deadwood is not None:
                meld_cards, dead_cards = self.seat_melds(s, seat)
                melds = " | ".join(format_cards(m) for m in meld_cards) or "-"
                dead = format_cards(dead_cards) or "-"
                lines.append(
                    f"player_{seat}{tag}: melds {melds} ; deadwood {dead} = {s.deadwood[seat]} ; "
                    f"points {s.points[seat]:+g}"
                )
            elif view is None or view == seat:
                lines.append(f"player_{seat}: {format_cards(s.hand_cards(seat))}")
            else:
                known = format_cards(np.flatnonzero(s.known[seat]))
                lines.append(
                    f"player_{seat}: [{card_count(int(s.hands[seat].sum()))}]"
                    + (f" holds {known}" if known else "")
                )
        line = self.scores_line(totals)
        if line is not None:
            lines.append(line)
        return "\n".join(lines)

    def table_view(self, s: KnockState, view: int | None, totals: np.ndarray) -> dict[str, Any]:
        """The table as data (see :meth:`Game.table_view`)."""
        status = self.status_text(s)
        frame = self._view_frame(s, status, totals, "Knock Rummy")
        frame["piles"] = [
            {"name": "stock", "count": int(s.stock_size), "cards": None},
            {
                "name": "discard pile",
                "count": len(s.discard),
                "cards": [CARD_NAMES[int(c)] for c in s.discard],
            },
        ]
        for seat in range(self.num_players):
            entry: dict[str, Any] = {
                "seat": seat,
                "name": f"player_{seat}",
                "count": int(s.hands[seat].sum()),
                "hand": None,
                "known": [],
                "melds": [],
                "notes": ["knocker"] if seat == s.knocker else [],
                "points": None,
            }
            if s.over and s.deadwood is not None:
                meld_cards, dead_cards = self.seat_melds(s, seat)
                entry["melds"] = [[CARD_NAMES[c] for c in m] for m in meld_cards]
                entry["hand"] = [CARD_NAMES[c] for c in dead_cards]
                entry["notes"].append(f"deadwood {s.deadwood[seat]}")
                entry["points"] = float(s.points[seat])
            elif s.over or view is None or view == seat:
                entry["hand"] = [CARD_NAMES[c] for c in s.hand_cards(seat)]
            else:
                entry["known"] = [CARD_NAMES[int(c)] for c in np.flatnonzero(s.known[seat])]
            frame["seats"].append(entry)
        return frame

    # ------------------------------------------------------------- checking
    def card_locations(self, s: KnockState) -> np.ndarray:
        """How many places hold each card (hands, stock, discard pile): all ones when sound."""
        count = s.hands.sum(axis=0).astype(np.int64)
        count += np.bincount(
            np.asarray(s.stock[s.stock_pos :], dtype=np.int64), minlength=NUM_CARDS
        )
        count += np.bincount(np.asarray(s.discard, dtype=np.int64), minlength=NUM_CARDS)
        return count


def _lowest_bit(mask: int) -> int:
    return mask & -mask


# Card names of every meld, and of each suit's 13-bit rank pattern by suit << 13 | pattern
# (filled on first use): the Python twin of the compiled ``mask_names`` reads them.
_MELD_NAMES: dict[int, tuple[str, ...]] = {}
_SUIT_PATTERN_NAMES: list[tuple[str, ...] | None] = [None] * (4 << 13)


def _card_names(mask: int, names: tuple[str, ...] = CARD_NAMES) -> list[str]:
    """The compiled ``mask_names`` in Python: the names of a mask's cards, lowest id first."""
    if names is not CARD_NAMES:
        return [names[c] for c in mask_cards(mask)]
    if not _MELD_NAMES:
        full = (1 << NUM_CARDS) - 1
        _MELD_NAMES.update(
            (m, tuple(CARD_NAMES[c] for c in mask_cards(m)))
            for m in knock_solver().candidate_melds(full)
        )
    found = _MELD_NAMES.get(mask)
    if found is not None:
        return list(found)
    out: list[str] = []
    table = _SUIT_PATTERN_NAMES
    for key in (
        mask & 0x1FFF,
        mask >> 13 & 0x1FFF | 0x2000,
        mask >> 26 & 0x1FFF | 0x4000,
        mask >> 39 | 0x6000,
    ):
        if key & 0x1FFF:
            found = table[key]
            if found is None:
                suit, pattern = divmod(key, 1 << 13)
                found = table[key] = tuple(
                    CARD_NAMES[13 * suit + r] for r in range(13) if pattern >> r & 1
                )
            out += found
    return out
