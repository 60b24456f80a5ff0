from __future__ import annotations

import os
import sys
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummyzoo.envs.cards import PIP_VALUES, mask_cards, parse_cards, to_mask
from rummyzoo.envs.melds import MeldSolver, is_meld, knock_solver, optimal_deadwood
from rummyzoo.envs.native import PURE, load_kernels


def knock_melds_by_definition() -> list[frozenset[int]]:
    """Knock Rummy's melds from the rules, not from the solver: sets of 3 or 4 cards of one
    rank, runs of 3 or more consecutive ranks of one suit, aces low (card id = suit * 13 +
    rank, rank 0 the ace)."""
    melds = []
    for rank in range(13):
        cards = [suit * 13 + rank for suit in range(4)]
        melds += [frozenset(c) for k in (3, 4) for c in combinations(cards, k)]
    for suit in range(4):
        for low in range(13):
            for high in range(low + 2, 13):
                melds.append(frozenset(suit * 13 + r for r in range(low, high + 1)))
    return melds


KNOCK_MELDS = knock_melds_by_definition()


def test_the_solvers_meld_table_is_the_rules_melds():
    assert sorted(map(sorted, knock_solver().all_melds())) == sorted(map(sorted, KNOCK_MELDS))


def brute_force_deadwood(hand: list[int], melds=KNOCK_MELDS) -> int:
    """Reference: try every set of pairwise-disjoint melds inside the hand."""
    inside = [m for m in melds if m <= set(hand)]
    total = int(sum(PIP_VALUES[c] for c in hand))
    best = total

    def walk(start: int, used: frozenset, covered: int) -> None:
        nonlocal best
        best = min(best, total - covered)
        for i in range(start, len(inside)):
            m = inside[i]
            if not m & used:
                walk(i + 1, used | m, covered + int(sum(PIP_VALUES[c] for c in m)))

    walk(0, frozenset(), 0)
    return best


def test_meld_table_size_aces_low():
    # 13 ranks x (4 sets of 3 + 1 set of 4) + 4 suits x 66 runs (lengths 3..13 in 13 ranks).
    assert len(KNOCK_MELDS) == 13 * 5 + 4 * 66
    assert len(set(KNOCK_MELDS)) == len(KNOCK_MELDS)


@pytest.mark.parametrize(
    "cards, valid",
    [
        ("As 2s 3s", True),
        ("Qs Ks As", False),  # aces are low in Knock Rummy
        ("Ks As 2s", False),
        ("7h 7d 7c", True),
        ("7h 7d 7c 7s", True),
        ("7h 7d", False),
        ("4c 5c 6d", False),
        ("9d Td Jd Qd Kd", True),
        ("As 2s 4s", False),
    ],
)
def test_meld_validity_aces_low(cards, valid):
    assert is_meld(parse_cards(cards)) is valid


def test_ace_modes():
    assert is_meld(parse_cards("Qs Ks As"), ace="high")
    assert not is_meld(parse_cards("As 2s 3s"), ace="high")
    assert is_meld(parse_cards("Qs Ks As"), ace="both")
    assert is_meld(parse_cards("As 2s 3s"), ace="both")
    assert not is_meld(parse_cards("Ks As 2s"), ace="both")
    with pytest.raises(ValueError, match="ace must be"):
        MeldSolver(ace="wrap")


@pytest.mark.parametrize(
    "cards, deadwood",
    [
        ("As 2s 3s 4s 4h 4d 4c Kd Qd Jd Th", 10),
        ("As 2s 3s", 0),
        ("Kh Kd", 20),
        # 4h can sit in the run or the set, not both: best uses the set and run 5h-6h-7h.
        ("4h 5h 6h 7h 4c 4d", 0),
        ("3h 4h 5h 5c 5d 2s", 9),  # the set of fives beats the run
        ("Qs Ks As 2c", 23),
        ("", 0),
    ],
)
def test_worked_deadwood(cards, deadwood):
    points, melds = optimal_deadwood(parse_cards(cards))
    assert points == deadwood
    assert points == brute_force_deadwood(parse_cards(cards))
    used = [c for m in melds for c in m]
    assert len(used) == len(set(used))
    assert all(is_meld(m) for m in melds)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=0, max_size=11, unique=True))
