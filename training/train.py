"""Training runs: build envs and the model from a config, train with callbacks, resume.

Run folder layout::

    RUN_DIR/
      config.yaml       the resolved config (defaults filled in)
      command.txt       the command line
      version.json      package, python, torch, stable-baselines3 versions (+ git commit)
      state.json        progress: steps, snapshots in the pool, best evaluation so far
      evaluations.json  every evaluation so far, written after each (curves, serve)
      tb/               TensorBoard logs
      checkpoints/      ckpt_<steps>.rz (periodic), last.rz, best.rz: shareable checkpoints
                        (data only: ``rummyzoo evaluate``, ``arena`` and ``play`` load them);
                        last.zip (+ last_replay_buffer.pkl for DQN): the resume state, SB3
                        pickles with the optimizer state (trusted: only --resume reads it),
                        saved with state.json as one set (see rummyzoo.training.run_state)
      pool/             self-play snapshots (.rz)
      games/            sample games as replays (``rummyzoo replay FILE``)
"""

from __future__ import annotations

import contextlib
import functools
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
    export_checkpoint,
    load_model,
    load_policy,
    model_meta,
    package_version,
    read_trusted_meta,
    save_checkpoint,
)
from rummyzoo.envs.files import atomic_write_text
from rummyzoo.envs.workers import settled_heap
from rummyzoo.training.config import (
    RESUME_WHAT,
    RunConfig,
    config_to_yaml,
    fixed_fields,
    load_config,
    validate_config,
)
from rummyzoo.training.run_state import commit_staged, read_state, rewind_best
from rummyzoo.training.seat_env import OpponentMixture, SeatEnv
from rummyzoo.training.vec_env import BatchedSeatEnv


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
        mixture = make_mixture(config)
        env = SeatEnv(
            config.variant,
            config.num_players,
            config.env_options,
            opponents=mixture,
            **learner_options(config),
        )
        env.reset(seed=config.game_seed(rank))
        return env

    return factory


def learner_options(config: RunConfig) -> dict[str, Any]:
    """What the learner sees and is rewarded by, as both training envs take it."""
    return {
        "learner_seat": config.learner_seat,
        "reward": config.reward,
        "reward_scale": config.reward_scale,
        "mask_in_obs": config.algo == "dqn",
        "features": config.features,
        "shaping": config.shaping,
        "gamma": config.hyperparams.gamma,
    }


def make_mixture(config: RunConfig) -> OpponentMixture:
    """The opponents of a run: its weighted entries and its self-play pool."""
    return OpponentMixture(
        [(o.name, o.weight) for o in config.opponents],
        config.variant,
        config.num_players,
        config.env_options,
        pool_size=config.self_play.pool_size,
        sampling=config.self_play.sampling,
        pfsp_exponent=config.league.exponent if config.league.sampling == "pfsp" else None,
        pfsp_window=config.league.window,
        distinct=config.league.tables == "distinct",
        snapshot_loader=lambda path, variant, n, options: load_policy(
            path, variant, n, options, deterministic=False
        ),
    )


def share_env(config_data: dict[str, Any], num_envs: int, first: int) -> BatchedSeatEnv:
    """The batched env of ``num_envs`` of a run's games from game ``first`` (a share of
    :class:`~rummyzoo.training.split_env.SplitSeatEnv`, built in the process that plays it
    from the run's config as data)."""
    return _batched_share(RunConfig.model_validate(config_data), num_envs, first)


def _batched_share(config: RunConfig, num_envs: int, first: int) -> BatchedSeatEnv:
    """Games ``first .. first + num_envs - 1`` of a run: game ``first + i`` starts from the
    seed it has in one process."""
    return BatchedSeatEnv(
        config.variant,
        config.num_players,
        config.env_options,
        opponents=make_mixture(config),
        num_envs=num_envs,
        **learner_options(config),
        seed=config.game_seed(first),
        duplicate_baseline=config.duplicate_baseline,
    )


