"""Does a Ditch network trained on single hands lose matches by judging each hand alone?

An agent class for the arena, a measurement, not a shipped agent. A checkpoint builds its
action descriptions with the options it was trained with, so a ``ditch_plans`` network trained
on single hands (``target_score: null``) is told whether ending a hand surely wins *the hand*,
also when it plays a match, where ditch.smart judges the match once someone reaches the
target. This class plays the checkpoint ``path`` with the descriptions built for the game it
plays (its ``target_score``), the network and everything else unchanged:

    PYTHONPATH=docs/experiments rummyzoo arena ditch_rummy --agents \\
      'ditch_match_features:MatchAware(path="RUN/checkpoints/best.rz")' ditch.smart \\
      --deals 2000 --seed 2026 --workers 1 --option target_score=500

and the same with ``RUN/checkpoints/best.rz`` in its place, the checkpoint as it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummyzoo.agents.base import BasePolicy
from rummyzoo.agents.checkpoints import load_policy
from rummyzoo.agents.features import make_features


class MatchAware(BasePolicy):
    name = "match_aware"

    def __init__(
        self, variant: str, num_players: int, options: dict[str, Any], path: str = ""
    ) -> None:
        self.inner = load_policy(path, variant, num_players, options, deterministic=True)
        meta = self.inner.meta
        played = {**meta["options"], "target_score": options.get("target_score")}
        self.inner.features = make_features(meta["features"], variant, num_players, played)
        self.name = f"match_aware({path.rsplit('/', 1)[-1]})"

    def reset(self, seat: int | None = None) -> None:
        self.inner.reset(seat)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        return self.inner.act(observation, action_mask, rng)
