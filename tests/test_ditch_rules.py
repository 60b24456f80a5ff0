"""Ditch Rummy rules, worked through scripted hands written with card strings."""

from __future__ import annotations

import numpy as np
import pytest

from rummyzoo.envs import ditch_rummy_v0
from rummyzoo.envs.cards import CARD_NAMES, parse_card
from rummyzoo.envs.core import IllegalActionError
from rummyzoo.envs.decks import deck_for
from rummyzoo.envs.ditch_rummy.rules import (
    END_BLIND_RUN,
    END_DRAW_PILE,
    END_STALL,
    Phase,
)
from rummyzoo.envs.ditch_rummy.scripting import play


def make(num_players: int = 2, top: str = "", **options):
    """A raw env (one hand per episode unless ``target_score`` is given) on a scripted deck."""
    options.setdefault("target_score", None)
    env = ditch_rummy_v0.raw_env(num_players=num_players, **options)
    env.reset(seed=0, options={"deck": deck_for(stock=top)})
    return env


def legal(env) -> set[str]:
    return {env.action_name(a) for a in env.legal_actions()}


def _cards(env, seat: int) -> list[str]:
    """A seat's hand as card strings, in position order."""
    return [CARD_NAMES[c] for c in env.hand_state.hand_cards(seat)]


# ------------------------------------------------------------------ scoring items
@pytest.mark.parametrize(
    ("top", "script", "earned"),
    [
        ("9c 9h Kd", ["draw 3", "meld 0 1"], 5),  # set of two
        ("9c 9h 9d", ["draw 3", "meld 0 1 2"], 5),  # set of three
        ("4c 5h Kd", ["draw 3", "meld 0 1"], 25),  # blind run of two, mixed suits
        ("4c 5h 6c", ["draw 3", "meld 0 1 2"], 25),  # blind run of three
        ("5c 6d 7h", ["draw 3", "meld 0 1", "single 0"], 25 + 2),  # single 7h above 5-6
        ("4h 5c 6d", ["draw 3", "meld 1 2", "single 0"], 25 + 2),  # single 4h below 5-6
        ("9c 9h 9d", ["draw 3", "meld 0 1", "single 0"], 5 + 2),  # single 9 onto a set
        ("Qc Kd Ah", ["draw 3", "meld 0 1", "single 0"], 25 + 10),  # single ace above Q-K
        ("Ac Ad Ah", ["draw 3", "meld 0 1", "single 0"], 5 + 10),  # single ace onto aces
    ],
)
def test_scoring_items(top, script, earned):
    env = make(top=top)
    play(env, script)
    assert env.hand_state.earned[0] == earned
    assert not env.hand_state.over


def test_points_table_is_configurable():
    env = make(
        top="Qc Kd Ah",
        points_run=30,
        points_single_ace=11,
        points_single=3,
        points_set=7,
    )
    play(env, ["draw 3", "meld 0 1", "single 0"])
    assert env.hand_state.earned[0] == 41


def test_single_off_an_opponents_meld():
    env = make(top="9c 9h 2c 9d 3c 4d")
    play(env, ["draw 3", "meld 1 2", "end turn"])  # player_0 melds 9c 9h, keeps 2c
    play(env, ["draw 3"])  # player_1 holds 3c 4d 9d
    assert _cards(env, 1) == ["3c", "4d", "9d"]
    assert "single 2" in legal(env)
    assert "single 0" not in legal(env) and "single 1" not in legal(env)
    play(env, ["single 2"])
    assert env.hand_state.earned == [5, 2]
    assert env.hand_state.singles[1] == [parse_card("9d")]


def test_single_off_a_meld_made_this_turn():
    env = make(top="5c 6d 7h")
    play(env, ["draw 3"])
    assert "single 2" not in legal(env)  # nothing on the table yet
    play(env, ["meld 0 1"])
    assert legal(env) >= {"single 0"}
    play(env, ["single 0"])
    assert env.hand_state.earned[0] == 27
    assert env.hand_state.current == 1  # the empty hand ended the turn


