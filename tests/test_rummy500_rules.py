"""500 Rum rules against worked examples written with card strings (docs/rules.md section 3)."""

from __future__ import annotations

import numpy as np
import pytest
from test_rummy500_helpers import legal_names, make, plane, play, points

from rummyzoo.envs.cards import parse_cards, to_mask
from rummyzoo.envs.core import IllegalActionError
from rummyzoo.envs.rummy500.tables import MELD_PAIRS, MELD_TEST, MELDS, meldable, melds_in

# ------------------------------------------------------------------ tables


def test_meld_table_is_every_three_card_run_and_set():
    assert len(MELDS) == 100
    names = {m.name for m in MELDS}
    assert "Ah 2h 3h" in names and "Qh Kh Ah" in names and "Jh Qh Kh" in names
    assert not any(n.startswith("Kh Ah") for n in names)  # never round the corner
    assert "7c 7d 7h" in names and "7d 7h 7s" in names
    assert sum(not m.is_run for m in MELDS) == 52


@pytest.mark.parametrize(
    "hand, melds",
    [
        ("Ah 2h 3h", ["Ah 2h 3h"]),
        ("Qh Kh Ah", ["Qh Kh Ah"]),
        ("Kh Ah 2h", []),
        ("Qh Kh Ah 2h 3h", ["Ah 2h 3h", "Qh Kh Ah"]),
        ("4s 5s 6s 7s", ["4s 5s 6s", "5s 6s 7s"]),
        ("9c 9d 9h 9s", ["9c 9d 9h", "9c 9d 9s", "9c 9h 9s", "9d 9h 9s"]),
        ("9c 9d Tc", []),
    ],
)
def test_melds_in_hand(hand, melds):
    found = sorted(MELDS[m].name for m in melds_in(to_mask(parse_cards(hand))))
    assert found == sorted(melds)
    covered = meldable(to_mask(parse_cards(hand)))
    assert covered == to_mask(c for m in melds for c in parse_cards(m))


def test_meld_test_table_agrees_with_the_meld_table():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        cards = to_mask(rng.choice(52, size=int(rng.integers(3, 30)), replace=False).tolist())
        for card in range(52):
            if not cards >> card & 1:
                continue
            rank, shift, others, runs = MELD_TEST[card]
            fast = ((cards >> rank) & others).bit_count() > 1 or bool(runs[cards >> shift & 8191])
            slow = any(not partners & ~cards for partners in MELD_PAIRS[card])
            assert fast == slow == bool(meldable(cards) >> card & 1)


# ------------------------------------------------------------- ace values


def test_ace_low_run_scores_one():
    env = make(["Ah 2h 3h", "9c 9d Ks"], up="Kc", stock="5d")
    play(env, ["draw stock", "meld Ah 2h 3h"])
    assert env.hand_state.table_points[0] == 1 + 2 + 3
    play(env, ["discard 5d"])  # the last card: out by discarding
    assert all(env.terminations.values())
    assert env.infos["player_0"]["end_reason"] == "went out"
    assert env.infos["player_0"]["went_out"] == "player_0"
    assert points(env) == [6, -(9 + 9 + 10)]


def test_ace_high_run_scores_fifteen():
    env = make(["Qh Kh Ah", "9c 9d As"], up="Kc", stock="5d")
    play(env, ["draw stock", "meld Qh Kh Ah", "discard 5d"])
    assert points(env) == [10 + 10 + 15, -(9 + 9 + 15)]  # an ace in hand costs 15


@pytest.mark.parametrize("where, value", [("below", 1), ("above", 15)])
def test_ace_laid_off_low_is_one_and_high_is_fifteen(where, value):
    env = make(
        ["2h 3h 4h Jh Qh Kh 9s", "Ah 9c 9d 5s 6s 8d 2c"], up="Tc", stock="7c 7d", target_score=None
    )
    play(env, ["draw stock", "meld 2h 3h 4h", "meld Jh Qh Kh", "discard 7c", "draw stock"])
    assert {"lay off Ah below run", "lay off Ah above run"} <= legal_names(env)
    play(env, [f"lay off Ah {where} run"])
    assert env.hand_state.table_points[1] == value
    # The ace closes its end of the run: nothing fits beyond it.
    below = {"below": {"Th"}, "above": {"Ah", "Th"}}[where]
    above = {"below": {"5h", "Ah"}, "above": {"5h"}}[where]
    assert set(plane(env, "player_0", "fits_below_run")) == below
    assert set(plane(env, "player_0", "fits_above_run")) == above


