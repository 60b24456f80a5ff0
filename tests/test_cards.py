from __future__ import annotations

import numpy as np
import pytest

from rummyzoo.envs.cards import (
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
