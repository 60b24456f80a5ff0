"""Knock Rummy heuristics.

``knock.greedy`` (tier 1)
    Takes the top discard when that lowers its optimal deadwood (after its best discard),
    otherwise draws from the stock; discards the card that leaves the lowest deadwood (ties: the
    highest card); knocks as soon as that deadwood is at most ``knock_threshold`` (10).

``knock.smart`` (tier 2)
    Tracks what the table has shown: the discard pile, the cards each opponent took from it and
    the cards each opponent threw, hence which cards are still live (unseen). It takes the top
    discard only when that beats the *expected* deadwood of a stock draw over the live cards;
    among discards that keep deadwood low it throws dead cards (no live partners) and avoids
    cards that fit what an opponent picked up; it knocks when a Monte Carlo estimate of the
    showdown (opponents' hands sampled from the live cards and grown by the turns they have
    had) beats ``knock_margin`` (gin always knocks; never above ``knock_limit`` deadwood), so
    it weighs the undercut risk against the gain. A knock ends the hand, so it knocks with the
    card that leaves the least deadwood, which need not be the card it would discard.

Both read only the observation (decoded by the rules' ``KnockRummyGame.decode``) and the rules
config.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummyzoo.agents.base import BasePolicy, check_parameter
from rummyzoo.envs.cards import NUM_RANKS, PIP_VALUES, mask_cards
from rummyzoo.envs.knock_rummy.rules import (
    DISCARD_BASE,
    DRAW_STOCK,
    KNOCK_BASE,
    TAKE_DISCARD,
    KnockRummyGame,
    KnockView,
    score_showdown,
)
from rummyzoo.envs.match import make_game
from rummyzoo.envs.melds import knock_solver

VALUES = PIP_VALUES.tolist()


#: The most Monte Carlo deals knock.smart takes per knock decision (about 10 us each: at
#: 10,000 a decision takes about 0.1 s; far more would hang a game).
MAX_SAMPLES = 10_000


class DeadwoodCache:
    """Optimal deadwood by hand bitmask, memoised (heuristics ask about the same hands often).

    A hand's deadwood is the same under every rule option, so a process keeps one memo for all
    its users (:func:`shared_deadwood`: the heuristics and the ``knock_deadwood`` features of
    every seat, snapshot and opponent). Each used to keep its own: up to ``limit`` hands in
    each of its two tables, some 150 MB a memo once full, and a four-player run with a pool of
    snapshots kept a dozen."""

    def __init__(self, limit: int = 200_000) -> None:
        self.solver = knock_solver()
        self.cache: dict[int, int] = {}
        self.after_cache: dict[int, dict[int, int]] = {}
        self.limit = limit

    def __getstate__(self) -> dict[str, Any]:
        """A copy (per seat, or in another process) starts with empty memos."""
        return {"solver": self.solver, "cache": {}, "after_cache": {}, "limit": self.limit}

    def __call__(self, hand: int) -> int:
        d = self.cache.get(hand)
        if d is None:
            if len(self.cache) >= self.limit:
                self.cache.clear()
            d = self.cache[hand] = self.solver.solve_mask(hand)[0]
        return d

    def after_discards(self, hand: int) -> dict[int, int]:
        """Deadwood after throwing each card of ``hand`` (memoised per hand)."""
        found = self.after_cache.get(hand)
        if found is None:
            if len(self.after_cache) >= self.limit:
                self.after_cache.clear()
            found = self.after_cache[hand] = self.solver.deadwood_after_discards(hand)
        return found

    def __reduce__(self) -> Any:
        """The process's shared memo stays shared: a copy of it, or one unpickled in another
        process, is that process's own shared memo."""
        if self is _SHARED.get("memo"):
            return (shared_deadwood, ())
        return super().__reduce__()

    def best_discard(self, hand: int, forbidden: int = -1) -> tuple[int, int]:
        """(deadwood, card) of the discard leaving the lowest deadwood; ties: highest card."""
        best_key: tuple[int, int, int] | None = None
        best = (1 << 30, -1)
        for c, d in self.after_discards(hand).items():
            if c == forbidden:
                continue
            key = (d, -VALUES[c], -(c % NUM_RANKS))
            if best_key is None or key < best_key:
                best_key, best = key, (d, c)
        return best


_SHARED: dict[str, DeadwoodCache] = {}


def shared_deadwood() -> DeadwoodCache:
    """This process's deadwood memo, one for all its users (see :class:`DeadwoodCache`)."""
    memo = _SHARED.get("memo")
    if memo is None:
        memo = _SHARED["memo"] = DeadwoodCache()
    return memo