def build_batched_env(config: RunConfig) -> Any:
    """The batched training env of a run (``vec_env: batched``): in this process, or with
    ``workers`` > 1 its games split between that many processes (this one included)."""
    if config.workers > 1:
        from rummyzoo.training.split_env import SplitSeatEnv

        data = config.model_dump(mode="json")
        return SplitSeatEnv(functools.partial(share_env, data), config.n_envs, config.workers)
    return _batched_share(config, config.n_envs, 0)


def build_vec_env(config: RunConfig):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    if config.vec_env == "batched":
        return VecMonitor(build_batched_env(config))
    factories = [make_seat_env(config, rank) for rank in range(config.n_envs)]
    if config.vec_env == "subproc" and config.n_envs > 1:
        vec = SubprocVecEnv(factories, start_method="spawn")
    else:
        vec = DummyVecEnv(factories)
    return VecMonitor(vec)


def policy_kwargs(config: RunConfig) -> dict[str, Any]:
    from rummyzoo.agents.networks import ACTIVATIONS

    pk = config.policy_kwargs
    arch = (
        pk.net_arch
        if isinstance(pk.net_arch, list)
        else {"pi": pk.net_arch.pi, "vf": pk.net_arch.vf}
    )
    kwargs: dict[str, Any] = {
        "net_arch": arch,
        "activation_fn": ACTIVATIONS[pk.activation_fn],
    }
    if config.algo == "ppo":
        kwargs["ortho_init"] = pk.ortho_init
    elif isinstance(arch, dict):
        kwargs["net_arch"] = arch["pi"]  # DQN has one network
    return kwargs


def policy_choice(config: RunConfig) -> tuple[Any, dict[str, Any]]:
    """The SB3 policy (``"MlpPolicy"`` or a class) of the config's network, and its kwargs
    (the card or action layout included): what both backends build the network from."""
    kwargs = policy_kwargs(config)
    network = config.policy_kwargs.network
    if network == "mlp":
        return "MlpPolicy", kwargs
    from rummyzoo.agents.networks import LAYOUTS, POLICY_CLASSES

    layout, key = LAYOUTS[network]
    kwargs[key] = layout(
        config.variant,
        config.num_players,
        config.env_options,
        config.features,
        mask_in_obs=config.algo == "dqn",
    )
    return POLICY_CLASSES[network, config.algo], kwargs


def build_model(config: RunConfig, env: Any, tb_dir: Path | None):
    hp = config.hyperparams.model_dump()
    policy, kwargs = policy_choice(config)
    common = {
        "policy": policy,
        "env": env,
        "seed": config.seed,
        "device": config.device,
        "verbose": 0,
        "policy_kwargs": kwargs,
        "tensorboard_log": str(tb_dir) if tb_dir else None,
    }
    if config.algo == "ppo":
        from rummyzoo.training.ppo import MaskedPPO

        model = MaskedPPO(**common, **hp)
        model.update_threads = config.update_threads or max(config.torch_threads, config.workers)
        return model
    from rummyzoo.training.dqn import MaskedDQN

    return MaskedDQN(**common, **hp)


def checkpoint_meta(config: RunConfig, steps: int) -> dict[str, Any]:
    return model_meta(
        config.variant,
        config.num_players,
        config.env_options,
        algo=config.algo,
        mask_in_obs=config.algo == "dqn",
        features=config.features,
        steps=steps,
        reward=config.reward,
        reward_scale=config.reward_scale,
    )


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


def checked_state(run_dir: Path, steps: int, checkpoint: str) -> dict[str, Any]:
    """The ``state.json`` saved with a run's checkpoint at ``steps``: refused when it is
    missing or from another step (its evaluations, pool and best checkpoint would not be the
    checkpoint's)."""
    state = read_state(run_dir)
    if not state:
        raise ValueError(
            f"cannot resume {run_dir}: its checkpoint {checkpoint} is there but state.json (the "
            "run's evaluations, self-play pool and best checkpoint) is missing"
        )
    if int(state.get("steps", -1)) != steps:
        raise ValueError(
            f"cannot resume {run_dir}: state.json is of step {state.get('steps')} but its "
            f"checkpoint {checkpoint} of step {steps}"
        )
    # the pool of self-play snapshots must come back as it was at the checkpoint
    missing = [s["path"] for s in state.get("pool", []) if not Path(s["path"]).exists()]
    if missing:
        raise ValueError(
            f"cannot resume {run_dir}: pool snapshot(s) of the checkpoint are missing: "
            + ", ".join(missing)
        )
    return state


