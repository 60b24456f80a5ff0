"""The match layer: hands of a :class:`~rummyzoo.envs.core.Game` played into a match.

:class:`MatchOptions` holds every option that all variants share (defined here once, each
variant only changes defaults through ``Game.match_defaults``), and :class:`Match` owns what
they have in common: seeding (separate random streams for deals and for in-hand chance, so a
seed fixes every deck of a match whatever the players do), the deck of each hand, totals (per
team where seats play in teams), rewards and their modes, the dealer's rotation, the end of the
match at the target score, and the caps (turns per hand, hands per match).

No PettingZoo or gymnasium here: :mod:`rummyzoo.envs.aec` maps a match onto the AEC API, and
:mod:`rummyzoo.envs.play` plays one with any policies.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rummyzoo.envs.cards import parse_deck
from rummyzoo.envs.core import (
    ConfigError,
    Game,
    HandState,
    IllegalActionError,
    ViewsSurviveCopies,
    check_action,
    check_choice,
    check_range,
    make_config,
    number_shown,
    option_name,
    validate_fields,
)
from rummyzoo.envs.seeding import check_seed, new_generator, seed_generator

__all__ = [
    "MATCH_OPTION_NAMES",
    "REPORT_OPTION_NAMES",
    "REWARD_MODES",
    "HandEnd",
    "Match",
    "MatchOptions",
    "make_game",
    "split_options",
]

REWARD_MODES = ("points", "scaled", "margin", "win_loss", "rank", "lead")
RENDER_MODES = ("ansi", "human")


@dataclass(frozen=True)
class MatchOptions:
    """The options every variant accepts besides its rules (``env(**options)`` takes both).

    :param target_score: ``None`` = one hand per episode; a number = a match to that score
        (after a hand in which someone reaches it the highest total wins; a tie for the lead
        plays another hand). Each variant sets its own default.
    :param max_turns: turns per hand before the hand (and the episode) is truncated.
    :param first_dealer: dealer of the first hand (``None`` = the last seat, so ``player_0``
        acts first); the deal passes clockwise after each hand.
    :param max_hands: a match still undecided after this many hands is truncated (a policy
        that never scores could otherwise play a match forever); ``None`` = no cap.
    :param reward: ``"points"`` (raw hand points), ``"scaled"`` (points / ``reward_scale``),
        ``"margin"`` (the hand points of the seat's side minus the mean of the other sides',
        / ``reward_scale``: zero-sum, what beating the others needs), ``"win_loss"`` (+1 to
        the episode's winners, -1 to the others, 0 if all tie) or ``"rank"`` (when the episode
        ends, the mean over the other sides of +1 for each that the seat's side outscored, -1
        for each that outscored it, 0 for a tie: the head-to-head comparisons that the arena's
        ratings count; zero-sum) or ``"lead"`` (after each hand, the change over that hand of
        the side's total minus the best other side's total, / ``reward_scale``: summed over a
        match, how far the seat's side finished ahead of, or behind, its strongest rival; the
        margin when there are two sides).
    :param reward_scale: divisor for ``reward="scaled"``, ``"margin"`` and ``"lead"``.
    :param render_mode: ``None``, ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints).
    :param render_view: seat whose hand ``render`` shows, or ``None`` for all hands open.
    """

    #: the name its errors give it ("match option target_score must be ...")
    options_of: ClassVar[str] = "match"

    target_score: int | None = None
    max_turns: int = 300
    first_dealer: int | None = None
    max_hands: int | None = 1000
    # How a match is reported and shown, not which game is played (``REPORT_OPTION_NAMES``).
    reward: str = dataclasses.field(default="points", metadata={"report": True})
    reward_scale: float = dataclasses.field(default=100.0, metadata={"report": True})
    render_mode: str | None = dataclasses.field(default=None, metadata={"report": True})
    render_view: int | None = dataclasses.field(default=None, metadata={"report": True})

    def __post_init__(self) -> None:
        validate_fields(self)
        check_range(self, "target_score", 1, None)
        check_range(self, "max_turns", 1, None)
        check_range(self, "max_hands", 1, None)
        check_choice(self, "reward", REWARD_MODES)
        try:
            finite = math.isfinite(self.reward_scale)
        except OverflowError:  # an int past any float
            finite = False
        if not finite or self.reward_scale <= 0:
            raise ConfigError(
                f"{option_name(self, 'reward_scale')} must be a finite positive number, "
                f"got {number_shown(self.reward_scale)}"
            )
        if self.reward_scale < MIN_REWARD_SCALE:  # points / a denormal are infinite rewards
            raise ConfigError(
                f"{option_name(self, 'reward_scale')} must be at least {MIN_REWARD_SCALE:g} "
                "(rewards are points / "
                f"reward_scale), got {number_shown(self.reward_scale)}"
            )
        if self.render_mode is not None:
            check_choice(self, "render_mode", RENDER_MODES)

    def check_seats(self, num_players: int) -> None:
        """:raises ConfigError: for a seat option outside ``0..num_players-1``."""
        check_range(self, "first_dealer", 0, num_players - 1)
        check_range(self, "render_view", 0, num_players - 1)


#: The smallest ``reward_scale``: a million rewards per point (smaller ones overflow to inf).
MIN_REWARD_SCALE = 1e-6

#: The names of the shared options, in declaration order.
MATCH_OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(MatchOptions))
#: The shared options that change only how a match is reported or shown (rewards, rendering):
#: a tool that sets them itself (the arena, replays) refuses them from the user, and a
#: checkpoint does not record them.
REPORT_OPTION_NAMES: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(MatchOptions) if f.metadata.get("report")
)


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``env(**options)`` into (match options, rules options)."""
    match = {k: v for k, v in options.items() if k in MATCH_OPTION_NAMES}
    rules = {k: v for k, v in options.items() if k not in MATCH_OPTION_NAMES}
    return match, rules