def test_single_that_fits_nothing_is_illegal():
    env = make(top="9c 9h 2c 5d Kc 3h")
    play(env, ["draw 3", "meld 1 2", "end turn", "draw 3"])  # player_1: 3h 5d Kc
    assert not any(name.startswith("single") for name in legal(env))
    with pytest.raises(IllegalActionError, match=r"single 0.*\[0\]3h \[1\]5d \[2\]Kc"):
        play(env, ["single 0"])


def test_runs_never_wrap_and_aces_are_high():
    env = make(top="Kc Ad 2h")
    play(env, ["draw 3"])  # positions: 2h Kc Ad
    assert _cards(env, 0) == ["2h", "Kc", "Ad"]
    melds = {n for n in legal(env) if n.startswith("meld")}
    assert melds == {"meld 1 2"}  # K-A only; K-A-2 and A-2 are no runs
    env = make(top="Ac 2d 3h")
    play(env, ["draw 3"])  # positions: 2d 3h Ac
    assert {n for n in legal(env) if n.startswith("meld")} == {"meld 0 1"}
    play(env, ["meld 0 1"])
    assert "single 0" not in legal(env)  # an ace does not fit below 2-3


@pytest.mark.parametrize(
    ("same_suit", "top", "meld_ok"),
    [
        (False, "4c 5h Kd", True),
        (True, "4c 5h Kd", False),
        (True, "4c 5c Kd", True),
        (False, "4c 5c Kd", True),
    ],
)
def test_runs_same_suit_melds(same_suit, top, meld_ok):
    env = make(top=top, runs_same_suit=same_suit)
    play(env, ["draw 3"])
    assert ("meld 0 1" in legal(env)) is meld_ok


@pytest.mark.parametrize(("same_suit", "fits"), [(False, True), (True, False)])
def test_runs_same_suit_singles(same_suit, fits):
    env = make(top="4c 5c Kd 6h 6c", runs_same_suit=same_suit)
    play(env, ["draw 3", "meld 0 1", "end turn", "draw 2"])  # player_1: 6c 6h
    assert _cards(env, 1) == ["6c", "6h"]
    assert "single 0" in legal(env)  # 6c fits either way
    assert ("single 1" in legal(env)) is fits  # 6h only when runs are blind


def test_sets_take_any_suits_with_runs_same_suit():
    env = make(top="9c 9h Kd", runs_same_suit=True)
    play(env, ["draw 3"])
    assert "meld 0 1" in legal(env)


# ------------------------------------------------------------------ ending the hand
@pytest.mark.parametrize("run", ["Jc Qd Kh", "Qc Kd Ah"])
def test_top_blind_run_ends_the_hand_at_once(run):
    env = make(top="Ac 5d 9h " + run)
    play(env, ["draw 3", "end turn", "draw 3"])  # player_0 keeps Ac 5d 9h
    assert not env.hand_state.over
    play(env, ["meld 0 1 2"])
    assert env.hand_state.over and env.hand_state.end_reason == END_BLIND_RUN
    info = env.infos
    assert info["player_1"]["points"] == 25
    assert info["player_1"]["ended_by"] == "player_1"
    assert info["player_0"]["points"] == -(10 + 2 + 2)  # held cards still count
    assert all(env.terminations.values())


def test_blind_run_end_penalises_the_enders_own_cards():
    env = make(num_players=2, top="2c 3d Jc Qd Kh", draw_rule="up_to_3")
    play(env, ["draw 2", "end turn", "draw 0", "draw 3"])  # player_0: 2c 3d Jc Qd Kh
    play(env, ["meld 2 3 4"])
    assert env.hand_state.over
    assert env.infos["player_0"]["points"] == 25 - 4


@pytest.mark.parametrize("top", ["Jc Qd 3h", "Tc Jd Qh", "Kc Ad 3h"])
def test_other_runs_do_not_end_the_hand(top):
    env = make(top=top)
    play(env, ["draw 3"])
    name = next(n for n in sorted(legal(env), key=len, reverse=True) if n.startswith("meld"))
    play(env, [name])
    assert not env.hand_state.over
    assert env.hand_state.earned[0] == 25


