"""500 Rum PettingZoo env: observations, rendering and bad input (the API and seed tests of every
variant are in ``test_variants.py``)."""

from __future__ import annotations

import pytest
from state_helpers import rummy500_state
from test_rummy500_helpers import make, plane, play, points

from rummyzoo.envs import rummy500_v0
from rummyzoo.envs.cards import CARD_NAMES, parse_card
from rummyzoo.envs.core import ConfigError, IllegalActionError
from rummyzoo.envs.decks import deck_for
from rummyzoo.envs.registry import make_env


def test_registry_and_spaces():
    env = make_env("rummy500", 5)
    env.reset(seed=0)
    raw = env.unwrapped
    assert raw.metadata["name"] == "rummy500_v0"
    assert raw.game.num_decks == 2 and len(raw.deck) == 104
    assert raw.action_space("player_0").n == 414
    layout = raw.game.observation_layout
    assert raw.game.obs_size == 52 * (2 * 5 + 8) + 5 * 5 + 6
    assert list(layout)[-1] == "scores" and layout["scores"][1] == raw.game.obs_size
    assert rummy500_v0.raw_env(num_players=2).game.obs_size == 588
    assert rummy500_v0.raw_env(num_players=4).game.obs_size == 806


def test_default_options_by_player_count():
    assert rummy500_v0.raw_env(num_players=2).rules.hand_size == 10
    for players in (3, 4, 5, 8):
        rules = rummy500_v0.raw_env(num_players=players).rules
        assert rules.hand_size == 7
        assert rules.num_decks == (1 if players <= 4 else 2)
    game = rummy500_v0.raw_env().game
    assert game.match.target_score == 500 and game.match.max_turns == 300
    rules = game.rules
    assert rules.top_discard_free is False and rules.stock_exhaustion == "discard_only"


def test_action_names_round_trip():
    raw = rummy500_v0.raw_env()
    names = [raw.action_name(a) for a in range(414)]
    assert len(set(names)) == 414
    assert all(raw.action_index(n) == a for a, n in enumerate(names))
    assert raw.action_index("draw stock") == 0 and raw.action_index("pass") == 1
    assert raw.action_index("dig 7h") == 2 + parse_card("7h")
    assert raw.action_index("dig 7h deep") == 54 + parse_card("7h")
    assert raw.action_index("meld Ac 2c 3c") == 106
    assert raw.action_index("meld Qs Ks As") == 106 + 47
    assert raw.action_index("meld 2c 2d 2h") == 106 + 48 + 4
    assert raw.action_index("meld 6h 4h 5h") == raw.action_index("meld 4h 5h 6h")
    assert raw.action_index("lay off Ah on set") == 206 + parse_card("Ah")
    assert raw.action_index("lay off Ah below run") == 258 + parse_card("Ah")
    assert raw.action_index("lay off Ah above run") == 310 + parse_card("Ah")
    assert raw.action_index("Discard  10h") == 362 + parse_card("Th")
    for bad in ["meld Kh Ah 2h", "meld 7c 7c 7d", "dig", "lay off Xx on set"]:
        with pytest.raises(ValueError, match="unknown action name"):
            raw.action_index(bad)
    with pytest.raises(IllegalActionError, match="out of range"):
        raw.action_name(414)