class KnockPolicy(BasePolicy):
    """Shared set-up of the Knock heuristics."""

    def __init__(
        self, variant: str = "knock_rummy", num_players: int = 2, options: dict | None = None
    ):
        if variant != "knock_rummy":
            raise ValueError(f"{type(self).__name__} plays knock_rummy, not {variant}")
        self.game = game = make_game(KnockRummyGame, num_players, dict(options or {}))
        self.rules = game.rules
        self.deadwood = shared_deadwood()

    def _discard_options(self, hand: int, mask: np.ndarray) -> list[tuple[int, int]]:
        """(deadwood after discard, card) for every legal discard."""
        after = self.deadwood.after_discards(hand)
        return [(after[c], c) for c in np.flatnonzero(mask[DISCARD_BASE:KNOCK_BASE]).tolist()]


class GreedyKnock(KnockPolicy):
    """Tier 1: minimise deadwood now; knock at or below a fixed threshold."""

    name = "knock.greedy"

    def __init__(self, *args: Any, knock_threshold: int = 10, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        check_parameter(self.name, "knock_threshold", knock_threshold, "int", low=0)
        self.knock_threshold = knock_threshold

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        seen = self.game.decode(observation)
        hand = seen.hand
        if action_mask[DRAW_STOCK] or action_mask[TAKE_DISCARD]:
            top = seen.top_discard
            if action_mask[TAKE_DISCARD] and top >= 0:
                with_top = hand | (1 << top)
                forbid = -1 if self.rules.allow_discard_of_taken else top
                after, _ = self.deadwood.best_discard(with_top, forbid)
                if after < self.deadwood(hand):
                    return TAKE_DISCARD
            return DRAW_STOCK
        options = self._discard_options(hand, action_mask)
        d, card = min(options, key=lambda o: (o[0], -VALUES[o[1]], -(o[1] % NUM_RANKS)))
        if d <= self.knock_threshold and action_mask[KNOCK_BASE + card]:
            return KNOCK_BASE + card
        return DISCARD_BASE + card


class SmartKnock(KnockPolicy):
    """Tier 2: live-card draws, safe discards and an expected-value knock."""

    name = "knock.smart"

    def __init__(
        self,
        *args: Any,
        samples: int = 24,
        knock_margin: float = 1.0,
        knock_limit: int = 25,
        danger_weight: float = 2.0,
        potential_weight: float = 0.75,
        **kwargs: Any,
    ) -> None:
        """:param samples: Monte Carlo deals of the opponents' hands per knock decision
            (1 to :data:`MAX_SAMPLES`).
        :param knock_margin: expected points a knock must beat (a gin knock, deadwood 0,
            needs no estimate: it always knocks).
        :param knock_limit: the most deadwood it knocks with, whatever the estimate says.
        :param danger_weight: a discard's cost per neighbour of it that an opponent picked up.
        :param potential_weight: a discard's cost per live card it could still meld with."""
        super().__init__(*args, **kwargs)
        check_parameter(self.name, "samples", samples, "int", low=1, high=MAX_SAMPLES)
        check_parameter(self.name, "knock_limit", knock_limit, "int", low=0)
        for key, value in (
            ("knock_margin", knock_margin),
            ("danger_weight", danger_weight),
            ("potential_weight", potential_weight),
        ):
            check_parameter(self.name, key, value)
        self.samples = samples
        self.knock_margin = knock_margin
        self.knock_limit = knock_limit
        self.danger_weight = danger_weight
        self.potential_weight = potential_weight

    # -- helpers ---------------------------------------------------------------
    @staticmethod
    def _neighbours(card: int) -> int:
        """Cards that can share a meld with ``card``: same rank, or within 2 in its suit."""
        rank, suit = card % NUM_RANKS, card // NUM_RANKS
        out = 0
        for s in range(4):
            if s != suit:
                out |= 1 << (s * NUM_RANKS + rank)
        for dr in (-2, -1, 1, 2):
            r = rank + dr
            if 0 <= r < NUM_RANKS:
                out |= 1 << (suit * NUM_RANKS + r)
        return out

    def _expected_stock(self, hand: int, live: int) -> float:
        """Mean deadwood after drawing a live card and making the best discard."""
        cards = mask_cards(live)
        if not cards:
            return float(self.deadwood(hand))
        total = 0
        for u in cards:
            total += self.deadwood.best_discard(hand | (1 << u))[0]
        return total / len(cards)

    def _knock_value(self, d: int, seen: KnockView, live: int, rng: np.random.Generator) -> float:
        """Monte Carlo expected points of knocking now with deadwood ``d``."""
        n = self.rules.num_players
        size = self.rules.hand_size
        live_cards = np.asarray(mask_cards(live), dtype=np.int64)
        extra = min(seen.turn // n, 4)  # opponents have been improving their hands
        total = 0.0
        for _ in range(self.samples):
            pool = rng.permutation(live_cards).tolist()
            deadwood = [d]
            for k in range(n - 1):
                known = mask_cards(seen.opponent_known[k])
                need = max(size - len(known), 0) + extra
                drawn, pool = pool[:need], pool[need:]
                hand = 0
                for c in known + drawn:
                    hand |= 1 << c
                # Keep the best `size` cards: drop the highest deadwood cards of the larger hand.
                dw, melds = self.deadwood.solver.solve_mask(hand)
                melded = 0
                for m in melds:
                    melded |= m
                loose = sorted((VALUES[c] for c in mask_cards(hand & ~melded)), reverse=True)
                drop = max(len(known) + len(drawn) - size, 0)
                deadwood.append(dw - sum(loose[:drop]))
            total += float(score_showdown(deadwood, 0, self.rules)[0])
        return total / self.samples

    # -- policy ----------------------------------------------------------------
    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        seen = self.game.decode(observation)
        hand = seen.hand
        live = seen.unseen
        if action_mask[DRAW_STOCK] or action_mask[TAKE_DISCARD]:
            top = seen.top_discard
            if action_mask[TAKE_DISCARD] and top >= 0:
                forbid = -1 if self.rules.allow_discard_of_taken else top
                after, _ = self.deadwood.best_discard(hand | (1 << top), forbid)
                if (
                    after < self.deadwood(hand)
                    and after <= self._expected_stock(hand, live)
                    and not (forbid < 0 and self._throws_back(seen, top, after, rng))
                ):
                    return TAKE_DISCARD
            if not action_mask[DRAW_STOCK]:
                return TAKE_DISCARD
            return DRAW_STOCK
        options = self._discard_options(hand, action_mask)
        cost = self._discard_cost(seen)
        # A knock ends the hand: only the deadwood it leaves counts then, so it knocks with the
        # legal knock card that leaves the least (ties: the discard order's), not with the card
        # it would discard.
        costs = {o: cost(o) for o in options}
        knocks = [o for o in options if action_mask[KNOCK_BASE + o[1]]]
        if knocks:
            d, card = min(knocks, key=lambda o: (o[0], costs[o]))
            if self._knocks(d, seen, rng):
                return KNOCK_BASE + card
        return DISCARD_BASE + min(options, key=costs.__getitem__)[1]

    def _knocks(self, d: int, seen: KnockView, rng: np.random.Generator) -> bool:
        """Whether it knocks leaving deadwood ``d`` (where the rules let it)."""
        return d == 0 or (
            d <= self.knock_limit
            and self._knock_value(d, seen, seen.unseen, rng) > self.knock_margin
        )

    def _discard_cost(self, seen: KnockView) -> Any:
        """The cost of a discard option ``(deadwood after it, card)``: the deadwood kept, plus
        the value of what the card could still become (live neighbours) and the help it would
        give an opponent (neighbours they picked up); ties by higher value, then rank."""
        live = seen.unseen
        opp_known = 0
        opp_thrown = 0
        for k in seen.opponent_known:
            opp_known |= k
        for t in seen.opponent_thrown:
            opp_thrown |= t

        def cost(option: tuple[int, int]) -> tuple[float, int, int]:
            d, c = option
            near = self._neighbours(c)
            danger = (near & opp_known).bit_count()
            if (1 << c) & opp_thrown:  # an opponent threw this very card: it is safe
                danger = 0
            potential = (near & live).bit_count()
            value = d + self.danger_weight * danger + self.potential_weight * potential
            return (value, -VALUES[c], -(c % NUM_RANKS))

        return cost

    def _throws_back(self, seen: KnockView, top: int, after: int, rng: np.random.Generator) -> bool:
        """Whether, having taken ``top`` where the rules let it be thrown again the same turn,
        it would throw it: the discard its cost picks is that card (an opponent threw it, so
        it counts as safe), and it would not knock first (with the best discard's deadwood
        ``after``, where the rules allow that knock). Two such players took and threw back one
        card for ever, and the hand ran to its turn cap."""
        with_top = seen.hand | (1 << top)
        after_each = self.deadwood.after_discards(with_top)
        cost = self._discard_cost(seen)
        card = min(((after_each[c], c) for c in mask_cards(with_top)), key=cost)[1]
        if card != top:
            return False
        limit = self.rules.knock_max_deadwood
        return not ((limit is None or after <= limit) and self._knocks(after, seen, rng))