def truncate_tensorboard(tb_dir: Path, step: int) -> int:
    """Drop every TensorBoard event logged after ``step`` (a resumed run logs them again).

    Each event file under ``tb_dir`` is rewritten with the events up to ``step`` only.
    :returns: the number of events dropped.
    """
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    dropped = 0
    for path in sorted(tb_dir.rglob("events.out.tfevents.*")):
        events = [Event.FromString(raw) for raw in RawEventFileLoader(str(path)).Load()]
        kept = [e for e in events if e.step <= step and not e.HasField("file_version")]
        late = sum(1 for e in events if e.step > step)
        if not late:
            continue
        dropped += late
        writer = EventFileWriter(str(path.parent), filename_suffix=".resumed")
        for event in kept:
            writer.add_event(event)
        writer.close()
        path.unlink()
    return dropped


#: The teacher's decisions a DQN run keeps for its updates (``pretrain.demo_coef``).
DEMONSTRATIONS = "demonstrations.npz"

#: The network as the warm start left it (what RL is measured against, and anchored to).
WARM_START = "warm_start.rz"


def keeps_demonstrations(config: RunConfig) -> bool:
    """Whether a run keeps its teacher's decisions for its DQN updates."""
    return config.algo == "dqn" and config.pretrain is not None and config.pretrain.demo_coef > 0


def anchors(config: RunConfig) -> bool:
    """Whether a run's PPO updates are anchored to its warm start (``pretrain.anchor_coef``)."""
    return config.algo == "ppo" and config.pretrain is not None and config.pretrain.anchor_coef > 0


def set_anchor(model: Any, config: RunConfig, run_dir: Path) -> None:
    """Anchor ``model``'s updates to the run's warm start, read back from its checkpoint
    (written by the warm start; a resumed run checks first that it is there)."""
    from rummyzoo.agents.safe import load_checkpoint

    network, _ = load_checkpoint(run_dir / "checkpoints" / WARM_START)
    model.set_anchor(network.policy, config.pretrain.anchor_coef)


def run_pretrain(
    model: Any, config: RunConfig, run_dir: Path, progress: str = "auto", every: float = 30.0
) -> dict[str, Any]:
    """The behaviour-cloning warm start, logged to ``tb/pretrain`` and returned."""
    from torch.utils.tensorboard import SummaryWriter

    from rummyzoo.training.pretrain import pretrain
    from rummyzoo.training.progress import Progress

    spec = config.pretrain
    with Progress(
        f"warm start ({spec.teacher})", spec.decisions, mode=progress, every=every, unit="decision"
    ) as bar:
        if config.vec_env == "batched":
            # the teacher's games in this process (the same games whatever ``workers`` is)
            env: Any = _batched_share(config, config.n_envs, 0)
        else:
            env = make_seat_env(config, rank=10_000)()
        result = pretrain(model, config, env, progress=bar.update)
        if config.vec_env == "batched":
            env.close()
    writer = SummaryWriter(str(run_dir / "tb" / "pretrain"))
    for key in ("accuracy", "cross_entropy", "value_loss", "collect_seconds", "fit_seconds"):
        if key in result:  # DQN's warm start has no cross-entropy
            writer.add_scalar(f"pretrain/{key}", result[key], 0)
    writer.close()
    print(
        f"warm start: {result['decisions']:,} {result['teacher']} decisions in "
        f"{result['collect_seconds']:.0f}s, fitted in {result['fit_seconds']:.0f}s; "
        f"held-out imitation accuracy {result['accuracy']:.3f}",
        flush=True,
    )
    return result


