"""Training runs: build envs and the model from a config, train with callbacks, resume.

Run folder layout::

    RUN_DIR/
      config.yaml       the resolved config (defaults filled in)
      command.txt       the command line
      version.json      package, python, torch, stable-baselines3 versions (+ git commit)
      state.json        progress: steps, snapshots in the pool, best evaluation so far
      tb/               TensorBoard logs
      checkpoints/      ckpt_<steps>.zip (periodic), last.zip, best.zip
      pool/             self-play snapshots
      games/            sample games as replays (``rummyzoo replay FILE``)
"""

from __future__ import annotations

import json
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.checkpoints import (
    atomic_write_text,
    env_signature,
    load_model,
    load_policy,
    read_meta,
)
from rummyzoo.training.config import RunConfig, config_to_yaml, load_config, validate_config
from rummyzoo.training.seat_env import OpponentMixture, SeatEnv

ACTIVATIONS = {"relu": "ReLU", "tanh": "Tanh", "elu": "ELU", "leaky_relu": "LeakyReLU"}


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rummyzoo")
    except PackageNotFoundError:
        return "unknown"


def version_info() -> dict[str, Any]:
    import stable_baselines3
    import torch

    info: dict[str, Any] = {
        "rummyzoo": package_version(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "numpy": np.__version__,
    }
    try:
        root = Path(__file__).resolve().parent.parent
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if commit.returncode == 0:
            info["git_commit"] = commit.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def make_seat_env(config: RunConfig, rank: int, run_dir: Path | None = None):
    """A factory for one training env (used by the VecEnv)."""

    def factory() -> SeatEnv:
        mixture = OpponentMixture(
            [(o.name, o.weight) for o in config.opponents],
            config.variant,
            config.num_players,
            config.env_options,
            pool_size=config.self_play.pool_size,
            sampling=config.self_play.sampling,
            snapshot_loader=lambda path, variant, n, options: load_policy(
                path, variant, n, options, deterministic=False
            ),
        )
        env = SeatEnv(
            config.variant,
            config.num_players,
            config.env_options,
            opponents=mixture,
            learner_seat=config.learner_seat,
            reward=config.reward,
            reward_scale=config.reward_scale,
            mask_in_obs=config.algo == "dqn",
            features=config.features,
            shaping=config.shaping,
            gamma=config.hyperparams.gamma,
        )
        env.reset(seed=config.seed * 1000 + rank)
        return env

    return factory


def build_vec_env(config: RunConfig):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    factories = [make_seat_env(config, rank) for rank in range(config.n_envs)]
    if config.vec_env == "subproc" and config.n_envs > 1:
        vec = SubprocVecEnv(factories, start_method="spawn")
    else:
        vec = DummyVecEnv(factories)
    return VecMonitor(vec)


def policy_kwargs(config: RunConfig) -> dict[str, Any]:
    import torch.nn as nn

    pk = config.policy_kwargs
    arch = (
        pk.net_arch
        if isinstance(pk.net_arch, list)
        else {"pi": pk.net_arch.pi, "vf": pk.net_arch.vf}
    )
    kwargs: dict[str, Any] = {
        "net_arch": arch,
        "activation_fn": getattr(nn, ACTIVATIONS[pk.activation_fn]),
    }
    if config.algo == "ppo":
        kwargs["ortho_init"] = pk.ortho_init
    elif isinstance(arch, dict):
        kwargs["net_arch"] = arch["pi"]  # DQN has one network
    return kwargs


def build_model(config: RunConfig, env: Any, tb_dir: Path | None):
    hp = config.hyperparams.model_dump()
    common = {
        "policy": "MlpPolicy",
        "env": env,
        "seed": config.seed,
        "device": config.device,
        "verbose": 0,
        "policy_kwargs": policy_kwargs(config),
        "tensorboard_log": str(tb_dir) if tb_dir else None,
    }
    if config.policy_kwargs.network == "cards":
        from rummyzoo.agents.networks import (
            CardActorCriticPolicy,
            CardDQNPolicy,
            card_layout,
        )

        common["policy"] = CardActorCriticPolicy if config.algo == "ppo" else CardDQNPolicy
        common["policy_kwargs"]["card_layout"] = card_layout(
            config.variant,
            config.num_players,
            config.env_options,
            config.features,
            mask_in_obs=config.algo == "dqn",
        )
    if config.algo == "ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO(**common, **hp)
    from rummyzoo.training.dqn import MaskedDQN

    return MaskedDQN(**common, **hp)


def checkpoint_meta(config: RunConfig, steps: int) -> dict[str, Any]:
    sig = env_signature(config.variant, config.num_players, config.env_options)
    return {
        **sig,
        "algo": config.algo,
        "mask_in_obs": config.algo == "dqn",
        "features": config.features,
        "steps": int(steps),
        "rummyzoo_version": package_version(),
        "reward": config.reward,
        "reward_scale": config.reward_scale,
    }


def new_run_dir(config: RunConfig, config_path: str | None, root: str | Path = "runs") -> Path:
    stem = Path(config_path).stem if config_path else f"{config.variant}_{config.algo}"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_dir = Path(root) / f"{stem}_{stamp}"
    k = 1
    while run_dir.exists():
        k += 1
        run_dir = Path(root) / f"{stem}_{stamp}_{k}"
    return run_dir


def write_run_files(run_dir: Path, config: RunConfig, argv: list[str]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / "config.yaml", config_to_yaml(config))
    atomic_write_text(run_dir / "command.txt", " ".join(shlex.quote(a) for a in argv) + "\n")
    atomic_write_text(run_dir / "version.json", json.dumps(version_info(), indent=2) + "\n")


def read_state(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "state.json"
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is corrupt ({exc}); cannot resume") from None


def run_pretrain(model: Any, config: RunConfig, run_dir: Path) -> dict[str, Any]:
    """The behaviour-cloning warm start, logged to ``tb/pretrain`` and returned."""
    from torch.utils.tensorboard import SummaryWriter

    from rummyzoo.training.pretrain import pretrain

    result = pretrain(model, config, make_seat_env(config, rank=10_000)())
    writer = SummaryWriter(str(run_dir / "tb" / "pretrain"))
    for key in ("accuracy", "cross_entropy", "value_loss", "collect_seconds", "fit_seconds"):
        writer.add_scalar(f"pretrain/{key}", result[key], 0)
    writer.close()
    print(
        f"pretrain: {result['decisions']} {result['teacher']} decisions in "
        f"{result['collect_seconds']:.0f}s, fitted in {result['fit_seconds']:.0f}s; "
        f"held-out accuracy {result['accuracy']:.3f}",
        flush=True,
    )
    return result


def train(
    config: RunConfig,
    run_dir: Path,
    argv: list[str] | None = None,
    resume: bool = False,
    progress_bar: bool = True,
) -> dict[str, Any]:
    """Train (or resume) a run; returns a summary with the checkpoint paths and figures."""
    import torch

    from rummyzoo.training.callbacks import RunCallback

    torch.set_num_threads(config.torch_threads)
    run_dir = Path(run_dir)
    tb_dir = run_dir / "tb"
    state: dict[str, Any] = {}
    env = build_vec_env(config)
    if resume:
        state = read_state(run_dir)
        last = run_dir / "checkpoints" / "last.zip"
        if not last.exists():
            raise ValueError(f"cannot resume {run_dir}: no checkpoints/last.zip")
        model, meta = load_model(last, device=config.device)
        expected = checkpoint_meta(config, 0)
        for key in ("variant", "num_players", "obs_size", "num_actions", "algo"):
            if meta.get(key) != expected[key]:
                raise ValueError(
                    f"cannot resume {run_dir}: checkpoint {key} {meta.get(key)!r} != config {expected[key]!r}"
                )
        model.set_env(env)
        model.tensorboard_log = str(tb_dir)
        if config.algo == "dqn":
            buffer = run_dir / "checkpoints" / "last_replay_buffer.pkl"
            if buffer.exists():
                model.load_replay_buffer(str(buffer))
        steps_done = int(meta["steps"])
        # The pool of self-play snapshots comes back as it was at the checkpoint.
        for snap in state.get("pool", []):
            if Path(snap["path"]).exists():
                env.env_method("add_snapshot", snap["path"], snap["steps"], snap.get("rating", 0.0))
    else:
        write_run_files(run_dir, config, argv or sys.argv)
        model = build_model(config, env, tb_dir)
        steps_done = 0
        if config.pretrain is not None:
            state["pretrain"] = run_pretrain(model, config, run_dir)
    callback = RunCallback(config, run_dir, state=state)
    remaining = max(config.n_timesteps - steps_done, 0)
    started = time.perf_counter()
    if remaining:
        model.learn(
            total_timesteps=remaining,
            callback=callback,
            log_interval=config.log_interval,
            tb_log_name="run",
            reset_num_timesteps=not resume,
            progress_bar=progress_bar,
        )
    elapsed = time.perf_counter() - started
    callback.finish(model)
    env.close()
    summary = {
        "run_dir": str(run_dir),
        "steps": int(model.num_timesteps),
        "seconds": elapsed,
        "steps_per_s": (model.num_timesteps - steps_done) / elapsed if elapsed > 0 else None,
        "last": str(run_dir / "checkpoints" / "last.zip"),
        "best": str(run_dir / "checkpoints" / "best.zip")
        if (run_dir / "checkpoints" / "best.zip").exists()
        else None,
        "best_eval": callback.best_value,
    }
    if callback.pretrain is not None:
        summary["pretrain"] = callback.pretrain
    atomic_write_text(run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    return summary


def train_from_file(
    config_path: str,
    overrides: list[str],
    run_dir: str | None,
    argv: list[str],
    progress_bar: bool = True,
) -> dict[str, Any]:
    config = load_config(config_path, overrides)
    target = Path(run_dir) if run_dir else new_run_dir(config, config_path)
    if (target / "state.json").exists():
        raise ValueError(f"{target} already holds a run; use --resume {target} to continue it")
    return train(config, target, argv=argv, progress_bar=progress_bar)


def resume_run(
    run_dir: str, overrides: list[str], argv: list[str], progress_bar: bool = True
) -> dict[str, Any]:
    path = Path(run_dir)
    if not (path / "config.yaml").exists():
        raise ValueError(f"{path} is not a run folder (no config.yaml)")
    import yaml

    data = yaml.safe_load((path / "config.yaml").read_text())
    from rummyzoo.training.config import apply_overrides

    config = validate_config(apply_overrides(data, overrides), str(path / "config.yaml"))
    return train(config, path, argv=argv, resume=True, progress_bar=progress_bar)


def checkpoint_info(path: str) -> dict[str, Any]:
    """The metadata of a checkpoint (validated)."""
    return read_meta(path)
