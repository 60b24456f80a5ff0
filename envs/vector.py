"""The vector engine: ``N`` matches of one variant stepped together, into preallocated arrays.

:class:`VectorEnv` plays ``num_envs`` independent matches (each a
:class:`~rummyzoo.envs.match.Match`, the same rules code as the AEC env; where the game has a
compiled step of many games, :attr:`~rummyzoo.envs.core.Game.play_batch`, as every variant has
where the kernels are built, it plays every move that needs no Python in one call and the rest
go through the matches; the common case of a hand's end, its totals, rewards and rows, is
finished by compiled code as well, :func:`compiled_finish`). One call of
:meth:`~VectorEnv.step` takes one action per game (for the seat to act there) and writes what
follows into arrays that it owns and reuses (read-only views: copy a row to change it, so that no
edit, of a mask say, can let an illegal action through):

=================  ==========  =========================================================
array              shape       content after ``reset`` / ``step``
=================  ==========  =========================================================
``observations``   (N, L)      float32 observation of the seat to act
``action_masks``   (N, A)      int8 legal actions of the seat to act
``current``        (N,)        the seat to act (int64)
``rewards``        (N, P)      float64, each seat's reward since that seat's last decision
                               (the AEC env's cumulative reward of the seat)
``hand_done``      (N,)        a hand ended in this step
``terminated``     (N,)        the match was decided in this step
``truncated``      (N,)        a cap (``max_turns``, ``max_hands``) ended the match
``hand_points``    (N, P)      raw points of the hand that ended in this step (NaN for a
                               hand cut by the turn cap; stale where not ``hand_done``)
``winners``        (N, P)      the seats that won the match decided in this step (stale
                               where not ``terminated``)
=================  ==========  =========================================================

A game whose match ended (``terminated | truncated``) starts the next match by itself, as the
AEC env does on ``reset()`` without a seed: its rows then show the new match's first decision,
while ``rewards`` still holds the finished match's last rewards (they are cleared at the next
``step``); :meth:`~VectorEnv.final_observation` gives the finished match's last observations.
Reading ``rewards[i, current[i]]`` at each decision, except right after a step that ended
game ``i``'s match, where every seat's entry is read instead (and not again at the new match's
first decision), counts each reward once.

Game ``i`` is its own match with its own random streams: ``reset(seed=s)`` seeds it with
``s + i`` (or ``seeds[i]``), which makes it the same game as the AEC env after
``env.reset(seed=s + i)``, and later matches continue its streams as the AEC env's unseeded
resets do. Options, validation and errors are those of the AEC env; an illegal action raises
:class:`~rummyzoo.envs.core.IllegalActionError` naming the game, and changes no game.

Infos are built only on demand (``infos=True``): :attr:`~VectorEnv.infos` then holds, per game,
the AEC env's ``infos`` (a dict per seat), updated as the AEC env updates them (at the end of a
match, the finished match's last infos until the next ``step``).

The arrays can be supplied (``buffers=``: C-contiguous arrays of the shapes and dtypes above),
e.g. views of shared memory, so that worker processes write straight into them
(:mod:`rummyzoo.envs.workers`).

How many games: a step visits every game's state, so the rate per decision is highest while
the games' states stay in the processor's cache between steps; past that, more games per step
cost more per decision (on a core with 2 MiB of second-level cache, 64 games of 500 Rum played
1.5 times as fast per decision as 256). ``rummyzoo bench-env VARIANT --num-envs N`` measures a
size; worker processes (:mod:`rummyzoo.envs.workers`) add cores and caches.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from rummyzoo.envs.core import (
    ConfigError,
    Game,
    IllegalActionError,
    ViewsSurviveCopies,
    is_action_int,
    read_only,
    unwrap_action,
)
from rummyzoo.envs.match import HandEnd, Match, make_game
from rummyzoo.envs.native import resolve_kernels
from rummyzoo.envs.seeding import check_seed

__all__ = [
    "BUFFER_SPECS",
    "VectorEnv",
    "buffer_specs",
    "game_seeds",
    "next_infos",
    "uniform_legal_actions",
    "vector_factory",
    "with_vector_docs",
]

#: name -> (shape per game given (players, obs size, actions), dtype) of the output arrays.
BUFFER_SPECS: dict[str, tuple[str, str]] = {
    "observations": ("L", "float32"),
    "action_masks": ("A", "int8"),
    "current": ("", "int64"),
    "rewards": ("P", "float64"),
    "hand_done": ("", "bool"),
    "terminated": ("", "bool"),
    "truncated": ("", "bool"),
    "hand_points": ("P", "float64"),
    "winners": ("P", "bool"),
}


def buffer_specs(num_envs: int, game: Game) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Shape and dtype of each output array for ``num_envs`` games of ``game``."""
    sizes = {"L": game.obs_size, "A": game.num_actions, "P": game.num_players}
    return {
        name: ((num_envs, sizes[dim]) if dim else (num_envs,), np.dtype(dtype))
        for name, (dim, dtype) in BUFFER_SPECS.items()
    }


