"""Properties only 500 Rum has, over many seeded random games (hypothesis). The properties every
variant shares (API, seeds, hidden cards, conservation, live masks, the compiled kernels) are in
``test_variants.py``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_variants import SETUPS, random_game

from rummyzoo.envs.cards import NUM_CARDS, NUM_RANKS
from rummyzoo.envs.rummy500.tables import (
    CARD_VALUE,
    DIG_BASE,
    DISCARD_BASE,
    LAY_SET_BASE,
    MELD_BASE,
    MELDS,
    meldable,
    pos_card,
    pos_value,
)

SETUP = SETUPS["rummy500"]


def check_bookkeeping(env) -> None:
    """Every incremental record of the state agrees with one recomputed from scratch."""
    game, s = env.game, env.hand_state
    decks = game.num_decks
    assert (game.card_locations(s) == decks).all()  # every card in exactly one place
    n = game.num_players
    planes = game.planes(s).astype(np.int64)
    counts, laid, known = planes[:n], planes[n : 2 * n], planes[2 * n : 3 * n]
    assert list(s.sizes) == counts.sum(axis=1).tolist()
    for seat in range(n):
        assert s.bits[seat] == sum(1 << c for c in np.flatnonzero(counts[seat]))
    assert (known <= counts).all()
    # The discard pile planes: each card's place in the pile (1 at the bottom).
    pile = s.pile
    pile_counts = np.bincount(np.asarray(pile, dtype=np.int64), minlength=NUM_CARDS)
    assert s.pile_bits == sum(1 << c for c in np.flatnonzero(pile_counts))
    assert s.pile_double == sum(1 << c for c in np.flatnonzero(pile_counts == 2))
    top_pos = np.zeros(NUM_CARDS, dtype=np.int64)
    low_pos = np.zeros(NUM_CARDS, dtype=np.int64)
    for index, card in enumerate(pile):
        if top_pos[card]:
            low_pos[card] = top_pos[card]
        top_pos[card] = index + 1
    assert np.array_equal(planes[game._row_pile], top_pos)
    if decks == 2:
        assert np.array_equal(planes[game._row_pile_low], low_pos)
    assert np.flatnonzero(planes[game._row_top]).tolist() == pile[-1:]
    # The table: melds are valid, values add up, lay-off targets are right.
    run_cards = np.zeros(NUM_CARDS, dtype=np.int64)
    table_value = 0
    fit_set = fit_low = fit_high = 0
    for suit, lo, hi, owners in s.runs:
        assert hi - lo >= 2 and not (lo == 0 and hi == 13)
        for p in range(lo, hi + 1):
            run_cards[pos_card(suit, p)] += 1
            table_value += pos_value(p, pos_card(suit, p))
            assert owners[p] >= 0
        if lo >= 1 and not (lo == 1 and hi == 13):
            fit_low |= 1 << pos_card(suit, lo - 1)
        if hi <= 12 and not (hi == 12 and lo == 0):
            fit_high |= 1 << pos_card(suit, hi + 1)
    for rank, suits, owners in s.sets:
        assert 3 <= suits.bit_count() <= 4
        for suit in range(4):
            card = suit * NUM_RANKS + rank
            if suits >> suit & 1:
                table_value += CARD_VALUE[card]
                assert owners[suit] >= 0
            else:
                fit_set |= 1 << card
    assert np.array_equal(planes[game._row_runs], run_cards)
    assert sum(s.table_points) == table_value
    assert s.fits == (fit_set, fit_low, fit_high)
    assert s.fits_any == fit_set | fit_low | fit_high
    for k, fit in enumerate(s.fits):
        assert planes[game._row_fits + k].tolist() == [fit >> c & 1 for c in range(NUM_CARDS)]
    laid_total = laid.sum(axis=0)
    assert laid_total.sum() == run_cards.sum() + sum(x[1].bit_count() for x in s.sets)
    if s.pending >= 0:
        assert counts[s.current][s.pending] > 0
        assert np.flatnonzero(planes[game._row_pending]).tolist() == [s.pending]
    else:
        assert not planes[game._row_pending].any()


@settings(max_examples=60, deadline=None)
@given(SETUP, st.integers(0, 2**31))
def test_bookkeeping_sound(setup, seed):
    """Every incremental record agrees with one recomputed from scratch, at every decision."""
    players, options = setup

    def check(env, obs):
        check_bookkeeping(env)

    env, _ = random_game("rummy500", players, seed, options, seed + 1, check)
    state = env.hand_state
    check_bookkeeping(env)
    if state.over:  # hand points are table value minus the cards left in hand
        for seat in range(players):
            left = sum(CARD_VALUE[c] for c in state.hand_cards(seat))
            assert state.points[seat] == state.table_points[seat] - left


@settings(max_examples=40, deadline=None)
@given(SETUP, st.integers(0, 2**31))
def test_digging_is_legal_exactly_when_the_card_can_be_used(setup, seed):
    """The dig mask against a brute force over the pile: hand + taken cards, table targets."""
    players, options = setup

    def check(env, obs):
        s = env.hand_state
        if s.phase != 0:
            return
        hand = s.bits[s.current]
        fits = s.fits[0] | s.fits[1] | s.fits[2]
        mask = obs["action_mask"]
        seen: dict[int, int] = {}
        legal = 0
        taken = hand
        for index in range(len(s.pile) - 1, -1, -1):
            card = s.pile[index]
            taken |= 1 << card
            usable = bool(fits >> card & 1 or meldable(taken) >> card & 1)
            copy = seen.get(card, 0)
            seen[card] = copy + 1
            if copy == 0 and options["top_discard_free"] and index == len(s.pile) - 1:
                usable = True
            assert mask[2 + 52 * copy + card] == usable, (copy, card)
            legal += usable
        assert mask[2 : 2 + 104].sum() == legal  # nothing outside the pile

    random_game("rummy500", players, seed, options, seed, check)


@settings(max_examples=40, deadline=None)
@given(SETUP, st.integers(0, 2**31))
def test_dug_card_must_be_used_by_the_first_play(setup, seed):
    players, options = setup
    check_digs(players, options, seed)


def test_the_dig_checks_see_digs_of_every_depth_and_option():
    """The property above holds only where random games dig: they do, deep and shallow, with
    and without a free top discard."""
    for free in (False, True):
        digs = deep = 0
        for seed in range(6):  # (with a free top card the pile stays short: deep digs are rare)
            found, below_top = check_digs(3, {"top_discard_free": free}, seed)
            digs += found
            deep += below_top
        assert digs > deep > 0, (free, digs, deep)


def check_digs(players: int, options: dict, seed: int) -> tuple[int, int]:
    """Play a random game checking every dig; the digs played, and those below the top card."""
    digs = below_top = 0
    before = {}

    def check(env, obs):
        before["pile"] = list(env.hand_state.pile)

    def after(env, action):
        nonlocal digs, below_top
        s = env.hand_state
        pile = before["pile"]
        if not DIG_BASE <= action < MELD_BASE or s.over:
            return
        digs += 1
        deep, card = divmod(action - DIG_BASE, NUM_CARDS)
        depth = [i for i, c in enumerate(reversed(pile)) if c == card][deep] + 1
        assert len(s.pile) == len(pile) - depth  # every card above the chosen one was taken
        below_top += depth > 1
        if options["top_discard_free"] and depth == 1:
            assert s.pending == -1
            return
        assert s.pending == card
        mask = env.game.legal_mask(s)
        legal = np.flatnonzero(mask)
        assert legal.size > 0
        for a in legal.tolist():
            if a < LAY_SET_BASE:
                assert card in MELDS[a - MELD_BASE].cards
            else:
                assert a < DISCARD_BASE and (a - LAY_SET_BASE) % NUM_CARDS == card

    random_game("rummy500", players, seed, options, seed, check, after=after)
    return digs, below_top