def test_no_round_the_corner():
    with pytest.raises(ValueError, match="unknown action name"):
        make(["Kh Ah 2h", "9c 9d 9s"], up="Kc").action_index("meld Kh Ah 2h")
    # Q-K-A on the table takes a jack below, never a two above the ace.
    env = make(["Qh Kh Ah 9s 9d", "2h Jh 5c 6c 8d"], up="Tc", stock="3d 4d")
    play(env, ["draw stock", "meld Qh Kh Ah", "discard 3d", "draw stock"])
    lays = {n for n in legal_names(env) if n.startswith("lay off")}
    assert lays == {"lay off Jh below run"}
    # A-2-3 on the table takes a four above, never a king below the ace.
    env = make(["Ah 2h 3h 9s 9d", "Kh 4h 5c 6c 8d"], up="Tc", stock="3d 4d")
    play(env, ["draw stock", "meld Ah 2h 3h", "discard 3d", "draw stock"])
    lays = {n for n in legal_names(env) if n.startswith("lay off")}
    assert lays == {"lay off 4h above run"}


# ---------------------------------------------------------------- lay-offs


def test_lay_off_on_opponents_run_scores_for_the_one_who_lays_off():
    env = make(["4h 5h 6h 9s", "7h 8c 8d 8s"], up="Kc", stock="2d 3c")
    play(env, ["draw stock", "meld 4h 5h 6h", "discard 2d"])
    play(env, ["draw stock", "lay off 7h above run", "meld 8c 8d 8s", "discard 3c"])
    assert env.infos["player_1"]["went_out"] == "player_1"
    assert env.infos["player_1"]["melded_points"] == 7 + 24
    assert env.infos["player_0"]["melded_points"] == 15  # the run's owner gets nothing for 7h
    assert points(env) == [15 - 9, 31]
    assert env.unwrapped.hand_state.runs[0][3][6] == 1  # 7h (position 6) was laid by player_1


def test_lay_off_on_a_lay_off():
    env = make(["6h 5h 4h 8h 9s", "7h Kc Qd 2s 3c"], up="Jc", stock="2d 3d 4d")
    play(env, ["draw stock", "meld 4h 5h 6h"])
    assert "lay off 8h above run" not in legal_names(env)  # 8h does not touch 6h
    play(env, ["discard 2d", "draw stock", "lay off 7h above run", "discard 3d", "draw stock"])
    assert "lay off 8h above run" in legal_names(env)
    play(env, ["lay off 8h above run"])
    assert env.hand_state.table_points == (4 + 5 + 6 + 8, 7)
    assert plane(env, "player_0", "table_laid", 0) == {"4h": 1, "5h": 1, "6h": 1, "8h": 1}
    assert plane(env, "player_0", "table_laid", 1) == {"7h": 1}
    assert plane(env, "player_1", "table_laid", 1) == {"4h": 1, "5h": 1, "6h": 1, "8h": 1}
    assert set(plane(env, "player_0", "table_runs")) == {"4h", "5h", "6h", "7h", "8h"}
    assert plane(env, "player_0", "fits_above_run") == {"9h": 1}
    assert plane(env, "player_0", "fits_below_run") == {"3h": 1}


def test_set_of_four_completed_by_lay_off():
    env = make(["7c 7d 7h 9s", "7s Kd Qd Jc"], up="2c", stock="3d 4d")
    play(env, ["draw stock", "meld 7c 7d 7h", "discard 3d", "draw stock"])
    assert plane(env, "player_1", "fits_set") == {"7s": 1}
    assert "lay off 7s on set" in legal_names(env)
    play(env, ["lay off 7s on set"])
    assert env.hand_state.table_points == (21, 7)
    assert env.hand_state.sets[0][1] == 0b1111
    assert plane(env, "player_1", "fits_set") == {}
    assert plane(env, "player_1", "table_runs") == {}


def test_two_deck_sets_take_distinct_suits_only():
    hands = ["7c 7c 7d 9s", "7s 2d 3d 4c", "Kc Kd Ks 2s", "5h 6h 9h Ts", "Jc Jd 4s 5s"]
    env = make(hands, up="Ac", stock="7h 8d 8c 8h 8s 9d")
    assert env.game.num_decks == 2
    play(env, ["draw stock"])
    melds = {n for n in legal_names(env) if n.startswith("meld")}
    assert melds == {"meld 7c 7d 7h"}  # 7c 7c 7d is not a set
    play(env, ["meld 7c 7d 7h"])
    assert "lay off 7c on set" not in legal_names(env)  # the second 7c may not join it
    assert plane(env, "player_0", "hand") == {"7c": 1, "9s": 1}
    play(env, ["discard 9s", "draw stock"])
    assert "lay off 7s on set" in legal_names(env)


