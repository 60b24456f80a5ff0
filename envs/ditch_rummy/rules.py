"""Ditch Rummy: pure rules over a small mutable state (docs/rules.md section 2). No PettingZoo here.

Inside the engine a card is handled by its *order id* ``o = game_rank * 4 + suit``, where the game
ranks run 2 = 0 ... K = 11, A = 12 (aces are high only). Sorting order ids sorts a hand by rank
(2 low, ace high) and then by suit (clubs, diamonds, hearts, spades): that sorted order defines
the *hand positions* the actions address. ``o >> 2`` is the game rank and ``o & 3`` the suit;
everything shown outside (observation planes, infos, render) uses the common card ids of
:mod:`rummyzoo.envs.cards`.

The public facts are kept up to date in the state as cards move, each written once, in absolute
seat order: the card planes as bytes (``bits``), the numbers as float32 (``flat``); observing
gathers a seat's view from them (its seat-relative order) and adds the observer's own hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import combinations
from typing import Any, ClassVar, NamedTuple

import numpy as np

from rummyzoo.envs.cards import (
    CARD_NAMES,
    NUM_CARDS,
    NUM_RANKS,
    NUM_SUITS,
    card_count,
    format_card,
    format_cards,
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
from rummyzoo.envs.melds import ditch_melds, meld_table
from rummyzoo.envs.native import resolve_kernels

# ----------------------------------------------------------------- card order
#: Game-rank characters, low to high (aces are high only; runs never wrap).
GAME_RANK_CHARS = "23456789TJQKA"
ACE = 12  # game rank of the ace
JACK = 9
#: order id -> card id, and back.
ORDER_TO_CARD: tuple[int, ...] = tuple(
    (o & 3) * NUM_RANKS + ((o >> 2) + 1) % NUM_RANKS for o in range(NUM_CARDS)
)
CARD_TO_ORDER: tuple[int, ...] = tuple(ORDER_TO_CARD.index(c) for c in range(NUM_CARDS))
_CARD_TO_ORDER_ARRAY = np.asarray(CARD_TO_ORDER, dtype=np.int64)


# ----------------------------------------------------------------- turn phases
class Phase(IntEnum):
    """Steps of a Ditch Rummy turn, in the order of the observation's ``phase`` one-hot."""

    DRAW = 0  # draw 0-3 cards
    PLAY = 1  # meld and play singles
    DITCH = 2  # ditch cards (no more plays), then end the turn


# The members under module names for the per-step code (an enum class lookup costs more).
_DRAW = Phase.DRAW
_PLAY = Phase.PLAY
_DITCH = Phase.DITCH

MAX_DRAW = 3
#: Hand limit of ``draw_rule="fill_to_3"`` (the rule itself), default one of ``"up_to_3"``.
FILL_HAND_LIMIT = 3
DEFAULT_UP_TO_3_MAX_HAND = 6
#: Position numbers stay single digits (action names use them, and ``10`` reads as a ten).
MAX_HAND_LIMIT = 10
#: The most points a meld or single may be worth (2**24 - 1): the compiled turns add up a
#: hand's points in C ints, which hold 128 times as much (the pure-Python turns would take
#: more, and a config must play the same with or without the compiled kernels).
MAX_POINTS = 2**24 - 1

NO_MELD = 0
SET = 1
RUN = 2
#: Targets of a single when ``single_extends_meld`` (the meld it joins).
SINGLE_TARGETS = ("set", "below", "above")

END_BLIND_RUN = "blind_run"
END_DRAW_PILE = "draw_pile_empty"
END_STALL = "stall"

HAND_POINTS_SCALE = 100.0


@dataclass(frozen=True)
class DitchRummyRules:
    """Every rule option of Ditch Rummy; validated on construction.

    :param num_players: 2-4.
    :param teams: four players in two teams, partners opposite (seats 0+2 vs 1+3), scoring
        together. Needs ``num_players=4``.
    :param draw_rule: ``"fill_to_3"`` (draw 0 or more cards, bringing the hand to at most 3) or
        ``"up_to_3"`` (draw 0-3 cards whatever the hand holds, up to ``max_hand``).
    :param max_hand: most cards a hand may hold. ``fill_to_3`` fixes it at 3; with ``up_to_3``
        it is 3-10 (default 6) and only limits drawing, so the hand positions stay a fixed,
        small action table.
    :param runs_same_suit: runs need one suit (a single off a run must then match its suit).
    :param single_extends_meld: a single joins the meld it is played off (a run's end moves, so
        the next single must fit the new end); otherwise it only scores.
    :param points_single: points of a single other than an ace.
    :param points_single_ace: points of a single ace.
    :param points_set: points of a set (2 or 3 cards of one rank).
    :param points_run: points of a blind run (2 or 3 consecutive ranks).
    :param hand_penalty: ``"per_card"`` (every card left in a hand when the hand ends counts as
        a negative single: ``-points_single``, ``-points_single_ace`` for an ace) or ``"none"``.
    """

    #: the name its errors give it ("ditch_rummy option max_hand must be ...")
    options_of: ClassVar[str] = "ditch_rummy"

    num_players: int = 2
    teams: bool = False
    draw_rule: str = "fill_to_3"
    max_hand: int | None = None
    runs_same_suit: bool = False
    single_extends_meld: bool = False
    points_single: int = 2
    points_single_ace: int = 10
    points_set: int = 5
    points_run: int = 25
    hand_penalty: str = "per_card"

    def __post_init__(self) -> None:
        validate_fields(self)
        check_range(self, "num_players", 2, 4)
        if self.teams and self.num_players != 4:
            raise ConfigError(
                f"ditch_rummy option teams=True needs num_players=4 (partners opposite), "
                f"got num_players={self.num_players}"
            )
        check_choice(self, "draw_rule", ("fill_to_3", "up_to_3"))
        if self.draw_rule == "fill_to_3":
            if self.max_hand not in (None, FILL_HAND_LIMIT):
                raise ConfigError(
                    f"ditch_rummy option max_hand must be None or 3 with draw_rule='fill_to_3' "
                    f"(the rule fills the hand to 3), got {self.max_hand!r}"
                )
            object.__setattr__(self, "max_hand", FILL_HAND_LIMIT)
        elif self.max_hand is None:
            object.__setattr__(self, "max_hand", DEFAULT_UP_TO_3_MAX_HAND)
        check_range(self, "max_hand", FILL_HAND_LIMIT, MAX_HAND_LIMIT)
        for name in ("points_single", "points_single_ace", "points_set", "points_run"):
            check_range(self, name, 0, MAX_POINTS)
        check_choice(self, "hand_penalty", ("per_card", "none"))


