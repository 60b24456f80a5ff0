"""Why a move is not legal now (``Game.illegal_reason``), as the terminal game and the web
app say it: worked examples, and over random games every illegal action of Knock Rummy and
Ditch Rummy has a reason and no legal one has."""

from __future__ import annotations

import numpy as np
import pytest

from rummyzoo.envs.registry import make_env

CASES = [
    ("knock_rummy", 2, {}),
    ("knock_rummy", 2, {"knock_max_deadwood": 10}),
    ("knock_rummy", 2, {"allow_discard_of_taken": True}),
    ("knock_rummy", 4, {}),
    ("ditch_rummy", 2, {}),
    ("ditch_rummy", 3, {"draw_rule": "up_to_3"}),
    ("ditch_rummy", 2, {"single_extends_meld": True, "runs_same_suit": True}),
    ("ditch_rummy", 4, {"teams": True, "draw_rule": "up_to_3", "max_hand": 4}),
]


@pytest.mark.parametrize("variant, players, options", CASES)
def test_every_illegal_action_has_a_reason_and_no_legal_one_has(variant, players, options):
    env = make_env(variant, players, **{"target_score": None, **options})
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(40):
        env.reset(seed=seed)
        game = env.unwrapped.game
        for _agent in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            state = env.unwrapped.hand_state
            mask = env.unwrapped.match.legal_mask()
            for action in range(game.num_actions):
                reason = game.illegal_reason(state, action)
                name = game.action_name(action)
                assert bool(reason) != bool(mask[action]), (name, reason, mask[action])
            checked += 1
            env.step(int(rng.choice(np.flatnonzero(mask))))
    assert checked > 150


def _after(variant: str, deck: str, moves: list[str], **options):
    """The game and hand state of a 2-player hand dealt from ``deck`` (cards by name, top of
    the stock first) after ``moves`` (by name)."""
    env = make_env(variant, 2, target_score=None, **options)
    env.reset(seed=0, options={"deck": deck.split()})
    game = env.unwrapped.game
    for move in moves:
        env.step(game.action_index(move))
    return game, env.unwrapped.hand_state


def _reasons(variant: str, deck: str, moves: list[str], **options) -> dict[str, str]:
    """Every action's reason after ``moves``, by the action's name."""
    game, state = _after(variant, deck, moves, **options)
    return {game.action_name(a): game.illegal_reason(state, a) for a in range(game.num_actions)}


def test_knock_worked_examples():
    from rummyzoo.envs.cards import CARD_NAMES

    # player_0: As 2s 3s 4s 5s 6s 7s 8s 9s Ts; player_1 the hearts; the up card Kc
    spades = [f"{r}s" for r in "A23456789T"]
    hearts = [f"{r}h" for r in "A23456789T"]
    rest = [c for c in CARD_NAMES if c not in [*spades, *hearts, "Kc"]]
    deal = [c for pair in zip(spades, hearts, strict=True) for c in pair]
    deck = " ".join([*deal, "Kc", *rest])
    taken = _reasons("knock_rummy", deck, ["take discard"], knock_max_deadwood=10)
    assert taken["discard Kc"] == (
        "Kc was just taken from the discard pile: it cannot be thrown back this turn (option "
        "allow_discard_of_taken)"
    )
    assert taken["discard Kh"] == "Kh is not in your hand"
    assert (
        taken["draw stock"] == "you have drawn this turn already: discard a card, or knock with one"
    )
    # without As: the run 2s-Ts and Kc, 10 deadwood; without 2s: As and Kc, 11
    assert taken["knock As"] == ""
    assert taken["knock 2s"] == (
        "knocking with 2s leaves 11 deadwood, more than 10 (option knock_max_deadwood)"
    )
    first = _reasons("knock_rummy", deck, [])
    assert (
        first["discard As"]
        == "draw first: a turn starts with a card from the stock or the discard pile"
    )


def test_ditch_worked_examples():
    from rummyzoo.envs.cards import CARD_NAMES

    top = ["9c", "9h", "4d", "Jc", "Qc", "Kc"]  # player_0 draws 9c 9h 4d, player_1 Jc Qc Kc
    deck = " ".join(top + [c for c in CARD_NAMES if c not in top])
    drawn = _reasons("ditch_rummy", deck, ["draw 3"])  # sorted hand: 4d 9c 9h
    assert drawn["meld 0 1"] == (
        "4d 9c make no meld: a set is 2 or 3 cards of one rank, a blind run 2 or 3 consecutive "
        "ranks (ace high only)"
    )
    assert drawn["meld 1 2"] == ""
    assert drawn["single 0"] == "4d fits no meld on the table (a set of its rank, or a run's end)"
    assert drawn["draw 1"] == (
        "you have drawn this turn already: meld, play singles, ditch, or end the turn"
    )
    ditching = _reasons("ditch_rummy", deck, ["draw 3", "ditch 0"])
    assert ditching["meld 0 1"] == (
        "you have begun to ditch: melds and singles come first (ditch more, or end the turn)"
    )
    assert ditching["ditch 2"] == "you hold 2 cards: positions 0 to 1"
    second = _reasons("ditch_rummy", deck, ["draw 2", "end turn"], draw_rule="up_to_3")
    assert second["meld 0 1"] == "draw first: a turn starts with a draw (of 0 cards or more)"


def test_no_action_id_gets_no_reason():
    for variant in ("knock_rummy", "ditch_rummy"):
        env = make_env(variant, 2)
        env.reset(seed=0)
        game, state = env.unwrapped.game, env.unwrapped.hand_state
        for bad in (2.5, None, "5", True, -1, 10**6):
            assert game.illegal_reason(state, bad) == "", (variant, bad)
