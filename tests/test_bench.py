"""The benchmarks of the vector engine and of training: they run and write what they print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rummyzoo.cli.main import main

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_bench_env_of_the_vector_engine_alternates_with_the_aec_loop(tmp_path, capsys):
    out = tmp_path / "vec.json"
    code = main(
        [
            "bench-env",
            "ditch_rummy",
            "--num-envs",
            "16",
            "--seconds",
            "0.2",
            "--repeat",
            "2",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    result = json.loads(out.read_text())
    assert result["num_envs"] == 16 and result["workers"] == 1
    assert len(result["vector_decisions_per_s_segments"]) == 2
    assert len(result["aec_decisions_per_s_segments"]) == 2
    assert result["ratio_vector_to_aec"] == pytest.approx(
        result["vector_decisions_per_s"] / result["aec_decisions_per_s"]
    )
    assert result["memory_per_game_bytes"] > 0 and result["memory_measure"] == "traced"
    shown = capsys.readouterr().out
    assert "vector / AEC" in shown and f"{result['ratio_vector_to_aec']:.2f}x" in shown


def test_bench_env_with_workers(tmp_path):
    out = tmp_path / "w.json"
    args = ["bench-env", "knock_rummy", "--num-envs", "8", "--workers", "2", "--seconds", "0.2"]
    assert main([*args, "--no-compare", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["workers"] == 2 and "aec_decisions_per_s" not in result
    assert result["vector_decisions_per_s"] > 0


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
    assert "collecting" in capsys.readouterr().out


def test_bench_train_times_dqn_too(tmp_path):
    out = tmp_path / "dqn.json"
    args = ["bench-train", str(CONFIGS / "smoke_dqn.yaml"), "--steps", "300", "--json", str(out)]
    assert main(args) == 0
    run = json.loads(out.read_text())["setups"][0]["runs"][0]
    assert run["algo"] == "dqn" and run["vec_env"] == "batched"
    assert run["seconds_by_part"]["inference"] > 0 and run["seconds_by_part"]["buffer"] > 0


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