def test_single_extending_j_q_to_k_does_not_end_the_hand():
    env = make(top="Jc Qd 3h Kh", single_extends_meld=True)
    play(env, ["draw 3", "meld 1 2", "end turn", "draw 1", "single 0 above"])
    assert not env.hand_state.over
    assert env.hand_state.earned == [25, 2]


def test_hand_ends_after_the_turn_that_empties_the_draw_pile():
    env = make()
    while True:
        s = env.hand_state
        if s.phase == Phase.DRAW:
            count = max(int(a) for a in env.legal_actions() if a <= 3)
            play(env, [f"draw {count}"])
            if env.hand_state.pile_size == 0:
                break
        if env.hand_state.hands[env.hand_state.current]:
            play(
                env,
                [
                    "ditch all"
                    if len(env.hand_state.hands[env.hand_state.current]) > 1
                    else "ditch 0"
                ],
            )
    s = env.hand_state
    assert not s.over and s.phase == Phase.PLAY  # the drawer still finishes the turn
    assert len(s.hands[s.current]) == 1  # 52 = 17 * 3 + 1
    seat = s.current
    play(env, ["end turn"])
    assert s.over and s.end_reason == END_DRAW_PILE
    assert env.infos[f"player_{seat}"]["points"] == -2  # the Ks drawn last
    assert env.infos[f"player_{1 - seat}"]["points"] == 0


@pytest.mark.parametrize(("penalty", "expected"), [("per_card", -14), ("none", 0)])
def test_hand_penalty(penalty, expected):
    env = make(top="Ac 5d 9h", hand_penalty=penalty)
    play(env, ["draw 3", "end turn", "draw 0", "draw 0", "end turn"])
    assert env.hand_state.over and env.hand_state.end_reason == END_STALL
    assert env.infos["player_0"]["points"] == expected
    assert env.infos["player_0"]["cards_left"] == ["5d", "9h", "Ac"]
    assert env.infos["player_0"]["penalty"] == -expected


def test_penalty_comes_off_points_earned():
    env = make(top="4c 5h Kd")
    play(env, ["draw 3", "meld 0 1", "end turn", "draw 0", "draw 0", "end turn"])
    assert env.infos["player_0"]["earned"] == 25
    assert env.infos["player_0"]["points"] == 23
    assert env.infos["player_0"]["melds"] == ["run 4c 5h"]


def test_stall_guard_needs_a_full_idle_round():
    env = make(num_players=3, top="5c 6c 7c")
    play(env, ["draw 1", "end turn"])  # player_0 active
    play(env, ["draw 0"])  # player_1: empty hand, the turn ends by itself (idle 1)
    play(env, ["draw 1", "end turn"])  # player_2 active: the count starts again
    assert env.hand_state.idle == 0
    play(env, ["draw 0", "end turn"])  # player_0 idle 1
    play(env, ["draw 0"])  # player_1 idle 2
    assert not env.hand_state.over
    play(env, ["draw 0", "end turn"])  # player_2 idle 3: a full round
    assert env.hand_state.over and env.hand_state.end_reason == END_STALL
    assert [env.infos[f"player_{i}"]["points"] for i in range(3)] == [-2, 0, -2]


def test_ditching_counts_as_activity():
    env = make(top="5c 9d Kh")
    play(env, ["draw 3", "end turn", "draw 0"])  # player_1 idle 1
    play(env, ["draw 0", "ditch 0", "end turn"])  # player_0 ditches: not idle
    assert env.hand_state.idle == 0 and not env.hand_state.over
    assert env.hand_state.discard == [parse_card("5c")]


def test_truncation_at_max_turns():
    env = make(top="5c 9d Kh 2s", max_turns=3)
    play(env, ["draw 1", "end turn", "draw 1", "end turn", "draw 1", "end turn"])
    assert all(env.truncations.values())
    assert not any(env.terminations.values())
    assert env.infos["player_0"]["truncated_by"] == "max_turns=3"