def test_solver_matches_brute_force(hand):
    points, melds = optimal_deadwood(hand)
    assert points == brute_force_deadwood(hand)
    used = [c for m in melds for c in m]
    assert len(used) == len(set(used)) and set(used) <= set(hand)
    assert all(is_meld(m) for m in melds)
    assert points == int(sum(PIP_VALUES[c] for c in hand if c not in used))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=3, max_size=11, unique=True), st.integers(0, 3))
def test_solver_dense_single_suit(ranks, suit):
    """Long single-suit hands have many overlapping runs: the search must stay exact."""
    hand = [suit * 13 + r for r in ranks]
    assert optimal_deadwood(hand)[0] == brute_force_deadwood(hand)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 9),
    st.integers(3, 6),
    st.lists(st.integers(0, 51), min_size=0, max_size=11, unique=True),
)
def test_solver_with_sets_and_runs_crossing(low, width, picks):
    """Cards from a few adjacent ranks in every suit: sets and runs compete for the same cards
    (the set-aware shortcuts and the full search must agree with the brute force)."""
    ranks = range(low, min(13, low + width))
    pool = [s * 13 + r for s in range(4) for r in ranks]
    hand = sorted({pool[p % len(pool)] for p in picks})
    points, melds = optimal_deadwood(hand)
    assert points == brute_force_deadwood(hand)
    used = [c for m in melds for c in m]
    assert len(used) == len(set(used)) and all(is_meld(m) for m in melds)
    assert points == int(sum(PIP_VALUES[c] for c in hand if c not in used))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=0, max_size=11, unique=True))
def test_both_ace_solver_matches_brute_force(hand):
    values = [15, *range(2, 10), 10, 10, 10, 10]
    solver = MeldSolver(ace="both", rank_values=values)
    melds = [frozenset(m) for m in solver.all_melds()]
    inside = [m for m in melds if m <= set(hand)]
    best = float("inf")
    total = sum(values[c % 13] for c in hand)
    for k in range(0, 5):
        for combo in combinations(inside, k):
            cards = [c for m in combo for c in m]
            if len(cards) == len(set(cards)):
                best = min(best, total - sum(values[c % 13] for c in cards))
    assert solver.solve(hand)[0] == best


def test_duplicate_card_rejected():
    with pytest.raises(ValueError, match="twice"):
        optimal_deadwood(parse_cards("As As 2s"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=1, max_size=11, unique=True))
def test_deadwood_after_each_discard(hand):
    from rummyzoo.envs.cards import to_mask

    after = knock_solver().deadwood_after_discards(to_mask(hand))
    assert sorted(after) == sorted(hand)
    for card in hand:
        assert after[card] == brute_force_deadwood([c for c in hand if c != card])


# -- the compiled search ----------------------------------------------------------------------
# A solver built with the compiled kernels must give exactly what one built with ``kernels=PURE``
# gives, melds and their order included; both are built side by side, whatever
# RUMMYZOO_PURE_PYTHON says. CI sets RUMMYZOO_REQUIRE_COMPILED=1 so a failed build fails there
# instead of skipping.

_REQUIRE_COMPILED = os.environ.get("RUMMYZOO_REQUIRE_COMPILED", "") not in ("", "0")
_KERNELS = load_kernels()
_BOTH_VALUES = [15, *range(2, 10), 10, 10, 10, 10]
_ACE_OPTIONS = {
    "low": {},
    "high": {"ace": "high"},
    "both": {"ace": "both", "rank_values": _BOTH_VALUES},
}


def _solver_pair(**options) -> tuple[MeldSolver, MeldSolver]:
    """(compiled, pure) solvers of the same tables; skips (or fails in CI) without the build."""
    if _KERNELS is None:
        if _REQUIRE_COMPILED:
            pytest.fail("the compiled deadwood search was not built (envs/_native.c)")
        pytest.skip("the compiled deadwood search is not built here")
    compiled = MeldSolver(**options, kernels=_KERNELS)
    pure = MeldSolver(**options, kernels=PURE)
    assert (compiled.backend, pure.backend) == ("compiled", "python")
    return compiled, pure