# ------------------------------------------------------------------ digging


def _pile_of_three(**options):
    """Discard pile Tc 2s 3d (bottom to top), player_0 to draw holding Jc Qc."""
    env = make(["Jc Qc 4h 9d", "2d 5s 8h Kd"], up="Tc", stock="2s 3d 6c", **options)
    play(env, ["draw stock", "discard 2s", "draw stock", "discard 3d"])
    return env


def test_digging_three_deep_takes_every_card_above():
    env = _pile_of_three()
    assert plane(env, "player_0", "discard_pile") == pytest.approx(
        {"Tc": 1 / 52, "2s": 2 / 52, "3d": 3 / 52}
    )
    assert legal_names(env) == {"draw stock", "dig Tc"}
    play(env, ["dig Tc"])
    state = env.hand_state
    assert state.pile == []
    assert sorted(state.hand_cards(0)) == sorted(parse_cards("Jc Qc 4h 9d Tc 2s 3d"))
    assert plane(env, "player_1", "opponent_known") == {"Tc": 1, "2s": 1, "3d": 1}
    assert plane(env, "player_0", "pending") == {"Tc": 1}
    # The chosen card must be used by the first play: no discard, no other play.
    assert legal_names(env) == {"meld Tc Jc Qc"}
    play(env, ["meld Tc Jc Qc"])
    assert plane(env, "player_0", "pending") == {}
    assert "discard 2s" in legal_names(env)
    play(env, ["discard 2s"])
    assert plane(env, "player_1", "opponent_known") == {"3d": 1}  # Tc melded, 2s thrown


def test_digging_illegal_when_the_card_cannot_be_used():
    env = _pile_of_three()
    for name in ["dig 2s", "dig 3d"]:
        with pytest.raises(IllegalActionError, match=f"illegal action .*{name}"):
            env.step(env.action_index(name))
    env.step(env.action_index("dig Tc"))  # the state is untouched by the refused tries
    assert env.hand_state.pending == parse_cards("Tc")[0]


def test_digging_legal_through_a_card_above():
    env = make(["6h Kc Kd 2s", "7h 9c 4d Js"], up="5h", stock="3c 8c")
    play(env, ["draw stock", "discard 6h"])  # pile 5h 6h
    digs = {n for n in legal_names(env) if n.startswith("dig")}
    assert digs == {"dig 5h"}  # 5h 6h 7h; 6h alone would miss the 5h below it
    play(env, ["dig 5h"])
    assert legal_names(env) == {"meld 5h 6h 7h"}


@pytest.mark.parametrize("free", [False, True])
def test_top_card_must_be_used_unless_free(free):
    usable = make(["Jc Qc 4h 9d", "2d 5s 8h Kd"], up="Tc", top_discard_free=free)
    useless = make(["Jd Qc 4h 9d", "2d 5s 8h Kd"], up="Tc", top_discard_free=free)
    assert "dig Tc" in legal_names(usable)
    assert ("dig Tc" in legal_names(useless)) is free
    play(usable, ["dig Tc"])
    if free:
        assert usable.hand_state.pending == -1
        assert {"discard Tc", "meld Tc Jc Qc", "discard 4h"} <= legal_names(usable)
    else:
        assert legal_names(usable) == {"meld Tc Jc Qc"}
        obs = usable.observe("player_0")["observation"]
        phase = usable.game.observation_layout["phase"][0]
        assert list(obs[phase : phase + 3]) == [0, 1, 0]  # must use the pending card


def test_free_top_card_is_not_free_when_digging_deeper():
    env = _pile_of_three(top_discard_free=True)
    assert legal_names(env) == {"draw stock", "dig Tc", "dig 3d"}
    play(env, ["dig Tc"])
    assert legal_names(env) == {"meld Tc Jc Qc"}