class TableMeld:
    """One meld on the table: its owner, kind, cards (card ids, low rank first) and run ends."""

    __slots__ = ("added", "cards", "high", "kind", "low", "owner", "suit")

    def __init__(self, owner: int, kind: int, cards: list[int], low: int, high: int, suit: int):
        self.owner = owner
        self.kind = kind
        self.cards = cards
        self.low = low  # game ranks of the ends (both the rank for a set)
        self.high = high
        self.suit = suit  # run suit with runs_same_suit, else -1
        self.added: list[int] = []  # singles that joined it (single_extends_meld)

    def copy(self) -> TableMeld:
        m = TableMeld(self.owner, self.kind, list(self.cards), self.low, self.high, self.suit)
        m.added = list(self.added)
        return m

    def ordered_cards(self) -> list[int]:
        """The meld's cards with the singles that joined it, in game order."""
        return sorted(self.cards + self.added, key=CARD_TO_ORDER.__getitem__)

    def text(self) -> str:
        """``"set 9c 9h"`` / ``"run 4c 5h 6c"`` (joined singles in brackets)."""
        kind = "set" if self.kind == SET else "run"
        cards = self.ordered_cards()
        shown = " ".join(
            f"[{format_card(c)}]" if c in self.added else format_card(c) for c in cards
        )
        return f"{kind} {shown}"


class DitchState(HandState):
    """Mutable state of one Ditch Rummy hand.

    ``hands[seat]`` is a sorted tuple of order ids (position i = ``hands[seat][i]``); ``pile`` is
    the draw pile as order ids, top first, with ``pile_pos`` cards already drawn.
    ``set_count[rank]`` counts sets of a game rank; ``below[o]`` / ``above[o]`` count the runs
    that card ``o`` would fit just below / above. ``bits`` (the card planes, 0 or 1) and
    ``flat`` (the numbers) hold the public facts every observation is gathered from
    (:meth:`DitchRummyGame._build_flat`).
    """

    __slots__ = (
        "above",
        "active",
        "below",
        "bits",
        "current",
        "dealer",
        "discard",
        "drawn",
        "earned",
        "end_reason",
        "ended_by",
        "flat",
        "hands",
        "idle",
        "melds",
        "over",
        "phase",
        "pile",
        "pile_pos",
        "points",
        "set_count",
        "singles",
        "totals",
        "turn",
    )

    @property
    def pile_size(self) -> int:
        return len(self.pile) - self.pile_pos

    def hand_cards(self, seat: int) -> list[int]:
        """Card ids of a hand in position order."""
        return [ORDER_TO_CARD[o] for o in self.hands[seat]]

    def hand_cards_named(self, seat: int) -> list[str]:
        """Card strings of a hand in position order."""
        return [CARD_NAMES[ORDER_TO_CARD[o]] for o in self.hands[seat]]

    def pile_cards(self) -> list[int]:
        """Card ids of the draw pile, top first."""
        return [ORDER_TO_CARD[o] for o in self.pile[self.pile_pos :]]

    def copy(self) -> DitchState:
        """An independent copy (for search and tests)."""
        s = DitchState()
        for name in self.__slots__:
            setattr(s, name, getattr(self, name))
        s.flat = self.flat.copy()
        s.bits = self.bits.copy()
        s.points = self.points.copy()
        s.hands = list(self.hands)
        s.pile = list(self.pile)
        s.discard = list(self.discard)
        s.melds = [m.copy() for m in self.melds]
        s.singles = [list(x) for x in self.singles]
        s.set_count = list(self.set_count)
        s.below = list(self.below)
        s.above = list(self.above)
        s.earned = list(self.earned)
        return s


def ends_hand(kind: int, orders: list[int] | tuple[int, ...]) -> bool:
    """Whether melding ``orders`` (sorted order ids) of ``kind`` ends the hand: a J-Q-K or
    Q-K-A run."""
    return kind == RUN and len(orders) == 3 and orders[0] >> 2 >= JACK


def meld_kind(orders: list[int] | tuple[int, ...], same_suit: bool) -> int:
    """``SET``, ``RUN`` or ``NO_MELD`` for 2-3 cards given as sorted order ids."""
    if not 2 <= len(orders) <= 3:
        return NO_MELD
    ranks = [o >> 2 for o in orders]
    if all(r == ranks[0] for r in ranks):
        return SET
    if all(ranks[i + 1] == ranks[i] + 1 for i in range(len(ranks) - 1)) and (
        not same_suit or all((o & 3) == (orders[0] & 3) for o in orders)
    ):
        return RUN
    return NO_MELD


class Fits(NamedTuple):
    """Where a single fits on the table now (the observation's three fit planes).

    :param set_ranks: game ranks that have a set on the table, as a bitmask over ranks.
    :param below: cards that fit just below a run, as a bitmask over order ids.
    :param above: cards that fit just above a run, likewise.
    """

    set_ranks: int
    below: int
    above: int


@dataclass(frozen=True, slots=True)
class DitchView:
    """What one Ditch Rummy observation shows, as :meth:`DitchRummyGame.decode` reads it back.

    Seats are relative to the observer: 0 is the observer, 1..N-1 the seats after it in play
    order. Cards are order ids (``game_rank * 4 + suit``, as in the rules and their helpers),
    sets of cards bitmasks over order ids (bit ``o`` set = order id ``o``).

    :ivar hand: the observer's cards, sorted: ``hand[i]`` is the card at hand position ``i``.
    :ivar discards: the discard pile.
    :ivar sets: per seat, the cards of the sets it melded.
    :ivar runs: per seat, the cards of the runs it melded.
    :ivar singles: per seat, the cards it played as singles.
    :ivar unseen: the cards in none of the above (in the draw pile or another hand).
    :ivar fits: where a single fits now.
    :ivar hand_sizes: per seat, the cards in its hand.
    :ivar hand_points: per seat, the points it earned this hand.
    :ivar teammates: per seat, whether it scores with the observer (the observer itself and,
        with teams, the partner).
    :ivar scores: per seat, the match total of its side (0 in single-hand play).
    :ivar stock: cards left in the draw pile.
    :ivar phase: the observer's :class:`Phase` when it is to act, else None (also once the
        hand is over).
    :ivar to_act: relative seat of the player to act.
    :ivar dealer: relative seat of the dealer.
    :ivar drawn: cards drawn this turn by the player to act.
    :ivar idle_turns: turns in a row without a card moving.
    :ivar turn: turns completed in this hand.
    """

    hand: tuple[int, ...]
    discards: int
    sets: tuple[int, ...]
    runs: tuple[int, ...]
    singles: tuple[int, ...]
    unseen: int
    fits: Fits
    hand_sizes: tuple[int, ...]
    hand_points: tuple[int, ...]
    teammates: tuple[bool, ...]
    scores: tuple[int, ...]
    stock: int
    phase: Phase | None
    to_act: int
    dealer: int
    drawn: int
    idle_turns: int
    turn: int


