"""A run folder's resume state: ``state.json`` and the files saved with it, as one set.

A checkpoint of a run is several files: ``checkpoints/last.zip`` (or ``checkpoints/rllib/``),
``checkpoints/last.rz``, the DQN replay buffer and ``state.json``. Each is written atomically,
but a run killed between two of them would leave a set of two steps. So they are first written
into ``checkpoints/.staging/``, ``state.json`` last; once it is there the set is complete and
the files are moved into place (:func:`commit_staged`). A run that stops before that point
leaves the previous set standing (the staging folder is dropped); one that stops while moving
them is finished by the next :func:`commit_staged` (a resume calls it first).

``state.json`` names the pool's snapshots and the periodic checkpoints by their paths in the
run folder (``pool/snapshot_000200000.rz``), so a run folder can be moved or copied and resumed
from any working directory; :func:`read_state` checks the file's fields and returns those paths
under the run folder as it is given now (older files, which held paths from the working
directory the run started in, are read the same way: a snapshot is always in ``pool/``, a
periodic checkpoint in ``checkpoints/``).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

from rummyzoo.envs.core import finite_number

#: Set by a run's Ctrl-C and SIGTERM handlers (:mod:`rummyzoo.training.train`) before they raise
#: KeyboardInterrupt: where Python swallows that exception (a signal that lands in a weakref
#: callback or a ``__del__`` only prints "Exception ignored"), the run's next step raises it
#: again (:class:`~rummyzoo.training.callbacks.RunCallback`), so a stop is never lost.
stop_requested = threading.Event()

STAGING = ".staging"
#: The most a ``state.json`` is read of (a run's is some kilobytes: its pool, periodic
#: checkpoints and league windows), so that a file of another kind in its place is refused.
MAX_STATE_BYTES = 64 * 2**20
#: ``best.rz`` as it was at the checkpoint, saved with the resume set: ``best.rz`` itself is
#: written at every evaluation that beats it, so a run killed after one and resumed from the
#: checkpoint before it gets back the best of the history it resumes (:func:`rewind_best`).
BEST_AT_CHECKPOINT = "best_at_checkpoint.rz"


def staging_dir(run_dir: Path) -> Path:
    """A fresh, empty staging folder for the next checkpoint set."""
    staging = Path(run_dir) / "checkpoints" / STAGING
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    return staging


def commit_staged(run_dir: Path) -> bool:
    """Move a complete staged set into place (``state.json`` last), or drop an incomplete one.

    :returns: whether a set was moved into place.
    """
    run_dir = Path(run_dir)
    staging = run_dir / "checkpoints" / STAGING
    if not staging.is_dir():
        return False
    if not (staging / "state.json").is_file():  # never completed: the previous set stands
        shutil.rmtree(staging, ignore_errors=True)
        return False
    items = [p for p in staging.iterdir() if not p.name.startswith(".")]
    for item in sorted(items, key=lambda p: p.name == "state.json"):
        target = run_dir / item.name if item.name == "state.json" else staging.parent / item.name
        if item.is_dir() and target.exists():
            shutil.rmtree(target)
        item.replace(target)
    shutil.rmtree(staging, ignore_errors=True)
    return True


def resume_steps(run_dir: Path) -> int | None:
    """The step a resume of the run goes on from: that of a complete staged set, which the
    resume moves into place first (:func:`commit_staged`), else ``state.json``'s; None where
    the run saved no checkpoint.

    :raises ValueError: a ``state.json`` that cannot be read (named, as :func:`read_state`).
    """
    staged = Path(run_dir) / "checkpoints" / STAGING / "state.json"
    if staged.is_file():
        try:
            steps = json.loads(staged.read_text()).get("steps")
        except (OSError, UnicodeDecodeError, RecursionError, ValueError, AttributeError):
            steps = None  # (written whole, atomically: read again as the resume will)
        if isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0:
            return steps
    steps = read_state(Path(run_dir)).get("steps")
    return steps if isinstance(steps, int) else None


def in_run(run_dir: Path, path: str) -> str:
    """A pool snapshot's or periodic checkpoint's path, under ``run_dir`` (see the module)."""
    p = Path(path)
    return str(Path(run_dir) / p.parent.name / p.name)


def run_relative(path: str) -> str:
    """What ``state.json`` records of a path in the run folder: ``<folder>/<file>``."""
    p = Path(path)
    return f"{p.parent.name}/{p.name}"


def _check_state(data: Any) -> str | None:
    """What is wrong with a ``state.json``'s contents, or None."""
    if not isinstance(data, dict):
        return f"expected a JSON object, got {type(data).__name__}"
    steps = data.get("steps", 0)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        return f"steps must be a non-negative integer, got {steps!r}"
    pool = data.get("pool", [])
    if not isinstance(pool, list):
        return f"pool must be a list, got {type(pool).__name__}"
    for i, entry in enumerate(pool):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            return f"pool[{i}] must be an object with a path, got {entry!r}"
        if isinstance(entry.get("steps"), bool) or not isinstance(entry.get("steps"), int):
            return f"pool[{i}].steps must be an integer, got {entry.get('steps')!r}"
        if not finite_number(entry.get("rating", 0.0)):
            return f"pool[{i}].rating must be a number, got {entry.get('rating')!r}"
    periodic = data.get("periodic", [])
    if not isinstance(periodic, list) or not all(isinstance(p, str) for p in periodic):
        return f"periodic must be a list of paths, got {periodic!r}"
    for key in ("rating", "best_value"):
        value = data.get(key)
        if value is not None and not finite_number(value):
            return f"{key} must be a number, got {value!r}"
    league = data.get("league_results")
    if league is not None and not (
        isinstance(league, dict)
        and all(isinstance(v, list) and all(finite_number(x) for x in v) for v in league.values())
    ):
        return "league_results must map opponents to lists of scores"
    results = data.get("pool_results", [])
    if not isinstance(results, list) or not all(
        isinstance(r, list) and len(r) == 2 and all(finite_number(x) for x in r) for r in results
    ):
        return "pool_results must be a list of [rating, score] pairs"
    for key in ("seconds", "warm_start_seconds"):
        value = data.get(key)
        if value is not None and (not finite_number(value) or value < 0):
            return f"{key} must be a non-negative number, got {value!r}"
    history = data.get("eval_history", [])
    if not isinstance(history, list) or not all(
        isinstance(e, dict) and isinstance(e.get("steps"), int) for e in history
    ):
        return "eval_history must be a list of evaluations, each with its steps"
    for i, entry in enumerate(history):
        results = entry.get("results", {})
        if not isinstance(results, dict) or not all(isinstance(r, dict) for r in results.values()):
            return f"eval_history[{i}].results must map opponents to their results"
    fixed = data.get("fixed")
    if fixed is not None and not isinstance(fixed, dict):
        return f"fixed must be an object, got {type(fixed).__name__}"
    return None


