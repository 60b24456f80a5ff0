"""``vec_env: subproc``: an error in a game's own process raised in the learner's process.

stable-baselines3's ``SubprocVecEnv`` plays each game in a process of its own; an exception
there (an opponent's agent that raised, a refused option) ends that process, prints its
traceback among the progress lines, and leaves the learner's process with a bare
``EOFError``. Here every game runs inside :class:`CarryFailure`, which catches what its game
raises while it is built (which plays the opponents' first turns), reset or stepped, and
hands it back with the step's or the reset's infos, so that the process stays alive; the
learner's side, :class:`RaiseFailures`, raises the same exception (its type, message and
notes, which name the agent; see :func:`~rummyzoo.envs.workers.portable_exception` for one
that cannot cross as it is) with the game's index and the child's traceback as its cause, as
:mod:`concurrent.futures` shows a worker's. The processes are then closed as usual. (A
failure of a method called by name, ``env_method``, still ends the process: the pool's
``add_snapshot`` only records a file, which the next reset loads.)
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import SubprocVecEnv, VecEnv, VecEnvWrapper

from rummyzoo.envs.workers import ProcessDied, portable_exception

__all__ = ["CarryFailure", "ChildTraceback", "RaiseFailures", "subproc_vec_env"]

#: The info key that carries a game's failure: (exception, traceback text).
FAILURE = "rummyzoo_failure"


class ChildTraceback(Exception):
    """The traceback of an exception raised in a game's own process (as its ``__cause__``)."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


def _portable(exc: BaseException) -> tuple[BaseException, str]:
    """``exc`` as it can cross to the learner's process (:func:`portable_exception`), with its
    traceback's text."""
    text = "".join(traceback.format_exception(exc))
    return portable_exception(exc), text