def next_infos(previous: list[dict[str, Any]], end: HandEnd) -> list[dict[str, Any]]:
    """Per-seat infos after a hand end, as the AEC env keeps them: the hand's own (a hand cut
    by the turn cap has no points: its infos say why, with the match totals)."""
    return list(end.infos)


#: Less than any game of any variant takes in the engine (the least measured: 13 KiB a game,
#: Knock Rummy at 2 players), so that :func:`check_engine_args` refuses only a number of games
#: that surely cannot fit.
GAME_BYTES_AT_LEAST = 8 * 1024


def _memory_bytes() -> int | None:
    """This machine's physical memory (None where the platform does not say)."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_engine_args(num_envs: Any, infos: Any) -> None:
    """:raises ConfigError: ``num_envs`` that is not an int from 1 or so many games that they
    would not fit in this machine's memory, ``infos`` not a bool."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
        raise ConfigError(f"num_envs must be an int, got {num_envs!r}")
    num_envs = int(num_envs)  # numpy's small ints would overflow the product below
    if num_envs < 1:
        raise ConfigError(f"num_envs must be at least 1, got {num_envs}")
    memory = _memory_bytes()
    if memory is not None and num_envs * GAME_BYTES_AT_LEAST > memory:
        raise ConfigError(
            f"num_envs {num_envs:,} (a run config's n_envs): that many games cannot fit in this "
            f"machine's memory ({memory / 2**30:.0f} GiB, and a game takes more than "
            f"{GAME_BYTES_AT_LEAST // 1024} KiB)"
        )
    if not isinstance(infos, (bool, np.bool_)):
        raise ConfigError(f"infos must be True or False, got {infos!r}")


def game_seeds(seed: int | Sequence[int] | None, num_envs: int) -> list[int | None]:
    """The seed of each game for ``reset(seed)``: all None, ``seed + i`` for game ``i``, or
    the given list (checked).

    :raises ValueError: a bad seed, or a list of the wrong length.
    """
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        base = check_seed(seed)
        return [base + i for i in range(num_envs)]
    ordered = isinstance(seed, Sequence) or (isinstance(seed, np.ndarray) and seed.ndim == 1)
    if isinstance(seed, (str, bytes)) or not ordered:
        kind = "a set, whose order is not the games'" if isinstance(seed, AbstractSet) else ""
        raise ValueError(
            f"seed must be a non-negative int, a list with one per game or None, got {seed!r} "
            f"({kind or type(seed).__name__})"
        )
    seeds: list[int | None] = []
    for i, s in enumerate(seed):
        try:
            seeds.append(None if s is None else check_seed(s))
        except ValueError:
            raise ValueError(
                f"seed of game {i} must be a non-negative int or None, got {s!r}"
            ) from None
    if len(seeds) != num_envs:
        raise ValueError(f"need one seed per game ({num_envs}), got {len(seeds)}")
    return seeds


