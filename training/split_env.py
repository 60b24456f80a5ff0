"""The batched training env over several processes, each playing a share of the games.

:class:`SplitSeatEnv` is a stable-baselines3 ``VecEnv`` of ``N`` games with the learner in all
of them, as :class:`~rummyzoo.training.vec_env.BatchedSeatEnv` is, but its games are split
between ``processes`` processes: this one plays the first share itself (a ``BatchedSeatEnv``)
and each helper process plays another share, a ``BatchedSeatEnv`` of its own with its own
opponents (heuristics, checkpoints, self-play snapshots). Everything a game needs (the rules,
the opponents' decisions, matches starting and ending, the learner's statistics) runs in the
process that hosts it; the learner's process adds only the learner's network calls.

PPO collects its rollouts without a step-by-step exchange (:meth:`SplitSeatEnv.start_rollouts`,
:meth:`SplitSeatEnv.finish_rollouts`, used by :class:`~rummyzoo.training.ppo.MaskedPPO`): each
helper gets a copy of the learner's policy (its weights copied into shared memory before each
rollout) and plays its games' whole rollout on its own, its network's draws seeded per helper,
writing the observations, masks, actions, rewards, dones, values and log-probabilities into a
shared block, while the learner's process plays its own share; so no process waits for another
within a rollout. A helper sends each step's infos as soon as the step is played, and the
learner's process takes them in between its own steps (:meth:`SplitSeatEnv.poll_rollouts`:
the infos unpickled, the step's rows copied into the rollout buffer), so that what is left
once the last helper is done is only the steps it played after this process's last one. Otherwise (``step_async`` / ``step_wait``: the masked DQN, evaluation code),
one step writes the learner's actions of every helper's games into shared memory and wakes
the helpers, steps the local share meanwhile, then waits for the helpers. Their observations,
masks, rewards and dones are already in shared memory when they answer; only the infos of
games whose match ended travel pickled (and the reset infos). With ``processes`` set to the
machine's cores, every core plays games while the learner's process also runs the network.

Shares are contiguous and differ in size by one game at most
(:func:`~rummyzoo.envs.workers.split_games`). The share that starts at game ``lo`` is built by
``make_share(size, lo)``, which the helper calls in its own process (so it must be picklable:
a module-level function, or a ``functools.partial`` of one): the run's is
:func:`rummyzoo.training.train.share_env`, which seeds it with the run's seed plus ``lo``, so
that game ``i`` starts from the seed it has in one process. Each share draws its opponents'
actions, seats and opponents from its own generator: a seeded run is reproducible whatever the
timing of the processes, but it is not the run that one process plays.

The league: every finished match of every share is recorded in the local share's opponent
mixture (:attr:`SplitSeatEnv.opponents`, what the run logs). With PPO's rollouts each helper
starts every rollout from that mixture's results (prioritized fictitious self-play then weighs
the opponents by every share's games, as one process would) and adds its own share's as its
games end; with the step-by-step exchange each helper draws from its own share's results
(a resumed run's league restored in every share: :meth:`SplitSeatEnv.set_league_results`). A
snapshot added to the pool (``env_method("add_snapshot", ...)``) goes to every share.

A helper that fails (an exception, or a process that dies) raises :class:`RuntimeError`
naming it, and the env closes; so does anything else that cuts short a call whose helpers'
replies are not all read (an error of the local share, Ctrl-C), which leaves the exception as it
was. :meth:`SplitSeatEnv.close` stops the helpers (one that does not answer within seconds is
killed) and frees the shared memory.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import itertools
import multiprocessing
import multiprocessing.connection
import pickle
import select
import signal
from collections.abc import Callable
from multiprocessing import shared_memory
from typing import Any, NoReturn

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices

from rummyzoo.envs.core import ConfigError
from rummyzoo.envs.seeding import check_seed
from rummyzoo.envs.workers import (
    ProcessDied,
    array_views,
    close_block,
    pack_arrays,
    reply_failure,
    reply_ok,
    resolve_start_method,
    split_games,
    start_process,
)
from rummyzoo.training.vec_env import (
    WholeBatchVecEnv,
    action_ids,
    one_action_per_game,
    sent_action,
)

__all__ = ["SplitSeatEnv"]

_STEP = b"s"
_QUIT = b"q"
#: the status of a helper's message that carries one step of its rollout (before its reply)
_STEP_DONE = "step"
#: a rollout's arrays with a row per step and game
_ROWS = frozenset({"obs", "masks", "actions", "values", "log_probs", "rewards", "dones"})


def _layout(size: int, input_size: int, num_actions: int) -> tuple[dict[str, Any], int]:
    """name -> (offset, shape, dtype) of one share's shared arrays, and the block's size."""
    return pack_arrays(
        {
            "actions": ((size,), np.dtype(np.int64)),
            "obs": ((size, input_size), np.dtype(np.float32)),
            "masks": ((size, num_actions), np.dtype(np.bool_)),
            "rewards": ((size,), np.dtype(np.float32)),
            "dones": ((size,), np.dtype(np.bool_)),
        }
    )


def _rollout_specs(
    steps: int, size: int, input_size: int, num_actions: int
) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The arrays of one helper's rollout of ``steps`` steps of its ``size`` games."""
    return {
        "obs": ((steps, size, input_size), np.dtype(np.float32)),
        "masks": ((steps, size, num_actions), np.dtype(np.bool_)),
        "actions": ((steps, size), np.dtype(np.int64)),
        "rewards": ((steps, size), np.dtype(np.float32)),
        "dones": ((steps, size), np.dtype(np.bool_)),
        "values": ((steps, size), np.dtype(np.float32)),
        "log_probs": ((steps, size), np.dtype(np.float32)),
        "last_values": ((size,), np.dtype(np.float32)),
        # the last observation of each match that ended, at its step and game (the info
        # carries None in its place: large arrays pickle slowly, and the infos of a rollout
        # in which many matches end would otherwise be mostly these)
        "terminal_obs": ((steps, size, input_size), np.dtype(np.float32)),
        # the same for the return and length VecMonitor reports of each ended match: numpy
        # scalars pickle about six times as slowly as the rest of an info
        "episode_r": ((steps, size), _EPISODE["r"]),
        "episode_l": ((steps, size), _EPISODE["l"]),
    }


