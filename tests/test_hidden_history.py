"""What a seat knows from the history of a hand never depends on cards it cannot see: the same
random game from a deal and from that deal with two cards swapped, compared seat by seat while
the seat's own cards and everything the table sees are the same (tests/hidden_info.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hidden_info import swapped_deal_check

from rummyzoo.envs.knock_rummy.rules import KNOCK_BASE
from rummyzoo.envs.registry import make_env

CASES = [
    ("knock_rummy", 2, {}),
    ("knock_rummy", 4, {"knock_max_deadwood": 10}),
    ("ditch_rummy", 2, {}),
    ("ditch_rummy", 4, {"teams": True, "draw_rule": "up_to_3"}),
    ("rummy500", 2, {}),
    ("rummy500", 3, {"top_discard_free": True}),
    ("rummy500", 5, {}),  # two decks: two copies of every card
]


def _long_games(env) -> Callable[[np.ndarray], np.ndarray] | None:
    """The actions the random player favours so that hands run long: Knock Rummy's other than
    knocking (random play knocks within a few decisions), Ditch Rummy's draws and plays."""
    game = env.unwrapped.game
    if game.name == "knock_rummy":
        return lambda legal: legal[legal < KNOCK_BASE]
    if game.name == "ditch_rummy":
        return lambda legal: legal[(legal >= 1) & (legal < game.ditch_base)]
    return None


@pytest.mark.parametrize(("variant", "players", "options"), CASES)
def test_history_never_shows_a_hidden_card(variant, players, options):
    rng = np.random.default_rng([players, len(options)])
    prefer = _long_games(make_env(variant, num_players=players, **options))
    compared = [
        swapped_deal_check(
            lambda: make_env(variant, num_players=players, **options), seed, rng, prefer=prefer
        )
        for seed in range(40)
    ]
    # the check ran: enough decisions compared while the two games differed in a hand
    assert sum(compared) > 100 and sum(c > 0 for c in compared) >= 20
