"""Where a Ditch network's play falls short of ditch.smart: hand decisions of some kinds over.

An agent class for the arena. It plays the network ``DITCH_NET`` (a ``.rz`` checkpoint),
except that where ditch.smart's choice or the network's is of a kind listed in
``DITCH_HANDOVER`` (comma-separated: ``draw``, ``meld``, ``single``, ``finish`` for ditching
and ending the turn) it plays smart's choice. Against ditch.smart on the same deals, the
points a hand it wins back, kind by kind, say which of the network's decisions cost it; at
exit it prints how often the two chose differently, by the kinds of the two choices.

    PYTHONPATH=docs/experiments DITCH_NET=RUN/checkpoints/warm_start.rz DITCH_HANDOVER=single \\
      rummyzoo arena ditch_rummy --agents ditch_handover:Handover ditch.smart --deals 2000 \\
      --seed 7 --workers 1 --option target_score=null

(``DITCH_HANDOVER`` empty or unset plays the network alone.)
"""

from __future__ import annotations

import atexit
import os
import sys
from collections import Counter
from typing import Any

import numpy as np

from rummyzoo.agents.checkpoints import load_policy
from rummyzoo.agents.ditch import SmartDitch

#: (smart's kind, the network's kind, the same action) -> decisions
CHOICES: Counter[tuple[str, str, bool]] = Counter()


class Handover:
    name = "handover"
    variants = ("ditch_rummy",)

    def __init__(
        self,
        variant: str = "ditch_rummy",
        num_players: int = 2,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.net = load_policy(os.environ["DITCH_NET"], variant, num_players, options)
        self.smart = SmartDitch(variant, num_players, options)
        game = self.smart.game
        self.bounds = (game.meld_base, game.single_base, game.ditch_base)
        self.kinds = {k for k in os.environ.get("DITCH_HANDOVER", "").split(",") if k}

    def kind(self, action: int) -> str:
        meld, single, ditch = self.bounds
        if action < meld:
            return "draw"
        return "meld" if action < single else "single" if action < ditch else "finish"

    def reset(self, seat: int | None = None) -> None:
        self.net.reset(seat)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        mine = int(self.net.act(observation, action_mask, rng))
        smart = int(self.smart.act(observation, action_mask, rng))
        CHOICES[(self.kind(smart), self.kind(mine), mine == smart)] += 1
        if self.kind(smart) in self.kinds or self.kind(mine) in self.kinds:
            return smart
        return mine


@atexit.register
def _report() -> None:
    total = sum(CHOICES.values())
    if not total:
        return
    print(f"{total} decisions; where the network chose differently from smart:", file=sys.stderr)
    for (smart, mine, same), n in CHOICES.most_common():
        if not same:
            print(
                f"  smart {smart:6s}  network {mine:6s}  {n:6d} ({n / total:.2%})", file=sys.stderr
            )