# ------------------------------------------------------------------ turn structure
def test_turn_phases_and_ditching():
    env = make(top="9c 9h Kd")
    assert legal(env) == {"draw 0", "draw 1", "draw 2", "draw 3"}
    play(env, ["draw 3"])
    assert env.hand_state.phase == Phase.PLAY
    assert legal(env) == {
        "meld 0 1",
        "ditch 0",
        "ditch 1",
        "ditch 2",
        "ditch all",
        "end turn",
    }
    play(env, ["ditch 2"])  # Kd
    assert env.hand_state.phase == Phase.DITCH
    assert legal(env) == {"ditch 0", "ditch 1", "ditch all", "end turn"}  # no more melds
    play(env, ["ditch all"])
    assert env.hand_state.current == 1 and env.hand_state.phase == Phase.DRAW
    assert env.infos["player_0"] == {}
    assert len(env.hand_state.discard) == 3


@pytest.mark.parametrize(
    ("rule", "max_hand", "held", "draws"),
    [
        ("fill_to_3", None, 2, {0, 1}),
        ("fill_to_3", None, 3, {0}),
        ("up_to_3", None, 2, {0, 1, 2, 3}),
        ("up_to_3", None, 3, {0, 1, 2, 3}),
        ("up_to_3", 4, 3, {0, 1}),
        ("up_to_3", 3, 2, {0, 1}),
    ],
)
def test_draw_rules(rule, max_hand, held, draws):
    env = make(top="5c 9d Kh", draw_rule=rule, max_hand=max_hand)
    play(env, [f"draw {held}", "end turn", "draw 0"])
    assert {int(n.split()[1]) for n in legal(env)} == draws


def test_up_to_3_hands_grow_past_three():
    env = make(top="5c 9d Kh 5d 6s 7h", draw_rule="up_to_3")
    play(env, ["draw 3", "end turn", "draw 0", "draw 3"])
    assert _cards(env, 0) == ["5c", "5d", "6s", "7h", "9d", "Kh"]
    assert "meld 0 1" in legal(env) and "meld 1 2 3" in legal(env)
    play(env, ["meld 1 2 3"])  # 5d 6s 7h
    assert _cards(env, 0) == ["5c", "9d", "Kh"]


def test_draws_are_limited_by_the_draw_pile():
    env = make()
    state = env.hand_state
    state.pile_pos = 50  # two cards left
    assert legal(env) == {"draw 0", "draw 1", "draw 2"}


# ------------------------------------------------------------------ single_extends_meld
@pytest.mark.parametrize(("extends", "eight_fits"), [(False, False), (True, True)])
def test_single_extends_meld_moves_the_run_end(extends, eight_fits):
    env = make(top="5c 6d 7h 4d 8c Kh", single_extends_meld=extends)
    play(env, ["draw 3", "meld 0 1", "single 0 above" if extends else "single 0"])
    play(env, ["draw 3"])  # player_1: 4d 8c Kh
    names = legal(env)
    below = "single 0 below" if extends else "single 0"
    above = "single 1 above" if extends else "single 1"
    assert below in names  # 4 below 5-6(-7)
    assert (above in names) is eight_fits  # 8 above 5-6-7 only once 7 joined the run


def test_single_extends_meld_targets():
    env = make(top="9c 9h 9d 5c 6d 7h 4s", single_extends_meld=True)
    play(env, ["draw 3", "meld 0 1", "single 0 set"])  # 9c 9d, then 9h joins
    play(env, ["draw 3", "meld 0 1"])  # player_1: run 5c 6d, holds 7h
    assert {n for n in legal(env) if n.startswith("single")} == {"single 0 above"}
    play(env, ["single 0 above"])
    assert env.hand_state.melds[1].text() == "run 5c 6d [7h]"
    assert env.hand_state.melds[0].text() == "set 9c 9d [9h]"
    play(env, ["draw 0", "draw 1"])  # player_0 idle; player_1 draws 4s
    assert {n for n in legal(env) if n.startswith("single")} == {"single 0 below"}
    play(env, ["single 0 below"])
    assert env.hand_state.melds[1].low == 2  # game rank of the 4
    assert env.hand_state.earned == [7, 29]