def test_two_decks_dig_the_lower_copy():
    hands = ["Jh Kh 2c 3c", "5d 6d 7d 8d", "9c 9d Ac Ad", "Qh 9h 4c 4s", "Tc Jc 5c 5h"]
    env = make(hands, up="Qh", stock="Ts 2d 3s 4d 5s")
    play(env, ["draw stock", "discard Ts", "draw stock", "discard 2d", "draw stock"])
    play(env, ["discard 3s", "draw stock", "discard Qh", "draw stock", "discard 5s"])
    state = env.hand_state
    assert state.pile == parse_cards("Qh Ts 2d 3s Qh 5s")
    assert plane(env, "player_0", "discard_pile")["Qh"] == pytest.approx(5 / 104)
    assert plane(env, "player_0", "discard_pile_lower") == {"Qh": pytest.approx(1 / 104)}
    assert legal_names(env) == {"draw stock", "dig Qh", "dig Qh deep"}
    play(env, ["dig Qh deep"])
    assert state.pile == []
    assert plane(env, "player_0", "hand")["Qh"] == 2
    assert plane(env, "player_1", "opponent_known", 3)["Qh"] == 2  # player_0 from player_1
    assert legal_names(env) == {"meld Jh Qh Kh"}
    play(env, ["meld Jh Qh Kh", "discard Qh"])
    assert plane(env, "player_1", "opponent_known", 3) == {"Ts": 1, "2d": 1, "3s": 1, "5s": 1}
    assert plane(env, "player_0", "discard_pile") == {"Qh": pytest.approx(1 / 104)}
    assert plane(env, "player_0", "discard_pile_lower") == {}


@pytest.mark.parametrize("view", [1, 2, 3, 4])
def test_two_decks_a_played_copy_never_shows_whether_another_is_held(view):
    """player_0 digs 6c and melds it; its other cards differ only in 4h or the second 6c. The
    table cannot tell the copies apart, so nobody may see which: every other seat's observation
    and its text view are the same in both deals (the known 6c is gone in both)."""
    others = ["2c 3d 4s 5h Jd Qs Ah", "2d 3s 4c 5c Jh Qd As", "2h 3c 4d 5s Js Qh Ac"]
    others.append("2s 3h 5d Jc Qc Ad Tc")
    seen = []
    for held in ("4h", "6c"):
        env = make(["7c 8c Kd Kh 2s 9d " + held, *others], up="6c", stock="Ts Td Th Tc 9s")
        for card in ["Ts", "Td", "Th", "Tc", "9s"]:  # players 1-4, then player_0's first turn
            play(env, ["draw stock", f"discard {card}"])
        play(env, ["dig 6c"])
        assert plane(env, f"player_{view}", "opponent_known", 4 - view)["6c"] == 1
        play(env, ["meld 6c 7c 8c", "discard Kd"])
        assert sorted(env.hand_state.hand_cards(0)).count(parse_cards("6c")[0]) == (held == "6c")
        assert "6c" not in plane(env, f"player_{view}", "opponent_known", 4 - view)
        text = env.unwrapped.game.render(env.hand_state, view, env.match.totals_by_seat())
        seen.append((env.observe(f"player_{view}")["observation"], text))
    (obs_a, text_a), (obs_b, text_b) = seen
    assert np.array_equal(obs_a, obs_b)
    assert text_a == text_b


def test_two_decks_dig_the_upper_copy_leaves_the_lower_one():
    hands = ["Jh Kh 2c 3c", "5d 6d 7d 8d", "9c 9d Ac Ad", "Qh 9h 4c 4s", "Tc Jc 5c 5h"]
    env = make(hands, up="Qh", stock="Ts 2d 3s 4d 5s")
    play(env, ["draw stock", "discard Ts", "draw stock", "discard 2d", "draw stock"])
    play(env, ["discard 3s", "draw stock", "discard Qh", "draw stock", "discard 5s", "dig Qh"])
    assert env.hand_state.pile == parse_cards("Qh Ts 2d 3s")
    assert plane(env, "player_0", "discard_pile")["Qh"] == pytest.approx(1 / 104)
    assert plane(env, "player_0", "discard_pile_lower") == {}
    assert plane(env, "player_0", "discard_top") == {"3s": 1}
    assert plane(env, "player_0", "hand")["Qh"] == 1


# ------------------------------------------------------------ going out


def test_going_out_by_melding_the_last_cards_without_discarding():
    env = make(["4h 5h 6h", "9c 9d Ks"], up="Kc", stock="7h")
    play(env, ["draw stock", "meld 4h 5h 6h", "lay off 7h above run"])
    assert all(env.terminations.values())
    assert env.hand_state.pile == parse_cards("Kc")  # nothing was discarded
    assert env.infos["player_0"]["went_out"] == "player_0"
    assert points(env) == [4 + 5 + 6 + 7, -28]


def test_going_out_straight_after_digging():
    env = make(["Jc Qc", "9c 9d"], up="Tc")
    play(env, ["dig Tc", "meld Tc Jc Qc"])
    assert env.infos["player_0"]["end_reason"] == "went out"
    assert points(env) == [30, -18]


