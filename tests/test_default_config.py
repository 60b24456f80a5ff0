"""The default config (what ``make demo`` trains) runs as shipped on its batched engine."""

from __future__ import annotations

from pathlib import Path

from rummyzoo.cli.main import main
from rummyzoo.training.config import load_config

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "knock_ppo.yaml"


def test_the_default_config_trains_on_the_batched_engine(tmp_path, capsys):
    config = load_config(CONFIG)
    assert config.vec_env == "batched" and config.n_envs == 64 and config.pretrain is not None
    run = tmp_path / "run"
    # The shipped config with its warm start, self-play, evaluation and default progress;
    # only its lengths shortened: one rollout of 64 games x 32 steps.
    code = main(
        [
            "train",
            str(CONFIG),
            "--run-dir",
            str(run),
            "--set",
            "n_timesteps=2048",
            "--set",
            "pretrain.decisions=400",
            "--set",
            "evaluation.deals=2",
            "--set",
            "evaluation.interval=2048",
            "--set",
            "self_play.snapshot_interval=1024",
            "--set",
            "checkpoints.interval=2048",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "trained ppo on knock_rummy (2 players): 2,048 steps" in out
    assert "warm start" in out
    assert (run / "checkpoints" / "best.rz").exists()