class _Unbuilt(gym.Env):
    """The stand-in for a game that failed to build (its spaces are never used)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(1)


class CarryFailure(gym.Wrapper):
    """A game of a ``SubprocVecEnv`` whose exceptions come back in its infos (see the module).

    ``failure`` is ``(exception, traceback text)`` once the game failed; it then plays no more:
    every later step or reset hands the failure back again. Attributes other than its own are
    set on the game (``set_attr`` sets them on the outermost wrapper), as without it.
    """

    _OWN = frozenset({"env", "failure", "_last"})

    def __init__(self, env: gym.Env, failure: tuple[BaseException, str] | None = None) -> None:
        super().__init__(env)
        self.failure = failure
        self._last: Any = None

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._OWN or name.startswith("_"):
            super().__setattr__(name, value)
        else:
            setattr(self.env, name, value)

    def _blank(self) -> Any:
        if self._last is None:  # never observed (a Box: the seat env's only space)
            space = self.observation_space
            self._last = np.zeros(space.shape, dtype=space.dtype)
        return self._last

    def _fail(self, exc: BaseException) -> None:
        self.failure = _portable(exc)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        if self.failure is None:
            try:
                obs, info = self.env.reset(**kwargs)
            except KeyboardInterrupt:  # Ctrl-C: the process stops as it would without this
                raise
            except BaseException as exc:  # an agent's sys.exit() too
                self._fail(exc)
            else:
                self._last = obs
                return obs, info
        return self._blank(), {FAILURE: self.failure}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.failure is None:
            try:
                obs, reward, terminated, truncated, info = self.env.step(action)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                self._fail(exc)
            else:
                self._last = obs
                return obs, reward, terminated, truncated, info
        # "done": the child resets the game at once, and that reset hands the failure back too
        return self._blank(), 0.0, True, False, {FAILURE: self.failure}


class _Build:
    """A picklable env factory for a child process: the game in :class:`CarryFailure`."""

    def __init__(self, factory: Callable[[], gym.Env]) -> None:
        self.factory = factory

    def __call__(self) -> CarryFailure:
        try:
            env = self.factory()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return CarryFailure(_Unbuilt(), _portable(exc))
        return CarryFailure(env)


class RaiseFailures(VecEnvWrapper):
    """The learner's side of :class:`CarryFailure`: a game's failure raised here."""

    def __init__(self, venv: VecEnv) -> None:
        # a game that failed to build gave the stand-in's spaces: raise before anyone reads them
        self._raise_first(venv.get_attr("failure"))
        super().__init__(venv)

    @staticmethod
    def _raise_first(failures: Sequence[Any]) -> None:
        for game, failure in enumerate(failures):
            if failure:
                exc, text = failure
                exc.add_note(
                    f"in training game {game}, which vec_env: subproc plays in its own process"
                )
                raise exc from ChildTraceback(text)

    def close(self) -> None:
        """Close the games' processes; one that has already ended (Ctrl-C reaches every process
        of the terminal's group) is joined, so that the error or interrupt that led here is
        what the caller sees, not a broken pipe. A step cut short (a signal to this process
        alone while it read the games' replies) ends them here: SubprocVecEnv's close would
        wait for the replies it had read already, for ever."""
        if getattr(self.venv, "waiting", False) and not getattr(self.venv, "closed", False):
            self._end_processes()
            return
        try:
            self.venv.close()
        except (EOFError, OSError):
            self._end_processes()

    def _end_processes(self) -> None:
        """End the games' processes here, where SubprocVecEnv's close would wait for replies
        that were read already, or that a dead process never sends."""
        venv = self.venv
        for process in venv.processes:
            process.terminate()
        for process in venv.processes:
            process.join(timeout=5)
        for remote in venv.remotes:
            remote.close()
        venv.waiting = False
        venv.closed = True

    def _check(self, infos: Sequence[dict[str, Any]]) -> None:
        self._raise_first([info.get(FAILURE) for info in infos])

    def _talk(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``call`` to the games' processes; a broken pipe (a process that ended under the
        run) names the game and how it ended, where a bare BrokenPipeError passed for the
        reader of stdout gone and ended the command without a word."""
        if getattr(self.venv, "closed", False):  # its processes ended as asked: none died
            raise RuntimeError("this training env (vec_env: subproc) is closed")
        try:
            return call(*args, **kwargs)
        except (EOFError, OSError) as exc:
            venv = self.venv
            deadline = time.monotonic() + 1.0  # a second in all for the dead to be reaped
            while time.monotonic() < deadline and all(p.is_alive() for p in venv.processes):
                time.sleep(0.01)
            dead = [
                (game, process.exitcode)
                for game, process in enumerate(venv.processes)
                if not process.is_alive()
            ]
            if not dead:
                raise
            self._end_processes()
            game, code = dead[0]
            raise ProcessDied(
                f"the process of training game {game} died (exit code {code}); vec_env: "
                "subproc plays each game in its own process"
            ) from exc

    def reset(self) -> Any:
        obs = self._talk(self.venv.reset)
        self._check(self.venv.reset_infos)
        return obs

    def step_async(self, actions: Any) -> None:
        self._talk(self.venv.step_async, actions)

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self._talk(self.venv.step_wait)
        self._check(infos)
        self._check(self.venv.reset_infos)
        return obs, rewards, dones, infos

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> Any:
        return self._talk(self.venv.env_method, method_name, *args, indices=indices, **kwargs)

    def get_attr(self, attr_name: str, indices: Any = None) -> Any:
        return self._talk(self.venv.get_attr, attr_name, indices)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        self._talk(self.venv.set_attr, attr_name, value, indices)


def subproc_vec_env(factories: Sequence[Callable[[], gym.Env]]) -> RaiseFailures:
    """One process per game (spawned), each game's failure raised in this process."""
    venv = SubprocVecEnv([_Build(f) for f in factories], start_method="spawn")
    try:
        return RaiseFailures(venv)
    except BaseException:
        venv.close()
        raise
