"""Knock Rummy PettingZoo env: observations, rendering and bad input (the API and seed tests of
every variant are in ``test_variants.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from knock_helpers import make, play

from rummyzoo.envs import knock_rummy_v0
from rummyzoo.envs.cards import parse_card
from rummyzoo.envs.core import ConfigError, IllegalActionError
from rummyzoo.envs.decks import deck_for

JUNK_56 = "Ac 3c 5c 7c Jc 2d 4d 6d 8d Td"


def test_action_names_round_trip():
    raw = knock_rummy_v0.raw_env()
    names = [raw.action_name(a) for a in range(raw.action_space("player_0").n)]
    assert len(set(names)) == 106
    assert all(raw.action_index(n) == a for a, n in enumerate(names))
    assert raw.action_index("draw stock") == 0 and raw.action_index("take discard") == 1
    assert raw.action_index("discard Kh") == 2 + parse_card("Kh")
    assert raw.action_index("knock Kh") == 54 + parse_card("Kh")
    assert raw.action_index("Knock  10h") == raw.action_index("knock Th")
    with pytest.raises(ValueError, match="unknown action name"):
        raw.action_index("meld Kh")
    with pytest.raises(IllegalActionError, match="out of range"):
        raw.action_name(106)


def test_observation_tracks_public_information():
    env = make(2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="2c 7s")
    layout = env.game.observation_layout

    def plane(obs, name, k=0):
        start, _ = layout[name]
        return set(np.flatnonzero(obs[start + 52 * k : start + 52 * (k + 1)]).tolist())

    play(env, ["take discard", "discard Kc"])  # player_0 takes Ks, throws Kc
    obs1 = env.observe("player_1")["observation"]
    assert plane(obs1, "opponent_known") == {parse_card("Ks")}
    assert plane(obs1, "opponent_thrown") == {parse_card("Kc")}
    assert plane(obs1, "top_discard") == {parse_card("Kc")}
    assert plane(obs1, "buried_discards") == set()
    assert plane(obs1, "hand") == {parse_card(c) for c in JUNK_56.split()}
    assert obs1[layout["phase"][0]] == 1  # player_1 to draw
    play(env, ["draw stock", "discard 2c"])
    obs0 = env.observe("player_0")["observation"]
    assert plane(obs0, "buried_discards") == {parse_card("Kc")}
    assert plane(obs0, "top_discard") == {parse_card("2c")}
    assert plane(obs0, "opponent_thrown") == {parse_card("2c")}
    assert plane(obs0, "opponent_known") == set()
    assert obs0[layout["stock_size"][0]] == pytest.approx(30 / 52)
    # player_1 still sees that player_0 holds Ks.
    assert plane(env.observe("player_1")["observation"], "opponent_known") == {parse_card("Ks")}
    assert env.observe("player_1")["action_mask"].sum() == 0  # not its turn


def test_observation_relative_seats():
    env = knock_rummy_v0.raw_env(num_players=3)
    env.reset(seed=3)
    layout = env.game.observation_layout
    to_act = layout["to_act"][0]
    assert env.observe("player_0")["observation"][to_act] == 1  # self
    assert env.observe("player_1")["observation"][to_act + 2] == 1  # two seats on
    assert env.observe("player_2")["observation"][to_act + 1] == 1


def test_render_ansi_and_human(capsys):
    env = make(
        2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="2c", render_mode="ansi"
    )
    text = env.render()
    assert "top discard: Ks" in text and "As 2s 3s" in text and "stock: 31" in text
    play(env, ["draw stock", "knock Kc"])
    text = env.render()
    assert (
        "melds 9c 9d 9h | 4h 5h 6h | As 2s 3s ;" in text
        and "deadwood 2c = 2" in text
        and "points +54" in text
    )
    hidden = make(
        2,
        ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56],
        up="Ks",
        stock="2c",
        render_mode="ansi",
        render_view=1,
    )
    assert "As 2s 3s" not in hidden.render() and "[10 cards]" in hidden.render()
    human = make(
        2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="2c", render_mode="human"
    )
    human.render()
    assert "top discard: Ks" in capsys.readouterr().out


@pytest.mark.parametrize("players", [0, 1, 7, 2.0, "2", True])
def test_bad_player_counts(players):
    with pytest.raises(ConfigError, match="num_players"):
        knock_rummy_v0.env(num_players=players)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"knock_limit": 10}, "unknown option.*knock_limit"),
        ({"rummy_bonus": "25"}, "rummy_bonus must be int"),
        ({"allow_discard_of_taken": 1}, "allow_discard_of_taken must be bool"),
        ({"undercut_penalty_to": "everyone"}, "undercut_penalty_to must be one of"),
        ({"split_rounding": "round"}, "split_rounding"),
        ({"stock_exhaustion": "redeal"}, "stock_exhaustion"),
        ({"hand_size": 30}, "hand_size=30 leaves no stock"),
        ({"void_threshold": -1}, "void_threshold"),
        ({"target_score": 0}, "target_score"),
        ({"max_turns": 0}, "max_turns"),
        ({"reward": "elo"}, "reward must be one of"),
        ({"reward_scale": 0}, "reward_scale"),
        ({"reward_scale": float("nan")}, "reward_scale must be a finite positive number"),
        ({"reward_scale": float("inf")}, "reward_scale must be a finite positive number"),
        ({"reward_scale": 5e-324}, r"reward_scale must be at least 1e-06 .*got 5e-324"),
        ({"allow_discard_of_taken": np.int64(1)}, "allow_discard_of_taken must be bool"),
        ({"render_mode": "rgb_array"}, "render_mode"),
        ({"first_dealer": 2}, "first_dealer"),
    ],
)
def test_bad_options(options, match):
    with pytest.raises(ConfigError, match=match):
        knock_rummy_v0.env(num_players=2, **options)


def test_numpy_numbers_are_options_like_python_ones():
    env = knock_rummy_v0.env(
        num_players=np.int64(3), target_score=np.int64(100), reward_scale=np.float32(50)
    )
    raw = env.unwrapped
    assert raw.game.rules.num_players == 3 and type(raw.game.rules.num_players) is int
    assert raw.game.match.target_score == 100 and type(raw.game.match.target_score) is int
    assert type(raw.game.match.reward_scale) is float
    env.reset(seed=1)
    assert len(env.agents) == 3


def test_illegal_actions_raise_clearly_and_lose_nothing():
    env = knock_rummy_v0.env(num_players=2)
    env.reset(seed=1)
    before = env.unwrapped.hand_state.planes.copy()
    with pytest.raises(
        IllegalActionError,
        match=r"illegal action 2 \(discard Ac\) for player_0; legal actions: draw stock, take discard",
    ):
        env.step(2)
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(500)
    with pytest.raises(IllegalActionError, match="not an action id"):
        env.step("draw")
    assert np.array_equal(before, env.unwrapped.hand_state.planes)
    env.step(0)  # the game goes on
    assert env.unwrapped.hand_state.phase == 1


def test_bad_reset_input():
    env = knock_rummy_v0.env()
    with pytest.raises(ValueError, match="exactly 1"):
        env.reset(options={"deck": ["As", "2s"]})
    with pytest.warns(UserWarning, match="ignores unknown option.*dealer"):
        env.reset(options={"dealer": 1})
    with pytest.raises(ValueError, match="seed must be"):
        env.reset(seed=-3)
    # the warning names the caller's line, through env()'s wrapper too (it named the wrapper's,
    # so Python showed it once for every misspelt reset of a program)
    for made in (knock_rummy_v0.env(), knock_rummy_v0.raw_env()):
        with pytest.warns(UserWarning, match="ignores unknown option") as caught:
            made.reset(options={"dekc": []})
        assert [w.filename for w in caught] == [__file__]


def test_reward_modes():
    hands = ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56]
    for mode, expected in [
        ("points", 54),
        ("scaled", 0.54),
        ("win_loss", 1.0),
        ("rank", 1.0),
        ("lead", 1.08),
    ]:
        env = make(2, hands, up="Ks", stock="2c", reward=mode)
        play(env, ["draw stock", "knock Kc"])
        assert env.rewards["player_0"] == pytest.approx(expected)
        assert env.rewards["player_1"] == pytest.approx(-expected)
        assert env.infos["player_0"]["points"] == 54  # raw points whatever the reward mode


def test_win_loss_void_hand_is_zero():
    env = knock_rummy_v0.raw_env(num_players=2, reward="win_loss")
    env.reset(seed=2)
    while not any(env.terminations.values()):
        drawn = env.hand_state.stock_cards()[0]
        env.step(0)
        env.step(2 + drawn)
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}


def test_reset_without_seed_continues_and_deck_only_first_hand():
    deck = deck_for(["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], "Ks", "2c")
    env = knock_rummy_v0.raw_env()
    env.reset(seed=1, options={"deck": deck})
    assert list(env.deck) == [parse_card(c) for c in deck]
    env.reset()
    assert list(env.deck) != [parse_card(c) for c in deck]


def test_max_hands_truncates_an_undecided_match():
    env = knock_rummy_v0.raw_env(num_players=2, target_score=10**6, max_hands=3)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not any(env.truncations.values()):
        assert not any(env.terminations.values())
        env.step(int(rng.choice(env.legal_actions())))
    assert env.match.hand_index == 3 and env.infos["player_0"]["truncated_by"] == "max_hands=3"
    with pytest.raises(ConfigError, match="max_hands"):
        knock_rummy_v0.env(max_hands=0)


def test_a_hand_cut_by_the_turn_cap_has_its_own_infos():
    env = knock_rummy_v0.raw_env(num_players=2, target_score=1000, max_turns=4)
    env.reset(seed=5)
    env.step(env.action_index("draw stock"))
    env.step(next(a for a in env.legal_actions() if env.action_name(a).startswith("knock")))
    first = env.infos["player_0"]
    assert first["hand_index"] == 1 and "points" in first and "truncated_by" not in first
    totals = env.match.totals_by_seat().tolist()
    while not any(env.truncations.values()):  # hand 2: draws and discards, cut at 4 turns
        names = {env.action_name(a): a for a in env.legal_actions()}
        env.step(names.get("draw stock") or next(a for n, a in names.items() if "discard" in n))
    for seat, agent in enumerate(env.possible_agents):
        info = env.infos[agent]
        assert info["truncated_by"] == "max_turns=4" and info["hand_index"] == 2
        assert "points" not in info  # the cut hand scores nothing; hand 1's points are gone
        assert info["totals"] == totals[seat] and info["match_totals"]["player_0"] == totals[0]


def test_bench_env_cli_writes_the_promised_json(tmp_path, capsys):
    import json

    from rummyzoo.cli.main import main

    path = tmp_path / "bench.json"
    argv = ["bench-env", "knock_rummy", "--players", "2", "--seconds", "0.05"]
    argv += ["--repeat", "3", "--deadwood-hands", "50", "--json", str(path)]
    assert main(argv) == 0
    result = json.loads(path.read_text())
    for key in ("decisions_per_s", "games_per_s", "decisions_per_game"):
        assert result[key] > 0, key
    segments = result["decisions_per_s_segments"]
    assert len(segments) == 3 and result["repeat"] == 3
    assert sorted(segments)[1] == result["decisions_per_s"]
    assert result["decisions_per_s_best"] == max(segments)
    assert result["decisions"] >= result["games"] >= 3
    assert result["deadwood_solver"] in ("compiled", "python")
    assert result["code"] == (
        "compiled kernels" if result["deadwood_solver"] == "compiled" else "pure Python"
    )
    out = capsys.readouterr().out
    assert "median of 3 segments" in out and f"({result['deadwood_solver']} search)" in out
    assert main(["bench-env", "knock_rummy", "--seconds", "0.01", "--repeat", "0"]) == 2


@pytest.mark.parametrize(("variant", "players"), [("knock_rummy", 2), ("rummy500", 6)])
def test_batched_decks_are_the_decks_of_successive_shuffles(variant, players):
    from rummyzoo.envs.registry import make_env
    from rummyzoo.envs.seeding import new_generator, seed_generator

    raw = make_env(variant, players, wrapped=False)
    size = 52 * raw.game.num_decks
    for seed in (3, 11):
        raw.reset(seed=seed)
        decks = [raw.deck.copy()]
        for _ in range(70):  # past several batches (1, 2, 4, ... 64 decks)
            raw.reset()
            decks.append(raw.deck.copy())
        gen = new_generator()
        seed_generator(gen, seed, 0)
        for deck in decks:
            assert np.array_equal(deck, gen.permutation(size) % 52)
        assert not raw.deck.flags.writeable


def test_wrapped_env_keeps_the_call_order_checks():
    env = knock_rummy_v0.env()
    with pytest.raises(AssertionError, match="reset"):
        env.last()
    with pytest.raises(AssertionError, match="reset"):
        env.step(0)
    env.reset(seed=3)
    obs, *_ = env.last()
    assert obs["action_mask"].any()
    with pytest.raises(AssertionError, match="step"):
        for _agent in env.agent_iter():
            env.last()  # no step between two iterations


@pytest.mark.parametrize("players", [2, 3, 6])
def test_observation_size_is_the_documented_one(players):
    """The module's table: card planes, then one 52-wide row of scalar features and zeros."""
    game = knock_rummy_v0.raw_env(num_players=players).game
    assert game.obs_size == 52 * (2 * players + 2)
    start, stop = game.observation_layout["padding"]
    assert stop == game.obs_size and stop - start == 48 - 3 * players
    assert "L = 52 * (2 * N + 2)" in knock_rummy_v0.__doc__
