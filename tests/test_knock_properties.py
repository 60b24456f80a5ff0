"""Properties of Knock Rummy over many seeded random games (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hidden_info import hidden_swap_check
from hypothesis import given, settings
from hypothesis import strategies as st

from rummyzoo.envs import knock_rummy_v0
from rummyzoo.envs.aec import RummyEnv
from rummyzoo.envs.native import PURE, load_kernels
from rummyzoo.envs.registry import make_game

OPTIONS = st.fixed_dictionaries(
    {
        "stock_exhaustion": st.sampled_from(["void", "reshuffle", "showdown"]),
        "allow_discard_of_taken": st.booleans(),
        "undercut_penalty_to": st.sampled_from(["all_lower", "winners_only"]),
        "knock_max_deadwood": st.sampled_from([None, 10, 25]),
        "void_threshold": st.sampled_from([0, 2]),
    }
)


def random_game(players, seed, options, policy_seed, check=None, target=None):
    """Play one random game on the raw env; call ``check(env)`` before every decision."""
    env = knock_rummy_v0.raw_env(num_players=players, target_score=target, max_turns=120, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    trace = []
    for agent in env.agent_iter(max_iter=5000):
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if check is not None:
            check(env, obs)
            obs = env.observe(agent)  # the check may have moved hidden cards
        # Knock rarely so games run long enough to reach the stock's end.
        legal = np.flatnonzero(obs["action_mask"])
        quiet = legal[legal < 54]
        pool = quiet if quiet.size and rng.random() < 0.9 else legal
        action = int(pool[rng.integers(pool.size)])
        trace.append((agent, action, obs["observation"].copy()))
        env.step(action)
    return env, trace


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**31), OPTIONS)
def test_cards_conserved_and_mask_nonempty(players, seed, options):
    def check(env, obs):
        assert (env.game.card_locations(env.state) == 1).all()
        assert obs["action_mask"].sum() > 0
        # Incremental hand bitmasks agree with the hand planes.
        for seat in range(players):
            bits = sum(1 << int(c) for c in np.flatnonzero(env.state.hands[seat]))
            assert env.state.bits[seat] == bits

    random_game(players, seed, options, seed + 1, check)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**31), OPTIONS)
def test_transfers_sum_to_zero(players, seed, options):
    env = knock_rummy_v0.raw_env(num_players=players, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(max_iter=5000):
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert abs(sum(total.values())) < 1e-9


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**31), OPTIONS)
def test_same_seed_same_game(players, seed, options):
    _, first = random_game(players, seed, options, 7, target=40)
    _, second = random_game(players, seed, options, 7, target=40)
    assert len(first) == len(second)
    for (a1, x1, o1), (a2, x2, o2) in zip(first, second, strict=True):
        assert a1 == a2 and x1 == x2 and np.array_equal(o1, o2)


def _swap_hidden(state, viewer, rng):
    """Swap one card another player holds unseen with a stock card or another hidden card."""
    n = state.hands.shape[0]
    others = [s for s in range(n) if s != viewer]
    owner = others[rng.integers(len(others))]
    hidden = np.flatnonzero((state.hands[owner] > 0) & (state.known[owner] == 0))
    if hidden.size == 0:
        return False
    card = int(hidden[rng.integers(hidden.size)])
    other_hidden = [
        (s, int(c))
        for s in others
        if s != owner
        for c in np.flatnonzero((state.hands[s] > 0) & (state.known[s] == 0))
    ]
    if state.stock_size and (not other_hidden or rng.random() < 0.5):
        pos = state.stock_pos + int(rng.integers(state.stock_size))
        state.stock = state.stock.copy()  # the dealt stock is a read-only view of the deck
        other = int(state.stock[pos])
        state.stock[pos] = card
    else:
        if not other_hidden:
            return False
        seat2, other = other_hidden[rng.integers(len(other_hidden))]
        state.hands[seat2, other] = 0.0
        state.hands[seat2, card] = 1.0
        state.bits[seat2] ^= (1 << other) | (1 << card)
    state.hands[owner, card] = 0.0
    state.hands[owner, other] = 1.0
    state.bits[owner] ^= (1 << card) | (1 << other)
    return True


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**31))
def test_observation_ignores_hidden_cards(players, seed):
    check, swaps = hidden_swap_check(players, np.random.default_rng(seed), _swap_hidden)
    random_game(players, seed, {}, seed, check)
    assert swaps[0] > 0


def test_observation_changes_with_own_cards():
    """The invariance test above can fail: swapping the viewer's own card is visible."""
    env = knock_rummy_v0.raw_env(num_players=2)
    env.reset(seed=4)
    before = env.observe("player_0")["observation"].copy()
    card = int(np.flatnonzero(env.state.hands[0])[0])
    other = int(env.state.stock[0])
    env.state.hands[0, card] = 0.0
    env.state.hands[0, other] = 1.0
    assert not np.array_equal(before, env.observe("player_0")["observation"])


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**31), OPTIONS, st.sampled_from([None, 60]))
def test_compiled_builders_match_numpy(players, seed, options, target):
    """Deals, observations, masks and infos from the compiled builders equal the Python
    code's, for every agent at every decision (what installs without the kernels run): a game
    built with the compiled kernels and one built with ``kernels=PURE``, side by side."""
    kernels = load_kernels()
    if kernels is None:
        pytest.skip("the compiled kernels are not built here")
    options = {"target_score": target, "max_turns": 120, **options}
    env = RummyEnv(make_game("knock_rummy", players, kernels=kernels, **options))
    plain = RummyEnv(make_game("knock_rummy", players, kernels=PURE, **options))
    assert env.game.kernels is kernels and plain.game.kernels is None
    assert (env.game.solver.backend, plain.game.solver.backend) == ("compiled", "python")
    env.reset(seed=seed)
    plain.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for agent in env.agent_iter(max_iter=3000):
        for viewer in env.agents:
            a, b = env.observe(viewer), plain.observe(viewer)
            assert a["observation"].dtype == b["observation"].dtype == np.float32
            assert a["action_mask"].dtype == b["action_mask"].dtype == np.int8
            assert np.array_equal(a["observation"], b["observation"]), viewer
            assert np.array_equal(a["action_mask"], b["action_mask"]), viewer
        assert env.state.bits == plain.state.bits and env.state.stock == plain.state.stock
        assert np.array_equal(env.state.planes, plain.state.planes)
        assert env.infos == plain.infos
        if env.terminations[agent] or env.truncations[agent]:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))
        env.step(action)
        plain.step(action)
    assert env.rewards == plain.rewards
