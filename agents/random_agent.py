"""Uniformly random legal play, the floor every baseline must clear."""

from __future__ import annotations

import numpy as np

from rummyzoo.agents.base import BasePolicy


class RandomPolicy(BasePolicy):
    """Picks uniformly among the legal actions."""

    name = "random"

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        legal = action_mask.nonzero()[0]
        if legal.size == 0:
            raise ValueError("RandomPolicy.act called with an all-zero action mask")
        return int(legal[int(rng.random() * legal.size)])
