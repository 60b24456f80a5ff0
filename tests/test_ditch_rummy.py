"""Ditch Rummy PettingZoo env: action table, observation, rendering, bad input (the API and seed
tests of every variant are in ``test_variants.py``)."""

from __future__ import annotations

import dataclasses
import textwrap
from itertools import pairwise

import numpy as np
import pytest
from test_ditch_rules import make

from rummyzoo.envs import ditch_rummy_v0
from rummyzoo.envs.cards import parse_card
from rummyzoo.envs.core import ConfigError, IllegalActionError
from rummyzoo.envs.decks import deck_for
from rummyzoo.envs.ditch_rummy.rules import DitchRummyRules
from rummyzoo.envs.ditch_rummy.scripting import play
from rummyzoo.envs.match import MATCH_OPTION_NAMES
from rummyzoo.envs.registry import VARIANTS, make_env


# ------------------------------------------------------------------ docs and registry
def test_docs_example_runs(capsys):
    doc = ditch_rummy_v0.__doc__
    code = doc.split(".. code-block:: python")[1].split("\nRules")[0]
    exec(textwrap.dedent(code), {})
    assert "hand over" in capsys.readouterr().out


def test_registered_and_benchable():
    from rummyzoo.cli.bench import bench_env

    assert VARIANTS["ditch_rummy"] == ("rummyzoo.envs.ditch_rummy_v0", (2, 3, 4))
    env = make_env("ditch_rummy", 3)
    assert env.unwrapped.metadata["name"] == "ditch_rummy_v0"
    result = bench_env("ditch_rummy", 2, seconds=0.05)
    assert result["decisions"] > 0 and result["games"] >= 1


# ------------------------------------------------------------------ action table
@pytest.mark.parametrize(
    ("options", "size"),
    [
        ({}, 16),
        ({"single_extends_meld": True}, 22),
        ({"draw_rule": "up_to_3"}, 53),
        ({"draw_rule": "up_to_3", "max_hand": 10}, 4 + 45 + 120 + 10 + 10 + 2),
    ],
)
def test_action_names_round_trip(options, size):
    raw = ditch_rummy_v0.raw_env(**options)
    n = raw.action_space("player_0").n
    assert n == size
    names = [raw.action_name(a) for a in range(n)]
    assert len(set(names)) == n
    assert all(raw.action_index(name) == a for a, name in enumerate(names))
    assert all(raw.action_index(name.upper()) == a for a, name in enumerate(names))


def test_documented_action_ids():
    raw = ditch_rummy_v0.raw_env()
    expected = {
        "draw 0": 0,
        "draw 3": 3,
        "meld 0 1": 4,
        "meld 0 2": 5,
        "meld 1 2": 6,
        "meld 0 1 2": 7,
        "single 0": 8,
        "single 2": 10,
        "ditch 0": 11,
        "ditch 2": 13,
        "ditch all": 14,
        "end turn": 15,
    }
    assert {name: raw.action_index(name) for name in expected} == expected
    with pytest.raises(ValueError, match="unknown action name"):
        raw.action_index("meld 2 1")
    with pytest.raises(IllegalActionError, match="out of range"):
        raw.action_name(16)
    extends = ditch_rummy_v0.raw_env(single_extends_meld=True)
    assert [extends.action_name(a) for a in range(8, 11)] == [
        "single 0 set",
        "single 0 below",
        "single 0 above",
    ]


def test_describe_action_names_the_cards():
    env = make(top="9c 9h Ad")
    play(env, ["draw 3"])
    assert env.describe_action(env.action_index("meld 0 1")) == "meld 0 1: set 9c 9h (+5)"
    assert env.describe_action(env.action_index("meld 1 2")) == "meld 1 2: 9h Ad (not a meld)"
    assert env.describe_action(env.action_index("ditch 2")) == "ditch 2: Ad"
    assert env.describe_action(env.action_index("ditch all")) == "ditch all: 9c 9h Ad"
    assert env.describe_action(env.action_index("end turn")) == "end turn (pass)"
    play(env, ["meld 0 1"])
    assert env.describe_action(env.action_index("single 0")) == "single 0: Ad (+10)"
    # what is no action id is refused as step refuses it (a float, a bool, a string was read)
    for bad in (1.7, True, "2", None, env.game.num_actions):
        with pytest.raises(IllegalActionError):
            env.describe_action(bad)


