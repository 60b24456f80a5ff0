"""Helpers for tests that read a training run's folder or need a checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def tb_steps(run: Path) -> dict[str, list[int]]:
    """Every scalar's logged steps, per run folder and tag (``run_1/eval/score``: [...])."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps: dict[str, list[int]] = {}
    for folder in sorted(p for p in (run / "tb").iterdir() if p.is_dir()):
        # file by file in the order they were made: a folder's files are read in the order
        # of their names, whose last part, a count of the process's writers, sorts "10" before
        # "9" (two sessions of one test's process in one second came out of order)
        for path in sorted(folder.glob("events.out.tfevents.*"), key=_made):
            acc = EventAccumulator(str(path), size_guidance={"scalars": 0})
            acc.Reload()
            for tag in acc.Tags()["scalars"]:
                steps.setdefault(f"{folder.name}/{tag}", []).extend(
                    e.step for e in acc.Scalars(tag)
                )
    return steps


def _made(path: Path) -> tuple[int, ...]:
    """An event file's time and writer count, from its name (``events.out.tfevents.TIME.HOST.PID.N``)."""
    parts = path.name.split(".")
    return (int(parts[3]), int(parts[-1]) if parts[-1].isdigit() else 0)


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


def edit_meta(path: Path, dst: Path, change: Any) -> Path:
    """A copy of the checkpoint at ``path`` at ``dst`` whose metadata ``change`` (a function
    of the metadata's dict) edited; its weights as they were."""
    import json
    import zipfile

    with zipfile.ZipFile(path) as src:
        members = {info.filename: src.read(info) for info in src.infolist()}
    meta = json.loads(members["rummyzoo.json"])
    change(meta)
    members["rummyzoo.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(dst, "w") as out:
        for name, data in members.items():
            out.writestr(name, data)
    return dst


def assert_refuses_other_envs(path: Path, variant: str, num_players: int = 2) -> None:
    """The checkpoint at ``path`` (trained for ``variant`` at ``num_players``) is refused, with
    what does not match, by another variant and by another number of players, loaded or
    seated in the arena."""
    import pytest

    from rummyzoo.agents.arena import run_arena
    from rummyzoo.agents.checkpoints import CheckpointError, load_policy

    other = "ditch_rummy" if variant == "knock_rummy" else "knock_rummy"
    wrong_variant = f"does not match this env: variant: checkpoint '{variant}', env '{other}'"
    with pytest.raises(CheckpointError, match=wrong_variant):
        load_policy(path, other, num_players)
    more = num_players + 1
    wrong_players = f"does not match this env: num_players: checkpoint {num_players}, env {more}"
    with pytest.raises(CheckpointError, match=wrong_players):
        load_policy(path, variant, more)
    with pytest.raises(ValueError, match=wrong_variant):
        run_arena(other, num_players, [str(path), "random"], deals=1, seed=0, workers=1)
    with pytest.raises(ValueError, match=wrong_players):
        run_arena(variant, more, [str(path), "random", "random"], deals=1, seed=0, workers=1)
