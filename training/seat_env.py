"""The single-agent "seat" env: the learner plays one seat, opponents play the others.

:class:`SeatEnv` is a gymnasium env over any rummyzoo PettingZoo env. The learner's seat is
fixed, rotating game by game, or random; every other seat is played inside :meth:`step` by a
:class:`~rummyzoo.agents.base.Policy` drawn from an :class:`OpponentMixture`. Observations and
rewards are strictly the learner's: its observation (optionally with the legal-action mask
appended, for DQN), and the reward it earned since its previous decision, including the final
reward when an opponent's move ends the game; the first decision's reward also holds what the
hands that ended before it paid (a match's first hands may end before the learner acts), so
that an episode's rewards add up to the match's, as the AEC env pays them. ``action_masks()``
lives on the env itself, so MaskablePPO finds it through any VecEnv (also ``SubprocVecEnv``).

A game that ends before the learner's first decision (an opponent knocking on the first turn)
gives the learner nothing to learn from; ``reset`` plays on to the next game and counts it in
``skipped_games`` (with ``learner_seat: rotate`` the seat rotates with every game dealt, a
skipped one too, as the batched env's does).
"""

from __future__ import annotations

import bisect
import functools
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from rummyzoo.agents.base import Policy, check_parameter
from rummyzoo.agents.features import learner_input, make_features, make_potential
from rummyzoo.agents.registry import make_agent
from rummyzoo.envs.core import is_action_int, unwrap_action
from rummyzoo.envs.match import HandEnd, Match
from rummyzoo.envs.play import play_turns, reset_agent
from rummyzoo.envs.registry import make_game, rules_options

#: How an opponent's error names its seat: ``(the learner's opponent at seat 1)``.
OPPONENT_ROLE = "the learner's opponent at "


@dataclass
class Snapshot:
    """A frozen copy of the learner in the self-play pool."""

    path: str
    steps: int
    rating: float = 0.0
    policy: Policy | None = field(default=None, repr=False)


def _draw(cumulative: Sequence[float], rng: np.random.Generator) -> int:
    """An index drawn with the probabilities whose running sums are ``cumulative`` (a list
    ending at 1): the inverse CDF of one uniform draw. A bisection of a list, where
    ``rng.choice`` with ``p=`` costs tens of microseconds a call and ``np.searchsorted`` of a
    few entries five times the bisection (a training env draws a match's opponents this way
    at every new match)."""
    return min(bisect.bisect_right(cumulative, rng.random()), len(cumulative) - 1)


@functools.cache
def _recent_cdf(size: int) -> tuple[float, ...]:
    weights = np.arange(1, size + 1, dtype=np.float64)
    return tuple(np.cumsum(weights / weights.sum()).tolist())


def _table_shares(weights: np.ndarray, seats: int) -> np.ndarray:
    """The mean share of ``seats`` seats that each entry takes when they are drawn without
    replacement by ``weights`` (starting over once every entry is seated), as
    :meth:`OpponentMixture.sample_table` draws them: exact, over the sets of entries seated."""
    size = len(weights)
    live = sum(1 << e for e in range(size) if weights[e] > 0)

    @functools.cache
    def expected(used: int, left: int) -> tuple[float, ...]:
        """Expected seats of each entry over the ``left`` seats still to draw."""
        if left == 0:
            return (0.0,) * size
        if used & live == live:
            used = 0
        free = [e for e in range(size) if weights[e] > 0 and not used >> e & 1]
        total = sum(weights[e] for e in free)
        out = [0.0] * size
        for e in free:
            q = weights[e] / total
            rest = expected(used | 1 << e, left - 1)
            out[e] += q
            for k in range(size):
                out[k] += q * rest[k]
        return tuple(out)

    return np.asarray(expected(0, seats)) / max(seats, 1)


