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
import shlex
import signal
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from rummyzoo.agents.checkpoints import (
    export_checkpoint,
    load_model,
    load_policy,
    read_trusted_meta,
    save_checkpoint,
)
from rummyzoo.envs.workers import ProcessDied, settled_heap
from rummyzoo.training.config import (
    RESUME_WHAT,
    RunConfig,
    fixed_fields,
    load_config,
    rebuilt_config,
    validate_config,
)
from rummyzoo.training.run_folder import (
    DEMONSTRATIONS,
    LOCK_FILE,
    WARM_START,
    RunDirTaken,
    check_writable,
    checked_state,
    checkpoint_meta,
    drop_temp_files,
    finished_run,
    new_run_dir,
    note_resume,
    rewind_run,
    run_lock,
    start_over,
    write_run_files,
    write_summary,
)
from rummyzoo.training.run_state import commit_staged, read_state, resume_steps, stop_requested
from rummyzoo.training.seat_env import OpponentMixture, SeatEnv
from rummyzoo.training.vec_env import BatchedSeatEnv


def make_seat_env(config: RunConfig, rank: int, run_dir: Path | None = None, resumed_at: int = 0):
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
        env.reset(seed=config.game_seed(rank, resumed_at))
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
        # PPO bootstraps a game cut by the turn cap from its value; the masked DQN scores it
        # as an end, so its shaping ends there with the potential 0 as at a real end
        "bootstrap_cuts": config.algo != "dqn",
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
        pfsp_score=config.league.score,
        distinct=config.league.tables == "distinct",
        snapshot_loader=lambda path, variant, n, options: load_policy(
            path, variant, n, options, deterministic=False
        ),
    )


def share_env(
    config_data: dict[str, Any], num_envs: int, first: int, resumed_at: int = 0
) -> BatchedSeatEnv:
    """The batched env of ``num_envs`` of a run's games from game ``first`` (a share of
    :class:`~rummyzoo.training.split_env.SplitSeatEnv`, built in the process that plays it
    from the run's config as data)."""
    return _batched_share(rebuilt_config(config_data), num_envs, first, resumed_at)


def _batched_share(
    config: RunConfig, num_envs: int, first: int, resumed_at: int = 0
) -> BatchedSeatEnv:
    """Games ``first .. first + num_envs - 1`` of a run: game ``first + i`` starts from the
    seed it has in one process."""
    return BatchedSeatEnv(
        config.variant,
        config.num_players,
        config.env_options,
        opponents=make_mixture(config),
        num_envs=num_envs,
        **learner_options(config),
        seed=config.game_seed(first, resumed_at),
        duplicate_baseline=config.duplicate_baseline,
    )


def build_batched_env(config: RunConfig, resumed_at: int = 0) -> Any:
    """The batched training env of a run (``vec_env: batched``): in this process, or with
    ``workers`` > 1 its games split between that many processes (this one included)."""
    if config.workers > 1:
        from rummyzoo.training.split_env import SplitSeatEnv

        data = config.model_dump(mode="json")
        build = functools.partial(share_env, data, resumed_at=resumed_at)
        return SplitSeatEnv(build, config.n_envs, config.workers)
    return _batched_share(config, config.n_envs, 0, resumed_at)


