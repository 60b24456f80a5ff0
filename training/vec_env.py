"""The batched training env: the learner plays one seat in each of ``N`` games at once.

:class:`BatchedSeatEnv` is a stable-baselines3 ``VecEnv`` over the vector engine
(:class:`~rummyzoo.envs.vector.VectorEnv`). It gives the learner what :class:`~rummyzoo.training.seat_env.SeatEnv`
gives it (the same observations, features, masks, rewards, shaping and ``info["game"]``), but
one call steps every game:

1. the learner's ``N`` actions are played in one engine step;
2. then, while any game waits on an opponent, the games are grouped by the opponent to act
   there: a network opponent (a self-play snapshot, a checkpoint) acts in all its games with
   one batched call (``act_batch``), a heuristic game by game; each round is one engine step;
3. finished matches restart by themselves (new learner seat, new opponents) and play on to the
   learner's first decision.

To play the games in several processes, :class:`~rummyzoo.training.split_env.SplitSeatEnv`
splits them into shares, each a ``BatchedSeatEnv`` in its own process.

``action_masks()`` returns the ``(N, A)`` mask array itself (``env_method("action_masks")``
too, which is how MaskablePPO asks for it), without a call per game.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from rummyzoo.agents.base import Policy
from rummyzoo.agents.features import learner_inputs, make_features, make_potential
from rummyzoo.agents.registry import make_agent
from rummyzoo.envs.core import (
    ConfigError,
    IllegalActionError,
    check_action,
    is_action_int,
    read_only,
    unwrap_action,
)
from rummyzoo.envs.match import Match
from rummyzoo.envs.play import (
    batch_actions,
    illegal_action_error,
    raise_agent_failure,
    reset_agent,
    seats_text,
)
from rummyzoo.envs.registry import make_vector, rules_options
from rummyzoo.envs.seeding import check_seed
from rummyzoo.training.seat_env import (
    ENV_OWNER,
    OPPONENT_ROLE,
    OpponentMixture,
    as_mixture,
    check_flag,
    check_learner_seat,
    check_number,
    hand_margin,
    opponent_results,
)

__all__ = ["BatchedSeatEnv", "WholeBatchVecEnv", "act_batch"]


def act_batch(
    policy: Policy, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Actions of ``policy`` for rows of observations and masks: one ``act_batch`` call where
    the policy has one (networks), else ``act`` row by row."""
    batched = getattr(policy, "act_batch", None)
    if batched is not None:
        # one int action a row, as the play loop requires (not a float or a bool cut down)
        return batch_actions(batched(observations, masks, rng), len(observations))
    act = policy.act
    return np.fromiter(
        (
            check_action(act(o, m, rng), masks.shape[1])
            for o, m in zip(observations, masks, strict=True)
        ),
        dtype=np.int64,
        count=len(observations),
    )


def _runs_together(groups: list[tuple[Policy, Any]]) -> list[list[tuple[Policy, Any]]]:
    """The groups (in their order) cut into runs that decide in one call: next to each other,
    checkpoints of the same inputs (the snapshots of a self-play pool) share a run
    (:func:`~rummyzoo.agents.checkpoints.act_groups`); every other policy is a run of its own.
    Each run decides in the groups' order, so the random draws are those of one group after
    another."""
    from rummyzoo.agents.checkpoints import CheckpointPolicy

    runs: list[list[tuple[Policy, Any]]] = []
    last_key = None
    for policy, ks in groups:
        key = policy.inputs_key if type(policy) is CheckpointPolicy else None
        if key is not None and key == last_key:
            runs[-1].append((policy, ks))
        else:
            runs.append([(policy, ks)])
        last_key = key
    return runs


def one_action_per_game(actions: Any, num_envs: int) -> np.ndarray:
    """The actions a step was given, one per game (ValueError naming the counts otherwise).

    A list keeps each of its items as given (an array of objects): numpy would read ``[True, 1]``
    as ints and a timedelta among ints as timedeltas, where each game judges its own action."""
    if isinstance(actions, (list, tuple)):
        pending = np.empty(len(actions), dtype=object)
        for i, action in enumerate(actions):
            pending[i] = action
    else:
        pending = np.asarray(actions)
    if pending.shape not in ((num_envs,), (num_envs, 1)):
        raise ValueError(
            f"need one action per game ({num_envs}: shape ({num_envs},) or ({num_envs}, 1)), "
            f"got an array of shape {pending.shape}"
        )
    return pending.reshape(num_envs)