_ACE_SOLVERS = {ace: None for ace in _ACE_OPTIONS}  # built on first use


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(sorted(_ACE_OPTIONS)),
    st.integers(0, 12),
    st.integers(3, 13),
    st.lists(st.integers(0, 51), min_size=0, max_size=20, unique=True),
    st.booleans(),
)
def test_compiled_search_matches_python(ace, low, width, picks, dense):
    """Random hands up to 20 cards, and dense ones where sets and runs share cards."""
    if _ACE_SOLVERS[ace] is None:
        _ACE_SOLVERS[ace] = _solver_pair(**_ACE_OPTIONS[ace])
    compiled, pure = _ACE_SOLVERS[ace]
    if dense:
        pool = [s * 13 + r for s in range(4) for r in range(low, min(13, low + width))]
        picks = [pool[p % len(pool)] for p in picks]
    hand = to_mask(set(picks))
    assert compiled.solve_mask(hand) == pure.solve_mask(hand)
    # the deadwood left by each discard, listed in the same order
    after = compiled.deadwood_after_discards(hand)
    assert list(after.items()) == list(pure.deadwood_after_discards(hand).items())


def test_compiled_search_on_many_game_hands():
    """10- and 11-card hands as Knock Rummy deals them: identical results on 20,000 hands."""
    compiled, pure = _solver_pair()
    rng = np.random.default_rng(11)
    for i in range(20000):
        hand = to_mask(rng.choice(52, size=10 + i % 2, replace=False))
        assert compiled.solve_mask(hand) == pure.solve_mask(hand), mask_cards(hand)
        if i % 2:  # a hand about to discard
            after = compiled.deadwood_after_discards(hand)
            assert list(after.items()) == list(pure.deadwood_after_discards(hand).items())


def test_compiled_search_rejects_bad_masks():
    solver, _ = _solver_pair()
    with pytest.raises(ValueError, match="52-bit"):
        solver.solve_mask(1 << 52)
    with pytest.raises(ValueError, match="52-bit"):
        solver.deadwood_after_discards(1 << 52)
    with pytest.raises(OverflowError):
        solver.solve_mask(-1)
    with pytest.raises(TypeError):
        solver.solve_mask("As 2s 3s")


def test_kernels_parameter():
    """None follows compiled_kernels(), PURE and False mean Python, anything else is refused."""
    from rummyzoo.envs.native import compiled_kernels

    default = "python" if compiled_kernels() is None else "compiled"
    assert MeldSolver().backend == default
    assert MeldSolver(kernels=PURE).backend == MeldSolver(kernels=False).backend == "python"
    assert knock_solver(PURE) is knock_solver(False) is not MeldSolver(kernels=PURE)
    assert knock_solver(PURE).backend == "python"
    if compiled_kernels() is None:
        assert knock_solver() is knock_solver(PURE)
    else:
        assert knock_solver() is knock_solver(compiled_kernels())
    for bad in (True, "compiled", 1):
        with pytest.raises(TypeError, match="kernels must be"):
            MeldSolver(kernels=bad)
    assert repr(PURE) == "PURE"
    import pickle

    assert pickle.loads(pickle.dumps(PURE)) is PURE


def test_pure_python_switch(monkeypatch):
    monkeypatch.setenv("RUMMYZOO_PURE_PYTHON", "1")
    solver = MeldSolver(ace="low")
    assert solver.backend == "python"
    assert solver.solve(parse_cards("As 2s 3s 7h 7d 7c Kd"))[0] == 10


def test_an_outdated_build_is_set_aside(monkeypatch):
    """A compiled module older than the Python code is not used (a warning says how to rebuild)."""
    import types

    import rummyzoo.envs
    from rummyzoo.envs import native

    stale = types.ModuleType("rummyzoo.envs._native")
    stale.__file__ = "_native.so"
    stale.API_VERSION = native.KERNELS_API_VERSION - 1
    monkeypatch.delenv("RUMMYZOO_PURE_PYTHON", raising=False)
    monkeypatch.setitem(sys.modules, "rummyzoo.envs._native", stale)
    monkeypatch.setattr(rummyzoo.envs, "_native", stale, raising=False)
    with pytest.warns(RuntimeWarning, match="out of date"):
        assert native.compiled_kernels() is None
    with pytest.warns(RuntimeWarning, match="out of date"):
        assert MeldSolver(ace="low").backend == "python"


