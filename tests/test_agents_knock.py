"""Knock Rummy heuristics: legal play in every player count, sensible decisions, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from knock_helpers import deck_for, make

from rummyzoo.agents.knock import GreedyKnock, SmartKnock
from rummyzoo.agents.registry import make_agent
from rummyzoo.envs import knock_rummy_v0


def play_games(names, players, games, options=None):
    env = knock_rummy_v0.raw_env(num_players=players, **(options or {}))
    policies = [
        make_agent(names[i % len(names)], "knock_rummy", players, options) for i in range(players)
    ]
    lengths = []
    for g in range(games):
        env.reset(seed=g)
        rng = np.random.default_rng(g)
        for p in policies:
            p.reset()
        steps = 0
        for agent in env.agent_iter():
            obs, _r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.agent_name_mapping[agent]
            action = policies[seat].act(obs["observation"], obs["action_mask"], rng)
            assert obs["action_mask"][action] == 1, (names, agent, action)
            env.step(action)  # the env would raise on an illegal action as well
            steps += 1
        lengths.append(steps)
    return lengths


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_heuristics_play_legal_moves(players):
    play_games(["knock.smart", "knock.greedy", "random"], players, games=12)


def test_heuristics_follow_rule_options():
    options = {
        "knock_max_deadwood": 10,
        "allow_discard_of_taken": True,
        "stock_exhaustion": "reshuffle",
    }
    play_games(["knock.smart", "knock.greedy"], 2, games=10, options=options)


def test_greedy_takes_a_useful_discard_and_knocks_low():
    env = make(
        2, ["As 2s 3s 4h 5h 6h 9c 9d Kc Qd", "Ac 3c 5c 7c Jc 2d 4d 6d 8d Td"], up="9h", stock="Kh"
    )
    greedy = GreedyKnock(num_players=2)
    rng = np.random.default_rng(0)
    obs = env.observe("player_0")
    action = greedy.act(obs["observation"], obs["action_mask"], rng)
    assert env.action_name(action) == "take discard"  # 9h completes 9c 9d 9h
    env.step(action)
    obs = env.observe("player_0")
    action = greedy.act(obs["observation"], obs["action_mask"], rng)
    # Kc and Qd both leave 10; the tie goes to the higher card, and 10 is low enough to knock.
    assert env.action_name(action) == "knock Kc"


def test_greedy_knocks_at_threshold():
    env = make(
        2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", "Ac 3c 5c 7c Jc 2d 4d 6d 8d Td"], up="Ks", stock="2c"
    )
    greedy = GreedyKnock(num_players=2)
    env.step(env.action_index("draw stock"))
    obs = env.observe("player_0")
    action = greedy.act(obs["observation"], obs["action_mask"], np.random.default_rng(0))
    assert env.action_name(action) == "knock Kc"


def test_smart_knocks_on_gin():
    env = make(
        2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", "Ac 3c 5c 7c Jc 2d 4d 6d 8d Td"], up="Ks", stock="9s"
    )
    smart = SmartKnock(num_players=2)
    env.step(env.action_index("draw stock"))
    obs = env.observe("player_0")
    assert (
        env.action_name(smart.act(obs["observation"], obs["action_mask"], np.random.default_rng(0)))
        == "knock Kc"
    )


def test_smart_prefers_a_safe_discard():
    """Qc and Qd leave the same deadwood; player_1 picked up the Jc, so the Qc would feed it."""
    deck = deck_for(
        ["As 2s 3s 4h 5h 6h 9c 9d 9h Qc", "Ad 3d 5d 7d 2h 8h Th 4s 6s 8s"],
        up="Jc",
        stock="Qd",
        first_seat=1,
    )
    env = knock_rummy_v0.raw_env(num_players=2, first_dealer=0)
    env.reset(seed=0, options={"deck": deck})
    env.step(env.action_index("take discard"))  # player_1 takes the Jc
    env.step(env.action_index("discard Th"))
    env.step(env.action_index("draw stock"))  # player_0 draws the Qd
    obs = env.observe("player_0")
    rng = np.random.default_rng(0)
    smart = env.action_name(
        SmartKnock(num_players=2).act(obs["observation"], obs["action_mask"], rng)
    )
    greedy = env.action_name(
        GreedyKnock(num_players=2).act(obs["observation"], obs["action_mask"], rng)
    )
    assert smart.endswith("Qd")
    assert greedy.endswith("Qc")  # the greedy tier does not look at pick-ups


def test_heuristic_errors():
    with pytest.raises(ValueError, match="plays knock_rummy"):
        make_agent("knock.greedy", "rummy500", 2)
    with pytest.raises(ValueError, match=r"unknown agent 'knock\.genius'"):
        make_agent("knock.genius", "knock_rummy", 2)
    with pytest.raises(ValueError, match="num_players"):
        make_agent("knock.smart", "knock_rummy", 9)