def fresh_run_dir(run_dir: Path) -> None:
    """Clear what a run that never reached its first checkpoint left (it starts over)."""
    import shutil

    for name in ("tb", "pool", "games", "checkpoints"):
        shutil.rmtree(run_dir / name, ignore_errors=True)
    for name in ("state.json", "summary.json"):
        (run_dir / name).unlink(missing_ok=True)


def train(
    config: RunConfig,
    run_dir: Path,
    argv: list[str] | None = None,
    resume: bool = False,
    progress: str = "auto",
    progress_every: float = 30.0,
) -> dict[str, Any]:
    """Train (or resume) a run; returns a summary with the checkpoint paths and figures.

    :param progress: ``auto`` (a bar on a terminal, lines elsewhere), ``bar``, ``lines`` or
        ``off`` (see :mod:`rummyzoo.training.progress`).
    :param progress_every: seconds between progress lines.
    """
    if config.backend == "rllib":
        from rummyzoo.training.rllib import train_rllib

        return train_rllib(config, Path(run_dir), argv, resume, progress, progress_every)
    import torch

    from rummyzoo.training.callbacks import RunCallback
    from rummyzoo.training.progress import Progress

    torch.set_num_threads(config.torch_threads)
    run_dir = Path(run_dir)
    tb_dir = run_dir / "tb"
    last = run_dir / "checkpoints" / "last.zip"
    state: dict[str, Any] = {}
    if resume:
        commit_staged(run_dir)  # a checkpoint set left half moved into place
    if resume and not last.exists():
        print(f"{run_dir} has no checkpoint yet: starting the run from the beginning", flush=True)
        fresh_run_dir(run_dir)
        resume = False
    if resume:
        meta = read_trusted_meta(last)  # the run's own resume file: trusted
        steps_done = int(meta["steps"])
        state = checked_state(run_dir, steps_done, "last.zip")
        demos = run_dir / "checkpoints" / DEMONSTRATIONS
        if keeps_demonstrations(config) and not demos.exists():
            raise ValueError(
                f"cannot resume {run_dir}: its config keeps the warm start's demonstrations "
                f"(pretrain.demo_coef) but {demos} is missing"
            )
        warm = run_dir / "checkpoints" / WARM_START
        if anchors(config) and not warm.exists():
            raise ValueError(
                f"cannot resume {run_dir}: its config anchors PPO to the warm start "
                f"(pretrain.anchor_coef) but {warm} is missing"
            )
        if steps_done >= config.n_timesteps:
            return finished_run(run_dir, steps_done, config.n_timesteps)
    started = time.perf_counter()
    env = build_vec_env(config)
    phases: dict[str, float] = {}
    if resume:
        from rummyzoo.training.dqn import MaskedDQN
        from rummyzoo.training.ppo import MaskedPPO

        # a run goes on with the class that trained it (DQN: masked exploration and TD
        # targets; PPO: the lean masked forward of the rollouts)
        model, meta = load_model(
            last, device=config.device, classes={"dqn": MaskedDQN, "ppo": MaskedPPO}
        )
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
            if keeps_demonstrations(config):  # its file was checked above
                spec = config.pretrain
                model.load_demonstrations(demos, spec.demo_coef, spec.margin, spec.demo_batch_size)
        if anchors(config):  # its file was checked above
            set_anchor(model, config, run_dir)
        steps_done = int(meta["steps"])
        model.num_timesteps = steps_done
        rewind_run(run_dir, steps_done)
        # The pool of self-play snapshots comes back as it was at the checkpoint (checked_state
        # made sure every snapshot is there).
        for snap in state.get("pool", []):
            if snap["path"].endswith(".zip"):  # a run from before shareable snapshots (its own)
                snap["path"] = str(export_checkpoint(snap["path"])["path"])
            env.env_method("add_snapshot", snap["path"], snap["steps"], snap.get("rating", 0.0))
        note_resume(run_dir, config, argv)
    else:
        write_run_files(run_dir, config, argv or sys.argv)
        model = build_model(config, env, tb_dir)
        steps_done = 0
        if config.pretrain is not None:
            begun = time.perf_counter()
            state["pretrain"] = run_pretrain(model, config, run_dir, progress, progress_every)
            phases["warm_start_seconds"] = time.perf_counter() - begun
            state["warm_start_seconds"] = phases["warm_start_seconds"]
            if getattr(model, "demonstrations", None) is not None:
                model.save_demonstrations(run_dir / "checkpoints" / DEMONSTRATIONS)
            # the network as the warm start left it, before any RL: what RL is measured against
            save_checkpoint(model, run_dir / "checkpoints" / WARM_START, checkpoint_meta(config, 0))
            if anchors(config):
                set_anchor(model, config, run_dir)
    bar = Progress(
        f"train ({config.algo})",
        config.n_timesteps,
        start=steps_done,
        mode=progress,
        every=progress_every,
    )
    callback = RunCallback(config, run_dir, state=state, progress=bar, started=started)
    remaining = max(config.n_timesteps - steps_done, 0)
    begun = time.perf_counter()
    try:
        with settled_heap():
            model.learn(
                total_timesteps=remaining,
                callback=callback,
                log_interval=config.log_interval,
                tb_log_name="run",
                reset_num_timesteps=not resume,
            )
        rl_seconds = time.perf_counter() - begun
        callback.finish(model)
    finally:
        bar.close()
        env.close()
    phases["rl_seconds"] = rl_seconds
    return write_summary(
        config, run_dir, callback, int(model.num_timesteps), steps_done, started, phases
    )


