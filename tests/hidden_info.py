"""Shared check for the hidden-information property: swapping cards a viewer cannot see must
leave that viewer's observation (and, on its turn, its mask) unchanged."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def hidden_swap_check(
    players: int, rng: np.random.Generator, swap_hidden: Callable
) -> tuple[Callable, list[int]]:
    """A per-decision ``check(env, obs)`` and a one-item counter of the swaps it made.

    ``swap_hidden(state, viewer, rng) -> bool`` moves hidden cards of the variant's state.
    """
    swaps = [0]

    def check(env, obs) -> None:
        viewer = int(rng.integers(players))
        before = env.observe(f"player_{viewer}")
        if swap_hidden(env.state, viewer, rng):
            swaps[0] += 1
            env.match.mask = None  # the acting hand may have changed
            after = env.observe(f"player_{viewer}")
            assert np.array_equal(before["observation"], after["observation"])
            if viewer == env.state.current:
                assert np.array_equal(before["action_mask"], after["action_mask"])
        assert (env.game.card_locations(env.state) == env.game.num_decks).all()

    return check, swaps