class DitchRummyGame(Game):
    """Ditch Rummy rules for one config (see :mod:`rummyzoo.envs.ditch_rummy_v0` for the docs)."""

    name = "ditch_rummy"
    rules_class = DitchRummyRules
    match_defaults: ClassVar[dict[str, Any]] = {"target_score": 500, "max_turns": 500}

    def move_labels(self, state: DitchState, legal: Sequence[int]) -> list[str]:
        """The moves described; ``draw 0`` into an empty hand labelled as the pass it is."""
        labels = [self.describe_action(state, a) for a in legal]
        if state.over or state.hands[state.current]:
            return labels
        draw_none = self.action_index("draw 0")
        return [
            f"{label}: pass (your hand is empty, so your turn ends at once)"
            if a == draw_none
            else label
            for a, label in zip(legal, labels, strict=True)
        ]

    def __init__(self, rules: DitchRummyRules, match: Any, kernels: Any = None) -> None:
        # ``kernels``: None = the compiled kernels where built, PURE = the Python code, or a
        # kernels module (rummyzoo.envs.native.resolve_kernels).
        kernels = self.kernels = resolve_kernels(kernels)
        self.rules = rules
        self.match = match
        n = self.num_players = rules.num_players
        hmax = self.max_hand = int(rules.max_hand)
        self.score_groups = np.array([0, 1, 0, 1]) if rules.teams else np.arange(n)
        self._build_actions(hmax, rules.single_extends_meld)
        self._build_card_tables(rules)
        self._build_flat(n)
        self._build_observation(n, hmax)
        self._build_masks(hmax)
        # The compiled turn (envs/_ditch.c: every move, the legal mask, the observation), when
        # built; the Python code below is its twin, giving the same states and arrays.
        self._kernel = None if kernels is None else kernels.DitchKernel(self._native_layout())
        #: The vector engine's step and rows over many games (see :class:`~rummyzoo.envs.core.Game`).
        self.play_batch = None if self._kernel is None else self._kernel.step
        self.rows_batch = None if self._kernel is None else self._kernel.rows

    def _native_layout(self) -> dict[str, Any]:
        """The constants of this config that the compiled turn reads."""
        return {
            "players": self.num_players,
            "max_hand": self.max_hand,
            "max_turns": self.match.max_turns,
            "obs_size": self.obs_size,
            "num_actions": self.num_actions,
            "meld_base": self.meld_base,
            "single_base": self.single_base,
            "single_targets": self.single_targets,
            "ditch_base": self.ditch_base,
            "ditch_all": self.ditch_all,
            "end_turn": self.end_turn,
            "off_hand": self._off_hand,
            "off_pos": self._off_pos,
            "off_phase": self._off_phase,
            "fl_pile": self._fl_pile,
            "fl_sizes": self._fl_sizes,
            "fl_drawn": self._fl_drawn,
            "fl_discard": self._fl_discard,
            "fl_turn": self._fl_turn,
            "fl_idle": self._fl_idle,
            "fl_to_act": self._fl_to_act,
            "fl_scores": self._fl_scores,
            "score_scale": self._score_scale,
            "flat_size": self._flat_size,
            "bits_size": self._bits_size,
            "fl_zero": self._fl_zero,
            "gather": self._gather,
            "meld_positions": self.meld_positions,
            "pair_kind": bytes(k for row in self._pair_kind for k in row),
            "card_penalty": list(self.card_penalty),
            "single_points": list(self.single_points),
            "points_set": self.rules.points_set,
            "points_run": self.rules.points_run,
            "runs_same_suit": int(self.rules.runs_same_suit),
            "fl_hand_points": self._fl_hand_points,
            "fl_sets": self._fl_sets,
            "fl_runs": self._fl_runs,
            "fl_singles": self._fl_singles,
            "fl_fit_set": self._fl_fit_set,
            "fl_fit_below": self._fl_fit_below,
            "fl_fit_above": self._fl_fit_above,
            "meld_class": TableMeld,
            "state_class": DitchState,
            "match_class": Match,
            "flat_template": self._flat_template,
            "fl_dealer": self._fl_dealer,
            "draw_masks": self._draw_masks,
            "ditch_masks": self._ditch_masks,
            "empty_mask": self._empty_mask,
            "phases": (_DRAW, _PLAY, _DITCH),
            "end_reasons": (END_DRAW_PILE, END_STALL, END_BLIND_RUN),
        }

    # ------------------------------------------------------------ tables
    def _build_actions(self, hmax: int, extends: bool) -> None:
        names = [f"draw {k}" for k in range(MAX_DRAW + 1)]
        self.meld_base = len(names)
        self.meld_positions: list[tuple[int, ...]] = [
            combo for size in (2, 3) for combo in combinations(range(hmax), size)
        ]
        names += ["meld " + " ".join(map(str, combo)) for combo in self.meld_positions]
        self._meld_ids = {combo: self.meld_base + j for j, combo in enumerate(self.meld_positions)}
        self.single_base = len(names)
        self.single_targets = len(SINGLE_TARGETS) if extends else 1
        for i in range(hmax):
            if extends:
                names += [f"single {i} {t}" for t in SINGLE_TARGETS]
            else:
                names.append(f"single {i}")
        self.ditch_base = len(names)
        names += [f"ditch {i}" for i in range(hmax)]
        self.ditch_all = len(names)
        names.append("ditch all")
        self.end_turn = len(names)
        names.append("end turn")
        self.action_names = tuple(names)
        self.num_actions = len(names)
        self._index_names()
        # meld action ids usable with a hand of h cards
        self._melds_for_size = [
            [
                (self.meld_base + j, combo)
                for j, combo in enumerate(self.meld_positions)
                if combo[-1] < h
            ]
            for h in range(hmax + 1)
        ]

    def _build_card_tables(self, rules: DitchRummyRules) -> None:
        # Kind of each pair of order ids a < b that is a two-card meld of the shared meld table
        # (legal_melds takes three cards as a meld when both neighbouring pairs are, alike).
        table = meld_table(ditch_melds(rules.runs_same_suit))
        pairs = {m.mask: RUN if m.is_run else SET for m in table.melds if len(m.cards) == 2}
        bit = [1 << card for card in ORDER_TO_CARD]
        self._pair_kind = [
            [pairs.get(bit[a] | bit[b], NO_MELD) if a < b else NO_MELD for b in range(NUM_CARDS)]
            for a in range(NUM_CARDS)
        ]
        #: Points of each card (by order id) played as a single, and what it costs when the hand
        #: ends while it is held; points of a meld by kind (``NO_MELD``, ``SET``, ``RUN``).
        self.single_points = [
            rules.points_single_ace if o >> 2 == ACE else rules.points_single
            for o in range(NUM_CARDS)
        ]
        self.card_penalty = (
            self.single_points if rules.hand_penalty == "per_card" else [0] * NUM_CARDS
        )
        self.meld_points = (0, rules.points_set, rules.points_run)
        self._meld_cache: dict[tuple[int, ...], tuple[int, ...]] = {}

    def _build_flat(self, n: int) -> None:
        """Offsets of the public facts in absolute seat order: the card planes in the state's
        ``bits`` (uint8, each entry 0 or 1), the numbers in its ``flat`` (float32, whose last two
        entries stay 1 and 0). Every observation is gathered from the two (see
        :meth:`_build_observation`)."""
        pos = 0

        def take(size: int) -> int:
            nonlocal pos
            pos += size
            return pos - size

        self._fl_discard = take(NUM_CARDS)
        self._fl_fit_set = take(NUM_CARDS)
        self._fl_fit_below = take(NUM_CARDS)
        self._fl_fit_above = take(NUM_CARDS)
        self._fl_sets = take(NUM_CARDS * n)
        self._fl_runs = take(NUM_CARDS * n)
        self._fl_singles = take(NUM_CARDS * n)
        self._bits_size = pos
        pos = 0
        self._fl_sizes = take(n)
        self._fl_hand_points = take(n)
        self._fl_scores = take(n)
        self._fl_to_act = take(n)
        self._fl_dealer = take(n)
        self._fl_pile = take(1)
        self._fl_drawn = take(1)
        self._fl_idle = take(1)
        self._fl_turn = take(1)
        self._fl_one = take(1)
        self._fl_zero = take(1)
        self._flat_size = pos

    def _build_observation(self, n: int, hmax: int) -> None:
        teams = self.rules.teams
        fields: list[tuple[str, int]] = [
            ("hand", NUM_CARDS),
            ("hand_positions", NUM_CARDS * hmax),
            ("discard_pile", NUM_CARDS),
            ("fits_set", NUM_CARDS),
            ("fits_below_run", NUM_CARDS),
            ("fits_above_run", NUM_CARDS),
            ("sets", NUM_CARDS * n),
            ("runs", NUM_CARDS * n),
            ("singles", NUM_CARDS * n),
            ("hand_sizes", n),
            ("hand_points", n),
            ("teammates", n),
            ("scores", n),
            ("to_act", n),
            ("dealer", n),
            ("phase", len(Phase)),
            ("draw_pile", 1),
            ("drawn", 1),
            ("idle_turns", 1),
            ("turn", 1),
        ]
        layout: dict[str, tuple[int, int]] = {}
        pos = 0
        for name, size in fields:
            layout[name] = (pos, pos + size)
            pos += size
        self.observation_layout = layout
        self.obs_size = size_obs = pos
        self._off_hand = layout["hand"][0]
        self._off_pos = layout["hand_positions"][0]
        self._off_phase = layout["phase"][0]
        zero, one = self._fl_zero, self._fl_one

        def block(base: int, seat: int, size: int) -> list[int]:
            return list(range(base + size * seat, base + size * (seat + 1)))

        # gather[v][i]: where observation position i of seat v is read: index j < flat_size
        # is flat[j], flat_size + j is bits[j] (the zero entry where seat v's own hand and the
        # phase go: written per observation)
        bits = self._flat_size
        self._gather: list[np.ndarray] = []
        self._gather_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        for v in range(n):
            rel = [(v + r) % n for r in range(n)]
            idx = [zero] * (NUM_CARDS * (1 + hmax))
            for base in (self._fl_discard, self._fl_fit_set, self._fl_fit_below):
                idx += block(bits + base, 0, NUM_CARDS)
            idx += block(bits + self._fl_fit_above, 0, NUM_CARDS)
            for base in (self._fl_sets, self._fl_runs, self._fl_singles):
                for seat in rel:
                    idx += block(bits + base, seat, NUM_CARDS)
            idx += [self._fl_sizes + s for s in rel]
            idx += [self._fl_hand_points + s for s in rel]
            idx += [one if r == 0 or (teams and r == 2) else zero for r in range(n)]
            for base in (self._fl_scores, self._fl_to_act, self._fl_dealer):
                idx += [base + s for s in rel]
            idx += [zero] * len(Phase)
            idx += [self._fl_pile, self._fl_drawn, self._fl_idle, self._fl_turn]
            assert len(idx) == size_obs
            index = np.asarray(idx, dtype=np.intp)
            self._gather.append(index)
            of_bits = index >= bits
            self._gather_parts.append(
                (
                    np.flatnonzero(~of_bits),
                    index[~of_bits],
                    np.flatnonzero(of_bits),
                    index[of_bits] - bits,
                )
            )
        template = np.zeros(self._flat_size, dtype=np.float32)
        template[one] = 1.0
        template[self._fl_pile] = 1.0  # a full draw pile
        template.flags.writeable = False
        self._flat_template = template
        self._score_scale = float(self.match.target_score or 500)
        self._build_decoder()

    def _build_masks(self, hmax: int) -> None:
        def frozen(ids: list[int]) -> np.ndarray:
            mask = np.zeros(self.num_actions, dtype=np.int8)
            mask[ids] = 1
            mask.flags.writeable = False
            return mask

        self._empty_mask = frozen([])
        self._draw_masks = [frozen(list(range(k + 1))) for k in range(MAX_DRAW + 1)]
        ends = [
            [self.ditch_base + i for i in range(h)]
            + ([self.ditch_all] if h >= 2 else [])
            + [self.end_turn]
            for h in range(hmax + 1)
        ]
        self._ditch_masks = [frozen(ids) for ids in ends]
        self._play_masks = self._ditch_masks  # copied, then melds and singles are added

    # -------------------------------------------------------------- deal
    def new_hand(self, rng: np.random.Generator, dealer: int, deck: np.ndarray) -> DitchState:
        """No cards are dealt: the whole deck is the draw pile, ``deck[0]`` on top."""
        kernel = self._kernel
        if kernel is not None:
            return kernel.deal(dealer, deck)
        n = self.num_players
        s = DitchState()
        s.flat = self._flat_template.copy()
        s.bits = np.zeros(self._bits_size, dtype=np.uint8)
        s.pile = _CARD_TO_ORDER_ARRAY[np.asarray(deck, dtype=np.int64)].tolist()
        s.pile_pos = 0
        s.hands = [()] * n
        s.discard = []
        s.melds = []
        s.singles = [[] for _ in range(n)]
        s.set_count = [0] * NUM_RANKS
        s.below = [0] * NUM_CARDS
        s.above = [0] * NUM_CARDS
        s.earned = [0] * n
        s.dealer = dealer
        s.current = (dealer + 1) % n
        self._put(s, self._fl_dealer + dealer, 1.0)
        self._put(s, self._fl_to_act + s.current, 1.0)
        s.turn = 0
        s.phase = _DRAW
        s.drawn = 0
        s.active = False
        s.idle = 0
        s.over = False
        s.points = np.zeros(n, dtype=np.float64)
        s.end_reason = None
        s.ended_by = None
        s.totals = None  # the match totals last written to the flat facts
        return s

    # -------------------------------------------------------------- mask
    def legal_melds(self, hand: tuple[int, ...]) -> tuple[int, ...]:
        """Meld action ids legal for a sorted hand (order ids); cached for hands of up to 3."""
        found = self._meld_cache.get(hand)
        if found is not None:
            return found
        kind = self._pair_kind
        ids = []
        for action, combo in self._melds_for_size[len(hand)]:
            first = kind[hand[combo[0]]][hand[combo[1]]]
            if first and (len(combo) == 2 or kind[hand[combo[1]]][hand[combo[2]]] == first):
                ids.append(action)
        found = tuple(ids)
        if len(hand) <= FILL_HAND_LIMIT:
            self._meld_cache[hand] = found
        return found

    def meld_kind(self, orders: tuple[int, ...]) -> int:
        """``SET``, ``RUN`` or ``NO_MELD`` for 2-3 cards given as sorted order ids, under this
        config's ``runs_same_suit`` (the pair table :meth:`legal_melds` reads)."""
        kind = self._pair_kind
        if len(orders) == 2:
            return kind[orders[0]][orders[1]]
        if len(orders) == 3:
            first = kind[orders[0]][orders[1]]
            return first if kind[orders[1]][orders[2]] == first else NO_MELD
        return NO_MELD

    def meld_action(self, positions: tuple[int, ...]) -> int:
        """Action id of melding the cards at these hand positions (ascending)."""
        return self._meld_ids[positions]

    def single_action(self, pos: int, target: int = 0) -> int:
        """Action id of playing the card at hand position ``pos`` as a single onto ``target``
        (0 = a set, 1 = below a run, 2 = above a run; ignored unless singles join melds)."""
        if self.single_targets == 1:
            return self.single_base + pos
        return self.single_base + self.single_targets * pos + target

    def legal_mask(self, s: DitchState) -> np.ndarray:
        """int8 mask of the legal actions of the player to act (all zero once the hand is over).

        Masks of the draw and ditch steps are shared, read-only tables: copy before editing.
        """
        kernel = self._kernel
        if kernel is not None:
            return kernel.mask(s)
        if s.over:
            return self._empty_mask
        hand = s.hands[s.current]
        phase = s.phase
        if phase == _DRAW:
            room = min(MAX_DRAW, len(s.pile) - s.pile_pos, self.max_hand - len(hand))
            return self._draw_masks[room]
        if phase == _DITCH:
            return self._ditch_masks[len(hand)]
        mask = self._play_masks[len(hand)].copy()
        for action in self.legal_melds(hand):
            mask[action] = 1
        set_count, below, above = s.set_count, s.below, s.above
        base = self.single_base
        if self.single_targets == 1:
            for i, o in enumerate(hand):
                if set_count[o >> 2] or below[o] or above[o]:
                    mask[base + i] = 1
        else:
            for i, o in enumerate(hand):
                a = base + 3 * i
                if set_count[o >> 2]:
                    mask[a] = 1
                if below[o]:
                    mask[a + 1] = 1
                if above[o]:
                    mask[a + 2] = 1
        return mask

    # ------------------------------------------------------------- apply
    def apply(self, s: DitchState, action: int, rng: np.random.Generator) -> None:
        """Play a legal action of the player to act (no chance here: ``rng`` is unused)."""
        kernel = self._kernel
        if kernel is not None and kernel.apply(s, action):
            return
        seat = s.current
        if action < self.meld_base:
            self._draw(s, seat, action)
        elif action < self.single_base:
            self._meld(s, seat, self.meld_positions[action - self.meld_base])
        elif action < self.ditch_base:
            pos, target = divmod(action - self.single_base, self.single_targets)
            self._single(s, seat, pos, target)
        elif action < self.ditch_all:
            self._ditch(s, seat, action - self.ditch_base)
            if not s.hands[seat]:
                self._end_turn(s)
        elif action == self.ditch_all:
            self._ditch_all(s, seat)
            self._end_turn(s)
        else:
            self._end_turn(s)

    def _draw(self, s: DitchState, seat: int, count: int) -> None:
        s.drawn = count
        s.phase = _PLAY
        if count:
            start = s.pile_pos
            hand = s.hands[seat] = tuple(
                sorted(s.hands[seat] + tuple(s.pile[start : start + count]))
            )
            s.pile_pos = start + count
            s.active = True
            flat = s.flat
            flat[self._fl_pile] = (len(s.pile) - s.pile_pos) / NUM_CARDS
            flat[self._fl_sizes + seat] = len(hand) / self.max_hand
            flat[self._fl_drawn] = count / MAX_DRAW
        elif not s.hands[seat]:
            self._end_turn(s)

    def _meld(self, s: DitchState, seat: int, combo: tuple[int, ...]) -> None:
        hand = s.hands[seat]
        orders = [hand[p] for p in combo]
        kind = self._pair_kind[orders[0]][orders[1]]
        s.hands[seat] = tuple(o for p, o in enumerate(hand) if p not in combo)
        cards = [ORDER_TO_CARD[o] for o in orders]
        row = (self._fl_sets if kind == SET else self._fl_runs) + NUM_CARDS * seat
        for c in cards:
            s.bits[row + c] = 1
        low, high = orders[0] >> 2, orders[-1] >> 2
        suit = orders[0] & 3 if kind == RUN and self.rules.runs_same_suit else -1
        s.melds.append(TableMeld(seat, kind, cards, low, high, suit))
        if kind == SET:
            if not s.set_count[low]:
                for o in range(low * 4, low * 4 + NUM_SUITS):
                    s.bits[self._fl_fit_set + ORDER_TO_CARD[o]] = 1
            s.set_count[low] += 1
            gain = self.rules.points_set
        else:
            if low > 0:
                self._move_end(s, s.below, self._fl_fit_below, low - 1, suit, 1)
            if high < ACE:
                self._move_end(s, s.above, self._fl_fit_above, high + 1, suit, 1)
            gain = self.rules.points_run
        self._score(s, seat, gain)
        s.active = True
        if ends_hand(kind, orders):
            s.turn += 1
            self._put(s, self._fl_turn, s.turn / self.match.max_turns)
            self._end_hand(s, END_BLIND_RUN, seat)
        elif not s.hands[seat]:
            self._end_turn(s)

    def _move_end(
        self, s: DitchState, counts: list[int], plane: int, rank: int, suit: int, delta: int
    ) -> None:
        """Add (``delta=1``) or remove (-1) one run end where a card of ``rank`` fits."""
        for o in range(rank * 4, rank * 4 + NUM_SUITS) if suit < 0 else (rank * 4 + suit,):
            counts[o] += delta
            s.bits[plane + ORDER_TO_CARD[o]] = 1 if counts[o] else 0

    def _single(self, s: DitchState, seat: int, pos: int, target: int) -> None:
        hand = s.hands[seat]
        o = hand[pos]
        s.hands[seat] = hand[:pos] + hand[pos + 1 :]
        card = ORDER_TO_CARD[o]
        s.bits[self._fl_singles + NUM_CARDS * seat + card] = 1
        s.singles[seat].append(card)
        if self.single_targets > 1:
            self._extend(s, o, target)
        self._score(s, seat, self.single_points[o])
        s.active = True
        if not s.hands[seat]:
            self._end_turn(s)

    def _extend(self, s: DitchState, o: int, target: int) -> None:
        """The single joins the earliest meld it fits in the chosen way."""
        rank, suit = o >> 2, o & 3
        card = ORDER_TO_CARD[o]
        for meld in s.melds:
            if meld.suit >= 0 and meld.suit != suit:
                continue
            if target == 0 and meld.kind == SET and meld.low == rank:
                meld.added.append(card)
                return
            if target == 1 and meld.kind == RUN and meld.low == rank + 1:
                self._move_end(s, s.below, self._fl_fit_below, rank, meld.suit, -1)
                if rank > 0:
                    self._move_end(s, s.below, self._fl_fit_below, rank - 1, meld.suit, 1)
                meld.low = rank
                meld.added.append(card)
                return
            if target == 2 and meld.kind == RUN and meld.high == rank - 1:
                self._move_end(s, s.above, self._fl_fit_above, rank, meld.suit, -1)
                if rank < ACE:
                    self._move_end(s, s.above, self._fl_fit_above, rank + 1, meld.suit, 1)
                meld.high = rank
                meld.added.append(card)
                return
        raise AssertionError(f"no meld takes {format_card(card)} as {SINGLE_TARGETS[target]}")

    def _ditch(self, s: DitchState, seat: int, pos: int) -> None:
        hand = s.hands[seat]
        card = ORDER_TO_CARD[hand[pos]]
        hand = s.hands[seat] = hand[:pos] + hand[pos + 1 :]
        s.discard.append(card)
        s.bits[self._fl_discard + card] = 1
        s.flat[self._fl_sizes + seat] = len(hand) / self.max_hand
        s.active = True
        s.phase = _DITCH

    def _ditch_all(self, s: DitchState, seat: int) -> None:
        bits = s.bits
        for o in s.hands[seat]:
            card = ORDER_TO_CARD[o]
            s.discard.append(card)
            bits[self._fl_discard + card] = 1
        s.hands[seat] = ()
        s.flat[self._fl_sizes + seat] = 0.0
        s.active = True
        s.phase = _DITCH

    def _score(self, s: DitchState, seat: int, gain: int) -> None:
        s.earned[seat] += gain
        self._put(s, self._fl_hand_points + seat, s.earned[seat] / HAND_POINTS_SCALE)
        self._put(s, self._fl_sizes + seat, len(s.hands[seat]) / self.max_hand)

    def _put(self, s: DitchState, index: int, value: float) -> None:
        """Write the number ``index`` of the public facts (``flat``)."""
        s.flat[index] = value

    def _end_turn(self, s: DitchState) -> None:
        s.turn += 1
        flat = s.flat
        flat[self._fl_turn] = s.turn / self.match.max_turns
        if not s.active:
            s.idle += 1
            flat[self._fl_idle] = s.idle / self.num_players
        elif s.idle:
            s.idle = 0
            flat[self._fl_idle] = 0.0
        if s.pile_pos >= len(s.pile):
            self._end_hand(s, END_DRAW_PILE, None)
            return
        if s.idle >= self.num_players:
            self._end_hand(s, END_STALL, None)
            return
        flat[self._fl_to_act + s.current] = 0.0
        s.current = (s.current + 1) % self.num_players
        flat[self._fl_to_act + s.current] = 1.0
        if s.drawn:
            flat[self._fl_drawn] = 0.0
        s.phase = _DRAW
        s.drawn = 0
        s.active = False

    def _end_hand(self, s: DitchState, reason: str, seat: int | None) -> None:
        """Final points: earned minus the hand penalty of every card still held."""
        penalty = self.card_penalty
        s.points = np.asarray(
            [s.earned[i] - sum(penalty[o] for o in s.hands[i]) for i in range(self.num_players)],
            dtype=np.float64,
        )
        s.end_reason = reason
        s.ended_by = seat
        s.over = True

    def penalty(self, s: DitchState, seat: int) -> int:
        """Hand penalty of the cards ``seat`` holds now."""
        return sum(self.card_penalty[o] for o in s.hands[seat])

    # ------------------------------------------------------- observation
    def observe(self, s: DitchState, seat: int, totals: np.ndarray) -> np.ndarray:
        """A new float32 observation for ``seat``; ``totals`` are the match totals per seat."""
        kernel = self._kernel
        if kernel is not None:
            return kernel.observe(s, seat, totals)
        check_observe_args(seat, totals, self.num_players)
        if totals is not s.totals or totals.flags.writeable:
            # a match's totals are a new read-only array when they change; a writeable array
            # may have changed in place since it was last written
            for i, total in enumerate(totals.tolist()):
                self._put(s, self._fl_scores + i, total / self._score_scale)
            s.totals = totals
        flat_at, flat_from, bits_at, bits_from = self._gather_parts[seat]
        obs = np.empty(self.obs_size, dtype=np.float32)
        obs[flat_at] = s.flat[flat_from]
        obs[bits_at] = s.bits[bits_from]
        hand_off, pos_off = self._off_hand, self._off_pos
        for i, o in enumerate(s.hands[seat]):
            card = ORDER_TO_CARD[o]
            obs[hand_off + card] = 1.0
            obs[pos_off + NUM_CARDS * i + card] = 1.0
        if seat == s.current and not s.over:
            obs[self._off_phase + s.phase] = 1.0
        return obs

    def _build_decoder(self) -> None:
        """What :meth:`decode` reads: where each part of an observation lies, and the bit of
        each card id's order id (a plane times these is the plane's order-id mask: a sum of
        distinct powers of two below 2**52, so exact in float64)."""
        lay = self.observation_layout
        self._dec_hand = slice(*lay["hand"])
        self._dec_table = slice(lay["discard_pile"][0], lay["singles"][1])
        self._dec_bits = np.asarray([float(1 << CARD_TO_ORDER[c]) for c in range(NUM_CARDS)])
        self._dec_tail = ObservationTail(lay, lay["hand_sizes"][0])  # after the card planes

    def decode(self, obs: np.ndarray) -> DitchView:
        """Read an observation of :meth:`observe` back (see :class:`DitchView`)."""
        self.check_observation(obs)
        n = self.num_players
        bits = self._dec_bits
        # The card planes as order-id masks: the hand, then discards, fits, sets, runs, singles.
        hand = int((obs[self._dec_hand] != 0) @ bits)
        table = (obs[self._dec_table].reshape(-1, NUM_CARDS) != 0) @ bits
        masks = table.astype(np.int64).tolist()
        discards, fit_set, below, above = masks[:4]
        sets, runs, singles = masks[4 : 4 + n], masks[4 + n : 4 + 2 * n], masks[4 + 2 * n :]
        shown = hand | discards  # the fit planes show where cards fit, not cards
        for m in masks[4:]:
            shown |= m
        held = []
        m = hand
        while m:
            low = m & -m
            held.append(low.bit_length() - 1)
            m ^= low
        set_ranks = 0
        for r in range(NUM_RANKS):
            if fit_set >> (NUM_SUITS * r) & 0xF:
                set_ranks |= 1 << r
        tail = self._dec_tail.read(obs)
        phase = tail.first("phase")
        return DitchView(
            hand=tuple(held),
            discards=discards,
            sets=tuple(sets),
            runs=tuple(runs),
            singles=tuple(singles),
            unseen=(1 << NUM_CARDS) - 1 & ~shown,
            fits=Fits(set_ranks, below, above),
            hand_sizes=tail.ints("hand_sizes", self.max_hand),
            hand_points=tail.ints("hand_points", HAND_POINTS_SCALE),
            teammates=tuple(x > 0.5 for x in tail.part("teammates")),
            scores=tail.ints("scores", self._score_scale),
            stock=round(tail.one("draw_pile") * NUM_CARDS),
            phase=Phase(phase) if phase >= 0 else None,
            to_act=tail.first("to_act"),
            dealer=tail.first("dealer"),
            drawn=round(tail.one("drawn") * MAX_DRAW),
            idle_turns=round(tail.one("idle_turns") * n),
            turn=round(tail.one("turn") * self.match.max_turns),
        )

    # ------------------------------------------------------ descriptions
    def illegal_action_detail(self, s: DitchState) -> str:
        """The cards of the seat to act, by hand position (actions name positions)."""
        held = " ".join(
            f"[{i}]{format_card(ORDER_TO_CARD[o])}" for i, o in enumerate(s.hands[s.current])
        )
        return f"player_{s.current} holds {held or 'no cards'}"

    def illegal_reason(self, state: DitchState, action: int) -> str:
        """Why ``action`` is illegal now: a draw over the hand's limit or the pile, a play
        before the draw or a draw after it, a position past the hand, cards that make no meld,
        a single that fits no meld, a meld or single after ditching began; empty where "not a
        legal move" says enough."""
        s = state
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
            return ""  # (no action id: the caller's own check names it)
        if s.over or not 0 <= action < self.num_actions:
            return ""
        hand = s.hands[s.current]
        held = len(hand)
        if s.phase == _DRAW:
            if action >= self.meld_base:
                return "draw first: a turn starts with a draw (of 0 cards or more)"
            left = len(s.pile) - s.pile_pos
            if action > left:
                return f"only {left} card{'s are' if left != 1 else ' is'} left in the draw pile"
            if action > self.max_hand - held:
                room = self.max_hand - held
                most = "draw 0" if room == 0 else f"draw {room} or fewer"
                return (
                    f"you hold {held} card{'s' if held != 1 else ''} and a hand holds at most "
                    f"{self.max_hand}: {most}"
                )
            return ""
        if action < self.meld_base:
            return "you have drawn this turn already: meld, play singles, ditch, or end the turn"
        if action == self.end_turn:
            return ""
        if action == self.ditch_all:
            if held == 1:
                return "ditch all takes 2 cards or more: ditch the one card by its number"
            return "" if held else "your hand is empty: end the turn"
        if action < self.single_base:
            positions = self.meld_positions[action - self.meld_base]
        elif action < self.ditch_base:
            positions = ((action - self.single_base) // self.single_targets,)
        else:
            positions = (action - self.ditch_base,)
        if positions[-1] >= held:
            return (
                f"you hold {held} card{'s' if held != 1 else ''}: positions 0 to {held - 1}"
                if held
                else "your hand is empty: end the turn"
            )
        if action >= self.ditch_base:
            return ""
        if s.phase == _DITCH:
            return "you have begun to ditch: melds and singles come first (ditch more, or end the turn)"
        orders = tuple(hand[p] for p in positions)
        cards = format_cards(ORDER_TO_CARD[o] for o in orders)
        if action < self.single_base:
            if self.meld_kind(orders) == NO_MELD:
                suit = " of one suit" if self.rules.runs_same_suit else ""
                return (
                    f"{cards} make no meld: a set is 2 or 3 cards of one rank, a blind run 2 or 3 "
                    f"consecutive ranks{suit} (ace high only)"
                )
            return ""
        o = orders[0]
        fits = (s.set_count[o >> 2], s.below[o], s.above[o])
        target = (action - self.single_base) % self.single_targets
        if self.single_targets == 1:
            if any(fits):
                return ""
            run = "a run of its suit" if self.rules.runs_same_suit else "a run"
            return f"{cards} fits no meld on the table (a set of its rank, or {run}'s end)"
        if fits[target]:
            return ""
        if target == 0:
            return f"{cards} fits no set on the table (none of its rank)"
        side = "below" if target == 1 else "above"
        suit = " of its suit" if self.rules.runs_same_suit else ""
        return f"{cards} is not the rank just {side} a run{suit} on the table"

    def describe_action(self, s: DitchState, action: int, public: bool = False) -> str:
        """The action's name and, for the player to act, the cards it moves.

        E.g. ``"meld 0 1: set 9c 9h (+5)"``, ``"single 2: Ad (+10)"``, ``"ditch 0: 4c"``.
        ``public``: as the other seats may be told it, without the hand positions (where a
        card sat in the sorted hand tells how the cards still hidden rank against it):
        ``"meld: set 9c 9h (+5)"``, ``"ditch: 4c"``.
        """
        name = self.action_name(action)
        if public and not name.startswith("draw"):  # how many cards a draw takes is public
            name = " ".join(w for w in name.split() if not w.isdigit())
        hand = s.hands[s.current]
        if self.meld_base <= action < self.single_base:
            combo = self.meld_positions[action - self.meld_base]
            if combo[-1] >= len(hand):
                return name
            orders = [hand[p] for p in combo]
            kind = meld_kind(orders, self.rules.runs_same_suit)
            cards = format_cards(ORDER_TO_CARD[o] for o in orders)
            if kind == NO_MELD:
                return f"{name}: {cards} (not a meld)"
            gain = self.rules.points_set if kind == SET else self.rules.points_run
            return f"{name}: {'set' if kind == SET else 'run'} {cards} (+{gain})"
        if self.single_base <= action < self.ditch_all:
            if action < self.ditch_base:
                pos = (action - self.single_base) // self.single_targets
            else:
                pos = action - self.ditch_base
            if pos >= len(hand):
                return name
            o = hand[pos]
            card = format_card(ORDER_TO_CARD[o])
            if action < self.ditch_base:
                return f"{name}: {card} (+{self.single_points[o]})"
            return f"{name}: {card}"
        if action == self.ditch_all and hand:
            return f"{name}: {format_cards(ORDER_TO_CARD[o] for o in hand)}"
        if action == self.end_turn and s.phase == Phase.PLAY:
            return f"{name} (pass)"
        return name

    def fits_text(self, s: DitchState) -> str:
        """Ranks (and suits) a single fits now: ``"sets 9 | below runs 3 | above runs 7"``."""
        parts = []
        rank = [c.replace("T", "10") for c in GAME_RANK_CHARS]  # a rank alone: "10", not "T"
        sets = [rank[r] for r in range(NUM_RANKS) if s.set_count[r]]
        if sets:
            parts.append("sets " + " ".join(sets))
        for label, counts in (("below runs", s.below), ("above runs", s.above)):
            fit = [o for o in range(NUM_CARDS) if counts[o]]
            if not fit:
                continue
            if self.rules.runs_same_suit:
                parts.append(label + " " + format_cards(ORDER_TO_CARD[o] for o in fit))
            else:
                parts.append(label + " " + " ".join(rank[o >> 2] for o in fit[::4]))
        return " | ".join(parts) or "nothing"

    # -------------------------------------------------------------- info
    def hand_info(self, s: DitchState, seat: int) -> dict[str, Any]:
        held = s.hand_cards(seat)
        return {
            "earned": int(s.earned[seat]),
            "penalty": int(self.penalty(s, seat)),
            "cards_left": format_cards(held).split(),
            "melds": [m.text() for m in s.melds if m.owner == seat],
            "singles": format_cards(s.singles[seat]).split(),
            "end_reason": s.end_reason,
            "ended_by": None if s.ended_by is None else f"player_{s.ended_by}",
        }

    # ------------------------------------------------------------ render
    def status_text(self, s: DitchState) -> str:
        """Who is to do what, or how the hand ended."""
        if s.over:
            by = f" by player_{s.ended_by}" if s.ended_by is not None else ""
            return f"hand over ({str(s.end_reason).replace('_', ' ')}{by})"
        status = f"player_{s.current} to {Phase(s.phase).name.lower()}"
        return status + (f" (drew {s.drawn})" if s.phase != Phase.DRAW else "")

    def render(self, s: DitchState, view: int | None, totals: np.ndarray) -> str:
        n = self.num_players
        status = self.status_text(s)
        lines = [
            f"Ditch Rummy | dealer player_{s.dealer} | turn {s.turn} | {status}",
            f"draw pile: {card_count(s.pile_size)} | discard pile: "
            + (format_cards(s.discard) or "-")
            + f" | idle turns: {s.idle}",
            f"singles fit: {self.fits_text(s)}",
        ]
        for seat in range(n):
            team = f" (team {'AB'[seat % 2]})" if self.rules.teams else ""
            if view is None or view == seat or s.over:
                held = " ".join(
                    f"[{i}]{format_card(ORDER_TO_CARD[o])}" for i, o in enumerate(s.hands[seat])
                )
            else:
                held = card_count(len(s.hands[seat]))
            melds = "; ".join(m.text() for m in s.melds if m.owner == seat) or "-"
            singles = format_cards(s.singles[seat]) or "-"
            score = f"earned {s.earned[seat]}"
            if s.over:
                score += f", hand points {s.points[seat]:+g}"
            lines.append(
                f"player_{seat}{team}: hand {held or '-'} | melds {melds} | singles {singles} "
                f"| {score}"
            )
        if not s.over and (view is None or view == s.current):
            legal = np.flatnonzero(self.legal_mask(s))
            lines.append("legal: " + ", ".join(self.describe_action(s, a) for a in legal))
        line = self.scores_line(totals, label="match")
        if line is not None:
            lines.append(line)
        return "\n".join(lines)

    def table_view(self, s: DitchState, view: int | None, totals: np.ndarray) -> dict[str, Any]:
        """The table as data (see :meth:`Game.table_view`); a hand lists its cards in position
        order (``draw``/``ditch`` actions count positions)."""
        status = self.status_text(s)
        frame = self._view_frame(s, status, totals, "Ditch Rummy")
        frame["piles"] = [
            {"name": "draw pile", "count": int(s.pile_size), "cards": None},
            {
                "name": "discard pile",
                "count": len(s.discard),
                "cards": [CARD_NAMES[c] for c in s.discard],
            },
        ]
        frame["notes"] = [f"singles fit: {self.fits_text(s)}", f"idle turns: {s.idle}"]
        for seat in range(self.num_players):
            shown = view is None or view == seat or s.over
            notes = [f"team {'AB'[seat % 2]}"] if self.rules.teams else []
            notes.append(f"earned {s.earned[seat]}")
            frame["seats"].append(
                {
                    "seat": seat,
                    "name": f"player_{seat}",
                    "count": len(s.hands[seat]),
                    "hand": s.hand_cards_named(seat) if shown else None,
                    "known": [],
                    "melds": [
                        [CARD_NAMES[c] for c in m.ordered_cards()]
                        for m in s.melds
                        if m.owner == seat
                    ],
                    "singles": [CARD_NAMES[c] for c in s.singles[seat]],
                    "notes": notes,
                    "points": float(s.points[seat]) if s.over else None,
                }
            )
        return frame

    # ---------------------------------------------------------- checking
    def card_locations(self, s: DitchState) -> np.ndarray:
        """How many places hold each card (hands, draw pile, discards, melds, singles)."""
        cards = [ORDER_TO_CARD[o] for hand in s.hands for o in hand]
        cards += [ORDER_TO_CARD[o] for o in s.pile[s.pile_pos :]]
        cards += s.discard
        cards += [c for m in s.melds for c in m.cards]
        cards += [c for seat_singles in s.singles for c in seat_singles]
        return np.bincount(np.asarray(cards, dtype=np.int64), minlength=NUM_CARDS)