class OpponentMixture:
    """Samples one opponent per seat and game from weighted entries.

    Entries are agent names (``random``, heuristics, checkpoint paths) or ``"self"``, which
    draws from the pool of learner snapshots (``sampling``: uniform, latest, or recent =
    weights growing linearly with age rank). ``self`` with an empty pool falls back to the
    other entries (or random play when there are none).

    Prioritized fictitious self-play (``pfsp_exponent`` set): every opponent (an entry, or a
    snapshot of the pool) is weighted by ``(1 - p) ** pfsp_exponent``, where ``p`` is the
    learner's win rate against it over its last ``pfsp_window`` games (with one win and one
    loss of prior), on top of the entry's own weight. The learner meets the opponents it does
    worst against most often; an opponent it always beats fades out but never disappears
    (the prior keeps its weight above zero). Results come in through :meth:`record`.

    ``distinct``: :meth:`sample_table` draws a game's opponents without replacement among the
    entries (a round robin's table); otherwise each seat draws on its own.
    """

    def __init__(
        self,
        entries: Sequence[tuple[str, float]],
        variant: str,
        num_players: int,
        options: dict[str, Any] | None = None,
        pool_size: int = 5,
        sampling: str = "recent",
        snapshot_loader: Any = None,
        pfsp_exponent: float | None = None,
        pfsp_window: int = 200,
        distinct: bool = False,
        pfsp_score: str = "winner",
    ) -> None:
        if not entries:
            raise ValueError("OpponentMixture needs at least one entry")
        self.variant = variant
        self.num_players = num_players
        self.options = dict(options or {})
        self.names = [name for name, _ in entries]
        weights = np.asarray([w for _, w in entries], dtype=np.float64)
        if not (weights > 0).all() or not np.isfinite(weights).all():  # NaN fails both ways
            raise ValueError(f"opponent weights must be positive numbers, got {weights.tolist()}")
        self.weights = weights / weights.sum()
        self._cdf: list[float] = np.cumsum(self.weights).tolist()  # what draws bisect
        if pfsp_exponent is not None and pfsp_exponent <= 0:
            raise ValueError(f"pfsp_exponent must be positive, got {pfsp_exponent}")
        self.pfsp_exponent = pfsp_exponent
        self.pfsp_window = int(pfsp_window)
        if pfsp_score not in ("winner", "head_to_head"):
            raise ValueError(f"pfsp_score must be 'winner' or 'head_to_head', got {pfsp_score!r}")
        self.pfsp_score = pfsp_score
        self.distinct = bool(distinct)
        self._results: dict[str, deque[float]] = {}
        # the results recorded since the last set_results, per label (see take_fresh)
        self._fresh: dict[str, deque[float]] = {}
        self._stale = False
        self._pool_cdf: list[float] | None = None  # PFSP's draw among the snapshots, kept
        self.pool: list[Snapshot] = []
        self.pool_size = pool_size
        self.sampling = sampling
        self.snapshot_loader = snapshot_loader
        self._fixed: dict[str, Policy] = {
            name: make_agent(name, variant, num_players, self.options)
            for name in self.names
            if name != "self"
        }
        self._fallback = make_agent("random", variant, num_players, self.options)

    def add_snapshot(self, path: str, steps: int, rating: float = 0.0) -> None:
        """Add a learner snapshot (loaded lazily); the oldest leaves a full pool."""
        self.pool.append(Snapshot(path=path, steps=steps, rating=rating))
        del self.pool[: -self.pool_size]
        self._pool_cdf = None

    # -- prioritized fictitious self-play ----------------------------------------------------
    def record(self, labels: Sequence[str], score: float) -> None:
        """The learner's result (1 won, 0 lost, 0.5 tied) in a game against ``labels``."""
        if self.pfsp_exponent is None:
            return
        for label in labels:
            for table in (self._results, self._fresh):
                found = table.get(label)
                if found is None:
                    found = table[label] = deque(maxlen=self.pfsp_window)
                found.append(float(score))
        self._stale = True
        self._pool_cdf = None

    def record_game(self, game: dict[str, Any]) -> None:
        """A finished game's results (a training env's ``info["game"]``) against each of its
        opponents, as ``pfsp_score`` counts them; a game cut by a cap counts nothing."""
        if self.pfsp_exponent is None or game["truncated"]:
            return
        if self.pfsp_score == "winner":  # against each rival (a partner won or lost with it)
            rivals = [
                k for k, rival in zip(game["opponents"], game["rivals"], strict=True) if rival
            ]
            self.record(rivals, float(game["winner"]))
        else:
            for label, score in head_to_head(game):
                self.record([label], score)

    def results(self) -> dict[str, list[float]]:
        """The recorded results per opponent label (the league's state), oldest first."""
        return {label: list(found) for label, found in self._results.items()}

    def set_results(self, results: dict[str, list[float]]) -> None:
        """Replace the recorded results with ``results`` (as :meth:`results` gives them), so
        that a mixture in another process draws from the same league state."""
        self._results = {
            label: deque(scores, maxlen=self.pfsp_window) for label, scores in results.items()
        }
        self._fresh = {}
        self._stale = True
        self._pool_cdf = None

    def take_fresh(self) -> dict[str, list[float]]:
        """The results recorded since the last :meth:`set_results` (or since the last call),
        per label, oldest first (at most a window's): what this mixture adds to a league that
        other mixtures share (:class:`~rummyzoo.training.callbacks.SeatLeague`)."""
        fresh = {label: list(found) for label, found in self._fresh.items()}
        self._fresh = {}
        return fresh

    def win_rate(self, label: str) -> float:
        """The learner's recent win rate against ``label`` (one win and one loss of prior)."""
        found = self._results.get(label, ())
        return (sum(found) + 1.0) / (len(found) + 2.0)

    def _priority(self, label: str) -> float:
        return (1.0 - self.win_rate(label)) ** float(self.pfsp_exponent or 0.0)

    @staticmethod
    def snapshot_label(snap: Snapshot) -> str:
        return f"self@{snap.steps}"

    def _reweigh(self) -> None:
        """Entry weights times their priorities (``self``: the mean over its pool)."""
        weights = np.empty(len(self.names))
        for i, name in enumerate(self.names):
            if name == "self":
                pool = [self._priority(self.snapshot_label(s)) for s in self.pool]
                weights[i] = float(np.mean(pool)) if pool else 1.0
            else:
                weights[i] = self._priority(name)
        weights *= self.weights
        self._cdf = np.cumsum(weights / weights.sum()).tolist()
        self._stale = False

    def probabilities(self) -> dict[str, float]:
        """The chance that a seat draws each opponent now (entries, and each snapshot); with
        ``distinct`` tables, the share of a table's opponent seats each one takes on average."""
        if self.pfsp_exponent is not None:
            self._reweigh()
        entry = np.diff(self._cdf, prepend=0.0)
        if self.distinct:
            entry = _table_shares(self._table_weights(), self.num_players - 1)
        out: dict[str, float] = {}
        others = [i for i, n in enumerate(self.names) if n != "self"]
        for name, p in zip(self.names, entry.tolist(), strict=True):
            if name != "self":
                out[name] = out.get(name, 0.0) + p
            elif self.pool:
                inner = self._pool_weights()
                for snap, q in zip(self.pool, inner.tolist(), strict=True):
                    label = self.snapshot_label(snap)
                    out[label] = out.get(label, 0.0) + p * q  # (``self`` may be listed twice)
            elif others:  # an empty pool falls back to the other entries, by their weights
                w = self.weights[others] / self.weights[others].sum()
                for i, q in zip(others, w.tolist(), strict=True):
                    out[self.names[i]] = out.get(self.names[i], 0.0) + p * q
            else:
                out["random"] = out.get("random", 0.0) + p
        return out

    def _pool_weights(self) -> np.ndarray:
        size = len(self.pool)
        if self.pfsp_exponent is not None:
            w = np.asarray([self._priority(self.snapshot_label(s)) for s in self.pool])
        elif self.sampling == "latest":
            w = np.zeros(size)
            w[-1] = 1.0
        elif self.sampling == "uniform":
            w = np.ones(size)
        else:
            w = np.arange(1, size + 1, dtype=np.float64)
        return w / w.sum()

    def _snapshot_policy(self, snap: Snapshot) -> Policy:
        if snap.policy is None:
            if self.snapshot_loader is None:
                raise ValueError("self-play needs a snapshot loader")
            snap.policy = self.snapshot_loader(
                snap.path, self.variant, self.num_players, self.options
            )
        return snap.policy

    def sample(self, rng: np.random.Generator) -> tuple[str, Policy]:
        """(label, policy) of one opponent."""
        if self._stale:
            self._reweigh()
        return self._entry(_draw(self._cdf, rng), rng)

    def sample_table(self, rng: np.random.Generator, count: int) -> list[tuple[str, Policy]]:
        """(label, policy) of the ``count`` opponents of one game, in seat order.

        Each seat on its own (:meth:`sample` ``count`` times), or with ``distinct`` without
        replacement among the entries, by their weights: once every entry is seated, the
        draws start over from all of them.
        """
        if not self.distinct:
            return [self.sample(rng) for _ in range(count)]
        if self._stale:
            self._reweigh()
        weights = self._table_weights()
        left = weights.copy()
        out = []
        for _ in range(count):
            total = left.sum()
            if total <= 0.0:
                left = weights.copy()
                total = left.sum()
            k = _draw(np.cumsum(left / total).tolist(), rng)
            left[k] = 0.0
            out.append(self._entry(k, rng))
        return out

    def _table_weights(self) -> np.ndarray:
        """The entries' draw weights for ``distinct`` tables: ``self`` has none while the pool
        is empty (its fallback would seat an entry twice), unless it is the only entry."""
        weights = np.diff(self._cdf, prepend=0.0)
        if not self.pool:
            is_self = np.asarray([n == "self" for n in self.names])
            if not is_self.all():
                weights = np.where(is_self, 0.0, weights)
                weights /= weights.sum()
        return weights

    def policies_in_play(self) -> list[Policy]:
        """Every policy the mixture can still seat: its fixed entries, the fallback and the
        pool's loaded snapshots."""
        loaded = [s.policy for s in self.pool if s.policy is not None]
        return [*self._fixed.values(), self._fallback, *loaded]

    def _entry(self, index: int, rng: np.random.Generator) -> tuple[str, Policy]:
        """(label, policy) for entry ``index`` (``self``: a snapshot of the pool)."""
        name = self.names[index]
        if name != "self":
            return name, self._fixed[name]
        if not self.pool:
            others = [i for i, n in enumerate(self.names) if n != "self"]
            if not others:
                return "random", self._fallback
            w = np.cumsum(self.weights[others])
            name = self.names[others[_draw((w / w[-1]).tolist(), rng)]]
            return name, self._fixed[name]
        if self.pfsp_exponent is not None:
            if self._pool_cdf is None:  # the same until a result or a snapshot comes in
                self._pool_cdf = np.cumsum(self._pool_weights()).tolist()
            snap = self.pool[_draw(self._pool_cdf, rng)]
        elif self.sampling == "latest":
            snap = self.pool[-1]
        elif self.sampling == "uniform":
            snap = self.pool[int(rng.integers(len(self.pool)))]
        else:  # "recent": weights 1, 2, ..., len(pool), the newest heaviest
            size = len(self.pool)
            snap = self.pool[_draw(_recent_cdf(size), rng)]
        return self.snapshot_label(snap), self._snapshot_policy(snap)


