from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rummyzoo.envs.cards import (
    CARD_NAMES,
    card_id,
    cards_of,
    count_vector,
    format_card,
    format_cards,
    hand_vector,
    mask_cards,
    parse_card,
    parse_cards,
    parse_deck,
    rank_of,
    suit_of,
    to_mask,
)
from rummyzoo.envs.decks import deck_for


def test_card_ids_follow_suit_major_order():
    assert parse_card("Ac") == 0
    assert parse_card("Kc") == 12
    assert parse_card("Ad") == 13
    assert parse_card("Ks") == 51
    assert card_id(rank=9, suit=2) == parse_card("Th")
    assert rank_of(parse_card("Qh")) == 11 and suit_of(parse_card("Qh")) == 2


def test_parse_accepts_case_and_ten():
    assert parse_cards("As 2s 3s") == [39, 40, 41]
    assert parse_card("10h") == parse_card("Th") == parse_card("th") == parse_card("TH")
    assert parse_cards(["kd", "QD"]) == [parse_card("Kd"), parse_card("Qd")]


def test_format_round_trip_all_cards():
    assert parse_cards(format_cards(range(52))) == list(range(52))
    assert format_card(parse_card("Td"), symbols=True) == "T♦"


@pytest.mark.parametrize("bad", ["1s", "Ax", "", "As2", "11h", "Z"])
def test_parse_rejects_non_cards(bad):
    with pytest.raises(ValueError, match="not a card"):
        parse_card(bad)


def test_parse_cards_refuses_ids_and_sets():
    """Card ids failed with an AttributeError; a set, which has no order, was read in its own."""
    for bad in ([0, 1, 2], np.array([0, 51])):
        with pytest.raises(ValueError, match=r"card strings, got 0 \(these are card ids already"):
            parse_cards(bad)
    with pytest.raises(ValueError, match="got a set, which has no order"):
        parse_cards({"As", "2s"})
    assert parse_cards(["As", "2s"]) == parse_cards("As 2s") == parse_cards(("As", "2s"))


def test_vectors_and_masks():
    cards = parse_cards("As 2s 3s Kh")
    vec = hand_vector(cards)
    assert vec.dtype == bool and vec.sum() == 4 and cards_of(vec) == sorted(cards)
    with pytest.raises(ValueError, match="twice"):
        hand_vector(parse_cards("As As"))
    counts = count_vector(parse_cards("As As Kh"))
    assert counts.dtype == np.int8 and counts[parse_card("As")] == 2
    assert cards_of(counts) == sorted(parse_cards("As As Kh"))
    with pytest.raises(ValueError, match="more than 2"):
        count_vector(parse_cards("As As As"))
    assert mask_cards(to_mask(cards)) == sorted(cards)


def test_parse_deck_validates():
    assert len(parse_deck(range(52))) == 52
    assert len(parse_deck(list(range(52)) * 2, num_decks=2)) == 104
    with pytest.raises(ValueError, match="exactly 1"):
        parse_deck(range(51))
    with pytest.raises(ValueError, match="As x2"):
        parse_deck(["As"] + [format_card(c) for c in range(1, 52) if c != 39] + ["As"])
    # a set has no order to deal from (a set of 52 ids iterates sorted; of strings, in an order
    # that changes from run to run), and a mapping is most likely a slip
    for unordered, kind in [
        (set(range(52)), "set"), (frozenset(range(52)), "set"), ({}.keys(), "set"),
        (dict.fromkeys(range(52)), "mapping"),
    ]:  # fmt: skip
        with pytest.raises(
            ValueError, match=f"a deck \\(top first\\) lists cards in order, not a {kind}"
        ):
            parse_deck(unordered)
    assert len(parse_deck({i: i for i in range(52)}.values())) == 52  # a view of values: in order


def test_a_deck_without_an_order_is_refused_and_the_env_left_as_it_was():
    from rummyzoo.envs.registry import make_env

    env = make_env("knock_rummy", 2)
    env.reset(seed=3)
    before = env.unwrapped.observe(env.agent_selection)["observation"].copy()
    with pytest.raises(ValueError, match="not a set"):
        env.reset(seed=4, options={"deck": set(range(52))})
    after = env.unwrapped.observe(env.agent_selection)["observation"]
    np.testing.assert_array_equal(before, after)


# ------------------------------------------------------------------ scripted decks
def test_deck_for_deals_one_card_at_a_time_clockwise():
    deck = deck_for(["Ah 2h 3h", "4c 5c 6c"], "Kd", "9s 8s")
    assert deck[:9] == ["Ah", "4c", "2h", "5c", "3h", "6c", "Kd", "9s", "8s"]
    assert sorted(deck) == sorted(CARD_NAMES)
    assert deck[9:] == [c for c in CARD_NAMES if c not in deck[:9]]  # the rest in id order
    # Dealt by seat 0, seat 1 (on its left) gets the first card.
    assert deck_for(["Ah 2h 3h", "4c 5c 6c"], "Kd", dealer=0)[:6] == [
        *("4c", "Ah", "5c", "2h", "6c", "3h")
    ]
    three = deck_for(["Ah 2h", "4c 5c", "9d Td"], "Kd", dealer=1)
    assert three[:7] == ["9d", "Ah", "4c", "Td", "2h", "5c", "Kd"]
    # No deal (Ditch Rummy): the named cards are the top of the pile.
    assert deck_for(stock="9c 9h Kd")[:3] == ["9c", "9h", "Kd"]
    assert deck_for() == list(CARD_NAMES)


def test_deck_for_two_decks_holds_every_card_twice():
    hands = ["7c 7c 7d", "2s 3s 4s", "Ah Kh Qh", "5d 6d 7d", "9c Tc Jc"]
    deck = deck_for(hands, "Kd", decks=2)
    assert len(deck) == 104 and Counter(deck) == Counter(CARD_NAMES * 2)
    assert deck[:5] == ["7c", "2s", "Ah", "5d", "9c"]
    with pytest.raises(ValueError, match="7c named more often than 2 deck"):
        deck_for(hands, "7c", decks=2)  # a third 7c


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((["As 2s", "Kd"], "7c"), "same size"),
        ((["As 2s", "Kd Kc"], None), "give the upcard"),
        ((["As 2s", "Kd Kc"], "7c 8c"), "upcard must be one card"),
        (([], "7c"), "without hands"),
        ((["As 2s", "Kd Kc"], "As"), "As named more often than 1 deck"),
        (([], None, "9c 9c"), "9c named more often"),
        ((["As", "Kd"], "7c", "", 1, 2), "dealer must be a seat 0-1"),
        ((["Xx", "Kd"], "7c"), "not a card"),
        (("As 2s 3s", "7c"), r"one hand per seat, got the string 'As 2s 3s'"),
    ],
)
def test_deck_for_rejects_bad_scripts(args, message):
    with pytest.raises(ValueError, match=message):
        deck_for(*args)
