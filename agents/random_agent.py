"""Uniformly random legal play, the floor every baseline must clear."""

from __future__ import annotations

from typing import Any

import numpy as np

from rummyzoo.agents.base import BasePolicy
from rummyzoo.envs.native import compiled_kernels


class RandomPolicy(BasePolicy):
    """Picks uniformly among the legal actions.

    The pick is ``legal[int(rng.random() * legal.size)]`` over the legal action ids in
    increasing order. Where the compiled kernels are built, the same draw from the same bit
    generator is made in one call (same actions, same random stream). That call does not take
    the generator's lock (it would double a pick's time), so a generator that another thread
    draws from at the same time is not one to hand to :meth:`act`; :meth:`act_batch` takes it.
    """

    name = "random"

    def __init__(self) -> None:
        kernels = compiled_kernels()
        self._pick = None if kernels is None else kernels.uniform_nonzero
        self._rng: np.random.Generator | None = None
        self._capsule: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # the generator last seen and its capsule are a cache (a capsule cannot be copied)
        return {**self.__dict__, "_rng": None, "_capsule": None}

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        pick = self._pick
        if pick is not None:
            if rng is not self._rng or self._capsule is None:
                _check_rng(rng)
                self._rng, self._capsule = rng, rng.bit_generator.capsule
            action = pick(action_mask, self._capsule)
            if action is not None:  # None: a mask of another dtype, left to numpy below
                if action < 0:
                    raise ValueError("RandomPolicy.act called with an all-zero action mask")
                return action
        _check_rng(rng)
        legal = action_mask.nonzero()[0]
        if legal.size == 0:
            raise ValueError("RandomPolicy.act called with an all-zero action mask")
        return int(legal[int(rng.random() * legal.size)])

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """:meth:`act` for every row of ``action_masks`` in one call (the same picks as row by
        row with the same generator)."""
        from rummyzoo.envs.vector import uniform_legal_actions

        _check_rng(rng)
        masks = np.ascontiguousarray(action_masks, dtype=np.int8)
        actions = uniform_legal_actions(masks, rng)
        if (actions < 0).any():
            raise ValueError("RandomPolicy.act_batch called with an all-zero action mask")
        return actions


def _check_rng(rng: Any) -> None:
    """:raises TypeError: ``rng`` that is not a numpy Generator (a seed, None, the legacy
    RandomState), which the pick draws from."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "RandomPolicy draws from a numpy Generator (rng=np.random.default_rng(seed)), "
            f"got {type(rng).__name__} {rng!r:.60}"
        )
