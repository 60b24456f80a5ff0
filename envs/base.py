"""Shared machinery of the three variants: the pure-rules ``Game`` interface and the AEC shell.

Each variant supplies a :class:`Game` (pure rules over a small mutable numpy state, no PettingZoo)
and gets a PettingZoo :class:`RummyEnv` from this module. The shell owns everything the variants
have in common: agents and seats, seeding (separate random streams for deals and for in-hand
chance, so a seed fixes every deck of a match whatever the players do), illegal-action errors,
rewards and their modes, match play to a target score with dealer rotation, the turn cap
(truncation), ``infos`` with raw points, rendering and the action-name helpers.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from rummyzoo.envs.cards import parse_deck
from rummyzoo.envs.seeding import check_seed, new_generator, seed_generator

REWARD_MODES = ("points", "scaled", "win_loss")
#: Options of the env shell (not of the rules): every variant's ``env()`` accepts them.
ENV_OPTION_NAMES = ("render_mode", "reward", "reward_scale", "render_view", "max_hands")


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``env(**options)`` into (shell options, rules options)."""
    shell = {k: v for k, v in options.items() if k in ENV_OPTION_NAMES}
    rules = {k: v for k, v in options.items() if k not in ENV_OPTION_NAMES}
    return shell, rules


_ORDERED_DECK = np.arange(52 * 4, dtype=np.int64)
_ORDERED_DECK.flags.writeable = False


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the current state."""


class ConfigError(ValueError):
    """A rules or env option that is unknown, of the wrong type or out of range."""


def validate_fields(config: Any) -> None:
    """Type-check a frozen dataclass config against its annotations (int/float/bool/str/None).

    :raises ConfigError: naming the field, the bad value and the expected type.
    """
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        kind = str(field.type).replace("typing.", "")
        allowed: list[type] = []
        if ("None" in kind or "Optional" in kind) and value is None:
            continue
        if "bool" in kind:
            allowed.append(bool)
        if "int" in kind:
            allowed.append(int)
        if "float" in kind:
            allowed += [float, int]
        if "str" in kind:
            allowed.append(str)
        if not allowed:
            continue
        ok = isinstance(value, tuple(allowed)) and not (
            isinstance(value, bool) and bool not in allowed
        )
        if not ok or isinstance(value, (np.ndarray, list)):
            raise ConfigError(
                f"{type(config).__name__}.{field.name} must be {field.type}, "
                f"got {value!r} ({type(value).__name__})"
            )


def make_config(cls: type, num_players: int, options: dict[str, Any]) -> Any:
    """Build a frozen rules config, rejecting unknown option names clearly."""
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise ConfigError(
            f"unknown option(s) for {cls.__name__}: {', '.join(unknown)}; "
            f"valid options: {', '.join(sorted(names - {'num_players'}))}"
        )
    return cls(num_players=num_players, **options)


def check_choice(config: Any, name: str, choices: Sequence[Any]) -> None:
    value = getattr(config, name)
    if value not in choices:
        raise ConfigError(
            f"{type(config).__name__}.{name} must be one of {list(choices)}, got {value!r}"
        )


def check_range(config: Any, name: str, low: float | None, high: float | None) -> None:
    value = getattr(config, name)
    if value is None:
        return
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ConfigError(f"{type(config).__name__}.{name} must be in [{lo}, {hi}], got {value!r}")


class HandState:
    """Fields every variant's state carries (variants subclass and add their own)."""

    __slots__ = ()

    current: int  # seat to act
    dealer: int
    turn: int  # completed turns in this hand
    over: bool  # the hand has ended (points are final)
    points: Any  # per seat, raw hand points once ``over`` (list of floats or float64 array)