def finished_run(run_dir: Path, steps_done: int, n_timesteps: int) -> dict[str, Any]:
    """The summary of a run resumed with nothing left to train (it is left alone)."""
    print(
        f"{run_dir} is finished: {steps_done:,} of {n_timesteps:,} steps done; "
        "nothing to train (raise n_timesteps with --set to continue it)",
        flush=True,
    )
    if (run_dir / "summary.json").exists():
        return {**read_summary(run_dir), "finished_before": True}
    return {"run_dir": str(run_dir), "steps": steps_done, "finished_before": True}


def read_summary(run_dir: Path) -> dict[str, Any]:
    """A run's ``summary.json``, its paths those of the folder where it is now (the file names
    them as they were from where the run trained: another folder once it is moved or copied,
    or read from elsewhere).

    :raises OSError, ValueError: unreadable or not JSON.
    """
    summary = json.loads((Path(run_dir) / "summary.json").read_text())
    if not isinstance(summary, dict):
        raise ValueError(f"{run_dir}/summary.json holds no summary")
    run_dir = Path(run_dir)
    summary["run_dir"] = str(run_dir)
    for key, folder in (("last", "checkpoints"), ("best", "checkpoints")):
        if isinstance(summary.get(key), str):
            summary[key] = str(run_dir / folder / Path(summary[key]).name)
    if "tensorboard" in summary:
        summary["tensorboard"] = f"tensorboard --logdir {run_dir / 'tb'}"
    if isinstance(summary.get("sample_games"), list):
        summary["sample_games"] = [
            str(run_dir / "games" / Path(str(p)).name) for p in summary["sample_games"]
        ]
    return summary


def rewind_run(run_dir: Path, steps_done: int) -> None:
    """A resumed run's TensorBoard and sample games as they were at its checkpoint: what was
    logged or played after it is logged and played again from there."""
    truncate_tensorboard(run_dir / "tb", steps_done)
    rewind_best(run_dir, steps_done)
    (run_dir / "evaluations.json").unlink(missing_ok=True)  # state.json's are the checkpoint's
    for game in (run_dir / "games").glob("sample_*.json"):
        if int(game.stem.split("_")[1]) > steps_done:
            game.unlink()


def note_resume(run_dir: Path, config: RunConfig, argv: list[str] | None) -> None:
    """A resumed run's folder: the config as resumed, the resume command added."""
    atomic_write_text(run_dir / "config.yaml", config_to_yaml(config))
    with (run_dir / "command.txt").open("a") as fh:
        fh.write(" ".join(shlex.quote(a) for a in (argv or sys.argv)) + "\n")