def read_state(run_dir: Path) -> dict[str, Any]:
    """The run's ``state.json`` (``{}`` when there is none), checked, with its paths under
    ``run_dir``.

    :raises ValueError: unreadable, not JSON, or a field of the wrong kind (named).
    """
    path = Path(run_dir) / "state.json"
    if not path.exists():
        return {}
    try:
        # a regular file of a state's size (a pipe or a device in its place would hold the
        # reader up or fill its memory)
        if not path.is_file():
            raise ValueError("not a regular file")
        with path.open("rb") as f:
            text = f.read(MAX_STATE_BYTES + 1)
        if len(text) > MAX_STATE_BYTES:
            raise ValueError(f"over {MAX_STATE_BYTES:,} bytes")
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, RecursionError, ValueError) as exc:
        raise ValueError(f"{path} is corrupt ({exc}); cannot resume") from None
    why = _check_state(data)
    if why is not None:
        raise ValueError(f"{path} is corrupt ({why}); cannot resume")
    data["pool"] = [{**e, "path": in_run(run_dir, e["path"])} for e in data.get("pool", [])]
    data["periodic"] = [in_run(run_dir, p) for p in data.get("periodic", [])]
    return data


def rewind_best(run_dir: Path, steps_done: int) -> None:
    """``checkpoints/best.rz`` of a run resumed at ``steps_done``: a network of a later step
    (saved after the checkpoint, by the part of the run that is trained again) gives way to
    the one saved with the checkpoint, or goes where the checkpoint had none."""
    from rummyzoo.agents.checkpoints import CheckpointError, read_meta

    folder = Path(run_dir) / "checkpoints"
    best, kept = folder / "best.rz", folder / BEST_AT_CHECKPOINT
    if not best.exists():
        return
    try:
        later = int(read_meta(best).get("steps", 0)) > steps_done
    except (CheckpointError, ValueError, TypeError):
        later = True  # unreadable: the kept one (if any) is the checkpoint's best
    if not later:
        return
    if kept.exists():
        shutil.copyfile(kept, folder / f".{BEST_AT_CHECKPOINT}.tmp")
        (folder / f".{BEST_AT_CHECKPOINT}.tmp").replace(best)
    else:
        best.unlink()
