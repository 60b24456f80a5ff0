"""A run folder's own files and its life: made (``config.yaml``, ``command.txt``,
``version.json``), checked and rewound to its checkpoint on a resume, finished
(``summary.json``), and summed up. Both backends (stable-baselines3 and RLlib) run their runs
through these; :mod:`rummyzoo.training.run_state` keeps the resume set itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.checkpoints import CheckpointError, model_meta, package_version, read_meta
from rummyzoo.envs.files import atomic_write_text, held_lock, remove_empty
from rummyzoo.training.config import RunConfig, config_to_yaml
from rummyzoo.training.run_state import read_state, rewind_best


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
        # the commit of a checkout this code runs from: only where git tracks this very file
        # (an installed copy inside a project of your own is in no commit of its)
        here = Path(__file__).resolve()
        git = ["git", "-C", str(here.parent)]
        tracked = subprocess.run(
            [*git, "ls-files", "--error-unmatch", "--", here.name], capture_output=True, timeout=5
        )
        commit = subprocess.run(
            [*git, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if tracked.returncode == 0 and commit.returncode == 0:
            info["git_commit"] = commit.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


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
    while os.path.lexists(run_dir):  # (a dangling link too: a name taken)
        k += 1
        run_dir = Path(root) / f"{stem}_{stamp}_{k}"
    return run_dir


class RunDirTaken(ValueError):
    """A run folder that had to be new exists (another process made it first)."""


def make_run_dir(run_dir: Path, new: bool = False) -> list[Path]:
    """Make the run folder (and the folders above it) if missing.

    :param new: the run folder must not exist: made by this process alone (``mkdir``, which
        one process wins), or :class:`RunDirTaken`.
    :returns: the folders it made, the run folder first (each inside the next).
    :raises ValueError: naming the folder and why it cannot be made (a file in its place or
        above it, a folder that cannot be written in).
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f"run folder {run_dir} is a file")
    missing = []
    for folder in (run_dir, *run_dir.absolute().parents):
        if folder.exists():
            break
        missing.append(folder)
    try:
        if not new:
            run_dir.mkdir(parents=True, exist_ok=True)
        else:
            if not os.path.lexists(run_dir.parent):  # (a file there: run_dir's mkdir says so)
                run_dir.parent.mkdir(parents=True, exist_ok=True)
            try:
                run_dir.mkdir()
            except FileExistsError:
                raise RunDirTaken(f"run folder {run_dir} was made by another process") from None
    except OSError as exc:
        raise ValueError(f"cannot make the run folder {run_dir}: {exc.strerror or exc}") from None
    return missing


def write_run_files(
    run_dir: Path, config: RunConfig, argv: list[str], started_over: bool = False
) -> None:
    """The run's config, command and versions; a run that starts over (resumed before its
    first checkpoint) adds its command to the ones that started it."""
    make_run_dir(run_dir)
    atomic_write_text(run_dir / "config.yaml", config_to_yaml(config))
    line = " ".join(shlex.quote(a) for a in argv) + "\n"
    command = run_dir / "command.txt"
    if started_over and command.is_file():
        line = command.read_text() + line
    atomic_write_text(command, line)
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
    for snap in state.get("pool", []):
        if snap["path"].endswith(".rz"):  # read now, before the resume changes anything
            try:
                read_meta(snap["path"])
            except (CheckpointError, ValueError, OSError) as exc:
                raise ValueError(f"cannot resume {run_dir}: pool snapshot {exc}") from None
    return state


#: Where a resume writes the TensorBoard files it rewinds before they replace the originals.
TB_SCRATCH = ".tb_rewind"