# -- one meld-table builder for every variant ------------------------------------------------
# The variants read their melds from ``meld_table``. The references below are the table code each
# variant ran before (kept as slow references); ``RECORDED`` holds digests of the tables that
# code built, taken when the builder replaced it, so the references cannot drift either.

RECORDED = {
    "knock_runs_low": "c8a325873aa8ee2b",
    "knock_runs_high": "e1869e60e41389bb",
    "knock_runs_both": "de87abdf91429d1d",
    "knock_sets": "db2567e6428aa0cd",
    "knock_all_low": "e72d26819ead59ec",
    "knock_all_high": "7f89f96461d64e73",
    "knock_all_both": "0e00ca9ccd103a0b",
    "r500_melds": "1faecbdc31ab3f15",
    "r500_set_ids": "967c30a9d7bb4cc4",
    "r500_run_at": "478bdecca12c9466",
    "r500_qka_at": "4b0c88d0cfea489b",
    "r500_with": "2193376b7429cc0c",
    "r500_run_ok": "4ffa0a7fbd0a3328",
    "r500_melds_in": "ebcc8a3c4a927d43",
    "r500_meldable": "6f7034f80fe62e87",
    "planner_candidates": "5f2e89cba8d21ed4",
    "ditch_pair_kind_False": "70dd0c9d620462fe",
    "ditch_pair_kind_True": "bdaacfaf2afa7627",
    "ditch_triples_False": "9c9efd7457ba783a",
    "ditch_triples_True": "1ac5beaa74e1e38c",
}


def _digest(obj) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps(obj, separators=(",", ":")).encode()).hexdigest()[:16]


def _reference_positions(ace: str) -> list[int]:
    if ace == "low":
        return list(range(13))
    if ace == "high":
        return [*range(1, 13), 0]
    return [*range(13), 0]


def _reference_runs_in_pattern(ace: str, pattern: int, min_run: int = 3) -> tuple[int, ...]:
    """The Knock solver's run search before the builder."""
    positions = _reference_positions(ace)
    runs = []
    for start in range(len(positions)):
        mask = 0
        for end in range(start, len(positions)):
            bit = 1 << positions[end]
            if not pattern & bit or mask & bit:
                break
            mask |= bit
            if end - start + 1 >= min_run:
                runs.append(mask)
    return tuple(runs)


def _reference_set_table(set_sizes=(3, 4)) -> list[list[tuple[int, ...]]]:
    """The Knock solver's set table before the builder."""
    table = []
    for rank in range(13):
        row = []
        for pattern in range(16):
            suits = [s for s in range(4) if pattern >> s & 1]
            row.append(
                tuple(
                    sum(1 << (s * 13 + rank) for s in combo)
                    for size in set_sizes
                    for combo in combinations(suits, size)
                )
            )
        table.append(row)
    return table


def _random_hands(count: int = 3000) -> tuple[list[int], list[tuple[int, int, int]]]:
    """The hands (and lay-off targets) the recorded digests were taken on."""
    rng = np.random.default_rng(5)
    hands = [
        to_mask(rng.choice(52, size=int(rng.integers(0, 25)), replace=False)) for _ in range(count)
    ]
    fits = [
        tuple(
            to_mask(rng.choice(52, size=int(rng.integers(0, 8)), replace=False)) for _ in range(3)
        )
        for _ in hands
    ]
    return hands, fits


@pytest.mark.parametrize("ace", ["low", "high", "both"])
def test_knock_solver_tables_are_the_builders_and_unchanged(ace):
    from rummyzoo.envs.melds import MeldRules, meld_table

    table = meld_table(MeldRules(ace=ace))
    runs = [table.run_masks(p) for p in range(1 << 13)]
    assert runs == [_reference_runs_in_pattern(ace, p) for p in range(1 << 13)]
    assert _digest([list(r) for r in runs]) == RECORDED[f"knock_runs_{ace}"]
    sets = [list(row) for row in table.set_masks]
    assert sets == _reference_set_table()
    assert _digest([[list(x) for x in row] for row in sets]) == RECORDED["knock_sets"]
    assert list(table.positions) == _reference_positions(ace)
    solver = MeldSolver(ace=ace)
    assert solver.table is table and solver._set_table is table.set_masks
    melds = solver.all_melds()
    assert _digest(melds) == RECORDED[f"knock_all_{ace}"]
    assert melds == [mask_cards(m.mask) for m in table.melds]  # the same order
    assert knock_solver().table is meld_table(MeldRules())