def uniform_legal_actions(
    masks: np.ndarray,
    rng: np.random.Generator,
    out: np.ndarray | None = None,
    kernels: Any = None,
) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (-1 for a row with none).

    One uniform draw per row, in row order, picks the ``int(u * count)``-th legal action: the
    pick of :class:`~rummyzoo.agents.random_agent.RandomPolicy`, made for all rows at once (by
    the compiled kernels where built; ``kernels`` as in
    :func:`~rummyzoo.envs.native.resolve_kernels`).
    """
    masks = np.asarray(masks)
    if masks.ndim != 2:
        raise ValueError(f"masks must be a 2-d array (one row per game), got shape {masks.shape}")
    if out is None:
        out = np.empty(len(masks), dtype=np.int64)
    elif out.shape != (len(masks),):
        raise ValueError(
            f"out must have one entry per row of masks ({len(masks)}), got {out.shape}"
        )
    if not masks.shape[1]:
        out[:] = -1
        return out
    native = resolve_kernels(kernels)
    if (
        native is not None
        and masks.dtype == np.int8
        and masks.flags.c_contiguous
        and masks.flags.aligned
        and out.dtype == np.int64
        and out.flags.c_contiguous
        and out.flags.writeable
        and out.flags.aligned
    ):
        with rng.bit_generator.lock:  # as numpy's own draws take it (another thread's fill)
            native.uniform_nonzero_rows(masks, rng.bit_generator.capsule, out)
        return out
    counts = np.cumsum(masks != 0, axis=1, dtype=np.int32)
    total = counts[:, -1]
    k = (rng.random(len(masks)) * total).astype(np.int32)
    np.sum(counts <= k[:, None], axis=1, out=out)  # the first column whose count exceeds k
    out[total == 0] = -1
    return out


#: Below this many rows, _put_rows writes row by row (numpy's indexing by a list costs more).
_FEW_ROWS = 10


def _put_rows(array: np.ndarray, rows: list[int], values: Any, add: bool = False) -> None:
    """``array[rows] = values`` (``+=`` where ``add``): ``values`` one per row, or one for all;
    ``rows`` distinct."""
    if not rows:
        return
    if len(rows) >= _FEW_ROWS:
        if add:
            array[rows] += values
        else:
            array[rows] = values
        return
    each = isinstance(values, list)
    for k, i in enumerate(rows):
        value = values[k] if each else values
        if add:
            array[i] += value
        else:
            array[i] = value


def compiled_check(game: Game) -> Any:
    """The compiled check of one action per game (``first_illegal(masks, games, actions)``)
    where ``game`` runs the compiled kernels, else None (``VectorEnv.check`` then takes the
    numpy route)."""
    return getattr(getattr(game, "kernels", None), "first_illegal", None)


#: The reward modes whose hands' ends the compiled code finishes (its codes for them).
_COMPILED_REWARDS = {"points": 0, "scaled": 1, "margin": 2, "win_loss": 3}


def compiled_finish(game: Game, infos: bool) -> tuple[Any, tuple | None]:
    """The compiled finish of many hands' ends (``finish_hands``) and its settings, where
    ``game`` runs the compiled kernels, no infos are kept and the reward mode is one it knows;
    else (None, None) and every hand's end goes through :meth:`Match.played`."""
    finish = getattr(getattr(game, "kernels", None), "finish_hands", None)
    options = game.match
    if finish is None or infos or options.reward not in _COMPILED_REWARDS:
        return None, None
    settings = (
        tuple(int(g) for g in game.score_groups),
        options.target_score,
        _COMPILED_REWARDS[options.reward],
        float(options.reward_scale),
        -1 if options.max_hands is None else int(options.max_hands),
        game.hand_winners,
    )
    return finish, settings


