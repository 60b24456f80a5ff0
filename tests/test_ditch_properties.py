"""Properties of Ditch Rummy over many seeded random games (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rummyzoo.envs import ditch_rummy_v0
from rummyzoo.envs.ditch_rummy.rules import (
    ACE,
    ORDER_TO_CARD,
    RUN,
    SET,
    DitchRummyGame,
    DitchState,
)

OPTIONS = st.fixed_dictionaries(
    {
        "draw_rule": st.sampled_from(["fill_to_3", "up_to_3"]),
        "runs_same_suit": st.booleans(),
        "single_extends_meld": st.booleans(),
        "hand_penalty": st.sampled_from(["per_card", "none"]),
    }
)
PLAYERS = st.sampled_from([(2, False), (3, False), (4, False), (4, True)])


def reference_observation(
    game: DitchRummyGame, s: DitchState, seat: int, totals: np.ndarray
) -> np.ndarray:
    """The observation built from scratch out of the state (no incremental bookkeeping)."""
    n, rules = game.num_players, game.rules
    layout = game.observation_layout
    obs = np.zeros(game.obs_size, dtype=np.float32)

    def put(name: str, index: int, val: float = 1.0) -> None:
        obs[layout[name][0] + index] = val

    for i, c in enumerate(s.hand_cards(seat)):
        put("hand", c)
        put("hand_positions", 52 * i + c)
    for c in s.discard:
        put("discard_pile", c)
    for o in range(52):
        rank, suit = o >> 2, o & 3
        card = ORDER_TO_CARD[o]
        for m in s.melds:
            if m.kind == SET and m.low == rank:
                put("fits_set", card)
            if m.kind == RUN and (m.suit < 0 or m.suit == suit):
                if m.low == rank + 1:
                    put("fits_below_run", card)
                if m.high == rank - 1:
                    put("fits_above_run", card)
    for r in range(n):
        other = (seat + r) % n
        for m in s.melds:
            if m.owner == other:
                for c in m.cards:
                    put("sets" if m.kind == SET else "runs", 52 * r + c)
        for c in s.singles[other]:
            put("singles", 52 * r + c)
        put("hand_sizes", r, len(s.hands[other]) / game.max_hand)
        put("hand_points", r, s.earned[other] / 100)
        put("teammates", r, float(r == 0 or (rules.teams and r == 2)))
        put("scores", r, totals[other] / (game.match.target_score or 500))
    put("to_act", (s.current - seat) % n)
    put("dealer", (s.dealer - seat) % n)
    if seat == s.current and not s.over:
        put("phase", s.phase)
    put("draw_pile", 0, s.pile_size / 52)
    put("drawn", 0, s.drawn / 3)
    put("idle_turns", 0, s.idle / n)
    put("turn", 0, s.turn / game.match.max_turns)
    return obs


def swap_hidden(s: DitchState, seat: int, rng: np.random.Generator) -> None:
    """Deal the cards ``seat`` cannot see (other hands, the draw pile) afresh, sizes kept."""
    others = [i for i in range(len(s.hands)) if i != seat]
    hidden = [o for i in others for o in s.hands[i]] + s.pile[s.pile_pos :]
    rng.shuffle(hidden)
    at = 0
    for i in others:
        size = len(s.hands[i])
        s.hands[i] = tuple(sorted(hidden[at : at + size]))
        at += size
    s.pile[s.pile_pos :] = hidden[at:]


def random_game(players, teams, seed, options, policy_seed, check=None, target=None):
    """Play one random game on the raw env; call ``check(env, obs)`` before every decision."""
    env = ditch_rummy_v0.raw_env(
        num_players=players, teams=teams, target_score=target, max_turns=150, **options
    )
    env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    trace = []
    for agent in env.agent_iter(max_iter=20_000):
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if check is not None:
            check(env, agent, obs)
            obs = env.observe(agent)  # the check may have moved hidden cards
        legal = np.flatnonzero(obs["action_mask"])
        # Draw and play more often than a uniform choice would, so hands run long.
        busy = legal[(legal >= 1) & (legal < env.game.ditch_base)]
        pool = busy if busy.size and rng.random() < 0.7 else legal
        action = int(pool[rng.integers(pool.size)])
        trace.append((agent, action, obs["observation"].copy()))
        env.step(action)
    return env, trace


@settings(max_examples=30, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_cards_conserved_mask_live_and_observation_exact(players, seed, options):
    num_players, teams = players

    def check(env, agent, obs):
        state = env.state
        assert (env.game.card_locations(state) == 1).all()
        assert obs["action_mask"].sum() > 0
        assert all(len(h) <= env.game.max_hand for h in state.hands)
        assert all(list(h) == sorted(h) for h in state.hands)
        for seat, name in enumerate(env.possible_agents):
            expected = reference_observation(env.game, state, seat, env.match.seat_totals)
            np.testing.assert_allclose(env.observe(name)["observation"], expected, atol=1e-6)

    random_game(num_players, teams, seed, options, seed + 1, check, target=150)


@settings(max_examples=25, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_same_seed_same_game(players, seed, options):
    num_players, teams = players
    env1, first = random_game(num_players, teams, seed, options, 7, target=100)
    env2, second = random_game(num_players, teams, seed, options, 7, target=100)
    assert len(first) == len(second)
    for (a1, x1, o1), (a2, x2, o2) in zip(first, second, strict=True):
        assert a1 == a2 and x1 == x2
        np.testing.assert_array_equal(o1, o2)
    assert env1.match_totals == env2.match_totals


@settings(max_examples=25, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_observation_ignores_hidden_cards(players, seed, options):
    num_players, teams = players
    rng = np.random.default_rng(seed)

    def check(env, agent, obs):
        seat = env.agent_name_mapping[agent]
        before = {a: env.observe(a) for a in env.possible_agents}
        swap_hidden(env.state, seat, rng)
        env.match.mask = None  # the mover's own hand is unchanged, but recompute to be sure
        after = env.observe(agent)
        np.testing.assert_array_equal(before[agent]["observation"], after["observation"])
        np.testing.assert_array_equal(before[agent]["action_mask"], after["action_mask"])
        assert (env.game.card_locations(env.state) == 1).all()

    random_game(num_players, teams, seed, options, seed + 3, check)


@settings(max_examples=25, deadline=None)
@given(PLAYERS, st.integers(0, 2**31), OPTIONS)
def test_hand_points_are_earned_minus_held_cards(players, seed, options):
    num_players, teams = players
    env = ditch_rummy_v0.raw_env(num_players=num_players, teams=teams, target_score=None, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    earned_total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(max_iter=20_000):
        obs, reward, term, trunc, _ = env.last()
        earned_total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    state = env.state
    assert state.over
    for seat in range(num_players):
        held = state.hands[seat]
        penalty = 0
        if options["hand_penalty"] == "per_card":
            penalty = sum(10 if o >> 2 == ACE else 2 for o in held)
        assert state.points[seat] == state.earned[seat] - penalty
    groups = env.game.score_groups
    team_points = np.bincount(groups, weights=state.points)[groups]
    assert list(earned_total.values()) == team_points.tolist()