def as_mixture(
    opponents: OpponentMixture | Sequence[str],
    variant: str,
    num_players: int,
    options: dict[str, Any],
) -> OpponentMixture:
    """``opponents`` itself, or a mixture of the named agents with equal weights."""
    if isinstance(opponents, OpponentMixture):
        return opponents
    if isinstance(opponents, str):  # not a sequence of names: one name's letters
        raise ValueError(f"opponents must be a list of agent names, got {opponents!r}")
    return OpponentMixture([(name, 1.0) for name in opponents], variant, num_players, options)


#: Who sets the report options (reward, rendering) of a learner's env.
ENV_OWNER = "the learner's env (its reward, reward_scale and render_mode parameters)"


def check_number(
    name: str, value: Any, low: float | None = None, high: float | None = None
) -> float:
    """``value`` as a float, if it is a finite number in ``[low, high]``.

    :raises ValueError: naming the learner's env and ``name``, otherwise.
    """
    check_parameter("the learner's env", name, value, low=low, high=high)
    return float(value)


def check_flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool (numpy's too): a string such as ``"no"`` is no answer.

    :raises ValueError: naming the learner's env and ``name``, otherwise.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(
            f"the learner's env: {name} must be True or False, got {value!r} "
            f"({type(value).__name__})"
        )
    return bool(value)