# ------------------------------------------------------ stock exhaustion

CLUBS = "Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc"
P0_LONG = "Kh Ks Qs " + CLUBS + " Ad 2d 3d 4d 5d 6d 7d 8d 9d Td"
P1_CAN_DIG = "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qd Jd Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh"
P0_CANNOT = P0_LONG.replace("Qs", "Jd")
P1_CANNOT = P1_CAN_DIG.replace("Jd", "Qs")  # no Jd for Jd-Qd-Kd, no third king
P0_HAND = 30 + 89 + 69  # Kh Ks Qs; clubs A-Q; diamonds A-T
P1_HAND = 79 + 20 + 89  # spades A-J; Qd Jd; hearts A-Q


def test_end_after_last_stock_turn():
    env = make(
        [P0_LONG, P1_CAN_DIG], up="Kd", stock="Kc", stock_exhaustion="end_after_last_stock_turn"
    )
    assert env.hand_state.stock_size == 1
    play(env, ["draw stock", "meld Ac 2c 3c", "discard Kc"])
    assert all(env.terminations.values())
    assert env.infos["player_0"]["end_reason"] == "stock exhausted"
    assert env.infos["player_0"]["went_out"] is None
    # Negative hand scores: the cards left in hand outweigh the table.
    assert points(env) == [6 - (P0_HAND - 20), -P1_HAND]


def test_discard_only_player_may_dig_or_pass():
    env = make([P0_LONG, P1_CAN_DIG], up="Kd", stock="Kc")
    play(env, ["draw stock", "discard Kc"])
    assert not any(env.terminations.values())
    assert legal_names(env) == {"pass", "dig Kd"}  # Kd (with Kc above it) fits Jd Qd
    play(env, ["pass"])
    assert all(env.terminations.values())
    assert env.infos["player_1"]["end_reason"] == "pass"
    assert points(env) == [-P0_HAND, -P1_HAND]
    assert env.infos["player_0"]["hand_penalty"] == P0_HAND


def test_discard_only_play_goes_on_from_the_pile():
    env = make([P0_LONG, P1_CAN_DIG], up="Kd", stock="Kc")
    play(env, ["draw stock", "discard Kc", "dig Kd", "meld Jd Qd Kd"])
    assert env.hand_state.table_points[1] == 30
    play(env, ["discard Kc"])
    assert legal_names(env) == {"pass", "dig Kc"}  # Kc Kh Ks or Jc Qc Kc
    play(env, ["dig Kc"])
    assert legal_names(env) == {"meld Kc Kh Ks", "meld Jc Qc Kc", "meld Qc Kc Ac"}
    play(env, ["meld Kc Kh Ks", "discard Qs"])
    assert not any(env.terminations.values())
    assert legal_names(env) == {"pass", "dig Qs"}  # Ts Js Qs


def test_discard_only_ends_when_the_next_player_cannot_dig():
    env = make([P0_CANNOT, P1_CANNOT], up="Kd", stock="Kc")
    play(env, ["draw stock", "discard Kc"])
    assert all(env.terminations.values())
    assert env.infos["player_1"]["end_reason"] == "stock exhausted"


# --------------------------------------------------------------- match


def test_match_ends_with_several_players_over_target_highest_wins():
    env = make(
        ["Tc Jc Qc Qh Kh Ah", "8s 8d 8h 2c 3c 9s"], up="Kc", stock="4s 2d 5h", target_score=15
    )
    play(env, ["draw stock", "meld Tc Jc Qc", "discard 4s"])
    play(env, ["draw stock", "meld 8s 8d 8h", "discard 9s"])
    play(env, ["draw stock", "meld Qh Kh Ah", "discard 5h"])
    assert points(env) == [65, 24 - 7]
    assert env.match_totals == {"player_0": 65, "player_1": 17}  # both past 15
    assert all(env.terminations.values())
    assert env.infos["player_0"]["winner"] and not env.infos["player_1"]["winner"]


def test_match_plays_on_below_target():
    env = make(["Ah 2h 3h", "9c 9d Ks"], up="Kc", stock="5d", target_score=500)
    play(env, ["draw stock", "meld Ah 2h 3h", "discard 5d"])
    assert not any(env.terminations.values())
    assert env.infos["player_0"]["totals"] == 6 and env.infos["player_1"]["totals"] == -28
    assert env.hand_state.dealer == 0 and env.agent_selection == "player_1"  # the deal rotated