class VectorEnv(ViewsSurviveCopies):
    """``num_envs`` matches of one game stepped together (see the module docstring).

    :param game: the variant's game (e.g. from :func:`rummyzoo.envs.registry.make_game`);
        every match plays it.
    :param num_envs: games stepped together.
    :param infos: keep the AEC env's per-seat infos of every game in :attr:`infos`.
    :param buffers: output arrays to write into instead of new ones (name -> array of the
        shape and dtype that :func:`buffer_specs` gives).
    """

    def __init__(
        self,
        game: Game,
        num_envs: int,
        infos: bool = False,
        buffers: dict[str, np.ndarray] | None = None,
    ) -> None:
        check_engine_args(num_envs, infos)
        self.game = game
        self.num_envs = n = int(num_envs)
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.obs_size = game.obs_size
        self.matches = [Match(game, infos=bool(infos)) for _ in range(n)]
        specs = buffer_specs(n, game)
        if buffers is not None:
            if not isinstance(buffers, dict):
                raise TypeError(
                    f"buffers must be a dict of arrays by name, got {type(buffers).__name__}"
                )
            unknown = sorted(map(repr, set(buffers) - set(specs)))
            if unknown:
                raise ValueError(
                    f"buffers has no such array: {', '.join(unknown)} (the engine's arrays: "
                    f"{', '.join(specs)})"
                )
            for name, given in buffers.items():
                if given is not None and not isinstance(given, np.ndarray):
                    raise TypeError(
                        f"buffer {name!r} must be a numpy array, got {type(given).__name__}"
                    )
        arrays: dict[str, np.ndarray] = {}
        for name, (shape, dtype) in specs.items():
            given = None if buffers is None else buffers.get(name)
            if given is None:
                arrays[name] = np.zeros(shape, dtype=dtype)
            elif (
                given.shape != shape
                or given.dtype != dtype
                or not given.flags.c_contiguous
                or not given.flags.writeable
                or not given.flags.aligned
            ):
                raise ValueError(
                    f"buffer {name!r} must be a writeable, aligned, C-contiguous {dtype} array "
                    f"of shape {shape}, got {given.dtype} of shape {given.shape}"
                    + ("" if given.flags.c_contiguous else " (not C-contiguous)")
                    + ("" if given.flags.writeable else " (read-only)")
                    + ("" if given.flags.aligned else " (not aligned)")
                )
            else:
                arrays[name] = given
        # The engine writes the arrays; its users get read-only views of them, so a mask edited
        # in place can never let an illegal action through (nor any other edit corrupt a game).
        self.buffers = {name: read_only(array) for name, array in arrays.items()}
        for name, view in self.buffers.items():
            setattr(self, name, view)  # observations, action_masks, current, rewards, ...
        self._obs, self._masks, self._current = (
            arrays["observations"],
            arrays["action_masks"],
            arrays["current"],
        )
        self._rewards, self._hand_points, self._winners = (
            arrays["rewards"],
            arrays["hand_points"],
            arrays["winners"],
        )
        self._hand_done, self._terminated, self._truncated = (
            arrays["hand_done"],
            arrays["terminated"],
            arrays["truncated"],
        )
        self.keep_infos = bool(infos)
        self.infos: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        #: per game, the number of matches it has finished since the last reset
        self._matches_done = np.zeros(n, dtype=np.int64)
        self.matches_done = read_only(self._matches_done)
        self._final: list[tuple[Any, np.ndarray] | None] = [None] * n
        self._clear = np.zeros(n, dtype=bool)  # rewards to clear at the next step
        self._all = np.arange(n)
        # the acting seats' rewards as flat positions: row starts, and a buffer for the sum
        self._rewards_flat = self._rewards.reshape(-1)
        self._row_starts = self._all * self.num_players
        self._acting = np.empty(n, dtype=np.int64)
        self._first_illegal = compiled_check(game)
        self._finish, self._finish_settings = compiled_finish(game, self.keep_infos)
        self._has_reset = False
        self._interrupted: str | None = None  # why the games stopped matching the arrays
        self._closed = False

    # -------------------------------------------------------------- lifetime
    def close(self) -> None:
        """End the engine (as :class:`~rummyzoo.envs.workers.WorkerVectorEnv` ends its workers):
        ``reset`` and ``step`` refuse afterwards; the arrays stay readable."""
        self._closed = True

    def __enter__(self) -> VectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | Sequence[int] | None = None) -> None:
        """Start a new match in every game.

        :param seed: None (continue each game's streams; fresh entropy at first), an int ``s``
            (game ``i`` gets ``s + i``) or a list of one seed per game (an int, or None to
            continue that game's streams).
        :raises ValueError: a bad seed (nothing is changed then).
        """
        if self._closed:
            raise RuntimeError("this VectorEnv is closed")
        seeds = game_seeds(seed, self.num_envs)
        try:
            self._reset(seeds)
        except BaseException as exc:
            self._broken(exc, "reset")
            raise

    def _reset(self, seeds: list[int | None]) -> None:
        for i, match in enumerate(self.matches):
            match.reset(seeds[i])
            self._final[i] = None
            if self.keep_infos:
                self.infos[i] = [{} for _ in range(self.num_players)]
        self._rewards[:] = 0.0
        self._hand_done[:] = False
        self._terminated[:] = False
        self._truncated[:] = False
        self._matches_done[:] = 0
        self._clear[:] = False
        self._write_rows(self._all)
        self._has_reset = True
        self._interrupted = None

    # ------------------------------------------------------------------- step
    def check(self, actions: Any, games: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """(game indices, action ids) if every action is legal in its game; changes nothing.

        :param actions: one action per game (``len(games)`` of them when ``games`` is given).
        :param games: indices of the games to step (None: all, in order).
        :raises IllegalActionError: naming the first game whose action is not legal there.
        """
        if self._closed:
            raise RuntimeError(f"this {type(self).__name__} is closed")
        if not self._has_reset:
            raise RuntimeError(self._not_ready("step()"))
        first_illegal = self._first_illegal
        if (
            games is None
            and first_illegal is not None
            and type(actions) is np.ndarray
            and actions.dtype == np.int64
            and actions.shape == self._all.shape
            and actions.flags.c_contiguous
            and actions.flags.aligned
        ):
            # the common case (an int64 action per game) checked in one compiled pass
            bad = first_illegal(self._masks, self._all, actions)
            if bad >= 0:
                self._refuse(bad, actions[bad].item())
            return self._all, actions
        idx = self._all if games is None else np.asarray(games)
        if games is not None:
            if idx.ndim != 1 or (not np.issubdtype(idx.dtype, np.integer) and idx.size):
                raise ValueError(f"games must be a 1-d array of game indices, got {games!r}")
            idx = idx.astype(np.int64, copy=False)
            if idx.size and (idx.min() < 0 or idx.max() >= self.num_envs):
                raise ValueError(f"game indices must be in 0..{self.num_envs - 1}")
            if np.unique(idx).size != idx.size:
                raise ValueError("each game can be stepped once per call")
        given = isinstance(actions, (list, tuple))
        try:
            acts = np.asarray(actions)
        except (ValueError, TypeError):  # ragged: a sequence among the actions
            acts = None
        if acts is None or acts.shape != idx.shape:
            if given and len(actions) == idx.size:  # a sequence, or a ragged one, among them
                self._refuse_first(idx, list(actions))
            if acts is None:
                raise IllegalActionError(
                    f"need one action (an int) per game stepped ({idx.size}), got {actions!r}"
                )
            raise IllegalActionError(
                f"need one action per game stepped ({idx.size}), got an array of shape {acts.shape}"
            )
        if idx.size == 0:
            return idx, acts.astype(np.int64)
        plain = given and acts.dtype.kind in "iu" and all(type(a) is int for a in actions)
        if (given and not plain) or acts.dtype.kind not in "iu":
            # one by one, in order (a list of Python ints only is checked as an array): the
            # caller's own values where it gave a list (numpy reads [1, True] as ints, [1, 1.5]
            # as floats, [np.uint64(0), 0] as floats); the array's
            # items otherwise (a float, a bool, an object, a timedelta64, which numpy counts
            # among its integers, are no action ids)
            values = list(actions) if given else list(acts.reshape(-1))
            self._refuse_first(idx, values)
            acts = np.asarray([int(unwrap_action(a)) for a in values], dtype=np.int64)
            return idx, acts.reshape(idx.shape)
        # compared in the given type, so an unsigned id past int64's range is named as given
        in_range = (acts >= 0) & (acts < self.num_actions)
        acts_in = acts[in_range].astype(np.int64, copy=False)
        ok = in_range.copy()
        ok[in_range] = self._masks[idx[in_range], acts_in] != 0
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            self._refuse(int(idx[k]), acts[k].item())
        # the compiled step reads native, aligned, contiguous int64 (a copy where they are not)
        return idx, np.require(acts, np.int64, "CA")

    def _refuse_first(self, idx: np.ndarray, values: list[Any]) -> None:
        """Refuse the first of ``values`` (one per game of ``idx``, in order) that is not an
        action id legal in its game, if any: the check of actions given one by one."""
        n = self.num_actions
        masks = self._masks
        for k, a in enumerate(values):
            a = unwrap_action(a)
            ok = is_action_int(a) and 0 <= a < n and masks[idx[k], int(a)] != 0
            if not ok:
                self._refuse(int(idx[k]), values[k])

    def _refuse(self, game: int, action: Any) -> None:
        """Raise the refusal of ``action`` in ``game``, naming the game (its ``game``
        attribute too, for a caller that names who chose it)."""
        try:
            self.matches[game].check(action)
        except IllegalActionError as exc:
            error = IllegalActionError(f"game {game}: {exc}")
        else:
            error = IllegalActionError(f"game {game}: action {action!r} is not legal")
        error.game = game
        raise error from None

    def step(self, actions: Any, games: Any = None) -> None:
        """Play one action in each game (or in each of ``games``) and refresh the arrays.

        Every action is checked before any is played: an illegal one raises
        :class:`~rummyzoo.envs.core.IllegalActionError` naming its game and changes nothing.
        Flags (``hand_done``, ``terminated``, ``truncated``) describe this call only.
        """
        idx, acts = self.check(actions, games)
        try:
            self._step(idx, acts)
        except BaseException as exc:
            # a step cut short (an interrupt, an error in a game's code) has played some games
            # and not others, and not written their rows: the arrays no longer describe the
            # games, so the engine refuses to go on until a reset deals every game again
            self._broken(exc, "step")
            raise

    def _broken(self, exc: BaseException, where: str) -> None:
        self._has_reset = False
        self._interrupted = f"a {where}() was cut short by {type(exc).__name__}"

    def _not_ready(self, what: str) -> str:
        if self._interrupted is None:
            return f"call reset() before {what}"
        return (
            f"{self._interrupted}, which left the games out of step with the arrays: "
            f"call reset() before {what}"
        )

    def _step(self, idx: np.ndarray, acts: np.ndarray) -> None:
        rewards = self._rewards
        clear = self._clear
        if clear.any():
            # games that started a new match in the last call: its rewards and infos go
            rewards[clear] = 0.0
            if self.keep_infos:
                for i in np.flatnonzero(clear).tolist():
                    self.infos[i] = [{} for _ in range(self.num_players)]
            clear[:] = False
        self._hand_done.fill(False)
        self._terminated.fill(False)
        self._truncated.fill(False)
        if idx.size == 0:
            return
        # the seat that acts has its cumulative reward cleared (the AEC env does so too)
        if idx is self._all:
            acting = np.add(self._row_starts, self._current, out=self._acting)
            self._rewards_flat[acting] = 0.0
        else:
            rewards[idx, self._current[idx]] = 0.0
        matches = self.matches
        ends: list[tuple[int, HandEnd]] = []  # (game, what ended there), in the order played
        play_batch = self.game.play_batch
        if play_batch is not None:
            # the compiled step plays what needs no Python, rows included; a hand it ended is
            # finished here, and the moves it left are played by the matches
            # (check() hands over aligned int64 actions: a contiguous copy keeps them so)
            idx, acts = np.ascontiguousarray(idx), np.ascontiguousarray(acts)
            unplayed, finished = play_batch(
                matches, idx, acts, self._obs, self._masks, self._current
            )
            if not unplayed.size and not finished.size:
                return
            ended = idx[finished]
            done = ended.tolist()
            for i in done if self._finish is None else self._finish_compiled(ended):
                end = matches[i].played()
                if end is not None:
                    ends.append((i, end))
            played, moves = (
                (idx[unplayed].tolist(), acts[unplayed].tolist()) if unplayed.size else ([], [])
            )
        else:
            done, played, moves = [], idx.tolist(), acts.tolist()
        for i, a in zip(played, moves, strict=True):
            end = matches[i].play(a)
            if end is not None:
                ends.append((i, end))
        if ends:
            self._hands_ended(ends, self.keep_infos)
        # the rows of the games the matches played or finished (the compiled step wrote the rest)
        rows = idx if play_batch is None else np.asarray(done + played, dtype=np.int64)
        self._write_rows(rows)

    def _finish_compiled(self, ended: np.ndarray) -> list[int]:
        """The common case of the hands ended in ``ended`` finished by the compiled code (the
        totals, rewards and rows of :meth:`Match.played` and :meth:`_hands_ended`), then the
        next hand dealt or the decided match restarted; the games it left, for the Python
        code."""
        left, deal, restart = self._finish(
            self.matches,
            ended,
            self._rewards,
            self._hand_points,
            self._winners,
            self._hand_done,
            self._terminated,
            self._matches_done,
            self._clear,
            self._finish_settings,
        )
        matches = self.matches
        for i in deal.tolist():
            matches[i].deal_next()
        for i in restart.tolist():
            self._restart(i)
        return left.tolist()

    def _restart(self, i: int) -> None:
        """Keep game ``i``'s finished match for :meth:`final_observation` and start its next."""
        match = self.matches[i]
        kept = (match.state, match.seat_totals)
        match.reset()
        # the match before's last state freed after the new deal, not before: Python's
        # collector counts allocations less frees, floored at zero, so frees first and
        # allocations after would start a collection every few steps
        self._final[i] = kept

    def _hands_ended(self, ends: list[tuple[int, HandEnd]], keep: bool) -> None:
        """Each game's row of the flags, points, winners and rewards of the hand that ended
        there; a decided or cut match is kept for :meth:`final_observation` and reset."""
        nan = [np.nan] * self.num_players
        done, points, won, won_rows, paid, paid_rows, decided, cut = [], [], [], [], [], [], [], []
        for i, end in ends:
            done.append(i)
            points.append(nan if end.points is None else end.points)
            if end.winners is not None:
                won_rows.append(i)
                won.append(end.winners)
            if end.rewards is not None:
                paid_rows.append(i)
                paid.append(end.rewards)
            if keep:
                self.infos[i] = next_infos(self.infos[i], end)
            if end.match_over:
                (cut if end.truncated_by is not None else decided).append(i)
                self._restart(i)
        over = decided + cut
        _put_rows(self._hand_done, done, True)
        _put_rows(self._hand_points, done, points)
        _put_rows(self._winners, won_rows, won)
        _put_rows(self._rewards, paid_rows, paid, add=True)
        _put_rows(self._terminated, decided, True)
        _put_rows(self._truncated, cut, True)
        _put_rows(self._matches_done, over, 1, add=True)
        _put_rows(self._clear, over, True)

    def _write_rows(self, idx: np.ndarray) -> None:
        """Observation, mask and seat to act of the games ``idx``."""
        obs, masks, current = self._obs, self._masks, self._current
        matches = self.matches
        rows_batch = self.game.rows_batch
        if rows_batch is not None:
            rows_batch(matches, np.ascontiguousarray(idx, dtype=np.int64), obs, masks, current)
            return
        observe = self.game.observe
        for i in idx.tolist():
            match = matches[i]
            state = match.state
            seat = state.current
            current[i] = seat
            obs[i] = observe(state, seat, match.seat_totals)
            masks[i] = match.legal_mask()

    # --------------------------------------------------------------- queries
    def final_observation(self, game: int, seat: int) -> np.ndarray:
        """The last observation of ``seat`` in the match that game ``game`` finished last.

        :raises ValueError: when that game has not finished a match since the last reset.
        """
        self._check_game_seat(game, seat)
        final = self._final[game]
        if final is None:
            raise ValueError(f"game {game} has not finished a match since the last reset")
        state, totals = final
        return self.game.observe(state, seat, totals)

    def observe(self, game: int, seat: int) -> np.ndarray:
        """The observation of any ``seat`` of game ``game`` now (a new array)."""
        self._check_game_seat(game, seat)
        match = self.matches[game]
        return self.game.observe(match.state, seat, match.seat_totals)

    def render(self, game: int, view: int | str | None = "render_view") -> str:
        """The text picture of game ``game``: the hand of seat ``view`` shown (``None``: all
        hands open); left out, the ``render_view`` option says which, as in the AEC env.
        (``render_mode`` does not apply here: this returns the text.)"""
        if view == "render_view":
            view = self.game.match.render_view
        self._check_game_seat(game, view, "view", optional=True)
        match = self.matches[game]
        return self.game.render(match.state, view, match.totals_by_seat())

    def _check_game_seat(
        self, game: Any, seat: Any, name: str = "seat", optional: bool = False
    ) -> None:
        """:raises ValueError: a game index or seat out of range (or not an int).
        :raises RuntimeError: before the first :meth:`reset` (no game is dealt yet).
        """
        if not self._has_reset:
            raise RuntimeError(self._not_ready("observing or rendering a game"))

        def index(value: Any) -> bool:
            return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))

        if not index(game) or not 0 <= game < self.num_envs:
            raise ValueError(f"game must be an int in 0..{self.num_envs - 1}, got {game!r}")
        if seat is None and optional:
            return
        if not index(seat) or not 0 <= seat < self.num_players:
            raise ValueError(f"{name} must be a seat in 0..{self.num_players - 1}, got {seat!r}")

    def __repr__(self) -> str:
        return (
            f"VectorEnv({self.game.name}, num_envs={self.num_envs}, num_players={self.num_players})"
        )