def check_learner_seat(learner_seat: int | str, num_players: int) -> None:
    """:raises ValueError: unless ``learner_seat`` is a seat, ``"rotate"`` or ``"random"``."""
    if not (
        learner_seat in ("rotate", "random")
        or (
            isinstance(learner_seat, int)
            and not isinstance(learner_seat, bool)
            and 0 <= learner_seat < num_players
        )
    ):
        raise ValueError(
            f"learner_seat must be 0..{num_players - 1}, 'rotate' or 'random', got {learner_seat!r}"
        )


def head_to_head(game: dict[str, Any]) -> list[tuple[str, float]]:
    """(label, the learner's score) for each rival of a finished game (a training env's
    ``info["game"]``): 1 where the learner's side scored more points than the rival's side,
    0.5 for as many, else 0. A partner is no rival, and a game cut by a cap has no result."""
    if game.get("truncated"):
        return []
    mine = game["points"]
    return [
        (label, 1.0 if mine > theirs else (0.5 if mine == theirs else 0.0))
        for label, theirs, rival in zip(
            game["opponents"], game["opponent_points"], game["rivals"], strict=True
        )
        if rival
    ]


def hand_margin(points: Any, seat: int, same_side: Any) -> float:
    """A hand's margin for ``seat``: its points less the best of another side's seats (a
    partner is no opponent); ``same_side[a][b]``: seats ``a`` and ``b`` play on one side."""
    return points[seat] - max(p for i, p in enumerate(points) if not same_side[seat][i])


