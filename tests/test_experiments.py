"""The measurement scripts under docs/experiments run, and search only what a player may know."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "experiments" / "ditch_rollouts.py"


def load():
    spec = importlib.util.spec_from_file_location("ditch_rollouts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_guesses_deal_only_the_hidden_cards_anew() -> None:
    mod = load()
    game, rng = mod.GAME, np.random.default_rng(0)
    s = game.new_hand(rng, 1, game.shuffled_deck(np.random.default_rng(1)))
    for _ in range(40):  # into the hand: both players hold cards, the pile is part drawn
        game.apply(s, mod.smart_action(s, rng), rng)
    seat = s.current
    hidden = sorted(list(s.hands[1 - seat]) + s.pile[s.pile_pos :])
    changed = False
    for _ in range(5):
        world = mod.guess(s, seat, rng)
        assert world.hands[seat] == s.hands[seat]  # the searcher's own cards stay
        assert len(world.hands[1 - seat]) == len(s.hands[1 - seat])
        assert world.pile[: world.pile_pos] == s.pile[: s.pile_pos]
        assert sorted(list(world.hands[1 - seat]) + world.pile[world.pile_pos :]) == hidden
        # what the searcher sees is the same in every guess
        assert np.array_equal(
            game.observe(world, seat, mod.NO_TOTALS), game.observe(s, seat, mod.NO_TOTALS)
        )
        changed |= world.pile != s.pile
    assert changed
    assert sorted(list(s.hands[1 - seat]) + s.pile[s.pile_pos :]) == hidden


def test_the_script_reports_the_searcher_against_smart(tmp_path) -> None:
    mod = load()
    out = tmp_path / "r.json"
    first = mod.main(["--worlds", "2", "--deals", "1", "--seed", "2", "--json", str(out)])
    assert first["hands"] == 2 and first["worlds"] == 2 and not first["oracle"]
    low, high = first["ci95"]
    assert low <= first["gain_per_hand"] <= high
    assert json.loads(out.read_text())["gain_per_hand"] == first["gain_per_hand"]
    again = mod.main(["--worlds", "2", "--deals", "1", "--seed", "2"])
    assert again["gain_per_hand"] == first["gain_per_hand"]  # same seed, same hands