_VECTOR_DOCS = """Vector engine
-------------
``{module}.vector(num_envs=N, num_players=2, **options)`` plays ``N`` games of this variant
together (:class:`rummyzoo.envs.vector.VectorEnv`; the options, validation and errors of
``env()``). ``reset(seed=s)`` seeds game ``i`` with ``s + i``: it is then the same game as this
env after ``env.reset(seed=s + i)``. ``step(actions)`` takes one action per game, for the seat to
act there, and refreshes preallocated arrays: ``observations`` ``(N, L)`` and ``action_masks``
``(N, A)`` of the seat to act, ``current`` (that seat), ``rewards`` ``(N, P)`` (each seat's reward
since its own last decision), ``hand_done``, ``terminated``, ``truncated``. A finished match
restarts by itself (``final_observation(i, seat)`` keeps its last observations); ``infos=True``
keeps this env's infos per game; ``step(actions, games=idx)`` steps some games only. An illegal
action raises ``IllegalActionError`` naming the game and changes no game.
``rummyzoo.envs.workers.WorkerVectorEnv`` splits the games over worker processes
(shared-memory arrays) with the same API; each step is a message to every worker and back, so
workers pay where a step holds many games. A step visits every game's state: the rate per
decision is highest while the games fit the processor's cache (``rummyzoo bench-env VARIANT
--num-envs N [--workers W]`` measures a size).

.. code-block:: python

    import numpy as np
    from rummyzoo.envs import {module}
    from rummyzoo.envs.vector import uniform_legal_actions

    vec = {module}.vector(num_envs=256)
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(1000):
        vec.step(uniform_legal_actions(vec.action_masks, rng))

"""


def with_vector_docs(doc: str | None, module: str) -> str:
    """A variant module's docstring with its "Vector engine" section (before "Version
    history"), written once here for every variant."""
    section = _VECTOR_DOCS.format(module=module)
    doc = doc or ""
    marker = "Version history\n"
    return doc.replace(marker, section + marker, 1) if marker in doc else doc + "\n" + section


def vector_factory(game_cls: type[Game], title: str) -> Any:
    """The variant module's ``vector(num_envs, num_players=2, infos=False, **options)``."""

    def vector(
        num_envs: int,
        num_players: int = 2,
        infos: bool = False,
        kernels: Any = None,
        **options: Any,
    ) -> VectorEnv:
        return VectorEnv(
            make_game(game_cls, num_players, options, kernels=kernels), num_envs, infos
        )

    vector.__doc__ = (
        f"{title}: ``num_envs`` games stepped together (:class:`rummyzoo.envs.vector.VectorEnv`), "
        "with the options of ``env()``."
    )
    return vector
