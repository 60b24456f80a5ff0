"""Knock Rummy rules against worked examples written with card strings (docs/rules.md section 1)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from knock_helpers import make, play

from rummyzoo.envs import knock_rummy_v0
from rummyzoo.envs.cards import CARD_NAMES, parse_card, parse_cards
from rummyzoo.envs.core import IllegalActionError
from rummyzoo.envs.decks import deck_for
from rummyzoo.envs.knock_rummy.rules import KnockRummyRules, score_showdown

JUNK_56 = "Ac 3c 5c 7c Jc 2d 4d 6d 8d Td"  # no melds: 1+3+5+7+10+2+4+6+8+10


def points(env) -> list[float]:
    return [env.infos[a]["points"] for a in env.possible_agents]


def test_rules_worked_example_four_players():
    """docs/rules.md: knocker 12, A 5, B 5, C 20 gives +21, +21, -15, -27 (knocker)."""
    env = make(
        4,
        [
            "As 2s 3s 2h 4d 5c Kh",  # knocker: draws Ah, knocks Kh -> 2h 4d 5c Ah = 12
            "7c 8c 9c Jd Qd Kd 5h",  # A: 5
            "7d 8d 9d Th Jh Qh 5s",  # B: 5
            "Tc Jc Qc 6s 7s 3h 4c",  # C: 6+7+3+4 = 20
        ],
        up="9s",
        stock="Ah",
    )
    play(env, ["draw stock", "knock Kh"])
    assert [env.infos[a]["deadwood"] for a in env.possible_agents] == [12, 5, 5, 20]
    assert points(env) == [-27, 21, 21, -15]
    assert sum(points(env)) == 0
    assert all(env.terminations.values())
    assert env.infos["player_0"]["knocker"] == "player_0"
    assert env.infos["player_0"]["deadwood_cards"] == ["Ah", "4d", "5c", "2h"] or sorted(
        env.infos["player_0"]["deadwood_cards"]
    ) == sorted(["Ah", "4d", "5c", "2h"])
    assert sorted(map(tuple, env.infos["player_1"]["melds"])) == [
        ("7c", "8c", "9c"),
        ("Jd", "Qd", "Kd"),
    ]


def test_score_showdown_worked_example_directly():
    rules = KnockRummyRules(num_players=4)
    assert score_showdown([12, 5, 5, 20], 0, rules) == [-27, 21, 21, -15]


def test_knocker_wins_alone():
    env = make(2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="2c")
    play(env, ["draw stock", "knock Kc"])
    assert [env.infos[a]["deadwood"] for a in env.possible_agents] == [2, 56]
    assert points(env) == [54, -54]
    assert env.rewards == {"player_0": 54, "player_1": -54}


def test_rummy_bonus():
    env = make(2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="9s")
    play(env, ["draw stock", "knock Kc"])
    assert env.infos["player_0"]["deadwood"] == 0
    assert points(env) == [56 + 25, -(56 + 25)]


def test_rummy_bonus_option_and_no_bonus_when_not_alone():
    env = make(2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="9s", rummy_bonus=0)
    play(env, ["draw stock", "knock Kc"])
    assert points(env) == [56, -56]
    # An opponent also on 0 deadwood takes the win: no bonus, no transfer.
    rules = KnockRummyRules(num_players=2)
    assert score_showdown([0, 0], 0, rules) == [0, 0]


def test_opponent_tying_the_knocker_wins_instead():
    # 3 players: knocker 5, A 5, B 20 -> A alone wins B's 15; the knocker pays nothing.
    rules = KnockRummyRules(num_players=3)
    assert score_showdown([5, 5, 20], 0, rules) == [0, 15, -15]


def test_knocker_tie_in_env_hands():
    env = make(
        3,
        [
            "As 2s 3s 4s 2c 3d Kh",  # draws Ad, knocks Kh -> 2c 3d Ad = 6
            "7c 8c 9c Jd Qd Kd 6d",  # A: 6 (ties the knocker)
            "Tc Jc Qc 6s 7s 3h 4h",  # B: 20
        ],
        up="9s",
        stock="Ad",
    )
    play(env, ["draw stock", "knock Kh"])
    assert [env.infos[a]["deadwood"] for a in env.possible_agents] == [6, 6, 20]
    assert points(env) == [0, 14, -14]
    assert env.infos["player_1"]["winner"] and not env.infos["player_0"]["winner"]


def test_two_opponents_tie_below_the_knocker_exact_and_floor():
    rules = KnockRummyRules(num_players=3)
    assert score_showdown([12, 5, 5], 0, rules) == [-27, Fraction(27, 2), Fraction(27, 2)]
    floor = KnockRummyRules(num_players=3, split_rounding="floor")
    assert score_showdown([12, 5, 5], 0, floor) == [-27, 13, 13]
    env = make(
        3,
        [
            "As 2s 3s 2h 4d 5c Kh",  # draws Ah -> 12
            "7c 8c 9c Jd Qd Kd 5h",  # 5
            "7d 8d 9d Th Jh Qh 5s",  # 5
        ],
        up="9s",
        stock="Ah",
    )
    play(env, ["draw stock", "knock Kh"])
    assert points(env) == [-27, 13.5, 13.5]


def test_undercut_all_lower_versus_winners_only():
    all_lower = KnockRummyRules(num_players=3)
    assert score_showdown([12, 5, 8], 0, all_lower) == [-27, 20, 7]
    winners = KnockRummyRules(num_players=3, undercut_penalty_to="winners_only")
    assert score_showdown([12, 5, 8], 0, winners) == [-17, 20, -3]
    hands = [
        "As 2s 3s 2h 4d 5c Kh",  # 12
        "7c 8c 9c Jd Qd Kd 5h",  # 5
        "7d 8d 9d Th Jh Qh 8s",  # 8
    ]
    for option, expected in [("all_lower", [-27, 20, 7]), ("winners_only", [-17, 20, -3])]:
        env = make(3, hands, up="9s", stock="Ah", undercut_penalty_to=option)
        play(env, ["draw stock", "knock Kh"])
        assert points(env) == expected, option


def test_undercut_penalty_option():
    rules = KnockRummyRules(num_players=2, undercut_penalty=0)
    assert score_showdown([12, 5], 0, rules) == [-7, 7]
    assert score_showdown([12, 5], 0, KnockRummyRules(num_players=2)) == [-17, 17]


def _play_out_stock(env) -> int:
    """Everyone draws from the stock and throws the drawn card until the hand ends."""
    turns = 0
    while not any(env.terminations.values()) and not any(env.truncations.values()):
        drawn = env.hand_state.stock_cards()[0]
        env.step(env.action_index("draw stock"))
        env.step(2 + drawn)  # "discard <drawn card>"
        turns += 1
    return turns


def test_void_hand_on_stock_exhaustion():
    env = knock_rummy_v0.raw_env(num_players=2)
    env.reset(seed=11)
    assert env.hand_state.stock_size == 31
    turns = _play_out_stock(env)
    assert turns == 31
    assert points(env) == [0, 0] and env.infos["player_0"]["void"]
    assert all(env.terminations.values()) and not any(env.truncations.values())


def test_void_threshold_two():
    env = knock_rummy_v0.raw_env(num_players=2, void_threshold=2)
    env.reset(seed=11)
    assert _play_out_stock(env) == 29
    assert env.hand_state.stock_size == 2 and env.infos["player_1"]["void"]


def test_stock_exhaustion_showdown_scores_without_knocker():
    env = knock_rummy_v0.raw_env(num_players=2, stock_exhaustion="showdown")
    env.reset(seed=11)
    _play_out_stock(env)
    hands = [sorted(env.hand_state.hand_cards(s)) for s in range(2)]
    assert hands == [
        sorted(parse_cards("5c 8c 9c 5d Ah As 4s 5s Js Ks")),  # 5c 5d 5s: 58 - 15 = 43
        sorted(parse_cards("2c 4c 4d 7d 3h 5h Th Kh 9s Qs")),  # no meld: 64
    ]
    assert [env.infos[a]["deadwood"] for a in env.possible_agents] == [43, 64]
    assert points(env) == [21, -21]  # the lower deadwood takes the difference
    assert env.infos["player_0"]["knocker"] is None and not env.infos["player_0"]["void"]


def test_stock_exhaustion_reshuffle_continues():
    env = knock_rummy_v0.raw_env(num_players=2, stock_exhaustion="reshuffle", max_turns=40)
    env.reset(seed=11)
    discarded = []
    for _ in range(31):
        drawn = env.hand_state.stock_cards()[0]
        env.step(0)
        env.step(2 + drawn)
        discarded.append(drawn)
    # The 31 turns threw 31 cards on the up card; all but the top go back under the stock.
    assert not any(env.terminations.values())
    assert env.hand_state.stock_size == 31 and env.hand_state.discard == [discarded[-1]]
    assert sorted(env.hand_state.stock_cards()) == sorted([env.deck[20], *discarded[:-1]])
    assert env.hand_state.buried.sum() == 0
    # The turn cap then truncates the never-ending hand.
    for _ in range(9):
        drawn = env.hand_state.stock_cards()[0]
        env.step(0)
        env.step(2 + drawn)
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.rewards == {"player_0": 0, "player_1": 0}


def test_first_turn_knock_and_knock_limit():
    env = make(2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="2c")
    env.step(env.action_index("draw stock"))
    legal = {env.action_name(a) for a in env.legal_actions()}
    assert "knock Kc" in legal and "knock As" in legal
    limited = make(
        2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="2c", knock_max_deadwood=10
    )
    limited.step(limited.action_index("draw stock"))
    legal = {limited.action_name(a) for a in limited.legal_actions()}
    assert "knock Kc" in legal  # leaves 2c = 2
    assert "knock 2c" in legal  # leaves Kc = 10
    assert "knock 9c" not in legal  # breaks the set: 9d 9h 2c Kc = 30
    assert "discard 9c" in legal
    with pytest.raises(IllegalActionError, match="knock 9c"):
        limited.step(limited.action_index("knock 9c"))


def test_taken_discard_cannot_be_thrown_back():
    env = make(2, ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56], up="Ks", stock="2c")
    env.step(env.action_index("take discard"))
    legal = {env.action_name(a) for a in env.legal_actions()}
    assert "discard Ks" not in legal and "knock Ks" not in legal and "discard Kc" in legal
    with pytest.raises(IllegalActionError, match=r"discard Ks.*player_0.*legal actions: .*discard"):
        env.step(env.action_index("discard Ks"))
    allowed = make(
        2,
        ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", JUNK_56],
        up="Ks",
        stock="2c",
        allow_discard_of_taken=True,
    )
    allowed.step(allowed.action_index("take discard"))
    allowed.step(allowed.action_index("discard Ks"))
    assert allowed.hand_state.discard[-1] == parse_card("Ks")


def test_deal_order_up_card_and_stock():
    deck = deck_for(["As 2s 3s 4s 5s 6s 7s 8s 9s Ts", "Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc"], "Kd", "Qd")
    env = knock_rummy_v0.raw_env(num_players=2)
    env.reset(options={"deck": deck})
    assert env.hand_state.hand_cards(0) == parse_cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts")
    assert env.hand_state.discard == [parse_card("Kd")]
    assert env.hand_state.stock_cards()[0] == parse_card("Qd")
    assert env.agent_selection == "player_0"
    # With player_0 dealing, player_1 is left of the dealer: first card and first turn.
    env = knock_rummy_v0.raw_env(num_players=2, first_dealer=0)
    env.reset(options={"deck": deck})
    assert env.hand_state.hand_cards(1) == parse_cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts")
    assert env.agent_selection == "player_1"


def test_match_to_target_score_rotates_deal_and_sums_hands():
    env = knock_rummy_v0.raw_env(num_players=3, target_score=60)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    hand_points, first_to_act = [], [env.agent_selection]
    hand_index = 0
    for agent in env.agent_iter():
        obs, _r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
        info = env.infos[agent]
        if info.get("hand_index", 0) > hand_index:
            hand_index = info["hand_index"]
            hand_points.append([env.infos[a]["points"] for a in env.possible_agents])
            final_infos = {a: dict(env.infos[a]) for a in env.possible_agents}
            if not any(env.terminations.values()):
                first_to_act.append(env.agent_selection)
    assert len(hand_points) >= 2
    totals = np.sum(hand_points, axis=0)
    final = final_infos["player_0"]["match_totals"]
    assert np.allclose(list(final.values()), totals)
    assert max(totals) >= 60 and (totals == max(totals)).sum() == 1
    # Deal rotates clockwise: the first hand starts at player_0, the next at player_1, ...
    assert first_to_act[:3] == ["player_0", "player_1", "player_2"][: len(first_to_act[:3])]
    winner = int(np.argmax(totals))
    assert final_infos[f"player_{winner}"]["winner"]
    assert not final_infos[f"player_{(winner + 1) % 3}"]["winner"]


def test_match_tie_for_lead_plays_on():
    env = knock_rummy_v0.raw_env(num_players=2, target_score=1)
    env.reset(
        seed=0,
        options={
            "deck": deck_for(
                ["As 2s 3s 4h 5h 6h 9c 9d 9h Kc", "Ad 2d 3d 4c 5c 6c Jd Qd Kd Qs"], "Ks", "8c"
            )
        },
    )
    # Both end on equal deadwood: the knocker ties and loses the win, transfers are 0,
    # nobody reaches 1 point, so the match goes on with a new hand dealt by player_0.
    play(env, ["draw stock", "knock 8c"])
    assert env.infos["player_0"]["deadwood"] == env.infos["player_1"]["deadwood"]
    assert not any(env.terminations.values()) and env.infos["player_0"]["hand_index"] == 1
    assert env.agent_selection == "player_1" and env.hand_state.dealer == 0


#: Six hands of 5 players (6 cards each), dealt from these decks in turn; in each the player to
#: act draws from the stock and knocks with the card drawn. Shares of three-way splits add up
#: to exact totals 161/6, 23/6, -82/3, -97/3 and 29: player_4 reaches the target 29 exactly.
_THIRDS = [
    "Ah 2s 3d 3h 8s 9c 2d 5h 7c 5s Ad 3s 5d 7s Ts As 4h 6d 4s Tc 2c 6c 7d 7h 4c Ac 2h 3c 4d 9s Ks "
    "Qs 5c 8c Jc Qc Kc 8d 9d Td Jd Qd Kd 6h 8h 9h Th Jh Qh Kh 6s Js",
    "3h 4h 3s 8c As 2s 2c 6d 8h 7c 2d 6c 7d Kh Ad 5h 3c 5d 4s Ah 2h 3d 4d Td Ac 5s 4c Jc 8s 6s Ks "
    "Qs 5c 9c Tc Qc Kc 8d 9d Jd Qd Kd 6h 7h 9h Th Jh Qh 7s 9s Ts Js",
    "3d 3s 7c 7s 5s 6h 7d 8c As Jh 4s 6s 6c Ac 2s 5h 6d 9c Ah 2h 4c 4d 5c Ad 3h 4h 5d 9s 2d 2c Ks "
    "Qs 3c Tc Jc Qc Kc 8d 9d Td Jd Qd Kd 7h 8h 9h Th Qh Kh 8s Ts Js",
    "Ks Tc 3s Ad 2s 3c Th 5d 4c 7c 6h 4h Ac 2d 2h 8h Ts Ah 3d 5c 6d Td As 2c 6c 7h 5s 7s 6s 8d Qs "
    "Js 8c 9c Jc Qc Kc 4d 7d 9d Jd Qd Kd 3h 5h 9h Jh Qh Kh 4s 8s 9s",
    "7c 3s Ac 4h 5s Tc As 2c 4c 8s 9c Ah 2s 3d 5d 8c 2d 3c 3h 4s 6s 6d 2h 4d 6h 5h Ad 7h 9d 5c Ks "
    "Qs 6c Jc Qc Kc 7d 8d Td Jd Qd Kd 8h 9h Th Jh Qh Kh 7s 9s Ts Js",
    "Ad 5h 3h 6c Qd 4c Ah 4d 6h Th As 2h 8d 6d Jh 2d 2c 3s 3c 8h Ac 2s 3d 6s 7h 4s 4h 5c 7c 9h Ks "
    "Qs 8c 9c Tc Jc Qc Kc 5d 7d 9d Td Jd Kd Qh Kh 5s 7s 8s 9s Ts Js",
]


def test_a_total_that_reaches_the_target_exactly_through_split_shares_ends_the_match(monkeypatch):
    env = knock_rummy_v0.raw_env(num_players=5, target_score=29)
    env.reset(options={"deck": _THIRDS[0].split()})
    later = iter([np.asarray(parse_cards(d)) for d in _THIRDS[1:]])
    # the next hands' decks, in turn (a Match has fixed slots: its class is patched, for this test)
    monkeypatch.setattr(type(env.match), "_next_deck", lambda self: next(later))
    exact = [Fraction(0)] * 5
    for _ in range(6):
        assert not env.match.over
        env.step(env.action_index("draw stock"))
        drawn = env.hand_state.stock[env.hand_state.stock_pos - 1]
        env.step(env.action_index(f"knock {CARD_NAMES[drawn]}"))
        for seat, agent in enumerate(env.possible_agents):
            exact[seat] += Fraction(env.infos[agent]["points"]).limit_denominator(12)
    assert exact == [Fraction(161, 6), Fraction(23, 6), Fraction(-82, 3), Fraction(-97, 3), 29]
    assert env.match.totals[4] != 29  # the float sum falls a hair short ...
    assert env.match.over  # ... and the match still ends, won by player_4 alone
    assert [env.infos[a]["winner"] for a in env.possible_agents] == [False] * 4 + [True]
