"""Bad input to the Python API gets an error that names what is wrong, before anything changes:
the envs before their first reset, the learner's envs, agent objects and classes, the deck a
reset is given, a checkpoint's policy given another game's arrays."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from run_helpers import untrained_checkpoint

from rummyzoo.agents.arena import run_arena
from rummyzoo.agents.checkpoints import load_policy
from rummyzoo.agents.registry import make_agent
from rummyzoo.envs import knock_rummy_v0
from rummyzoo.envs.cards import parse_deck
from rummyzoo.envs.replay import record_game
from rummyzoo.training.seat_env import SeatEnv
from rummyzoo.training.vec_env import BatchedSeatEnv


def test_the_env_before_its_first_reset_says_to_reset():
    raw = knock_rummy_v0.raw_env()
    for call, name in [
        (lambda: raw.observe("player_0"), "observe()"),
        (raw.last, "last()"),
        (lambda: raw.step(0), "step()"),
        (raw.legal_actions, "legal_actions()"),
        (lambda: knock_rummy_v0.env().unwrapped.legal_actions(), "legal_actions()"),
    ]:
        with pytest.raises(RuntimeError, match=rf"call reset\(\) before {name}"):
            call()
    ansi = knock_rummy_v0.raw_env(render_mode="ansi")
    with pytest.raises(RuntimeError, match=r"call reset\(\) before render\(\)"):
        ansi.render()
    vec = knock_rummy_v0.vector(2)
    for call in (lambda: vec.observe(0, 0), lambda: vec.render(0)):
        with pytest.raises(RuntimeError, match=r"call reset\(\) before observing or rendering"):
            call()
    vec.reset(seed=1)
    assert vec.observe(0, 0).shape == (vec.game.obs_size,)


def test_an_agent_the_game_does_not_have_is_named():
    env = knock_rummy_v0.env()
    env.reset(seed=3)
    before = env.observe("player_0")
    for agent in ("player_9", None, 0):
        with pytest.raises(ValueError, match=rf"no agent {agent!r} in this game: its agents are "
                           "player_0, player_1"):  # fmt: skip
            env.observe(agent)
    after = env.observe("player_0")
    for key in before:
        np.testing.assert_array_equal(before[key], after[key])


def test_a_bad_deck_names_the_cards_too_many_and_too_few():
    with pytest.raises(ValueError, match=r"got 52 cards; too many: As x52; too few: Ac x0, "
                       r"2c x0, .* 8c x0 and 43 more$"):  # fmt: skip
        parse_deck(["As"] * 52, 1)
    deck = [str(c) for c in ["Ac", "2c"]] * 52
    with pytest.raises(ValueError, match=r"too many: Ac x52, 2c x52; too few: 3c x0"):
        parse_deck(deck[:104], 2)
    env = knock_rummy_v0.env()
    env.reset(seed=3)
    hand = env.unwrapped.hand_state
    with pytest.raises(ValueError, match="too many: As x52"):
        env.reset(options={"deck": ["As"] * 52})
    assert env.unwrapped.hand_state is hand  # the refused reset changed nothing


@pytest.mark.parametrize("cls", [SeatEnv, BatchedSeatEnv])
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"env_options": {"reward": "points"}}, r"option\(s\) reward are set by the learner's env "
         r"\(its reward, reward_scale and render_mode parameters\); pass rules options only"),
        ({"env_options": [1]}, r"options must be a dict of rules options, got \[1\]"),
        ({"gamma": float("nan")}, r"the learner's env: gamma must be a finite number, got nan"),
        ({"gamma": 2}, r"the learner's env: gamma must be a finite number <= 1, got 2"),
        ({"gamma": -0.5}, r"gamma must be a finite number >= 0, got -0.5"),
        ({"gamma": "0.9"}, r"gamma must be a finite number, got '0.9'"),
        ({"illegal_penalty": float("inf")}, "illegal_penalty must be a finite number, got inf"),
    ],
)  # fmt: skip
def test_the_learners_envs_check_their_arguments(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cls("knock_rummy", 2, opponents=["random"], **kwargs)


def test_the_batched_env_checks_its_seed_and_the_seat_env_its_render_mode():
    for seed, shown in [(1.7, "1.7"), ("3", "'3'"), (-1, "-1"), (None, "None")]:
        with pytest.raises(ValueError, match=rf"^seed must be a non-negative int, got {shown}$"):
            BatchedSeatEnv("knock_rummy", 2, num_envs=2, seed=seed)
    assert BatchedSeatEnv("knock_rummy", 2, num_envs=2, seed=np.int64(3))._seed == 3
    with pytest.raises(ValueError, match="render_mode must be None or 'ansi', got 'bogus'"):
        SeatEnv("knock_rummy", 2, render_mode="bogus")


def test_the_arena_and_replays_say_which_seeds_they_take():
    with pytest.raises(ValueError, match=r"^seed must be a non-negative int, got None$"):
        run_arena("knock_rummy", 2, ["random", "knock.greedy"], deals=1, seed=None)
    with pytest.raises(ValueError, match=r"^seed must be a non-negative int or None, got -2$"):
        record_game("knock_rummy", [make_agent("random", "knock_rummy", 2)] * 2, "ab", seed=-2)


class _NoSeat:
    name = "noseat"

    def reset(self) -> None:
        pass

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[0])


class _TwoArgs:
    name = "twoargs"

    def reset(self, seat=None) -> None:
        pass

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


def test_an_agent_whose_methods_cannot_be_called_as_the_players_call_them_is_refused(
    monkeypatch,
):
    module = types.ModuleType("badagents")
    module.NoSeat, module.TwoArgs = _NoSeat, _TwoArgs
    monkeypatch.setitem(sys.modules, "badagents", module)
    with pytest.raises(ValueError, match=r"agent 'badagents:NoSeat' is not a Policy: it lacks "
                       r"reset \(not callable as reset\(seat\)\)"):  # fmt: skip
        make_agent("badagents:NoSeat", "knock_rummy", 2)
    with pytest.raises(ValueError, match=r"lacks act \(not callable as act\(observation, "
                       r"action_mask, rng\)\)"):  # fmt: skip
        make_agent("badagents:TwoArgs", "knock_rummy", 2)
    # an object handed to the arena is checked the same way (it failed mid-game without a name)
    with pytest.raises(ValueError, match=r"agent 'noseat' is not a Policy: it lacks reset"):
        run_arena("knock_rummy", 2, [_NoSeat(), "random"], deals=1, seed=0)


def test_record_game_checks_its_policies_and_generators():
    random = make_agent("random", "knock_rummy", 2)
    with pytest.raises(ValueError, match=r"the policy at seat 0 is no agent \(it needs act and "
                       r"reset methods\): 1"):  # fmt: skip
        record_game("knock_rummy", [1, random], ["a", "b"], seed=1)
    for rngs in (5, [np.random.default_rng(0)], [0, 1]):
        with pytest.raises(ValueError, match=r"rngs must be a numpy Generator or a list of one "
                           r"per seat \(2\)"):  # fmt: skip
            record_game("knock_rummy", [random, random], ["a", "b"], seed=1, rngs=rngs)
    one = record_game("knock_rummy", [random, random], ["a", "b"], seed=1,
                      rngs=np.random.default_rng(0))  # fmt: skip
    assert len(one["final"]) == 2


def test_a_checkpoint_policy_refuses_another_games_arrays(tmp_path):
    path = untrained_checkpoint(tmp_path / "a.rz")
    policy = load_policy(path, "knock_rummy", 2, {})
    obs_size, num_actions = policy.meta["obs_size"], policy.meta["num_actions"]
    rng = np.random.default_rng(0)
    obs, mask = np.zeros(obs_size, np.float32), np.ones(num_actions, bool)
    with pytest.raises(ValueError, match=rf"observations of shape \(10,\) where this checkpoint's "
                       rf"game \(knock_rummy, 2 players\) has \({obs_size},\)"):  # fmt: skip
        policy.act(np.zeros(10, np.float32), mask, rng)
    with pytest.raises(ValueError, match=r"action masks of shape \(3,\)"):
        policy.act(obs, np.ones(3, bool), rng)
    with pytest.raises(ValueError, match=r"a\.rz: act called with an all-zero action mask$"):
        policy.act(obs, np.zeros(num_actions, bool), rng)
    masks = np.ones((3, num_actions), bool)
    masks[1] = False
    with pytest.raises(ValueError, match=r"all-zero action mask \(row 1\)"):
        policy.act_batch(np.zeros((3, obs_size), np.float32), masks, rng)
    with pytest.raises(ValueError, match=rf"observations of shape \(2, {obs_size}\) where .* has "
                       rf"\(3, {obs_size}\)"):  # fmt: skip
        policy.act_batch(np.zeros((2, obs_size), np.float32), np.ones((3, num_actions)), rng)
    assert 0 <= policy.act(obs, mask, rng) < num_actions


def test_agent_names_refuses_a_variant_that_is_no_game():
    from rummyzoo.agents.registry import agent_names

    assert agent_names("ditch_rummy")[:3] == ["random", "ditch.greedy", "ditch.smart"]
    for variant in ("bogus", ["knock_rummy"]):
        with pytest.raises(ValueError, match=r"unknown variant .*; variants: ditch_rummy, "
                           "knock_rummy, rummy500"):  # fmt: skip
            agent_names(variant)


def test_card_helpers_name_what_they_were_given():
    from rummyzoo.envs.cards import format_cards, parse_cards

    for cards, shown in [("As", r"'A' \(parse_card reads card strings\)"), ([1.0], "1.0"),
                         ([True], "True")]:  # fmt: skip
        with pytest.raises(ValueError, match=rf"card id must be an int 0-51, got {shown}"):
            format_cards(cards)
    with pytest.raises(
        ValueError, match="cards must be a string or a list of card strings, got None"
    ):
        parse_cards(None)
    assert format_cards([np.int64(0), 51]) == "Ac Ks"
    assert format_cards(parse_cards("As 2s")) == "As 2s"


def test_random_play_and_the_deadwood_solver_name_what_they_were_given():
    from rummyzoo.agents.random_agent import RandomPolicy
    from rummyzoo.envs.melds import optimal_deadwood

    mask = np.array([0, 1, 1], dtype=np.int8)
    policy = RandomPolicy()
    for rng in (None, 7, np.random.RandomState(0)):
        with pytest.raises(TypeError, match="numpy Generator"):
            policy.act(np.zeros(3), mask, rng)
        with pytest.raises(TypeError, match="numpy Generator"):
            policy.act_batch(np.zeros((1, 3)), mask[None], rng)
    assert policy.act(np.zeros(3), mask, np.random.default_rng(0)) in (1, 2)
    with pytest.raises(TypeError, match="parse_cards"):
        optimal_deadwood("As 2s 3s")
    for bad, error in [(None, TypeError), ([1.5], TypeError), ([True], TypeError), ([52], ValueError), ([-1], ValueError)]:  # fmt: skip
        with pytest.raises(error, match="card id"):
            optimal_deadwood(bad)
    assert optimal_deadwood(np.array([0, 1, 2]))[0] == 0  # A-2-3 of clubs


def test_command_line_options_are_taken_by_whole_names_only(capsys):
    """argparse would read ``--progress off`` as ``--progress-every off`` and complain about a
    number: a shortened or mistyped option is refused by its own name."""
    from rummyzoo.cli.main import main

    for argv, shown in [
        (["train", "configs/knock_ppo.yaml", "--progress", "off"], "--progress off"),
        (["arena", "knock_rummy", "--agents", "random", "random", "--deal", "5"], "--deal 5"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert f"unrecognized arguments: {shown}" in capsys.readouterr().err


def test_make_agent_and_load_policy_name_a_bad_argument(tmp_path) -> None:
    """An agent that is no string, a player count that is no int, an unknown variant: one
    clear error (they were AttributeError, TypeError, "num_players: checkpoint 2, env 2")."""
    from run_helpers import untrained_checkpoint

    from rummyzoo.agents.checkpoints import load_policy
    from rummyzoo.agents.registry import make_agent

    for spec in (None, 5):
        with pytest.raises(ValueError, match="an agent is named by a string"):
            make_agent(spec, "knock_rummy", 2)
    with pytest.raises(ValueError, match="num_players must be an int"):
        make_agent("knock.greedy", "knock_rummy", [1])
    with pytest.raises(ValueError, match="options must be a dict"):
        make_agent("knock.greedy", "knock_rummy", 2, [1])
    net = untrained_checkpoint(tmp_path / "net.rz")
    with pytest.raises(ValueError, match="num_players must be an int, got '2'"):
        load_policy(net, "knock_rummy", "2")
    with pytest.raises(ValueError, match="unknown variant 'knock'"):
        load_policy(net, "knock", 2)
    # the env's options are checked the same way whatever the agent: an unknown option (random
    # play and classes of your own took it without a word) and the player count given as an
    # option (a checkpoint failed on it with a bare TypeError) are refused by name
    from rummyzoo.envs.core import ConfigError

    for name in ("random", "knock.greedy", "rummyzoo.agents.random_agent:RandomPolicy", str(net)):
        with pytest.raises(ConfigError, match=r"unknown option.*: bogus"):
            make_agent(name, "knock_rummy", 2, {"bogus": 1})
        with pytest.raises(ConfigError, match="num_players is not an option here"):
            make_agent(name, "knock_rummy", 2, {"num_players": 2})
    with pytest.raises(ConfigError, match="num_players is not an option here"):
        load_policy(net, "knock_rummy", 2, {"num_players": 2})
    assert make_agent("random", "knock_rummy", 2, {"target_score": 100}).name == "random"
