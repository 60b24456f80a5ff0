"""The vector engine split over worker processes, with its arrays in shared memory.

:class:`WorkerVectorEnv` plays the same ``num_envs`` games as a
:class:`~rummyzoo.envs.vector.VectorEnv`, but over ``num_workers`` processes: worker ``w``
hosts a ``VectorEnv`` over a contiguous slice of the games (slice sizes differ by one at most)
whose output arrays are views of one :mod:`multiprocessing.shared_memory` block. The parent's
``observations``, ``action_masks``, ``current``, ``rewards``, ``hand_done``, ``terminated``,
``truncated`` and ``matches_done`` are views of the same block, and so are the actions to play
and the games to step: a :meth:`~WorkerVectorEnv.step` writes the actions there and sends one
byte to each worker that owns a stepped game, which steps its games, writes their rows and
answers. Arrays are never pickled; only the infos of games whose hand ended travel back (with
``infos=True``). A worker also writes, for each game whose match ended in a step, every seat's
last observation of that match into the block, so :meth:`~WorkerVectorEnv.final_observation`
reads it here without a message (an ``(N, P, L)`` float32 array: ``P`` times the size of
``observations``). The other queries (:meth:`~WorkerVectorEnv.observe`,
:meth:`~WorkerVectorEnv.render`) are small requests over the worker's pipe.

Stepping can also be split per worker: :meth:`~WorkerVectorEnv.send_step` checks the actions as
``step`` does and sends them to the workers owning the games without waiting, and
:meth:`~WorkerVectorEnv.wait_step` (one worker) or :meth:`~WorkerVectorEnv.wait_any` (the first
to answer) reads a worker's reply and does for its slice what ``step`` does after the replies.
The workers' games are independent, so one worker can be stepped again while another is still
stepping; each worker has at most one step in flight. While it has one, the arrays of its slice
are being written and nothing else can be asked of it (``send_step`` of its games,
``final_observation``, ``observe``, ``render``); ``step`` and ``reset`` need no step in flight
anywhere. A worker's slice of ``hand_done``, ``terminated`` and ``truncated`` describes the last
step of that worker, and its rewards of finished matches are cleared when that worker is next
sent a step: each slice behaves as a ``VectorEnv`` of its own games stepped with the actions that
worker was sent.

Game ``i`` is the same game as game ``i`` of a ``VectorEnv`` with the same seed (each worker
resets its slice with the games' own seeds), and every array, message and info is the same.
Actions are checked in this process on the shared masks, before any is sent; the message of an
illegal action is built by the worker that owns the game, so it is ``VectorEnv``'s own.

Workers start with ``forkserver`` where the platform has it, else ``spawn`` (never ``fork``
unless asked: a parent that loaded torch or threads must not be forked). Each worker imports this
module and the variant's game only, and builds the game from the variant name and options, as
the parent does; unlike other spawned processes, workers do not run the parent's main script
(whose imports, torch for one, they do not need).

A worker that fails (an exception, or a process that dies) raises :class:`RuntimeError`
naming it and closes the engine. :meth:`~WorkerVectorEnv.close` (or leaving a ``with`` block)
stops the workers and unlinks the shared memory; the arrays stay readable afterwards (copies of
their last values).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import itertools
import multiprocessing
import os
import pickle
import select
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from multiprocessing import shared_memory
from types import ModuleType
from typing import Any

import numpy as np

from rummyzoo.envs import registry
from rummyzoo.envs.core import ConfigError, IllegalActionError, check_action
from rummyzoo.envs.vector import (
    VectorEnv,
    buffer_specs,
    check_engine_args,
    compiled_check,
    game_seeds,
    read_only,
)

__all__ = [
    "WorkerVectorEnv",
    "array_views",
    "pack_arrays",
    "reply_failure",
    "reply_ok",
    "resolve_start_method",
    "split_games",
    "start_process",
]

_ALIGN = 64
# commands sent as raw bytes (every other command is a pickle, never one of these)
_STEP_ALL = b"a"
_STEP_SOME = b"s"
_QUIT = b"q"
_OK = b""
# shared arrays that are not VectorEnv outputs
_PRIVATE = ("matches_done", "actions", "selected", "final_observations")
_MAIN_LOCK = threading.Lock()  # one start at a time hides the main module


@contextlib.contextmanager
def settled_heap() -> Iterator[None]:
    """Hide the objects alive now from the cyclic garbage collector while the block runs.

    A training process holds a large heap of long-lived objects (the games and their tables,
    the network, the libraries), and each of the collector's full collections walks all of it:
    tens of milliseconds that, with worker processes, stall the processes waiting for this
    one. :func:`gc.freeze` moves them into a generation the collector skips, so its
    collections walk only what the block creates; :func:`gc.unfreeze` hands them back
    after (unless the process had frozen objects of its own before: those it keeps frozen).
    Objects are still freed as soon as nothing refers to them; only a reference cycle among
    the frozen objects that is dropped during the block waits until it ends.
    """
    frozen_before = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()


def usable_cpus() -> int:
    """The processors this process may run on (its affinity, which ``taskset`` and a
    container's cpuset limit), not every processor of the machine: what a default number of
    worker processes is."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


def resolve_start_method(start_method: str | None) -> str:
    """The :mod:`multiprocessing` start method to use: ``start_method`` if the platform has
    it, by default ``forkserver`` where available, else ``spawn``.

    :raises ConfigError: a method the platform does not have.
    """
    methods = multiprocessing.get_all_start_methods()
    if start_method is None:
        return "forkserver" if "forkserver" in methods else "spawn"
    if start_method not in methods:
        raise ConfigError(
            f"start_method must be one of {', '.join(methods)} (or None), got {start_method!r}"
        )
    return start_method


def split_games(num_envs: int, num_workers: int) -> np.ndarray:
    """Slice bounds (``num_workers + 1`` of them): worker ``w`` hosts games
    ``bounds[w]:bounds[w + 1]``; the first ``num_envs % num_workers`` slices have one more."""
    base, extra = divmod(num_envs, num_workers)
    sizes = [base + (w < extra) for w in range(num_workers)]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _layout(
    num_envs: int, game: Any
) -> tuple[dict[str, tuple[int, tuple[int, ...], np.dtype]], int]:
    """name -> (offset, shape, dtype) of every shared array, and the block's size."""
    specs: dict[str, tuple[tuple[int, ...], np.dtype]] = dict(buffer_specs(num_envs, game))
    specs["matches_done"] = ((num_envs,), np.dtype(np.int64))
    specs["actions"] = ((num_envs,), np.dtype(np.int64))
    specs["selected"] = ((num_envs,), np.dtype(np.bool_))
    specs["final_observations"] = (
        (num_envs, game.num_players, game.obs_size),
        np.dtype(np.float32),
    )
    return pack_arrays(specs)


def pack_arrays(
    specs: dict[str, tuple[tuple[int, ...], np.dtype]],
) -> tuple[dict[str, tuple[int, tuple[int, ...], np.dtype]], int]:
    """name -> (offset, shape, dtype) of arrays laid out one after the other in one shared
    block, each aligned to 64 bytes; and the block's size (at least 1)."""
    layout = {}
    offset = 0
    for name, (shape, dtype) in specs.items():
        layout[name] = (offset, shape, dtype)
        size = int(np.prod(shape)) * dtype.itemsize
        offset += -(-size // _ALIGN) * _ALIGN
    return layout, max(offset, 1)


def array_views(
    buf: Any, layout: dict[str, tuple[int, tuple[int, ...], np.dtype]]
) -> dict[str, np.ndarray]:
    """The arrays of a :func:`pack_arrays` layout over a shared block's buffer.

    They hold the mapping: numpy keeps a reference to the buffer object but not an export of
    it, so built with ``buffer=shm.buf`` they let ``SharedMemory.close()`` unmap the block
    under arrays still in use (reading one then crashed the process). Slices of one
    ``np.frombuffer`` array, which holds an export of the block while any of them lives, make
    ``close()`` refuse (``BufferError``: see :func:`close_block`), and the mapping goes with the
    last array."""
    own = np.frombuffer(buf, dtype=np.uint8)  # holds an export of the block while it lives
    views = {}
    for name, (offset, shape, dtype) in layout.items():
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        views[name] = own[offset : offset + size].view(dtype).reshape(shape)
    return views


class ProcessDied(RuntimeError):
    """A process that plays games (a worker, a training helper, a game of ``vec_env:
    subproc``) ended under the caller (killed, out of memory...); the message names it."""


def close_block(shm: shared_memory.SharedMemory) -> None:
    """Close this process's mapping of a shared block, or leave it to the last of its arrays
    that are still held (:func:`array_views`), quietly: a refused ``close()`` is not tried
    again when the block is collected."""
    try:
        shm.close()
    except BufferError:
        shm.close = lambda: None  # type: ignore[method-assign]


def _portable_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options as a worker can receive them (a kernels module travels by its name)."""
    kernels = options.get("kernels")
    if isinstance(kernels, ModuleType):
        return {**options, "kernels": ("module", kernels.__name__)}
    return options


def _local_options(options: dict[str, Any]) -> dict[str, Any]:
    kernels = options.get("kernels")
    if isinstance(kernels, tuple) and len(kernels) == 2 and kernels[0] == "module":
        return {**options, "kernels": importlib.import_module(kernels[1])}
    return options


def _rename(exc: BaseException, local: int, offset: int) -> BaseException:
    """``exc`` with a leading ``game {local}`` of its message made the game's global index."""
    text = str(exc)
    prefix = f"game {local}"
    if offset and text.startswith(prefix) and not text[len(prefix) : len(prefix) + 1].isdigit():
        try:
            return type(exc)(f"game {local + offset}{text[len(prefix) :]}")
        except Exception:  # an exception type that does not take one message
            return exc
    return exc


@contextlib.contextmanager
def _main_out_of_sight() -> Any:
    """While workers start: the parent's main module hidden from :mod:`multiprocessing`.

    A spawned (or forkserver) child runs the parent's main script before its target, to find
    what the target may need from it; a worker needs nothing from it (its target and arguments
    come from this package), and a training script's imports (torch...) would cost every worker
    seconds and memory. The stand-in has no file and no spec, as in an interactive session,
    so the child leaves its own main module alone.
    """
    with _MAIN_LOCK:
        real = sys.modules.get("__main__")
        stand_in = ModuleType("__main__")
        sys.modules["__main__"] = stand_in
        try:
            yield
        finally:
            if sys.modules.get("__main__") is stand_in and real is not None:
                sys.modules["__main__"] = real


def start_process(proc: Any, start_method: str) -> None:
    """Start ``proc`` (of a context of ``start_method``); unless forked, with the parent's main
    module out of its sight (:func:`_main_out_of_sight`)."""
    if start_method == "fork":
        proc.start()
        return
    with _main_out_of_sight():
        proc.start()


def reply_ok(value: Any) -> bytes:
    """A worker's reply: the value (pickled)."""
    return pickle.dumps(("ok", value), protocol=pickle.HIGHEST_PROTOCOL)


def portable_exception(exc: BaseException) -> BaseException:
    """``exc`` itself where pickling rebuilds it as it is (type, arguments, message), else an
    exception of its nearest built-in type (``RuntimeError`` where that is ``Exception``)
    whose message is ``Type: message`` (a ``SystemExit``: a ``RuntimeError`` saying so, which
    the receiver does not take for its own exit): what another process can be sent and raise,
    with ``exc``'s notes (a traceback does not cross: pickling leaves it out)."""
    if isinstance(exc, SystemExit):  # raised in the parent it would end it without a word
        plain: BaseException = RuntimeError(f"sys.exit({exc.code!r}) was called")
    else:
        try:
            copy = pickle.loads(pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL))
            same = type(copy) is type(exc) and repr(copy.args) == repr(exc.args)
            if same and str(copy) == str(exc):
                return exc
        except Exception:  # a type that does not pickle, or not rebuild from its arguments
            pass
        try:
            text = f"{type(exc).__name__}: {exc}"
        except Exception:  # an exception whose message itself fails
            text = type(exc).__name__
        base = next(t for t in type(exc).__mro__ if t.__module__ == "builtins")
        try:
            plain = RuntimeError(text) if base in (Exception, BaseException) else base(text)
        except Exception:  # a built-in type that takes more than a message
            plain = RuntimeError(text)
    for note in getattr(exc, "__notes__", ()):
        plain.add_note(note)
    return plain


def _sendable(value: Any) -> Any:
    """``value`` as a worker can read it: an int, str or float of a subclass (an ``IntEnum``
    of the caller's script, which the workers do not import) as the plain value it stands
    for; anything else as it is (a worker that cannot read it says so)."""
    if type(value) in (int, str, float, bool) or value is None:
        return value
    if type(value).__module__ == "numpy":  # the workers import numpy: refused as given
        return value
    for plain, copy in ((int, int.__index__), (str, str.__str__), (float, float.__float__)):
        if isinstance(value, plain):
            return copy(value)  # (the plain value, whatever the subclass's own methods say)
    return value


def _raise(exc: BaseException) -> bytes:
    """An error of the caller's own making (a bad seat, ...): re-raised in the parent."""
    return pickle.dumps(("raise", portable_exception(exc)), protocol=pickle.HIGHEST_PROTOCOL)


def reply_failure() -> bytes:
    """The worker failed: the traceback's text, for the parent's RuntimeError."""
    return pickle.dumps(("error", traceback.format_exc()))


def _worker_main(conn: Any, spec: dict[str, Any]) -> None:
    """A worker: a VectorEnv over games ``lo:hi`` writing into the shared block."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    lo, hi = spec["lo"], spec["hi"]
    shm = None
    try:
        shm = shared_memory.SharedMemory(name=spec["shm"])
        shared = array_views(shm.buf, spec["layout"])
        mine = {name: array[lo:hi] for name, array in shared.items()}
        game = registry.make_game(
            spec["variant"], spec["num_players"], **_local_options(spec["options"])
        )
        env = VectorEnv(
            game, hi - lo, infos=spec["infos"], buffers={k: mine[k] for k in spec["outputs"]}
        )
        env._matches_done = mine["matches_done"]  # the engine counts into the shared block
        env.matches_done = read_only(env._matches_done)
    except BaseException:
        conn.send_bytes(reply_failure())
        failed = True
    else:
        failed = False
    if failed:
        # the block's views go first (the traceback that held them is gone): a block closed
        # with views of it still alive complains when it is collected
        shared = mine = env = None
        if shm is not None:
            shm.close()
        return
    conn.send_bytes(_OK)
    actions, selected, final = mine["actions"], mine["selected"], mine["final_observations"]
    keep = env.keep_infos
    hand_done, over = env.hand_done, np.zeros(hi - lo, dtype=bool)
    seats = range(env.num_players)
    try:
        while True:
            try:
                msg = conn.recv_bytes()
            except (EOFError, OSError):
                break  # the parent is gone
            if msg in (_STEP_ALL, _STEP_SOME):
                try:
                    if msg == _STEP_ALL:
                        env.step(actions)
                    else:
                        games = np.flatnonzero(selected)
                        env.step(actions[games], games)
                    reply = _OK
                    if hand_done.any():
                        np.logical_or(env.terminated, env.truncated, out=over)
                        for i in np.flatnonzero(over).tolist():
                            for seat in seats:  # what final_observation() reads in the parent
                                final[i, seat] = env.final_observation(i, seat)
                        if keep:
                            done = np.flatnonzero(hand_done).tolist()
                            reply = reply_ok([(i + lo, env.infos[i]) for i in done])
                except BaseException:
                    reply = reply_failure()
                conn.send_bytes(reply)
                continue
            if msg == _QUIT:
                break
            try:
                request = pickle.loads(msg)
            except Exception as exc:  # an object of a module this process lacks: the caller's
                conn.send_bytes(_raise(TypeError(f"a worker cannot read the request: {exc}")))
                continue
            conn.send_bytes(_serve(env, request, lo))
    finally:
        del env, shared, mine, actions, selected, final, hand_done
        with contextlib.suppress(Exception):
            close_block(shm)
        conn.close()


def _serve(env: VectorEnv, request: tuple[Any, ...], lo: int) -> bytes:
    """One request other than a step; ``game`` arguments are indices within the slice."""
    name, *args = request
    try:
        if name == "reset":
            env.reset(args[0])
            return _OK
        if name == "modules":
            return reply_ok(sorted(sys.modules))
    except BaseException:
        return reply_failure()
    local = args[0]
    try:
        if name == "refuse":
            try:
                env._refuse(local, args[1])
            except IllegalActionError as exc:
                text = str(exc)
                prefix = f"game {local}: "
                return reply_ok(text[len(prefix) :] if text.startswith(prefix) else text)
            return reply_ok(f"action {args[1]!r} is not legal")
        if name == "final":
            return reply_ok(env.final_observation(local, args[1]))
        if name == "observe":
            return reply_ok(env.observe(local, args[1]))
        if name == "render":
            return reply_ok(env.render(local, args[1]))
    except Exception as exc:
        return _raise(_rename(exc, local, lo))
    return _raise(ValueError(f"unknown request {name!r}"))


class WorkerVectorEnv:
    """``num_envs`` matches of one variant stepped together by ``num_workers`` processes
    (see the module docstring); the attributes and methods of
    :class:`~rummyzoo.envs.vector.VectorEnv`, plus per-worker stepping (:meth:`send_step`,
    :meth:`wait_step`, :meth:`wait_any`, :attr:`in_flight`) and :meth:`close`.

    :param variant: the variant's name (``knock_rummy``, ``ditch_rummy``, ``rummy500``).
    :param num_envs: games stepped together.
    :param num_players: seats of every game.
    :param num_workers: worker processes, 1 to ``num_envs``.
    :param infos: keep the AEC env's per-seat infos of every game in :attr:`infos`.
    :param start_method: a :mod:`multiprocessing` start method (None: ``forkserver`` where
        available, else ``spawn``).
    :param options: the variant's ``env()`` options (and ``kernels``), checked here before any
        process starts.
    :raises ConfigError: a bad option, ``num_envs``, ``num_workers`` or ``start_method``.
    :raises RuntimeError: a worker failed to start.
    """

    def __init__(
        self,
        variant: str,
        num_envs: int,
        num_players: int = 2,
        num_workers: int = 2,
        infos: bool = False,
        start_method: str | None = None,
        **options: Any,
    ) -> None:
        self._closed = True  # until the workers run: close() has nothing to stop
        self._procs: list[Any] = []
        self._conns: list[Any] = []
        self._shm: shared_memory.SharedMemory | None = None
        self._busy = np.zeros(0, dtype=bool)  # per worker: a step sent, its reply not read
        self._poll = select.poll()
        self.game = game = registry.make_game(variant, num_players, **options)
        check_engine_args(num_envs, infos)
        n = int(num_envs)
        if (
            isinstance(num_workers, bool)
            or not isinstance(num_workers, (int, np.integer))
            or not 1 <= num_workers <= n
        ):
            raise ConfigError(
                f"num_workers must be an int from 1 to num_envs ({n}), got {num_workers!r}"
            )
        start_method = resolve_start_method(start_method)
        try:
            portable = pickle.loads(pickle.dumps(_portable_options(options)))
        except Exception as exc:
            raise ConfigError(
                f"the options must be picklable to reach the workers: {exc}"
            ) from None

        self.variant = variant
        self.num_envs = n
        self.num_workers = w_count = int(num_workers)
        self.start_method = start_method
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.obs_size = game.obs_size
        self.keep_infos = bool(infos)
        self.infos: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        self.bounds = bounds = split_games(n, w_count)
        self._ends = bounds[1:]
        self._slices = [slice(int(lo), int(hi)) for lo, hi in itertools.pairwise(bounds)]
        self._sizes = np.diff(bounds)
        self._owner_of = np.repeat(np.arange(w_count), self._sizes).tolist()  # game -> worker
        self._busy = np.zeros(w_count, dtype=bool)
        self._poll = select.poll()  # the pipes of the workers with a step in flight
        self._by_fd: dict[int, int] = {}
        self._all = np.arange(n)
        self._first_illegal = compiled_check(game)  # VectorEnv.check's compiled route
        self._clear = np.zeros(n, dtype=bool)  # games whose rewards and infos go next step
        self._has_reset = False
        self._interrupted = None  # VectorEnv's: a failed step closes the workers instead

        layout, size = _layout(n, game)
        self._shm = shm = shared_memory.SharedMemory(create=True, size=size)
        self._closed = False
        try:
            shared = array_views(shm.buf, layout)
            shared_names = list(shared)
            outputs = [k for k in shared_names if k not in _PRIVATE]
            self._bind({k: shared[k] for k in outputs}, shared["matches_done"])
            self._actions = shared["actions"]
            self._selected = shared["selected"]
            self._final_obs = shared["final_observations"]
            ctx = multiprocessing.get_context(start_method)
            for w in range(w_count):
                parent_end, child_end = ctx.Pipe(duplex=True)
                spec = {
                    "shm": shm.name,
                    "layout": layout,
                    "outputs": outputs,
                    "lo": int(bounds[w]),
                    "hi": int(bounds[w + 1]),
                    "variant": variant,
                    "num_players": num_players,
                    "options": portable,
                    "infos": self.keep_infos,
                }
                proc = ctx.Process(
                    target=_worker_main,
                    args=(child_end, spec),
                    name=f"rummyzoo-worker-{w}",
                    daemon=True,
                )
                self._conns.append(parent_end)
                self._by_fd[parent_end.fileno()] = w
                self._procs.append(proc)
                start_process(proc, start_method)
                child_end.close()  # our copy: the pipe then ends when the worker does
            self._exchange(range(w_count), None)  # each worker says it is ready
        except BaseException:
            self.close()
            raise

    def _bind(self, outputs: dict[str, np.ndarray], matches_done: np.ndarray) -> None:
        # Read-only views for the engine's users, as VectorEnv hands out; this process writes
        # through ``_out`` (the clearing of rewards and flags).
        self._out = outputs
        self._masks = outputs["action_masks"]  # what ``check`` reads (not the users' attribute)
        self.buffers = {name: read_only(array) for name, array in outputs.items()}
        for name, view in self.buffers.items():  # observations, action_masks, ... (BUFFER_SPECS)
            setattr(self, name, view)
        #: per game, the number of matches it has finished since the last reset
        self.matches_done = read_only(matches_done)

    # -------------------------------------------------------------- plumbing
    def _alive(self) -> None:
        if self._closed:
            raise RuntimeError("this WorkerVectorEnv is closed")

    def _idle(self, workers: np.ndarray | None = None) -> None:
        """Raise unless the ``workers`` (a mask; None: all) have no step in flight."""
        clash = self._busy if workers is None else self._busy & workers
        if clash.any():
            self._in_flight(int(np.flatnonzero(clash)[0]))

    def _in_flight(self, w: int) -> None:
        raise RuntimeError(
            f"worker {w} has a step in flight: collect it first (wait_step({w}) or wait_any())"
        )

    def _fail(self, w: int, text: str, error: type[RuntimeError] = RuntimeError) -> None:
        self.close()
        lines = text.strip().splitlines()
        if len(lines) > 1:  # a traceback: its last line first
            text = f"{lines[-1]}\n\nthe worker's traceback:\n{text.rstrip()}"
        raise error(f"worker {w} of {self.num_workers} failed: {text}")

    def _ended(self, w: int) -> None:
        proc = self._procs[w]
        proc.join(1.0)
        code = proc.exitcode
        ended = "the process ended" + ("" if code is None else f" (exit code {code})")
        self._fail(w, ended, ProcessDied)

    def _receive(self, w: int) -> bytes:
        try:
            return self._conns[w].recv_bytes()
        except (EOFError, OSError):
            self._ended(w)
        raise AssertionError  # not reached

    def _exchange(
        self, workers: Sequence[int], messages: bytes | Sequence[bytes] | None
    ) -> list[Any]:
        """Send each of ``workers`` its message (one for all, one each, or None: nothing) and
        read every reply: the values in order. A worker's failure raises RuntimeError (closing the engine),
        and so does anything (Ctrl-C...) that stops the exchange half-way, re-raised after
        closing: the workers and this process would disagree; an error of the caller's making
        that a worker reports (a bad seat...) is raised once every reply is in."""
        values: list[Any] = []
        failed: tuple[int, str] | None = None
        raised: BaseException | None = None
        conns = self._conns
        try:
            if messages is not None:
                same = isinstance(messages, bytes)
                for k, w in enumerate(workers):
                    try:
                        conns[w].send_bytes(messages if same else messages[k])
                    except OSError:
                        self._ended(w)
            for w in workers:
                msg = self._receive(w)
                if msg == _OK:
                    values.append(None)
                    continue
                kind, value = pickle.loads(msg)
                if kind == "ok":
                    values.append(value)
                elif kind == "raise":
                    raised = raised or value
                    values.append(None)
                elif failed is None:
                    failed = (w, value)
            if failed is not None:
                self._fail(*failed)
        except BaseException:
            if not self._closed:
                self.close()
            raise
        if raised is not None:
            raise raised
        return values

    def _request(self, w: int, *request: Any) -> Any:
        self._alive()
        if self._busy[w]:
            self._in_flight(w)
        return self._exchange([w], pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))[0]

    def _owner(self, game: Any) -> tuple[int, int]:
        """(worker, index within its slice) of game ``game``.

        :raises ValueError: as :class:`~rummyzoo.envs.vector.VectorEnv` says it, for an index
            that is not an int in ``0..num_envs - 1``.
        """
        if (
            isinstance(game, (bool, np.bool_))
            or not isinstance(game, (int, np.integer))
            or not 0 <= game < self.num_envs
        ):
            raise ValueError(f"game must be an int in 0..{self.num_envs - 1}, got {game!r}")
        g = int(game)
        w = self._owner_of[g]
        return w, g - int(self.bounds[w])

    def _worker_modules(self, w: int = 0) -> list[str]:
        """The modules imported in worker ``w`` (to check what workers load)."""
        return self._request(w, "modules")

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | Sequence[int] | None = None) -> None:
        """Start a new match in every game (as :meth:`VectorEnv.reset
        <rummyzoo.envs.vector.VectorEnv.reset>`: None, an int ``s`` for seeds ``s + i``, or one
        seed per game).

        :raises ValueError: a bad seed (nothing is changed then).
        :raises RuntimeError: a worker has a step in flight.
        """
        self._alive()
        self._idle()
        seeds = game_seeds(seed, self.num_envs)
        bounds = self.bounds.tolist()
        requests = [
            pickle.dumps(("reset", seeds[lo:hi]), protocol=pickle.HIGHEST_PROTOCOL)
            for lo, hi in itertools.pairwise(bounds)
        ]
        self._exchange(range(self.num_workers), requests)
        if self.keep_infos:
            self.infos = [[{} for _ in range(self.num_players)] for _ in range(self.num_envs)]
        self._clear[:] = False
        self._has_reset = True

    # ------------------------------------------------------------------- step
    def check(self, actions: Any, games: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """(game indices, action ids) if every action is legal in its game; changes nothing.

        Checked here on the shared masks, as :meth:`VectorEnv.check
        <rummyzoo.envs.vector.VectorEnv.check>` does.

        :raises IllegalActionError: naming the first game whose action is not legal there.
        """
        self._alive()
        return VectorEnv.check(self, actions, games)  # type: ignore[arg-type]

    _not_ready = VectorEnv._not_ready
    _refuse_first = VectorEnv._refuse_first

    def _refuse(self, game: int, action: Any) -> None:
        w, local = self._owner(game)
        action = _sendable(action)
        try:
            if type(action).__module__.split(".")[0] not in ("builtins", "numpy"):
                raise TypeError  # (a class the workers may not import, of the caller's script)
            pickle.dumps(action)
        except Exception:
            # no int (ints pickle): refused as the worker's game would refuse it
            seat = f"player_{int(self.current[game])}"
            try:
                check_action(action, self.num_actions)
            except IllegalActionError as err:
                raise IllegalActionError(
                    f"game {game}: {seat} sent an invalid action: {err}"
                ) from None
            raise IllegalActionError(f"game {game}: action {action!r} is not legal") from None
        text = self._request(w, "refuse", local, action)
        raise IllegalActionError(f"game {game}: {text}")

    @property
    def in_flight(self) -> list[int]:
        """The workers with a step in flight (sent, its reply not read yet)."""
        return np.flatnonzero(self._busy).tolist()

    def _per_worker(self, idx: np.ndarray) -> np.ndarray:
        """How many of the games ``idx`` (valid indices) each worker owns."""
        if idx.size == 0:
            return np.zeros(self.num_workers, dtype=np.int64)
        return np.bincount(
            np.searchsorted(self._ends, idx, side="right"), minlength=self.num_workers
        )

    def _open(self, w: int) -> None:
        """Before a step of worker ``w``: the rewards and infos of the games that started a
        new match in its last step go (as VectorEnv.step clears them)."""
        part = self._slices[w]
        clear = self._clear[part]
        if clear.any():
            self._out["rewards"][part][clear] = 0.0
            if self.keep_infos:
                for i in (np.flatnonzero(clear) + part.start).tolist():
                    self.infos[i] = [{} for _ in range(self.num_players)]
            clear[:] = False

    def _dispatch(
        self, idx: np.ndarray, acts: np.ndarray, per_worker: np.ndarray, whole: bool
    ) -> None:
        """Write the checked actions of games ``idx`` (``per_worker`` of them in each worker's
        slice, whose workers have no step in flight; ``whole``: every game, in order) and send
        each of those workers its step."""
        workers = np.flatnonzero(per_worker).tolist()
        for w in workers:
            self._open(w)
        if whole:
            self._actions[:] = acts
            messages = [_STEP_ALL] * len(workers)
        else:
            self._actions[idx] = acts
            messages = []
            for w in workers:
                if per_worker[w] == self._sizes[w]:
                    messages.append(_STEP_ALL)  # every game of the slice, in slice order
                else:
                    self._selected[self._slices[w]] = False
                    messages.append(_STEP_SOME)
            self._selected[idx] = True  # only the slices sent _STEP_SOME read it
        conns = self._conns
        try:
            for w, msg in zip(workers, messages, strict=True):
                try:
                    conns[w].send_bytes(msg)
                except OSError:
                    self._ended(w)
                self._busy[w] = True
                self._poll.register(conns[w].fileno(), select.POLLIN)
        except BaseException:
            # a send cut short (Ctrl-C...): the workers and this process would disagree
            if not self._closed:
                self.close()
            raise

    def send_step(self, actions: Any, games: Any = None) -> None:
        """Check the actions as :meth:`step` does and send them to the workers that own the
        games (None: all), without waiting for them; :meth:`wait_step` or :meth:`wait_any`
        collects each of those workers' replies.

        Nothing is changed when the actions are refused, and nothing is done for an empty
        ``games``. Only the slices of the workers sent a step change (see the module docstring).

        :raises IllegalActionError: an illegal action (naming its game).
        :raises ValueError: bad game indices.
        :raises RuntimeError: a worker owning one of the games has a step in flight; a worker
            failed (the engine is closed then).
        """
        # the check reads the masks of busy workers' games too, but refuses their games
        # anyway: the message of an illegal action there (a query) is the in-flight error
        idx, acts = self.check(actions, games)
        if idx.size:
            per_worker = self._per_worker(idx)
            self._idle(per_worker > 0)
            self._dispatch(idx, acts, per_worker, games is None)

    def wait_step(self, worker: int) -> None:
        """Read the reply of ``worker``'s step in flight and finish that step for its slice
        (what :meth:`step` does once the replies are in: the infos, the rewards to clear at its
        next step).

        :raises ValueError: ``worker`` is not a worker index or has no step in flight.
        :raises RuntimeError: the worker failed (the engine is closed then).
        """
        self._alive()
        if (
            isinstance(worker, bool)
            or not isinstance(worker, (int, np.integer))
            or not 0 <= worker < self.num_workers
        ):
            raise ValueError(f"worker must be 0..{self.num_workers - 1}, got {worker!r}")
        w = int(worker)
        if not self._busy[w]:
            raise ValueError(f"worker {w} has no step in flight")
        try:
            msg = self._receive(w)
            self._busy[w] = False
            self._poll.unregister(self._conns[w].fileno())
            if msg != _OK:
                kind, value = pickle.loads(msg)
                if kind != "ok":
                    self._fail(w, value)
                for i, game_infos in value:
                    self.infos[i] = game_infos
        except BaseException:
            if not self._closed:
                self.close()
            raise
        part = self._slices[w]
        np.logical_or(self.terminated[part], self.truncated[part], out=self._clear[part])

    def wait_any(self, timeout: float | None = None) -> int | None:
        """Wait for the first of the workers with a step in flight to answer, finish its step
        (:meth:`wait_step`) and return it; None if ``timeout`` seconds pass first. Of several
        that have answered, the lowest index.

        :raises ValueError: no worker has a step in flight.
        """
        self._alive()
        if not self._busy.any():
            raise ValueError("no worker has a step in flight")
        wait = None if timeout is None else max(0, int(np.ceil(timeout * 1000)))
        events = self._poll.poll(wait)  # readable, or the worker's end closed
        if not events:
            return None
        w = min(self._by_fd[fd] for fd, _ in events)
        self.wait_step(w)
        return w

    def step(self, actions: Any, games: Any = None) -> None:
        """Play one action in each game (or in each of ``games``) and refresh the arrays, as
        :meth:`VectorEnv.step <rummyzoo.envs.vector.VectorEnv.step>` does: every action is
        checked before any is played (an illegal one raises
        :class:`~rummyzoo.envs.core.IllegalActionError` and changes nothing).

        :raises RuntimeError: a worker has a step in flight, or a worker failed (the engine is
            closed then).
        """
        self._alive()
        self._idle()
        idx, acts = self.check(actions, games)
        per_worker = self._per_worker(idx)
        for w in np.flatnonzero(per_worker == 0).tolist():
            # a worker without stepped games: its rewards still clear, this call's flags are
            # all False there
            self._open(w)
            part = self._slices[w]
            for flag in ("hand_done", "terminated", "truncated"):
                self._out[flag][part] = False
        if not idx.size:
            return
        self._dispatch(idx, acts, per_worker, games is None)
        try:
            for w in np.flatnonzero(per_worker).tolist():
                self.wait_step(w)
        except BaseException:
            if not self._closed:
                self.close()
            raise

    # --------------------------------------------------------------- queries
    def final_observation(self, game: int, seat: int) -> np.ndarray:
        """The last observation of ``seat`` in the match that game ``game`` finished last.

        Read from the shared block (the worker wrote it when the match ended).

        :raises ValueError: when that game has not finished a match since the last reset.
        """
        w, local = self._owner(game)
        if not self._has_reset:
            self._alive()
            raise RuntimeError(self._not_ready("observing or rendering a game"))
        if (
            isinstance(seat, (int, np.integer))
            and not isinstance(seat, bool)
            and 0 <= seat < self.num_players
        ):
            self._alive()
            if self._busy[w]:
                self._in_flight(w)
            g = local + int(self.bounds[w])
            if self.matches_done[g] == 0:
                raise ValueError(f"game {g} has not finished a match since the last reset")
            return self._final_obs[g, int(seat)].copy()
        return self._request(w, "final", local, _sendable(seat))  # the worker's own error

    def observe(self, game: int, seat: int) -> np.ndarray:
        """The observation of any ``seat`` of game ``game`` now (a new array)."""
        w, local = self._owner(game)
        return self._request(w, "observe", local, _sendable(seat))

    def render(self, game: int, view: int | str | None = "render_view") -> str:
        """The text picture of game ``game``, as :meth:`VectorEnv.render` draws it."""
        w, local = self._owner(game)
        return self._request(w, "render", local, _sendable(view))

    def __reduce__(self) -> Any:
        raise TypeError(
            "a WorkerVectorEnv cannot be copied or pickled: its games live in worker processes "
            "and shared memory; copy a VectorEnv (make_vector without workers) instead"
        )

    # ---------------------------------------------------------------- closing
    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop the workers and unlink the shared memory (the arrays become private copies
        of their last values). Calling it again does nothing."""
        if self._closed and self._shm is None:
            return
        self._closed = True
        self._busy = np.zeros_like(self._busy)
        self._poll = select.poll()
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.send_bytes(_QUIT)
        for proc in self._procs:
            try:
                proc.join(2.0)
                if proc.exitcode is None:
                    proc.terminate()
                    proc.join(2.0)
                if proc.exitcode is None:
                    proc.kill()
                    proc.join()
                proc.close()
            except Exception:
                pass
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.close()
        self._procs = []
        self._conns = []
        shm, self._shm = self._shm, None
        if shm is None:
            return
        if hasattr(self, "buffers"):
            self._bind(
                {k: np.array(v) for k, v in self.buffers.items()}, np.array(self.matches_done)
            )
        self._actions = self._selected = self._final_obs = np.zeros(0)
        with contextlib.suppress(FileNotFoundError):
            shm.unlink()
        close_block(shm)  # the arrays still held elsewhere keep the mapping

    def __enter__(self) -> WorkerVectorEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __repr__(self) -> str:
        return (
            f"WorkerVectorEnv({self.game.name}, num_envs={self.num_envs}, "
            f"num_players={self.num_players}, num_workers={self.num_workers})"
        )
