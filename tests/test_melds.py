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

KNOCK_MELDS = [frozenset(m) for m in knock_solver().all_melds()]


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


def test_compiled_search_on_many_game_hands():
    """10- and 11-card hands as Knock Rummy deals them: identical results on 20,000 hands."""
    compiled, pure = _solver_pair()
    rng = np.random.default_rng(11)
    for i in range(20000):
        hand = to_mask(rng.choice(52, size=10 + i % 2, replace=False))
        assert compiled.solve_mask(hand) == pure.solve_mask(hand), mask_cards(hand)


def test_compiled_search_rejects_bad_masks():
    solver, _ = _solver_pair()
    with pytest.raises(ValueError, match="52-bit"):
        solver.solve_mask(1 << 52)
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
