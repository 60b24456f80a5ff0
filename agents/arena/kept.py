"""The games of an arena run gathered deal by deal, and kept in a file as they finish.

:func:`rummyzoo.agents.arena.run_arena` plays its deals in parts (a deal, a batch of deals, a
worker's chunk) and hands each part's rows here. With ``keep_deals=PATH`` (``rummyzoo arena
--keep-deals PATH``) they are written to ``PATH`` as they come (atomically, every few seconds,
and when the run ends or is stopped), and a run given a file that holds deals of the same
arena (the same variant, players, options, agents, seed and seating: a checkpoint agent is
known by its bytes) plays only the deals the file lacks. A deal's games depend on the arena's
seed and the deal's number alone, so a stopped run goes on where it was, and a run with more
``deals`` plays only the new ones.

The file is a numpy ``.npz`` archive without pickled objects: ``key`` (the arena it belongs to,
as JSON), ``deals`` (the deal numbers kept), ``points``, ``hands``, ``decisions``,
``truncated`` (and ``decks`` where the run keeps them): each deal's games in the run's seating
order, deal after deal; ``replays`` (JSON: each deal's recorded games).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import time
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.envs import files

#: the per-game arrays of a part of a run (``decks`` only where the run keeps them)
GAME_ARRAYS = ("points", "hands", "decisions", "truncated", "decks")

#: seconds between two writes of the file while a run plays, at least (its end and a stop
#: write at once); a file that takes long to write waits 20 times as long as its last write
#: took, so that writing it costs the run no more than about 5%
SAVE_EVERY = 5.0


class OtherArenaError(ValueError):
    """A file of kept deals that belongs to another arena: ``path``, and ``differ``, what of
    the arena differs (``agents``, ``seed``...)."""

    def __init__(
        self, path: Path, differ: list[str], stored: dict[str, Any], ours: dict[str, Any]
    ) -> None:
        self.path = path
        self.differ = differ
        self.stored = stored  # the file's arena, and this run's
        self.ours = ours
        super().__init__(
            f"{path} keeps the deals of another arena: not this run's {', '.join(differ)} "
            "(give another file, or run the arena that made it)"
        )


def agent_identity(spec: Any, label: str) -> Any:
    """What an agent is, for telling two arenas apart: a name as given, a checkpoint file by a
    hash of its bytes (wherever it lies), a policy object by its class and label."""
    if isinstance(spec, str):
        if files.is_file(spec):
            digest = hashlib.sha256(Path(spec).read_bytes()).hexdigest()
            return {"checkpoint_sha256": digest}
        return spec
    return {"object": f"{type(spec).__module__}.{type(spec).__qualname__}", "label": label}


class DealRows:
    """Each deal's games played so far: ``rows[deal]`` holds the deal's ``per_deal`` rows of
    every array in :data:`GAME_ARRAYS` the run has, ``replays[deal]`` its recorded games.

    :param path: the file that keeps them (None: they are only gathered).
    :param key: the arena the file belongs to (JSON-able; see :func:`agent_identity`).
    """

    def __init__(
        self,
        per_deal: int,
        keep_decks: bool,
        path: str | Path | None = None,
        key: dict[str, Any] | None = None,
    ) -> None:
        self.per_deal = per_deal
        self.keep_decks = keep_decks
        self.path = None if path is None else Path(path)
        # as it reads back from the file (tuples as lists...)
        self.key = None if key is None else json.loads(json.dumps(key, sort_keys=True, default=str))
        self.rows: dict[int, dict[str, np.ndarray]] = {}
        self.replays: dict[int, list[str]] = {}
        self._unsaved = False
        self._saved_at = time.monotonic()
        self._took = 0.0  # seconds the last write took

    # ------------------------------------------------------------------ gathering
    def add(self, deals: Sequence[int], part: dict[str, Any]) -> None:
        """A part's games: the rows of ``deals``, in that order, ``per_deal`` each (its
        ``replays`` and their ``replay_deals``, if any, too); the file written if it is due."""
        n = self.per_deal
        for i, deal in enumerate(deals):
            self.rows[int(deal)] = {
                key: part[key][i * n : (i + 1) * n] for key in GAME_ARRAYS if key in part
            }
        for path, deal in zip(part.get("replays", ()), part.get("replay_deals", ()), strict=True):
            self.replays.setdefault(int(deal), []).append(path)
        if deals:
            self._unsaved = True
            self.save(force=False)

    def lacks(self, start: int, stop: int) -> bool:
        """Whether a deal of ``range(start, stop)`` is not played yet."""
        return any(d not in self.rows for d in range(start, stop))

    def merged(self, deals: int) -> tuple[dict[str, np.ndarray], list[str]]:
        """The games of deals ``0 .. deals-1``, deal after deal, and their replays."""
        arrays = {
            key: np.concatenate([self.rows[d][key] for d in range(deals)]) for key in self.rows[0]
        }
        replays = [path for d in range(deals) for path in self.replays.get(d, ())]
        return arrays, replays

    # ------------------------------------------------------------------ the file
    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The file held for this run while the block runs (a lock file beside it,
        ``FILE.lock``): another arena run with the same file is refused meanwhile, rather
        than the last to write dropping the other's deals."""
        if self.path is None:
            yield
            return
        busy = f"{self.path} is being played into by another arena run"
        folder = self.path.parent
        made = [p for p in (folder, *folder.parents) if not p.exists()]
        folder.mkdir(parents=True, exist_ok=True)
        try:
            with files.held_lock(self.path.with_name(self.path.name + ".lock"), busy):
                yield
        finally:
            for made_folder in made:  # those made here and left empty (the run refused)
                try:
                    made_folder.rmdir()
                except OSError:
                    break

    def load(self) -> None:
        """Read the deals the file keeps (none where it does not exist yet).

        :raises ValueError: the file is not an arena's kept deals, or it keeps another arena's
            (the message names what differs); nothing is read then.
        """
        if self.path is None or not self.path.exists():
            return
        where = str(self.path)
        if self.path.is_dir():
            raise ValueError(f"{where} is a folder: give the file that keeps the arena's deals")
        if not zipfile.is_zipfile(self.path):
            raise ValueError(
                f"{where} is not a file of an arena's kept deals (not an .npz archive): give "
                "another file name"
            )
        try:
            with np.load(self.path, allow_pickle=False) as data:
                stored = json.loads(str(data["key"]))
                arrays = {key: data[key] for key in ("deals", *GAME_ARRAYS) if key in data.files}
                replays = json.loads(str(data["replays"]))
            if not isinstance(stored, dict) or not isinstance(replays, list):
                raise ValueError("its key or replays are not an arena's")
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(
                f"{where} is not a file of an arena's kept deals ({type(exc).__name__}: {exc}): "
                "give another file name"
            ) from None
        if stored != self.key:
            ours = self.key or {}
            differ = [k for k in sorted(set(stored) | set(ours)) if stored.get(k) != ours.get(k)]
            raise OtherArenaError(self.path, differ, stored, ours)
        deals = arrays.pop("deals")
        n = self.per_deal
        expected = set(GAME_ARRAYS) - ({"decks"} if not self.keep_decks else set())
        if (
            deals.ndim != 1
            or set(arrays) != expected
            or any(len(a) != len(deals) * n for a in arrays.values())
            or len(set(deals.tolist())) != len(deals)
        ):
            raise ValueError(f"{where} is damaged: its arrays do not fit its deals")
        rows: dict[int, dict[str, np.ndarray]] = {}
        for i, deal in enumerate(deals.tolist()):
            rows[int(deal)] = {key: a[i * n : (i + 1) * n] for key, a in arrays.items()}
        self.rows = rows
        self.replays = {int(d): list(paths) for d, paths in replays}

    def save(self, force: bool = True) -> bool:
        """Write the file (atomically) if it has deals it lacks; unless ``force``, only every
        :data:`SAVE_EVERY` seconds. Whether it was written."""
        if self.path is None or not self._unsaved:
            return False
        if not force and time.monotonic() - self._saved_at < max(SAVE_EVERY, 20 * self._took):
            return False
        begun = time.monotonic()
        deals = sorted(self.rows)
        arrays: dict[str, np.ndarray] = {
            "key": np.asarray(json.dumps(self.key, sort_keys=True)),
            "deals": np.asarray(deals, dtype=np.int64),
            "replays": np.asarray(json.dumps(sorted(self.replays.items()))),
        }
        for key in self.rows[deals[0]]:
            arrays[key] = np.concatenate([self.rows[d][key] for d in deals])
        out = io.BytesIO()
        np.savez(out, **arrays)
        files.atomic_write_bytes(self.path, out.getvalue())
        self._unsaved = False
        self._saved_at = time.monotonic()
        self._took = self._saved_at - begun
        return True
