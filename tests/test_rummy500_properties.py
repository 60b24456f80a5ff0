"""Properties of 500 Rum over many seeded random games (hypothesis)."""

from __future__ import annotations

import numpy as np
from hidden_info import hidden_swap_check
from hypothesis import given, settings
from hypothesis import strategies as st

from rummyzoo.envs import rummy500_v0
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

OPTIONS = st.fixed_dictionaries(
    {
        "top_discard_free": st.booleans(),
        "stock_exhaustion": st.sampled_from(["discard_only", "end_after_last_stock_turn"]),
    }
)
PLAYERS = st.integers(2, 8)


def random_game(players, seed, options, policy_seed, check=None, target=None, after=None):
    """Play one random game on the raw env; call ``check(env, obs)`` before every decision.

    ``after(env, action, pile)`` runs after every step with the discard pile from before it.

    The policy prefers melds and lay-offs half of the time so tables grow long runs.
    """
    env = rummy500_v0.raw_env(num_players=players, target_score=target, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    trace = []
    for agent in env.agent_iter(max_iter=20000):
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if check is not None:
            check(env, obs)
            obs = env.observe(agent)  # the check may have moved hidden cards
        legal = np.flatnonzero(obs["action_mask"])
        plays = legal[(legal >= MELD_BASE) & (legal < DISCARD_BASE)]
        pool = plays if plays.size and rng.random() < 0.5 else legal
        action = int(pool[rng.integers(pool.size)])
        trace.append((agent, action, obs["observation"].copy(), obs["action_mask"].copy()))
        pile = list(env.state.pile)
        env.step(action)
        if after is not None:
            after(env, action, pile)
    return env, trace


def check_bookkeeping(env) -> None:
    """Every incremental record of the state agrees with one recomputed from scratch."""
    game, s = env.game, env.state
    decks = game.num_decks
    assert (game.card_locations(s) == decks).all()  # every card in exactly one place
    counts = np.asarray(s.counts)
    assert np.array_equal(s.hands, counts)
    assert s.sizes == counts.sum(axis=1).tolist()
    for seat in range(game.num_players):
        assert s.bits[seat] == sum(1 << c for c in np.flatnonzero(counts[seat]))
        assert np.array_equal(s.present[seat], np.minimum(counts[seat], 1))
    assert (np.asarray(s.known_counts) <= counts).all()
    assert np.array_equal(s.known, np.asarray(s.known_counts))
    # The discard pile planes.
    pile = s.pile
    pile_counts = np.bincount(np.asarray(pile, dtype=np.int64), minlength=NUM_CARDS)
    assert s.pile_counts == pile_counts.tolist()
    assert s.pile_bits == sum(1 << c for c in np.flatnonzero(pile_counts))
    assert s.pile_double == sum(1 << c for c in np.flatnonzero(pile_counts == 2))
    top_pos = np.zeros(NUM_CARDS)
    low_pos = np.zeros(NUM_CARDS)
    for index, card in enumerate(pile):
        if top_pos[card]:
            low_pos[card] = top_pos[card]
        top_pos[card] = (index + 1) / (NUM_CARDS * decks)
    assert np.allclose(s.pile_row, top_pos)
    if decks == 2:
        assert np.allclose(s.pile_low_row, low_pos)
    assert np.flatnonzero(s.top_row).tolist() == pile[-1:]
    # The table: melds are valid, values add up, lay-off targets are right.
    run_cards = np.zeros(NUM_CARDS)
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
    assert np.array_equal(s.runs_row, run_cards)
    assert sum(s.table_points) == table_value
    assert s.fits == (fit_set, fit_low, fit_high)
    assert s.fits_any == fit_set | fit_low | fit_high
    for k, fit in enumerate(s.fits):
        assert s.fit_rows[k].tolist() == [float(fit >> c & 1) for c in range(NUM_CARDS)]
    laid_total = s.laid.sum(axis=0)
    assert laid_total.sum() == run_cards.sum() + sum(x[1].bit_count() for x in s.sets)
    if s.pending >= 0:
        assert s.counts[s.current][s.pending] > 0
        assert np.flatnonzero(s.pending_row).tolist() == [s.pending]
    else:
        assert not s.pending_row.any()


@settings(max_examples=60, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_cards_conserved_bookkeeping_sound_and_mask_nonempty(players, seed, options):
    def check(env, obs):
        assert obs["action_mask"].sum() > 0
        check_bookkeeping(env)

    env, _ = random_game(players, seed, options, seed + 1, check)
    state = env.state
    check_bookkeeping(env)
    if state.over:  # hand points are table value minus the cards left in hand
        for seat in range(players):
            left = sum(CARD_VALUE[c] for c in state.hand_cards(seat))
            assert state.points[seat] == state.table_points[seat] - left


@settings(max_examples=40, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_digging_is_legal_exactly_when_the_card_can_be_used(players, seed, options):
    """The dig mask against a brute force over the pile: hand + taken cards, table targets."""

    def check(env, obs):
        s = env.state
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

    random_game(players, seed, options, seed, check)


@settings(max_examples=40, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_dug_card_must_be_used_by_the_first_play(players, seed, options):
    digs = 0

    def after(env, action, pile):
        nonlocal digs
        s = env.state
        if not DIG_BASE <= action < MELD_BASE or s.over:
            return
        digs += 1
        deep, card = divmod(action - DIG_BASE, NUM_CARDS)
        depth = [i for i, c in enumerate(reversed(pile)) if c == card][deep] + 1
        assert len(s.pile) == len(pile) - depth  # every card above the chosen one was taken
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

    random_game(players, seed, options, seed, after=after)


@settings(max_examples=20, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_same_seed_same_game(players, seed, options):
    _, first = random_game(players, seed, options, 7, target=100)
    _, second = random_game(players, seed, options, 7, target=100)
    assert len(first) == len(second)
    for (a1, x1, o1, m1), (a2, x2, o2, m2) in zip(first, second, strict=True):
        assert a1 == a2 and x1 == x2 and np.array_equal(o1, o2) and np.array_equal(m1, m2)


def _hidden_cards(state, seat) -> list[int]:
    """Cards ``seat`` holds that nobody else knows of (one entry per unknown copy)."""
    counts, known = state.counts[seat], state.known_counts[seat]
    return [c for c in range(NUM_CARDS) for _ in range(counts[c] - known[c])]


def _move(state, seat, card, delta) -> None:
    state.counts[seat][card] += delta
    state.hands[seat, card] = state.counts[seat][card]
    held = state.counts[seat][card] > 0
    state.present[seat][card] = held
    state.bits[seat] = (state.bits[seat] & ~(1 << card)) | (held << card)


def _swap_hidden(state, viewer, rng) -> bool:
    """Swap one card another player holds unseen with a stock card or another hidden card."""
    n = len(state.counts)
    others = [s for s in range(n) if s != viewer]
    if state.pending >= 0:
        # The acting player has promised a play with the dug card; keep its hand playable.
        others = [s for s in others if s != state.current]
    if not others:
        return False
    owner = others[rng.integers(len(others))]
    hidden = _hidden_cards(state, owner)
    if not hidden:
        return False
    card = hidden[rng.integers(len(hidden))]
    other_hidden = [(s, c) for s in others if s != owner for c in _hidden_cards(state, s)]
    if state.stock_size and (not other_hidden or rng.random() < 0.5):
        pos = state.stock_pos + int(rng.integers(state.stock_size))
        other = state.stock[pos]
        state.stock[pos] = card
    else:
        if not other_hidden:
            return False
        seat2, other = other_hidden[rng.integers(len(other_hidden))]
        _move(state, seat2, other, -1)
        _move(state, seat2, card, +1)
    _move(state, owner, card, -1)
    _move(state, owner, other, +1)
    if state.stock_size > 1 and rng.random() < 0.5:  # and reorder the stock
        rest = state.stock[state.stock_pos :]
        rng.shuffle(rest)
        state.stock[state.stock_pos :] = rest
    return True


@settings(max_examples=40, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_observation_ignores_hidden_cards(players, seed, options):
    check, swaps = hidden_swap_check(players, np.random.default_rng(seed), _swap_hidden)
    random_game(players, seed, options, seed, check)
    assert swaps[0] > 0


def test_observation_changes_with_own_cards():
    """The invariance test above can fail: swapping the viewer's own card is visible."""
    env = rummy500_v0.raw_env(num_players=2)
    env.reset(seed=4)
    before = env.observe("player_0")["observation"].copy()
    state = env.state
    card = state.hand_cards(0)[0]
    other = state.stock[state.stock_pos]
    _move(state, 0, card, -1)
    _move(state, 0, other, +1)
    state.stock[state.stock_pos] = card
    assert not np.array_equal(before, env.observe("player_0")["observation"])