# ------------------------------------------------------------------ teams and matches
def test_team_totals():
    env = make(
        num_players=4,
        teams=True,
        target_score=500,
        top="4c 5h 6d 9c 9d 2h 7s 8c Kd Jc Qd Kh",
    )
    play(env, ["draw 3", "meld 0 1 2"])  # player_0 run +25, hand empty
    play(env, ["draw 3", "meld 1 2", "end turn"])  # player_1 set 9c 9d +5, keeps 2h
    play(env, ["draw 3", "single 0", "end turn"])  # player_2 single 7s +2, keeps 8c Kd
    play(env, ["draw 3", "meld 0 1 2"])  # player_3 J-Q-K +25: the hand ends
    info = env.infos
    assert [info[f"player_{i}"]["points"] for i in range(4)] == [25, 3, -2, 25]
    assert info["player_0"]["totals"] == info["player_2"]["totals"] == 23
    assert info["player_1"]["totals"] == info["player_3"]["totals"] == 28
    assert info["player_0"]["match_totals"] == {
        "player_0": 23,
        "player_1": 28,
        "player_2": 23,
        "player_3": 28,
    }
    assert env.rewards == {"player_0": 23, "player_1": 28, "player_2": 23, "player_3": 28}
    # The match goes on: a new hand, dealt by the next seat.
    assert not any(env.terminations.values())
    assert env.hand_state.dealer == 0 and env.hand_state.current == 1 and env.hand_state.turn == 0
    obs = env.observe("player_1")["observation"]
    start, stop = env.game.observation_layout["scores"]
    assert obs[start:stop].tolist() == pytest.approx([28 / 500, 23 / 500, 28 / 500, 23 / 500])


def greedy(env) -> int:
    """Draw the most, meld (three cards first), play singles, ditch what is left."""
    names = [env.action_name(a) for a in env.legal_actions()]
    for prefix in ("draw 3", "draw 2", "draw 1", "meld 0 1 2", "meld", "single"):
        for name in names:
            if name.startswith(prefix):
                return env.action_index(name)
    for name in ("ditch all", "ditch 0", "end turn", "draw 0"):
        if name in names:
            return env.action_index(name)
    raise AssertionError(names)


def test_match_to_500():
    env = ditch_rummy_v0.raw_env(num_players=3)
    assert env.game.match.target_score == 500
    env.reset(seed=11)
    earned = dict.fromkeys(env.possible_agents, 0.0)
    hands = 0
    for agent in env.agent_iter(max_iter=200_000):
        _obs, reward, term, trunc, _info = env.last()
        earned[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        before = env.hand_state
        env.step(greedy(env))
        hands += env.hand_state is not before
    assert hands > 3  # several hands were needed
    totals = {a: env.match_totals[a] for a in env.possible_agents}
    best = max(totals.values())
    assert best >= 500 and list(totals.values()).count(best) == 1
    assert totals == pytest.approx(earned)  # points rewards add up to the match totals


def test_match_tie_for_the_lead_plays_another_hand():
    env = make(top="4c 5h 6d 4d 5s 6h", target_score=20)
    play(env, ["draw 3", "meld 0 1 2", "draw 3", "meld 0 1 2"])  # both +25 ...
    play(env, ["draw 0", "draw 0"])  # ... and the hand stalls
    assert env.match_totals == {"player_0": 25, "player_1": 25}
    assert not any(env.terminations.values())  # a tie at the top: another hand
    assert env.hand_state.turn == 0 and env.hand_state.dealer == 0


def test_match_ends_when_someone_reaches_the_target():
    env = make(top="4c 5h 6d 4d", target_score=20)
    play(env, ["draw 3", "meld 0 1 2", "draw 1", "end turn", "draw 0", "draw 0", "end turn"])
    assert all(env.terminations.values())
    assert env.infos["player_0"]["winner"] and not env.infos["player_1"]["winner"]
    assert env.infos["player_1"]["points"] == -2
    assert np.isclose(env.match_totals["player_0"], 25)