class Game:
    """Pure rules of one variant under one frozen config. Subclasses fill in the rules.

    Class attributes: ``name`` (variant id), and per instance ``num_players``, ``num_actions``,
    ``obs_size``, ``observation_layout`` (name -> (start, stop) in the flat observation),
    ``action_names`` (tuple of readable names), ``num_decks``.
    """

    name: ClassVar[str] = ""
    rules: Any
    num_players: int
    num_actions: int
    obs_size: int
    num_decks: int = 1
    action_names: tuple[str, ...]
    observation_layout: dict[str, tuple[int, int]]
    score_groups: np.ndarray  # group (team) of each seat; seat i alone unless teams

    # -- to implement ---------------------------------------------------------
    def new_hand(self, rng: np.random.Generator, dealer: int, deck: np.ndarray) -> HandState:
        """Deal a hand from ``deck`` (top of the stock first). ``deck`` is read-only: it is kept
        as the record of the deal, so copy it before changing it."""
        raise NotImplementedError

    def legal_mask(self, state: HandState) -> np.ndarray:
        raise NotImplementedError

    def apply(self, state: HandState, action: int, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def observe(self, state: HandState, seat: int, totals: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def hand_info(self, state: HandState, seat: int) -> dict[str, Any]:
        """Variant-specific facts about a finished hand for ``infos`` (e.g. deadwood, melds)."""
        return {}

    def render(self, state: HandState, view: int | None, totals: np.ndarray) -> str:
        raise NotImplementedError

    def card_locations(self, state: HandState) -> np.ndarray:
        """How many places hold each card id (length 52): ``num_decks`` everywhere when sound."""
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------
    def scores_line(self, totals: np.ndarray, label: str = "scores") -> str | None:
        """The match totals as a render line (None in single-hand play)."""
        if self.rules.target_score is None:
            return None
        shown = ", ".join(f"player_{i} {totals[i]:g}" for i in range(self.num_players))
        return f"{label}: {shown} (target {self.rules.target_score})"

    def _index_names(self) -> None:
        self._name_to_action = {n.lower(): i for i, n in enumerate(self.action_names)}

    def action_name(self, action: int) -> str:
        if not 0 <= int(action) < self.num_actions:
            raise IllegalActionError(f"action {action} is outside 0..{self.num_actions - 1}")
        return self.action_names[int(action)]

    def action_index(self, name: str) -> int:
        key = " ".join(str(name).lower().replace("10", "t").split())
        try:
            return self._name_to_action[key]
        except KeyError:
            raise ValueError(
                f"unknown action name {name!r} for {self.name} (e.g. {self.action_names[0]!r}, "
                f"{self.action_names[-1]!r})"
            ) from None

    def shuffled_deck(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly shuffled deck (each card ``num_decks`` times), top of the stock first."""
        return self.shuffled_decks(rng, 1)[0]

    def shuffled_decks(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` shuffled decks as the rows of one read-only array.

        Row ``k`` is the deck that the ``k``-th of ``count`` successive calls of
        :meth:`shuffled_deck` would give (``Generator.permuted`` shuffles row after row from
        the same stream), so drawing decks in batches changes no deal.
        """
        size = 52 * self.num_decks
        decks = rng.permuted(np.broadcast_to(_ORDERED_DECK[:size], (count, size)), axis=1)
        if not decks.flags.c_contiguous:  # rows that are contiguous decks, for the deal
            decks = np.ascontiguousarray(decks)
        if self.num_decks > 1:
            decks %= 52
        decks.flags.writeable = False
        return decks


class RummyEnv(AECEnv):
    """PettingZoo AEC shell over a :class:`Game` (see the variant modules for the docs page).

    :param game: the rules object (built from the variant's options).
    :param render_mode: ``None``, ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints).
    :param reward: ``"points"`` (raw hand points, default), ``"scaled"`` (points / reward_scale)
        or ``"win_loss"`` (+1 to the episode's top scorer(s), -1 to the others, 0 if all tie).
    :param reward_scale: divisor for ``reward="scaled"``.
    :param render_view: seat whose hand ``render`` shows, or ``None`` for all hands open.
    :param max_hands: a match still undecided after this many hands is truncated (a policy
        that never scores could otherwise play a match forever); ``None`` = no cap.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "rummy",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        game: Game,
        render_mode: str | None = None,
        reward: str = "points",
        reward_scale: float = 100.0,
        render_view: int | None = None,
        max_hands: int | None = 1000,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}"
            )
        if reward not in REWARD_MODES:
            raise ConfigError(f"reward must be one of {list(REWARD_MODES)}, got {reward!r}")
        if (
            isinstance(reward_scale, bool)
            or not isinstance(reward_scale, (int, float))
            or reward_scale <= 0
        ):
            raise ConfigError(f"reward_scale must be a positive number, got {reward_scale!r}")
        if render_view is not None and not (
            isinstance(render_view, int) and 0 <= render_view < game.num_players
        ):
            raise ConfigError(f"render_view must be a seat 0..{game.num_players - 1} or None")
        if max_hands is not None and (
            isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1
        ):
            raise ConfigError(f"max_hands must be a positive int or None, got {max_hands!r}")
        self.max_hands = max_hands
        self.game = game
        self._num_actions = game.num_actions
        self._max_turns = game.rules.max_turns
        self.rules = game.rules
        self.render_mode = render_mode
        self.reward_mode = reward
        self.reward_scale = float(reward_scale)
        self.render_view = render_view
        n = game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, (game.obs_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (game.num_actions,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.possible_agents}
        self._groups = np.asarray(game.score_groups)
        self._group_list = self._groups.tolist()
        self._num_groups = int(self._groups.max()) + 1
        self._teams = self._num_groups < n
        self._zero_totals = np.zeros(n, dtype=np.float64)
        self._zero_totals.flags.writeable = False
        self._zero_mask = np.zeros(game.num_actions, dtype=np.int8)
        first = self.rules.first_dealer
        self._first_dealer = n - 1 if first is None else int(first)
        self._deal_rng: np.random.Generator | None = None
        # Decks are shuffled in batches (the same decks, one numpy call per batch); a batch
        # grows from 1 after each seeding, so a loop that reseeds every game shuffles no more.
        self._decks: np.ndarray | None = None
        self._deck_next = 0
        self._deck_batch = 1
        self._play_rng: np.random.Generator | None = None
        self.state: HandState | None = None

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------ helpers
    def action_name(self, action: int) -> str:
        """Readable name of an action id (e.g. ``"discard Kh"``)."""
        return self.game.action_name(action)

    def action_index(self, name: str) -> int:
        """Action id of a readable name (inverse of :meth:`action_name`)."""
        return self.game.action_index(name)

    def legal_actions(self) -> list[int]:
        """Legal action ids of the agent to act (empty once the episode is over)."""
        if self._episode_over:
            return []
        return np.flatnonzero(self._current_mask()).tolist()

    def _current_mask(self) -> np.ndarray:
        mask = self._mask
        if mask is None:
            mask = self._mask = self.game.legal_mask(self.state)
        return mask

    @property
    def match_totals(self) -> dict[str, float]:
        """Match totals per agent (a team's total for each of its members)."""
        groups = self._group_list
        return {a: float(self._totals[groups[i]]) for i, a in enumerate(self.possible_agents)}

    # ------------------------------------------------------------ AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if self._deal_rng is None:
            self._deal_rng = new_generator()
            self._play_rng = new_generator()
        if seed is not None:
            seed = check_seed(seed)
            seed_generator(self._deal_rng, seed, 0)
            seed_generator(self._play_rng, seed, 1)
            self._decks = None
            self._deck_batch = 1
        deck = None
        if options:
            options = dict(options)
            deck = options.pop("deck", None)
            if options:
                # PettingZoo's api_test passes arbitrary options; say so rather than fail.
                warnings.warn(
                    f"reset ignores unknown option(s): {', '.join(sorted(options))} (valid: deck)",
                    stacklevel=2,
                )
        agents = self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {a: {} for a in agents}
        self._totals = [0.0] * self._num_groups
        self._seat_totals = self._zero_totals  # match totals by seat, refreshed after each hand
        self._hand_index = 0
        self._episode_over = False
        self._rewarded = False
        self._skip_agent_selection = None
        self._dealer = self._first_dealer
        self._start_hand(None if deck is None else parse_deck(deck, self.game.num_decks))

    def _next_deck(self) -> np.ndarray:
        """The next shuffled deck of the deal stream (read-only)."""
        decks = self._decks
        k = self._deck_next
        if decks is None or k >= len(decks):
            size = self._deck_batch
            decks = self._decks = self.game.shuffled_decks(self._deal_rng, size)
            self._deck_batch = min(2 * size, 64)
            k = 0
        self._deck_next = k + 1
        return decks[k]

    def _start_hand(self, deck: np.ndarray | None) -> None:
        if deck is None:
            deck = self._next_deck()
        else:
            deck.flags.writeable = False  # the record of the deal; new_hand must not change it
        self.deck = deck
        self.state = self.game.new_hand(self._play_rng, self._dealer, deck)
        self._mask = None
        self.agent_selection = self.possible_agents[self.state.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        state = self.state
        obs = self.game.observe(state, seat, self._seat_totals)
        if seat == state.current and not self._episode_over:
            mask = self._mask
            if mask is None:
                mask = self._mask = self.game.legal_mask(state)
            mask = mask.copy()
        else:
            mask = self._zero_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """(observation, cumulative reward, terminated, truncated, info) of the agent to act."""
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        """Yield the agent to act until every agent is done (at most ``max_iter`` times)."""
        return _AgentIterable(self, max_iter, None)

    def _was_dead_step(self, action: Any) -> None:
        """``step`` of a terminated or truncated agent: drop it, as PettingZoo's helper does.

        Same effect as ``AECEnv._was_dead_step`` (remove the agent from ``agents`` and every
        per-agent dict, then pass the turn to the next dead agent, else back to the one that
        was to act), with less bookkeeping on the per-game path.
        """
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        del self.terminations[agent]
        del self.truncations[agent]
        del self.rewards[agent]
        del self._cumulative_rewards[agent]
        del self.infos[agent]
        agents = self.agents
        agents.remove(agent)
        terms, truncs = self.terminations, self.truncations
        for other in agents:
            if terms[other] or truncs[other]:
                if self._skip_agent_selection is None:
                    self._skip_agent_selection = agent
                self.agent_selection = other
                break
        else:
            if self._skip_agent_selection is not None:
                self.agent_selection = self._skip_agent_selection
            self._skip_agent_selection = None
        rewards = self.rewards
        for other in rewards:
            rewards[other] = 0

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if self._rewarded:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewarded = False
        self._cumulative_rewards[agent] = 0.0
        mask = self._mask
        if mask is None:
            mask = self._mask = self.game.legal_mask(self.state)
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise IllegalActionError(
                f"{agent} sent action {action!r}, which is not an action id (int 0..{self.game.num_actions - 1})"
            ) from None
        if not (0 <= a < self._num_actions) or not mask[a]:
            legal = [self.game.action_names[i] for i in np.flatnonzero(mask)]
            shown = ", ".join(legal[:20]) + (" ..." if len(legal) > 20 else "")
            what = self.game.action_names[a] if 0 <= a < self.game.num_actions else "out of range"
            raise IllegalActionError(
                f"illegal action {a} ({what}) for {agent}; legal actions: {shown}"
            )
        state = self.state
        self.game.apply(state, a, self._play_rng)
        self._mask = None
        if state.over:
            self._finish_hand()
        elif state.turn >= self._max_turns:
            self._truncate()
        else:
            self.agent_selection = self.possible_agents[state.current]
        if self.render_mode == "human":
            self.render()

    def _finish_hand(self) -> None:
        """Score a finished hand: totals, infos, rewards; then end the episode or deal again."""
        state = self.state
        points = state.points
        points = points.tolist() if isinstance(points, np.ndarray) else list(map(float, points))
        groups = self._group_list
        totals = self._totals
        if self._teams:
            group_points = [0.0] * self._num_groups
            for seat, p in enumerate(points):
                group_points[groups[seat]] += p
            seat_points = [group_points[g] for g in groups]
        else:
            group_points = seat_points = points
        for g, p in enumerate(group_points):
            totals[g] += p
        index = self._hand_index = self._hand_index + 1
        target = self.rules.target_score
        if target is None:
            over, ranking = True, group_points
        else:
            self._seat_totals = np.asarray([totals[g] for g in groups])
            lead = max(totals)
            over = lead >= target and totals.count(lead) == 1  # a tie for the lead plays on
            ranking = totals
        mode = self.reward_mode
        if mode == "points":
            rewards = seat_points
        elif mode == "scaled":
            scale = self.reward_scale
            rewards = [p / scale for p in seat_points]
        elif over:
            best = max(ranking)
            tied = ranking.count(best) == len(ranking)
            rewards = [0.0 if tied else (1.0 if ranking[g] == best else -1.0) for g in groups]
        else:
            rewards = None
        agents = self.possible_agents
        if rewards is not None:
            self.rewards = dict(zip(agents, rewards, strict=True))
            cumulative = self._cumulative_rewards
            for agent, value in zip(agents, rewards, strict=True):
                cumulative[agent] += value
            self._rewarded = True
        best = max(ranking)
        match_totals = self.match_totals if target is not None else None
        hand_info = self.game.hand_info
        infos = self.infos
        for seat, agent in enumerate(agents):
            info = infos[agent] = hand_info(state, seat)
            info["points"] = points[seat]
            info["hand_index"] = index
            if match_totals is not None:
                info["totals"] = totals[groups[seat]]
                info["match_totals"] = match_totals
            if over:
                info["winner"] = ranking[groups[seat]] == best
        if over:
            self._episode_over = True
            self.terminations = dict.fromkeys(agents, True)
        elif self.max_hands is not None and index >= self.max_hands:
            self._truncate(f"max_hands={self.max_hands}")
        else:
            self._dealer = (self._dealer + 1) % self.game.num_players
            self._start_hand(None)

    def _truncate(self, reason: str | None = None) -> None:
        self._episode_over = True
        self.truncations = dict.fromkeys(self.agents, True)
        for agent in self.agents:
            self.infos[agent]["truncated_by"] = reason or f"max_turns={self.rules.max_turns}"

    def render(self) -> str | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'human'"
            )
            return None
        totals = np.asarray([self._totals[g] for g in self._group_list], dtype=np.float64)
        text = self.game.render(self.state, self.render_view, totals)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


class RummyOrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcing, with ``last()`` handed straight to the raw env.

    The stock wrapper answers every attribute read of ``AECEnv.last`` through ``__getattr__``
    (five reads per call); delegating the whole call keeps the checks and drops that overhead.
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._has_reset = True
        self._has_updated = True
        # Once reset, ``last`` has nothing left to check: answer it from the raw env directly.
        self.last = self.env.last
        self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        # The stock checks, then the raw env's step without BaseWrapper's extra call.
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self.env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        """PettingZoo's order-enforcing agent iterator (``step`` or ``reset`` between
        iterations), as one generator."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self.env, max_iter, self)

    # The two attributes ``agent_iter`` reads on every iteration, without ``__getattr__``.
    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise AttributeError("agents cannot be accessed before reset")
        return self.env.agents

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.agent_selection


class _AgentIterable:
    """``env.agent_iter()``: iterable more than once, like PettingZoo's ``AECIterable``."""

    __slots__ = ("env", "max_iter", "wrapper")

    def __init__(self, env: RummyEnv, max_iter: int, wrapper: Any) -> None:
        self.env, self.max_iter, self.wrapper = env, max_iter, wrapper

    def __iter__(self) -> Any:
        env, wrapper = self.env, self.wrapper
        left = self.max_iter
        while env.agents and left > 0:
            left -= 1
            if wrapper is not None:
                if not wrapper._has_updated:
                    raise AssertionError(
                        "need to call step() or reset() in a loop over `agent_iter`"
                    )
                wrapper._has_updated = False
            yield env.agent_selection


def wrap_env(raw: RummyEnv) -> AECEnv:
    """The wrapper stack of ``env()``: PettingZoo's order enforcing (see above).

    Bounds and legality are checked by the raw env itself: an illegal or out-of-range action
    raises :class:`IllegalActionError` naming the action, the agent and the legal actions,
    instead of PettingZoo's convention of ending the game with a penalty.
    """
    return RummyOrderEnforcingWrapper(raw)
