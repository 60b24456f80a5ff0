"""Ditch Rummy heuristics.

``ditch.greedy`` (tier 1)
    Draws as many cards as it may, then plays the line of melds and singles that scores the most
    right now (a blind run 25, a set 5, a single 2 or an ace 10; every order is searched, singles
    off its own new melds included). Of the cards left it keeps those that a live card (one not
    yet seen in its hand, on the table or in the discard pile) could still meld with, leaving
    room to draw, and ditches the rest (everything on the hand's last turn).

``ditch.smart`` (tier 2)
    Searches the same lines but values each by its points plus what the cards it keeps are worth
    next turn: the chance that the cards it draws make a blind run (25) or a set with them,
    counted over the live cards, against what fresh cards would bring in their place, and the
    singles that fit the table. So it keeps a card with many live neighbours, ditches dead or
    poor ones to draw fresh cards, and may hold back a single that is worth more as half of a
    run. Held cards cost their penalty if the hand ends first, so it keeps nothing once the next
    players can empty the draw pile. It melds J-Q-K or Q-K-A (ending the hand) only when that
    surely wins the hand, or the match when someone reaches the target, and never while behind;
    otherwise those cards score as a two-card run and a single.

Both read only the observation (decoded by the rules' ``DitchRummyGame.decode``) and the rules
config.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np

from rummyzoo.agents.base import BasePolicy, check_parameter
from rummyzoo.envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from rummyzoo.envs.ditch_rummy.rules import (
    ACE,
    MAX_DRAW,
    NO_MELD,
    RUN,
    SET,
    DitchRummyGame,
    DitchView,
    Fits,
    Phase,
    ends_hand,
)
from rummyzoo.envs.match import make_game

__all__ = ["DitchPolicy", "GreedyDitch", "PlayPlanner", "SmartDitch"]

#: Order ids (``rank * 4 + suit``, 2 low ... A high) of one game rank, as a bitmask.
RANK_BITS = tuple(((1 << NUM_SUITS) - 1) << (NUM_SUITS * r) for r in range(NUM_RANKS))


def meld_partners(game: DitchRummyGame, o: int, kind: int) -> int:
    """The cards (order ids, as a bitmask) that make a two-card meld of ``kind`` with ``o``."""
    out = 0
    for p in range(NUM_CARDS):
        if p != o and game.meld_kind((min(o, p), max(o, p))) == kind:
            out |= 1 << p
    return out


class Outcome(NamedTuple):
    """Where one line of plays from the current hand stops.

    :param points: points the plays earn.
    :param hand: cards left (order ids, sorted).
    :param ended: the last play was a J-Q-K / Q-K-A run, which ends the hand.
    :param fits: what a single fits afterwards.
    :param first: the action that starts the line (None: play nothing).
    """

    points: int
    hand: tuple[int, ...]
    ended: bool
    fits: Fits
    first: int | None


class PlayPlanner:
    """Every line of melds and singles a hand can play: the rules' meld kinds, points and action
    ids, with the fits they leave modelled on the observation's fit planes.

    Melds never depend on singles and only add fits, so a line is searched as: a set of
    disjoint melds, then singles (in any order unless ``single_extends_meld`` makes the order
    matter), then at most one J-Q-K / Q-K-A run, which ends the hand (every single that fits is
    played before it: the hand is over afterwards, so holding a card back only costs).
    """

    #: Lines searched per decision at most (only huge ``up_to_3`` hands come near it).
    BUDGET = 2000
    #: With more fitting cards than this, lines keep back at most one of them.
    MAX_SINGLE_SUBSET = 4

    def __init__(self, game: DitchRummyGame) -> None:
        rules = game.rules
        self.same_suit = rules.runs_same_suit
        self.extends = rules.single_extends_meld
        self.meld_points = game.meld_points
        self.single_points = game.single_points
        self.meld_kind = game.meld_kind
        self.meld_action = game.meld_action
        self.single_action = game.single_action
        self._budget = 0

    def end_cards(self, rank: int, suit: int) -> int:
        """Cards of ``rank`` that fit a run end (only ``suit`` with same-suit runs)."""
        if not 0 <= rank <= ACE:
            return 0
        if self.same_suit:
            return 1 << (rank * NUM_SUITS + suit)
        return RANK_BITS[rank]

    def after_meld(self, fits: Fits, kind: int, orders: tuple[int, ...]) -> Fits:
        """Fits once ``orders`` are melded."""
        low, high = orders[0] >> 2, orders[-1] >> 2
        if kind == SET:
            return Fits(fits.set_ranks | (1 << low), fits.below, fits.above)
        suit = orders[0] & 3
        return Fits(
            fits.set_ranks,
            fits.below | self.end_cards(low - 1, suit),
            fits.above | self.end_cards(high + 1, suit),
        )

    def targets(self, o: int, fits: Fits) -> list[int]:
        """Single targets open to card ``o`` (0 = set, 1 = below a run, 2 = above a run)."""
        out = []
        if fits.set_ranks >> (o >> 2) & 1:
            out.append(0)
        if fits.below >> o & 1:
            out.append(1)
        if fits.above >> o & 1:
            out.append(2)
        return out

    def fits_card(self, o: int, fits: Fits) -> bool:
        """Card ``o`` can be played as a single now."""
        return bool(fits.set_ranks >> (o >> 2) & 1 or (fits.below | fits.above) >> o & 1)

    @staticmethod
    def fit_mask(fits: Fits) -> int:
        """The cards (order ids, as a bitmask) that can be played as a single now: those of
        :meth:`fits_card`, all at once."""
        mask = fits.below | fits.above
        ranks = fits.set_ranks
        while ranks:
            low = ranks & -ranks
            mask |= RANK_BITS[low.bit_length() - 1]
            ranks ^= low
        return mask

    def after_single(self, fits: Fits, o: int, target: int) -> Fits:
        """Fits after a single joins a run end (``single_extends_meld``); the end moves on.

        Several runs may share an end; the fits do not say (the table's melds do), so the old
        end is assumed gone (this only makes the plan cautious; actions are always checked
        against the mask).
        """
        if not self.extends or target == 0:
            return fits
        rank, suit = o >> 2, o & 3
        gone = self.end_cards(rank, suit)
        if target == 1:
            below = (fits.below & ~gone) | self.end_cards(rank - 1, suit)
            return Fits(fits.set_ranks, below, fits.above)
        above = (fits.above & ~gone) | self.end_cards(rank + 1, suit)
        return Fits(fits.set_ranks, fits.below, above)

    # -- search ---------------------------------------------------------------------------------
    def outcomes(self, hand: tuple[int, ...], fits: Fits) -> list[Outcome]:
        """Where the lines of plays from ``hand`` can stop (the first one plays nothing)."""
        out: list[Outcome] = []
        self._budget = self.BUDGET
        self._melds(hand, 0, 0, fits, 0, [], None, out)
        return out

    def _melds(
        self,
        hand: tuple[int, ...],
        i: int,
        used: int,
        fits: Fits,
        points: int,
        melds: list[tuple[int, ...]],
        ending: tuple[int, ...] | None,
        out: list[Outcome],
    ) -> None:
        """Choose disjoint melds: card ``i`` (the lowest one not decided) joins none or one."""
        n = len(hand)
        while i < n and used >> i & 1:
            i += 1
        if i == n or self._budget <= 0:
            self._singles_then_stop(hand, used, fits, points, melds, ending, out)
            return
        self._budget -= 1
        self._melds(hand, i + 1, used, fits, points, melds, ending, out)
        rank = hand[i] >> 2
        partners = [j for j in range(i + 1, n) if not used >> j & 1 and (hand[j] >> 2) - rank <= 2]
        for a, j in enumerate(partners):
            for combo in [(i, j)] + [(i, j, k) for k in partners[a + 1 :]]:
                orders = tuple(hand[p] for p in combo)
                kind = self.meld_kind(orders)
                if kind == NO_MELD:
                    continue
                taken = used
                for p in combo:
                    taken |= 1 << p
                if ends_hand(kind, orders):
                    if ending is None:
                        self._melds(hand, i + 1, taken, fits, points, melds, combo, out)
                    continue
                gain = self.meld_points[kind]
                self._melds(
                    hand,
                    i + 1,
                    taken,
                    self.after_meld(fits, kind, orders),
                    points + gain,
                    [*melds, combo],
                    ending,
                    out,
                )

    def _singles_then_stop(
        self,
        hand: tuple[int, ...],
        used: int,
        fits: Fits,
        points: int,
        melds: list[tuple[int, ...]],
        ending: tuple[int, ...] | None,
        out: list[Outcome],
    ) -> None:
        first = self.meld_action(melds[0]) if melds else None
        left = tuple(p for p in range(len(hand)) if not used >> p & 1)
        if ending is not None:
            # Play every single that fits, then the run that ends the hand.
            for p in left:
                if self.fits_card(hand[p], fits):
                    target = self.targets(hand[p], fits)[0]
                    if first is None:
                        first = self.single_action(p, target)
                    points += self.single_points[hand[p]]
                    fits = self.after_single(fits, hand[p], target)
                    used |= 1 << p
            if first is None:
                first = self.meld_action(ending)
            rest = tuple(hand[p] for p in range(len(hand)) if not used >> p & 1)
            out.append(Outcome(points + self.meld_points[RUN], rest, True, fits, first))
            return
        if self.extends:
            self._single_sequences(hand, left, fits, points, first, out, {})
            return
        fitting = [p for p in left if self.fits_card(hand[p], fits)]
        k = len(fitting)
        if k <= self.MAX_SINGLE_SUBSET:
            choices = range(1 << k)
        else:
            full = (1 << k) - 1
            choices = [full] + [full & ~(1 << b) for b in range(k)]
        for subset in choices:
            played = [fitting[b] for b in range(k) if subset >> b & 1]
            gain = sum(self.single_points[hand[p]] for p in played)
            rest = tuple(hand[p] for p in left if p not in played)
            start = first
            if start is None and played:
                start = self.single_action(played[0], 0)
            out.append(Outcome(points + gain, rest, False, fits, start))

    def _single_sequences(
        self,
        hand: tuple[int, ...],
        left: tuple[int, ...],
        fits: Fits,
        points: int,
        first: int | None,
        out: list[Outcome],
        best: dict[tuple[Any, ...], int],
    ) -> None:
        """Singles one by one (their order matters when they move run ends)."""
        key = (left, fits)
        if best.get(key, -1) >= points:
            return
        best[key] = points
        out.append(Outcome(points, tuple(hand[p] for p in left), False, fits, first))
        if self._budget <= 0:
            return
        self._budget -= 1
        for idx, p in enumerate(left):
            o = hand[p]
            for target in self.targets(o, fits):
                self._single_sequences(
                    hand,
                    left[:idx] + left[idx + 1 :],
                    self.after_single(fits, o, target),
                    points + self.single_points[o],
                    self.single_action(p, target) if first is None else first,
                    out,
                    best,
                )


class DitchPolicy(BasePolicy):
    """Shared set-up and turn structure of the Ditch heuristics.

    A turn: draw as many cards as allowed; play the first action of the best line of melds and
    singles (searched again at every decision); then ditch what is not worth keeping and end
    the turn. Subclasses value a line (:meth:`line_value`) and choose the cards to keep
    (:meth:`keep`).
    """

    def __init__(
        self,
        variant: str = "ditch_rummy",
        num_players: int = 2,
        options: dict[str, Any] | None = None,
    ) -> None:
        if variant != "ditch_rummy":
            raise ValueError(f"{type(self).__name__} plays ditch_rummy, not {variant}")
        self.game = game = make_game(DitchRummyGame, num_players, dict(options or {}))
        self.rules = game.rules
        self.planner = PlayPlanner(game)
        self.n = num_players
        self.max_hand = game.max_hand
        self.ditch_base = game.ditch_base
        self.ditch_all = game.ditch_all
        self.end_turn = game.end_turn
        self.penalty = game.card_penalty
        # run and set partners of each card (the cards it makes a two-card meld with), as
        # bitmasks over order ids
        self.run_partners = [self._partners(o, RUN) for o in range(NUM_CARDS)]
        self.set_partners = [self._partners(o, SET) for o in range(NUM_CARDS)]

    def _partners(self, o: int, kind: int) -> int:
        return meld_partners(self.game, o, kind)

    # -- the turn -----------------------------------------------------------------------------
    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        seen = self.game.decode(observation)
        if seen.phase == Phase.DRAW:
            # Both tiers draw all they may: a card that does not score is ditched for free.
            return self._legal(max(k for k in range(MAX_DRAW + 1) if action_mask[k]), action_mask)
        if seen.phase == Phase.PLAY:
            lines = self.planner.outcomes(seen.hand, seen.fits)
            best = max(lines, key=lambda line: self.line_value(line, seen))
            if best.first is not None and action_mask[best.first]:
                return best.first
        return self._finish(seen, action_mask)

    def _finish(self, seen: DitchView, mask: np.ndarray) -> int:
        """Ditch the cards not worth keeping (one at a time, or all at once), then end the turn."""
        kept = set(self.keep(seen, seen.hand))
        ditch = [pos for pos, o in enumerate(seen.hand) if o not in kept]
        if len(ditch) == len(seen.hand) >= 2 and mask[self.ditch_all]:
            return self.ditch_all
        if ditch and mask[self.ditch_base + ditch[0]]:
            return self.ditch_base + ditch[0]
        return self._legal(self.end_turn, mask)

    @staticmethod
    def _legal(action: int, mask: np.ndarray) -> int:
        if mask[action]:
            return action
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("act called with an all-zero action mask")
        return int(legal[-1])

    # -- shared judgements ----------------------------------------------------------------------
    def ending_penalty(self, hand: Iterable[int]) -> int:
        """What ``hand`` costs if the hand ends now."""
        return sum(self.penalty[o] for o in hand)

    def can_still_score(self, o: int, seen: DitchView) -> bool:
        """A live card could meld with ``o``, or ``o`` fits the table as a single."""
        if (self.run_partners[o] | self.set_partners[o]) & seen.unseen:
            return True
        return bool(self.planner.targets(o, seen.fits))

    def line_value(self, line: Outcome, seen: DitchView) -> float:
        raise NotImplementedError

    def keep(self, seen: DitchView, hand: tuple[int, ...]) -> tuple[int, ...]:
        raise NotImplementedError


class GreedyDitch(DitchPolicy):
    """Tier 1: the most points right now; keep what could still score, ditch the rest."""

    name = "ditch.greedy"

    def line_value(self, line: Outcome, seen: DitchView) -> float:
        if line.ended:
            return line.points - self.ending_penalty(line.hand)
        return float(line.points)

    def keep(self, seen: DitchView, hand: tuple[int, ...]) -> tuple[int, ...]:
        if seen.stock == 0:  # the hand ends after this turn: nothing can score any more
            return ()
        kept = tuple(o for o in hand if self.can_still_score(o, seen))
        return kept[: self.max_hand - 1]  # leave room to draw


class SmartDitch(DitchPolicy):
    """Tier 2: points now plus what the kept cards are worth next turn; ends the hand to win."""

    name = "ditch.smart"

    #: Score of a line that wins (or loses) the hand or match outright by ending it.
    DECISIVE = 1e6

    def __init__(
        self, *args: Any, end_risk: float = 0.02, draw_weight: float = 0.0, **kwargs: Any
    ) -> None:
        """:param end_risk: chance that a rival ends the hand with a run before the next turn
        (when the draw pile is too big for them to empty it).
        :param draw_weight: what a draw given up by keeping a card costs beyond its own worth,
        as a share of a fresh card's expected points (the pile is shared: a card one player
        does not draw, another may; 0 counts only the drawer's own points)."""
        super().__init__(*args, **kwargs)
        check_parameter(self.name, "end_risk", end_risk, low=0, high=1)
        check_parameter(self.name, "draw_weight", draw_weight)
        self.end_risk = end_risk
        self.draw_weight = draw_weight
        rules = self.rules
        self.min_penalty = min(self.penalty[0], self.penalty[ACE * NUM_SUITS])
        self.max_penalty = max(self.penalty)
        self.draws_now = min(MAX_DRAW, self.max_hand)
        self._stats_key: Any = None
        self._stats: dict[Fits, tuple[float, ...]] = {}
        self._pairs_live = -1  # the live cards that _pairs is of
        self._pairs: tuple[int, float, float] = (1, 0.0, 0.0)
        self._end = 0.0
        self.points_run = rules.points_run
        self.points_set = rules.points_set

    # -- standings ------------------------------------------------------------------------------
    def _groups(self, seen: DitchView) -> tuple[list[int], list[list[int]]]:
        """Own group's seats and each opposing group's seats (relative seats)."""
        own = [s for s in range(self.n) if seen.teammates[s]]
        if self.rules.teams:
            return own, [[s for s in range(self.n) if not seen.teammates[s]]]
        return own, [[s] for s in range(1, self.n)]

    def _ending_wins(self, seen: DitchView, gain: int, held: tuple[int, ...]) -> bool | None:
        """Whether ending the hand now, after earning ``gain`` and holding ``held``, surely wins
        (True: a rival's hidden cards counted at the cheapest penalty, a partner's at the
        dearest), may lose (False), or leaves the match open (None: in a match, nobody's total
        reaches the target)."""
        own, rivals = self._groups(seen)
        mine = sum(seen.hand_points[s] for s in own) + gain - self.ending_penalty(held)
        # a partner's cards are unknown: count them at the dearest penalty
        mine -= sum(seen.hand_sizes[s] for s in own if s != 0) * self.max_penalty
        theirs = [
            sum(seen.hand_points[s] - self.min_penalty * seen.hand_sizes[s] for s in group)
            for group in rivals
        ]
        target = self.game.match.target_score
        if target is None:
            return mine > max(theirs)
        mine += seen.scores[0]
        totals = [t + seen.scores[group[0]] for t, group in zip(theirs, rivals, strict=True)]
        if max([*totals, mine]) < target:
            return None
        return mine > max(totals)

    # -- decisions ------------------------------------------------------------------------------
    def line_value(self, line: Outcome, seen: DitchView) -> float:
        if line.ended:
            verdict = self._ending_wins(seen, line.points, line.hand)
            if verdict is not None:
                return self.DECISIVE if verdict else -self.DECISIVE
            return line.points - self.ending_penalty(line.hand)
        return line.points + self._best_keep(seen, line.hand, line.fits)[0]

    def keep(self, seen: DitchView, hand: tuple[int, ...]) -> tuple[int, ...]:
        return self._best_keep(seen, hand, seen.fits)[1]

    # -- what kept cards are worth --------------------------------------------------------------
    def _end_chance(self, seen: DitchView) -> float:
        """Chance that the hand ends before this player's next turn."""
        if seen.stock == 0:
            return 1.0
        capacity = sum(min(MAX_DRAW, self.max_hand - seen.hand_sizes[s]) for s in range(1, self.n))
        return 1.0 if seen.stock <= capacity else self.end_risk

    def _table_stats(self, seen: DitchView, fits: Fits) -> tuple[float, ...]:
        """(live cards, chance two fresh cards make a run / a set, mean single points of a fresh
        card, chance the hand ends before the next turn); cached per position and fits (the
        pair chances depend on the live cards alone, which stay the same through a turn)."""
        key = (seen.unseen, seen.stock, seen.hand_sizes)
        if key != self._stats_key:
            self._stats_key = key
            self._stats = {}
            if seen.unseen != self._pairs_live:
                self._pairs_live = seen.unseen
                self._pairs = self._live_pairs(seen.unseen)
            self._end = self._end_chance(seen)
        found = self._stats.get(fits)
        if found is not None:
            return found
        m, q_run, q_set = self._pairs
        single = 0
        rest = seen.unseen & self.planner.fit_mask(fits)
        points = self.planner.single_points
        while rest:
            low = rest & -rest
            single += points[low.bit_length() - 1]
            rest ^= low
        found = (m, q_run, q_set, single / m, self._end)
        self._stats[fits] = found
        return found

    def _live_pairs(self, live: int) -> tuple[int, float, float]:
        """(live cards, chance two fresh cards make a run / a set) for the ``live`` cards."""
        run_pairs = set_pairs = 0
        run_partners, set_partners = self.run_partners, self.set_partners
        rest = live
        while rest:
            low = rest & -rest
            o = low.bit_length() - 1
            run_pairs += (run_partners[o] & live).bit_count()
            set_pairs += (set_partners[o] & live).bit_count()
            rest ^= low
        m = live.bit_count()
        pairs = max(m * (m - 1), 1)
        return max(m, 1), run_pairs / pairs, set_pairs / pairs

    def _best_keep(
        self, seen: DitchView, hand: tuple[int, ...], fits: Fits
    ) -> tuple[float, tuple[int, ...]]:
        """(worth of the best cards to keep, compared with ditching all of ``hand``; the cards):
        the best of :meth:`_keep_values`, or nothing kept (worth 0)."""
        best: tuple[float, tuple[int, ...]] = (0.0, ())
        for value, kept in self._keep_values(seen, hand, fits):
            if value > best[0]:
                best = (value, kept)
        return best

    def _keep_values(
        self, seen: DitchView, hand: tuple[int, ...], fits: Fits
    ) -> list[tuple[float, tuple[int, ...]]]:
        """For each number of cards kept (1 to all of ``hand``): the worth of keeping the best
        that many, compared with ditching all of ``hand``, and those cards.

        Next turn's hand is the kept cards plus ``d`` fresh draws (``d`` falls as more is
        kept). Its worth counts the expected run and set pairs (a kept card with ``a`` live
        partners pairs with a draw with chance ``a / live``; two fresh cards with the average
        chance), the singles that fit the table, and the penalty the kept cards cost if the hand
        ends first. Kept cards add up, so for each number kept the best are the top cards.
        """
        if not hand:
            return []
        m, q_run, q_set, fresh_single, end = self._table_stats(seen, fits)
        live = seen.unseen
        go_on = 1.0 - end
        d0 = self.draws_now
        fresh_pair = self.points_run * q_run + self.points_set * q_set
        # a fresh card's expected points (of a full draw's pairs and singles, per card)
        fresh_card = ((d0 - 1) / 2 * fresh_pair + fresh_single) if self.draw_weight else 0.0
        cards = []
        for o in hand:
            pairs = self.points_run * (self.run_partners[o] & live).bit_count()
            pairs += self.points_set * (self.set_partners[o] & live).bit_count()
            single = self.planner.single_points[o] if self.planner.fits_card(o, fits) else 0
            cards.append((pairs / m, go_on * single - end * self.penalty[o], o))
        out: list[tuple[float, tuple[int, ...]]] = []
        ranked: list[tuple[float, int]] = []
        last_d = -1
        for size in range(1, len(hand) + 1):
            d = max(0, min(MAX_DRAW, self.max_hand - size))
            if d != last_d:  # the ranking of the cards depends only on the draws
                ranked = sorted(((go_on * d * p + rest, o) for p, rest, o in cards), reverse=True)
                last_d = d
            base = go_on * (
                (d * (d - 1) - d0 * (d0 - 1)) / 2 * fresh_pair + (d - d0) * fresh_single
            )
            if self.draw_weight:
                base += go_on * self.draw_weight * (d - d0) * fresh_card
            value = base + sum(w for w, _ in ranked[:size])
            out.append((value, tuple(sorted(o for _, o in ranked[:size]))))
        return out

    # -- what each action is worth --------------------------------------------------------------
    def action_worths(self, seen: DitchView) -> dict[int, tuple[float, int]]:
        """What each action of the play phase is worth as this player weighs it: action id ->
        (points it leads to now plus the worth of the cards then kept, the verdict of ending
        the hand: 1 it surely wins, -1 it is not sure to win, 0 it does not end it or, in a
        match, its end takes nobody to the target: :meth:`_ending_wins`).

        A meld or single is worth its points plus the best line of plays that can follow it
        (:meth:`line_value`, stopping at once included; a decisive line counts its points less
        the penalty of the cards still held); ditching a card, the best cards to keep of the
        rest; ditching all, 0; ending the turn, keeping every card. Empty outside the play
        phase.
        """
        if seen.phase != Phase.PLAY:
            return {}
        hand, fits = seen.hand, seen.fits
        planner = self.planner
        out: dict[int, tuple[float, int]] = {}

        def ending(points: int, held: tuple[int, ...]) -> tuple[int, float]:
            # (verdict, worth) of a line that ends the hand having earned points, holding held
            ends = self._ending_wins(seen, points, held)
            verdict = 0 if ends is None else (1 if ends else -1)
            return verdict, float(points - self.ending_penalty(held))

        def follow(action: int, points: int, rest: tuple[int, ...], after: Fits) -> None:
            best: tuple[int, float] | None = None
            for line in planner.outcomes(rest, after):
                total = line.points + points
                if line.ended:
                    found = ending(total, line.hand)
                else:
                    found = (0, total + self._best_keep(seen, line.hand, line.fits)[0])
                if best is None or found > best:
                    best = found
            assert best is not None  # the planner always returns at least one line
            out[action] = (best[1], best[0])

        for size in (2, 3):
            for combo in combinations(range(len(hand)), size):
                cards = tuple(hand[p] for p in combo)
                kind = planner.meld_kind(cards)
                if kind == NO_MELD:
                    continue
                rest = tuple(o for p, o in enumerate(hand) if p not in combo)
                action = planner.meld_action(combo)
                if ends_hand(kind, cards):
                    verdict, worth = ending(planner.meld_points[kind], rest)
                    out[action] = (worth, verdict)
                    continue
                after = planner.after_meld(fits, kind, cards)
                follow(action, planner.meld_points[kind], rest, after)
        for pos, o in enumerate(hand):
            rest = hand[:pos] + hand[pos + 1 :]
            for target in planner.targets(o, fits):
                action = planner.single_action(pos, target)
                follow(
                    action, planner.single_points[o], rest, planner.after_single(fits, o, target)
                )
            out[self.ditch_base + pos] = (self._best_keep(seen, rest, fits)[0], 0)
        if len(hand) >= 2:
            out[self.ditch_all] = (0.0, 0)
        whole = self._keep_values(seen, hand, fits)
        out[self.end_turn] = (whole[-1][0] if whole else 0.0, 0)
        return out
