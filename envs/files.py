"""Files written whole or not at all: every file a command or a run writes goes through here.

A file is written to a temporary file beside it and moved into place, so a reader (a resumed
run, ``rummyzoo serve``, another command) never sees it half-written, and an interrupted write
leaves the file that was there before.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "held_lock",
    "is_stream",
    "remove_empty",
    "write_json",
]


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file moved into place (parent folders
    are created). A link's target is replaced (the link kept); what is not a regular file
    (``/dev/stdout``, a pipe) is written as it is.

    The file gets the permissions a plain ``open(path, "wb")`` would give it: those of the
    file it replaces, else ``0o666`` less the umask (a temporary file is created ``0o600``).
    """
    path = Path(path)
    if is_stream(path):  # /dev/stdout, a pipe (--json >(jq .)): as is
        fd = _own_descriptor(path)
        if fd is not None:  # through this process's own descriptor, at its place in the file
            for stream in (sys.stdout, sys.stderr):  # (what was printed before comes first)
                with contextlib.suppress(Exception):
                    stream.flush()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            return
        with path.open("wb") as fh:
            fh.write(data)
        return
    if path.is_symlink():  # the file it links to is replaced, the link kept
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0o022)  # the only way to read the umask is to set it
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:  # name the file asked for, not the temporary one
        raise OSError(exc.errno, f"cannot write {path}: {exc.strerror}") from None
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.replace(tmp, path)
        except OSError as exc:  # the file asked for, not the temporary one
            raise OSError(exc.errno, f"cannot replace {path}: {exc.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, as :func:`atomic_write_bytes` does."""
    atomic_write_bytes(path, text.encode())


def write_json(data: Any, path: str | Path, indent: int | None = 2, allow_nan: bool = True) -> Path:
    """Write ``data`` as JSON (a final newline) atomically; returns the path.

    :raises ValueError: with ``allow_nan=False``, a NaN or infinity in ``data`` (nothing is
        written then).
    """
    text = json.dumps(data, indent=indent, allow_nan=allow_nan) + "\n"
    atomic_write_text(path, text)
    return Path(path)


def is_stream(path: str | Path) -> bool:
    """Whether ``path`` is written as a stream, as it is: what exists and is no regular file
    (a pipe, a device), or a link through ``/proc`` (``/dev/stdout`` redirected to a file is
    the shell's file descriptor: replacing that file would lose what the command prints)."""
    p = Path(path)
    if not p.exists():
        return False
    if not p.is_file():
        return True
    if _own_descriptor(p) is not None:  # (/dev/fd/1: its links never pass through /proc)
        return True
    return any(link.parts[:2] == ("/", "proc") for link in _links(p))


def _links(path: Path) -> Iterator[Path]:
    """The paths of ``path``'s chain of links, as the OS follows them (``path`` first)."""
    p = path
    yield p
    for _ in range(40):  # (the OS's own limit)
        if not p.is_symlink():
            return
        target = Path(os.readlink(p))
        p = target if target.is_absolute() else p.parent / target
        yield p


def _own_descriptor(path: Path) -> int | None:
    """The file descriptor of this process that ``path`` names (``/dev/stdout`` is
    ``/proc/self/fd/1``), else None: written through it, what the file holds stays in
    order with what the process prints (opened anew, a redirected file was cut short and
    its start written over)."""
    own = {("proc", "self", "fd"), ("proc", str(os.getpid()), "fd"), ("dev", "fd")}
    for p in _links(Path(path)):
        parts = p.parts
        if len(parts) >= 2 and tuple(parts[1:-1]) in own and parts[-1].isdigit():
            return int(parts[-1])
    return None


def is_file(name: str | Path) -> bool:
    """Whether ``name`` names an existing file (False for a name the OS cannot take: an agent's
    spec longer than a file name may be, say)."""
    try:
        return Path(name).is_file()
    except (OSError, ValueError):
        return False


def unwritable(folder: str | Path) -> OSError | None:
    """Why files cannot be written in ``folder``, or None where they can. Only trying tells
    (permission bits say nothing to root, and the folder may be on a read-only mount)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return exc
    return None


@contextlib.contextmanager
def held_lock(path: str | Path, busy: str) -> Iterator[None]:
    """Hold the lock file ``path`` for this process (``flock``, the file naming the pid) while
    the block runs; the file is removed when the process lets go, and one a killed process left
    behind holds nothing. Where another process holds it: ``ValueError(busy + " (pid N)...")``.
    Without POSIX locks (Windows) nothing is held."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path = Path(path)
    while True:
        handle = path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            pid = handle.read().strip()  # (empty while its holder is about to write it)
            handle.close()
            holder = f" (pid {pid})" if pid else ""
            raise ValueError(f"{busy}{holder}: let it finish or stop it first") from None
        try:  # the file locked is still the one at ``path`` (not one its holder removed)
            current = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        handle.close()
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    try:
        yield
    finally:
        path.unlink(missing_ok=True)  # while still held: a waiting process then makes its own
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (each inside the next: those a command made, innermost first) while
    they are empty; the first that is not (or is gone) and those above it stay."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            break
