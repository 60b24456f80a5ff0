"""Helpers for tests that read a training run's folder or need a checkpoint."""

from __future__ import annotations

from pathlib import Path


def tb_steps(run: Path) -> dict[str, list[int]]:
    """Every scalar's logged steps, per run folder and tag (``run_1/eval/score``: [...])."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps: dict[str, list[int]] = {}
    for folder in sorted(p for p in (run / "tb").iterdir() if p.is_dir()):
        acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            steps[f"{folder.name}/{tag}"] = [e.step for e in acc.Scalars(tag)]
    return steps


def untrained_checkpoint(path: Path, overrides: tuple[str, ...] = ()) -> Path:
    """A checkpoint of ``configs/smoke_ppo.yaml``'s network (Knock Rummy, 2 players, unless
    ``overrides`` say otherwise) before any training, saved at ``path``."""
    from rummyzoo.agents.checkpoints import save_checkpoint
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_model, build_vec_env, checkpoint_meta

    config = load_config(Path(__file__).resolve().parent.parent / "configs" / "smoke_ppo.yaml",
                         ["n_envs=2", *overrides])  # fmt: skip
    env = build_vec_env(config)
    try:
        return save_checkpoint(build_model(config, env, None), path, checkpoint_meta(config, 0))
    finally:
        env.close()