def truncate_tensorboard(tb_dir: Path, step: int) -> int:
    """Drop every TensorBoard event logged after ``step`` (a resumed run logs them again).

    Each event file under ``tb_dir`` is rewritten with the events up to ``step`` only.
    :returns: the number of events dropped.
    """
    import shutil

    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    # Each file is written whole beside the run's TensorBoard folder (where TensorBoard does
    # not look), then moved over the original: a resume killed here leaves every file either
    # as it was or rewound, never both (which would show each step twice).
    scratch = tb_dir.parent / TB_SCRATCH
    shutil.rmtree(scratch, ignore_errors=True)  # left by a resume killed here
    dropped = 0
    for path in sorted(tb_dir.rglob("events.out.tfevents.*")):
        events = [Event.FromString(raw) for raw in RawEventFileLoader(str(path)).Load()]
        kept = [e for e in events if e.step <= step and not e.HasField("file_version")]
        late = sum(1 for e in events if e.step > step)
        if not late:
            continue
        dropped += late
        scratch.mkdir(exist_ok=True)
        writer = EventFileWriter(str(scratch))
        for event in kept:
            writer.add_event(event)
        writer.close()
        (rewritten,) = scratch.iterdir()
        os.replace(rewritten, path)
    shutil.rmtree(scratch, ignore_errors=True)
    return dropped


#: The teacher's decisions a DQN run keeps for its updates (``pretrain.demo_coef``).
DEMONSTRATIONS = "demonstrations.npz"

#: The network as the warm start left it (what RL is measured against, and anchored to).
WARM_START = "warm_start.rz"


#: The file a training process holds locked while it trains a run folder (it names the pid).
LOCK_FILE = ".lock"


@contextlib.contextmanager
def run_lock(run_dir: Path, new: bool = False) -> Any:
    """Hold the run folder for this process while it trains (made if missing): a second
    ``rummyzoo train`` of the same folder, a resume while the run still trains, is refused
    instead of both writing its checkpoints. The lock file (``.lock``, naming the pid) is
    removed when the process lets go; one a killed process left behind holds nothing. The
    folders made here that the run left empty (refused before it wrote a file), the ones
    above the run folder too, are removed again. ``new``: the run folder must be made here
    (:func:`make_run_dir`).
    """
    run_dir = Path(run_dir)
    made = make_run_dir(run_dir, new=new)
    try:
        with held_lock(run_dir / LOCK_FILE, f"{run_dir} is being trained by another process"):
            yield
    finally:
        remove_empty(made)  # the run folder first, then each made above it, while empty


def start_over(run_dir: Path, checkpoint: Path) -> None:
    """A resumed run without its checkpoint: one that never reached its first checkpoint
    starts again from the beginning; one whose ``state.json`` says it saved a checkpoint is
    refused (the checkpoint is gone: nothing is deleted)."""
    state = run_dir / "state.json"
    if state.exists():
        raise ValueError(
            f"cannot resume {run_dir}: state.json says the run saved a checkpoint, but "
            f"{checkpoint.relative_to(run_dir)} is missing (restore it, or train a new run)"
        )
    print(
        f"{run_dir} has no checkpoint yet: starting the run from the beginning",
        file=sys.stderr,
        flush=True,
    )
    fresh_run_dir(run_dir)


def drop_temp_files(run_dir: Path) -> list[Path]:
    """Remove the temporary files of atomic writes that a killed run left in its folder
    (``.<name>.<random>.tmp``, never read); returns them."""
    left = [p for p in Path(run_dir).rglob(".*.tmp") if p.is_file()]
    for path in left:
        path.unlink(missing_ok=True)
    return left


#: The folders of a run, each written while it trains.
RUN_FOLDERS = ("tb", "pool", "games", "checkpoints")


def check_writable(run_dir: Path) -> None:
    """Refuse, before anything is changed, a run folder (or one of :data:`RUN_FOLDERS`) that
    cannot be written in: a resume would otherwise train to its first checkpoint and fail there.

    :raises ValueError: naming the folder.
    """
    from rummyzoo.envs.files import unwritable

    for folder in (run_dir, *(run_dir / name for name in RUN_FOLDERS)):
        why = unwritable(folder) if folder.is_dir() else None
        if why is not None:
            raise ValueError(f"cannot resume {run_dir}: cannot write in {folder} ({why.strerror})")


def fresh_run_dir(run_dir: Path) -> None:
    """Clear what a run that never reached its first checkpoint left (it starts over)."""
    import shutil

    for name in RUN_FOLDERS:
        shutil.rmtree(run_dir / name, ignore_errors=True)
    for name in ("state.json", "summary.json", "evaluations.json"):
        (run_dir / name).unlink(missing_ok=True)