#: VecMonitor's numpy scalars of an ended match's ``episode`` info: the key and its type
_EPISODE = {"r": np.dtype(np.float32), "l": np.dtype(np.int32)}


def _arrays_out(
    t: int, infos: list[tuple[int, dict[str, Any]]], out: dict[str, np.ndarray]
) -> None:
    """Move each of step ``t``'s infos ``(game, info)``'s ``terminal_observation`` into
    ``out["terminal_obs"][t, game]``, and its ``episode``'s numpy scalars of
    :data:`_EPISODE`'s types into ``out["episode_<key>"][t, game]`` (None left in their
    place; a value of another type stays where it is)."""
    block = out["terminal_obs"][t]
    columns = {key: out["episode_" + key][t] for key in _EPISODE}
    for i, info in infos:
        final = info.get("terminal_observation")
        if final is not None:
            block[i] = final
            info["terminal_observation"] = None
        episode = info.get("episode")
        if isinstance(episode, dict):
            for key, dtype in _EPISODE.items():
                value = episode.get(key)
                if value is not None and type(value) is dtype.type:
                    columns[key][i] = value
                    episode[key] = None


def _arrays_in(t: int, infos: list[tuple[int, dict[str, Any]]], out: dict[str, np.ndarray]) -> None:
    """Undo :func:`_arrays_out` for the infos ``(game, info)`` of step ``t`` (the
    observations copied out of the block, which is reused: each a row of one copy)."""
    finals = [
        (i, info)
        for i, info in infos
        if "terminal_observation" in info and info["terminal_observation"] is None
    ]
    if finals:
        rows = out["terminal_obs"][t, [i for i, _ in finals]]  # one copy of them all
        for row, (_, info) in zip(rows, finals, strict=True):
            info["terminal_observation"] = row
    for key in _EPISODE:
        column = out["episode_" + key][t]
        for i, info in infos:
            episode = info.get("episode")
            if isinstance(episode, dict) and key in episode and episode[key] is None:
                episode[key] = column[i]


def _restart_counts(monitor: Any) -> None:
    """A new start of the games under a ``VecMonitor`` (or None): its episodes' returns and
    lengths count from here (the monitor stays the same object: it may be wrapped)."""
    if monitor is not None:
        monitor.episode_returns[:] = 0
        monitor.episode_lengths[:] = 0


def _publish(env: Any, views: dict[str, np.ndarray], obs: np.ndarray) -> None:
    views["obs"][:] = obs
    views["masks"][:] = env.action_masks()


