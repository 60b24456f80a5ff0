"""Melds: the meld tables of every variant, meld validity and the optimal-deadwood solver.

A *set* is cards of one rank in different suits; a *run* is consecutive ranks of one suit (of any
suits in Ditch Rummy). :class:`MeldRules` holds what a variant counts as a meld (shortest and
longest run, set sizes, where the ace sits, whether a run keeps to one suit) and
:func:`meld_table` builds that variant's :class:`MeldTable` from it, once per parameters: the
Knock Rummy solver, the 500 Rum tables (``envs/rummy500/tables.py``) and its heuristics' planner,
and the Ditch Rummy meld kinds all read their melds from it. Where the ace sits in a run:

==========  ==========================================  ===========
``ace``     runs allowed                                used by
==========  ==========================================  ===========
``"low"``   A-2-3 ... ; never Q-K-A or K-A-2             Knock Rummy
``"high"``  ... Q-K-A ; never A-2-3 or K-A-2             Ditch Rummy
``"both"``  A-2-3 or Q-K-A, never both ends, no K-A-2    500 Rum
==========  ==========================================  ===========

Hands are handled internally as 52-bit Python ints (bit ``c`` = card id ``c``), which keeps the
search free of numpy overhead: candidate runs come from a per-suit lookup of the 13-bit suit
pattern, candidate sets from a per-rank lookup of the 4-bit suit pattern, and the exact search
branches on the lowest card that any candidate meld could cover (it is either deadwood or in one
of the melds containing it), memoised on the cards still available.

``optimal_deadwood(cards)`` is the Knock Rummy (aces low, A=1, J/Q/K=10) entry point.

The search also exists compiled (``envs/_native.c``, built by ``pip install``). It follows the
Python search step for step, so both return the same deadwood and the same melds, ties included;
:meth:`MeldSolver.solve_mask` uses it when it was built, unless ``RUMMYZOO_PURE_PYTHON=1`` is set
or the solver is built with ``kernels=PURE`` (see :mod:`rummyzoo.envs.native`).
``MeldSolver.backend`` says which one a solver uses.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations, product
from typing import Any, NamedTuple

import numpy as np

from rummyzoo.envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, PIP_VALUES, mask_cards, to_mask
from rummyzoo.envs.native import PURE, load_kernels, resolve_kernels

SUIT_BITS = (1 << NUM_RANKS) - 1
ACE_MODES = ("low", "high", "both")


# ------------------------------------------------------------------ the meld table builder
@dataclass(frozen=True)
class MeldRules:
    """What a variant counts as a meld: the parameters of its :class:`MeldTable`.

    :param ace: where an ace may sit in a run: ``"low"``, ``"high"`` or ``"both"`` (either end,
        never round the corner), see the module doc.
    :param min_run: shortest run.
    :param max_run: longest run (None: as long as the suit allows).
    :param set_sizes: allowed set sizes (cards of one rank, each of another suit).
    :param mixed_suit_runs: a run's cards may be of any suits (Ditch Rummy's default rule);
        otherwise a run keeps to one suit.

    The number of decks changes no table: a meld never holds two copies of a card (a set's cards
    are of different suits, a run's of different ranks), so two-deck 500 Rum reads the same
    table and counts copies in its hands.
    """

    ace: str = "low"
    min_run: int = 3
    max_run: int | None = None
    set_sizes: tuple[int, ...] = (3, 4)
    mixed_suit_runs: bool = False

    def __post_init__(self) -> None:
        if self.ace not in ACE_MODES:
            raise ValueError(f"ace must be one of {ACE_MODES}, got {self.ace!r}")
        if self.min_run < 1 or (self.max_run is not None and self.max_run < self.min_run):
            raise ValueError(f"need 1 <= min_run <= max_run, got {self.min_run}, {self.max_run}")
        sizes = tuple(self.set_sizes)
        if sizes != tuple(sorted(set(sizes))) or not all(1 <= k <= NUM_SUITS for k in sizes):
            raise ValueError(f"set_sizes must be increasing sizes 1-4, got {self.set_sizes!r}")
        object.__setattr__(self, "set_sizes", sizes)


#: Knock Rummy: runs of 3+ with the ace low, sets of 3 or 4.
KNOCK_MELDS = MeldRules()
#: 500 Rum's meld actions: three-card runs (ace low or high, not both) and three-card sets; longer
#: melds grow by lay-offs.
RUMMY500_MELDS = MeldRules(ace="both", max_run=3, set_sizes=(3,))
#: Everything 500 Rum lets a hand put down at once: runs of 3+ and sets of 3 or 4.
RUMMY500_PLAYS = MeldRules(ace="both")


def ditch_melds(runs_same_suit: bool) -> MeldRules:
    """Ditch Rummy: two- or three-card runs (aces high) and sets, runs of any suits unless
    ``runs_same_suit``."""
    return MeldRules(
        ace="high", min_run=2, max_run=3, set_sizes=(2, 3), mixed_suit_runs=not runs_same_suit
    )


class Meld(NamedTuple):
    """One entry of a meld table."""

    cards: tuple[int, ...]  #: card ids (a run from its low end, a set by suit)
    is_run: bool
    positions: tuple[int, ...]  #: run positions along the suit (runs) or suits (sets)
    mask: int  #: the cards as a 52-bit mask


class MeldTable:
    """Every meld under one :class:`MeldRules`, and the look-ups the variants search with.

    Order (the order of :attr:`melds`, of :meth:`suit_runs` and of the set look-ups): runs suit by
    suit, each suit by lowest position and then by length (of any suits: by lowest position, by
    length, then by the suits in :func:`itertools.product` order), then sets rank by rank, by
    size and then by suits in :func:`itertools.combinations` order.

    ``positions[p]`` is the rank index at run position ``p`` along a suit: 13 positions, A first
    (``"low"``) or A last (``"high"``), or 14 with the ace at both ends (``"both"``).
    """

    def __init__(self, rules: MeldRules) -> None:
        self.rules = rules
        if rules.ace == "low":
            positions = list(range(NUM_RANKS))
        elif rules.ace == "high":
            positions = [*range(1, NUM_RANKS), 0]
        else:
            positions = [*range(NUM_RANKS), 0]
        self.positions: tuple[int, ...] = tuple(positions)
        self._max_run = len(positions) if rules.max_run is None else rules.max_run
        self._suit_runs: dict[int, tuple[tuple[int, int, int], ...]] = {}
        self._run_masks: dict[int, tuple[int, ...]] = {}
        #: ``set_suits[rank][pattern]``: the suits of every set of ``rank`` inside a 4-bit suit
        #: pattern; ``set_masks`` the same sets as 52-bit masks.
        self.set_suits: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
            tuple(
                tuple(
                    combo
                    for size in rules.set_sizes
                    for combo in combinations(
                        [s for s in range(NUM_SUITS) if pattern >> s & 1], size
                    )
                )
                for pattern in range(1 << NUM_SUITS)
            )
            for _ in range(NUM_RANKS)
        )
        self.set_masks: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
            tuple(
                tuple(sum(1 << (s * NUM_RANKS + rank) for s in combo) for combo in row)
                for row in self.set_suits[rank]
            )
            for rank in range(NUM_RANKS)
        )
        melds: list[Meld] = []
        if rules.mixed_suit_runs:
            for _, start, end in self.suit_runs(SUIT_BITS):
                ranks = positions[start : end + 1]
                for suits in product(range(NUM_SUITS), repeat=len(ranks)):
                    cards = tuple(s * NUM_RANKS + r for s, r in zip(suits, ranks, strict=True))
                    melds.append(Meld(cards, True, tuple(range(start, end + 1)), to_mask(cards)))
        else:
            for suit in range(NUM_SUITS):
                for _, start, end in self.suit_runs(SUIT_BITS):
                    cards = tuple(suit * NUM_RANKS + positions[p] for p in range(start, end + 1))
                    melds.append(Meld(cards, True, tuple(range(start, end + 1)), to_mask(cards)))
        full = (1 << NUM_SUITS) - 1
        for rank in range(NUM_RANKS):
            for combo in self.set_suits[rank][full]:
                cards = tuple(s * NUM_RANKS + rank for s in combo)
                melds.append(Meld(cards, False, combo, to_mask(cards)))
        #: Every meld of a one-deck pack, in the table's order.
        self.melds: tuple[Meld, ...] = tuple(melds)
        #: Index in :attr:`melds` by the meld's set of cards.
        self.index: dict[frozenset[int], int] = {frozenset(m.cards): i for i, m in enumerate(melds)}

    def suit_runs(self, pattern: int) -> tuple[tuple[int, int, int], ...]:
        """``(rank mask, first position, last position)`` of every one-suit run inside a suit's
        13-bit rank pattern (memoised by pattern)."""
        found = self._suit_runs.get(pattern)
        if found is not None:
            return found
        positions = self.positions
        runs = []
        for start in range(len(positions)):
            mask = 0
            for end in range(start, min(len(positions), start + self._max_run)):
                bit = 1 << positions[end]
                if not pattern & bit or mask & bit:
                    break
                mask |= bit
                if end - start + 1 >= self.rules.min_run:
                    runs.append((mask, start, end))
        found = self._suit_runs[pattern] = tuple(runs)
        return found

    def run_masks(self, pattern: int) -> tuple[int, ...]:
        """The rank masks of :meth:`suit_runs` alone (memoised by pattern)."""
        found = self._run_masks.get(pattern)
        if found is None:
            found = self._run_masks[pattern] = tuple(r[0] for r in self.suit_runs(pattern))
        return found

    def melds_in(self, hand: int) -> list[int]:
        """Indices in :attr:`melds` of every meld whose cards are all in the 52-bit ``hand``."""
        return [i for i, m in enumerate(self.melds) if not m.mask & ~hand]


@cache
def meld_table(rules: MeldRules) -> MeldTable:
    """The :class:`MeldTable` of ``rules``, built once and shared."""
    return MeldTable(rules)


class MeldSolver:
    """Meld table and exact optimal-deadwood search for one ranking and value table.

    :param ace: where an ace may sit in a run: ``"low"``, ``"high"`` or ``"both"`` (see module doc).
    :param rank_values: deadwood value of each rank index (0 = Ace ... 12 = King).
    :param min_run: shortest run (3 in every variant that uses this solver).
    :param set_sizes: allowed set sizes (3 and 4).
    :param max_run: longest run (None: no limit).
    :param kernels: the compiled kernels to search with: None (the default) for
        :func:`~rummyzoo.envs.native.compiled_kernels`, ``PURE`` (or False) for the Python search,
        or a kernels module (see :func:`~rummyzoo.envs.native.resolve_kernels`).

    The runs and sets come from :func:`meld_table` of the same parameters (``self.table``).
    """

    def __init__(
        self,
        ace: str = "low",
        rank_values: Sequence[int] | None = None,
        min_run: int = 3,
        set_sizes: tuple[int, ...] = (3, 4),
        max_run: int | None = None,
        kernels: Any = None,
    ) -> None:
        self.table = meld_table(MeldRules(ace, min_run, max_run, tuple(set_sizes)))
        values = list(PIP_VALUES[:NUM_RANKS]) if rank_values is None else list(rank_values)
        if len(values) != NUM_RANKS:
            raise ValueError(f"rank_values needs 13 entries (A..K), got {len(values)}")
        self.ace = ace
        self.min_run = min_run
        self.set_sizes = self.table.rules.set_sizes
        self.rank_values = tuple(int(v) for v in values)
        # Value of every 13-bit suit pattern, so a hand's value is four look-ups.
        bits = (np.arange(1 << NUM_RANKS)[:, None] >> np.arange(NUM_RANKS)) & 1
        self._pattern_value = (bits @ np.asarray(self.rank_values)).astype(np.int64).tolist()
        self._runs_in_pattern = self.table.run_masks
        self._suit_run_cache: dict[int, tuple[int, ...]] = {}
        self._sets_of_three = min(self.set_sizes) == 3
        self._set_table = self.table.set_masks
        self._memo: dict[int, tuple[int, tuple[int, ...]]] = {}
        # Best (covered value, runs) of each 13-bit suit pattern: without a set the problem
        # splits into the four suits, so most hands are solved by four look-ups.
        self._suit_best_cache: dict[int, tuple[int, tuple[int, ...]]] = {}
        self._set_min = min(self.set_sizes) if self.set_sizes else 5
        #: ``"compiled"`` or ``"python"``: which search :meth:`solve_mask` runs.
        self.backend = "python"
        #: The compiled search (a ``Solver`` of the kernels) where :attr:`backend` is compiled.
        self.compiled_solver: Any = None
        core = resolve_kernels(kernels)
        if core is not None and min_run == 3 and max_run is None and self.set_sizes == (3, 4):
            # The compiled search takes the same tables; it shadows the Python methods.
            compiled = self.compiled_solver = core.Solver(
                list(self.table.positions), self.rank_values
            )
            self.solve_mask = compiled.solve
            self.deadwood_after_discards = compiled.deadwood_after_discards
            self.backend = "compiled"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and deep-copied) as its parameters and search (a compiled search cannot be
        pickled): the copy is built afresh, its memo empty."""
        rules = self.table.rules
        key = (self.ace, self.rank_values, rules.min_run, rules.set_sizes, rules.max_run)
        return (_rebuilt_solver, (*key, self.backend == "compiled"))

    # ----------------------------------------------------------------- tables
    def all_melds(self) -> list[list[int]]:
        """The full meld table (every set and run of a 52-card deck) as lists of card ids."""
        full = (1 << NUM_CARDS) - 1
        return [mask_cards(m) for m in self.candidate_melds(full)]

    # --------------------------------------------------------------- queries
    def hand_value(self, hand: int) -> int:
        """Sum of the deadwood values of the cards in a 52-bit hand mask."""
        pv = self._pattern_value
        return (
            pv[hand & SUIT_BITS]
            + pv[(hand >> 13) & SUIT_BITS]
            + pv[(hand >> 26) & SUIT_BITS]
            + pv[(hand >> 39) & SUIT_BITS]
        )

    def _suit_runs(self, key: int) -> tuple[int, ...]:
        """Runs (52-bit masks) in one suit; ``key`` = suit << 13 | the suit's 13-bit pattern."""
        suit, pattern = key >> NUM_RANKS, key & SUIT_BITS
        runs = tuple(run << (NUM_RANKS * suit) for run in self._runs_in_pattern(pattern))
        self._suit_run_cache[key] = runs
        return runs

    def candidate_melds(self, hand: int) -> list[int]:
        """Every meld (52-bit mask) whose cards are all in ``hand``."""
        cache = self._suit_run_cache
        a = hand & SUIT_BITS
        b = (hand >> 13) & SUIT_BITS
        c = (hand >> 26) & SUIT_BITS
        d = (hand >> 39) & SUIT_BITS
        out: list[int] = []
        for key in (a, b | 0x2000, c | 0x4000, d | 0x6000):
            runs = cache.get(key)
            if runs is None:
                runs = self._suit_runs(key)
            if runs:
                out.extend(runs)
        if self._sets_of_three:
            ranks = (a & b & (c | d)) | (c & d & (a | b))
        else:  # general fallback, not used by the shipped variants
            ranks = SUIT_BITS
        while ranks:
            low = ranks & -ranks
            rank = low.bit_length() - 1
            ranks ^= low
            pattern = (
                (a >> rank & 1) | (b >> rank & 1) << 1 | (c >> rank & 1) << 2 | (d >> rank & 1) << 3
            )
            out.extend(self._set_table[rank][pattern])
        return out

    def is_meld(self, cards: Iterable[int]) -> bool:
        """Whether the cards form one valid set or run under this solver's ace mode."""
        cards = list(cards)
        mask = to_mask(cards)
        if len(cards) != mask.bit_count():
            return False
        return mask in self.candidate_melds(mask)

    def _suit_best(self, pattern: int) -> tuple[int, tuple[int, ...]]:
        """Best (covered value, runs as 13-bit masks) using runs of one suit pattern only."""
        found = self._suit_best_cache.get(pattern)
        if found is not None:
            return found
        runs = self._runs_in_pattern(pattern)
        if not runs:
            found = (0, ())
        else:
            union = 0
            for r in runs:
                union |= r
            card = union & -union
            found = self._suit_best(pattern & ~card)  # the lowest coverable card stays loose
            pv = self._pattern_value
            for r in runs:
                if r & card:
                    val, chosen = self._suit_best(pattern & ~r)
                    val += pv[r]
                    if val > found[0]:
                        found = (val, (r, *chosen))
        self._suit_best_cache[pattern] = found
        return found

    def _set_ranks(self, a: int, b: int, c: int, d: int) -> int | None:
        """Ranks held in enough suits to form a set (suit patterns a..d), as a 13-bit mask;
        None when the set sizes are not ones this shortcut knows."""
        if self._set_min == 3:
            return (a & b & (c | d)) | (c & d & (a | b))
        if self._set_min == 4:
            return a & b & c & d
        return 0 if self._set_min > 4 else None

    def _runs_only(self, hand: int) -> tuple[int, list[int]]:
        """(covered value, runs) of the best melding of ``hand`` by runs alone: each suit is
        solved on its own (memoised by suit pattern)."""
        cache = self._suit_best_cache
        covered = 0
        chosen: list[int] = []
        for shift in (0, 13, 26, 39):
            pattern = hand >> shift & SUIT_BITS
            if pattern:
                best = cache.get(pattern)
                if best is None:
                    best = self._suit_best(pattern)
                if best[0]:
                    covered += best[0]
                    for r in best[1]:
                        chosen.append(r << shift)
        return covered, chosen

    def solve_mask(self, hand: int) -> tuple[int, tuple[int, ...]]:
        """Optimal deadwood of a 52-bit hand: ``(deadwood, meld masks)``; exact.

        This is the Python search; an instance with ``backend == "compiled"`` answers the same
        call from the compiled one (``MeldSolver.solve_mask(solver, hand)`` still runs this).
        """
        a = hand & SUIT_BITS
        b = (hand >> 13) & SUIT_BITS
        c = (hand >> 26) & SUIT_BITS
        d = (hand >> 39) & SUIT_BITS
        ranks = self._set_ranks(a, b, c, d)
        if ranks is not None and not ranks & (ranks - 1):
            # At most one rank can form a set: try each set of it (or none), runs elsewhere.
            total = self.hand_value(hand)
            covered, chosen = self._runs_only(hand)
            if ranks:
                rank = ranks.bit_length() - 1
                pattern = (a >> rank & 1) | (b >> rank & 1) << 1 | (c >> rank & 1) << 2
                pattern |= (d >> rank & 1) << 3
                value = self.rank_values[rank]
                for meld in self._set_table[rank][pattern]:
                    rest_covered, runs = self._runs_only(hand & ~meld)
                    rest_covered += value * meld.bit_count()
                    if rest_covered > covered:
                        covered, chosen = rest_covered, [meld, *runs]
            return total - covered, tuple(chosen)
        cands = self.candidate_melds(hand)
        total = self.hand_value(hand)
        if not cands:
            return total, ()
        union = 0
        size = 0
        for m in cands:
            union |= m
            size += m.bit_count()
        if size == union.bit_count():  # pairwise disjoint: take them all
            return total - self.hand_value(union), tuple(cands)
        self._memo = {}
        covered, chosen = self._search(cands, union)
        return total - covered, chosen

    def _search(self, cands: list[int], avail: int) -> tuple[int, tuple[int, ...]]:
        """Best covered value using melds from ``cands`` (all within ``avail``)."""
        if not cands:
            return 0, ()
        memo = self._memo
        hit = memo.get(avail)
        if hit is not None:
            return hit
        union = 0
        for m in cands:
            union |= m
        card = union & -union
        # Either `card` stays deadwood ...
        best_val, best = self._search([m for m in cands if not m & card], avail & ~card)
        # ... or it is covered by one of the melds that contain it.
        for m in cands:
            if m & card:
                val, chosen = self._search([x for x in cands if not x & m], avail & ~m)
                val += self.hand_value(m)
                if val > best_val:
                    best_val, best = val, (m, *chosen)
        memo[avail] = (best_val, best)
        return best_val, best

    def deadwood_after_discards(self, hand: int) -> dict[int, int]:
        """Optimal deadwood of ``hand`` without each of its cards: ``{card: deadwood}``.

        A card outside every candidate meld leaves the optimum unchanged but for its own value,
        so only cards that some meld uses need a search of their own.
        """
        cands = self.candidate_melds(hand)
        union = 0
        for m in cands:
            union |= m
        full = self.solve_mask(hand)[0] if cands else self.hand_value(hand)
        values = self.rank_values
        out = {}
        rest = hand & ~union
        while rest:
            low = rest & -rest
            rest ^= low
            card = low.bit_length() - 1
            out[card] = full - values[card % NUM_RANKS]
        melded = hand & union
        while melded:
            low = melded & -melded
            melded ^= low
            out[low.bit_length() - 1] = self.solve_mask(hand & ~low)[0]
        return out

    def solve(self, cards: Iterable[int]) -> tuple[int, list[list[int]]]:
        """Optimal deadwood of a one-deck hand given as card ids: ``(deadwood, melds)``.

        :raises TypeError: ``cards`` that are not card ids (a card string: see
            :func:`~rummyzoo.envs.cards.parse_cards`).
        :raises ValueError: an id outside 0..51, or the same card twice.
        """
        if isinstance(cards, (str, bytes)):
            raise TypeError(
                f"cards must be card ids (ints 0..51), got the string {cards!r}: "
                "parse_cards() reads card strings"
            )
        try:
            cards = list(cards)
        except TypeError:
            raise TypeError(f"cards must be card ids (ints 0..51), got {cards!r:.60}") from None
        for c in cards:
            if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)):
                raise TypeError(f"a card id is an int 0..51, got {c!r:.60}")
            if not 0 <= c < NUM_CARDS:
                raise ValueError(f"a card id is an int 0..51, got {c}")
        mask = to_mask(cards)
        if mask.bit_count() != len(cards):
            raise ValueError("a one-deck hand cannot hold the same card twice")
        deadwood, chosen = self.solve_mask(mask)
        return deadwood, [mask_cards(m) for m in chosen]


