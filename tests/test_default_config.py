"""Every shipped config trains as shipped, its lengths shortened (the default config, what ``make
demo`` trains, is run by ``rummyzoo train`` on a terminal in tests/test_runs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rummyzoo.cli.main import main
from rummyzoo.training.config import load_config

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "knock_ppo.yaml"


def _has_ray() -> bool:
    """Ray is importable, or the suite requires it (then its absence fails the test)."""
    import importlib.util
    import os

    return (
        importlib.util.find_spec("ray") is not None
        or os.environ.get("RUMMYZOO_REQUIRE_RLLIB") == "1"
    )


SHIPPED = sorted(
    p.name
    for p in CONFIG.parent.glob("*.yaml")
    if p.name not in ("knock_ppo.yaml", "smoke_ppo.yaml", "smoke_dqn.yaml", "knock_bench.yaml")
)


@pytest.mark.parametrize(
    "name",
    [
        # make test runs the Ray RLlib tests once, with the compiled kernels
        pytest.param(name, marks=pytest.mark.rllib)
        if yaml.safe_load((CONFIG.parent / name).read_text()).get("backend") == "rllib"
        else name
        for name in SHIPPED
    ],
)
def test_every_shipped_config_trains_as_shipped(tmp_path, capsys, name):
    """Each shipped config, with its network, features, warm start, league and evaluation as
    shipped; only its lengths shortened."""
    path = CONFIG.parent / name
    config = load_config(path)
    if config.backend == "rllib" and not _has_ray():
        pytest.skip("Ray RLlib is not installed (pip install -e '.[rllib]')")
    steps = config.n_envs * (config.hyperparams.n_steps if config.algo == "ppo" else 16)
    lengths = {
        "n_timesteps": steps,
        "evaluation.deals": 2,
        "evaluation.cross_table_deals": 2,
        "evaluation.strategy_games": 2,
        "evaluation.interval": steps,
        "self_play.snapshot_interval": steps // 2,
        "checkpoints.interval": steps,
    }
    if config.pretrain is not None:
        lengths["pretrain.decisions"] = 300
    if config.algo == "dqn":
        lengths |= {"hyperparams.learning_starts": steps // 2, "hyperparams.buffer_size": 4 * steps}
    argv = ["train", str(path), "--run-dir", str(tmp_path / "run")]
    for key, value in lengths.items():
        argv += ["--set", f"{key}={value}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"trained {config.algo} on {config.variant} ({config.num_players} players)" in out
    assert (tmp_path / "run" / "checkpoints" / "best.rz").exists()
    # the RL phase ran its steps (after the warm start, where there is one)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["steps"] >= steps, summary