def test_describe_action_for_the_other_seats_leaves_out_the_positions():
    """Where a card sat in the sorted hidden hand tells how the cards still hidden rank against
    it, so the other seats are told the cards a move puts face up, not their positions."""
    env = make(top="9c 9h Ad")
    game, s = env.game, env.hand_state
    assert game.describe_action(s, env.action_index("draw 3"), public=True) == "draw 3"
    play(env, ["draw 3"])

    def public(name):
        return game.describe_action(s, env.action_index(name), public=True)

    assert public("meld 0 1") == "meld: set 9c 9h (+5)"
    assert public("ditch 2") == "ditch: Ad"
    assert public("ditch all") == "ditch all: 9c 9h Ad"
    assert public("end turn") == "end turn (pass)"
    play(env, ["meld 0 1"])
    assert public("single 0") == "single: Ad (+10)"
    assert env.describe_action(env.action_index("single 0")) == "single 0: Ad (+10)"


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    ("num_players", "options", "message"),
    [
        (3, {"teams": True}, "teams=True needs num_players=4"),
        (5, {}, "num_players must be in"),
        (1, {}, "num_players must be in"),
        (2, {"draw_rule": "fill_to_4"}, "draw_rule must be one of"),
        (2, {"hand_penalty": "double"}, "hand_penalty must be one of"),
        (2, {"max_hand": 5}, "max_hand must be None or 3 with draw_rule='fill_to_3'"),
        (2, {"draw_rule": "up_to_3", "max_hand": 11}, "max_hand must be in"),
        (2, {"draw_rule": "up_to_3", "max_hand": 2}, "max_hand must be in"),
        (2, {"points_run": -1}, "points_run must be in"),
        (2, {"points_run": 2**24}, r"points_run must be in \[0, 16777215\]"),
        (2, {"points_single_ace": 2**24}, r"points_single_ace must be in \[0, 16777215\]"),
        (2, {"points_set": 2.5}, "points_set must be int"),
        (2, {"teams": "yes"}, "teams must be bool"),
        (2, {"target_score": 0}, "target_score must be in"),
        (2, {"max_turns": 0}, "max_turns must be in"),
        (2, {"first_dealer": 2}, "first_dealer must be in"),
        (2, {"runs_same_suits": True}, r"unknown option.*did you mean 'runs_same_suit'\?"),
        (2, {"target_scor": 500}, r"did you mean 'target_score'\?.*match options: .*max_hands"),
        (2, {"reward": "money"}, "reward must be one of"),
        (2, {"render_mode": "rgb_array"}, "render_mode must be one of"),
    ],
)
def test_bad_options(num_players, options, message):
    with pytest.raises(ConfigError, match=message):
        ditch_rummy_v0.env(num_players=num_players, **options)


def test_rules_config_is_frozen_and_complete():
    rules = DitchRummyRules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.teams = True  # type: ignore[misc]
    names = {f.name for f in dataclasses.fields(DitchRummyRules)}
    assert names >= {
        "teams",
        "draw_rule",
        "runs_same_suit",
        "single_extends_meld",
        "points_single",
        "points_single_ace",
        "points_set",
        "points_run",
        "hand_penalty",
    }
    assert (rules.max_hand, rules.draw_rule) == (3, "fill_to_3")
    game = ditch_rummy_v0.raw_env().game
    assert (game.match.target_score, game.match.max_turns) == (500, 500)
    doc = ditch_rummy_v0.__doc__
    names |= set(MATCH_OPTION_NAMES)
    for name in names:  # every option, the variant's and the shared ones, is documented
        assert f"\n{name} " in doc, name