def _settled(totals: list[float]) -> list[float]:
    """Match totals as compared for the target, the lead and ranks: rounded to 1e-9.

    A Knock Rummy hand's shares are exact fractions (a payment split between three winners)
    added up as floats, so a total that is exactly the target may come out a hair below it, and
    two equal totals a hair apart; distinct totals differ by far more than 1e-9.
    """
    return [round(t, 9) for t in totals]


def _lead(totals: list[float], side: int) -> float:
    """How far ``side``'s total is above the best of the other sides' (below: negative)."""
    return totals[side] - max(t for g, t in enumerate(totals) if g != side)


def make_game(
    game_cls: type[Game], num_players: int, options: dict[str, Any], kernels: Any = None
) -> Game:
    """Build a variant's game from ``env()``-style options (rules and match options).

    Every option is validated before anything is built; unknown names, bad types and values
    outside their range raise :class:`~rummyzoo.envs.core.ConfigError` naming the option.
    ``kernels`` goes to the game's constructor (see :func:`rummyzoo.envs.native.resolve_kernels`;
    None: the game's default).
    """
    match_opts, rules_opts = split_options(dict(options))
    match = MatchOptions(**{**game_cls.match_defaults, **match_opts})
    rules = make_config(game_cls.rules_class, num_players, rules_opts, MATCH_OPTION_NAMES)
    match.check_seats(rules.num_players)
    if kernels is None:
        return game_cls(rules, match)
    return game_cls(rules, match, kernels=kernels)


@dataclass
class HandEnd:
    """What :meth:`Match.step` reports when a hand ends (by play or by the turn cap).

    :ivar index: 1-based number of the hand in the match.
    :ivar state: the finished hand's state (final; a new hand may already be dealt).
    :ivar deck: the deck the hand was dealt from.
    :ivar points: raw hand points per seat (``None`` when the turn cap cut the hand).
    :ivar seat_points: per seat, the points its side scored (a team's sum for each member;
        the same as ``points`` without teams; ``None`` when cut).
    :ivar rewards: per seat, the reward this hand brings under the reward mode (``None``
        when it brings none, e.g. ``win_loss`` before the match is decided).
    :ivar infos: per seat, the hand's facts for ``infos`` (points, hand index, variant facts;
        totals in match play; ``winner`` once the match is over; ``truncated_by``).
    :ivar match_over: the match (episode) ended with this hand.
    :ivar truncated_by: ``"max_turns=N"`` or ``"max_hands=N"`` when a cap ended it.
    :ivar winners: per seat, whether it won the match (the infos' ``winner``), once a hand
        decided the match; else None.

    A match built with ``infos=False`` leaves ``infos`` empty (``[]``).
    """

    index: int
    state: HandState
    deck: np.ndarray
    points: list[float] | None
    seat_points: list[float] | None
    rewards: list[float] | None
    infos: list[dict[str, Any]]
    match_over: bool
    truncated_by: str | None = None
    winners: list[bool] | None = None


