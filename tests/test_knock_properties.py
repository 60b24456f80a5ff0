"""Properties only Knock Rummy has, over many seeded random games (hypothesis). The properties
every variant shares (API, seeds, hidden cards, conservation, zero-sum points, the compiled
kernels) are in ``test_variants.py``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_variants import SETUPS, random_game


@settings(max_examples=40, deadline=None)
@given(SETUPS["knock_rummy"], st.integers(0, 2**31))
def test_hand_bits_follow_the_planes(setup, seed):
    """The incremental 52-bit hand masks agree with the hand planes at every decision."""
    players, options = setup

    def check(env, obs):
        for seat in range(players):
            bits = sum(1 << int(c) for c in np.flatnonzero(env.hand_state.hands[seat]))
            assert env.hand_state.bits[seat] == bits

    random_game("knock_rummy", players, seed, options, seed + 1, check)