def test_illegal_actions_raise_clearly():
    env = ditch_rummy_v0.env()
    env.reset(seed=1, options={"deck": deck_for(stock="9c 9h Kd")})
    with pytest.raises(IllegalActionError, match=r"illegal action 4 \(meld 0 1\) for player_0"):
        env.step(4)  # melding before drawing
    env.step(3)
    with pytest.raises(IllegalActionError, match=r"holds \[0\]9c \[1\]9h \[2\]Kd"):
        env.step(env.unwrapped.action_index("meld 1 2"))
    with pytest.raises(IllegalActionError, match="not an action id"):
        env.step("meld")
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(99)


def test_bad_deck():
    env = ditch_rummy_v0.env()
    with pytest.raises(ValueError, match="deck must hold each of the 52 cards"):
        env.reset(options={"deck": ["As"] * 52})
    with pytest.raises(ValueError, match="not a card"):
        env.reset(options={"deck": [*deck_for(stock="9c")[:-1], "Xx"]})


# ------------------------------------------------------------------ observation
def plane(obs: np.ndarray, layout, name: str, k: int = 0) -> set[int]:
    start, _ = layout[name]
    return set(np.flatnonzero(obs[start + 52 * k : start + 52 * (k + 1)]).tolist())


def value(obs: np.ndarray, layout, name: str) -> list[float]:
    start, stop = layout[name]
    return obs[start:stop].tolist()


@pytest.mark.parametrize(("players", "size"), [(2, 747), (3, 909), (4, 1071)])
def test_observation_layout(players, size):
    game = ditch_rummy_v0.raw_env(num_players=players).game
    layout = game.observation_layout
    assert game.obs_size == size == 52 * 3 + 162 * players + 267
    spans = sorted(layout.values())
    assert spans[0][0] == 0 and spans[-1][1] == size
    assert all(a[1] == b[0] for a, b in pairwise(spans))
    assert layout["hand_positions"][1] - layout["hand_positions"][0] == 3 * 52
    assert layout["sets"][1] - layout["sets"][0] == 52 * players


def test_observation_from_each_seat():
    env = make(num_players=3, top="4c 5h 9d 9s 6c 2d")
    layout = env.game.observation_layout
    play(env, ["draw 3", "meld 0 1", "end turn"])  # player_0: run 4c 5h, keeps 9d
    play(env, ["draw 3"])  # player_1: 2d 6c 9s
    obs1 = env.observe("player_1")["observation"]
    card = parse_card
    assert plane(obs1, layout, "hand") == {card("2d"), card("6c"), card("9s")}
    for i, c in enumerate(["2d", "6c", "9s"]):
        assert plane(obs1, layout, "hand_positions", i) == {card(c)}
    assert plane(obs1, layout, "runs", 2) == {card("4c"), card("5h")}  # player_0 is 2 seats on
    assert plane(obs1, layout, "runs", 0) == set()
    assert plane(obs1, layout, "fits_below_run") == {card(r + s) for r in "3" for s in "cdhs"}
    assert plane(obs1, layout, "fits_above_run") == {card("6" + s) for s in "cdhs"}
    assert value(obs1, layout, "phase") == [0, 1, 0]
    assert value(obs1, layout, "to_act") == [1, 0, 0]
    assert value(obs1, layout, "dealer") == [0, 1, 0]  # player_2 dealt the first hand
    assert value(obs1, layout, "hand_sizes") == pytest.approx([1, 0, 1 / 3])
    assert value(obs1, layout, "hand_points") == pytest.approx([0, 0, 0.25])
    assert value(obs1, layout, "drawn") == [1.0]
    assert value(obs1, layout, "draw_pile") == pytest.approx([46 / 52])
    assert value(obs1, layout, "teammates") == [1, 0, 0]
    obs0 = env.observe("player_0")["observation"]
    assert plane(obs0, layout, "hand") == {card("9d")}
    assert plane(obs0, layout, "runs", 0) == {card("4c"), card("5h")}
    assert value(obs0, layout, "phase") == [0, 0, 0]
    assert value(obs0, layout, "to_act") == [0, 1, 0]
    assert not env.observe("player_0")["action_mask"].any()
    play(env, ["single 1", "ditch 0"])  # 6c above the run, then ditch 2d
    obs2 = env.observe("player_2")["observation"]
    assert plane(obs2, layout, "singles", 2) == {card("6c")}
    assert plane(obs2, layout, "discard_pile") == {card("2d")}
    assert plane(obs2, layout, "fits_above_run") == {card("6" + s) for s in "cdhs"}
    assert value(obs2, layout, "phase") == [0, 0, 0]
    assert value(env.observe("player_1")["observation"], layout, "phase") == [0, 0, 1]


