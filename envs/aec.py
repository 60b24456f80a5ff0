"""The AEC layer: a :class:`~rummyzoo.envs.match.Match` as a PettingZoo ``AECEnv``.

This is the only module of ``rummyzoo.envs`` that imports PettingZoo or gymnasium. It maps
seats to agent names (``player_i``), keeps PettingZoo's per-agent dicts (rewards, cumulative
rewards, terminations, truncations, infos) and uses PettingZoo's own helpers for what they
cover: ``AECEnv._was_dead_step`` for agents that are done, ``OrderEnforcingWrapper`` and its
agent iterator for call-order checks. Everything else (rules, match play, seeding, rewards)
lives in the layers below.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable

from rummyzoo.envs.core import Game, IllegalActionError
from rummyzoo.envs.match import HandEnd, Match, make_game

__all__ = ["RummyEnv", "RummyOrderEnforcingWrapper", "VariantEnv", "env_factory", "wrap_env"]


class RummyEnv(AECEnv):
    """PettingZoo AEC env over one :class:`Match` of a :class:`Game`.

    The variant modules (``knock_rummy_v0`` etc.) build it from ``env(**options)``; the
    options live in ``game.rules`` (the variant's rules) and ``game.match`` (the shared
    :class:`~rummyzoo.envs.match.MatchOptions`). ``match`` is the match being played: its
    state, totals and deck are public there (``env.unwrapped.match``).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "rummy",
        "is_parallelizable": False,
    }

    def __init__(self, game: Game) -> None:
        super().__init__()
        self.game = game
        self.rules = game.rules
        self.options = options = game.match
        self.match = Match(game)
        self.render_mode = options.render_mode
        self.render_view = options.render_view
        self.possible_agents = list(self.match.seat_names)
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, (game.obs_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (game.num_actions,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.possible_agents}
        self.state_space = spaces.Box(
            -np.inf, np.inf, (len(self.possible_agents) * game.obs_size,), np.float32
        )
        self._zero_mask = np.zeros(game.num_actions, dtype=np.int8)
        self._rewarded = False

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        self._seat_of(agent)
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        self._seat_of(agent)
        return self.action_spaces[agent]

    def _seat_of(self, agent: Any) -> int:
        """:raises ValueError: naming this game's agents, for a name that is none of them."""
        try:
            return self.agent_name_mapping[agent]
        except (KeyError, TypeError):
            raise ValueError(
                f"no agent {agent!r} in this game: its agents are {', '.join(self.possible_agents)}"
            ) from None

    # ------------------------------------------------------------ helpers
    @property
    def hand_state(self) -> Any:
        """The state of the hand being played (the last hand once the episode is over): every
        card's place, hidden ones included, for scripts and tests (``match.state``)."""
        return self.match.state

    def state(self) -> np.ndarray:
        """PettingZoo's global state, for a centralised critic: every seat's observation, seat
        0 first (``state_space``: ``num_players * obs_size`` floats). It holds every hand and
        everything public, never the order of the cards still to be drawn."""
        if self.match.state is None:
            raise RuntimeError("state() needs a game: call reset() first")
        game = self.game
        out = np.empty(self.state_space.shape, dtype=np.float32)
        for seat in range(self.match.num_players):
            out[seat * game.obs_size : (seat + 1) * game.obs_size] = self.match.observe(seat)
        return out

    @property
    def deck(self) -> np.ndarray | None:
        """The deck the hand being played was dealt from."""
        return self.match.deck

    def action_name(self, action: int) -> str:
        """Readable name of an action id (e.g. ``"discard Kh"``)."""
        return self.game.action_name(action)

    def action_index(self, name: str) -> int:
        """Action id of a readable name (inverse of :meth:`action_name`)."""
        return self.game.action_index(name)

    def legal_actions(self) -> list[int]:
        """Legal action ids of the agent to act (empty once the episode is over)."""
        self._check_reset("legal_actions()")
        if self.match.over:
            return []
        return np.flatnonzero(self.match.legal_mask()).tolist()

    @property
    def match_totals(self) -> dict[str, float]:
        """Match totals per agent (a team's total for each of its members)."""
        totals = self.match.totals_by_seat().tolist()
        return dict(zip(self.possible_agents, totals, strict=True))

    # ------------------------------------------------------------ AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        deck = None
        if options is not None:
            if not isinstance(options, dict):
                raise ValueError(
                    f"reset options must be a dict such as {{'deck': [...]}} or None, "
                    f"got {options!r} ({type(options).__name__})"
                )
            options = dict(options)
            deck = options.pop("deck", None)
            if options:
                # PettingZoo's api_test passes arbitrary options; say so rather than fail, at
                # the caller's line (env()'s wrapper is a frame more: each line of a script
                # with a misspelt key is warned once, not only the first)
                warnings.warn(
                    f"reset ignores unknown option(s): {', '.join(sorted(options))} (valid: deck)",
                    stacklevel=_outside_this_module(),
                )
        self.match.reset(seed, deck)  # validates everything before it changes anything
        agents = self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {a: {} for a in agents}
        self._rewarded = False
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[self.match.state.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat_of(agent)
        match = self.match
        state = match.state
        if state is None:
            self._check_reset("observe()")
        obs = match.game.observe(state, seat, match.seat_totals)
        if seat == state.current and not match.over:
            mask = match.mask
            if mask is None:
                mask = match.mask = match.game.legal_mask(state)
            mask = mask.copy()
        else:
            mask = self._zero_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """(observation, cumulative reward, terminated, truncated, info) of the agent to act."""
        try:
            agent = self.agent_selection
        except AttributeError:
            self._check_reset("last()")
            raise
        try:
            return (
                self.observe(agent) if observe else None,
                self._cumulative_rewards[agent],
                self.terminations[agent],
                self.truncations[agent],
                self.infos[agent],
            )
        except KeyError:
            if self.agents:
                raise
            raise RuntimeError(self._GAME_OVER) from None

    _GAME_OVER = "the game is over (every agent has left it): call reset() to play another"

    def step(self, action: Any) -> None:
        try:
            agent = self.agent_selection
        except AttributeError:
            self._check_reset("step()")
            raise
        if not self.agents:
            raise IllegalActionError(f"action {action!r}: {self._GAME_OVER}")
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise IllegalActionError(
                    f"{agent} sent action {action!r} after its game ended: the only action "
                    "left is None (step(None) removes the agent)"
                )
            self._was_dead_step(action)
            return
        match = self.match
        a = match.check(action)  # raises before anything changes
        if self._rewarded:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewarded = False
        self._cumulative_rewards[agent] = 0.0
        end = match.play(a)
        if end is None:
            self.agent_selection = self.possible_agents[match.state.current]
        else:
            self._hand_ended(end)
        if self.render_mode == "human":
            self.render()

    def _hand_ended(self, end: HandEnd) -> None:
        agents = self.possible_agents
        rewards = end.rewards
        if rewards is not None:
            self.rewards = dict(zip(agents, rewards, strict=True))
            cumulative = self._cumulative_rewards
            for agent, value in zip(agents, rewards, strict=True):
                cumulative[agent] += value
            self._rewarded = True
        # a hand cut by the turn cap has no points: its infos say why (and the match totals)
        self.infos = dict(zip(agents, end.infos, strict=True))
        if not end.match_over:
            self.agent_selection = agents[self.match.state.current]
        elif end.truncated_by is not None:
            self.truncations = dict.fromkeys(agents, True)
        else:
            self.terminations = dict.fromkeys(agents, True)

    def _check_reset(self, call: str) -> None:
        """:raises RuntimeError: before the first :meth:`reset` (no game is dealt yet)."""
        if self.match.state is None:
            raise RuntimeError(f"call reset() before {call}")

    def render(self) -> str | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'human'"
            )
            return None
        self._check_reset("render()")
        match = self.match
        text = self.game.render(match.state, self.render_view, match.totals_by_seat())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


class _OrderEnforcingAgents(AECOrderEnforcingIterable):
    """PettingZoo's order-enforcing ``agent_iter()``, iterated by one generator.

    The checks are those of ``AECOrderEnforcingIterator.__next__``: stop when no agent is left
    or after ``max_iter`` agents, and require a ``step()`` or ``reset()`` between two agents.
    The stock iterator spends three method calls and two wrapper properties per agent, a tenth
    of a short game's time; the generator does the same in one resumption.
    """

    def __iter__(self) -> Iterator[str]:
        wrapper = self.env
        raw = wrapper.env
        left = self.max_iter
        while raw.agents and left > 0:
            left -= 1
            if not wrapper._has_updated:
                raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
            wrapper._has_updated = False
            yield raw.agent_selection


def _outside_this_module() -> int:
    """The ``stacklevel`` of a warning given here that names the first caller outside this
    module (the user's line, through however many of its frames)."""
    level, frame = 2, sys._getframe(2)  # (the frame of the function that warns is level 1)
    while frame is not None and frame.f_code.co_filename == __file__:
        level, frame = level + 1, frame.f_back
    return level


class RummyOrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcing, with the hot calls handed straight to the raw env.

    The stock wrapper answers every attribute read through ``__getattr__``; ``last``,
    ``step``, ``agents`` and ``agent_selection`` are delegated directly instead, with the
    same checks, and ``agent_iter`` iterates PettingZoo's order-enforcing iterable by one
    generator (see :class:`_OrderEnforcingAgents`).
    """

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderEnforcingAgents(self, max_iter)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._has_reset = True
        self._has_updated = True
        # Once reset, ``last`` has nothing left to check: answer it from the raw env directly.
        self.last = self.env.last

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self.env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self.env.step(action)  # a refused action raises here and counts as no step
            self._has_updated = True

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


def wrap_env(raw: RummyEnv) -> AECEnv:
    """The wrapper stack of ``env()``: PettingZoo's order enforcing (see above).

    Bounds and legality are checked by the raw env itself: an illegal or out-of-range action
    raises :class:`~rummyzoo.envs.core.IllegalActionError` naming the action, the agent and the
    legal actions, instead of PettingZoo's convention of ending the game with a penalty.
    """
    return RummyOrderEnforcingWrapper(raw)


class VariantEnv(RummyEnv):
    """The raw env of one variant, built from ``env()``-style options: a variant module
    subclasses it with its ``game_class`` and PettingZoo ``metadata``."""

    game_class: ClassVar[type[Game]]

    def __init__(self, num_players: int = 2, **options: Any) -> None:
        super().__init__(make_game(self.game_class, num_players, options))


def env_factory(raw_cls: type[VariantEnv], title: str) -> Callable[..., AECEnv]:
    """The variant module's ``env(num_players=2, **options)``: ``raw_cls`` wrapped."""

    def env(num_players: int = 2, **options: Any) -> AECEnv:
        return wrap_env(raw_cls(num_players=num_players, **options))

    env.__doc__ = f"{title} with the standard wrappers (see the module docstring for the options)."
    env.__module__ = raw_cls.__module__
    return env
