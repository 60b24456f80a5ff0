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
import errno
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
        shown = ", ".join(_difference(key, stored.get(key), ours.get(key)) for key in differ)
        super().__init__(
            f"{path} keeps the deals of another arena: not this run's {shown} (give another "
            "file, or run the arena that made it)"
        )


def _difference(key: str, theirs: Any, ours: Any) -> str:
    """One field of two arenas that differs, with both values where they are short."""
    if key == "options" and isinstance(theirs, dict) and isinstance(ours, dict):
        names = sorted(n for n in set(theirs) | set(ours) if theirs.get(n) != ours.get(n))
        return (
            "options ("
            + "; ".join(f"{n}: {theirs.get(n)!r} in the file, {ours.get(n)!r} here" for n in names)
            + ")"
        )
    if key in ("agents", "seatings") or len(repr(theirs)) + len(repr(ours)) > 120:
        return key
    return f"{key} ({theirs!r} in the file, {ours!r} here)"


def agent_identity(spec: Any, label: str) -> Any:
    """What an agent is, for telling two arenas apart: a name as given, a checkpoint file by a
    hash of its bytes (wherever it lies), a network's policy object (a loaded checkpoint) by
    a hash of its weights and settings, another policy object by its class and label."""
    if isinstance(spec, str):
        if files.is_file(spec):
            digest = hashlib.sha256(Path(spec).read_bytes()).hexdigest()
            return {"checkpoint_sha256": digest}
        return spec
    weights = getattr(getattr(getattr(spec, "model", None), "policy", None), "state_dict", None)
    if callable(weights):
        digest = hashlib.sha256()
        for name, tensor in sorted(weights().items()):
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().numpy().tobytes())
        settings = {
            "meta": getattr(spec, "meta", None),
            "greedy": getattr(spec, "deterministic", None),
        }
        digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
        return {"network_sha256": digest.hexdigest()}
    return {"object": f"{type(spec).__module__}.{type(spec).__qualname__}", "label": label}


#: Bytes of a kept file's key (its arena's identity), at most; of any array, beyond what
#: its games take (its header); a game's bytes in any array, at most (the decks' 104 cards of
#: two decks as int64 take the most), and its replays' names.
KEY_BYTES = 1 << 20
HEADER_BYTES = 1 << 16
GAME_BYTES = 2048


def _check_sizes(archive: zipfile.ZipFile, deals: np.ndarray | None, per_deal: int) -> None:
    """Refuse (ValueError) a kept file whose members unpack to more than they can hold:
    before its key is read (``deals`` None), a member packed (an arena stores them as they
    are: a small file cannot unpack to a large one) and a key of more than
    :data:`KEY_BYTES`; then an array or the replays larger than ``deals``' games make them."""
    for info in archive.infolist():
        name = info.filename.removesuffix(".npy")
        if deals is None and info.file_size > info.compress_size + HEADER_BYTES:
            raise ValueError(
                f"its {info.filename} unpacks to {info.file_size:,} bytes from "
                f"{info.compress_size:,} in the file, where an arena stores its arrays unpacked"
            )
        if deals is None:
            limit = KEY_BYTES if name == "key" else None
        elif name in ("key", "deals"):
            limit = None  # (checked, and read)
        else:
            limit = HEADER_BYTES + int(np.size(deals)) * per_deal * GAME_BYTES
        if limit is not None and info.file_size > limit:
            raise ValueError(
                f"its {info.filename} unpacks to {info.file_size:,} bytes, more than its deals' games "
                f"make ({limit:,} at most)"
            )


def _cut(text: str, limit: int = 200) -> str:
    """``text`` for a message, cut short where a crafted file made it long."""
    return text if len(text) <= limit else text[:limit] + "..."


