"""Action descriptions: every action of the observer's turn described by what it does.

A plain network must learn what "meld 0 2" or "lay off 7s below run" does from the cards it
names, for every action separately. The ``actions`` network (:mod:`rummyzoo.agents.networks`)
instead reads, for each action, a short vector that says what the action does, worked out from
the observer's own observation exactly as a player would (never from hidden state), and scores
every action with one scorer shared by all of them. What makes an action good (it scores 25
now, it keeps two cards with three live partners, it hands the opponent a lay-off) is then
learned once for all actions.

The descriptions are appended to the observation as a ``(num_actions, width)`` block
(``action_block``); a checkpoint records the feature set it was trained with. Actions that
cannot be described (they name cards the observer does not hold; in Ditch Rummy also a meld of
cards that make none, and a single that fits nowhere) get a zero row; other illegal actions
(a draw in the play phase or past the limit, a play in the draw phase) are described as if they
could be played. The legal mask removes them all anyway.

``ditch_actions`` (Ditch Rummy), 23 values per action:

==  ==============================================================================
0-5 kind: draw, meld, single, ditch one card, ditch all, end turn
6   cards the action moves (drawn, melded, played or ditched) / 3
7   points it scores now / 25
8   a set; 9 a blind run
10  the meld ends the hand (J-Q-K, Q-K-A)
11  an ace among the cards moved
12  mean game rank of the cards moved / 12
13  live run partners of the cards moved (unseen cards that make a blind run with one)
    / 8; 14 the same for sets / 3
15  cards moved that fit the table as a single / 3
16  hand size after / hand limit; 17 its penalty if the hand ended then / 20
18  live run partners of the cards kept / 16; 19 live set partners of the cards kept / 6
20  cards kept that fit the table as a single afterwards / 3 (with ``single_extends_meld``
    as ditch.smart's planner counts them: a run end that a single moved counts as gone,
    even where another run of the table ends there too)
21  pairs of kept cards that make a meld / 3
22  draw pile after the action / 52
==  ==============================================================================

A draw's row counts the cards it draws in columns 6, 16 and 22; columns 17-21 describe the hand
before the draw, since the drawn cards are not known yet.

``ditch_plans`` (Ditch Rummy), 26 values per action: the 23 of ``ditch_actions``, then what the
action is worth by ditch.smart's one-turn estimate (:meth:`SmartDitch.action_worths
<rummyzoo.agents.ditch.SmartDitch.action_worths>`), for the actions of the play phase:

==  ==============================================================================
23  points the best line of plays starting with the action earns now, plus the worth of
    the cards it then keeps for next turn (ditch one card: the best cards of the rest;
    ditch all: 0; end turn: the whole hand; a line that ends the hand: its points less the
    penalty of the cards still held) / 25, clipped to [-4, 4]
24  the line ends the hand: 1 if that surely wins (a single hand; in a match, the match,
    where the hand's end takes someone to the target), -1 if it is not sure to win then, 0
    where it decides nothing (a match that nobody's total reaches the target with) or the
    line does not end the hand. "Surely" is a bound over the hidden cards: a rival's count
    at the cheapest penalty, a partner's at the dearest, so a 1 is always a win, and a -1
    may be a win that the unseen cards would have allowed
25  the action's worth (unclipped, with a sure win above and an unsure ending below every
    other action) less the most any legal action is worth, / 25, clipped to [-4, 0]: 0 for
    the best
==  ==============================================================================

Every decision of the play phase is valued, after a meld or a single too; once a card is
ditched the turn is in its ditching step, where these three columns are 0. The verdicts judge the match by the
``target_score`` the features were built with: a checkpoint builds them with its own
options, so a network trained on single hands judges each hand alone when it plays a match.
The estimate is a heuristic's, not the truth: the network starts from it and learns where to
depart from it.

``rummy500_actions`` (500 Rum), 25 values per action:

===== ===========================================================================
0-8   kind: draw stock, pass, dig, meld a set, meld a run, lay off on a set, below a
      run, above a run, discard
9     points the play lays on the table now / 45
10    value of the card the action names (the deepest card of a dig) / 15
11    cards the action moves (a dig: the cards it takes) / 10
12    dig: value of the cards taken / 60
13    dig: value of the taken cards that are then in a 3-card meld of the hand / 60
14    dig: taken cards that fit a meld on the table / 5
15    hand size after / 15
16    value of the cards of the hand after that are in no 3-card meld of it / 100
17    cards of the hand after that are in a 3-card meld of it / 10
18    the action empties the hand (goes out)
19    the action uses the card that must be used this turn
20    discard: the card is in a 3-card meld of the hand (the discard breaks it)
21    discard: the card fits a meld on the table (anyone may lay it off)
22    discard: the card melds with cards an opponent is known to hold
23    cards of the hand that can share a meld with the card / 4
24    unseen cards that can share a meld with the card / 6
===== ===========================================================================

``rummy500_actions_v1`` (500 Rum, 25 values per action) is ``rummy500_actions`` with the "draw
stock" row fixed: the drawn card counts among the cards moved (column 11: 1/10) and in the hand
size after (column 15); columns 16-18 describe the cards the observer knows it will hold (the
drawn card is not known yet), as for "pass". ``rummy500_actions`` describes that row with the
hand before the draw (one card short, no card moved), and is kept as it was so that networks
trained with it keep their inputs: the shipped configs use ``rummy500_actions_v1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummyzoo.envs.ditch_rummy.rules import ends_hand
from rummyzoo.envs.registry import make_game
from rummyzoo.envs.rummy500.rules import completes_meld


class ActionFeatures:
    """Base: a ``(num_actions, width)`` description block, flattened (see the module doc)."""

    variant = ""
    width = 0

    def __init__(self, num_players: int, options: dict[str, Any]) -> None:
        self.game = make_game(self.variant, num_players, **options)
        self.num_actions = int(self.game.num_actions)
        self.size = self.num_actions * self.width
        #: (offset in the feature vector, actions, values per action)
        self.action_block = (0, self.num_actions, self.width)

    def describe(self, obs: np.ndarray, out: np.ndarray) -> None:
        """Write the descriptions of ``obs`` into the zeroed ``(num_actions, width)`` ``out``."""
        raise NotImplementedError

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        out = np.zeros((self.num_actions, self.width), dtype=np.float32)
        self.describe(obs, out)
        return out.reshape(-1)

    def batch(self, observations: np.ndarray) -> np.ndarray:
        """:meth:`__call__` of every row, as one ``(rows, size)`` array."""
        obs = np.asarray(observations)
        out = np.zeros((len(obs), self.num_actions, self.width), dtype=np.float32)
        for row in range(len(obs)):
            self.describe(obs[row], out[row])
        return out.reshape(len(obs), -1)


# ---------------------------------------------------------------------------- Ditch Rummy
class DitchActionFeatures(ActionFeatures):
    """See the module docstring (``ditch_actions``)."""

    variant = "ditch_rummy"
    width = 23

    def __init__(self, num_players: int, options: dict[str, Any]) -> None:
        super().__init__(num_players, options)
        from rummyzoo.agents.ditch import PlayPlanner, meld_partners
        from rummyzoo.envs.ditch_rummy.rules import MAX_DRAW, RUN, SET

        game = self.game
        self.planner = PlayPlanner(game)
        self.max_draw = MAX_DRAW
        self.run, self.set = RUN, SET
        self.points = game.single_points
        self.penalty = game.card_penalty
        self.pair_kind = [
            [game.meld_kind((min(a, b), max(a, b))) for b in range(52)] for a in range(52)
        ]
        self.run_partners = [meld_partners(game, o, RUN) for o in range(52)]
        self.set_partners = [meld_partners(game, o, SET) for o in range(52)]
        self.hmax = game.max_hand

    def _kept(self, kept: list[int], fits: Any, unseen: int) -> tuple[float, ...]:
        """Columns 16-21: the hand the action leaves."""
        fits_card = self.planner.fits_card
        run_partners, set_partners, pair_kind = self.run_partners, self.set_partners, self.pair_kind
        pairs = 0
        for i, a in enumerate(kept):
            for b in kept[i + 1 :]:
                pairs += pair_kind[a][b] != 0
        return (
            len(kept) / self.hmax,
            sum(self.penalty[o] for o in kept) / 20,
            sum((run_partners[o] & unseen).bit_count() for o in kept) / 16,
            sum((set_partners[o] & unseen).bit_count() for o in kept) / 6,
            sum(fits_card(o, fits) for o in kept) / 3,
            pairs / 3,
        )

    def _moved(self, moved: list[int], fits: Any, unseen: int) -> tuple[float, ...]:
        """Columns 6 and 11-15: the cards the action moves."""
        return (
            len(moved) / 3,
            float(any(o >> 2 == 12 for o in moved)),
            sum(o >> 2 for o in moved) / (12 * len(moved)),
            sum((self.run_partners[o] & unseen).bit_count() for o in moved) / 8,
            sum((self.set_partners[o] & unseen).bit_count() for o in moved) / 3,
            sum(self.planner.fits_card(o, fits) for o in moved) / 3,
        )

    def describe(self, obs: np.ndarray, out: np.ndarray) -> None:
        seen = self.game.decode(obs)
        hand = list(seen.hand)
        fits, unseen, stock = seen.fits, seen.unseen, seen.stock
        planner, game = self.planner, self.game
        size = len(hand)
        ids: list[int] = []
        rows: list[list[float]] = []

        def row(action: int, kind: int, moved: tuple[float, ...] | None, kept: tuple[float, ...]):
            # one action's description: its kind, the cards it moves, the hand it leaves
            values = [0.0] * 23
            values[kind] = 1.0
            if moved is not None:
                values[6] = moved[0]
                values[11:16] = moved[1:]
            values[16:22] = kept
            values[22] = stock / 52
            ids.append(action)
            rows.append(values)
            return values

        whole = self._kept(hand, fits, unseen)
        for k in range(self.max_draw + 1):
            values = row(k, 0, None, whole)
            values[6] = k / 3
            values[22] = max(stock - k, 0) / 52
            values[16] = (size + k) / self.hmax  # the drawn cards are not known yet
        for j, combo in enumerate(game.meld_positions):
            if combo[-1] >= size:
                continue
            cards = tuple(hand[p] for p in combo)
            kind = game.meld_kind(cards)
            if not kind:
                continue
            after = planner.after_meld(fits, kind, cards)
            values = row(
                game.meld_base + j,
                1,
                self._moved(list(cards), fits, unseen),
                self._kept([o for p, o in enumerate(hand) if p not in combo], after, unseen),
            )
            values[7] = game.meld_points[kind] / 25
            values[8] = float(kind == self.set)
            values[9] = float(kind == self.run)
            values[10] = float(ends_hand(kind, cards))
        per_card = game.single_targets
        for pos, o in enumerate(hand):
            moved = self._moved([o], fits, unseen)
            rest = hand[:pos] + hand[pos + 1 :]
            targets = planner.targets(o, fits)
            for t in range(per_card):
                if per_card == 1:
                    if not targets:
                        continue
                    target = targets[0]
                elif t not in targets:
                    continue
                else:
                    target = t
                after = planner.after_single(fits, o, target)
                values = row(
                    game.single_base + pos * per_card + t, 2, moved, self._kept(rest, after, unseen)
                )
                values[7] = self.points[o] / 25
            row(game.ditch_base + pos, 3, moved, self._kept(rest, fits, unseen))
        if hand:
            row(game.ditch_all, 4, self._moved(hand, fits, unseen), self._kept([], fits, unseen))
        row(game.end_turn, 5, None, whole)
        out[ids] = rows


class DitchPlanFeatures(DitchActionFeatures):
    """See the module docstring (``ditch_plans``)."""

    width = 26

    def __init__(self, num_players: int, options: dict[str, Any]) -> None:
        super().__init__(num_players, options)
        from rummyzoo.agents.ditch import SmartDitch

        self.judge = SmartDitch("ditch_rummy", num_players, options)

    def describe(self, obs: np.ndarray, out: np.ndarray) -> None:
        super().describe(obs, out[:, :23])
        worths = self.judge.action_worths(self.game.decode(obs))
        if not worths:
            return
        ids = np.fromiter(worths, dtype=np.int64, count=len(worths))
        values = np.array(list(worths.values()), dtype=np.float64)
        worth = values[:, 0] / 25
        out[ids, 23] = np.clip(worth, -4.0, 4.0)
        out[ids, 24] = values[:, 1]
        # the gap to the best action, a decisive win above everything and a decisive loss below
        key = worth + 100.0 * values[:, 1]
        out[ids, 25] = np.clip(key - key.max(), -4.0, 0.0)


# ---------------------------------------------------------------------------- 500 Rum
class Rummy500ActionFeatures(ActionFeatures):
    """See the module docstring (``rummy500_actions``)."""

    variant = "rummy500"
    width = 25
    #: the "draw stock" row counts the drawn card (``rummy500_actions_v1``); see the module doc
    draw_counts_the_card = False

    def __init__(self, num_players: int, options: dict[str, Any]) -> None:
        super().__init__(num_players, options)
        if self.game.num_decks > 1:
            name = "rummy500_actions_v1" if self.draw_counts_the_card else "rummy500_actions"
            raise ValueError(
                f"{name} describes one-deck games (2-4 players); with two decks ({num_players} "
                "players) leave features out and use the 'mlp' network"
            )
        from rummyzoo.agents.rummy500 import NEIGHBOURS
        from rummyzoo.envs.rummy500 import tables as t

        self.t = t
        self.neighbours = NEIGHBOURS
        self.value = t.CARD_VALUE
        # the value of the cards of a 13-bit suit pattern (the value is the rank's), so that a
        # hand's value is four look-ups
        rank_value = self.value[:13]
        self.suit_value = [
            sum(v for r, v in enumerate(rank_value) if pattern >> r & 1)
            for pattern in range(1 << 13)
        ]

    def _value(self, cards: int) -> int:
        """The value of the cards of a 52-bit mask."""
        table = self.suit_value
        return (
            table[cards & 0x1FFF]
            + table[cards >> 13 & 0x1FFF]
            + table[cards >> 26 & 0x1FFF]
            + table[cards >> 39 & 0x1FFF]
        )

    def _hand_after(self, hand: int) -> tuple[float, ...]:
        """Columns 15-18: the hand the action leaves."""
        covered = self.t.meldable(hand)
        return (
            hand.bit_count() / 15,
            self._value(hand & ~covered) / 100,
            covered.bit_count() / 10,
            float(hand == 0),
        )

    def _card(self, values: list[float], card: int, hand: int, unseen: int) -> None:
        """Columns 10, 23 and 24: the card the action names."""
        values[10] = self.value[card] / 15
        near = self.neighbours[card]
        values[23] = (near & hand & ~(1 << card)).bit_count() / 4
        values[24] = (near & unseen).bit_count() / 6

    def describe(self, obs: np.ndarray, out: np.ndarray) -> None:
        t = self.t
        seen = self.game.decode(obs)
        hand, unseen, pending = seen.hand, seen.unseen, seen.pending
        set_fit, below_fit, above_fit = seen.fits
        fits_any = set_fit | below_fit | above_fit
        value = self.value
        ids: list[int] = []
        rows: list[list[float]] = []

        def row(action: int, kind: int, after: tuple[float, ...]) -> list[float]:
            values = [0.0] * 25
            values[kind] = 1.0
            values[15:19] = after
            ids.append(action)
            rows.append(values)
            return values

        whole = self._hand_after(hand)
        drawn = row(t.DRAW_STOCK, 0, whole)
        if self.draw_counts_the_card:
            drawn[11] = 1 / 10
            drawn[15] = (hand.bit_count() + 1) / 15
        # else the hand before the draw (one card short, no card moved), the first version's
        # description, kept so that networks trained with it keep their inputs
        row(t.PASS, 1, whole)
        # digs: the card and everything above it
        pile = seen.discards
        taken = 0
        for depth in range(len(pile)):
            card = pile[-1 - depth]
            taken |= 1 << card
            new = hand | taken
            covered = t.meldable(new)
            values = row(t.DIG_BASE + card, 2, self._hand_after(new))
            values[11] = (depth + 1) / 10
            values[12] = self._value(taken) / 60
            values[13] = self._value(taken & covered) / 60
            values[14] = (taken & fits_any).bit_count() / 5
            self._card(values, card, hand, unseen)
        # melds of three cards from the hand
        for m in t.melds_in(hand):
            spec = t.MELDS[m]
            values = row(
                t.MELD_BASE + m, 4 if spec.is_run else 3, self._hand_after(hand & ~spec.mask)
            )
            values[9] = spec.value / 45
            values[10] = max(value[c] for c in spec.cards) / 15
            values[11] = 3 / 10
            values[19] = float(pending in spec.cards)
        in_melds = t.meldable(hand)
        for card in _cards(hand):
            rest = hand & ~(1 << card)
            after = self._hand_after(rest)
            bit = 1 << card
            low_ace = card % 13 == 0
            for kind, fit, base, points in (
                (5, set_fit, t.LAY_SET_BASE, value[card]),
                (6, below_fit, t.LAY_LOW_BASE, 1 if low_ace else value[card]),
                (7, above_fit, t.LAY_HIGH_BASE, value[card]),
            ):
                if fit & bit:
                    values = row(base + card, kind, after)
                    values[9] = points / 45
                    values[11] = 1 / 10
                    values[19] = float(card == pending)
                    self._card(values, card, rest, unseen)
            values = row(t.DISCARD_BASE + card, 8, after)
            values[11] = 1 / 10
            values[20] = float(bool(in_melds & bit))
            values[21] = float(bool(fits_any & bit))
            values[22] = float(any(completes_meld(card, known) for known in seen.opponent_known))
            self._card(values, card, rest, unseen)
        out[ids] = rows


class Rummy500ActionFeaturesV1(Rummy500ActionFeatures):
    """See the module docstring (``rummy500_actions_v1``)."""

    draw_counts_the_card = True


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


ACTION_FEATURES: dict[str, type[ActionFeatures]] = {
    "ditch_actions": DitchActionFeatures,
    "ditch_plans": DitchPlanFeatures,
    "rummy500_actions": Rummy500ActionFeatures,
    "rummy500_actions_v1": Rummy500ActionFeaturesV1,
}