def write_summary(
    config: RunConfig,
    run_dir: Path,
    callback: Any,
    steps: int,
    steps_done: int,
    started: float,
    phases: dict[str, float],
    **extra: Any,
) -> dict[str, Any]:
    """The run's summary (``summary.json``, written atomically, and returned)."""
    rl_seconds = phases.get("rl_seconds")
    best = run_dir / "checkpoints" / "best.rz"
    summary = {
        "run_dir": str(run_dir),
        **extra,
        "variant": config.variant,
        "num_players": config.num_players,
        "algo": config.algo,
        "steps": steps,
        "steps_this_session": steps - steps_done,
        "seconds": callback.run_seconds(),  # the whole run's, every session's
        "seconds_this_session": time.perf_counter() - started,
        **(
            {}
            if callback.warm_start_seconds is None
            else {"warm_start_seconds": callback.warm_start_seconds}
        ),
        **phases,
        "rl_steps_per_s": (steps - steps_done) / rl_seconds if rl_seconds else None,
        "last": str(run_dir / "checkpoints" / "last.rz"),
        "best": str(best) if best.exists() else None,
        "best_eval": callback.best_value,
        "best_metric": config.evaluation.best_metric,
        "evaluations": callback.eval_history,
        "tensorboard": f"tensorboard --logdir {run_dir / 'tb'}",
        "sample_games": sorted(str(p) for p in (run_dir / "games").glob("*.json")),
    }
    if callback.pretrain is not None:
        summary["pretrain"] = callback.pretrain
    atomic_write_text(run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    return summary


def format_summary(summary: dict[str, Any]) -> str:
    """The end of a run, for people: what was trained, how long each phase took, the
    evaluations (first and last) against each opponent, and where everything is."""
    if summary.get("finished_before"):
        return f"nothing trained: {summary['run_dir']} was already finished"
    lines = [
        f"trained {summary['algo']} on {summary['variant']} ({summary['num_players']} players): "
        f"{summary['steps']:,} steps ({summary['steps_this_session']:,} in this session), "
        f"{summary['seconds']:.0f}s in all"
        + (
            f" ({summary['seconds_this_session']:.0f}s in this session)"
            if summary["steps_this_session"] != summary["steps"]
            and "seconds_this_session" in summary
            else ""
        )
    ]
    if "warm_start_seconds" in summary:
        pre = summary.get("pretrain", {})
        lines.append(
            f"  warm start: {summary['warm_start_seconds']:.0f}s ({pre.get('decisions', 0):,} "
            f"{pre.get('teacher', '')} decisions, imitation accuracy {pre.get('accuracy', 0):.3f})"
        )
    rate = summary.get("rl_steps_per_s")
    resumed = summary["steps_this_session"] != summary["steps"]
    lines.append(
        f"  RL{' in this session' if resumed else ''}: {summary['rl_seconds']:.0f}s"
        + (f" ({rate:,.0f} steps/s)" if rate else "")
    )
    history = summary.get("evaluations") or []
    if history:
        first, final = history[0], history[-1]
        lines.append("")
        lines.append(
            f"evaluation (win rate with its 95% interval, mean points per hand), at step "
            f"{first['steps']:,} and at step {final['steps']:,}:"
        )
        width = max(len(o) for o in final["results"])
        for opponent, result in final["results"].items():
            before = first["results"].get(opponent)

            def cell(r: dict[str, Any]) -> str:
                low, high = r["win_rate_ci"]
                return f"{r['win_rate']:.3f} [{low:.3f}, {high:.3f}] {r['mean_points']:+7.2f}"

            shown = f"{cell(before)}  ->  " if before is not None and first is not final else ""
            lines.append(f"  vs {opponent:<{width}}  {shown}{cell(result)}")
    lines.append("")
    lines.append(f"run folder:  {summary['run_dir']}")
    lines.append(
        f"checkpoints: {summary['last']}" + (f", {summary['best']}" if summary["best"] else "")
    )
    lines.append(
        f"watch it:    {summary['tensorboard']} (CUSTOM SCALARS: win rates with their intervals, "
        "ratings, strategy; IMAGES: the cross table; TEXT: sample games)"
    )
    games = summary.get("sample_games") or []
    if games:
        lines.append(f"sample game: rummyzoo replay {games[-1]}")
        page = str(Path(games[-1]).with_suffix(".html"))
        lines.append(f"in a browser: rummyzoo replay {games[-1]} --html {page}")
    runs = Path(summary["run_dir"]).parent
    lines.append(f"all runs:    rummyzoo serve {runs} (then open http://127.0.0.1:8000/)")
    return "\n".join(lines)


def train_from_file(
    config_path: str,
    overrides: list[str],
    run_dir: str | None,
    argv: list[str],
    progress: str = "auto",
    progress_every: float = 30.0,
) -> dict[str, Any]:
    config = load_config(config_path, overrides)
    target = Path(run_dir) if run_dir else new_run_dir(config, config_path)
    if target.exists() and not target.is_dir():
        raise ValueError(f"the run folder {target} is a file: name a folder (new or empty)")
    if (target / "config.yaml").exists():
        raise ValueError(f"{target} already holds a run; use --resume {target} to continue it")
    with _resumable(target):
        return train(config, target, argv=argv, progress=progress, progress_every=progress_every)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; its message says how to continue it."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(
            f"continue the run with: rummyzoo train --resume {run_dir} (it goes on from its last "
            "checkpoint, or starts again if it has none yet)"
        )