def solver(
    ace: str = "low", rank_values: tuple[int, ...] | None = None, kernels: Any = None
) -> MeldSolver:
    """A shared solver per (ace mode, value table, kernels), built on first use; ``kernels`` as
    in :class:`MeldSolver` (None: the compiled kernels where built)."""
    core = resolve_kernels(kernels)
    return _shared_solver(ace, rank_values, PURE if core is None else core)


@cache
def _shared_solver(ace: str, rank_values: tuple[int, ...] | None, kernels: Any) -> MeldSolver:
    return MeldSolver(ace=ace, rank_values=rank_values, kernels=kernels)


def _rebuilt_solver(
    ace: str,
    rank_values: tuple[int, ...],
    min_run: int,
    set_sizes: tuple[int, ...],
    max_run: int | None,
    compiled: bool,
) -> MeldSolver:
    """A solver as :meth:`MeldSolver.__reduce__` describes it."""
    kernels = (load_kernels() if compiled else None) or PURE
    return MeldSolver(ace, rank_values, min_run, set_sizes, max_run, kernels=kernels)


KNOCK_SOLVER_KEY = ("low", None)


def knock_solver(kernels: Any = None) -> MeldSolver:
    """The aces-low solver with values A=1, 2-10 pip, J/Q/K=10 (Knock Rummy)."""
    return solver(*KNOCK_SOLVER_KEY, kernels=kernels)


