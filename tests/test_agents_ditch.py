"""Ditch Rummy heuristics: legal play in every seating and option set, decisions on scripted
hands, what they read from the observation, clear errors."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from rummyzoo.agents.ditch import RANK_BITS, GreedyDitch, SmartDitch
from rummyzoo.agents.registry import agent_names, make_agent
from rummyzoo.envs import ditch_rummy_v0
from rummyzoo.envs.cards import CARD_NAMES, parse_cards
from rummyzoo.envs.core import ConfigError
from rummyzoo.envs.ditch_rummy.rules import CARD_TO_ORDER
from rummyzoo.envs.ditch_rummy.scripting import deck_with_top, play

ONE_HAND = {"target_score": None}


def make(top: str = "", deck: list[str] | None = None, num_players: int = 2, **options):
    """A raw env on a scripted deck (one hand per episode unless ``target_score`` is given)."""
    options = {**ONE_HAND, **options}
    env = ditch_rummy_v0.raw_env(num_players=num_players, **options)
    env.reset(seed=0, options={"deck": deck if deck is not None else deck_with_top(top)})
    return env


def play_turn(policy, env) -> list[str]:
    """Let ``policy`` play the rest of the current turn; the actions it took, by name."""
    me = env.agent_selection
    names = []
    rng = np.random.default_rng(0)
    while env.agent_selection == me and not (env.terminations[me] or env.truncations[me]):
        obs = env.observe(me)
        action = policy.act(obs["observation"], obs["action_mask"], rng)
        names.append(env.action_name(action))
        env.step(action)
    return names


def hand_of(env, seat: int) -> list[str]:
    return [CARD_NAMES[c] for c in env.hand_state.hand_cards(seat)]


def play_games(names, players, games, options=None):
    """Seeded games between registered agents; every action must be in the mask."""
    options = dict(options or {})
    env = ditch_rummy_v0.raw_env(num_players=players, **options)
    policies = [
        make_agent(names[i % len(names)], "ditch_rummy", players, options) for i in range(players)
    ]
    points = np.zeros(players)
    for g in range(games):
        env.reset(seed=g)
        rng = np.random.default_rng(g)
        for seat, p in enumerate(policies):
            p.reset(seat)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            points[env.agent_name_mapping[agent]] += reward
            if term or trunc:
                assert not trunc, "a hand ran into max_turns"
                env.step(None)
                continue
            seat = env.agent_name_mapping[agent]
            action = policies[seat].act(obs["observation"], obs["action_mask"], rng)
            assert obs["action_mask"][action] == 1, (names, agent, env.action_name(action))
            env.step(action)  # the env would raise on an illegal action as well
    return points


# ------------------------------------------------------------------------- legal play
@pytest.mark.parametrize(
    ("players", "options"),
    [
        (2, {}),
        (3, ONE_HAND),
        (4, ONE_HAND),
        (4, {**ONE_HAND, "teams": True}),
    ],
)
def test_heuristics_play_legal_moves(players, options):
    games = 3 if options.get("target_score", 500) else 12
    play_games(["ditch.smart", "ditch.greedy", "random"], players, games, options)


@pytest.mark.parametrize(
    "options",
    [
        {"runs_same_suit": True},
        {"single_extends_meld": True},
        {"draw_rule": "up_to_3"},
        {"hand_penalty": "none"},
        {"draw_rule": "up_to_3", "max_hand": 10, "single_extends_meld": True},
        {"runs_same_suit": True, "single_extends_meld": True, "hand_penalty": "none"},
        {"points_run": 3, "points_set": 20, "points_single": 0, "points_single_ace": 1},
    ],
)
@pytest.mark.parametrize("players", [2, 4])
def test_heuristics_follow_rule_options(options, players):
    play_games(["ditch.smart", "ditch.greedy"], players, 6, {**ONE_HAND, **options})


def test_heuristics_outscore_random():
    points = play_games(["ditch.smart", "random", "ditch.greedy", "random"], 4, 6, ONE_HAND)
    assert min(points[0], points[2]) > 3 * max(points[1], points[3])


def test_env_only_options_are_ignored():
    options = {"reward": "win_loss", "reward_scale": 10.0, "render_mode": "ansi", "render_view": 0}
    for name in ("ditch.greedy", "ditch.smart"):
        policy = make_agent(name, "ditch_rummy", 3, options)
        assert policy.name == name
        assert policy.rules.num_players == 3


# ------------------------------------------------------------------------- the observation
def test_view_decodes_the_public_facts():
    env = make("5c 6d 9h 2c 8d Qh 5s")
    play(env, ["draw 3", "meld 0 1", "end turn", "draw 3"])  # player_0 melds 5c 6d, keeps 9h
    seen = env.game.decode(env.observe("player_1")["observation"])
    assert seen.hand == tuple(sorted(CARD_TO_ORDER[c] for c in parse_cards("2c 8d Qh")))
    assert seen.fits.below == RANK_BITS[2]  # the 4s fit below 5-6
    assert seen.fits.above == RANK_BITS[5]  # the 7s fit above it
    assert seen.fits.set_ranks == 0
    assert seen.unseen.bit_count() == 52 - 2 - 3  # the run and the own hand are seen
    assert seen.hand_sizes == (3, 1)
    assert seen.hand_points == (0, 25)
    assert seen.teammates == (True, False)
    assert seen.stock == 52 - 6


# ------------------------------------------------------------------------- greedy decisions
def test_greedy_draws_to_fill_and_plays_a_run_over_a_set():
    env = make("9c 9h Td")
    greedy = GreedyDitch(options=ONE_HAND)
    actions = play_turn(greedy, env)
    assert actions[0] == "draw 3"
    assert actions[1] in ("meld 0 2", "meld 1 2")  # a run 9-T (25), not the set 9c 9h (5)
    assert env.hand_state.earned[0] == 25


def test_greedy_splits_a_three_card_run_for_a_single():
    env = make("5c 6d 7h")
    play_turn(GreedyDitch(options=ONE_HAND), env)
    assert env.hand_state.earned[0] == 25 + 2  # a two-card run and a single beat the run of three
    assert hand_of(env, 0) == []


def test_greedy_does_not_end_the_hand_with_q_k_a():
    env = make("5c 6d 9h 2c 8d Th Qs Kd Ah")
    play(env, ["draw 3", "meld 0 1", "ditch 0", "draw 3", "ditch all", "draw 3"])
    play_turn(GreedyDitch(options=ONE_HAND), env)
    assert not env.hand_state.over
    assert env.hand_state.earned[0] == 25 + 25 + 10  # Q-K and the ace as a single


# ------------------------------------------------------------------------- smart decisions
def test_smart_ditches_a_dead_card():
    # Every 3 and the other 2s are in the discard pile before player_1 holds 2c 7h 9s.
    env = make("3c 3d 3h 3s 2d 2h 2s Kc 9d 2c 7h 9s")
    play(env, ["draw 3", "ditch all", "draw 3", "ditch all", "draw 3", "ditch all", "draw 3"])
    actions = play_turn(SmartDitch(options=ONE_HAND), env)
    assert "ditch 0" in actions  # the 2c
    assert "2c" not in hand_of(env, 1)
    assert hand_of(env, 1) == ["7h"]  # the card with the most live neighbours stays


def test_smart_ends_the_hand_with_q_k_a_when_ahead():
    env = make("5c 6d 9h 2c 8d Th Qs Kd Ah")
    play(env, ["draw 3", "meld 0 1", "ditch 0", "draw 3", "ditch all", "draw 3"])
    assert play_turn(SmartDitch(options=ONE_HAND), env) == ["meld 0 1 2"]
    assert env.hand_state.over and env.hand_state.end_reason == "blind_run"
    assert list(env.hand_state.points) == [50, 0]


def test_smart_does_not_end_the_hand_when_behind():
    env = make("2c 8d Th 5c 6d 7h Qs Kd Ah")
    play(env, ["draw 3", "ditch all", "draw 3", "meld 0 1", "single 0", "draw 3"])
    # Ending now would give 25 against 27; Q-K and the ace as a single give 35.
    actions = play_turn(SmartDitch(options=ONE_HAND), env)
    assert "meld 0 1 2" not in actions
    assert not env.hand_state.over
    assert env.hand_state.earned == [35, 27]


@pytest.mark.parametrize(("target", "ends"), [(500, False), (25, True)])
def test_smart_ends_the_hand_when_that_wins_the_match(target, ends):
    env = make("Qs Kd Ah", target_score=target)
    play_turn(SmartDitch(options={"target_score": target}), env)
    assert (env.hand_state.end_reason == "blind_run") == ends


def test_smart_holds_nothing_when_the_next_player_can_empty_the_draw_pile():
    special = ["2c", "5d", "9h", "6s"]
    deck = [c for c in CARD_NAMES if c not in special] + special
    for policy, left in (
        (SmartDitch(options=ONE_HAND), []),
        (GreedyDitch(options=ONE_HAND), ["5d"]),
    ):
        env = make(deck=deck)
        play(env, ["draw 3", "ditch all"] * 16 + ["draw 3"])  # one card (6s) left to draw
        play_turn(policy, env)
        # player_1 can draw the 6s and end the hand: a card held then costs its penalty.
        assert hand_of(env, 0) == left, policy.name


# ------------------------------------------------------------------------- errors
def test_heuristic_errors():
    with pytest.raises(ValueError, match="plays ditch_rummy, not knock_rummy"):
        GreedyDitch(variant="knock_rummy")
    with pytest.raises(ValueError, match="plays ditch_rummy"):
        make_agent("ditch.smart", "knock_rummy", 2)
    with pytest.raises(ConfigError, match="teams"):
        make_agent("ditch.greedy", "ditch_rummy", 2, {"teams": True})
    with pytest.raises(ConfigError, match="num_players"):
        SmartDitch(num_players=5)
    assert {"ditch.greedy", "ditch.smart"} <= set(agent_names("ditch_rummy"))
    assert "ditch.smart" not in agent_names("knock_rummy")


@pytest.mark.parametrize(
    "players, options",
    [(2, ONE_HAND), (3, {**ONE_HAND, "draw_rule": "up_to_3"}), (4, {**ONE_HAND, "teams": True})],
)
def test_smart_table_stats_cache_matches_a_fresh_count(players, options):
    """What ditch.smart caches through a turn (the live cards' pair chances, the end chance,
    the singles per fits) equals what a heuristic with nothing cached computes, at every
    decision of whole hands of random play (which also draws nothing at times, so the live
    cards stay while the draw pile shrinks): a cache kept past a change it depends on fails
    this."""
    env = ditch_rummy_v0.raw_env(num_players=players, **options)
    rng = np.random.default_rng(3)
    unused = SmartDitch("ditch_rummy", players, options)  # copies of it have nothing cached
    checked = 0
    for seed in range(6):
        env.reset(seed=seed)
        seats = {agent: SmartDitch("ditch_rummy", players, options) for agent in env.agents}
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            smart = seats[agent]
            seen = smart.game.decode(obs["observation"])
            lines = smart.planner.outcomes(seen.hand, seen.fits)
            # the same live cards with the draw pile empty: only the end chance changes
            emptied = dataclasses.replace(seen, stock=0)
            for view in (seen, emptied):
                for fits in {view.fits, *(line.fits for line in lines)}:
                    fresh = copy.copy(unused)
                    assert smart._table_stats(view, fits) == fresh._table_stats(view, fits)
                    checked += 1
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked > 300