@contextlib.contextmanager
def _resumable(run_dir: Path) -> Any:
    """Turn Ctrl-C during a run into :class:`RunInterrupted` naming the run folder."""
    try:
        yield
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted(run_dir) from None


def _refuse_fixed(path: Path, changed: list[str], edited: bool) -> None:
    raise ValueError(
        f"cannot resume {path} with {', '.join(changed)} changed: a resumed run goes on "
        f"with its checkpoint's {', '.join(RESUME_WHAT[name] for name in changed)}; "
        "start a new run to change them"
        + (" (its config.yaml was edited since the run trained)" if edited else "")
    )


def resume_run(
    run_dir: str,
    overrides: list[str],
    argv: list[str],
    progress: str = "auto",
    progress_every: float = 30.0,
) -> dict[str, Any]:
    path = Path(run_dir)
    if not (path / "config.yaml").exists():
        raise ValueError(f"{path} is not a run folder (no config.yaml)")
    import yaml

    try:
        data = yaml.safe_load((path / "config.yaml").read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path / 'config.yaml'} is not valid YAML: {exc}") from None
    from rummyzoo.training.config import apply_overrides

    stored = validate_config(data, str(path / "config.yaml"))
    # what the checkpoint was trained with: state.json's record (a hand edit of config.yaml
    # cannot change it either), else the stored config (runs saved before it was recorded)
    commit_staged(path)
    trained = read_state(path).get("fixed") or fixed_fields(stored)
    raw = apply_overrides(data, overrides)
    try:
        config = validate_config(raw, str(path / "config.yaml"))
    except ValueError:  # --set algo=dqn leaves PPO's hyperparameters: name the real problem
        moved = [  # a changed algo, variant, backend... (not a mistyped nested key)
            name
            for name in trained
            if raw.get(name) != data.get(name) and not isinstance(raw.get(name), dict)
        ]
        if moved:
            _refuse_fixed(path, moved, edited=False)
        raise
    now = fixed_fields(config)
    changed = [name for name in now if name in trained and now[name] != trained[name]]
    if changed:
        edited = all(now[name] == fixed_fields(stored).get(name) for name in changed)
        _refuse_fixed(path, changed, edited)
    with _resumable(path):
        return train(
            config, path, argv=argv, resume=True, progress=progress, progress_every=progress_every
        )