def build_vec_env(config: RunConfig, resumed_at: int = 0):
    """The training env of a run (``resumed_at``: the step a resumed run goes on from, whose
    games play from seeds of their own)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rummyzoo.training.vec_env import RunMonitor

    stride = config.seed_stride()
    if config.vec_env == "batched":
        return RunMonitor(build_batched_env(config, resumed_at), stride)
    factories = [
        make_seat_env(config, rank, resumed_at=resumed_at) for rank in range(config.n_envs)
    ]
    if config.vec_env == "subproc" and config.n_envs > 1:
        from rummyzoo.training.subproc import subproc_vec_env

        vec = subproc_vec_env(factories)
    else:
        vec = DummyVecEnv(factories)
    return RunMonitor(vec, stride)


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
    """The SB3 model of a run's config (fresh weights).

    :raises ValueError: a network too large for this machine's memory, said in one line.
    """
    try:
        return _build_model(config, env, tb_dir)
    except (MemoryError, RuntimeError) as exc:
        if not isinstance(exc, MemoryError) and "allocate" not in str(exc):
            raise
        if isinstance(exc, MemoryError) and "array with shape" in str(exc):
            # numpy's: the algorithm's buffer, not the network (torch's tensors)
            hp = config.hyperparams
            if config.algo == "ppo":
                what = (
                    f"the rollout buffer (hyperparams.n_steps x n_envs = {hp.n_steps:,} x "
                    f"{config.n_envs:,} steps)"
                )
            else:
                what = f"the replay buffer (hyperparams.buffer_size {hp.buffer_size:,} steps)"
            raise ValueError(
                f"{what} does not fit in this machine's memory: make it smaller"
            ) from None
        raise ValueError(
            f"the network (policy_kwargs.net_arch {config.policy_kwargs.net_arch}) does not fit "
            f"in the memory of device {config.device}: make its layers smaller"
        ) from None


def _build_model(config: RunConfig, env: Any, tb_dir: Path | None):
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
        model.update_threads = update_threads(config)
    else:
        from rummyzoo.training.dqn import MaskedDQN

        model = MaskedDQN(**common, **hp)
    _check_saveable(model, config)
    if tb_dir is None:
        # no logs to write (a benchmark, a checkpoint's network): a logger of no outputs, where
        # stable-baselines3's own would make an empty folder in the temp dir at every learn()
        from stable_baselines3.common.logger import Logger

        model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def _check_saveable(model: Any, config: RunConfig) -> None:
    """Refuse a network whose weights a checkpoint cannot hold (its size depends on the input
    as well as on ``net_arch``): refused at its first save or load otherwise."""
    from rummyzoo.agents.limits import MAX_WEIGHTS_BYTES

    size = sum(t.numel() * t.element_size() for t in model.policy.state_dict().values())
    if size > MAX_WEIGHTS_BYTES * 0.99:  # (the weights file's header takes the rest)
        raise ValueError(
            f"the network (policy_kwargs.net_arch {config.policy_kwargs.net_arch}) has "
            f"{size:,} bytes of weights, more than a checkpoint holds ({MAX_WEIGHTS_BYTES:,} "
            "at most): make its layers smaller"
        )


def update_threads(config: RunConfig) -> int:
    """The torch threads of a PPO run's updates (``update_threads``, else one per process or
    torch thread): not saved with the model, so a resumed run sets it again."""
    return config.update_threads or max(config.torch_threads, config.workers)


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
        file=sys.stderr,  # beside the progress: the summary alone goes to stdout
        flush=True,
    )
    return result


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
    last = resume_checkpoint(run_dir, config.backend)
    state: dict[str, Any] = {}
    if resume:
        commit_staged(run_dir)  # a checkpoint set left half moved into place
        drop_temp_files(run_dir)  # and the temporary files of writes a kill cut short
    started_over = resume and not last.exists()
    if started_over:
        start_over(run_dir, last)
        resume = False
    if resume:
        meta = read_trusted_meta(last)  # the run's own resume file: trusted
        steps_done = meta.get("steps")
        if isinstance(steps_done, bool) or not isinstance(steps_done, int) or steps_done < 0:
            raise ValueError(
                f"cannot resume {run_dir}: {last} is damaged (its steps are {steps_done!r})"
            )
        state = checked_state(run_dir, steps_done, "last.zip")
        demos = run_dir / "checkpoints" / DEMONSTRATIONS
        if keeps_demonstrations(config) and not demos.exists():
            raise ValueError(
                f"cannot resume {run_dir}: its config keeps the warm start's demonstrations "
                f"(pretrain.demo_coef {config.pretrain.demo_coef}) but {demos} is not there: a "
                "run keeps them only when it starts with demo_coef above 0 (raise it in a new "
                "run, not in a resume of one that started at 0), or the file was removed"
            )
        warm = run_dir / "checkpoints" / WARM_START
        if anchors(config) and not warm.exists():
            raise ValueError(
                f"cannot resume {run_dir}: its config anchors PPO to the warm start "
                f"(pretrain.anchor_coef) but {warm} is missing"
            )
        if steps_done >= config.n_timesteps:
            return finished_run(run_dir, steps_done, config.n_timesteps, config, state, argv)
    starts = getattr(config.hyperparams, "learning_starts", None)
    if config.algo == "dqn" and starts is not None and starts >= config.n_timesteps:
        warnings.warn(
            f"hyperparams.learning_starts ({starts:,}) is not below n_timesteps "
            f"({config.n_timesteps:,}): DQN updates its network only after learning_starts "
            "steps, so this run learns next to nothing; lower learning_starts or train for longer",
            stacklevel=2,
        )
    _warn_rollout_misfits(config)
    started = time.perf_counter()
    env = build_vec_env(config, resumed_at=steps_done if resume else 0)
    try:  # the env's processes (subproc, workers) end with any failure before RL too
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
                        f"cannot resume {run_dir}: checkpoint {key} {meta.get(key)!r} != config "
                        f"{expected[key]!r}{_layout_moved_by(meta, expected, key)}"
                    )
            # its random draws go on from a seed of the step it resumes at, not the run's start
            model.set_random_seed(config.resume_seed(steps_done))
            model.set_env(env)
            model.tensorboard_log = str(tb_dir)
            if config.algo == "dqn":
                buffer = run_dir / "checkpoints" / "last_replay_buffer.pkl"
                with _damaged(run_dir, buffer):
                    # the checkpoint's own (one left from before the run stopped saving them is
                    # not; state.json says which, in runs from before it said so the file alone)
                    saved = state.get("replay_buffer", buffer.exists())
                    if buffer.exists() and saved:
                        model.load_replay_buffer(str(buffer))
                        # a buffer saved while it refilled (the run before resumed without
                        # one) holds fewer than learning_starts transitions: it goes on refilling
                        held = model.replay_buffer.size() * model.n_envs
                        short = config.hyperparams.learning_starts - held
                        if short > 0:
                            model.refill_until = int(meta["steps"]) + short
                    else:
                        # an empty buffer: no updates on a handful of transitions; the network
                        # goes on acting (exploring as before) while it refills
                        starts = config.hyperparams.learning_starts
                        model.refill_until = int(meta["steps"]) + starts
                        why = (
                            f"{buffer} is missing"
                            if saved
                            else "the checkpoint has no replay buffer (checkpoints.save_replay_buffer)"
                        )
                        warnings.warn(
                            f"{why}: the run refills an empty replay buffer for learning_starts "
                            f"({starts}) steps before it learns again",
                            stacklevel=2,
                        )
                if keeps_demonstrations(config):  # its file was checked above
                    spec = config.pretrain
                    with _damaged(run_dir, demos):
                        model.load_demonstrations(
                            demos, spec.demo_coef, spec.margin, spec.demo_batch_size
                        )
            if anchors(config):  # its file was checked above
                set_anchor(model, config, run_dir)
            if config.algo == "ppo":
                model.update_threads = update_threads(config)
            steps_done = int(meta["steps"])
            print(
                f"resuming {run_dir} from its checkpoint at step {steps_done:,}",
                file=sys.stderr,
                flush=True,
            )
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
            # the network first: a config it cannot be built from leaves no run folder behind
            model = build_model(config, env, tb_dir)
            write_run_files(run_dir, config, argv or sys.argv, started_over)
            steps_done = 0
            if config.pretrain is not None:
                begun = time.perf_counter()
                state["pretrain"] = run_pretrain(model, config, run_dir, progress, progress_every)
                phases["warm_start_seconds"] = time.perf_counter() - begun
                state["warm_start_seconds"] = phases["warm_start_seconds"]
                if getattr(model, "demonstrations", None) is not None:
                    model.save_demonstrations(run_dir / "checkpoints" / DEMONSTRATIONS)
                # the network as the warm start left it, before any RL: what RL is measured against
                save_checkpoint(
                    model, run_dir / "checkpoints" / WARM_START, checkpoint_meta(config, 0)
                )
                if anchors(config):
                    set_anchor(model, config, run_dir)
        bar = Progress(
            f"train ({config.algo})",
            steps_at_end(config, steps_done),
            start=steps_done,
            mode=progress,
            every=progress_every,
        )
        callback = RunCallback(
            config, run_dir, state=state, progress=bar, started=started, resumed=resume
        )
        remaining = max(config.n_timesteps - steps_done, 0)
        begun = time.perf_counter()
    except BaseException:
        with contextlib.suppress(Exception):  # the failure that led here is what to see
            env.close()
        raise
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
        final_seconds = time.perf_counter() - begun - rl_seconds
    finally:
        bar.close()
        env.close()
    phases["rl_seconds"] = rl_seconds
    phases["final_seconds"] = final_seconds  # the last evaluation and checkpoint
    return write_summary(
        config, run_dir, callback, int(model.num_timesteps), steps_done, started, phases
    )


def train_from_file(
    config_path: str,
    overrides: list[str],
    run_dir: str | None,
    argv: list[str],
    progress: str = "auto",
    progress_every: float = 30.0,
) -> dict[str, Any]:
    """Train the run config ``config_path`` (a YAML file, or a shipped config by name, as
    ``rummyzoo train`` takes it) with ``key=value`` ``overrides`` into ``run_dir`` (new or
    empty; None: a new folder under ``runs/``), and return the run's summary (also written to
    its ``summary.json``; :func:`~rummyzoo.training.run_folder.format_summary` prints it for
    people).

    :param argv: the command line recorded with the run (``["notebook"]``, say).
    :param progress: ``"auto"`` (a bar on a terminal, a line every ``progress_every`` seconds
        otherwise), ``"bar"``, ``"lines"`` or ``"off"``.
    :raises ConfigLoadError: the config cannot be read or is refused (every problem named).
    :raises ValueError: ``run_dir`` is a file, holds a run (``--resume`` continues one) or is
        not empty.
    """
    config = load_config(config_path, overrides)
    for _ in range(1000):
        # a folder named for the run here is made by this process alone: another `train`
        # started at the same second (which takes the same name) goes on to the next name
        target = Path(run_dir) if run_dir else new_run_dir(config, config_path)
        try:
            return _train_into(target, config, argv, progress, progress_every, not run_dir)
        except RunDirTaken:
            continue
    raise ValueError(f"no new run folder could be made under runs/ (the last tried: {target})")


def _train_into(
    target: Path,
    config: RunConfig,
    argv: list[str],
    progress: str,
    progress_every: float,
    new: bool,
) -> dict[str, Any]:
    """:func:`train_from_file` into the run folder ``target``; ``new``: a folder named here,
    which must not exist yet (:class:`RunDirTaken` where another process made it first)."""
    if target.exists() and not target.is_dir():
        raise ValueError(f"the run folder {target} is a file: name a folder (new or empty)")
    # the lock first: a run that another process trains is said to be so (--resume, which
    # the checks below advise, would be refused for it)
    with _resumable(target), run_lock(target, new=new):
        if (target / "config.yaml").exists():
            raise ValueError(
                f"{target} already holds a run; use --resume {shlex.quote(str(target))} to continue it"
            )
        if target.is_dir():
            # the temporary file of a config.yaml whose writing a kill cut short is no run
            left = [p for p in target.iterdir() if p.name != LOCK_FILE and not _temp_file(p)]
            if left:
                raise ValueError(
                    f"the run folder {target} is not empty: name a folder (new or empty) for "
                    "the run"
                )
            for path in target.iterdir():
                if _temp_file(path):
                    path.unlink()
        return train(config, target, argv=argv, progress=progress, progress_every=progress_every)


def _temp_file(path: Path) -> bool:
    """The temporary file of a ``config.yaml`` being written (``.config.yaml.<random>.tmp``),
    which a kill cut short: the first file a new run writes."""
    name = path.name
    return path.is_file() and name.startswith(".config.yaml.") and name.endswith(".tmp")


@contextlib.contextmanager
def _damaged(run_dir: Path, path: Path) -> Any:
    """A run's own file that cannot be read back: one line naming it."""
    import pickle
    import zipfile

    try:
        yield
    except (
        OSError,
        EOFError,
        ValueError,
        KeyError,
        zipfile.BadZipFile,
        pickle.UnpicklingError,
    ) as exc:
        why = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise ValueError(f"cannot resume {run_dir}: {path} is damaged ({why})") from None