def _damage(
    deals: np.ndarray,
    arrays: dict[str, np.ndarray],
    replays: Any,
    per_deal: int,
    players: int,
    keep_decks: bool,
) -> str | None:
    """What is wrong with a kept file's arrays (None: nothing): their kinds, shapes and
    values as a run writes them."""
    expected = set(GAME_ARRAYS) - ({"decks"} if not keep_decks else set())
    if set(arrays) != expected:
        return f"its arrays are {', '.join(sorted(arrays))}, not {', '.join(sorted(expected))}"
    if deals.ndim != 1 or deals.dtype.kind not in "iu" or (deals < 0).any():
        return "its deal numbers are not a list of numbers"
    if len(np.unique(deals)) != len(deals):
        return "a deal is kept twice"
    games = len(deals) * per_deal
    points = arrays["points"]
    if points.shape != (games, players) or points.dtype.kind != "f":
        return f"its points are not {games} rows of {players} numbers"
    if not np.isfinite(points).all():
        return "a point total is not a finite number"
    for key in ("hands", "decisions"):
        a = arrays[key]
        if a.shape != (games,) or a.dtype.kind not in "iu" or (a < 0).any():
            return f"its {key} are not {games} counts"
    if arrays["truncated"].shape != (games,) or arrays["truncated"].dtype != np.bool_:
        return f"its truncated flags are not {games} flags"
    if keep_decks and (arrays["decks"].ndim != 2 or len(arrays["decks"]) != games):
        return f"its decks are not {games} decks"
    if not all(
        isinstance(entry, list)
        and len(entry) == 2
        and isinstance(entry[0], int)
        and isinstance(entry[1], list)
        and all(isinstance(p, str) for p in entry[1])
        for entry in replays
    ):
        return "its replays are not lists of files by deal"
    return None


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
        self.read_only: str | None = None  # why the file could not be held (read only)

    # ------------------------------------------------------------------ gathering
    def add(self, deals: Sequence[int], part: dict[str, Any]) -> None:
        """A part's games: the rows of ``deals``, in that order, ``per_deal`` each (its
        ``replays`` and their ``replay_deals``, if any, too); the file written if it is due."""
        n = self.per_deal
        for i, deal in enumerate(deals):
            self.rows[int(deal)] = {
                key: part[key][i * n : (i + 1) * n] for key in GAME_ARRAYS if key in part
            }
        for deal in deals:  # (a deal played again: its replays are the new ones)
            self.replays.pop(int(deal), None)
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
        # (the files of an earlier run's deals, where they still are)
        replays = [
            path for d in range(deals) for path in self.replays.get(d, ()) if Path(path).is_file()
        ]
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
        real = self.path.resolve()  # (a link to the file is the file: one lock)
        folder = real.parent
        made = [p for p in (folder, *folder.parents) if not p.exists()]
        with contextlib.ExitStack() as holding:
            holding.callback(files.remove_empty, made)  # last: once the lock file is gone
            try:
                folder.mkdir(parents=True, exist_ok=True)
                holding.enter_context(files.held_lock(real.with_name(real.name + ".lock"), busy))
            except OSError as exc:
                if not (real.is_file() and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)):
                    raise OSError(
                        exc.errno, f"cannot keep deals in {self.path}: {exc.strerror}"
                    ) from None
                # a file in a folder this process may not write in: read, not held; a run
                # that has deals to play is refused when it would write (``rewrite``)
                self.read_only = f"cannot keep deals in {self.path}: {exc.strerror}"
            yield

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
                _check_sizes(data.zip, None, self.per_deal)  # the key's, before it is read
                stored = json.loads(str(data["key"]))
                if not isinstance(stored, dict):
                    raise ValueError("its key is not an arena's")
                if stored == self.key:  # (another arena's: said below, its arrays unread)
                    deals = data["deals"]
                    # each array no larger than the games its deals hold make it, before it
                    # is read (a small file cannot unpack to gigabytes)
                    _check_sizes(data.zip, deals, self.per_deal)
                    arrays = {k: data[k] for k in ("deals", *GAME_ARRAYS) if k in data.files}
                    replays = json.loads(str(data["replays"]))
                    if not isinstance(replays, list):
                        raise ValueError("its replays are not an arena's")
        except (
            OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, MemoryError,
            RecursionError,
        ) as exc:  # fmt: skip
            raise ValueError(
                f"{where} is not a file of an arena's kept deals ({type(exc).__name__}: "
                f"{_cut(str(exc))}): give another file name"
            ) from None
        if stored != self.key:
            ours = self.key or {}
            differ = [k for k in sorted(set(stored) | set(ours)) if stored.get(k) != ours.get(k)]
            raise OtherArenaError(self.path, differ, stored, ours)
        deals = arrays.pop("deals")
        n = self.per_deal
        why = _damage(deals, arrays, replays, n, int(stored.get("players", 0)), self.keep_decks)
        if why is not None:
            raise ValueError(f"{where} is damaged ({why}): give another file name")
        rows: dict[int, dict[str, np.ndarray]] = {}
        for i, deal in enumerate(deals.tolist()):
            rows[int(deal)] = {key: a[i * n : (i + 1) * n] for key, a in arrays.items()}
        self.rows = rows
        self.replays = {int(d): list(paths) for d, paths in replays}

    def rewrite(self) -> None:
        """Write the file again as it was read, before any play: a file that cannot be
        replaced (a read-only folder, an immutable file) is refused now, not after the deals."""
        if self.read_only is not None:
            raise OSError(errno.EACCES, self.read_only)
        if self.path is not None and self.rows:
            self._unsaved = True
            self.save()

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
