"""The benchmarks of the vector engine and of training: they run and write what they print."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rummyzoo.cli.main import main

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_bench_env_of_the_vector_engine_alternates_with_the_aec_loop(tmp_path, capsys):
    out = tmp_path / "vec.json"
    code = main(
        [
            "bench-env",
            "ditch_rummy",
            "--num-envs",
            "4",  # few games, so that some finish a match within the segments on a busy machine
            "--seconds",
            "0.3",
            "--repeat",
            "3",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    result = json.loads(out.read_text())
    assert result["num_envs"] == 4 and result["workers"] == 1
    assert {"python", "numpy", "machine", "cpus"} <= set(result)  # as every benchmark's JSON
    vector = result["vector_decisions_per_s_segments"]
    aec = result["aec_decisions_per_s_segments"]
    assert len(vector) == len(aec) == 3
    # the rates are the median segments' (3 segments: the middle one, not a mean)
    assert result["vector_decisions_per_s"] == sorted(vector)[1]
    assert result["aec_decisions_per_s"] == sorted(aec)[1]
    assert result["vector_decisions_per_s_per_worker"] == result["vector_decisions_per_s"]
    assert result["ratio_vector_to_aec"] == pytest.approx(
        result["vector_decisions_per_s"] / result["aec_decisions_per_s"]
    )
    # each segment's ratio pairs the two setups' segments of one round
    assert result["ratio_segments"] == pytest.approx(
        [v / a for v, a in zip(vector, aec, strict=True)]
    )
    assert result["memory_per_game_bytes"] > 0 and result["memory_measure"] == "rss"
    assert result["memory_settle_hands"] >= 64  # every game settled (see the test below)
    # decisions per match: whole matches only (random Ditch Rummy matches last about 2,700
    # decisions; dividing every decision made by the few matches that ended gave ten times it)
    assert result["vector_matches"] >= 1
    assert 1_000 < result["vector_decisions_per_match"] < 5_000
    shown = capsys.readouterr().out
    assert "vector / AEC" in shown and f"{result['ratio_vector_to_aec']:.2f}x" in shown
    # the vector engine's flags without the engine are refused, by name
    assert main(["bench-env", "knock_rummy", "--workers", "2", "--seconds", "0.1"]) == 2
    assert "--workers time the vector engine: give --num-envs N" in capsys.readouterr().err
    # the memory the 4 games took, not a projection to other counts
    assert result["memory_mb"] == pytest.approx(result["memory_per_game_bytes"] * 4 / 2**20)
    assert f"{result['memory_mb']:,.1f} MiB for 4 games" in shown and "1,024" not in shown


def test_bench_env_with_workers(tmp_path):
    out = tmp_path / "w.json"
    args = ["bench-env", "knock_rummy", "--num-envs", "8", "--workers", "2", "--seconds", "0.2"]
    assert main([*args, "--no-compare", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["workers"] == 2 and "aec_decisions_per_s" not in result
    assert result["vector_decisions_per_s"] > 0
    assert result["vector_decisions_per_s_per_worker"] == pytest.approx(
        result["vector_decisions_per_s"] / 2
    )
    # the workers' memory, their interpreters included, settled as in one process
    assert result["memory_settle_hands"] >= 64 and result["memory_per_game_bytes"] > 64 * 52 * 8


def test_bench_env_reads_the_memory_of_settled_games_whatever_the_segments(tmp_path):
    """A game keeps a batch of shuffled decks that doubles up to 64 (52 int64 each) as its
    hands use them: the memory was read after a traced warm-up as long as a segment (at most
    a second), while the batches still grew, so 1,024 Knock Rummy games took 11.1 MiB with
    --seconds 0.1, 16.4 with --seconds 1, and held 36 MiB from their 64th hand on. It is now
    read in a fresh process once every game has played 64 hands, whatever --seconds."""
    figures = []
    for seconds in ("0.05", "0.5"):
        out = tmp_path / f"m{seconds}.json"
        args = ["bench-env", "knock_rummy", "--num-envs", "512", "--no-compare"]
        assert main([*args, "--seconds", seconds, "--json", str(out)]) == 0
        result = json.loads(out.read_text())
        assert result["memory_settle_hands"] >= 64
        figures.append(result["memory_per_game_bytes"])
    decks = 64 * 52 * 8  # a full batch of decks
    assert min(figures) > decks
    assert max(figures) / min(figures) < 1.15, figures


def test_a_stopped_memory_measure_stops_its_process():
    """The memory is measured in a process of its own: a stop (Ctrl-C to this process alone,
    SIGTERM, which the command turns into one) waited for it to play out its settling, over a
    minute for 2,048 games of 500 Rum at 8 players. It now ends that process at once."""
    import multiprocessing
    import signal
    import time

    from rummyzoo.cli.bench import settled_memory

    def stop(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 4.0)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            settled_memory("rummy500", 2048, 8, {}, 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - start < 20
    assert not [p for p in multiprocessing.active_children() if p.name == "rummyzoo-memory"]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--num-envs", "0"], "--num-envs"), (["--num-envs", "2", "--workers", "3"], "--workers")],
)
def test_bench_env_refuses_bad_counts(args, message, capsys):
    assert main(["bench-env", "knock_rummy", *args]) == 2
    assert message in capsys.readouterr().err


def test_bench_train_splits_the_time_and_compares_setups(tmp_path, capsys):
    out = tmp_path / "train.json"
    code = main(
        [
            "bench-train",
            str(CONFIGS / "smoke_ppo.yaml"),
            "--steps",
            "256",
            "--set",
            "vec_env=dummy",
            "--compare",
            "vec_env=batched n_envs=4 hyperparams.n_steps=32",
            "--compare",
            "vec_env=batched pool=2",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    summary = json.loads(out.read_text())
    assert {"python", "numpy", "machine", "cpus", "torch"} <= set(summary)
    base, batched, pool = summary["setups"]
    assert base["runs"][0]["vec_env"] == "dummy" and batched["runs"][0]["n_envs"] == 4
    assert pool["runs"][0]["pool"] == 2 and pool["runs"][0]["opponents"] == ["self"]
    run = batched["runs"][0]
    parts = run["seconds_by_part"]
    assert set(parts) == {"env", "opponents", "inference", "buffer", "update", "other"}
    assert run["steps"] >= 256
    assert sum(parts.values()) == pytest.approx(run["seconds"])
    assert batched["ratio_collection_steps_per_s"] == pytest.approx(
        batched["collection_steps_per_s"] / base["collection_steps_per_s"]
    )
    # the summary names the steps each run trained (whole rollouts), not only those asked
    trained = sorted({r["steps"] for entry in summary["setups"] for r in entry["runs"]})
    assert summary["steps_trained"] == trained and summary["steps"] == 256
    printed = capsys.readouterr().out
    assert "collecting" in printed
    if trained != [256]:
        assert f"{' or '.join(f'{t:,}' for t in trained)} steps each (256 asked" in printed
    else:
        assert "round(s), 256 steps each:" in printed
    # a pool that is not a number is named
    assert main(["bench-train", str(CONFIGS / "smoke_ppo.yaml"), "--compare", "pool=x"]) == 2
    assert "pool= needs a number of snapshots, got 'x'" in capsys.readouterr().err


def test_bench_train_takes_the_median_of_its_rounds(tmp_path, capsys):
    """Three rounds: every figure of a setup is the median of its rounds, its ratios are of
    those medians (and per round, of the collection rates), and each round's time split adds
    up to its wall time, as printed."""
    out = tmp_path / "rounds.json"
    argv = ["bench-train", str(CONFIGS / "smoke_ppo.yaml"), "--steps", "128", "--repeat", "3"]
    argv += ["--compare", "hyperparams.batch_size=128", "--json", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    base, other = json.loads(out.read_text())["setups"]
    for entry in (base, other):
        runs = entry["runs"]
        assert len(runs) == 3
        for key in ("steps_per_s", "collection_steps_per_s"):
            assert entry[key] == sorted(r[key] for r in runs)[1], key
        for run in runs:
            parts = run["seconds_by_part"]
            assert sum(parts.values()) == pytest.approx(run["seconds"])
            assert run["share_by_part"] == pytest.approx(
                {k: v / run["seconds"] for k, v in parts.items()}
            )
            assert run["collection_seconds"] == pytest.approx(run["seconds"] - parts["update"])
            assert run["steps_per_s"] == pytest.approx(run["steps"] / run["seconds"])
            assert run["collection_steps_per_s"] == pytest.approx(
                run["steps"] / run["collection_seconds"]
            )
    assert other["ratio_steps_per_s"] == pytest.approx(other["steps_per_s"] / base["steps_per_s"])
    assert other["ratio_collection_steps_per_s"] == pytest.approx(
        other["collection_steps_per_s"] / base["collection_steps_per_s"]
    )
    pairs = list(zip(other["runs"], base["runs"], strict=True))
    assert other["ratio_collection_rounds"] == pytest.approx(
        [o["collection_steps_per_s"] / b["collection_steps_per_s"] for o, b in pairs]
    )
    assert other["ratio_steps_rounds"] == pytest.approx(
        [o["steps_per_s"] / b["steps_per_s"] for o, b in pairs]
    )
    first = f"{other['ratio_steps_rounds'][0]:.2f}x/{other['ratio_collection_rounds'][0]:.2f}x"
    assert f"rounds, end to end/collecting: {first}" in printed
    # what is printed for a round is that round's JSON
    last = other["runs"][-1]
    update = f"update {last['share_by_part']['update']:.0%}"
    assert f"[3/3] #1 hyperparams.batch_size=128: {last['steps_per_s']:,.0f} steps/s" in printed
    assert update in printed.split("[3/3] #1")[1]


def test_bench_train_times_dqn_too(tmp_path):
    out = tmp_path / "dqn.json"
    args = ["bench-train", str(CONFIGS / "smoke_dqn.yaml"), "--steps", "300", "--json", str(out)]
    assert main(args) == 0
    run = json.loads(out.read_text())["setups"][0]["runs"][0]
    assert run["algo"] == "dqn" and run["vec_env"] == "batched"
    assert run["seconds_by_part"]["inference"] > 0 and run["seconds_by_part"]["buffer"] > 0


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_bench_train_leaves_nothing_in_the_temp_dir(tmp_path, monkeypatch, algo):
    """stable-baselines3 makes an empty ``SB3-<time>`` folder in the temp dir at every learn()
    of a model without a logger of its own; a benchmark writes no logs, and leaves none."""
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    config = str(CONFIGS / f"smoke_{algo}.yaml")
    assert main(["bench-train", config, "--steps", "256"]) == 0
    assert list(temp.glob("SB3-*")) == []


def test_the_arena_command_plays_in_batches(tmp_path):
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    base = [
        "arena",
        "ditch_rummy",
        "--agents",
        "random",
        "ditch.greedy",
        "--deals",
        "3",
        "--workers",
        "1",
        "--quiet",
        "--option",
        "target_score=null",
    ]
    assert main([*base, "--json", str(one)]) == 0
    assert main([*base, "--batch", "4", "--json", str(many)]) == 0
    a, b = json.loads(one.read_text()), json.loads(many.read_text())
    assert a["agents"] == b["agents"]


def test_bench_train_splits_the_learners_own_time_with_workers(tmp_path):
    """With two processes, the parts still add up to this process's wall time: the helper's
    opponents (who ran beside it) are reported apart."""
    out = tmp_path / "workers.json"
    args = [
        "bench-train",
        str(CONFIGS / "smoke_ppo.yaml"),
        "--steps",
        "256",
        "--set",
        "workers=2",
        "--set",
        "n_envs=4",
        "--set",
        "hyperparams.n_steps=32",
        "--set",
        "opponents=[{name: knock.greedy}]",
        "--json",
        str(out),
    ]
    assert main(args) == 0
    run = json.loads(out.read_text())["setups"][0]["runs"][0]
    parts = run["seconds_by_part"]
    assert run["workers"] == 2
    assert all(v >= 0 for v in parts.values()), parts
    assert sum(parts.values()) == pytest.approx(run["seconds"])
    assert run["helper_opponent_seconds"] > 0
    assert parts["opponents"] > 0


def test_bench_env_profile_splits_each_setup_by_layer(tmp_path, capsys):
    out = tmp_path / "p.json"
    args = ["bench-env", "knock_rummy", "--num-envs", "16", "--seconds", "0.2", "--profile"]
    assert main([*args, "--json", str(out)]) == 0
    profile = json.loads(out.read_text())["profile"]
    assert set(profile) == {"vector", "aec"}
    for part in profile.values():
        assert part["decisions"] > 0 and part["profiled_seconds"] > 0
        assert sum(part["layers"].values()) == pytest.approx(1.0)
        assert part["layers"]["rules"] > 0 and part["layers"]["match"] > 0
    # the engine's own code runs only in the engine, PettingZoo's only in the AEC loop
    assert profile["vector"]["layers"]["engine"] > 0 and profile["aec"]["layers"]["engine"] == 0
    assert profile["aec"]["layers"]["aec"] > 0 and profile["vector"]["layers"]["aec"] == 0
    shown = capsys.readouterr().out
    assert "profile of the vector engine" in shown and "profile of the AEC loop" in shown


def test_bench_env_profile_of_the_aec_loop_alone(tmp_path):
    out = tmp_path / "a.json"
    argv = ["bench-env", "ditch_rummy", "--seconds", "0.1", "--profile", "--json", str(out)]
    assert main(argv) == 0
    layers = json.loads(out.read_text())["profile"]["aec"]["layers"]
    assert layers["aec"] > 0 and layers["engine"] == 0 and layers["rules"] > 0


def test_code_layer_names_the_layer_of_each_file():
    import pettingzoo

    from rummyzoo.cli.bench import PROFILE_LAYERS, code_layer
    from rummyzoo.envs import aec, match, melds, vector, workers
    from rummyzoo.envs.knock_rummy import rules

    root = Path(vector.__file__).resolve().parent
    expected = {
        rules.__file__: "rules",
        melds.__file__: "rules",
        match.__file__: "match",
        vector.__file__: "engine",
        workers.__file__: "engine",
        aec.__file__: "aec",
        str(root / "knock_rummy_v0.py"): "aec",
        pettingzoo.__file__: "aec",
        np.__file__: "numpy",
        "~": "built-ins",
        json.__file__: "other",
    }
    for filename, layer in expected.items():
        assert code_layer(filename) == layer, filename
    assert set(expected.values()) <= set(PROFILE_LAYERS)


def test_bench_env_profile_refuses_workers(capsys):
    argv = ["bench-env", "knock_rummy", "--num-envs", "8", "--workers", "2", "--profile"]
    assert main(argv) == 2
    assert "--profile times one process" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seconds", "nan"], "--seconds must be a positive number, got nan"),
        (["--seconds", "inf"], "--seconds must be a positive number, got inf"),
        (["--seconds", "0"], "--seconds must be a positive number, got 0.0"),
        (["--deadwood-hands", "0"], "--deadwood-hands must be at least 1, got 0"),
        (["--num-envs", "4", "--raw"], "--raw time the AEC loop alone"),
        (["--num-envs", "4", "--reseed"], "--reseed time the AEC loop alone"),
        (["--repeat", "0"], "--repeat must be at least 1, got 0"),
        (["--num-envs", "4", "--repeat", "0"], "--repeat must be at least 1, got 0"),
        # the default hand count, given, is refused where any other is
        (["--num-envs", "4", "--deadwood-hands", "20000"], "--deadwood-hands time the AEC loop"),
        (["--option", "render_mode=human"], "--option render_mode: the benchmarks time play"),
        (["--json", ""], "--json '': give a file name"),
    ],
)
def test_bench_env_refuses_bad_settings_before_any_work(args, message, capsys) -> None:
    assert main(["bench-env", "knock_rummy", *args]) == 2
    assert message in capsys.readouterr().err


def test_bench_env_refuses_deadwood_hands_outside_knock_rummy(capsys) -> None:
    args = ["bench-env", "ditch_rummy", "--seconds", "0.05", "--deadwood-hands", "20000"]
    assert main(args) == 2
    assert "ditch_rummy has none" in capsys.readouterr().err


def test_bench_env_games_per_second_is_the_median_segments(tmp_path, capsys) -> None:
    out = tmp_path / "aec.json"
    argv = ["bench-env", "ditch_rummy", "--seconds", "0.1", "--repeat", "3", "--json", str(out)]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    # random Ditch Rummy matches last thousands of decisions: the whole run's games over its
    # time would count each game in the segment it ended in, and a median segment's decision
    # rate beside a whole-run game rate does not add up
    assert result["games_per_s"] <= max(result["decisions_per_s_segments"])
    assert f"{result['games_per_s']:,.1f} games/s (median segment)" in capsys.readouterr().out


def test_bench_train_names_a_bad_compare_setting_as_such(capsys) -> None:
    config = str(CONFIGS / "smoke_ppo.yaml")
    assert main(["bench-train", config, "--steps", "64", "--compare", "nosuch=1"]) == 2
    assert "--compare nosuch=1: unknown key" in capsys.readouterr().err
    assert main(["bench-train", config, "--steps", "64", "--compare", ""]) == 2
    assert "--compare '' compares nothing" in capsys.readouterr().err
    # a setup the base config and --set alone do not make invalid is named by its --compare
    args = ["bench-train", config, "--steps", "64", "--set", "workers=2", "--compare", "n_envs=1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--compare 'n_envs=1' (on top of the config and any --set)" in err
    assert main(["bench-train", config, "--steps", "64", "--compare", "algo=dqn"]) == 2
    assert "--compare 'algo=dqn' (on top of" in capsys.readouterr().err
    assert main(["bench-train", config, "--compare", "a='b"]) == 2
    assert '--compare "a=\'b": No closing quotation' in capsys.readouterr().err
    # a digit int() refuses ("²" is a digit to str.isdigit): named, not int()'s own error
    assert main(["bench-train", config, "--compare", "pool=²"]) == 2
    assert "--compare 'pool=²': pool= needs a number of snapshots" in capsys.readouterr().err
    assert main(["bench-train", config, "--set", "opponents.².weight=1"]) == 2
    assert "--set opponents.².weight=1: opponents is a list" in capsys.readouterr().err
    long = "9" * 5000  # past int()'s digit limit: named too, not int()'s error
    assert main(["bench-train", config, "--set", f"opponents.{long}.weight=1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rummyzoo bench-train: error: --set opponents.99") and "4300" not in err
    for flag, value, message in (
        ("--steps", "0", "--steps must be at least 1, got 0"),
        ("--pool", "-1", "--pool must be 0 or more, got -1"),
    ):
        assert main(["bench-train", config, flag, value]) == 2
        assert message in capsys.readouterr().err


def test_make_bench_stops_at_the_first_failing_benchmark(tmp_path) -> None:
    """``make bench`` with a rummyzoo that fails: make fails at once, not after the loop."""
    import os
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls.log"
    (venv / "bin" / "python").write_text("#!/bin/sh\necho knock_rummy ditch_rummy\n")
    (venv / "bin" / "rummyzoo").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexit 3\n')
    for tool in ("python", "rummyzoo"):
        os.chmod(venv / "bin" / tool, 0o755)
    (venv / ".installed").touch()  # newer than what the set-up depends on: no set-up runs
    done = subprocess.run(
        ["make", "-C", str(CONFIGS.parent), "bench", f"VENV={venv}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and calls[0].startswith("bench-env knock_rummy")


def test_the_training_benchmark_of_make_bench_runs(tmp_path, capsys):
    """``make bench``'s bench-train (knock_bench.yaml and the setups it compares, read from the
    Makefile), one short round: every setup trains and is compared with the reference."""
    import re
    import shlex

    makefile = (CONFIGS.parent / "Makefile").read_text()
    line = re.search(r"bench-train configs/knock_bench\.yaml(.*?)--json", makefile, re.S)
    assert line is not None, "make bench no longer runs bench-train on knock_bench.yaml"
    args = shlex.split(line.group(1).replace("\\\n", " "))
    compares = [args[i + 1] for i, a in enumerate(args) if a == "--compare"]
    assert len(compares) >= 2
    out = tmp_path / "bench.json"
    argv = ["bench-train", str(CONFIGS / "knock_bench.yaml"), "--steps", "2048", "--repeat", "1"]
    for setting in compares:
        argv += ["--compare", setting]
    assert main([*argv, "--json", str(out)]) == 0
    summary = json.loads(out.read_text())
    base, *others = summary["setups"]
    assert base["runs"][0]["vec_env"] == "dummy" and len(others) == len(compares)
    for entry in others:
        assert entry["runs"][0]["vec_env"] == "batched" and entry["runs"][0]["steps"] >= 2048
        assert entry["ratio_collection_steps_per_s"] > 0


def test_bench_train_refuses_an_rllib_config(capsys) -> None:
    """It timed the stable-baselines3 backend of an RLlib config, without a word."""
    assert main(["bench-train", str(CONFIGS / "knock_rllib.yaml"), "--steps", "64"]) == 2
    err = capsys.readouterr().err
    assert "backend: rllib, which bench-train does not time" in err and "bench-rllib" in err


def test_bench_train_plays_a_configs_self_opponent() -> None:
    """A run's pool holds the learner from step 0 on, so its `self` seats play a network; the
    benchmark's empty pool gave them to the other opponents."""
    from rummyzoo.training import bench
    from rummyzoo.training.config import load_config

    for vec_env in ("batched", "dummy", "subproc"):
        config = load_config(CONFIGS / "smoke_ppo.yaml", [f"vec_env={vec_env}", "n_envs=2"])
        assert {o.name: o.weight for o in config.opponents} == {"random": 1.0, "self": 1.0}
        run = bench.bench_train(config, 64)
        shares = run["opponent_probabilities"]
        assert shares["random"] == pytest.approx(0.5), (vec_env, shares)
        assert sum(p for label, p in shares.items() if label.startswith("self")) == pytest.approx(
            0.5
        ), (vec_env, shares)


def test_bench_env_memory_with_workers_counts_the_workers_only(tmp_path) -> None:
    """The resident memory of multiprocessing's resource tracker and fork server, and the
    pages the workers share with this process, counted as the games' memory."""
    import psutil

    from rummyzoo.cli.bench import _rss

    me = psutil.Process().memory_info().rss
    assert _rss() == me or abs(_rss() - me) < 2**20  # this process alone
    out = tmp_path / "w.json"
    args = ["bench-env", "knock_rummy", "--num-envs", "8", "--workers", "2", "--seconds", "0.2"]
    assert main([*args, "--no-compare", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    # two workers' own memory (interpreters and imports included), not four processes' RSS
    assert 0 < result["memory_mb"] < 80, result["memory_mb"]