def _helper_main(conn: Any, make_share: Callable[..., Any], size: int, lo: int, spec: Any) -> None:
    """A helper process: the share of ``size`` games from game ``lo``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the learner's process stops us
    shm_name, layout = spec
    try:
        env = make_share(size, lo)
        shm = shared_memory.SharedMemory(name=shm_name)
        views = array_views(shm.buf, layout)
        actor = _Actor(env, views, conn.send_bytes)
    except BaseException:
        conn.send_bytes(reply_failure())
        return
    # the share, its tables and torch stay for the process's life: out of the collector's
    # full collections (see settled_heap), whose pauses the learner's process would wait for
    gc.freeze()
    conn.send_bytes(reply_ok(None))
    try:
        while True:
            try:
                msg = conn.recv_bytes()
            except (EOFError, OSError):
                break  # the learner's process is gone
            if msg == _QUIT:
                break
            try:
                if msg == _STEP:
                    env.step_async(views["actions"])
                    obs, rewards, dones, infos = env.step_wait()
                    actor.obs = obs
                    _publish(env, views, obs)
                    views["rewards"][:] = rewards
                    views["dones"][:] = dones
                    reply = reply_ok([(i, info) for i, info in enumerate(infos) if info])
                else:
                    reply = reply_ok(_serve(actor, pickle.loads(msg)))
            except BaseException:
                reply = reply_failure()
            conn.send_bytes(reply)
    finally:
        actor.release()
        del views
        with contextlib.suppress(Exception):
            env.close()
        with contextlib.suppress(Exception):
            close_block(shm)
        conn.close()


#: What a helper imports, imported once by the fork server that the helpers start from (the
#: ``forkserver`` start method), so that each helper starts from it in a fraction of a second
#: instead of importing torch and stable-baselines3 again (3.6 to 3.9 s a helper on a 2-core
#: machine, 1.6 s of it the first optimizer's import of ``torch._dynamo``).
HELPER_PRELOAD = ["rummyzoo.training.train", "rummyzoo.training.ppo", "torch._dynamo"]


def preload_helpers(ctx: Any) -> None:
    """Add :data:`HELPER_PRELOAD` to what the fork server of ``ctx`` (a ``forkserver``
    context) imports when it starts: only the modules this process imported without an error
    (an error other than an ``ImportError`` would stop the fork server, whose other users'
    processes would not start either), and after what it imported already (Python's default
    is the main module, which this package's helpers and workers keep out of the children's
    sight). It has no effect once this process's fork server runs (the helpers then import
    what they need themselves, as before): every process started from it has these modules
    loaded, at no cost in memory of its own (the pages are the server's, shared)."""
    from multiprocessing import forkserver

    loaded = []
    for name in HELPER_PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # a module this platform lacks: the helpers do without it
            continue
        loaded.append(name)
    current = list(getattr(forkserver._forkserver, "_preload_modules", []))
    ctx.set_forkserver_preload(list(dict.fromkeys([*current, *loaded])))


class _Actor:
    """A helper's share with what it needs to play rollouts on its own: its current
    observations, a copy of the learner's policy (weights read from shared memory before each
    rollout), the rollout's shared arrays and ``send``, which sends the learner's process a
    message (each step's infos as the rollout goes)."""

    def __init__(
        self, env: Any, views: dict[str, np.ndarray], send: Callable[[bytes], None]
    ) -> None:
        import torch as th

        import rummyzoo.training.ppo  # noqa: F401  (sb3-contrib)

        # a policy builds an optimizer, whose first one in a process imports much of torch
        # (about a second): done here, while the env starts, not in the first rollout
        th.optim.Adam([th.nn.Parameter(th.zeros(1))])
        self.env = env
        self.views = views
        self.send = send
        self.obs: np.ndarray | None = None
        self.policy: Any = None
        self.monitor: Any = None
        self._blocks: dict[str, tuple[shared_memory.SharedMemory, dict[str, np.ndarray]]] = {}

    def _attach(self, name: str, layout: dict[str, Any]) -> dict[str, np.ndarray]:
        if name not in self._blocks:
            shm = shared_memory.SharedMemory(name=name)
            self._blocks[name] = (shm, array_views(shm.buf, layout))
        return self._blocks[name][1]

    def build_policy(self, cls: type, data: dict[str, Any], seed: int, weights: Any) -> None:
        import torch as th

        from rummyzoo.training.ppo import use_masked_policy

        th.set_num_threads(1)
        th.manual_seed(seed)
        policy = cls(**data)
        use_masked_policy(policy)
        policy.set_training_mode(False)
        self.policy = policy
        self._weights = weights
        self.monitor = None

    def rollout(self, steps: int, gamma: float, block: tuple[str, Any], league: Any = None) -> None:
        """Play ``steps`` steps of the share with the policy; the arrays go into ``block``,
        and once a step's rows are written its non-empty infos go to the learner's process
        as a message ``("step", (step, [(game, info), ...]))`` (:data:`_STEP_DONE`), their
        arrays moved into the block (:func:`_arrays_out`). ``league``: the learner's league
        results, which the share's opponent mixture starts from (None: keep its own)."""
        import torch as th
        from stable_baselines3.common.vec_env import VecMonitor

        from rummyzoo.training.ppo import play_rollout

        if self.policy is None:
            raise RuntimeError("no policy to play the rollout with")
        if league is not None:
            self.env.opponents.set_results(league)
        weights = self._attach(*self._weights)
        self.policy.load_state_dict({k: th.from_numpy(v) for k, v in weights.items()})
        if self.monitor is None:
            self.monitor = VecMonitor(self.env)
        out = self._attach(*block)
        policy = self.policy

        def step_done(t: int, infos: list[tuple[int, dict[str, Any]]]) -> None:
            _arrays_out(t, infos, out)
            self.send(pickle.dumps((_STEP_DONE, (t, infos)), protocol=pickle.HIGHEST_PROTOCOL))

        obs, _ = play_rollout(
            policy, self.monitor, self.env.action_masks, self.obs, steps, gamma, out, step_done
        )
        with th.no_grad():
            out["last_values"][:] = policy.predict_values(th.as_tensor(obs)).numpy().reshape(-1)
        self.obs = obs
        _publish(self.env, self.views, obs)

    def release(self) -> None:
        for shm, views in self._blocks.values():
            views.clear()
            with contextlib.suppress(Exception):
                close_block(shm)
        self._blocks = {}


def _serve(actor: _Actor, request: tuple[Any, ...]) -> Any:
    env = actor.env
    name, *args = request
    if name == "reset":
        actor.obs = env.reset()
        _restart_counts(actor.monitor)
        _publish(env, actor.views, actor.obs)
        return env.reset_infos
    if name == "policy":
        actor.build_policy(*args)
        return None
    if name == "rollout":
        return actor.rollout(*args)
    if name == "call":
        method, method_args, method_kwargs = args
        return getattr(env, method)(*method_args, **method_kwargs)
    if name == "get":  # an attribute, or a dotted path of them
        value = env
        for part in args[0].split("."):
            value = getattr(value, part)
        return value
    if name == "set":
        setattr(env, args[0], args[1])
        return None
    raise ValueError(f"unknown request {name!r}")


class _Poller:
    """Which helpers' pipes have a message waiting, without waiting (``select.poll`` where
    there is one: a Connection's own ``poll`` costs tens of microseconds a call)."""

    def __init__(self, conns: list[Any]) -> None:
        self._conns = dict(enumerate(conns))
        self._poll = select.poll() if hasattr(select, "poll") else None
        self._helper: dict[int, int] = {}
        if self._poll is not None:
            for h, conn in self._conns.items():
                self._poll.register(conn.fileno(), select.POLLIN)
                self._helper[conn.fileno()] = h

    def ready(self) -> list[int]:
        """The helpers whose pipe has a message (or has broken: reading it then says so)."""
        if self._poll is None:
            waiting = multiprocessing.connection.wait(list(self._conns.values()), 0)
            return [h for h, conn in self._conns.items() if conn in waiting]
        return [self._helper[fd] for fd, _ in self._poll.poll(0)]

    def done(self, h: int) -> None:
        """Helper ``h`` has nothing more to send."""
        conn = self._conns.pop(h)
        if self._poll is not None:
            self._poll.unregister(conn.fileno())


class SplitSeatEnv(WholeBatchVecEnv):
    """``num_envs`` games of the learner split between ``processes`` processes (see the
    module docstring).

    :param make_share: ``make_share(size, lo)`` builds the ``BatchedSeatEnv`` of the share of
        ``size`` games that starts at game ``lo`` (picklable: helpers call it).
    :param num_envs: games in all.
    :param processes: processes that play games, this one included (2 or more).
    :param start_method: a :mod:`multiprocessing` start method (None: ``forkserver`` where
        available, else ``spawn``).
    :raises ConfigError: a bad ``num_envs``, ``processes`` or ``start_method``.
    :raises RuntimeError: a helper failed to start.
    """

    metadata = {"render_modes": []}  # noqa: RUF012
    kind = "split env"

    def __init__(
        self,
        make_share: Callable[[int, int], Any],
        num_envs: int,
        processes: int = 2,
        start_method: str | None = None,
    ) -> None:
        self._closed = True
        self._closing = False  # a close under way
        self._unread = False  # an exchange was cut short: helpers' replies may wait unread
        self._rolling = False  # the helpers are playing a rollout (start_rollouts)
        self._weights: Any = None  # (block name, layout, views) of the policy's weights
        self._rollouts: Any = None  # (steps, [(block name, layout, views)] per helper)
        self._streams: list[tuple[list[Any], bool]] = []  # see start_rollouts
        self._into: dict[str, np.ndarray] | None = None
        self._poller: _Poller | None = None  # the helpers' pipes, during a rollout
        self._local_monitor: Any = None
        self._helper_seconds = 0.0
        self._procs: list[Any] = []
        self._conns: list[Any] = []
        self._blocks: list[shared_memory.SharedMemory] = []
        self._views: list[dict[str, np.ndarray]] = []
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise ConfigError(f"num_envs must be an int, got {num_envs!r}")
        n = int(num_envs)
        if isinstance(processes, bool) or not isinstance(processes, (int, np.integer)):
            raise ConfigError(f"processes must be an int, got {processes!r}")
        if not 2 <= processes <= n:
            raise ConfigError(f"processes must be from 2 to num_envs ({n}), got {processes}")
        start_method = resolve_start_method(start_method)
        self.bounds = bounds = split_games(n, int(processes))
        self.processes = int(processes)
        self._slices = [slice(int(lo), int(hi)) for lo, hi in itertools.pairwise(bounds)]
        self.local = local = make_share(int(bounds[1]), 0)
        self.render_mode = None
        super().__init__(n, local.observation_space, local.action_space)
        self.num_actions = local.num_actions
        self._obs = np.zeros((n, local.input_size), dtype=np.float32)
        self._masks = np.zeros((n, local.num_actions), dtype=bool)
        self._closed = False
        try:
            ctx = multiprocessing.get_context(start_method)
            if start_method == "forkserver":
                preload_helpers(ctx)
            for w, part in enumerate(self._slices[1:], start=1):
                size = part.stop - part.start
                layout, nbytes = _layout(size, local.input_size, local.num_actions)
                block = shared_memory.SharedMemory(create=True, size=nbytes)
                self._blocks.append(block)
                self._views.append(array_views(block.buf, layout))
                parent_end, child_end = ctx.Pipe(duplex=True)
                proc = ctx.Process(
                    target=_helper_main,
                    args=(child_end, make_share, size, part.start, (block.name, layout)),
                    name=f"rummyzoo-share-{w}",
                    daemon=True,
                )
                self._conns.append(parent_end)
                self._procs.append(proc)
                start_process(proc, start_method)
                child_end.close()
            for h in range(len(self._conns)):
                self._reply(h)  # each helper has built its share
        except BaseException:
            self.close()
            raise

    # -------------------------------------------------------------- plumbing
    def _reply(self, h: int) -> Any:
        """The answer of helper ``h`` (share ``h + 1``); a failure closes the env, and so does
        a step of a rollout where an answer was due (replies out of step with requests)."""
        status, value = self._message(h)
        if status != "ok":
            self._unread = True
            self.close()
            raise RuntimeError(f"helper process {h + 1} sent {status!r} where an answer was due")
        return value

    def _message(self, h: int) -> tuple[str, Any]:
        """The next message of helper ``h``: ``("ok", value)`` (its answer) or a step of its
        rollout (:data:`_STEP_DONE`); a failure closes the env."""
        try:
            status, value = pickle.loads(self._conns[h].recv_bytes())
        except (EOFError, OSError):
            self._died(h)
        if status == "error":
            self._unread = True
            self.close()
            raise RuntimeError(f"helper process {h + 1} failed:\n{value}")
        return status, value

    def _died(self, h: int) -> NoReturn:
        """Helper ``h``'s pipe broke: close the env and say which helper died, and how."""
        code = None
        if h < len(self._procs):
            proc = self._procs[h]
            proc.join(timeout=5)  # its exit code is known once it is reaped
            code = proc.exitcode
        self._unread = True
        self.close()
        raise ProcessDied(f"helper process {h + 1} died (exit code {code})") from None

    def _post(self, h: int, message: bytes) -> None:
        """Send helper ``h`` a message; a broken pipe (a dead helper) closes the env and says
        so (a bare BrokenPipeError would pass for the reader of stdout gone, and end the
        command without a word)."""
        try:
            self._conns[h].send_bytes(message)
        except OSError:
            self._died(h)

    def _send(self, requests: list[tuple[Any, ...]]) -> None:
        """Send each helper its request (one per helper, in order), without waiting."""
        self._not_rolling()
        for h, request in enumerate(requests):
            self._post(h, pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))

    def _replies(self) -> list[Any]:
        return [self._reply(h) for h in range(len(self._conns))]

    def _ask(self, request: tuple[Any, ...]) -> list[Any]:
        """Send ``request`` to every helper; their answers."""
        self._not_rolling()  # refused before the exchange, which a failure in closes the env
        with self._exchange():
            self._send([request] * len(self._conns))
            return self._replies()

    @contextlib.contextmanager
    def _exchange(self) -> Any:
        """A block between requests sent to the helpers and their replies read. Anything that
        stops it half-way (an error of this process's share, Ctrl-C) leaves replies unread,
        which later calls would take for theirs: the env closes then, and the exception goes
        on."""
        try:
            yield
        except BaseException:
            self._unread = True
            if not self._closed:
                self.close()
            raise

    def _alive(self) -> None:
        if self._closed:
            raise RuntimeError("this SplitSeatEnv is closed")

    def _not_rolling(self) -> None:
        self._alive()
        if self._rolling:
            raise RuntimeError(
                "the helpers are playing a rollout (start_rollouts): finish_rollouts first"
            )

    def _shared(self, specs: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, np.ndarray]]:
        """A new shared block of the arrays ``specs`` lays out: its name, layout and views."""
        layout, nbytes = pack_arrays(specs)
        block = shared_memory.SharedMemory(create=True, size=nbytes)
        self._blocks.append(block)
        return block.name, layout, array_views(block.buf, layout)

    def _record(self, info: dict[str, Any]) -> None:
        """A helper's finished match, in the local share's opponent mixture (the league)."""
        game = info.get("game")
        if game is not None:
            self.local.opponents.record_game(game)

    def _gather(self, local_obs: np.ndarray) -> np.ndarray:
        """Observations and masks of every share into the env's arrays; the observations."""
        first = self._slices[0]
        self._obs[first] = local_obs
        self._masks[first] = self.local.action_masks()
        for part, views in zip(self._slices[1:], self._views, strict=True):
            self._obs[part] = views["obs"]
            self._masks[part] = views["masks"]
        return self._obs.copy()

    # --------------------------------------------------------------- VecEnv API
    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed the next reset: game ``i`` gets ``seed + i``, in whichever share it is."""
        self._not_rolling()  # before this process's share changes
        if seed is not None:
            check_seed(seed)  # refused here, before any share takes it
        seeds = super().seed(seed)
        base = int(seeds[0])
        with self._exchange():
            self._send([("call", "seed", (base + part.start,), {}) for part in self._slices[1:]])
            self.local.seed(base)
            self._replies()
        return seeds

    def reset(self) -> np.ndarray:
        self._not_rolling()  # refused, the rollout left to finish, nothing changed
        self._drop_reset_options()  # (they were dropped without a word)
        with self._exchange():
            self._send([("reset",)] * len(self._conns))  # the helpers reset meanwhile
            local_obs = self.local.reset()
            infos = list(self.local.reset_infos)
            for share_infos in self._replies():
                infos += share_infos
        self.reset_infos = infos
        self._reset_seeds()
        _restart_counts(self._local_monitor)
        return self._gather(local_obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._pending = one_action_per_game(actions, self.num_envs)

    def step_wait(self):
        self._not_rolling()
        pending = self._pending
        actions = action_ids(pending)  # a float or bool: illegal, as in one process
        with self._exchange():
            for h, (part, views) in enumerate(zip(self._slices[1:], self._views, strict=True)):
                views["actions"][:] = actions[part]
                self._post(h, _STEP)
            first = self._slices[0]
            self.local.step_async(actions[first])
            local_obs, local_rewards, local_dones, local_infos = self.local.step_wait()
            rewards = np.empty(self.num_envs, dtype=np.float32)
            dones = np.empty(self.num_envs, dtype=bool)
            rewards[first] = local_rewards
            dones[first] = local_dones
            infos: list[dict[str, Any]] = list(local_infos)
            for h, (part, views) in enumerate(zip(self._slices[1:], self._views, strict=True)):
                sparse = self._reply(h)
                rewards[part] = views["rewards"]
                dones[part] = views["dones"]
                share = [{} for _ in range(part.stop - part.start)]
                for i, info in sparse:
                    share[i] = info
                    self._record(info)
                infos += share
        for i, info in enumerate(infos):  # what was sent, as one process names it
            if "illegal_action" in info:
                info["illegal_action"] = sent_action(pending, i)
        return self._gather(local_obs), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner in every game, ``(N, A)`` bool."""
        return self._masks.copy()

    # ------------------------------------------------- rollouts the helpers play themselves
    @property
    def local_games(self) -> slice:
        """The games this process plays (the first share)."""
        return self._slices[0]

    @property
    def helper_slices(self) -> list[slice]:
        """The games of each helper process."""
        return self._slices[1:]

    @property
    def local_monitor(self) -> Any:
        """The local share in a ``VecMonitor`` (episode returns and lengths in the infos), for
        stepping it on its own while the helpers play rollouts."""
        if self._local_monitor is None:
            from stable_baselines3.common.vec_env import VecMonitor

            self._local_monitor = VecMonitor(self.local)
        return self._local_monitor

    def start_rollouts(
        self,
        policy: Any,
        steps: int,
        gamma: float,
        seed: int,
        into: dict[str, np.ndarray] | None = None,
    ) -> None:
        """Each helper plays the next ``steps`` steps of its games on its own, with a copy of
        ``policy`` (an SB3 actor-critic policy: its weights as they are now), while this
        process plays its own share; :meth:`finish_rollouts` waits for them and hands over what
        they recorded. The first call gives each helper its copy of the policy (built from
        the policy's constructor parameters, its draws seeded with ``seed`` plus the helper's
        number); later calls only copy the weights into shared memory. Nothing else can be
        asked of the env until :meth:`finish_rollouts`.

        :param gamma: the discount with which a game cut short by a time limit gets the
            value of its last observation added to its last reward.
        :param into: arrays of every game, ``(steps, num_envs, ...)`` first (any of ``obs``,
            ``masks``, ``actions``, ``values``, ``log_probs``, ``rewards``, ``dones``): each
            helper's rows of a step are copied into its games' columns as soon as that step
            is in (by :meth:`poll_rollouts` while this process plays, the rest by
            :meth:`finish_rollouts`).
        """
        self._not_rolling()
        if into is not None:
            unknown = set(into) - _ROWS
            if unknown:
                raise ValueError(f"into has arrays no rollout records: {sorted(unknown)}")
            rows = {"obs": (self.local.input_size,), "masks": (self.num_actions,)}
            for key, array in into.items():
                shape = (steps, self.num_envs, *rows.get(key, ()))
                if array.shape != shape:
                    raise ValueError(f"into[{key!r}] must have shape {shape}, got {array.shape}")
        state = {k: v.detach().cpu().numpy() for k, v in policy.state_dict().items()}
        if self._weights is None:
            weights = self._shared({k: (v.shape, v.dtype) for k, v in state.items()})
            name, layout, _ = weights
            data = policy._get_constructor_parameters()
            with self._exchange():  # (cut short, the helpers' answers would wait unread)
                self._send(
                    [
                        ("policy", type(policy), data, int(seed) + h, (name, layout))
                        for h in range(1, self.processes)
                    ]
                )
                self._replies()
            self._weights = weights  # every helper holds its copy of the policy
        for key, value in state.items():
            self._weights[2][key][...] = value
        if self._rollouts is None or self._rollouts[0] != steps:
            self._rollouts = (
                steps,
                [
                    self._shared(
                        _rollout_specs(
                            steps, part.stop - part.start, self.local.input_size, self.num_actions
                        )
                    )
                    for part in self._slices[1:]
                ],
            )
        mixture = self.local.opponents
        league = mixture.results() if mixture.pfsp_exponent is not None else None
        requests = [
            ("rollout", int(steps), float(gamma), (name, layout), league)
            for name, layout, _ in self._rollouts[1]
        ]
        self._into = into
        # per helper: its steps' infos as (step, game, info), and whether it has answered
        self._streams = [([], False) for _ in self._conns]
        self._poller = _Poller(self._conns)
        with self._exchange():  # (cut short, some helpers would play a rollout unread)
            self._send(requests)
            self._rolling = True

    def _take(self, h: int) -> None:
        """Read helper ``h``'s next message of the rollout under way: a step (its infos kept,
        its rows copied :meth:`start_rollouts`'s ``into``), or its answer (it is done)."""
        infos, _ = self._streams[h]
        status, value = self._message(h)
        if status != _STEP_DONE:
            self._streams[h] = (infos, True)
            return
        t, step_infos = value
        views = self._rollouts[1][h][2]
        _arrays_in(t, step_infos, views)
        infos += [(t, i, info) for i, info in step_infos]
        if self._into is not None:
            part = self._slices[h + 1]
            for key, array in self._into.items():
                array[t, part] = views[key][t]

    def poll_rollouts(self) -> None:
        """Take in, without waiting, the steps the helpers have played so far of the rollout
        under way (nothing when none is): their pipes do not fill up, and their rows are in
        ``into`` (:meth:`start_rollouts`) sooner."""
        self._alive()
        if not self._rolling:
            return
        with self._exchange():
            while True:
                ready = self._poller.ready()
                if not ready:
                    return
                for h in ready:
                    self._take(h)
                    if self._streams[h][1]:  # its answer is in: nothing more to come
                        self._poller.done(h)

    def finish_rollouts(
        self, local_obs: np.ndarray
    ) -> tuple[np.ndarray, list[dict[str, np.ndarray]], list[dict[str, Any]]]:
        """Wait for the helpers' rollouts (:meth:`start_rollouts`), with ``local_obs`` the
        local share's observations now: every game's observations now (the env's own, its
        masks too), each helper's rollout arrays (``obs``, ``masks``, ``actions``,
        ``rewards``, ``dones``, ``values``, ``log_probs``: ``(steps, games)`` first; and
        ``last_values``), and the helpers' non-empty infos as ``(step, game, info)`` (every
        finished match recorded in the league, as :meth:`step_wait` does), helper by helper,
        each in the order of its steps and games."""
        self._alive()
        if not self._rolling:
            raise RuntimeError("no rollout to finish (start_rollouts first)")
        infos = []
        with self._exchange():
            for h in range(len(self._conns)):
                while not self._streams[h][1]:
                    self._take(h)
            self._rolling = False  # every helper's rollout in
            # the league hears of the helpers' matches once their rollouts are in, as it did
            # when their infos came at the end (the local share's draws do not depend on the
            # timing)
            for (share, _), part in zip(self._streams, self._slices[1:], strict=True):
                for step, i, info in share:
                    self._record(info)
                    infos.append((step, part.start + i, info))
        self._streams, self._into, self._poller = [], None, None
        return self._gather(local_obs), [views for _, _, views in self._rollouts[1]], infos

    @property
    def opponents(self) -> Any:
        """The local share's opponent mixture, with every share's results recorded."""
        return self.local.opponents

    @property
    def skipped_games(self) -> int:
        return int(self.local.skipped_games) + sum(self._ask(("get", "skipped_games")))

    @property
    def opponent_seconds(self) -> float:
        """Seconds the opponents spent choosing actions, in every process (the helpers' as
        they were at :meth:`close` once closed)."""
        helpers = (
            self._helper_seconds if self._closed else sum(self._ask(("get", "opponent_seconds")))
        )
        return float(self.local.opponent_seconds) + helpers

    @opponent_seconds.setter
    def opponent_seconds(self, value: float) -> None:
        self._not_rolling()  # before this process's share changes
        self.local.opponent_seconds = value
        self._ask(("set", "opponent_seconds", 0.0))

    def add_snapshot(self, path: str, steps: int, rating: float = 0.0) -> None:
        """Self-play: add a learner snapshot to the pool of every share."""
        self._not_rolling()  # before this process's share changes
        self.local.add_snapshot(path, steps, rating)
        self._ask(("call", "add_snapshot", (path, steps, rating), {}))

    def close(self) -> None:
        if (self._closed and not self._procs) or self._closing:
            return  # closed, or a close under way (a helper found dead during it)
        self._closing = True
        try:
            self._close()
        finally:
            self._closing = False

    def _close(self) -> None:
        rolling, self._rolling = self._rolling, False
        self._streams, self._into, self._poller = [], None, None
        if not self._closed and not rolling and not self._unread:
            # the helpers' opponent seconds, from those that answer (a helper stopped or never
            # started is not waited for: it is ended below; after a failure, or mid-rollout,
            # replies may be waiting unread, and none is asked)
            answers = self._last_words(("get", "opponent_seconds"))
            self._helper_seconds = sum(a for a in answers if isinstance(a, (int, float)))
        self._closed = True
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.send_bytes(_QUIT)
        for proc in self._procs:
            if proc.pid is None:  # its start failed
                continue
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.close()
        self._views = []
        self._weights = self._rollouts = None
        for block in self._blocks:
            with contextlib.suppress(Exception):
                block.unlink()
            with contextlib.suppress(Exception):
                close_block(block)
        self._procs, self._conns, self._blocks = [], [], []
        local = getattr(self, "local", None)
        if local is not None:
            local.close()

    def _last_words(self, request: tuple[Any, ...], timeout: float = 10.0) -> list[Any]:
        """The answers to ``request`` of the helpers that are alive and answer within
        ``timeout`` seconds each; nothing raised, nothing closed (for :meth:`close`)."""
        asked = []
        message = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        for conn, proc in zip(self._conns, self._procs, strict=False):
            if proc.is_alive():
                with contextlib.suppress(Exception):
                    conn.send_bytes(message)
                    asked.append(conn)
        answers = []
        for conn in asked:
            with contextlib.suppress(Exception):
                if conn.poll(timeout):
                    status, value = pickle.loads(conn.recv_bytes())
                    if status == "ok":
                        answers.append(value)
        return answers

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    # Attributes and methods of all the games: the local share's, set and called in every share.
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        owner = self if attr_name in dir(self) else self.local
        return [getattr(owner, attr_name)] * self._count(indices)

    def set_league_results(self, results: dict[str, list[float]]) -> None:
        """The league's results (a resumed run's), in every share: with the step-by-step
        exchange each helper draws from its own results, which started empty."""
        self._call_all("set_league_results", (results,), {})

    def _set_all(self, attr_name: str, value: Any) -> None:
        self._not_rolling()  # before this process's share changes
        setattr(self.local, attr_name, value)
        self._ask(("set", attr_name, value))

    def _call_all(self, method_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self._not_rolling()  # before this process's share changes
        result = getattr(self.local, method_name)(*args, **kwargs)
        self._ask(("call", method_name, args, kwargs))
        return result

    def __repr__(self) -> str:
        return f"SplitSeatEnv(num_envs={self.num_envs}, processes={self.processes})"