def test_rummy500_tables_are_the_builders_and_unchanged():
    from rummyzoo.envs.melds import RUMMY500_MELDS, meld_table
    from rummyzoo.envs.rummy500 import tables as t

    assert t.TABLE is meld_table(RUMMY500_MELDS)
    # The meld list as it was built before: A-2-3 ... J-Q-K, Q-K-A per suit, then 3-card sets.
    reference = [
        (tuple(s * 13 + p % 13 for p in range(a, a + 3)), True, (a, a + 1, a + 2))
        for s in range(4)
        for a in range(12)
    ] + [
        (tuple(s * 13 + r for s in suits), False, suits)
        for r in range(13)
        for suits in combinations(range(4), 3)
    ]
    assert [(m.cards, m.is_run, m.positions) for m in t.MELDS] == reference
    rows = [
        [list(m.cards), m.is_run, list(m.positions), m.mask, m.suit, m.rank, m.value, m.name]
        for m in t.MELDS
    ]
    assert _digest(rows) == RECORDED["r500_melds"]
    assert {s * 13 + r: s * 12 + r for s in range(4) for r in range(11)} == t.RUN_AT_BIT
    assert {s * 13: s * 12 + 11 for s in range(4)} == t.QKA_AT_BIT
    assert sum(((1 << 11) - 1) << (13 * s) for s in range(4)) == t.RUN_START_BITS
    assert (t.RUNS_PER_SUIT, t.FIRST_SET, t.NUM_MELDS) == (12, 48, 100)
    assert _digest(sorted(t.RUN_AT_BIT.items())) == RECORDED["r500_run_at"]
    assert _digest(sorted(t.QKA_AT_BIT.items())) == RECORDED["r500_qka_at"]
    assert _digest([[list(x) for x in row] for row in t.SET_IDS]) == RECORDED["r500_set_ids"]
    assert _digest([[list(x) for x in row] for row in t.MELDS_WITH]) == RECORDED["r500_with"]
    # The run look-up of ``MELD_TEST`` as it was built before, window by window.
    pats = np.arange(1 << 13)
    for rank in range(13):
        ok = np.zeros(len(pats), dtype=bool)
        for pos in [rank] + ([13] if rank == 0 else []):
            for start in (pos - 2, pos - 1, pos):
                if start < 0 or start + 2 > 13:
                    continue
                window = [q for q in range(start, start + 3) if q != pos]
                ok |= np.logical_and.reduce([(pats >> (q % 13)) & 1 for q in window]) > 0
        assert t.RUN_OK[rank] == ok.astype(np.uint8).tobytes(), rank
    import hashlib

    run_ok = [hashlib.sha256(b).hexdigest() for b in t.RUN_OK]
    assert _digest(run_ok) == RECORDED["r500_run_ok"]
    # The bit-trick searches agree with the table, and with what they found before.
    hands, _ = _random_hands()
    found = [t.melds_in(h) for h in hands]
    assert [sorted(f) for f in found] == [t.TABLE.melds_in(h) for h in hands]
    assert _digest(found) == RECORDED["r500_melds_in"]
    assert _digest([t.meldable(h) for h in hands]) == RECORDED["r500_meldable"]


