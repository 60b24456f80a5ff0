"""Strategy statistics: what a learner does at the table, per variant, for TensorBoard.

A :class:`StrategyStats` watches games through the play loop's events (pass it as
``on_event``; :meth:`StrategyStats.new_game` says which seat is the learner's) and counts the
learner's decisions and the facts of its finished hands. :meth:`StrategyStats.summary` gives
scalars (``strategy/<name>``) and value lists for histograms; every variant gives ``hands``
(the learner's hands counted), and then:

==============  ==============================================================================
variant         statistics
==============  ==============================================================================
Knock Rummy     ``knock_rate`` (hands the learner knocked), ``deadwood_at_knock`` (mean and
                histogram), ``knock_turn`` (mean and histogram), ``take_discard_rate`` (draws
                from the discard pile), ``rummy_rate`` and ``undercut_rate`` (of its knocks:
                no deadwood left / an opponent with lower deadwood), ``void_rate``
Ditch Rummy     ``points_per_hand`` and its sources ``earned_per_hand`` (melds and singles)
                and ``penalty_per_hand`` (cards left), ``runs_per_hand`` and
                ``sets_per_hand`` (melds it owns at the end), ``cards_ditched_per_hand``
                (histogram per ditch), ``ends_hand_rate`` (hands the learner ended) and
                ``end/<reason>`` (how hands end)
500 Rum         ``digs_per_hand`` and ``cards_per_dig`` (histogram), ``layoffs_per_hand``,
                ``melds_per_hand``, ``going_out_rate``, ``penalty_left`` (points of cards
                left in hand, histogram) and ``melded_points``
==============  ==============================================================================
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from rummyzoo.envs.match import HandEnd, Match
from rummyzoo.envs.play import Decision

__all__ = ["STATISTIC_CHARTS", "StrategyStats"]

#: The statistics by their unit, one dashboard chart each (a chart of one unit keeps a count of
#: 20 hands from flattening rates of 0-1): chart title -> regex of the statistics' names.
STATISTIC_CHARTS: dict[str, str] = {
    "strategy: rates (share of hands, knocks or draws)": r"(.*_rate|end/.*)",
    "strategy: points": (
        r"(points_per_hand|earned_per_hand|penalty_per_hand|penalty_left|melded_points"
        r"|deadwood_at_knock)"
    ),
    "strategy: counts (per hand, per dig; turns to the knock)": (
        r"(runs_per_hand|sets_per_hand|cards_ditched_per_hand|digs_per_hand|cards_per_dig"
        r"|layoffs_per_hand|melds_per_hand|knock_turn)"
    ),
    "strategy: hands counted": r"hands",
}


class StrategyStats:
    """Counts of one learner's play over many games (see the module docstring)."""

    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.seat = 0
        self.hands = 0
        self.counts: Counter[str] = Counter()
        self.values: dict[str, list[float]] = {}

    def new_game(self, seat: int) -> None:
        """The next game's learner seat."""
        self.seat = seat

    def _add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(float(value))

    def __call__(self, event: Any, match: Match) -> None:
        if type(event) is Decision:
            if event.seat == self.seat:
                self._decision(match, event.action)
        elif type(event) is HandEnd and event.points is not None:
            self.hands += 1
            self._hand_end(match, event)

    # ---------------------------------------------------------------- decisions
    def _decision(self, match: Match, action: int) -> None:
        name = match.game.action_names[action]
        kind = name.split()[0]
        self.counts[f"decisions/{kind}"] += 1
        if self.variant == "knock_rummy":
            if name in ("draw stock", "take discard"):
                self.counts["draws"] += 1
                self.counts["take_discard"] += name == "take discard"
            elif kind == "knock":
                self._add("knock_turn", match.state.turn)
        elif self.variant == "ditch_rummy":
            if kind == "ditch":
                describe = match.game.describe_action(match.state, action)
                cards = describe.split(":", 1)[1].split() if ":" in describe else []
                self._add("cards_ditched", len(cards))
                self.counts["cards_ditched"] += len(cards)
        elif self.variant == "rummy500":
            if kind == "dig":
                from rummyzoo.envs.rummy500.rules import DIG_DEEP_BASE, dig_start

                pile = list(match.state.pile)
                card = _dig_card(name)
                deep = action >= DIG_DEEP_BASE
                taken = len(pile) - dig_start(pile, card, deep)
                self._add("cards_per_dig", taken)
                self.counts["digs"] += 1
            elif kind == "lay":
                self.counts["layoffs"] += 1
            elif kind == "meld":
                self.counts["melds"] += 1

    # ---------------------------------------------------------------- hand ends
    def _hand_end(self, match: Match, end: HandEnd) -> None:
        game, state, seat = match.game, end.state, self.seat
        info = game.hand_info(state, seat)
        if self.variant == "knock_rummy":
            knocker = info.get("knocker")
            self.counts["void"] += bool(info.get("void"))
            if knocker == f"player_{seat}":
                self.counts["knocks"] += 1
                deadwood = info.get("deadwood")
                if deadwood is not None:
                    self._add("deadwood_at_knock", deadwood)
                    self.counts["rummy"] += deadwood == 0
                    others = [
                        game.hand_info(state, s).get("deadwood")
                        for s in range(game.num_players)
                        if s != seat
                    ]
                    self.counts["undercut"] += any(d is not None and d < deadwood for d in others)
        elif self.variant == "ditch_rummy":
            self._add("points", end.points[seat])
            self._add("earned", info["earned"])
            self._add("penalty", info["penalty"])
            melds = info["melds"]
            self.counts["runs"] += sum(m.startswith("run") for m in melds)
            self.counts["sets"] += sum(m.startswith("set") for m in melds)
            self.counts[f"end/{info['end_reason']}"] += 1
            self.counts["ended_by_learner"] += info["ended_by"] == f"player_{seat}"
        elif self.variant == "rummy500":
            self.counts["went_out"] += info["went_out"] == f"player_{seat}"
            self._add("penalty_left", info["hand_penalty"])
            self._add("melded_points", info["melded_points"])

    # ---------------------------------------------------------------- summary
    def summary(self) -> tuple[dict[str, float], dict[str, list[float]]]:
        """``(scalars, histograms)`` over everything seen so far (empty before a hand ends)."""
        hands = self.hands
        if not hands:
            return {}, {}
        c, v = self.counts, self.values
        scalars: dict[str, float] = {"hands": float(hands)}
        histograms: dict[str, list[float]] = {}

        def mean(name: str) -> float | None:
            return float(np.mean(v[name])) if v.get(name) else None

        def put(name: str, value: float | None) -> None:
            if value is not None:
                scalars[name] = float(value)

        if self.variant == "knock_rummy":
            knocks = c["knocks"]
            put("knock_rate", knocks / hands)
            put("void_rate", c["void"] / hands)
            put("deadwood_at_knock", mean("deadwood_at_knock"))
            put("knock_turn", mean("knock_turn"))
            put("take_discard_rate", c["take_discard"] / c["draws"] if c["draws"] else None)
            put("rummy_rate", c["rummy"] / knocks if knocks else None)
            put("undercut_rate", c["undercut"] / knocks if knocks else None)
            for name in ("deadwood_at_knock", "knock_turn"):
                if v.get(name):
                    histograms[name] = v[name]
        elif self.variant == "ditch_rummy":
            put("points_per_hand", mean("points"))
            put("earned_per_hand", mean("earned"))
            put("penalty_per_hand", mean("penalty"))
            put("runs_per_hand", c["runs"] / hands)
            put("sets_per_hand", c["sets"] / hands)
            put("cards_ditched_per_hand", c["cards_ditched"] / hands)
            put("ends_hand_rate", c["ended_by_learner"] / hands)
            # every way a hand ends, at each evaluation: a rate of 0 too (a chart of a rate
            # logged only where it was above 0 kept its last value through evaluations at 0)
            from rummyzoo.envs.ditch_rummy.rules import END_BLIND_RUN, END_DRAW_PILE, END_STALL

            ends = {f"end/{reason}" for reason in (END_BLIND_RUN, END_DRAW_PILE, END_STALL)}
            for key in sorted(ends | {key for key in c if key.startswith("end/")}):
                put(key, c[key] / hands)
            for name in ("points", "cards_ditched"):
                if v.get(name):
                    histograms[name] = v[name]
        elif self.variant == "rummy500":
            put("digs_per_hand", c["digs"] / hands)
            put("cards_per_dig", mean("cards_per_dig"))
            put("layoffs_per_hand", c["layoffs"] / hands)
            put("melds_per_hand", c["melds"] / hands)
            put("going_out_rate", c["went_out"] / hands)
            put("penalty_left", mean("penalty_left"))
            put("melded_points", mean("melded_points"))
            for name in ("cards_per_dig", "penalty_left"):
                if v.get(name):
                    histograms[name] = v[name]
        return scalars, histograms


def _dig_card(name: str) -> int:
    """The card of a dig action's name (``dig Kh``, ``dig Kh deep``)."""
    from rummyzoo.envs.cards import CARD_NAMES

    return CARD_NAMES.index(name.split()[1])