def same_sides(game: Any) -> list[list[bool]]:
    """``same_side[a][b]`` of a game: whether seats ``a`` and ``b`` score together."""
    groups = np.asarray(game.score_groups)
    return (groups[:, None] == groups[None, :]).tolist()


def opponent_results(side_points: Any, seat: int, same_side: Any) -> dict[str, list[Any]]:
    """Per opponent seat (in seat order, as the opponents' labels), its side's points this
    episode (``opponent_points``) and whether it plays against the learner (``rivals``: a
    partner does not), for scoring the learner against each opponent."""
    others = [s for s in range(len(side_points)) if s != seat]
    return {
        "opponent_points": [float(side_points[s]) for s in others],
        "rivals": [not bool(same_side[seat][s]) for s in others],
    }


class SeatEnv(gym.Env):
    """The learner's view of a multi-player rummyzoo game (see the module docstring).

    :param variant: registered variant name.
    :param num_players: players at the table.
    :param env_options: rules options of the variant.
    :param opponents: an :class:`OpponentMixture`, or a list of agent names (equal weights).
    :param learner_seat: a seat, ``"rotate"`` (next seat each game) or ``"random"``.
    :param reward: env reward mode seen by the learner (``points``, ``scaled``, ``margin``,
        ``win_loss``, ``rank``, ``lead``: :data:`~rummyzoo.envs.match.REWARD_MODES`).
    :param reward_scale: divisor for ``reward`` ``"scaled"``, ``"margin"`` and ``"lead"``.
    :param mask_in_obs: append the legal-action mask to the observation (masked DQN reads the
        next state's legal actions from there).
    :param illegal_action: ``"penalize"`` (default): an illegal action changes nothing, costs
        ``illegal_penalty`` reward and the learner acts again (so unmasked algorithms and
        gymnasium's env checker can step it); ``"raise"``: raise the env's IllegalActionError.
    :param illegal_penalty: reward subtracted for an illegal action in ``"penalize"`` mode.
    :param features: name of engineered features appended to the observation
        (see :mod:`rummyzoo.agents.features`), or None.
    :param shaping: potential-based reward shaping (``knock_deadwood``,
        ``ditch_hand_margin``, ``ditch_hand_points``), or None: the learner
        also receives ``gamma * phi(s') - phi(s)`` (phi in points / ``reward_scale``; 0 at the
        end of a game), which leaves the optimal policy unchanged. ``info["game"]["points"]``
        stays the raw points.
    :param gamma: discount used by the shaping term (the algorithm's gamma).
    :param bootstrap_cuts: whether the algorithm bootstraps a game cut by the turn cap from its
        value (PPO), so the shaping keeps the cut state's potential there; False (the masked
        DQN, which scores a cut as an end): the potential 0 there, as at an end.
    """

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012

    def __init__(
        self,
        variant: str,
        num_players: int = 2,
        env_options: dict[str, Any] | None = None,
        opponents: OpponentMixture | Sequence[str] = ("random",),
        learner_seat: int | str = "rotate",
        reward: str = "scaled",
        reward_scale: float | None = None,
        mask_in_obs: bool = False,
        render_mode: str | None = None,
        illegal_action: str = "penalize",
        illegal_penalty: float = 1.0,
        features: str | None = None,
        shaping: str | None = None,
        gamma: float = 0.99,
        bootstrap_cuts: bool = True,
    ) -> None:
        super().__init__()
        if illegal_action not in ("penalize", "raise"):
            raise ValueError(
                f"illegal_action must be 'penalize' or 'raise', got {illegal_action!r}"
            )
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.illegal_action = illegal_action
        self.illegal_penalty = check_number("illegal_penalty", illegal_penalty)
        self.variant = variant
        self.num_players = num_players
        self.env_options = rules_options(env_options, ENV_OWNER, variant)
        shared = {"reward": reward, "render_mode": "ansi" if render_mode == "ansi" else None}
        if reward_scale is not None:
            shared["reward_scale"] = reward_scale
        self.match = Match(make_game(variant, num_players, **shared, **self.env_options))
        self._same_side = same_sides(self.match.game)
        self.opponents = as_mixture(opponents, variant, num_players, self.env_options)
        check_learner_seat(learner_seat, num_players)
        self.learner_seat = learner_seat
        self.mask_in_obs = check_flag("mask_in_obs", mask_in_obs)
        self.render_mode = render_mode
        game = self.match.game
        self.num_actions = game.num_actions
        self.obs_size = game.obs_size
        self.features = make_features(features, variant, num_players, self.env_options)
        self.potential = make_potential(shaping, variant, num_players, self.env_options)
        self.gamma = check_number("gamma", gamma, 0, 1)
        self.bootstrap_cuts = check_flag("bootstrap_cuts", bootstrap_cuts)
        self.reward_scale = float(game.match.reward_scale)
        self._phi = 0.0
        extra = self.features.size if self.features is not None else 0
        size = game.obs_size + extra + (game.num_actions if mask_in_obs else 0)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self.action_space = gym.spaces.Discrete(game.num_actions)
        self.seat = 0
        self._games = 0
        self._seeded = False
        self.skipped_games = 0
        self._opponent_labels: list[str] = []
        self._seat_labels: list[str | None] = []
        self._policies: list[Policy | None] = [None] * num_players
        self._mask = np.zeros(game.num_actions, dtype=bool)
        self._reward = 0.0
        self._last_end: HandEnd | None = None

    # ----------------------------------------------------------------- helpers
    @property
    def learner(self) -> str:
        return self.match.seat_names[self.seat]

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (all False once the game is over)."""
        return self._mask.copy()

    def add_snapshot(self, path: str, steps: int, rating: float = 0.0) -> None:
        """Self-play: add a learner snapshot to this env's opponent pool."""
        self.opponents.add_snapshot(path, steps, rating)

    # the league of prioritized fictitious self-play, shared by every game's env through the
    # run (training.callbacks.SeatLeague): this game's new results out, the whole league in
    def league_fresh(self) -> dict[str, list[float]]:
        return self.opponents.take_fresh()

    def set_league_results(self, results: dict[str, list[float]]) -> None:
        self.opponents.set_results(results)

    def league_report(self) -> dict[str, tuple[float, float]]:
        """Per opponent, the chance that a seat draws it now and the learner's win rate
        against it (what the run logs under ``league/``)."""
        mixture = self.opponents
        return {label: (p, mixture.win_rate(label)) for label, p in mixture.probabilities().items()}

    def _observation(self) -> np.ndarray:
        match = self.match
        obs = match.observe(self.seat)
        if match.over:
            self._mask = np.zeros(self.num_actions, dtype=bool)
        else:
            self._mask = match.legal_mask().astype(bool)
        if self.potential is not None:
            self._phi = self.potential(obs) / self.reward_scale
        return learner_input(obs, self._mask.astype(np.int8), self.features, self.mask_in_obs)

    def _over(self) -> bool:
        return self.match.over

    def _note_hands(self, ends: list[HandEnd]) -> None:
        for end in ends:
            self._last_end = end
            if end.rewards is not None:
                self._reward += end.rewards[self.seat]
            if end.points is None:
                continue
            points = end.points
            self._hand_points.append(points[self.seat])
            self._hand_margins.append(hand_margin(points, self.seat, self._same_side))
            self._episode_points += end.seat_points[self.seat]
            self._side_points += end.seat_points

    def _play_opponents(self) -> None:
        """Let opponents act until it is the learner's turn or the game is over."""
        ends = play_turns(
            self.match, self._policies, self.np_random, until=self.seat,
            labels=self._seat_labels, role=OPPONENT_ROLE,
        )  # fmt: skip
        self._note_hands(ends)

    # -------------------------------------------------------------- gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._games = 0  # a seeded reset replays the same sequence of games and seats
        while True:
            if seed is not None or not self._seeded:
                self.match.reset(int(self.np_random.integers(2**63)) if seed is None else seed)
                self._seeded = True
                seed = None
            else:
                self.match.reset()
            n = self.num_players
            if self.learner_seat == "rotate":  # by every match dealt, a skipped one too
                self.seat = self._games % n
            elif self.learner_seat == "random":
                self.seat = int(self.np_random.integers(n))
            else:
                self.seat = int(self.learner_seat)
            self._opponent_labels = []
            drawn = iter(self.opponents.sample_table(self.np_random, n - 1))
            for s in range(n):
                if s == self.seat:
                    self._policies[s] = None
                    continue
                label, policy = next(drawn)
                reset_agent(policy, s, label, f"{OPPONENT_ROLE}seat {s}")
                self._policies[s] = policy
                self._opponent_labels.append(label)
            # the config's names of the opponents, seat by seat (what their errors name)
            self._seat_labels = list(self._opponent_labels)
            self._seat_labels.insert(self.seat, None)
            self._hand_points: list[float] = []
            self._hand_margins: list[float] = []
            self._episode_points = 0.0
            self._side_points = np.zeros(n, dtype=np.float64)
            self._decisions = 0
            self._reward = 0.0
            self._last_end = None
            self._play_opponents()
            self._games += 1
            if not self._over():
                break
            self.skipped_games += 1  # a match that ended before the learner's first decision
        # (what the hands that ended before the learner's first decision paid it is kept, and
        # paid with that decision's reward, as the AEC env pays it at the seat's first last())
        return self._observation(), {"seat": self.seat, "opponents": list(self._opponent_labels)}

    def step(self, action: int):
        if self._over():
            raise RuntimeError("step() called after the game ended; call reset()")
        match = self.match
        if match.current != self.seat:  # the opponents' moves were cut short (Ctrl-C, an error)
            raise RuntimeError(
                "a step or reset of this env was cut short (an error or Ctrl-C while the "
                "opponents played), leaving the game at an opponent's turn: call reset() to "
                "deal again"
            )
        action = unwrap_action(action)  # what a model's predict() gives for one observation
        legal = is_action_int(action)
        a = int(action) if legal else -1
        if not (0 <= a < self.num_actions and self._mask[a]):
            if self.illegal_action == "raise":
                match.check(action)  # raises IllegalActionError naming the action and legal moves
            obs = self._observation()
            return obs, -self.illegal_penalty, False, False, {"illegal_action": action}
        end = match.play(a)
        self._decisions += 1
        if end is not None:
            self._note_hands([end])
        self._play_opponents()
        reward = self._reward
        self._reward = 0.0  # counted once
        over = match.over
        truncated = over and self._last_end is not None and self._last_end.truncated_by is not None
        terminated = over and not truncated
        phi_before = self._phi
        obs = self._observation()
        if self.potential is not None:
            ended = terminated or (truncated and not self.bootstrap_cuts)
            phi_after = 0.0 if ended else self._phi
            reward += self.gamma * phi_after - phi_before
        info: dict[str, Any] = {}
        if terminated or truncated:
            last = self._last_end
            info["game"] = {
                "points": self._episode_points,
                "hands": len(self._hand_points),
                "hand_points": list(self._hand_points),
                "margins": list(self._hand_margins),
                "decisions": self._decisions,
                "winner": bool(last.infos[self.seat].get("winner", False)),
                "opponents": list(self._opponent_labels),
                **opponent_results(self._side_points, self.seat, self._same_side),
                "seat": self.seat,
                "truncated": truncated,
            }
            self.opponents.record_game(info["game"])
        return obs, float(reward), terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        match = self.match
        return match.game.render(match.state, None, match.totals_by_seat())
