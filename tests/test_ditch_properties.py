"""Properties only Ditch Rummy has, over many seeded random games (hypothesis). The properties
every variant shares (API, seeds, hidden cards, conservation, live masks, the compiled kernels)
are in ``test_variants.py``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_variants import SETUPS, random_game

from rummyzoo.envs import ditch_rummy_v0
from rummyzoo.envs.ditch_rummy.rules import (
    ACE,
    ORDER_TO_CARD,
    RUN,
    SET,
    DitchRummyGame,
    DitchState,
)

SETUP = SETUPS["ditch_rummy"]


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


@settings(max_examples=30, deadline=None)
@given(SETUP, st.integers(0, 2**31))
def test_observation_is_exact_and_hands_sorted(setup, seed):
    """The incrementally kept observations equal ones built from scratch out of the state, for
    every seat at every decision; hands stay sorted and within ``max_hand``."""
    players, options = setup

    def check(env, obs):
        state = env.hand_state
        assert all(len(h) <= env.game.max_hand for h in state.hands)
        assert all(list(h) == sorted(h) for h in state.hands)
        for seat, name in enumerate(env.possible_agents):
            expected = reference_observation(env.game, state, seat, env.match.seat_totals)
            np.testing.assert_allclose(env.observe(name)["observation"], expected, atol=1e-6)

    random_game("ditch_rummy", players, seed, options, seed + 1, check, target=150)


@settings(max_examples=25, deadline=None)
@given(SETUP, st.integers(0, 2**31))
def test_hand_points_are_earned_minus_held_cards(setup, seed):
    num_players, options = setup
    env = ditch_rummy_v0.raw_env(num_players=num_players, target_score=None, **options)
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
    state = env.hand_state
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