class _Recorded:
    """A run's figures as its last checkpoint's state holds them: what :func:`write_summary`
    reads of a run's callback, for a run that has nothing left to train."""

    resumed = True
    scheduled_seconds = 0.0

    def __init__(self, state: dict[str, Any]) -> None:
        self.best_value = state.get("best_value")
        self.eval_history = list(state.get("eval_history", []))
        self.pretrain = state.get("pretrain")
        self.warm_start_seconds = state.get("warm_start_seconds")
        self.seconds = float(state.get("seconds", 0.0))

    def run_seconds(self) -> float:
        return self.seconds


def finished_run(
    run_dir: Path,
    steps_done: int,
    n_timesteps: int,
    config: RunConfig | None = None,
    state: dict[str, Any] | None = None,
    argv: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The summary of a run resumed with nothing left to train (it is left alone). A run
    stopped after its last checkpoint but before it wrote ``summary.json`` gets it now, from
    its checkpoint's ``state`` (with ``config``, which its folder records from then on, with
    the command, ``argv``; ``extra``: the backend's own keys)."""
    if config is not None and state is not None and not (run_dir / "summary.json").exists():
        # a run stopped short of its own target, given one below what it trained (a run
        # past its target, the last rollout or iteration overshooting it, is finished)
        target = run_progress(run_dir).get("total")
        if target is not None and target > steps_done > n_timesteps:
            raise ValueError(
                f"{run_dir} stopped at step {steps_done:,} of its {target:,}, past n_timesteps "
                f"{n_timesteps:,}: leave n_timesteps out to go on to {target:,}, or give "
                f"{steps_done:,} or more (it would be recorded as finished where it stopped)"
            )
        print(
            f"{run_dir} trained all its steps; its summary, which its last session did not "
            "write, is written now",
            file=sys.stderr,
            flush=True,
        )
        # the target it finished at (given with --set, below the one it started with) is the
        # run's from now on: a later resume finds it finished, as this one does
        note_resume(run_dir, config, argv)
        drop_unnamed(run_dir)  # a stop after its last checkpoint's set was moved into place
        phases = {"rl_seconds": 0.0}  # this session trains nothing
        now = time.perf_counter()
        return write_summary(
            config, run_dir, _Recorded(state), steps_done, steps_done, now, phases, **extra
        )
    done = (
        f"{steps_done:,} of {n_timesteps:,} steps done"
        if steps_done <= n_timesteps
        else f"it trained {steps_done:,} steps, more than n_timesteps ({n_timesteps:,})"
    )
    print(
        f"{run_dir} is finished: {done}; nothing to train (raise n_timesteps above "
        f"{steps_done:,} with --set to continue it)",
        file=sys.stderr,
        flush=True,
    )
    # this session trained nothing: the run's summary with this session's figures
    session = {
        "steps_this_session": 0,
        "seconds_this_session": 0.0,
        "resumed": True,
        "rl_seconds": None,
        "rl_steps_per_s": None,
        "scheduled_seconds": None,
    }
    if (run_dir / "summary.json").exists():
        return {**read_summary(run_dir), **session, "finished_before": True}
    return {"run_dir": str(run_dir), "steps": steps_done, **session, "finished_before": True}


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
        summary["tensorboard"] = f"tensorboard --logdir {shlex.quote(str(run_dir / 'tb'))}"
    if isinstance(summary.get("sample_games"), list):
        summary["sample_games"] = [
            str(run_dir / "games" / Path(str(p)).name) for p in summary["sample_games"]
        ]
    return summary


def _flock_held(path: Path) -> bool | None:
    """Whether a process holds a ``flock`` on the file ``path`` now, from the kernel's table of
    locks (``/proc/locks``, Linux; None where it cannot be read). Read without taking the lock,
    which a run starting meanwhile needs."""
    try:
        stat = path.stat()
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    # by the inode alone: the table's device is the filesystem's, which ``stat`` gives
    # otherwise on some (btrfs subvolumes, overlays)
    inode = str(stat.st_ino)
    return any(
        len(fields) > 5 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == inode
        for fields in (line.split() for line in table.splitlines())
    )


def training_pid(run_dir: Path) -> int | None:
    """The process that trains the run folder now (the pid its lock file names while the lock
    is held), else None. A killed run's lock file holds nothing, whatever process has its
    pid now; where the locks cannot be read (not Linux), the pid's process living counts."""
    path = Path(run_dir) / LOCK_FILE
    try:
        if not path.is_file():  # (a pipe in its place would hold the reader up)
            return None
        with path.open("rb") as f:
            pid = int(f.read(64).strip())  # a pid's digits, not a file read whole
    except (OSError, ValueError):
        return None
    if pid <= 0:
        return None
    held = _flock_held(path)
    if held is not None:
        return pid if held else None
    try:
        os.kill(pid, 0)  # no signal: whether it lives
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # another user's process: it lives
    return pid


def run_progress(run_dir: Path) -> dict[str, Any]:
    """Where a run folder stands: ``status`` ``finished`` (its ``summary.json`` is written),
    ``training`` (a process trains it now: ``pid``), ``stopped`` (neither: interrupted, or
    killed) or ``unreadable``; ``steps``, those of its last checkpoint (None before one),
    ``total`` (its ``n_timesteps``, None where its config cannot be read); ``text``, a line
    that says it."""
    import yaml

    run_dir = Path(run_dir)
    try:
        steps = read_state(run_dir).get("steps")
    except ValueError:
        return {"status": "unreadable", "steps": None, "total": None, "pid": None,
                "text": "its state.json cannot be read"}  # fmt: skip
    try:
        recorded = yaml.safe_load((run_dir / "config.yaml").read_text())
        total, backend = recorded.get("n_timesteps"), recorded.get("backend")
    except (OSError, ValueError, AttributeError, RecursionError, yaml.YAMLError):
        total = backend = None
    total = total if isinstance(total, int) and not isinstance(total, bool) else None
    steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else None
    pid = training_pid(run_dir)
    of = "" if total is None else f" of {total:,}"
    at = "before its first checkpoint" if steps is None else f"at step {steps:,}{of}"
    if (run_dir / "summary.json").exists() and pid is None:
        status, text = "finished", "finished" + ("" if steps is None else f": {steps:,} steps")
    elif pid is not None:
        last = "no checkpoint yet" if steps is None else f"its last checkpoint at step {steps:,}"
        status, text = "training", f"training (pid {pid}), {last}{of}"
    else:
        status = "stopped"
        # the checkpoint's own file (stable-baselines3's zip, RLlib's folder), which a resume
        # needs with state.json: a run missing either is refused, so it is not said to go on
        own = "checkpoints/" + ("rllib" if backend == "rllib" else "last.zip")
        saved = (run_dir / own).exists()
        if steps is not None and not saved:
            text = (
                f"stopped {at}, but its checkpoint ({own}) is missing: restore it to resume "
                "the run, or train a new one"
            )
        elif steps is None and saved:
            text = (
                f"stopped, but state.json is missing beside its checkpoint ({own}): the run "
                "cannot be resumed without it"
            )
        else:
            text = f"stopped {at}: rummyzoo train --resume {shlex.quote(str(run_dir))} goes on"
    return {"status": status, "steps": steps, "total": total, "pid": pid, "text": text}


def rewind_run(run_dir: Path, steps_done: int) -> None:
    """A resumed run's TensorBoard, periodic checkpoints and sample games as they were at its
    checkpoint: what was logged, saved or played after it is logged, saved and played again
    from there. The summary of a run
    that had finished goes: the run goes on, and its summary is written again when it
    finishes (until then ``evaluate`` would recall a run that stopped at fewer steps)."""
    truncate_tensorboard(run_dir / "tb", steps_done)
    rewind_best(run_dir, steps_done)
    drop_unnamed(run_dir)
    (run_dir / "evaluations.json").unlink(missing_ok=True)  # state.json's are the checkpoint's
    (run_dir / "summary.json").unlink(missing_ok=True)
    for game in (run_dir / "games").glob("sample_*.json"):
        if int(game.stem.split("_")[1]) > steps_done:
            game.unlink()


def drop_unnamed(run_dir: Path) -> None:
    """The periodic checkpoints and pool snapshots the run's checkpoint (``state.json``) names,
    and no others: one saved after it (by training that is done again) or one it dropped (a
    stop as the set was moved into place, before the files it no longer names were removed)."""
    state = read_state(run_dir)
    periodic = {Path(p).name for p in state.get("periodic", [])}
    for path in (run_dir / "checkpoints").glob("ckpt_*.rz"):
        if path.name not in periodic:
            path.unlink()
    pool = {Path(p["path"]).name for p in state.get("pool", [])}
    for path in (run_dir / "pool").glob("snapshot_*"):
        if path.name not in pool:
            path.unlink()


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
        # this session continues a run (from any step, 0 included: a run stopped before its
        # first checkpoint after its warm start resumes at step 0)
        "resumed": bool(getattr(callback, "resumed", False)),
        "seconds": callback.run_seconds(),  # the whole run's, every session's
        "seconds_this_session": time.perf_counter() - started,
        **(
            {}
            if callback.warm_start_seconds is None
            else {"warm_start_seconds": callback.warm_start_seconds}
        ),
        **phases,
        # steps over the whole RL phase, the scheduled work within it included
        "rl_steps_per_s": (steps - steps_done) / rl_seconds if rl_seconds else None,
        "scheduled_seconds": getattr(callback, "scheduled_seconds", None),
        "last": str(run_dir / "checkpoints" / "last.rz"),
        "best": str(best) if best.exists() else None,
        "best_eval": callback.best_value,
        "best_metric": config.evaluation.best_metric,
        "evaluations": callback.eval_history,
        "tensorboard": f"tensorboard --logdir {shlex.quote(str(run_dir / 'tb'))}",
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
    # (a summary written before the flag: a session that trained fewer steps than the run)
    resumed = summary.get("resumed", summary["steps_this_session"] != summary["steps"])
    lines = [
        f"trained {summary['algo']} on {summary['variant']} ({summary['num_players']} players): "
        f"{summary['steps']:,} steps ({summary['steps_this_session']:,} in this session), "
        f"{summary['seconds']:.0f}s in all"
        + (
            f" ({summary['seconds_this_session']:.0f}s in this session)"
            if resumed and "seconds_this_session" in summary
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
    scheduled = summary.get("scheduled_seconds")
    lines.append(
        f"  RL{' in this session' if resumed else ''}: {summary['rl_seconds']:.0f}s"
        + (f" ({rate:,.0f} steps/s)" if rate else "")
        + (
            f", of which {scheduled:.0f}s evaluations, snapshots, sample games and checkpoints"
            if scheduled is not None
            else ""
        )
        + (
            f"; then {summary['final_seconds']:.0f}s for the final evaluation and checkpoint"
            if summary.get("final_seconds") is not None
            else ""
        )
    )
    history = summary.get("evaluations") or []
    if history:
        final = history[-1]
        # each opponent's first evaluation (a resume may have changed the opponents)
        firsts = {}
        for entry in history:
            for opponent in entry["results"]:
                firsts.setdefault(opponent, entry)
        starts = {firsts[o]["steps"] for o in final["results"]}
        lines.append("")
        if len(starts) == 1 and starts != {final["steps"]}:
            lines.append(
                f"evaluation (win rate with its 95% interval, mean points per hand), at step "
                f"{starts.pop():,} and at step {final['steps']:,}:"
            )
        else:
            lines.append(
                f"evaluation (win rate with its 95% interval, mean points per hand), at step "
                f"{final['steps']:,}"
                + (" (from each opponent's first evaluation):" if len(starts) > 1 else ":")
            )
        width = max(len(o) for o in final["results"])

        def cell(r: dict[str, Any]) -> str:
            low, high = r["win_rate_ci"]
            return f"{r['win_rate']:.3f} [{low:.3f}, {high:.3f}] {r['mean_points']:+7.2f}"

        for opponent, result in final["results"].items():
            first = firsts[opponent]
            shown = ""
            if first is not final:
                since = f"at step {first['steps']:,}: " if len(starts) > 1 else ""
                shown = f"{since}{cell(first['results'][opponent])}  ->  "
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
        game = shlex.quote(games[-1])
        lines.append(f"sample game: rummyzoo replay {game}")
        page = shlex.quote(str(Path(games[-1]).with_suffix(".html")))
        lines.append(f"in a browser: rummyzoo replay {game} --html {page}")
    runs = shlex.quote(str(Path(summary["run_dir"]).parent))
    lines.append(f"all runs:    rummyzoo serve {runs} (then open http://127.0.0.1:8000/)")
    return "\n".join(lines)
