"""The measurement scripts under docs/experiments run, and search only what a player may know."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "experiments" / "ditch_rollouts.py"


def load():
    spec = importlib.util.spec_from_file_location("ditch_rollouts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_guesses_deal_only_the_hidden_cards_anew() -> None:
    mod = load()
    game, rng = mod.GAME, np.random.default_rng(0)
    s = game.new_hand(rng, 1, game.shuffled_deck(np.random.default_rng(1)))
    for _ in range(40):  # into the hand: both players hold cards, the pile is part drawn
        game.apply(s, mod.smart_action(s, rng), rng)
    seat = s.current
    hidden = sorted(list(s.hands[1 - seat]) + s.pile[s.pile_pos :])
    changed = False
    for _ in range(5):
        world = mod.guess(s, seat, rng)
        assert world.hands[seat] == s.hands[seat]  # the searcher's own cards stay
        assert len(world.hands[1 - seat]) == len(s.hands[1 - seat])
        assert world.pile[: world.pile_pos] == s.pile[: s.pile_pos]
        assert sorted(list(world.hands[1 - seat]) + world.pile[world.pile_pos :]) == hidden
        # what the searcher sees is the same in every guess
        assert np.array_equal(
            game.observe(world, seat, mod.NO_TOTALS), game.observe(s, seat, mod.NO_TOTALS)
        )
        changed |= world.pile != s.pile
    assert changed
    assert sorted(list(s.hands[1 - seat]) + s.pile[s.pile_pos :]) == hidden


def test_the_script_reports_the_searcher_against_smart(tmp_path) -> None:
    mod = load()
    out = tmp_path / "r.json"
    first = mod.main(["--worlds", "2", "--deals", "1", "--seed", "2", "--json", str(out)])
    assert first["hands"] == 2 and first["worlds"] == 2 and not first["oracle"]
    low, high = first["ci95"]
    assert low <= first["gain_per_hand"] <= high
    assert json.loads(out.read_text())["gain_per_hand"] == first["gain_per_hand"]
    again = mod.main(["--worlds", "2", "--deals", "1", "--seed", "2"])
    assert again["gain_per_hand"] == first["gain_per_hand"]  # same seed, same hands


AFTERSTATES = SCRIPT.parent / "ditch_afterstates.py"


def load_afterstates():
    spec = importlib.util.spec_from_file_location("ditch_afterstates", AFTERSTATES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_value_greedy_player_collects_fits_and_plays(tmp_path) -> None:
    mod = load_afterstates()
    data, value = tmp_path / "d.npz", tmp_path / "v.pt"
    mod.main(["collect", "--seed", "3", "--hands", "12", "--out", str(data)])
    saved = np.load(data)
    assert saved["X"].shape == (len(saved["Y"]), mod.GAME.obs_size) and len(saved["Y"]) >= 12 * 16
    # both seats' views of a state: their targets are opposite margins
    assert np.array_equal(saved["Y"][0::2], -saved["Y"][1::2])
    mod.main(["fit", "--data", str(data), "--epochs", "1", "--out", str(value)])
    huge, free = mod.main(
        ["play", "--value", str(value), "--seed", "4", "--deals", "2", "--delta", "1e9", "0"]
    )
    # never leaving smart's action plays smart's hands exactly: no gain, no deviation
    assert huge["gain_per_hand"] == 0.0 and huge["deviations"] == 0 and huge["decisions"] > 0
    assert free["hands"] == 4 and free["deviations"] > 0  # an untrained value does deviate


def test_an_ending_action_values_the_rival_hand_by_what_the_player_sees() -> None:
    mod = load_afterstates()
    game, rng = mod.GAME, np.random.default_rng(0)
    s = game.new_hand(rng, 1, game.shuffled_deck(np.random.default_rng(1)))
    for _ in range(40):
        game.apply(s, mod.smart_action(s, rng), rng)
    me = s.current
    assert s.hands[1 - me]  # the rival holds cards
    expected = mod.rival_penalty(s, me)
    # the cards this player has not seen are the rival's hand and the draw pile
    unseen = list(s.hands[1 - me]) + s.pile[s.pile_pos :]
    mean = np.mean([mod.SMART.penalty[o] for o in unseen])
    assert expected == len(s.hands[1 - me]) * mean
    assert expected != sum(mod.SMART.penalty[o] for o in s.hands[1 - me])  # not the true cost
    # the rival's hidden cards swapped with the pile's: the same estimate
    world = s.copy()
    hidden = list(world.hands[1 - me]) + world.pile[world.pile_pos :]
    k = len(world.hands[1 - me])
    hidden = hidden[k:] + hidden[:k]
    world.hands[1 - me] = tuple(sorted(hidden[:k]))
    world.pile = world.pile[: world.pile_pos] + hidden[k:]
    assert world.hands[1 - me] != s.hands[1 - me]
    assert mod.rival_penalty(world, me) == expected


HANDOVER = SCRIPT.parent / "ditch_handover.py"


def test_handing_every_kind_over_plays_smart_and_none_plays_the_network(
    tmp_path, monkeypatch
) -> None:
    from rummyzoo.agents.checkpoints import load_policy
    from rummyzoo.agents.ditch import SmartDitch
    from rummyzoo.envs import ditch_rummy_v0
    from rummyzoo.training.train import train_from_file

    run = tmp_path / "run"
    configs = Path(__file__).resolve().parent.parent / "configs"
    overrides = ["variant=ditch_rummy", "env_options.target_score=null"]
    train_from_file(str(configs / "smoke_ppo.yaml"), overrides, str(run), ["test"])
    net_path = run / "checkpoints" / "last.rz"
    monkeypatch.setenv("DITCH_NET", str(net_path))
    spec = importlib.util.spec_from_file_location("ditch_handover", HANDOVER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    options = {"target_score": None}
    net = load_policy(net_path, "ditch_rummy", 2, options)
    smart = SmartDitch("ditch_rummy", 2, options)

    def draws_by_smart(observation, mask, rng):
        mine, theirs = net.act(observation, mask, rng), smart.act(observation, mask, rng)
        return theirs if min(mine, theirs) < agent.bounds[0] else mine

    class DrawsBySmart:
        act = staticmethod(draws_by_smart)

    for kinds, judge in (("draw,meld,single,finish", smart), ("", net), ("draw", DrawsBySmart)):
        monkeypatch.setenv("DITCH_HANDOVER", kinds)
        mod.CHOICES.clear()
        agent = mod.Handover("ditch_rummy", 2, options)
        env = ditch_rummy_v0.env(num_players=2, **options)
        rng = np.random.default_rng(0)
        decisions = 0
        for seed in range(4):  # (an untrained network may stall a hand in a few decisions)
            env.reset(seed=seed)
            for _ in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                action = agent.act(obs["observation"], obs["action_mask"], rng)
                assert action == judge.act(obs["observation"], obs["action_mask"], rng)
                env.step(action)
                decisions += 1
        assert sum(mod.CHOICES.values()) == decisions >= 8
        if kinds == "draw":  # smart's draws fill the hand: the network then plays its turns
            assert {mine for (_, mine, _) in mod.CHOICES} > {"draw"}
        # the untrained network and smart disagree somewhere, and it is counted by kind
        assert any(not same for (_, _, same) in mod.CHOICES)


def test_the_vector_engine_timers_split_a_step_and_leave_the_engine_as_it_was(tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("vector_parts", SCRIPT.parent / "vector_parts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.native import compiled_kernels
    from rummyzoo.envs.vector import VectorEnv

    def methods():
        return (
            VectorEnv.check,
            VectorEnv._finish_compiled,
            VectorEnv._hands_ended,
            VectorEnv._write_rows,
            Match.played,
        )

    before = methods()
    out = tmp_path / "parts.json"
    spans = mod.main(
        ["knock_rummy", "--num-envs", "16", "--seconds", "0.2", "--spans", "2", "--json", str(out)]
    )["result"]
    assert json.loads(out.read_text()) == spans and len(spans) == 2
    compiled = compiled_kernels() is not None
    for row in spans:
        # random Knock Rummy games end every few decisions: every part is timed (the hands'
        # ends by the compiled finish where the kernels are built, else by the Python code)
        ends = {"compiled finish"} if compiled else {"hands' rows", "Match.played"}
        assert {"check", "random picks", "decision"} | ends <= set(row)
        parts = sum(v for k, v in row.items() if k != "decision")
        assert 0 < parts < row["decision"]
    assert before == methods()
    # a turn cap's ends go through the Python code, beside the compiled finish
    capped = mod.main(
        [
            "knock_rummy",
            "--num-envs",
            "16",
            "--seconds",
            "0.2",
            "--spans",
            "1",
            "--option",
            "max_turns=2",
        ]
    )["result"]
    assert {"hands' rows", "Match.played"} <= set(capped[0])
    sizes = mod.main(["ditch_rummy", "--sizes", "2", "8", "--seconds", "0.1", "--spans", "2"])
    assert set(sizes["result"]) == {"2", "8"}
    assert all(len(r["segments"]) == 2 and r["median"] > 0 for r in sizes["result"].values())
    switched = mod.main(["rummy500", "--gc", "--num-envs", "4", "--seconds", "0.1", "--spans", "2"])
    ratio = switched["result"]["off / on"]["median"]
    assert 0.2 < ratio < 5
    import gc

    assert gc.isenabled()


def test_match_aware_plays_the_checkpoint_with_the_matchs_verdicts(tmp_path, monkeypatch) -> None:
    from rummyzoo.agents.arena import run_arena
    from rummyzoo.agents.checkpoints import load_policy
    from rummyzoo.agents.registry import make_agent
    from rummyzoo.training.train import train_from_file

    configs = SCRIPT.parent.parent.parent / "configs"
    overrides = [
        "variant=ditch_rummy",
        "features=ditch_plans",
        "policy_kwargs.network=actions",
        "env_options.target_score=null",
    ]
    run = tmp_path / "run"
    train_from_file(str(configs / "smoke_ppo.yaml"), overrides, str(run), ["test"])
    path = str(run / "checkpoints" / "last.rz")
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    name = f'ditch_match_features:MatchAware(path="{path}")'
    agent = make_agent(name, "ditch_rummy", 2, {"target_score": 500})
    as_trained = load_policy(path, "ditch_rummy", 2, {"target_score": 500})
    # the same network, its descriptions judged by the match it plays, not by single hands
    assert as_trained.features.judge.game.match.target_score is None
    assert agent.inner.features.judge.game.match.target_score == 500
    result = run_arena(
        "ditch_rummy",
        2,
        [name, "ditch.smart"],
        deals=1,
        seed=0,
        workers=1,
        options={"target_score": 500},
    )
    assert result.games == 2


def test_the_split_rollout_timers_add_up_to_each_rollout_and_are_taken_off(tmp_path) -> None:
    spec = importlib.util.spec_from_file_location(
        "split_rollouts", SCRIPT.parent / "split_rollouts.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from rummyzoo.training import ppo, split_env

    def methods():
        return (
            ppo.MaskedPPO.collect_rollouts,
            ppo.play_rollout,
            split_env.SplitSeatEnv.poll_rollouts,
            split_env.SplitSeatEnv.finish_rollouts,
        )

    before = methods()
    out = tmp_path / "split.json"
    config = Path(__file__).resolve().parent.parent / "configs" / "smoke_ppo.yaml"
    overrides = ["--set", "n_envs=8", "--set", "hyperparams.n_steps=16"]
    report = mod.main(
        [str(config), *overrides, "--steps", "512", "--skip", "1", "--json", str(out)]
    )
    assert json.loads(out.read_text()) == report
    assert report["workers"] == 2 and report["rollouts"] == 4 and report["skipped"] == 1
    ms = report["ms_median"]
    assert 0 < ms["poll"] <= ms["play"] < ms["rollout"]  # the helpers' steps taken as they play
    assert min(ms["start"], ms["finish"], ms["after"]) >= 0
    assert report["collection_steps_per_s"] > 0
    assert len(report["ms_per_rollout"]) == 4
    for row in report["ms_per_rollout"]:  # the parts tile each rollout
        parts = row["start"] + row["play"] + row["finish"] + row["after"]
        assert parts == pytest.approx(row["rollout"], rel=1e-9, abs=1e-6)
    assert before == methods()
    with pytest.raises(SystemExit, match="all skipped"):
        mod.main([str(config), *overrides, "--steps", "128", "--skip", "1"])
    from rummyzoo.training.config import ConfigLoadError

    with pytest.raises(ConfigLoadError, match="workers=2 splits the batched env's games"):
        mod.main([str(config), *overrides, "--set", "vec_env=dummy", "--steps", "128"])


def test_interval_coverage_counts_the_runs_whose_intervals_hold_the_reference(tmp_path) -> None:
    path = SCRIPT.parent / "interval_coverage.py"
    spec = importlib.util.spec_from_file_location("interval_coverage", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out_path = tmp_path / "c.json"
    argv = ["knock_rummy", "--agents", "random", "knock.greedy", "knock.smart"]
    argv += ["--option", "target_score=null", "--deals", "10", "--runs", "3"]
    out = mod.main([*argv, "--reference-deals", "60", "--json", str(out_path)])
    rows = out["coverage"]
    assert json.loads(out_path.read_text())["coverage"] == rows
    for name in ("random win rate", "knock.smart points per hand", "knock.smart rating"):
        assert rows[name]["runs"] == 3 and 0 <= rows[name]["held"] <= 3
    # the gaps one way in every run (the agents' order), each against the reference's
    gaps = [name for name in rows if " over " in name]
    assert sorted(gaps) == ["knock.greedy over knock.smart", "random over knock.greedy",
                            "random over knock.smart"]  # fmt: skip
    assert rows["random over knock.smart"]["reference"] < 0  # random rates below smart
    low, high = rows["random win rate"]["coverage_ci"]
    assert low <= rows["random win rate"]["coverage"] <= high
