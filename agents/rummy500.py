"""500 Rum heuristics.

Both tiers share one planner: from the cards in hand and the lay-off targets on the table it
finds the plays (own runs and sets of any length, chains of lay-offs onto runs on the table,
single lay-offs onto sets) that put the most value on the table, counting each card twice: the
points it scores and the penalty it no longer risks.

``rummy500.greedy`` (tier 1)
    Plays the best plan at once, highest-scoring play first. It digs into the discard pile when
    the chosen card (and the cards above it) can be melded or laid off for points straight away
    and the extra points of the plan beat half the value of the cards it would be stuck with;
    otherwise it draws from the stock. It discards the highest card that has the fewest partners
    (cards of its rank, or of its suit within two ranks) in hand.

``rummy500.smart`` (tier 2)
    Values a dig by the points of everything the haul lets it meld and lay off, minus the risk of
    the cards it cannot use yet, a risk that grows as the hand nears its end (a short stock, an
    opponent with few cards); a card it cannot use now still counts for the live cards that
    would complete it. It digs when that beats a small allowance for a fresh stock card. It lays off
    at once but holds back a three-card meld of its own while the hand is young, because a meld
    on the table is a target for the opponents' lay-offs (unless every card that could extend it
    is already out of play); once the stock runs short, an opponent is close to going out or it can
    go out itself, it puts everything down. Its discards avoid feeding the opponents: cards that
    fit a meld on the table (anyone may lay them off), cards that go with cards an opponent dug
    out of the pile and cards that meld with what already lies in the pile (an opponent could
    dig them out together); among safe cards it throws high, dead ones (no live partners),
    keeping the melds it holds back and cards that still have live cards to complete them.

Both read only the observation (decoded by the rules' ``Rummy500Game.decode``) and the rules
config.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import numpy as np

from rummyzoo.agents.base import BasePolicy, check_parameter
from rummyzoo.envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, mask_cards
from rummyzoo.envs.match import make_game
from rummyzoo.envs.melds import RUMMY500_PLAYS, meld_table
from rummyzoo.envs.rummy500.rules import (
    Rummy500Game,
    Rummy500View,
    completes_meld,
    dig_start,
    run_extensions,
)
from rummyzoo.envs.rummy500.tables import (
    ACE_HIGH_POS,
    ACE_LOW_POS,
    BIT,
    CARD_VALUE,
    DIG_BASE,
    DISCARD_BASE,
    DRAW_STOCK,
    LAY_HIGH_BASE,
    LAY_LOW_BASE,
    LAY_SET_BASE,
    MELD_BASE,
    MELD_BY_CARDS,
    PASS,
    RUNS_PER_SUIT,
    SUIT_BITS,
    pos_card,
    pos_value,
)

__all__ = [
    "GreedyRummy500",
    "Planner",
    "Play",
    "Rummy500Policy",
    "SmartRummy500",
]

#: Kinds of :class:`Play`: an own run or set, a chain of lay-offs below / above a table run,
#: one lay-off onto a set.
OWN_RUN, OWN_SET, CHAIN_HIGH, CHAIN_LOW, LAY_ON_SET = range(5)
#: The runs (3+) and sets (3 or 4) a hand can put down, from the shared meld table.
PLAYS = meld_table(RUMMY500_PLAYS)


def card_pos(card: int, high: bool) -> int:
    """Run position of ``card``; an ace is position 13 when ``high`` else 0."""
    rank = card % NUM_RANKS
    if rank == 0:
        return ACE_HIGH_POS if high else ACE_LOW_POS
    return rank


def neighbours(card: int) -> int:
    """Cards that can share a meld with ``card``: its rank in other suits, its suit within two."""
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    out = 0
    for s in range(NUM_SUITS):
        if s != suit:
            out |= BIT[s * NUM_RANKS + rank]
    for d in (-2, -1, 1, 2):
        r = rank + d
        if 0 <= r < NUM_RANKS:
            out |= BIT[suit * NUM_RANKS + r]
    if rank in (11, 12):  # Q-K-A
        out |= BIT[suit * NUM_RANKS]
    if rank == 0:
        out |= BIT[suit * NUM_RANKS + 11] | BIT[suit * NUM_RANKS + 12]
    return out


NEIGHBOURS = tuple(neighbours(c) for c in range(NUM_CARDS))


class Play:
    """One step of a plan: an own meld, a chain of lay-offs onto a table run, or one set lay-off.

    ``gain`` = points scored + value no longer held (the two differ only for a low ace).
    """

    __slots__ = ("cards", "gain", "kind", "mask", "points", "positions")

    def __init__(self, kind: int, cards: tuple[int, ...], positions: tuple[int, ...]) -> None:
        self.kind = kind
        self.cards = cards
        self.positions = positions
        self.mask = sum(BIT[c] for c in cards)
        if kind in (OWN_RUN, CHAIN_HIGH, CHAIN_LOW):
            self.points = sum(pos_value(p, c) for p, c in zip(positions, cards, strict=True))
        else:
            self.points = sum(CARD_VALUE[c] for c in cards)
        self.gain = self.points + sum(CARD_VALUE[c] for c in cards)

    def leads_with(self, card: int) -> bool:
        """Whether the first action of this play can contain ``card``."""
        if self.kind in (OWN_RUN, OWN_SET):
            return card in self.cards
        return self.cards[0] == card

    def first_action(self, pending: int = -1) -> int:
        """The action that starts this play (containing ``pending`` when it is one of its cards)."""
        if self.kind == OWN_RUN:
            k = len(self.cards)
            start = 0
            if pending in self.cards:
                start = min(max(self.cards.index(pending) - 1, 0), k - 3)
            suit = self.cards[0] // NUM_RANKS
            return MELD_BASE + suit * RUNS_PER_SUIT + self.positions[start]
        if self.kind == OWN_SET:
            trio = list(self.cards[:3])
            if pending in self.cards and pending not in trio:
                trio[0] = pending
            return MELD_BASE + MELD_BY_CARDS[frozenset(trio)]
        if self.kind == CHAIN_HIGH:
            return LAY_HIGH_BASE + self.cards[0]
        if self.kind == CHAIN_LOW:
            return LAY_LOW_BASE + self.cards[0]
        return LAY_SET_BASE + self.cards[0]


class Planner:
    """Best plays for a hand and the table's lay-off targets, memoised."""

    def __init__(self, limit: int = 100_000) -> None:
        self.memo: dict[tuple[int, int, tuple[int, int, int]], tuple[int, tuple[Play, ...]]] = {}
        self.limit = limit

    @staticmethod
    def candidates(present: int, fits: tuple[int, int, int]) -> list[Play]:
        """Every play whose cards are all in ``present``."""
        plays: list[Play] = []
        for suit in range(NUM_SUITS):  # runs and sets from the shared meld table
            for _, lo, hi in PLAYS.suit_runs(present >> (NUM_RANKS * suit) & SUIT_BITS):
                pos = tuple(range(lo, hi + 1))
                plays.append(Play(OWN_RUN, tuple(pos_card(suit, x) for x in pos), pos))
        for rank in range(NUM_RANKS):
            pattern = sum(1 << s for s in range(NUM_SUITS) if present >> (s * NUM_RANKS + rank) & 1)
            for combo in PLAYS.set_suits[rank][pattern]:
                plays.append(Play(OWN_SET, tuple(s * NUM_RANKS + rank for s in combo), combo))
        fit_set, fit_low, fit_high = fits
        for c in mask_cards(fit_high & present):
            suit, p = c // NUM_RANKS, card_pos(c, True)
            cards: list[int] = []
            pos: list[int] = []
            while p <= ACE_HIGH_POS and present >> pos_card(suit, p) & 1:
                cards.append(pos_card(suit, p))
                pos.append(p)
                plays.append(Play(CHAIN_HIGH, tuple(cards), tuple(pos)))
                p += 1
        for c in mask_cards(fit_low & present):
            suit, p = c // NUM_RANKS, card_pos(c, False)
            cards, pos = [], []
            while p >= ACE_LOW_POS and present >> pos_card(suit, p) & 1:
                cards.append(pos_card(suit, p))
                pos.append(p)
                plays.append(Play(CHAIN_LOW, tuple(cards), tuple(pos)))
                p -= 1
        for c in mask_cards(fit_set & present):
            plays.append(Play(LAY_ON_SET, (c,), (c // NUM_RANKS,)))
        return plays

    def solve(
        self, present: int, doubles: int, fits: tuple[int, int, int]
    ) -> tuple[int, tuple[Play, ...]]:
        """(total gain, plays) of the best plan for a hand (``doubles`` = cards held twice)."""
        key = (present, doubles, fits)
        found = self.memo.get(key)
        if found is not None:
            return found
        if len(self.memo) >= self.limit:
            self.memo.clear()
        plays = self.candidates(present, fits)
        found = self._search(present, doubles, fits, plays)
        return found

    def _search(
        self, present: int, doubles: int, fits: tuple[int, int, int], plays: list[Play]
    ) -> tuple[int, tuple[Play, ...]]:
        key = (present, doubles, fits)
        found = self.memo.get(key)
        if found is not None:
            return found
        avail = [p for p in plays if not p.mask & ~present]
        if not avail:
            self.memo[key] = (0, ())
            return self.memo[key]
        union = 0
        for p in avail:
            union |= p.mask
        low = union & -union
        best = self._search(present & ~low, doubles & ~low, fits, avail)
        for p in avail:
            if p.mask & low:
                gone = p.mask & ~doubles
                value, rest = self._search(present & ~gone, doubles & ~p.mask, fits, avail)
                value += p.gain
                if value > best[0]:
                    best = (value, (p, *rest))
        self.memo[key] = best
        return best

    def solve_leading(
        self, present: int, doubles: int, fits: tuple[int, int, int], card: int
    ) -> tuple[int, tuple[Play, ...]]:
        """Best plan whose first play contains ``card`` (the must-use rule); (-1, ()) if none."""
        best: tuple[int, tuple[Play, ...]] = (-1, ())
        for p in self.candidates(present, fits):
            if p.mask & BIT[card] and p.leads_with(card):
                gone = p.mask & ~doubles
                value, rest = self.solve(present & ~gone, doubles & ~p.mask, fits)
                value += p.gain
                if value > best[0]:
                    best = (value, (p, *rest))
        return best


def add_cards(present: int, doubles: int, cards: Iterable[int]) -> tuple[int, int]:
    """Hand masks after ``cards`` join the hand."""
    for c in cards:
        if present & BIT[c]:
            doubles |= BIT[c]
        present |= BIT[c]
    return present, doubles


class Rummy500Policy(BasePolicy):
    """Shared set-up and plan execution of the 500 Rum heuristics."""

    def __init__(
        self, variant: str = "rummy500", num_players: int = 2, options: dict[str, Any] | None = None
    ) -> None:
        if variant != "rummy500":
            raise ValueError(f"{type(self).__name__} plays rummy500, not {variant!r}")
        self.game = game = make_game(Rummy500Game, num_players, dict(options or {}))
        self.rules = game.rules
        self.planner = Planner()

    # -- shared pieces -----------------------------------------------------------------------
    def dig_hauls(
        self, seen: Rummy500View, mask: np.ndarray
    ) -> list[tuple[int, int, tuple[int, ...]]]:
        """(action, chosen card, cards taken) for every legal dig."""
        out = []
        pile = seen.discards
        for a in np.flatnonzero(mask[DIG_BASE:MELD_BASE]).tolist():
            action = DIG_BASE + a
            deep = a >= NUM_CARDS
            card = a - NUM_CARDS if deep else a
            out.append((action, card, pile[dig_start(pile, card, deep) :]))
        return out

    def haul_plan(
        self, seen: Rummy500View, card: int, taken: tuple[int, ...]
    ) -> tuple[int, tuple[Play, ...], int, int]:
        """(gain, plays, present, doubles) after digging ``card`` and the cards above it."""
        present, doubles = add_cards(seen.hand, seen.doubles, taken)
        free = self.rules.top_discard_free and len(taken) == 1
        if free:
            value, plays = self.planner.solve(present, doubles, seen.fits)
        else:
            value, plays = self.planner.solve_leading(present, doubles, seen.fits, card)
        return value, plays, present, doubles

    def play_action(self, plays: tuple[Play, ...], seen: Rummy500View, mask: np.ndarray) -> int:
        """First action of the highest-gain play (the pending card's play first); -1 if none."""
        if seen.pending >= 0:
            order = [p for p in plays if p.mask & BIT[seen.pending]] + list(plays)
        else:
            order = sorted(plays, key=lambda p: -p.gain)
        for p in order:
            action = p.first_action(seen.pending)
            if mask[action]:
                return action
        return -1

    @staticmethod
    def any_play(seen: Rummy500View, mask: np.ndarray) -> int:
        """Fallback for a pending card no plan covers: the first legal meld or lay-off."""
        legal = np.flatnonzero(mask[MELD_BASE:DISCARD_BASE]).tolist()
        return MELD_BASE + legal[0] if legal else int(np.flatnonzero(mask)[0])

    def draw_default(self, mask: np.ndarray) -> int:
        return DRAW_STOCK if mask[DRAW_STOCK] else PASS

    def choose_play(self, seen: Rummy500View, mask: np.ndarray) -> int:
        """Play-phase action: a meld or lay-off, or -1 to discard."""
        if seen.pending >= 0:
            _, plays = self.planner.solve_leading(seen.hand, seen.doubles, seen.fits, seen.pending)
            action = self.play_action(plays, seen, mask)
            return action if action >= 0 else self.any_play(seen, mask)
        _, plays = self.planner.solve(seen.hand, seen.doubles, seen.fits)
        plays = self.keep_back(plays, seen)
        return self.play_action(plays, seen, mask) if plays else -1

    def keep_back(self, plays: tuple[Play, ...], seen: Rummy500View) -> tuple[Play, ...]:
        """Plays to make now out of the plan (all of them by default)."""
        return plays

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        seen = self.game.decode(observation)
        if action_mask[DRAW_STOCK] or action_mask[PASS] or action_mask[DIG_BASE:MELD_BASE].any():
            return self.choose_draw(seen, action_mask)
        action = self.choose_play(seen, action_mask)
        if action >= 0:
            return action
        legal = np.flatnonzero(action_mask[DISCARD_BASE:]).tolist()
        if not legal:  # must-use with no mapped play
            return self.any_play(seen, action_mask)
        return DISCARD_BASE + self.choose_discard(seen, legal)

    def choose_draw(self, seen: Rummy500View, mask: np.ndarray) -> int:
        raise NotImplementedError

    def choose_discard(self, seen: Rummy500View, legal: list[int]) -> int:
        raise NotImplementedError


class GreedyRummy500(Rummy500Policy):
    """Tier 1: play everything at once, dig for immediate points, throw high loose cards."""

    name = "rummy500.greedy"
    #: Share of the value of dug cards it cannot use yet counted against a dig (all of it once
    #: the stock is gone).
    stuck_weight = 0.5
    #: Points a partner in hand is worth when choosing a discard (large: partners come first).
    link_weight = 20.0

    def choose_draw(self, seen: Rummy500View, mask: np.ndarray) -> int:
        base, _ = self.planner.solve(seen.hand, seen.doubles, seen.fits)
        stock_left = bool(mask[DRAW_STOCK])
        weight = self.stuck_weight if stock_left else 1.0
        best, best_net = self.draw_default(mask), 0.0
        for action, card, taken in self.dig_hauls(seen, mask):
            value, plays, _, _ = self.haul_plan(seen, card, taken)
            if value < 0:
                continue
            used = 0
            for p in plays:
                used |= p.mask
            stuck = sum(CARD_VALUE[c] for c in taken if not used & BIT[c])
            net = value - base - weight * stuck
            if net > best_net:
                best, best_net = action, net
        return best

    def choose_discard(self, seen: Rummy500View, legal: list[int]) -> int:
        hand = seen.hand

        def score(c: int) -> tuple[float, int]:
            links = (NEIGHBOURS[c] & hand).bit_count()
            return (CARD_VALUE[c] - self.link_weight * links, c % NUM_RANKS)

        return max(legal, key=score)


class SmartRummy500(Rummy500Policy):
    """Tier 2: weighs digs against risk, holds melds while the hand is young, discards safely."""

    name = "rummy500.smart"

    def __init__(
        self,
        *args: Any,
        stock_value: float = 4.0,
        hold_melds: bool = True,
        danger_weight: float = 1.0,
        pile_danger: float = 20.0,
        keep_weight: float = 8.0,
        meld_weight: float = 1.0,
        **kwargs: Any,
    ) -> None:
        """:param stock_value: points a stock draw is worth against a dig, early in the hand.
        :param hold_melds: keep its own 3-card melds in hand while the hand is young.
        :param danger_weight: weight of a discard's use to the opponents.
        :param pile_danger: extra danger of a discard that melds with cards in the pile.
        :param keep_weight: weight of what a card could still become in hand.
        :param meld_weight: weight of what a discard takes from the best plan of the hand (the
            melds it holds back while the hand is young)."""
        super().__init__(*args, **kwargs)
        for key, value in (
            ("stock_value", stock_value),
            ("danger_weight", danger_weight),
            ("pile_danger", pile_danger),
            ("keep_weight", keep_weight),
            ("meld_weight", meld_weight),
        ):
            check_parameter(self.name, key, value)
        check_parameter(self.name, "hold_melds", hold_melds, "bool")
        self.pile_danger = pile_danger
        self.keep_weight = keep_weight
        self.meld_weight = meld_weight
        self.stock_value = stock_value
        self.hold_melds = hold_melds
        self.danger_weight = danger_weight

    # -- reading the table -----------------------------------------------------------------
    def live(self, seen: Rummy500View) -> int:
        """Cards not seen anywhere (hand, pile, table, cards opponents dug); with two decks
        every card but those held twice in the hand (the view's ``unseen`` tells a card whose
        copies were all seen from one with a copy unseen only in part, so the estimate keeps
        every card of which a copy may still come)."""
        live = seen.unseen
        if self.rules.num_decks == 2:
            live = (1 << NUM_CARDS) - 1 & ~(seen.doubles)
        return live

    def end_pressure(self, seen: Rummy500View) -> float:
        """0 (hand far from its end) .. 1 (it may end any moment)."""
        n = self.rules.num_players
        stock_turns = seen.stock / n
        pressure = 0.0
        if stock_turns <= 1:
            pressure = 1.0
        elif stock_turns <= 4:
            pressure = 0.6
        elif stock_turns <= 8:
            pressure = 0.3
        fewest = min(seen.hand_sizes[1:]) if len(seen.hand_sizes) > 1 else 99
        if fewest <= 2:
            pressure = 1.0
        elif fewest <= 4:
            pressure = max(pressure, 0.7)
        elif fewest <= 6:
            pressure = max(pressure, 0.4)
        return pressure

    def potential(self, card: int, hand: int, reachable: int) -> float:
        """How much ``card`` may still become: partners in hand that a reachable card completes."""
        score = 0.0
        near = NEIGHBOURS[card]
        for other in mask_cards(near & hand):
            # a third card completing the pair (set: the other two suits; run: the ends)
            third = NEIGHBOURS[card] & NEIGHBOURS[other] & ~hand & ~BIT[card] & ~BIT[other]
            score += min((third & reachable).bit_count(), 2)
        return score

    # -- decisions ---------------------------------------------------------------------------
    def choose_draw(self, seen: Rummy500View, mask: np.ndarray) -> int:
        base, _ = self.planner.solve(seen.hand, seen.doubles, seen.fits)
        stock_left = bool(mask[DRAW_STOCK])
        pressure = self.end_pressure(seen) if stock_left else 1.0
        risk = 0.35 + 0.65 * pressure
        live = self.live(seen)
        best = self.draw_default(mask)
        best_net = self.stock_value * (1.0 - pressure) if stock_left else 0.0
        for action, card, taken in self.dig_hauls(seen, mask):
            value, plays, present, doubles = self.haul_plan(seen, card, taken)
            if value < 0:
                continue
            # A free top card whose melds it would hold back is not played now, and its meld's
            # cards are then the cheapest discards: it would throw the card back (two such
            # players took and threw one card turn after turn until the turn cap).
            free = self.rules.top_discard_free and len(taken) == 1
            if free:
                after = dataclasses.replace(seen, hand=present, doubles=doubles)
                if not any(p.mask & BIT[card] for p in self.keep_back(plays, after)):
                    continue
            used = 0
            for p in plays:
                used |= p.mask
            left = present & ~used
            stuck = 0.0
            for c in taken:
                if used & BIT[c]:
                    continue
                hope = self.potential(c, left, live) * (1.0 - pressure)
                stuck += max(CARD_VALUE[c] * risk - 2.0 * hope, 0.0)
            net = value - base - stuck
            if net > best_net:
                best, best_net = action, net
        return best

    def keep_back(self, plays: tuple[Play, ...], seen: Rummy500View) -> tuple[Play, ...]:
        if not self.hold_melds or not plays:
            return plays
        used = 0
        for p in plays:
            used |= p.mask
        hand_cards = seen.hand.bit_count() + seen.doubles.bit_count()
        if hand_cards - sum(len(p.cards) for p in plays) <= 1:
            return plays  # going out
        if self.end_pressure(seen) >= 0.3:
            return plays
        # cards an opponent could still lay off on it: unseen, in the pile, or in a hand
        # (known from its digs)
        in_play = self.live(seen) | self.pile_mask(seen)
        for known in seen.opponent_known:
            in_play |= known
        keep = []
        for p in plays:
            if p.kind in (OWN_RUN, OWN_SET) and len(p.cards) == 3:
                # The cards that would extend it are a target for the opponents' lay-offs.
                ext = self.extensions(p) & in_play
                if ext:
                    continue
            keep.append(p)
        return tuple(keep)

    @staticmethod
    def pile_mask(seen: Rummy500View) -> int:
        out = 0
        for c in seen.discards:
            out |= BIT[c]
        return out

    @staticmethod
    def extensions(p: Play) -> int:
        """Cards that could be laid off on the meld ``p`` once it is on the table."""
        if p.kind == OWN_SET:
            rank = p.cards[0] % NUM_RANKS
            return sum(BIT[s * NUM_RANKS + rank] for s in range(NUM_SUITS)) & ~p.mask
        below, above = run_extensions(p.cards[0] // NUM_RANKS, p.positions[0], p.positions[-1])
        return below | above

    def choose_discard(self, seen: Rummy500View, legal: list[int]) -> int:
        hand = seen.hand
        live = self.live(seen)
        pile = self.pile_mask(seen)
        reachable = live | pile
        pressure = self.end_pressure(seen)
        opp_known = 0
        for k in seen.opponent_known:
            opp_known |= k
        fits = seen.fits_any
        planned = self.planner.solve(hand, seen.doubles, seen.fits)[0] if self.meld_weight else 0

        def cost(c: int) -> tuple[float, int]:
            rest = hand & ~BIT[c] if not seen.doubles & BIT[c] else hand
            keep = self.keep_weight * self.potential(c, rest, reachable) * (1.0 - 0.5 * pressure)
            if self.meld_weight:
                # a card of a meld it holds back: the plan loses that meld's points
                left = self.planner.solve(rest, seen.doubles & ~BIT[c], seen.fits)[0]
                keep += self.meld_weight * (planned - left)
            danger = 0.0
            if fits & BIT[c]:
                danger += 2.0 * CARD_VALUE[c] + 5.0
            near = NEIGHBOURS[c]
            danger += 3.0 * (near & opp_known).bit_count()
            # cards in the pile that meld with it: an opponent could dig them out together
            if completes_meld(c, pile):
                danger += self.pile_danger
            else:
                danger += 1.5 * min((near & pile).bit_count(), 2)
            return (keep + self.danger_weight * danger - CARD_VALUE[c], -(c % NUM_RANKS))

        return min(legal, key=cost)