def test_observation_tracks_public_information():
    env = make(["Jc Qc 4h 9d", "2d 5s 8h Kd"], up="Tc", stock="2s 3d 6c")
    obs0 = env.observe("player_0")["observation"]
    layout = env.game.observation_layout
    assert obs0[layout["phase"][0]] == 1  # player_0 to draw
    assert obs0[layout["stock_size"][0]] == pytest.approx(43 / 52)
    assert obs0[layout["discard_size"][0]] == pytest.approx(1 / 52)
    assert plane(env, "player_0", "discard_top") == {"Tc": 1}
    assert plane(env, "player_0", "hand") == {"Jc": 1, "Qc": 1, "4h": 1, "9d": 1}
    assert plane(env, "player_1", "hand") == {"2d": 1, "5s": 1, "8h": 1, "Kd": 1}
    obs1 = env.observe("player_1")["observation"]
    assert not obs1[layout["phase"][0] : layout["phase"][1]].any()  # not its turn
    assert env.observe("player_1")["action_mask"].sum() == 0
    play(env, ["dig Tc", "meld Tc Jc Qc", "discard 9d"])
    obs1 = env.observe("player_1")["observation"]
    start = layout["table_points"][0]
    assert list(obs1[start : start + 2]) == pytest.approx([0, 0.3])  # self, then player_0
    start = layout["hand_sizes"][0]
    assert list(obs1[start : start + 2]) == pytest.approx([4 / 52, 1 / 52])
    assert obs1[layout["turn"][0]] == pytest.approx(1 / 300)
    assert plane(env, "player_1", "table_laid", 1) == {"Tc": 1, "Jc": 1, "Qc": 1}
    assert plane(env, "player_1", "table_laid", 0) == {}
    assert plane(env, "player_1", "fits_below_run") == {"9c": 1}
    assert plane(env, "player_1", "fits_above_run") == {"Kc": 1}
    assert plane(env, "player_1", "discard_top") == {"9d": 1}
    assert plane(env, "player_1", "opponent_known") == {}


def test_observation_relative_seats():
    env = rummy500_v0.raw_env(num_players=3)
    env.reset(seed=3)
    layout = env.game.observation_layout
    to_act = layout["to_act"][0]
    dealer = layout["dealer"][0]
    assert env.observe("player_0")["observation"][to_act] == 1  # self
    assert env.observe("player_1")["observation"][to_act + 2] == 1  # two seats on
    assert env.observe("player_2")["observation"][to_act + 1] == 1
    assert env.observe("player_0")["observation"][dealer + 2] == 1  # player_2 deals


def test_scores_in_observation_follow_match_totals():
    env = make(["Ah 2h 3h", "9c 9d Ks"], up="Kc", stock="5d", target_score=100)
    play(env, ["draw stock", "meld Ah 2h 3h", "discard 5d"])
    start, stop = env.game.observation_layout["scores"]
    assert list(env.observe("player_1")["observation"][start:stop]) == pytest.approx([-0.28, 0.06])


def test_render_ansi_and_human(capsys):
    hands = ["4h 5h 6h 9s", "7h 8c 8d 8s"]
    env = make(hands, up="Kc", stock="2d 3c", render_mode="ansi")
    text = env.render()
    assert "discard pile (bottom to top): Kc" in text and "stock: 43" in text
    assert "player_0 (table 0): 4h 5h 6h 9s" in text and "player_0 to draw" in text
    play(env, ["draw stock", "meld 4h 5h 6h", "discard 2d", "draw stock", "lay off 7h above run"])
    text = env.render()
    assert "run 4h/p0 5h/p0 6h/p0 7h/p1" in text
    assert "discard pile (bottom to top): Kc 2d" in text
    assert "player_1 (table 7): 3c 8c 8d 8s" in text
    play(env, ["meld 8c 8d 8s", "discard 3c"])
    text = env.render()
    assert "hand over (went out by player_1)" in text
    assert "set 8c/p1 8d/p1 8s/p1" in text
    assert "player_0 (table 15): hand 9s = -9 ; points +6" in text
    assert "player_1 (table 31): hand empty ; points +31" in text
    match = make(hands, up="Kc", render_mode="ansi", target_score=500)
    assert "scores: player_0 0, player_1 0 (target 500)" in match.render()
    hidden = make(hands, up="Kc", render_mode="ansi", render_view=1)
    text = hidden.render()
    assert "4h 5h 6h" not in text and "player_0 (table 0): [4 cards]" in text
    assert "player_1 (table 0): 8c 8d 7h 8s" in text  # id order: suit, then rank
    human = make(hands, up="Kc", render_mode="human")
    assert human.render() is None
    assert "discard pile (bottom to top): Kc" in capsys.readouterr().out
    human.step(0)  # human mode renders after every step
    assert "player_0 to meld, lay off or discard" in capsys.readouterr().out


def test_render_shows_cards_known_to_be_held():
    env = make(
        ["Jc Qc 4h 9d", "2d 5s 8h Kd"], up="Tc", stock="2s", render_mode="ansi", render_view=1
    )
    play(env, ["dig Tc", "meld Tc Jc Qc"])
    assert "must use" not in env.render()
    env2 = make(
        ["Jc Qc 4h 9d", "2d 5s 8h Kd"], up="Tc", stock="2s", render_mode="ansi", render_view=1
    )
    play(env2, ["dig Tc"])
    assert "player_0 must use Tc" in env2.render() and "holds Tc" in env2.render()