def test_observation_teams_and_fits_for_sets():
    env = make(num_players=4, teams=True, top="9c 9h Kd")
    layout = env.game.observation_layout
    play(env, ["draw 3", "meld 0 1"])
    obs = env.observe("player_1")["observation"]
    assert value(obs, layout, "teammates") == [1, 0, 1, 0]
    assert plane(obs, layout, "sets", 3) == {parse_card("9c"), parse_card("9h")}
    assert plane(obs, layout, "fits_set") == {parse_card("9" + s) for s in "cdhs"}


# ------------------------------------------------------------------ rendering and infos
def test_render_ansi_and_human(capsys):
    env = ditch_rummy_v0.env(render_mode="ansi", target_score=None)
    env.reset(options={"deck": deck_for(stock="9c 9h Kd")})
    env.step(3)
    text = env.render()
    assert "player_0 to play (drew 3)" in text
    assert "player_0: hand [0]9c [1]9h [2]Kd" in text
    assert "legal: meld 0 1: set 9c 9h (+5), ditch 0: 9c" in text
    assert "draw pile: 49 cards" in text
    hidden = ditch_rummy_v0.env(render_mode="ansi", render_view=1, target_score=None)
    hidden.reset(options={"deck": deck_for(stock="9c 9h Kd")})
    hidden.step(3)
    text = hidden.render()
    assert "player_0: hand 3 cards" in text and "9c" not in text and "legal" not in text
    human = ditch_rummy_v0.env(render_mode="human")
    human.reset(seed=3)
    human.step(2)
    assert "Ditch Rummy | dealer player_1" in capsys.readouterr().out
    quiet = ditch_rummy_v0.env()
    quiet.reset(seed=3)
    assert quiet.render() is None  # no render mode: a warning, no output


def test_render_names_a_ten_as_on_its_cards():
    env = make(top="Tc Th 2d 9s Ts Js", render_mode="ansi")
    play(env, ["draw 3", "meld 1 2"])  # the hand is sorted: [0]2d [1]Tc [2]Th
    assert "singles fit: sets 10" in env.render()


def test_render_after_the_hand_and_infos():
    env = make(top="Ac 5d 9h Jc Qd Kh", render_mode="ansi")
    play(env, ["draw 3", "end turn", "draw 3", "meld 0 1 2"])
    text = env.render()
    assert "hand over (blind run by player_1)" in text
    assert "player_0: hand [0]5d [1]9h [2]Ac" in text and "hand points -14" in text
    assert "melds run Jc Qd Kh" in text
    info = env.infos["player_1"]
    assert info["end_reason"] == "blind_run" and info["melds"] == ["run Jc Qd Kh"]
    assert info["hand_index"] == 1 and "totals" not in info


@pytest.mark.parametrize(
    ("mode", "expected"), [("points", [-14, 25]), ("scaled", [-1.4, 2.5]), ("win_loss", [-1, 1])]
)
def test_reward_modes(mode, expected):
    env = make(top="Ac 5d 9h Jc Qd Kh", reward=mode, reward_scale=10)
    play(env, ["draw 3", "end turn", "draw 3", "meld 0 1 2"])
    assert [env.rewards["player_0"], env.rewards["player_1"]] == pytest.approx(expected)


def test_the_rules_document_states_the_action_counts_of_the_hand_limit():
    """docs/rules.md explains the environment's hand limit under up_to_3 by the action counts
    it gives: they are the env's."""
    import re
    from pathlib import Path

    from rummyzoo.envs.registry import make_game

    text = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()
    found = re.search(r"\((\d+) at 6 cards, (\d+) at 10\)", text)
    assert found is not None
    for limit, stated in zip((6, 10), found.groups(), strict=True):
        game = make_game("ditch_rummy", 2, draw_rule="up_to_3", max_hand=limit)
        assert game.num_actions == int(stated)