def action_ids(pending: np.ndarray) -> np.ndarray:
    """The int64 action ids of a step's actions: only ints are action ids (as in SeatEnv),
    anything else (a float, a bool) is -1, an illegal action."""
    if pending.dtype.kind in "iu":
        # an unsigned id past int64's range wraps to a negative one: illegal either way
        return pending.astype(np.int64)
    # the items as they are (tolist() would make a timedelta64 array's items ints)
    return np.array([_action_id(a) for a in pending.reshape(-1)], dtype=np.int64)


def _action_id(value: Any) -> int:
    """``value`` as an action id, -1 where it is no int (or one past int64's range: no id)."""
    value = unwrap_action(value)
    if is_action_int(value) and -(2**63) <= int(value) < 2**63:
        return int(value)
    return -1


def sent_action(pending: np.ndarray, i: int) -> Any:
    """What was sent as game ``i``'s action, as SeatEnv names it in ``illegal_action``: the
    object itself from an array of objects, a Python number from a numpy array of numbers."""
    # (an item of a number array as a Python number; a timedelta64's stays one: its item()
    # is an int or a datetime.timedelta)
    return pending[i].item() if pending.dtype.kind in "biuf" else pending[i]


class RunMonitor(VecMonitor):
    """A run's training env under stable-baselines3's ``VecMonitor``, whose seeds keep the
    runs of different seeds apart. stable-baselines3 seeds game ``i`` with ``seed + i`` when a
    model is made with the env, so a run of seed 1 played the games of a run of seed 0 one
    place along: all but one of its games, deal for deal. Here game ``i`` gets ``seed * stride
    + i`` (``stride``: :meth:`RunConfig.game_seed`'s, more than the run's games), the seed it
    is built with: seed 0's games are as they were. (A resumed model is given the env after
    its seeds are set, so its games keep those they were built with.)"""

    def __init__(self, venv: VecEnv, stride: int) -> None:
        super().__init__(venv)
        if stride <= venv.num_envs:
            raise ValueError(f"a seed stride of {stride} for {venv.num_envs} games overlaps")
        self.stride = stride

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        if seed is not None:
            check_seed(seed)
            seed = int(seed) * self.stride
        return self.venv.seed(seed)