@pytest.mark.parametrize("players", [0, 1, 9, 2.0, "2", True])
def test_bad_player_counts(players):
    with pytest.raises(ConfigError, match="num_players"):
        rummy500_v0.env(num_players=players)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"decks": 2}, "unknown option.*decks"),
        ({"hand_size": 26}, "hand_size=26 leaves no stock"),
        ({"hand_size": 0}, "hand_size"),
        ({"hand_size": "7"}, "hand_size must be"),
        ({"top_discard_free": 1}, "top_discard_free must be bool"),
        ({"stock_exhaustion": "void"}, "stock_exhaustion must be one of"),
        ({"target_score": 0}, "target_score"),
        ({"target_score": 500.0}, "target_score must be"),
        ({"max_turns": 0}, "max_turns"),
        ({"first_dealer": 2}, "first_dealer"),
        ({"reward": "elo"}, "reward must be one of"),
        ({"render_mode": "rgb_array"}, "render_mode"),
    ],
)
def test_bad_options(options, match):
    with pytest.raises(ConfigError, match=match):
        rummy500_v0.env(num_players=2, **options)


def test_two_deck_hand_size_limit():
    rummy500_v0.raw_env(num_players=5, hand_size=20)  # 100 + 2 <= 104
    with pytest.raises(ConfigError, match="need players\\*hand_size \\+ 2 <= 104"):
        rummy500_v0.raw_env(num_players=5, hand_size=21)


def test_illegal_actions_raise_clearly_and_lose_nothing():
    env = rummy500_v0.env(num_players=2)
    env.reset(seed=1)
    state = env.unwrapped.hand_state
    before = rummy500_state(state)
    with pytest.raises(IllegalActionError, match=r"illegal action 362 \(discard Ac\) for player_0"):
        env.step(362)
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(500)
    with pytest.raises(IllegalActionError, match="not an action id"):
        env.step("draw")
    assert before == rummy500_state(state)
    assert env.unwrapped.hand_state is state
    env.step(0)  # the game goes on
    assert env.unwrapped.hand_state.phase == 1


def test_bad_reset_input():
    env = rummy500_v0.env(num_players=5)
    with pytest.raises(ValueError, match="exactly 2"):
        env.reset(options={"deck": list(CARD_NAMES)})  # one deck for a two-deck game
    with pytest.warns(UserWarning, match="ignores unknown option"):
        env.reset(options={"dealer": 1})


def test_reward_modes():
    hands = ["Ah 2h 3h", "9c 9d Ks"]
    for mode, expected in [("points", (6, -28)), ("scaled", (0.06, -0.28)), ("win_loss", (1, -1))]:
        env = make(hands, up="Kc", stock="5d", reward=mode)
        play(env, ["draw stock", "meld Ah 2h 3h", "discard 5d"])
        assert env.rewards["player_0"] == pytest.approx(expected[0])
        assert env.rewards["player_1"] == pytest.approx(expected[1])
        assert points(env) == [6, -28]  # raw points whatever the reward mode


def test_first_dealer_option():
    deck = deck_for(["Ah 2h 3h", "9c 9d Ks"], "Kc", dealer=0)
    env = rummy500_v0.raw_env(num_players=2, hand_size=3, first_dealer=0)
    env.reset(seed=0, options={"deck": deck})
    assert env.agent_selection == "player_1"
    assert env.hand_state.hand_cards(0) == [parse_card(c) for c in ["Ah", "2h", "3h"]]


def test_truncation_at_max_turns():
    env = rummy500_v0.raw_env(num_players=2, max_turns=3, target_score=None)
    env.reset(seed=5)
    for _agent in env.agent_iter(max_iter=100):
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            assert trunc and not term and info["truncated_by"] == "max_turns=3"
            env.step(None)
            continue
        mask = obs["action_mask"]
        # Draw and throw the drawn card back: three quiet turns.
        env.step(0 if mask[0] else 362 + env.hand_state.stock[env.hand_state.stock_pos - 1])
    assert env.hand_state.turn == 3 and not env.hand_state.over
