"""Knock Rummy heuristics: legal play in every player count, sensible decisions, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from knock_helpers import deck_for, make

from rummyzoo.agents.knock import GreedyKnock, SmartKnock
from rummyzoo.agents.registry import make_agent
from rummyzoo.envs import knock_rummy_v0
from rummyzoo.envs.knock_rummy.rules import DISCARD_BASE, TAKE_DISCARD


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


@pytest.mark.parametrize("settings", ["", "(knock_margin=50)"])
def test_smart_does_not_take_a_discard_to_throw_it_back(settings):
    """Where the rules let a taken card be thrown the same turn, knock.smart took the top
    discard (it lowered the deadwood with another discard) and then threw that very card
    back (an opponent's discard counts as safe): two such players did it turn after turn, and
    3 of 100 hands with knock_max_deadwood=0 ran to the turn cap, scoring nothing."""
    options = {"allow_discard_of_taken": True}
    if not settings:
        options["knock_max_deadwood"] = 0
    env = knock_rummy_v0.raw_env(num_players=2, **options)
    smart = make_agent(f"knock.smart{settings}", "knock_rummy", 2, options)
    throw_backs = takes = 0
    for seed in range(30):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        taken = -1
        for _agent in env.agent_iter():
            obs, _r, term, trunc, info = env.last()
            if term or trunc:
                assert not trunc, (seed, info)
                env.step(None)
                continue
            action = smart.act(obs["observation"], obs["action_mask"], rng)
            throw_backs += taken >= 0 and action == DISCARD_BASE + taken
            taken = -1
            if action == TAKE_DISCARD:
                taken = smart.game.decode(obs["observation"]).top_discard
                takes += 1
            env.step(action)
    assert takes > 30 and throw_backs == 0, (takes, throw_backs)


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


def _smart_choice(env, **params):
    obs = env.observe(env.agent_selection)
    smart = SmartKnock(num_players=env.unwrapped.game.num_players, **params)
    rng = np.random.default_rng(0)
    return env.action_name(smart.act(obs["observation"], obs["action_mask"], rng))


@pytest.mark.parametrize("params", [{}, {"knock_margin": -50.0}, {"samples": 200}])
def test_smart_knocks_with_the_card_that_leaves_least_deadwood(params):
    """Throwing the Ad is gin (Ac-4c, 5h-7h, 9s 9d 9h); throwing the Ac, which has fewer live
    neighbours and is the safer discard, leaves deadwood 1. A knock ends the hand, so only the
    deadwood counts: gin scores 103, the other knock 77."""
    env = make(
        2, ["Ac 2c 3c 4c 5h 6h 7h 9s 9d 9h", "Kc Qd Jh Ts 8c 8d 7s 6s 5d 4s"], up="Ks", stock="Ad"
    )
    env.step(env.action_index("draw stock"))
    assert _smart_choice(env, **params) == "knock Ad"


def test_smart_knocks_gin_at_four_players():
    hands = [
        "Ac 2c 3c 4c 5h 6h 7h",
        "Kc Qd Jh Ts 8c 8d 7s",
        "6s 5d 4s Kd Qh Js Tc",
        "9c 9d 2h 3h Kh Qs 8h",
    ]
    env = make(4, hands, up="Ks", stock="Ad")
    env.step(env.action_index("draw stock"))
    assert _smart_choice(env) == "knock Ad"


@pytest.mark.parametrize(
    ("limit", "expected"), [(None, "knock 2c"), (1, "knock 2c"), (0, "discard Ad")]
)
def test_smart_knocks_within_the_variant_deadwood_limit(limit, expected):
    """Only "knock 2c" (deadwood 1) is legal under knock_max_deadwood=1; smart would discard the
    Ad (deadwood 2) but knocks with the 2c."""
    options = {} if limit is None else {"knock_max_deadwood": limit}
    env = make(
        2,
        ["As 2s 3s 5h 6h 7h 9c 9d 9h 2c", "Kc Qd Jh Ts 8c 8d 7s 6s 5d 4s"],
        up="Ah",
        stock="Ad",
        **options,
    )
    env.step(env.action_index("draw stock"))
    assert _smart_choice(env) == expected


@pytest.mark.parametrize(("limit", "expected"), [(25, "discard Kc"), (27, "knock Kc")])
def test_smart_knock_limit(limit, expected):
    """Deadwood 27 after the Kc (As-3s, 4h-6h; Qd Jh 5c 2d left): its estimate of the knock is
    about +33 points (the opponent holds 60), but it never knocks above knock_limit."""
    env = make(
        2, ["As 2s 3s 4h 5h 6h Kc Qd Jh 5c", "Ac 3c 7c Jc 2h 4d 6d 8d Td 9c"], up="Ks", stock="2d"
    )
    env.step(env.action_index("draw stock"))
    assert _smart_choice(env, knock_limit=limit) == expected


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
    with pytest.raises(ValueError, match="knock_rummy supports 2-6 players, got 9"):
        make_agent("knock.smart", "knock_rummy", 9)


def test_a_process_keeps_one_deadwood_memo_for_every_heuristic_and_feature() -> None:
    """A hand's deadwood is the same under every rule option: the heuristics of every seat and
    the learner's features share the process's memo (each kept its own, some 150 MB once full,
    a dozen in a four-player run with a pool of snapshots), and copies, pickled ones too, keep
    sharing it; a memo of its own still copies as a fresh one."""
    import copy
    import pickle

    from rummyzoo.agents.features import make_features
    from rummyzoo.agents.knock import DeadwoodCache, shared_deadwood
    from rummyzoo.agents.registry import make_agent

    users = [
        make_agent("knock.greedy", "knock_rummy", 2),
        make_agent("knock.smart", "knock_rummy", 4, {"knock_max_deadwood": 10}),
        make_features("knock_deadwood", "knock_rummy", 3, {}),
    ]
    users += [copy.deepcopy(users[0]), pickle.loads(pickle.dumps(users[1]))]
    assert all(user.deadwood is shared_deadwood() for user in users)
    own = DeadwoodCache()
    own(0b1111111111)
    fresh = copy.deepcopy(own)
    assert fresh is not own and fresh.cache == {} and own.cache