def _reference_candidate_melds(present: int) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """The 500 Rum planner's runs (3+, ace low or high) and sets (3-4) before the builder."""
    out = []
    for suit in range(4):
        have = [bool(present >> (suit * 13 + p % 13) & 1) for p in range(14)]
        p = 0
        while p <= 13:
            if not have[p]:
                p += 1
                continue
            q = p
            while q + 1 <= 13 and have[q + 1]:
                q += 1
            for lo in range(p, q - 1):
                for hi in range(lo + 2, q + 1):
                    if lo == 0 and hi == 13:
                        continue
                    pos = tuple(range(lo, hi + 1))
                    out.append((0, tuple(suit * 13 + x % 13 for x in pos), pos))
            p = q + 1
    for rank in range(13):
        suits = [s for s in range(4) if present >> (s * 13 + rank) & 1]
        for k in range(3, len(suits) + 1):
            for combo in combinations(suits, k):
                out.append((1, tuple(s * 13 + rank for s in combo), combo))
    return out


def test_rummy500_planner_melds_are_the_builders_and_unchanged():
    from rummyzoo.agents.rummy500 import OWN_RUN, OWN_SET, PLAYS, Planner
    from rummyzoo.envs.melds import RUMMY500_PLAYS, meld_table

    assert PLAYS is meld_table(RUMMY500_PLAYS) and (OWN_RUN, OWN_SET) == (0, 1)
    hands, fits = _random_hands()
    every = []
    for hand, fit in zip(hands, fits, strict=True):
        plays = [(p.kind, p.cards, p.positions) for p in Planner.candidates(hand, fit)]
        melds = [p for p in plays if p[0] in (OWN_RUN, OWN_SET)]
        assert melds == _reference_candidate_melds(hand)
        every.append([[k, list(c), list(x)] for k, c, x in plays])
    assert _digest(every) == RECORDED["planner_candidates"]


@pytest.mark.parametrize("same_suit", [False, True])
def test_ditch_meld_kinds_are_the_builders_and_unchanged(same_suit):
    from rummyzoo.envs.ditch_rummy.rules import (
        NO_MELD,
        ORDER_TO_CARD,
        RUN,
        SET,
        DitchRummyGame,
        DitchRummyRules,
        meld_kind,
    )
    from rummyzoo.envs.match import MatchOptions
    from rummyzoo.envs.melds import ditch_melds, meld_table

    game = DitchRummyGame(DitchRummyRules(runs_same_suit=same_suit), MatchOptions())
    pairs = game._pair_kind
    assert pairs == [
        [meld_kind((a, b), same_suit) if a < b else NO_MELD for b in range(52)] for a in range(52)
    ]
    assert _digest(pairs) == RECORDED[f"ditch_pair_kind_{same_suit}"]
    # Three cards: the table's three-card melds are exactly what meld_kind calls melds.
    table = meld_table(ditch_melds(same_suit))
    kinds = {m.mask: RUN if m.is_run else SET for m in table.melds}
    triples = list(combinations(range(52), 3))
    by_table = [kinds.get(to_mask(ORDER_TO_CARD[o] for o in c), NO_MELD) for c in triples]
    by_rule = [meld_kind(c, same_suit) for c in triples]
    assert by_table == by_rule
    assert _digest(by_rule) == RECORDED[f"ditch_triples_{same_suit}"]
    assert len(table.melds) == (
        (12 + 11) * 4 + 13 * (6 + 4) if same_suit else 12 * 16 + 11 * 64 + 13 * (6 + 4)
    )


def test_meld_rules_are_checked():
    from rummyzoo.envs.melds import MeldRules

    for bad in (
        {"ace": "wrap"},
        {"min_run": 0},
        {"min_run": 4, "max_run": 3},
        {"set_sizes": (4, 3)},
        {"set_sizes": (3, 5)},
    ):
        with pytest.raises(ValueError):
            MeldRules(**bad)
    assert MeldRules(set_sizes=[3, 4]).set_sizes == (3, 4)


def test_optimal_deadwood_refuses_more_than_a_hand():
    """A whole deck ran for hours (the search is exact); 32 cards take well under a second."""
    points, _ = optimal_deadwood(list(range(32)))
    assert points == 0  # every card of clubs and diamonds, and six hearts: all in runs
    with pytest.raises(ValueError, match=r"up to 32 cards, got 52"):
        optimal_deadwood(list(range(52)))


def test_optimal_deadwood_counts_a_generators_cards_too():
    with pytest.raises(ValueError, match=r"up to 32 cards, got 40"):
        optimal_deadwood(c for c in range(40))
    assert optimal_deadwood(c for c in (0, 1, 2))[0] == 0