def optimal_deadwood(cards: Iterable[int]) -> tuple[int, list[list[int]]]:
    """Knock Rummy optimal deadwood of a hand of card ids: ``(deadwood_points, melds)``.

    Minimum total value of unmatched cards over all partitions of the hand into
    non-overlapping sets of 3-4 and runs of 3+ (aces low), with the melds chosen.

    :raises ValueError: more than :data:`MAX_HAND_CARDS` cards (the exact search grows
        exponentially with them: a whole deck would take hours; a hand of the games holds at
        most 26).
    """
    if not isinstance(cards, (str, bytes)):  # (those, and what is no iterable, the solver names)
        with contextlib.suppress(TypeError):
            cards = list(cards)
    if isinstance(cards, list) and len(cards) > MAX_HAND_CARDS:
        raise ValueError(
            f"optimal_deadwood takes a hand of up to {MAX_HAND_CARDS} cards, got {len(cards)}: "
            "the exact search grows exponentially with the cards"
        )
    return knock_solver().solve(cards)


#: The most cards :func:`optimal_deadwood` takes (32 take well under a second).
MAX_HAND_CARDS = 32


def is_meld(cards: Iterable[int], ace: str = "low") -> bool:
    """Whether ``cards`` form one valid set or run (ace mode as in :class:`MeldSolver`)."""
    return solver(ace).is_meld(cards)
