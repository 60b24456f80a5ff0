"""Does ditch.smart leave points in what it keeps? A player that values kept cards by next turn.

An agent class for the arena, a measurement, not a shipped agent. It plays as ditch.smart,
except that what a line of plays leaves in the hand (and so which cards it keeps at the end of
the turn) is valued by playing next turn out: for every choice of the cards to keep, the same
``LOOKAHEAD_DRAWS`` guesses of the next turn's fresh cards (drawn from the cards it has not
seen), the best line of that turn as ditch.smart values it, averaged. ditch.smart instead
counts each kept card's chance to pair with a fresh one, one card at a time.

    PYTHONPATH=docs/experiments rummyzoo arena ditch_rummy --agents \\
      ditch_lookahead:Lookahead ditch.smart --deals 300 --seed 7 --workers 1 \\
      --option target_score=null

(``LOOKAHEAD_DRAWS`` defaults to 64.)
"""

from __future__ import annotations

import os
from itertools import combinations
from typing import Any

import numpy as np

from rummyzoo.agents.ditch import Outcome, SmartDitch
from rummyzoo.envs.ditch_rummy.rules import MAX_DRAW, DitchView, Fits, Phase


class Lookahead(SmartDitch):
    name = "ditch.lookahead"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.draws = int(os.environ.get("LOOKAHEAD_DRAWS", "64"))
        self._key: Any = None
        self._samples: list[tuple[int, ...]] = []
        self._values: dict[tuple[tuple[int, ...], Fits], float] = {}
        self._next: dict[tuple[tuple[int, ...], Fits], float] = {}
        self._seen: DitchView | None = None
        self._rng = np.random.default_rng(0)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        seen = self.game.decode(observation)
        if seen.phase == Phase.PLAY:
            self._prepare(seen, rng)
        return super().act(observation, action_mask, rng)

    def _prepare(self, seen: DitchView, rng: np.random.Generator) -> None:
        key = (seen.unseen, seen.stock, seen.hand_sizes, seen.hand_points)
        self._seen = seen
        if key == self._key:
            return
        self._key = key
        self._values = {}
        self._next = {}
        live = [o for o in range(52) if seen.unseen >> o & 1]
        k = min(MAX_DRAW, len(live))
        self._samples = [
            tuple(int(o) for o in rng.choice(live, size=k, replace=False)) if k else ()
            for _ in range(self.draws)
        ]

    # a line that goes on: its points plus what its cards are worth next turn, over ditching all
    def line_value(self, line: Outcome, seen: DitchView) -> float:
        if line.ended:
            return super().line_value(line, seen)
        best, _ = self._best(seen, line.hand, line.fits)
        return line.points + best

    def keep(self, seen: DitchView, hand: tuple[int, ...]) -> tuple[int, ...]:
        return self._best(seen, hand, seen.fits)[1]

    def _best(
        self, seen: DitchView, hand: tuple[int, ...], fits: Fits
    ) -> tuple[float, tuple[int, ...]]:
        base = self._value(seen, (), fits)
        best: tuple[float, tuple[int, ...]] = (0.0, ())
        for size in range(1, min(len(hand), self.max_hand) + 1):
            for kept in combinations(hand, size):
                worth = self._value(seen, kept, fits) - base
                if worth > best[0]:
                    best = (worth, kept)
        return best

    def _value(self, seen: DitchView, kept: tuple[int, ...], fits: Fits) -> float:
        """Expected worth of ending the turn holding ``kept``: next turn's best line (points
        plus smart's worth of what it then keeps), or the penalty if the hand ends first."""
        key = (kept, fits)
        found = self._values.get(key)
        if found is not None:
            return found
        end = self._table_stats(seen, fits)[4]
        penalty = float(self.ending_penalty(kept))
        if end >= 1.0:
            value = -penalty
        else:
            d = max(0, min(MAX_DRAW, self.max_hand - len(kept), seen.stock))
            total = 0.0
            for sample in self._samples:
                total += self._next_best(seen, tuple(sorted(kept + sample[:d])), fits)
            value = (1.0 - end) * total / max(len(self._samples), 1) - end * penalty
        self._values[key] = value
        return value

    def _next_best(self, seen: DitchView, cards: tuple[int, ...], fits: Fits) -> float:
        key = (cards, fits)
        found = self._next.get(key)
        if found is not None:
            return found
        best = -1e9
        for line in self.planner.outcomes(cards, fits):
            if line.ended:
                worth = line.points - float(self.ending_penalty(line.hand))
            else:
                worth = line.points + SmartDitch._best_keep(self, seen, line.hand, line.fits)[0]
            best = max(best, worth)
        self._next[key] = best
        return best


class KeepOnly(Lookahead):
    """ditch.smart's lines of plays, with only the cards kept at the end of the turn chosen by
    playing next turn out."""

    name = "ditch.lookahead_keep"

    def line_value(self, line: Outcome, seen: DitchView) -> float:
        return SmartDitch.line_value(self, line, seen)