class WholeBatchVecEnv(VecEnv):
    """A ``VecEnv`` that is one object for all its games: attributes and methods are those of
    the whole batch (``action_masks`` and ``add_snapshot`` too), set and called once."""

    kind = "batched env"  # how errors name it

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next reset: game ``i`` gets ``seed + i``; a seed that is no non-negative
        int is refused here (it was taken, and every reset failed until another came)."""
        if seed is not None:
            check_seed(seed)
        return super().seed(seed)

    def _drop_reset_options(self) -> None:
        """Reset options (``set_options``) are not for these games: a warning, then dropped."""
        if any(self._options):
            warnings.warn(
                f"{type(self).__name__} ignores reset options (set_options): its games deal "
                "from their own seeds",
                stacklevel=3,
            )
            self._reset_options()

    def action_masks(self) -> np.ndarray:
        raise NotImplementedError

    def add_snapshot(self, path: str, steps: int, rating: float = 0.0) -> None:
        raise NotImplementedError

    def _set_all(self, attr_name: str, value: Any) -> None:
        setattr(self, attr_name, value)

    def _call_all(self, method_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return getattr(self, method_name)(*args, **kwargs)

    def _count(self, indices: VecEnvIndices) -> int:
        return len(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(self, attr_name)] * self._count(indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if self._count(indices) != self.num_envs:
            raise ValueError(f"the {self.kind} sets attributes for all its games at once")
        self._set_all(attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs
    ) -> Any:
        if method_name == "action_masks":
            masks = self.action_masks()
            return masks if indices is None else masks[self._get_indices(indices)]
        if method_name == "add_snapshot":  # one pool for every game: add once
            self.add_snapshot(*method_args, **method_kwargs)
            return [None] * self._count(indices)
        if self._count(indices) != self.num_envs:
            raise ValueError(f"{method_name} applies to all games of the {self.kind} at once")
        return [self._call_all(method_name, method_args, method_kwargs)] * self.num_envs

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False] * self._count(indices)


class BatchedSeatEnv(WholeBatchVecEnv):
    """The learner's view of ``num_envs`` games stepped together (see the module docstring).

    The parameters are those of :class:`~rummyzoo.training.seat_env.SeatEnv` (one learner
    seat per game: fixed, rotating match by match, or random) but ``illegal_action`` (an
    illegal action is penalised, never raised: the other games go on) and ``render_mode``,
    plus:

    :param num_envs: games stepped together.
    :param seed: game ``i`` starts from seed ``seed + i``; seats and opponents are drawn from
        a generator seeded with ``seed``.
    :param duplicate_baseline: an agent name (or checkpoint) that plays each deal once more
        in the learner's seat, against the same opponents, when the deal starts (single
        hands only); the learner's reward for the hand is then its own less that agent's
        (:meth:`_twin_reward`): the deal's luck largely cancels, and since the baseline does
        not depend on the learner's actions the policy gradient stays unbiased. A hand the
        turn cap cuts pays no baseline (it is bootstrapped from the value of where it stopped).
    """

    metadata = {"render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        variant: str,
        num_players: int = 2,
        env_options: dict[str, Any] | None = None,
        opponents: OpponentMixture | Sequence[str] = ("random",),
        num_envs: int = 16,
        learner_seat: int | str = "rotate",
        reward: str = "scaled",
        reward_scale: float | None = None,
        mask_in_obs: bool = False,
        illegal_penalty: float = 1.0,
        features: str | None = None,
        shaping: str | None = None,
        gamma: float = 0.99,
        seed: int = 0,
        duplicate_baseline: str | None = None,
        bootstrap_cuts: bool = True,
    ) -> None:
        self.variant = variant
        self.env_options = rules_options(env_options, ENV_OWNER, variant)
        self._seed = check_seed(seed, none_too=False)
        shared: dict[str, Any] = {"reward": reward}
        if reward_scale is not None:
            shared["reward_scale"] = reward_scale
        self.engine = make_vector(variant, num_envs, num_players, **shared, **self.env_options)
        engine = self.engine
        game = engine.game
        n = num_envs
        self.num_players = num_players
        self.opponents = as_mixture(opponents, variant, num_players, self.env_options)
        check_learner_seat(learner_seat, num_players)
        self.learner_seat = learner_seat
        self.mask_in_obs = check_flag("mask_in_obs", mask_in_obs)
        self.illegal_penalty = check_number("illegal_penalty", illegal_penalty)
        self.features = make_features(features, variant, num_players, self.env_options)
        self.potential = make_potential(shaping, variant, num_players, self.env_options)
        self.gamma = check_number("gamma", gamma, 0, 1)
        self.bootstrap_cuts = check_flag("bootstrap_cuts", bootstrap_cuts)
        self.reward_scale = float(game.match.reward_scale)
        self.num_actions = game.num_actions
        self.obs_size = game.obs_size
        extra = self.features.size if self.features is not None else 0
        self.input_size = game.obs_size + extra + (game.num_actions if mask_in_obs else 0)
        self.render_mode = None
        super().__init__(
            n,
            gym.spaces.Box(-np.inf, np.inf, (self.input_size,), np.float32),
            gym.spaces.Discrete(game.num_actions),
        )
        self.rng = np.random.default_rng(self._seed)
        groups = np.asarray(game.score_groups)
        self._same_side = groups[:, None] == groups[None, :]  # seat x seat: one team
        self._same_side_lists = self._same_side.tolist()
        self.seats = np.zeros(n, dtype=np.int64)
        self._rows = np.arange(n)
        self.policies: list[list[Policy | None]] = [[None] * num_players for _ in range(n)]
        # each policy in play gets an id; _policy_ids[game, seat] names the one in that seat
        self._policy_list: list[Policy | None] = [None]
        self._policy_index: dict[int, int] = {}
        self._policy_ids = np.zeros((n, num_players), dtype=np.int64)
        self.labels: list[list[str]] = [[] for _ in range(n)]
        self._matches = np.zeros(n, dtype=np.int64)  # matches started per game (rotation)
        self._phi = np.zeros(n, dtype=np.float64)
        self._decisions = np.zeros(n, dtype=np.int64)
        # game i's engine rewards still hold the previous match's (no step since its new match
        # began): not the learner's to be paid again
        self._stale_rewards = np.ones(n, dtype=bool)
        self._points = np.zeros(n, dtype=np.float64)
        #: per game, each seat's side's points this episode (a team's for each member)
        self._side_points = np.zeros((n, self.num_players), dtype=np.float64)
        self._hand_points: list[list[float]] = [[] for _ in range(n)]
        self._margins: list[list[float]] = [[] for _ in range(n)]
        self._actions = np.zeros(n, dtype=np.int64)
        self._obs = np.zeros((n, self.input_size), dtype=np.float32)
        self._masks = np.zeros((n, game.num_actions), dtype=bool)
        self.skipped_games = 0
        #: seconds the opponents spent choosing actions (``rummyzoo bench-train`` reads it)
        self.opponent_seconds = 0.0
        self._started = False
        #: a step or reset was cut short (an opponent's error, Ctrl-C) with the games half
        #: played: refused until a reset deals them again
        self._cut = False
        self.duplicate_baseline = duplicate_baseline
        self._baseline = np.zeros(n, dtype=np.float64)
        if duplicate_baseline is not None:
            if game.match.target_score is not None:
                raise ConfigError(
                    "duplicate_baseline plays each deal again for one hand: it needs single "
                    f"hands (target_score=None), not matches to {game.match.target_score}"
                )
            self._twin = Match(game, infos=False)
            self._twin_policy = make_agent(
                duplicate_baseline, variant, num_players, self.env_options
            )

    # ------------------------------------------------------------------ games
    def _new_match(self, i: int) -> None:
        """Seat and opponents of the match that game ``i`` has just started."""
        n = self.num_players
        rng = self.rng
        if self.learner_seat == "rotate":
            seat = int(self._matches[i] % n)
        elif self.learner_seat == "random":
            seat = int(rng.integers(n))
        else:
            seat = int(self.learner_seat)
        self._matches[i] += 1
        self.seats[i] = seat
        policies = self.policies[i]
        labels = []
        drawn = iter(self.opponents.sample_table(rng, n - 1))
        for s in range(n):
            if s == seat:
                policies[s] = None
                self._policy_ids[i, s] = 0
                continue
            label, policy = next(drawn)
            reset_agent(policy, s, label, f"{OPPONENT_ROLE}seat {s}")
            policies[s] = policy
            self._policy_ids[i, s] = self._id_of(policy)
            labels.append(label)
        self.labels[i] = labels
        self._decisions[i] = 0
        self._stale_rewards[i] = True
        self._points[i] = 0.0
        self._side_points[i] = 0.0
        self._hand_points[i] = []
        self._margins[i] = []
        if self.duplicate_baseline is not None:
            self._baseline[i] = self._twin_reward(i, seat)
            # the opponents played the twin's game: they start the learner's afresh
            for s, policy in enumerate(policies):
                if policy is not None:
                    reset_agent(policy, s, labels[s - (s > seat)], f"{OPPONENT_ROLE}seat {s}")

    def _twin_reward(self, i: int, seat: int) -> float:
        """The reward the duplicate-baseline agent earns in ``seat`` of game ``i``'s deal,
        playing it to its end against the game's opponents (0 if the turn cap cuts it)."""
        twin = self._twin
        twin.reset(seed=self._seed + int(self._matches[i]), deck=self.engine.matches[i].deck)
        policies = list(self.policies[i])
        policies[seat] = agent = self._twin_policy
        labels = list(self.labels[i])
        labels.insert(seat, str(self.duplicate_baseline))
        where = [f"{OPPONENT_ROLE}seat {s}" for s in range(len(policies))]
        where[seat] = f"the duplicate baseline at seat {seat}"
        reset_agent(agent, seat, labels[seat], where[seat])
        rng = self.rng
        while True:
            mover = twin.current
            try:
                # (a view it cannot write through, as the play loop gives: see read_only)
                mask = read_only(twin.legal_mask())
                action = policies[mover].act(twin.observe(mover), mask, rng)
            except (Exception, SystemExit) as exc:
                raise_agent_failure(exc, labels[mover], where[mover])
            end = twin.step(action)
            if end is not None:
                return 0.0 if end.rewards is None else float(end.rewards[seat])

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        # a copy holds copies of the policies, under ids of their own
        self._policy_index = {id(p): i for i, p in enumerate(self._policy_list) if p is not None}

    def _id_of(self, policy: Policy) -> int:
        key = id(policy)
        found = self._policy_index.get(key)
        if found is None or self._policy_list[found] is not policy:
            found = self._policy_index[key] = len(self._policy_list)
            self._policy_list.append(policy)
        return found

    def _note_hands(self, games: np.ndarray) -> None:
        """Learner statistics of the hands that ended in the last engine step."""
        engine = self.engine
        ended = games[engine.hand_done[games]]
        if ended.size == 0:
            return
        hands = engine.hand_points[ended].tolist()
        seats = self.seats[ended].tolist()
        side = self._same_side_lists
        for i, points, seat in zip(ended.tolist(), hands, seats, strict=True):
            if points[0] != points[0]:
                continue  # NaN: cut by the turn cap, no result
            self._hand_points[i].append(points[seat])
            self._margins[i].append(hand_margin(points, seat, side))
            self._points[i] += sum(p for s, p in enumerate(points) if side[seat][s])
            self._side_points[i] += [sum(p for s, p in enumerate(points) if row[s]) for row in side]

    def _game_info(self, i: int, truncated: bool) -> dict[str, Any]:
        seat = int(self.seats[i])
        return {
            "points": float(self._points[i]),
            "hands": len(self._hand_points[i]),
            "hand_points": list(self._hand_points[i]),
            "margins": list(self._margins[i]),
            "decisions": int(self._decisions[i]),
            "winner": bool(not truncated and self.engine.winners[i, seat]),
            "opponents": list(self.labels[i]),
            **opponent_results(self._side_points[i], seat, self._same_side_lists),
            "seat": seat,
            "truncated": truncated,
        }

    def _learner_input(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network input of the learner for observation rows (features, mask appended)."""
        return learner_inputs(obs, masks, self.features, self.mask_in_obs)

    def _opponent_actions(self, waiting: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The actions of the opponents to act in the games ``waiting``, one ``act_batch`` call
        per opponent, or one call for the snapshots of a self-play pool next to each other in
        the opponents' order (:func:`_runs_together`); a scratch array, valid until the next
        call."""
        engine = self.engine
        ids = self._policy_ids[waiting, engine.current[waiting]]
        counts = np.bincount(ids)
        present = np.flatnonzero(counts).tolist()
        if len(present) == 1:  # one opponent everywhere (e.g. a single fixed one)
            groups = [(self._policy_list[present[0]], slice(None))]
        else:
            # by policy id, each group's games in their order (a stable sort of the ids)
            order = np.argsort(ids, kind="stable")
            groups = []
            lo = 0
            for u, count in zip(present, counts[present].tolist(), strict=True):
                groups.append((self._policy_list[u], order[lo : lo + count]))
                lo += count
        actions = self._actions[: waiting.size]
        start = time.perf_counter()
        for run in _runs_together(groups) if len(groups) > 1 else [groups]:
            self._act_run(run, waiting, actions, rng)
        self.opponent_seconds += time.perf_counter() - start
        return actions

    def _act_run(
        self,
        run: list[tuple[Policy, Any]],
        waiting: np.ndarray,
        actions: np.ndarray,
        rng: np.random.Generator,
    ) -> None:
        """The actions of a run of groups (:func:`_runs_together`): one call for a run of
        checkpoints, else (or where that call refuses the rows: nothing is drawn then) one
        call per group, where a failure names the opponent and its games."""
        engine = self.engine
        if len(run) > 1:
            from rummyzoo.agents.checkpoints import act_groups

            order = np.concatenate([ks for _, ks in run])
            rows = waiting[order]
            try:
                actions[order] = act_groups(
                    [policy for policy, _ in run],
                    [len(ks) for _, ks in run],
                    engine.observations[rows],
                    engine.action_masks[rows],
                    rng,
                )
                return
            except (Exception, SystemExit):
                pass  # the groups one by one name the one refused
        for policy, ks in run:
            rows = waiting[ks]
            try:
                actions[ks] = act_batch(
                    policy, engine.observations[rows], engine.action_masks[rows], rng
                )
            except (Exception, SystemExit) as exc:
                game = int(rows[0])
                seat = int(engine.current[game])
                # its label in that game: the opponents' labels skip the learner's seat
                label = self.labels[game][seat - (seat > self.seats[game])]
                where = f"{OPPONENT_ROLE}{seats_text(engine.current[rows])}"
                if getattr(policy, "act_batch", None) is not None:
                    where += f", deciding for {rows.size} games at once"
                raise_agent_failure(exc, label, where)

    def _play_opponents(
        self,
        rewards: np.ndarray,
        dones: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        """Opponents act (grouped by opponent) until the learner is to act in every game;
        matches that end meanwhile are recorded as the learner's episode ends."""
        engine = self.engine
        seats = self.seats
        while True:
            waiting = np.flatnonzero(engine.current != seats)
            if waiting.size == 0:
                return
            try:
                engine.step(self._opponent_actions(waiting, self.rng), games=waiting)
            except IllegalActionError as exc:  # named as the config names the opponent
                game = getattr(exc, "game", None)
                if game is None:
                    raise
                seat = int(engine.current[game])
                label = self.labels[game][seat - (seat > self.seats[game])]
                raise illegal_action_error(label, f"{OPPONENT_ROLE}seat {seat}", exc) from exc
            self._stale_rewards[waiting] = False
            self._after_step(waiting, rewards, dones, infos)

    def _after_step(
        self,
        games: np.ndarray,
        rewards: np.ndarray,
        dones: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        """Record the matches that ended in the last engine step of ``games`` and start the
        next ones."""
        engine = self.engine
        if not engine.hand_done[games].any():
            return
        self._note_hands(games)
        ended = games[(engine.terminated | engine.truncated)[games]]
        for i in ended.tolist():
            seat = int(self.seats[i])
            if dones[i]:
                # a match that ended before the learner's first decision in it (the seat
                # rotates on all the same: SeatEnv's reset counts it too)
                self.skipped_games += 1
            else:
                truncated = bool(engine.truncated[i])
                dones[i] = True
                rewards[i] += engine.rewards[i, seat]
                if not truncated:
                    # a cut game is bootstrapped from its value, which already counts the
                    # baseline's result to come: subtracting it here would count it twice
                    rewards[i] -= self._baseline[i]
                if self.potential is not None:
                    cut = truncated and self.bootstrap_cuts
                    phi_after = self._phi_of(engine.final_observation(i, seat)) if cut else 0
                    rewards[i] += self.gamma * phi_after - self._phi[i]
                final = engine.final_observation(i, seat)
                zero = np.zeros((1, self.num_actions), dtype=bool)
                info = infos[i]
                info["terminal_observation"] = self._learner_input(final[None], zero)[0]
                info["TimeLimit.truncated"] = truncated
                info["game"] = game = self._game_info(i, truncated)
                self.opponents.record_game(game)
            self._new_match(i)

    def _phi_of(self, obs: np.ndarray) -> float:
        return self.potential(obs) / self.reward_scale

    def _phis(self, obs: np.ndarray) -> np.ndarray:
        """The potential of every row of ``obs``, in one call where the potential has one."""
        batch = getattr(self.potential, "batch", None)
        if batch is not None:
            return batch(obs) / self.reward_scale
        return np.asarray([self._phi_of(o) for o in obs], dtype=np.float64)

    def _observe(self) -> np.ndarray:
        """Every game is at the learner's turn: its inputs and masks."""
        engine = self.engine
        np.not_equal(engine.action_masks, 0, out=self._masks)
        self._obs[:] = self._learner_input(engine.observations, engine.action_masks)
        return self._obs.copy()

    # --------------------------------------------------------------- VecEnv API
    def reset(self) -> np.ndarray:
        self._open()
        self._drop_reset_options()
        seeds = self._seeds
        if seeds[0] is not None:
            self.engine.reset(seed=[int(s) for s in seeds])
            self.rng = np.random.default_rng(int(seeds[0]))
        elif not self._started:
            self.engine.reset(seed=self._seed)
        else:
            self.engine.reset()
        self._reset_seeds()
        self._started = True
        self._cut = True  # dealt: until every game is at the learner's turn
        n = self.num_envs
        self._matches[:] = 0
        for i in range(n):
            self._new_match(i)
        rewards = np.zeros(n, dtype=np.float64)
        # a match that ends before the learner's first decision is skipped, not reported
        dones = np.ones(n, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        self._play_opponents(rewards, dones, infos)
        self._start_potentials()
        self.reset_infos = [
            {"seat": int(self.seats[i]), "opponents": list(self.labels[i])} for i in range(n)
        ]
        obs = self._observe()
        self._cut = False
        return obs

    def _start_potentials(self) -> None:
        if self.potential is not None:
            self._phi[:] = self._phis(self.engine.observations)

    def step_async(self, actions: np.ndarray) -> None:
        self._whole()
        self._pending = one_action_per_game(actions, self.num_envs)

    def step_wait(self):
        self._whole()
        engine = self.engine
        n = self.num_envs
        pending = self._pending
        actions = action_ids(pending)
        rewards = np.zeros(n, dtype=np.float64)
        dones = np.zeros(n, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        in_range = (actions >= 0) & (actions < self.num_actions)
        legal = in_range.copy()
        legal[in_range] = self._masks[self._rows[in_range], actions[in_range]]
        if legal.all():
            games = self._rows
        else:
            games = np.flatnonzero(legal)
            for i in np.flatnonzero(~legal).tolist():
                rewards[i] -= self.illegal_penalty
                infos[i]["illegal_action"] = sent_action(pending, i)
        phi_before = self._phi.copy()
        self._cut = True  # until every game is at the learner's turn again
        # the learner's first decision of a match is also paid what the hands that ended
        # before it paid (the engine clears the seat's rewards when it acts)
        first = games[self._decisions[games] == 0]
        if first.size:
            owed = engine.rewards[first, self.seats[first]]
            rewards[first] += np.where(self._stale_rewards[first], 0.0, owed)
        self._decisions[games] += 1
        engine.step(actions[games], games=games)
        self._stale_rewards[games] = False
        self._after_step(games, rewards, dones, infos)
        self._play_opponents(rewards, dones, infos)
        live = ~dones & legal
        # the learner's reward since its last decision, in the games that go on
        rewards[live] += engine.rewards[self._rows[live], self.seats[live]]
        if self.potential is not None:
            moved = live | dones
            phi = self._phis(engine.observations[moved])
            rewards[live] += self.gamma * phi[live[moved]] - phi_before[live]
            self._phi[moved] = phi
        obs = self._observe()
        self._cut = False
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner in every game, ``(N, A)`` bool."""
        self._whole()
        return self._masks.copy()

    def add_snapshot(self, path: str, steps: int, rating: float = 0.0) -> None:
        """Self-play: add a learner snapshot to the opponent pool (shared by every game); the
        snapshots that left the pool and sit at no table any more are let go."""
        self.opponents.add_snapshot(path, steps, rating)
        keep = {id(p) for p in self.opponents.policies_in_play()}
        seated = set(np.unique(self._policy_ids).tolist())
        for k, policy in enumerate(self._policy_list):
            if policy is not None and k not in seated and id(policy) not in keep:
                self._policy_list[k] = None  # its id is not used again (the ids keep their order)
                if self._policy_index.get(id(policy)) == k:
                    del self._policy_index[id(policy)]

    def set_league_results(self, results: dict[str, list[float]]) -> None:
        """The league's results (prioritized fictitious self-play), as a checkpoint had them."""
        self.opponents.set_results(results)

    def _open(self) -> None:
        if getattr(self, "_closed", False):
            raise RuntimeError("this BatchedSeatEnv is closed")

    def _whole(self) -> None:
        """Open, and every game at the learner's turn (not left half played by a step or
        reset that an error or Ctrl-C cut short)."""
        self._open()
        if self._cut:
            raise RuntimeError(
                "a step or reset of this BatchedSeatEnv was cut short (an error or Ctrl-C while "
                "the games were played), leaving them half played: call reset() to deal every "
                "game again"
            )

    def close(self) -> None:
        self._closed = True
        close = getattr(self.engine, "close", None)
        if close is not None:
            close()