class Match(ViewsSurviveCopies):
    """One match of a game: the hand being played, the totals and the random streams.

    :meth:`reset` starts a match (it validates the seed and the deck first, so a refused reset
    changes nothing), :meth:`check` validates an action without changing anything,
    :meth:`play` applies a checked action and :meth:`step` does both. ``state`` is the hand
    being played (the last one once the match is over), ``over`` says the match has ended.
    ``infos=False`` skips building the infos of each hand's end (``HandEnd.infos`` is then
    empty), for loops that do not read them.
    """

    # Fixed fields (the compiled turns read and write a few of them at their offsets).
    __slots__ = (
        "_deal_rng",
        "_deck_batch",
        "_deck_next",
        "_decks",
        "_first_dealer",
        "_group_list",
        "_groups",
        "_infos",
        "_max_turns",
        "_num_actions",
        "_num_groups",
        "_teams",
        "_zero_totals",
        "dealer",
        "decisions",
        "deck",
        "game",
        "hand_index",
        "mask",
        "num_players",
        "options",
        "over",
        "play_rng",
        "seat_names",
        "seat_totals",
        "state",
        "totals",
    )

    def __init__(self, game: Game, infos: bool = True) -> None:
        self.game = game
        self._infos = infos
        self.options = options = game.match
        n = self.num_players = game.num_players
        self.seat_names = tuple(f"player_{i}" for i in range(n))
        self._num_actions = game.num_actions
        self._max_turns = options.max_turns
        self._groups = np.asarray(game.score_groups)
        self._group_list = self._groups.tolist()
        self._num_groups = int(self._groups.max()) + 1
        self._teams = self._num_groups < n
        zero = np.zeros(n, dtype=np.float64)
        zero.flags.writeable = False
        self._zero_totals = zero
        first = options.first_dealer
        self._first_dealer = n - 1 if first is None else int(first)
        self._deal_rng: np.random.Generator | None = None
        # Decks are shuffled in batches (the same decks, one numpy call per batch); a batch
        # grows from 1 after each seeding, so a loop that reseeds every game shuffles no more.
        self._decks: np.ndarray | None = None
        self._deck_next = 0
        self._deck_batch = 1
        self.play_rng: np.random.Generator | None = None
        self.state: HandState | None = None
        self.deck: np.ndarray | None = None
        self.mask: np.ndarray | None = None
        self.over = False
        self.totals: list[float] = [0.0] * self._num_groups
        self.seat_totals = zero  # match totals by seat, refreshed after each hand
        self.hand_index = 0
        self.decisions = 0  # actions played in this match
        self.dealer = self._first_dealer

    # ------------------------------------------------------------ start
    def reset(self, seed: int | None = None, deck: Any = None) -> None:
        """Start a new match (reseeding both streams when ``seed`` is given).

        :param deck: the order to deal the first hand from (card strings or ids, top of the
            stock first); later hands come from the seeded deal stream.
        :raises ValueError: a bad seed or deck (nothing is changed then).
        """
        if seed is not None:
            seed = check_seed(seed)
        if deck is not None:
            deck = parse_deck(deck, self.game.num_decks)
        if self._deal_rng is None:
            self._deal_rng = new_generator()
            self.play_rng = new_generator()
        if seed is not None:
            seed_generator(self._deal_rng, seed, 0)
            seed_generator(self.play_rng, seed, 1)
            self._decks = None
            self._deck_batch = 1
        self.totals = [0.0] * self._num_groups
        self.seat_totals = self._zero_totals
        self.hand_index = 0
        self.decisions = 0
        self.over = False
        self.dealer = self._first_dealer
        self._deal(deck)

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

    def deal_next(self) -> None:
        """Deal the next hand of the match from the deal stream (the dealer has moved on: the
        compiled finish of a hand's end, :func:`~rummyzoo.envs.vector.compiled_finish`, scored
        the hand and moved the dealer)."""
        self._deal(None)

    def _deal(self, deck: np.ndarray | None) -> None:
        if deck is None:
            deck = self._next_deck()
        else:
            deck.flags.writeable = False  # the record of the deal; new_hand must not change it
        self.deck = deck
        self.state = self.game.new_hand(self.play_rng, self.dealer, deck)
        self.mask = None

    # ------------------------------------------------------------ queries
    @property
    def current(self) -> int:
        """Seat to act."""
        return self.state.current

    def legal_mask(self) -> np.ndarray:
        """Legal actions of the seat to act (a shared array: copy it before changing it)."""
        mask = self.mask
        if mask is None:
            mask = self.mask = self.game.legal_mask(self.state)
        return mask

    def observe(self, seat: int) -> np.ndarray:
        """The observation vector of ``seat``."""
        return self.game.observe(self.state, seat, self.seat_totals)

    def totals_by_seat(self) -> np.ndarray:
        """Match totals by seat (a team's total for each of its members)."""
        return np.asarray([self.totals[g] for g in self._group_list], dtype=np.float64)

    # ------------------------------------------------------------ play
    def check(self, action: Any) -> int:
        """The action id of ``action`` if the seat to act may play it; changes nothing.

        :raises IllegalActionError: naming the action, the seat and the legal actions.
        """
        mask = self.mask
        if mask is None:
            mask = self.mask = self.game.legal_mask(self.state)
        # The common case in one test: a legal int (anything else takes the checks below).
        if (
            type(action) is int
            and 0 <= action < self._num_actions
            and mask[action]
            and not self.over
        ):
            return action
        return self._refuse_or_convert(action)

    def _refuse_or_convert(self, action: Any) -> int:
        game = self.game
        if self.over:
            raise IllegalActionError(f"the match is over; action {action!r} cannot be played")
        mask = self.mask
        if mask is None:
            mask = self.mask = game.legal_mask(self.state)
        seat = self.seat_names[self.state.current]
        try:
            a = check_action(action, self._num_actions)
        except IllegalActionError as err:
            raise IllegalActionError(f"{seat} sent an invalid action: {err}") from None
        if not mask[a]:
            legal = [game.action_names[i] for i in np.flatnonzero(mask)]
            shown = ", ".join(legal[:20]) + (" ..." if len(legal) > 20 else "")
            detail = game.illegal_action_detail(self.state)
            raise IllegalActionError(
                f"illegal action {a} ({game.action_names[a]}) for {seat}; legal actions: {shown}"
                + (f"; {detail}" if detail else "")
            )
        return a

    def step(self, action: Any) -> HandEnd | None:
        """Check and play one action; a :class:`HandEnd` when it ended a hand, else None."""
        return self.play(self.check(action))

    def play(self, action: int) -> HandEnd | None:
        """Play an action id that :meth:`check` accepted (not checked again)."""
        self.game.apply(self.state, action, self.play_rng)
        return self.played()

    def played(self) -> HandEnd | None:
        """What follows a move applied to :attr:`state` (the second half of :meth:`play`, for
        a compiled step of many games that applied the move itself): a :class:`HandEnd` when
        the move ended the hand or reached the turn cap, else None."""
        state = self.state
        self.mask = None
        self.decisions += 1
        if state.over:
            return self._finish_hand()
        if state.turn >= self._max_turns:
            return self._cut(f"max_turns={self._max_turns}")
        return None

    def _cut(self, reason: str) -> HandEnd:
        """End the match with a hand cut by the turn cap: no points; the infos say why, and in
        match play the totals as they stand."""
        self.over = True
        infos: list[dict[str, Any]] = []
        if self._infos:
            groups, totals = self._group_list, self.totals
            for seat in range(self.num_players):
                info: dict[str, Any] = {"truncated_by": reason, "hand_index": self.hand_index + 1}
                if self.options.target_score is not None:
                    info["totals"] = totals[groups[seat]]
                    info["match_totals"] = {
                        a: float(totals[groups[i]]) for i, a in enumerate(self.seat_names)
                    }
                infos.append(info)
        return HandEnd(
            self.hand_index + 1, self.state, self.deck, None, None, None, infos, True, reason
        )

    def _finish_hand(self) -> HandEnd:
        """Score a finished hand: totals, rewards, infos; then end the match or deal again."""
        state = self.state
        deck = self.deck
        points = state.points
        points = points.tolist() if isinstance(points, np.ndarray) else list(map(float, points))
        groups = self._group_list
        totals = self.totals
        if self._teams:
            group_points = [0.0] * self._num_groups
            for seat, p in enumerate(points):
                group_points[groups[seat]] += p
            seat_points = [group_points[g] for g in groups]
        else:
            group_points = seat_points = points
        for g, p in enumerate(group_points):
            totals[g] += p
        index = self.hand_index = self.hand_index + 1
        options = self.options
        target = options.target_score
        if target is None:
            over = True
            winners = self.game.hand_winners(state)
            if winners is None:
                best = max(group_points)
                won = [group_points[g] == best for g in groups]
            elif not self._teams:  # a seat is its own group
                won = [False] * len(groups)
                for w in winners:
                    won[w] = True
            else:
                won_groups = {groups[w] for w in winners}
                won = [g in won_groups for g in groups]
        else:
            seat_totals = np.asarray([totals[g] for g in groups])
            seat_totals.flags.writeable = False  # the observations keep it by identity
            self.seat_totals = seat_totals
            settled = _settled(totals)
            lead = max(settled)
            over = lead >= target and settled.count(lead) == 1  # a tie for the lead plays on
            won = [settled[g] == lead for g in groups]
        mode = options.reward
        if mode == "points":
            rewards = seat_points
        elif mode == "scaled":
            scale = options.reward_scale
            rewards = [p / scale for p in seat_points]
        elif mode == "margin":
            scale = options.reward_scale
            total, sides = sum(group_points), len(group_points)
            rewards = [
                (group_points[g] - (total - group_points[g]) / (sides - 1)) / scale for g in groups
            ]
        elif mode == "lead":
            scale = options.reward_scale
            before = [t - p for t, p in zip(totals, group_points, strict=True)]
            rewards = [(_lead(totals, g) - _lead(before, g)) / scale for g in groups]
        elif not over:
            rewards = None
        elif mode == "rank":
            sides, settled = len(totals), _settled(totals)
            rewards = [
                sum((settled[g] > t) - (settled[g] < t) for t in settled) / (sides - 1)
                for g in groups
            ]
        else:
            tied = all(won) or not any(won)
            rewards = [0.0 if tied else (1.0 if w else -1.0) for w in won]
        hand_info = self.game.hand_info
        infos = []
        match_totals = None
        if target is not None and self._infos:
            match_totals = {a: float(totals[groups[i]]) for i, a in enumerate(self.seat_names)}
        for seat in range(self.num_players if self._infos else 0):
            info = hand_info(state, seat)
            info["points"] = points[seat]
            info["hand_index"] = index
            if match_totals is not None:
                info["totals"] = totals[groups[seat]]
                info["match_totals"] = match_totals
            if over:
                info["winner"] = won[seat]
            infos.append(info)
        truncated_by = None
        if over:
            self.over = True
        elif options.max_hands is not None and index >= options.max_hands:
            self.over = True
            truncated_by = f"max_hands={options.max_hands}"
            for info in infos:
                info["truncated_by"] = truncated_by
        else:
            self.dealer = (self.dealer + 1) % self.num_players
            self._deal(None)
        return HandEnd(
            index,
            state,
            deck,
            points,
            seat_points,
            rewards,
            infos,
            self.over,
            truncated_by,
            won if over else None,
        )
