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


AFTERSTATES = SCRIPT.parent / "ditch_afterstates.py"


def load_afterstates():
    spec = importlib.util.spec_from_file_location("ditch_afterstates", AFTERSTATES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_value_greedy_player_collects_fits_and_plays(tmp_path) -> None:
    mod = load_afterstates()
    data, value = tmp_path / "d.npz", tmp_path / "v.pt"
    mod.main(["collect", "--seed", "3", "--hands", "12", "--out", str(data)])
    saved = np.load(data)
    assert saved["X"].shape == (len(saved["Y"]), mod.GAME.obs_size) and len(saved["Y"]) >= 12 * 16
    # both seats' views of a state: their targets are opposite margins
    assert np.array_equal(saved["Y"][0::2], -saved["Y"][1::2])
    mod.main(["fit", "--data", str(data), "--epochs", "1", "--out", str(value)])
    huge, free = mod.main(
        ["play", "--value", str(value), "--seed", "4", "--deals", "2", "--delta", "1e9", "0"]
    )
    # never leaving smart's action plays smart's hands exactly: no gain, no deviation
    assert huge["gain_per_hand"] == 0.0 and huge["deviations"] == 0 and huge["decisions"] > 0
    assert free["hands"] == 4 and free["deviations"] > 0  # an untrained value does deviate


def test_an_ending_action_values_the_rival_hand_by_what_the_player_sees() -> None:
    mod = load_afterstates()
    game, rng = mod.GAME, np.random.default_rng(0)
    s = game.new_hand(rng, 1, game.shuffled_deck(np.random.default_rng(1)))
    for _ in range(40):
        game.apply(s, mod.smart_action(s, rng), rng)
    me = s.current
    assert s.hands[1 - me]  # the rival holds cards
    expected = mod.rival_penalty(s, me)
    # the cards this player has not seen are the rival's hand and the draw pile
    unseen = list(s.hands[1 - me]) + s.pile[s.pile_pos :]
    mean = np.mean([mod.SMART.penalty[o] for o in unseen])
    assert expected == len(s.hands[1 - me]) * mean
    assert expected != sum(mod.SMART.penalty[o] for o in s.hands[1 - me])  # not the true cost
    # the rival's hidden cards swapped with the pile's: the same estimate
    world = s.copy()
    hidden = list(world.hands[1 - me]) + world.pile[world.pile_pos :]
    k = len(world.hands[1 - me])
    hidden = hidden[k:] + hidden[:k]
    world.hands[1 - me] = tuple(sorted(hidden[:k]))
    world.pile = world.pile[: world.pile_pos] + hidden[k:]
    assert world.hands[1 - me] != s.hands[1 - me]
    assert mod.rival_penalty(world, me) == expected