def steps_at_end(config: RunConfig, steps_done: int = 0) -> int:
    """The step count a run from ``steps_done`` stops at: ``n_timesteps`` rounded up to what
    one round of collection adds (PPO: a whole rollout, ``n_steps x n_envs``; DQN: ``train_freq``
    steps of every game), as stable-baselines3's loop collects whole rounds."""
    if config.algo == "ppo":
        unit = config.hyperparams.n_steps * config.n_envs
    else:
        unit = config.hyperparams.train_freq * config.n_envs
    left = max(config.n_timesteps - steps_done, 0)
    return steps_done + -(-left // unit) * unit


def _warn_rollout_misfits(config: RunConfig) -> None:
    """Warn where PPO's rollout (``n_steps x n_envs`` steps) and the settings around it do not
    fit: minibatches that do not divide it; or where a run overshoots its step count by more
    than 1%, as it collects whole rounds (PPO: rollouts, RLlib's training batches, which it fills
    to about their size; DQN: ``train_freq x n_envs`` steps)."""
    spec = config.hyperparams
    rllib = config.backend == "rllib"
    if config.algo == "ppo":
        rollout = spec.n_steps * config.n_envs
        unit = (
            f"training batches (n_steps x n_envs = {rollout:,} learner decisions)"
            if rllib
            else f"rollouts (n_steps x n_envs = {rollout:,} steps)"
        )
        if rllib:
            pass  # (RLlib's minibatches: learner_batches)
        elif spec.batch_size > rollout:
            warnings.warn(
                f"hyperparams.batch_size ({spec.batch_size:,}) is larger than a rollout (n_steps "
                f"x n_envs = {rollout:,} steps): every update takes the whole rollout as one "
                "minibatch; lower batch_size or raise n_steps or n_envs",
                stacklevel=3,
            )
        elif rollout % spec.batch_size:
            warnings.warn(
                f"hyperparams.batch_size ({spec.batch_size:,}) does not divide a rollout (n_steps "
                f"x n_envs = {rollout:,} steps): each epoch ends with a minibatch of "
                f"{rollout % spec.batch_size:,}",
                stacklevel=3,
            )
    else:
        unit = f"rounds (train_freq x n_envs = {spec.train_freq * config.n_envs:,} steps)"
    whole = steps_at_end(config)
    if whole - config.n_timesteps > 0.01 * config.n_timesteps:  # (a shipped config's is less)
        warnings.warn(
            f"n_timesteps ({config.n_timesteps:,}) is not a whole number of {unit}: the run "
            f"trains {'about ' if rllib else ''}{whole:,} steps",
            stacklevel=3,
        )


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) stopped a run; its message says how to continue it and from which
    step (or, stopped before the run wrote its config, that there is nothing to continue)."""

    def __init__(self, run_dir: Path, signum: int = signal.SIGINT) -> None:
        #: the signal that stopped the run (SIGINT for Ctrl-C): the command exits with
        #: 128 + it, as a process that signal ended would
        self.signum = int(signum)
        super().__init__(how_to_go_on(run_dir))


def how_to_go_on(run_dir: Path) -> str:
    """How to go on with a run that stopped (Ctrl-C, a failure), and from which step."""
    if (Path(run_dir) / "config.yaml").exists():
        steps = resume_steps(Path(run_dir))
        where = (
            f"from its last checkpoint, at step {steps:,}"
            if steps is not None
            else "from the beginning: it saved no checkpoint yet"
        )
        again = f"rummyzoo train --resume {shlex.quote(str(run_dir))}"
        return f"continue the run with: {again} (it goes on {where})"
    return f"it stopped before {run_dir} held a run: start it again with the same command"


def _stopped(signum: int, frame: Any) -> None:
    """Ctrl-C or SIGTERM during a run: noted (:data:`~rummyzoo.training.run_state.stop_requested`,
    in case Python swallows the exception where the signal lands), then KeyboardInterrupt."""
    stop_requested.set()
    _stop_signal[0] = signum
    raise KeyboardInterrupt("terminated" if signum == signal.SIGTERM else "")


#: the signal of the last stop (see _stopped)
_stop_signal = [int(signal.SIGINT)]


@contextlib.contextmanager
def _resumable(run_dir: Path) -> Any:
    """Turn Ctrl-C during a run into :class:`RunInterrupted` naming the run folder, and SIGTERM
    (what a batch scheduler, ``docker stop`` or ``kill`` send) into Ctrl-C for the while.

    Where the signal's KeyboardInterrupt lands in a weakref callback or a ``__del__``, Python
    cannot raise it and prints it ("Exception ignored in ..." and a traceback); the stop is
    noted and the run's next step raises it again (or, where the run had no step left, the end
    of the block), so such a print is only noise, and the run leaves it out
    (``sys.unraisablehook``, put back after the run unless something else replaced it since;
    every other exception is printed as before). A device's error in a thread of the run's
    (TensorBoard's writer, on a full disk) is one line of warning, not a traceback in the
    middle of the run's own error (``threading.excepthook``, put back the same way)."""
    handlers: dict[int, Any] = {}
    stop_requested.clear()
    _stop_signal[0] = signal.SIGINT
    unraisable_hook = sys.unraisablehook
    thread_hook = threading.excepthook
    quiet_stop: Any = None

    def thread_failed(failure: Any) -> None:
        if not isinstance(failure.exc_value, OSError):
            thread_hook(failure)
            return
        thread = failure.thread.name if failure.thread is not None else "a thread"
        print(
            f"rummyzoo train: warning: a thread of the run ({thread}) stopped: {failure.exc_value}",
            file=sys.stderr,
            flush=True,
        )

    threading.excepthook = thread_failed
    if threading.current_thread() is threading.main_thread():
        handlers[signal.SIGTERM] = signal.signal(signal.SIGTERM, _stopped)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            handlers[signal.SIGINT] = signal.signal(signal.SIGINT, _stopped)

        def quiet_stop(unraisable: Any) -> None:
            if not (
                isinstance(unraisable.exc_value, KeyboardInterrupt) and stop_requested.is_set()
            ):
                unraisable_hook(unraisable)

        sys.unraisablehook = quiet_stop
    try:
        yield
        if stop_requested.is_set():
            # a stop that Python swallowed where it landed, after the run's last step that
            # would have raised it (in the final evaluation, say): a stop all the same
            raise KeyboardInterrupt
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted(run_dir, _stop_signal[0]) from None
    except (OSError, ProcessDied) as exc:  # a full disk, a device's error, a helper process
        # killed: the run can go on once mended
        with contextlib.suppress(Exception):  # (what it says, however the folder is)
            exc.add_note(how_to_go_on(run_dir))
        raise
    finally:
        if quiet_stop is not None and sys.unraisablehook is quiet_stop:
            sys.unraisablehook = unraisable_hook
        if threading.excepthook is thread_failed:
            threading.excepthook = thread_hook
        for signum, previous in handlers.items():
            signal.signal(signum, previous)
        stop_requested.clear()


def _layout_moved_by(meta: dict[str, Any], expected: dict[str, Any], key: str) -> str:
    """Where the observation or the actions differ from the checkpoint's: the env_options
    that differ from the checkpoint's, which change them."""
    if key not in ("obs_size", "num_actions"):
        return ""
    before, now = meta.get("options") or {}, expected.get("options") or {}
    moved = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    if not moved:
        return ""
    return (
        f": env_options {', '.join(moved)} differ from the checkpoint's and change the "
        f"{'observation' if key == 'obs_size' else 'actions'}; start a new run to change them"
    )


def _refuse_fixed(
    path: Path,
    changed: list[str],
    edited: bool,
    values: tuple[dict[str, Any], dict[str, Any]] | None = None,
) -> None:
    """Refuse a resume that changes fields its checkpoint fixes, naming them (and, given the
    fields' ``values`` before and now, the keys of a section that changed)."""
    shown = []
    for name in changed:
        before, now = (values[0].get(name), values[1].get(name)) if values else (None, None)
        if isinstance(before, dict) and isinstance(now, dict):
            keys = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
            name = f"{name} ({', '.join(map(str, keys))})" if keys else name
        shown.append(name)
    raise ValueError(
        f"cannot resume {path} with {', '.join(shown)} changed: a resumed run goes on "
        f"with its checkpoint's {', '.join(RESUME_WHAT[name] for name in changed)}; "
        "start a new run to change them"
        + (" (its config.yaml was edited since the run trained)" if edited else "")
    )


def resume_checkpoint(run_dir: Path, backend: str) -> Path:
    """What a run resumes from: ``checkpoints/last.zip`` (stable-baselines3), or RLlib's
    checkpoint folder ``checkpoints/rllib``; a resumed run without it starts over."""
    return Path(run_dir) / "checkpoints" / ("rllib" if backend == "rllib" else "last.zip")


def goes_on(run_dir: Path, backend: str) -> bool:
    """Whether a resumed run goes on from a checkpoint (its warm start not played again): its
    resume checkpoint is there, or its ``state.json`` says it saved one (a run that lost it is
    refused by name, not started over)."""
    return resume_checkpoint(run_dir, backend).exists() or (Path(run_dir) / "state.json").exists()


def resume_run(
    run_dir: str,
    overrides: list[str],
    argv: list[str],
    progress: str = "auto",
    progress_every: float = 30.0,
) -> dict[str, Any]:
    path = Path(run_dir)
    if path.is_file():
        raise ValueError(
            f"{path} is a file: --resume takes a run's folder (the one that holds config.yaml)"
        )
    if not path.exists():
        raise ValueError(
            f"{path} does not exist: --resume takes a run's folder (the one that holds config.yaml)"
        )
    if not (path / "config.yaml").exists():
        raise ValueError(f"{path} is not a run folder (no config.yaml)")
    check_writable(path)
    with run_lock(path):  # first: nothing is read or moved while another process trains it
        config = _resumed_config(path, overrides)
        with _resumable(path):
            return train(
                config,
                path,
                argv=argv,
                resume=True,
                progress=progress,
                progress_every=progress_every,
            )


def _resumed_config(path: Path, overrides: list[str]) -> RunConfig:
    """The config a run resumes with: its own with ``overrides``, refused where they change
    what its checkpoint fixes (a run with no checkpoint yet starts over: nothing is fixed)."""
    import yaml

    try:
        data = yaml.safe_load((path / "config.yaml").read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        why = " ".join(str(exc).split())  # one line
        raise ValueError(f"{path / 'config.yaml'} is not valid YAML: {why}") from None
    from rummyzoo.training.config import apply_overrides

    # its agents are not built here: one that no longer loads (a checkpoint moved, a module
    # off the path) is for --set to replace, and only the config it resumes with must load
    stored = validate_config(data, str(path / "config.yaml"), skip_agents={"all"}, stored=True)
    # what the checkpoint was trained with: state.json's record (a hand edit of config.yaml
    # cannot change it either), else the stored config (runs saved before it was recorded)
    commit_staged(path)
    trained = read_state(path).get("fixed") or fixed_fields(stored)
    raw = apply_overrides(data, overrides)
    # a run that goes on from its last checkpoint does not play its warm start again, so its
    # teacher need not load (one that starts over, with no checkpoint yet, does)
    backend = raw.get("backend", "sb3") if isinstance(raw, dict) else "sb3"
    on = goes_on(path, backend)
    try:
        config = validate_config(
            raw, str(path / "config.yaml"), skip_agents={"teacher"} if on else (), stored=True
        )
    except ValueError:  # --set algo=dqn leaves PPO's hyperparameters: name the real problem
        if not on:  # no checkpoint fixes anything: the config's own error
            raise
        moved = [  # a changed algo, variant, backend... (not a mistyped nested key)
            name
            for name in trained
            if raw.get(name) != data.get(name) and not isinstance(raw.get(name), dict)
        ]
        if moved:
            _refuse_fixed(path, moved, edited=False)
        raise
    if not on:  # stopped before its first checkpoint: it starts over, with these settings
        return config
    now = fixed_fields(config)
    as_stored = fixed_fields(stored)
    # (a field a run's state.json does not record yet: as the stored config has it)
    before = {**as_stored, **trained}
    changed = [name for name in now if name in before and now[name] != before[name]]
    if changed:
        edited = all(now[name] == as_stored.get(name) for name in changed)
        _refuse_fixed(path, changed, edited, (before, now))
    return config
