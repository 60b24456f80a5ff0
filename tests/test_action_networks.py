"""Action descriptions, the shared action scorer, the margin reward and the PFSP league."""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch as th
from run_helpers import assert_refuses_other_envs

from rummyzoo.agents.action_features import (
    DitchActionFeatures,
    DitchPlanFeatures,
    Rummy500ActionFeatures,
)
from rummyzoo.agents.arena import run_arena
from rummyzoo.agents.checkpoints import load_policy, read_meta
from rummyzoo.agents.ditch import SmartDitch
from rummyzoo.agents.features import make_features
from rummyzoo.agents.networks import ActionScorer, action_layout
from rummyzoo.envs import ditch_rummy_v0, rummy500_v0
from rummyzoo.envs.cards import parse_cards
from rummyzoo.envs.ditch_rummy.rules import Phase
from rummyzoo.envs.ditch_rummy.scripting import deck_with_top, play
from rummyzoo.envs.match import Match
from rummyzoo.envs.registry import make_game, make_vector
from rummyzoo.envs.vector import uniform_legal_actions
from rummyzoo.training.config import ConfigLoadError, validate_config
from rummyzoo.training.seat_env import OpponentMixture
from rummyzoo.training.train import train_from_file
from rummyzoo.training.vec_env import BatchedSeatEnv

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def _row(features, obs: np.ndarray, action: int) -> np.ndarray:
    return features(obs).reshape(features.num_actions, features.width)[action]


# ------------------------------------------------------------------ Ditch Rummy descriptions
def _ditch(top: str) -> ditch_rummy_v0.raw_env:
    env = ditch_rummy_v0.raw_env(num_players=2, target_score=None)
    env.reset(seed=0, options={"deck": deck_with_top(top)})
    return env


def test_ditch_descriptions_of_a_worked_hand():
    env = _ditch("9c 9h Td")
    feats = DitchActionFeatures(2, {"target_score": None})
    obs = env.observe("player_0")["observation"]
    draw3 = _row(feats, obs, env.action_index("draw 3"))
    assert draw3[0] == 1 and draw3[6] == 1.0 and draw3[16] == pytest.approx(3 / 3)
    assert draw3[22] == pytest.approx(49 / 52)  # the draw pile after drawing three
    play(env, ["draw 3"])  # hand positions: 0 = 9c, 1 = 9h, 2 = Td
    obs = env.observe("player_0")["observation"]
    pair = _row(feats, obs, env.action_index("meld 0 1"))  # the set 9c 9h: 5 points
    assert pair[1] == 1 and pair[8] == 1 and pair[9] == 0
    assert pair[7] == pytest.approx(5 / 25)
    run = _row(feats, obs, env.action_index("meld 0 2"))  # the blind run 9c Td: 25 points
    assert run[9] == 1 and run[7] == pytest.approx(1.0) and run[10] == 0
    # what it keeps: 9h alone (a card of penalty 2), which no longer pairs with anything held
    assert run[16] == pytest.approx(1 / 3) and run[17] == pytest.approx(2 / 20)
    assert run[21] == 0
    # 9h 9c Td hold two melding pairs (9c 9h, and 9c/9h with Td): ending the turn keeps them
    end = _row(feats, obs, env.action_index("end turn"))
    assert end[5] == 1 and end[21] == pytest.approx(3 / 3)
    ditch = _row(feats, obs, env.action_index("ditch 2"))  # Td: its live run partners go too
    assert ditch[3] == 1 and ditch[13] > 0
    # nothing fits the table yet: no single is described
    assert not _row(feats, obs, env.action_index("single 0")).any()


def test_ditch_describes_a_hand_ending_run():
    env = _ditch("Jc Qd Kh")
    play(env, ["draw 3"])
    feats = DitchActionFeatures(2, {"target_score": None})
    row = _row(feats, env.observe("player_0")["observation"], env.action_index("meld 0 1 2"))
    assert row[9] == 1 and row[10] == 1 and row[6] == 1.0


def test_ditch_plans_value_a_hand_ending_run_that_wins():
    env = _ditch("Jc Qd Kh")
    play(env, ["draw 3"])  # hand positions: 0 = Jc, 1 = Qd, 2 = Kh
    feats = DitchPlanFeatures(2, {"target_score": None})
    obs = env.observe("player_0")["observation"]
    block = feats(obs).reshape(feats.num_actions, feats.width)
    ending = block[env.action_index("meld 0 1 2")]
    # the first 23 values are those of ditch_actions
    assert np.array_equal(
        block[:, :23], DitchActionFeatures(2, {"target_score": None})(obs).reshape(-1, 23)
    )
    # J-Q-K: 25 points, nothing left to pay for, and the hand surely won (the rival has none)
    assert ending[23] == pytest.approx(25 / 25) and ending[24] == 1 and ending[25] == 0
    # Jc Qd alone scores 25 and Kh then fits above it as a single (2): worth at least 27, but
    # it does not end the hand, so it ranks below the decisive run (the gap is clipped at -4)
    pair = block[env.action_index("meld 0 1")]
    assert pair[23] >= 27 / 25 and pair[24] == 0 and pair[25] == -4
    assert block[env.action_index("ditch all"), 23] == 0  # ditching all keeps nothing
    # the draw phase is not valued
    env2 = _ditch("Jc Qd Kh")
    draw = feats(env2.observe("player_0")["observation"]).reshape(feats.num_actions, -1)
    assert not draw[:, 23:].any()


@pytest.mark.parametrize(
    ("players", "options"),
    [(2, {}), (4, {"teams": True}), (3, {"runs_same_suit": True, "target_score": 100})],
)
def test_ditch_plans_value_every_play_and_put_smarts_choice_first(players, options):
    """Every legal action of the play phase gets a worth, and ditch.smart's own choice is
    always among those worth the most (gap 0) where hands stay small (fill_to_3: with
    up_to_3 smart's capped search of many singles can miss a line the worths find); outside
    the play phase nothing is valued."""
    feats = DitchPlanFeatures(players, options)
    smart = SmartDitch("ditch_rummy", players, options)
    vec = make_vector("ditch_rummy", 16, players, **options)
    vec.reset(seed=5)
    rng = np.random.default_rng(1)
    valued = 0
    for _ in range(120):
        obs, masks = vec.observations, vec.action_masks
        block = feats.batch(obs).reshape(len(obs), feats.num_actions, feats.width)
        actions = uniform_legal_actions(masks, rng)
        for g in range(len(obs)):
            worths = feats.judge.action_worths(feats.game.decode(obs[g]))
            if not worths:
                assert not block[g, :, 23:].any()
                continue
            valued += 1
            assert set(worths) == set(np.flatnonzero(masks[g]).tolist())
            choice = smart.act(obs[g], masks[g], rng)
            assert block[g, choice, 25] == 0
            assert (block[g, masks[g].astype(bool), 25] <= 0).all()
            if rng.random() < 0.7:  # mostly smart's play, so that melds and singles come up
                actions[g] = choice
        vec.step(actions)
    assert valued > 500


def test_ditch_plans_charge_an_ending_run_for_the_cards_still_held():
    opts = {"target_score": None, "draw_rule": "up_to_3"}
    env = ditch_rummy_v0.raw_env(num_players=2, **opts)
    env.reset(seed=0, options={"deck": deck_with_top("As Jc Qd Kh")})
    # player_0 keeps As, player_1 draws nothing, player_0 draws J-Q-K: hand Jc Qd Kh As
    play(env, ["draw 1", "end turn", "draw 0", "draw 3"])
    feats = DitchPlanFeatures(2, opts)
    block = feats(env.observe("player_0")["observation"]).reshape(feats.num_actions, -1)
    jqk, qka = block[env.action_index("meld 0 1 2")], block[env.action_index("meld 1 2 3")]
    # J-Q-K ends the hand holding As (-10): 15; Q-K-A holding Jc (-2): 23; both surely win
    assert jqk[23] == pytest.approx(15 / 25) and jqk[24] == 1
    assert qka[23] == pytest.approx(23 / 25) and qka[24] == 1
    assert qka[25] == 0 and jqk[25] == pytest.approx((15 - 23) / 25)


def _plan_keys(judge, obs) -> dict[int, tuple[int, float]]:
    """action -> (verdict, worth) as ditch_plans reads them."""
    return {a: (v, w) for a, (w, v) in judge.action_worths(judge.game.decode(obs)).items()}


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (2, {}),
        (2, {"single_extends_meld": True}),
        (3, {"runs_same_suit": True, "target_score": 100}),
    ],
)
def test_ditch_plans_agree_with_the_state_each_play_leads_to(players, options):
    """Within a turn the worths are consistent with the rules' own successor states: a meld or
    single is worth its points (read off the scores) plus the best worth of the state it leads
    to; ditching one card is worth the best of stopping with the rest (ending the turn with
    it, or ditching all or another card of it)."""
    import dataclasses

    options = {"target_score": None, **options}
    feats = DitchPlanFeatures(players, options)
    smart = SmartDitch("ditch_rummy", players, options)
    judge = feats.judge
    rng = np.random.default_rng(3)
    checked = {"play": 0, "ditch": 0}
    for seed in range(4):
        env = ditch_rummy_v0.raw_env(num_players=players, **options)
        env.reset(seed=seed)
        while env.agents:
            agent = env.agent_selection
            step, _r, term, trunc, _i = env.last()
            if term or trunc:
                env.step(None)
                continue
            obs, mask = step["observation"], step["action_mask"]
            keys = _plan_keys(judge, obs)
            seen = judge.game.decode(obs)
            for action, (verdict, worth) in keys.items():
                name = env.action_name(action)
                if name.startswith(("meld", "single")) and verdict == 0:
                    after = copy.deepcopy(env)
                    after.step(action)
                    if after.unwrapped.match.hand_index != env.unwrapped.match.hand_index:
                        continue  # the hand ended (the draw pile is empty): nothing follows
                    obs2 = after.observe(agent)["observation"]
                    gained = judge.game.decode(obs2).hand_points[0] - seen.hand_points[0]
                    if after.agent_selection == agent:
                        best = max((v, gained + w) for v, w in _plan_keys(judge, obs2).values())
                    else:  # the play emptied the hand, which ends the turn: nothing is kept
                        assert not judge.game.decode(obs2).hand
                        best = (0, gained)
                    assert best[0] == 0 and worth == pytest.approx(best[1]), name
                    checked["play"] += 1
                elif name.startswith("ditch ") and name != "ditch all":
                    pos = int(name.split()[1])
                    rest = seen.hand[:pos] + seen.hand[pos + 1 :]
                    view = dataclasses.replace(seen, hand=rest)
                    others = judge.action_worths(view)
                    stop = (
                        max(
                            w
                            for a, (w, _) in others.items()
                            if not env.action_name(a).startswith(("meld", "single"))
                        )
                        if rest
                        else 0.0
                    )
                    assert worth == pytest.approx(max(stop, 0.0)), name
                    checked["ditch"] += 1
            choice = smart.act(obs, mask, rng) if rng.random() < 0.8 else None
            if choice is None:
                choice = int(rng.choice(np.flatnonzero(mask)))
            env.step(choice)
    assert checked["play"] > 100 and checked["ditch"] > 100, checked


# ------------------------------------------------------------------ 500 Rum descriptions
def _deal(p0: str, p1: str, up: str, stock: str) -> list[str]:
    from rummyzoo.envs.cards import CARD_NAMES

    h0, h1 = parse_cards(p0), parse_cards(p1)
    head = [c for pair in zip(h0, h1, strict=True) for c in pair] + parse_cards(up)
    head += parse_cards(stock)
    return [CARD_NAMES[c] for c in head + [c for c in range(52) if c not in head]]


def test_rummy500_descriptions_of_a_worked_hand():
    deck = _deal("4h 5h 6h 2c 9d Js 7c Kd 3s Qc", "Ac 8c 2d 5d As Td 4s 6s 9s 8d", "Tc", "2h 3d")
    env = rummy500_v0.raw_env(num_players=2, target_score=None)
    env.reset(seed=0, options={"deck": deck})
    feats = Rummy500ActionFeatures(2, {"target_score": None})
    obs = env.observe("player_0")["observation"]
    dig = _row(feats, obs, env.action_index("dig Tc"))  # the up card: one card, 10 points
    assert dig[2] == 1 and dig[11] == pytest.approx(0.1) and dig[12] == pytest.approx(10 / 60)
    assert dig[13] == 0  # Tc melds with nothing in the hand
    env.step(env.action_index("draw stock"))  # 2h joins the hand
    obs = env.observe("player_0")["observation"]
    meld = _row(feats, obs, env.action_index("meld 4h 5h 6h"))
    assert meld[4] == 1 and meld[3] == 0 and meld[9] == pytest.approx(15 / 45)
    assert meld[15] == pytest.approx(8 / 15)  # eleven cards, three melded
    discard = _row(feats, obs, env.action_index("discard 5h"))
    assert discard[8] == 1 and discard[20] == 1  # 5h is in the run 4h 5h 6h: discarding breaks it
    loose = _row(feats, obs, env.action_index("discard Kd"))
    assert loose[20] == 0 and loose[10] == pytest.approx(10 / 15)
    # the run's cards count as melded in the hand the discard of Kd leaves
    assert loose[17] == pytest.approx(3 / 10)
    assert not _row(feats, obs, env.action_index("discard 8c")).any()  # not in the hand


# ---- every column of every legal action's row, worked out again from the rules of a 3-card meld
# and from what the observer sees before and after the action is applied to a copy of the game
VALUE = [15 if c % 13 == 0 else min(c % 13 + 1, 10) for c in range(52)]


def _is_meld(cards) -> bool:
    if len({c % 13 for c in cards}) == 1:
        return len({c // 13 for c in cards}) == len(cards)
    if len({c // 13 for c in cards}) != 1:
        return False
    for ace_high in (False, True):
        pos = sorted(13 if c % 13 == 0 and ace_high else c % 13 for c in cards)
        if all(b == a + 1 for a, b in itertools.pairwise(pos)):
            return True
    return False


PARTNERS = [
    {
        c
        for c in range(52)
        if c != a and any(_is_meld((a, c, d)) for d in range(52) if d not in (a, c))
    }
    for a in range(52)
]


def _melded(hand: set[int]) -> set[int]:
    """The cards of ``hand`` that are in some 3-card meld of it."""
    return {
        a
        for a in hand
        if any(_is_meld((a, b, c)) for b in PARTNERS[a] & hand for c in PARTNERS[a] & hand if b < c)
    }


def _bits(mask: int) -> set[int]:
    return {c for c in range(52) if mask >> c & 1}


def _expected_rummy500_row(env, action: int, v1: bool) -> np.ndarray:
    """The row of ``action`` in the observer's description, worked out independently (``v1``:
    ``rummy500_actions_v1``, else the first version)."""
    game = env.unwrapped.game
    agent = env.agent_selection
    before = game.decode(env.observe(agent)["observation"])
    mask = env.observe(agent)["action_mask"]
    hand, unseen = _bits(before.hand), _bits(before.unseen)
    name = env.action_name(action)
    words = name.split()
    named = parse_cards(" ".join(w for w in words[1:] if len(w) == 2 and w != "on"))
    after_env = copy.deepcopy(env)
    after_env.step(action)
    over = after_env.unwrapped.hand_state.over
    after = None if over else game.decode(after_env.observe(agent)["observation"])
    row = np.zeros(25)
    card = named[0] if named else -1
    if words[0] == "draw":
        # the drawn card is not known before the draw: the hand's known cards describe the rest
        row[0] = 1
        row[11] = 0.1 if v1 else 0.0
        row[15] = (len(hand) + v1) / 15
        row[16] = sum(VALUE[c] for c in hand - _melded(hand)) / 100
        row[17] = len(_melded(hand)) / 10
        assert after is not None and after.hand.bit_count() == len(hand) + 1
        return row
    if words[0] == "pass":
        row[1] = 1
        new = hand
    elif words[0] == "dig":
        row[2] = 1
        pile = list(before.discards)
        taken = set(pile[pile.index(card) :])
        new = hand | taken
        row[10] = VALUE[card] / 15
        row[11] = len(taken) / 10
        row[12] = sum(VALUE[c] for c in taken) / 60
        row[13] = sum(VALUE[c] for c in taken & _melded(new)) / 60
        row[14] = len(taken & _bits(before.fits_any)) / 5
        row[23] = len(PARTNERS[card] & hand) / 4
        row[24] = len(PARTNERS[card] & unseen) / 6
    elif words[0] == "meld":
        is_set = len({c % 13 for c in named}) == 1
        row[3 if is_set else 4] = 1
        new = hand - set(named)
        low_ace = not is_set and {c % 13 for c in named} == {0, 1, 2}
        row[9] = sum(1 if low_ace and c % 13 == 0 else VALUE[c] for c in named) / 45
        row[10] = max(VALUE[c] for c in named) / 15
        row[11] = 3 / 10
        row[19] = float(before.pending in named)
    else:  # one card laid off or discarded
        new = hand - {card}
        row[10] = VALUE[card] / 15
        row[11] = 1 / 10
        row[23] = len(PARTNERS[card] & new) / 4
        row[24] = len(PARTNERS[card] & unseen) / 6
        if words[0] == "lay":
            place = "set" if words[-1] == "set" else words[-2]
            row[{"set": 5, "below": 6, "above": 7}[place]] = 1
            row[9] = (1 if place == "below" and card % 13 == 0 else VALUE[card]) / 45
            row[19] = float(card == before.pending)
        else:
            row[8] = 1
            row[20] = float(card in _melded(hand))
            # it fits the table exactly when laying it off somewhere is legal now
            row[21] = float(
                any(
                    mask[env.action_index(f"lay off {words[1]} {w}")]
                    for w in ("on set", "below run", "above run")
                )
            )
            row[22] = float(
                any(
                    _is_meld((card, a, b))
                    for known in before.opponent_known
                    for a in _bits(known)
                    for b in _bits(known)
                    if a < b
                )
            )
    row[15] = len(new) / 15
    row[16] = sum(VALUE[c] for c in new - _melded(new)) / 100
    row[17] = len(_melded(new)) / 10
    row[18] = float(not new)
    if (
        after is not None
    ):  # the rules' own successor agrees with the hand and points worked out here
        assert _bits(after.hand) == new, name
        assert row[9] == pytest.approx((after.table_points[0] - before.table_points[0]) / 45), name
    return row


def _live_decisions(env):
    """Each live decision of an AEC game, its ``last()`` observation (the caller steps); the
    seats whose game ended are stepped with None here."""
    for _agent in env.agent_iter():
        step, _r, term, trunc, _i = env.last()
        if term or trunc:
            env.step(None)
            continue
        yield step


def _description_block(feats, step) -> np.ndarray:
    """The ``(actions, width)`` descriptions of ``feats`` at a decision."""
    return feats(step["observation"]).reshape(feats.num_actions, feats.width)


def _check_rummy500_row(env, block: np.ndarray, action: int, v1: bool) -> np.ndarray:
    """``action``'s row of ``block`` is the one worked out independently (returned)."""
    got = block[action]
    want = _expected_rummy500_row(env, action, v1)
    bad = np.flatnonzero(np.abs(got - want) > 1e-6)
    assert not bad.size, (env.action_name(action), v1, bad, got[bad], want[bad])
    return want


@pytest.mark.parametrize(
    ("players", "options"),
    [(2, {}), (3, {}), (4, {"top_discard_free": True}), (2, {"hand_size": 7})],
)
def test_rummy500_descriptions_agree_with_every_action_applied(players, options):
    """Every column of every legal action's row, both versions: ``rummy500_actions`` differs from
    the rules only in its draw row (the hand before the draw), ``rummy500_actions_v1`` nowhere."""
    options = {"target_score": None, **options}
    versions = {
        False: make_features("rummy500_actions", "rummy500", players, options),
        True: make_features("rummy500_actions_v1", "rummy500", players, options),
    }
    rng = np.random.default_rng(5)
    kinds = set()
    for seed in range(3):
        env = rummy500_v0.env(num_players=players, **options)
        env.reset(seed=seed)
        for step in _live_decisions(env):
            legal = np.flatnonzero(step["action_mask"])
            if rng.random() < 0.25:
                for v1, feats in versions.items():
                    block = _description_block(feats, step)
                    for action in legal.tolist():
                        want = _check_rummy500_row(env, block, action, v1)
                        kinds.add(int(np.argmax(want[:9])))
            # lay-offs are rare in random play: taken where there is one, so that every kind
            # of row is met (a set, below a run, above a run)
            lay_offs = [a for a in legal.tolist() if env.action_name(a).startswith("lay off")]
            if lay_offs and rng.random() < 0.8:
                env.step(int(rng.choice(lay_offs)))
            else:
                env.step(int(rng.choice(legal)))
    assert kinds >= {0, 2, 3, 4, 5, 6, 7, 8}, kinds


def test_rummy500_descriptions_of_laying_off_the_card_that_must_be_used():
    """The rows of a lay-off of the card a dig obliges the player to use (column 19), below and
    above a run, checked wherever such a lay-off is legal in random games (rare in random play:
    lay-offs and digs are favoured, and games are played until both kinds are met)."""
    features = {
        v1: make_features(name, "rummy500", 2, {"target_score": None})
        for v1, name in ((False, "rummy500_actions"), (True, "rummy500_actions_v1"))
    }
    met: set[int] = set()
    rng = np.random.default_rng(11)
    for seed in range(40):
        env = rummy500_v0.env(num_players=2, target_score=None)
        env.reset(seed=seed)
        for step in _live_decisions(env):
            legal = np.flatnonzero(step["action_mask"]).tolist()
            pending = env.unwrapped.match.state.pending
            names = {a: env.action_name(a) for a in legal}
            uses = [
                a
                for a, name in names.items()
                if pending >= 0
                and name.startswith("lay off")
                and parse_cards(name.split()[2])[0] == pending
            ]
            for action in uses:
                for v1, feats in features.items():
                    want = _check_rummy500_row(env, _description_block(feats, step), action, v1)
                    assert want[19] == 1.0, names[action]
                met.add(int(np.argmax(want[:9])))
            lay = [a for a, name in names.items() if name.startswith("lay off")]
            digs = [a for a, name in names.items() if name.startswith("dig")]
            pick = (
                lay
                if lay and rng.random() < 0.8
                else digs
                if digs and rng.random() < 0.5
                else legal
            )
            env.step(int(rng.choice(pick)))
        if {6, 7} <= met:
            break
    assert {6, 7} <= met, met


# ---- Ditch Rummy: every column of every action's row, worked out again from the action's name,
# the rules of docs/rules.md section 2 (on card ids, as the rules write them) and the table as the
# player to act sees it; every legal action is also applied to a copy of the hand, and the rules'
# own successor must agree with what the row says the action does
DITCH_COLUMNS = (
    *("kind: draw", "kind: meld", "kind: single", "kind: ditch one", "kind: ditch all"),
    *("kind: end turn", "cards moved", "points now", "a set", "a blind run", "ends the hand"),
    *("an ace moved", "mean rank moved", "live run partners moved", "live set partners moved"),
    *("moved cards that fit now", "hand size after", "penalty after", "live run partners kept"),
    *("live set partners kept", "kept cards that fit after", "melding pairs kept", "draw pile"),
    *("plans: worth", "plans: ending verdict", "plans: gap to the best"),
)


def _grank(card: int) -> int:
    """Ditch Rummy's rank of a card id: 2 = 0 ... K = 11, A = 12 (aces are high only)."""
    return (card % 13 - 1) % 13


def _of_grank(rank: int, suit: int) -> int:
    return suit * 13 + (rank + 1) % 13


class _DitchRules:
    """The rules of one option set, written out from docs/rules.md (2.1-2.4). A meld on the
    table is ``(kind, low, high, suit)``: its kind, the ranks of its ends, and the suit a single
    must have to fit it (``None``: any)."""

    def __init__(self, options: dict) -> None:
        up_to_3 = options.get("draw_rule", "fill_to_3") == "up_to_3"
        self.hand_limit = (options.get("max_hand") or 6) if up_to_3 else 3
        self.same_suit = options.get("runs_same_suit", False)
        self.extends = options.get("single_extends_meld", False)
        self.single = options.get("points_single", 2)
        self.ace = options.get("points_single_ace", 10)
        self.meld_points = {
            "set": options.get("points_set", 5),
            "run": options.get("points_run", 25),
        }
        self.charged = options.get("hand_penalty", "per_card") == "per_card"
        self.teams = options.get("teams", False)
        self.target = options.get("target_score", 500)

    def points(self, card: int) -> int:
        """What the card scores as a single."""
        return self.ace if _grank(card) == 12 else self.single

    def penalty(self, card: int) -> int:
        """What the card costs if it is still held when the hand ends."""
        return self.points(card) if self.charged else 0

    def run_pair(self, a: int, b: int) -> bool:
        return abs(_grank(a) - _grank(b)) == 1 and (not self.same_suit or a // 13 == b // 13)

    def set_pair(self, a: int, b: int) -> bool:
        return a != b and _grank(a) == _grank(b)

    def meld_kind(self, cards) -> str | None:
        ranks = sorted(_grank(c) for c in cards)
        if len(set(ranks)) == 1:
            return "set"
        if all(b == a + 1 for a, b in itertools.pairwise(ranks)) and (
            not self.same_suit or len({c // 13 for c in cards}) == 1
        ):
            return "run"
        return None

    @staticmethod
    def ends_hand(kind: str, cards) -> bool:
        """A three-card J-Q-K or Q-K-A run ends the hand."""
        return kind == "run" and sorted(map(_grank, cards)) in ([9, 10, 11], [10, 11, 12])

    @staticmethod
    def takes(meld: tuple, card: int, place: str) -> bool:
        """The meld takes the card as a single in that place (onto a set, below or above a run)."""
        kind, low, high, suit = meld
        if suit is not None and suit != card // 13:
            return False
        if kind == "set":
            return place == "set" and low == _grank(card)
        return (place, _grank(card)) in (("below", low - 1), ("above", high + 1))

    @staticmethod
    def fits(table: list[tuple]) -> tuple[set[int], ...]:
        """The cards that fit onto a set, below a run and above a run (the fit planes)."""
        on_set, below, above = set(), set(), set()
        for kind, low, high, suit in table:
            if kind == "set":
                on_set |= {_of_grank(low, s) for s in range(4)}
                continue
            suits = range(4) if suit is None else (suit,)
            below |= {_of_grank(low - 1, s) for s in suits if low > 0}
            above |= {_of_grank(high + 1, s) for s in suits if high < 12}
        return on_set, below, above

    def melded(self, table: list[tuple], cards) -> list[tuple]:
        kind, ranks = self.meld_kind(cards), [_grank(c) for c in cards]
        suit = cards[0] // 13 if kind == "run" and self.same_suit else None
        return [*table, (kind, min(ranks), max(ranks), suit)]

    def joined(self, table: list[tuple], card: int, place: str) -> list[tuple]:
        """The table after the single: with ``single_extends_meld`` it joins the earliest meld
        that takes it that way, and a run's end moves on."""
        if not self.extends:
            return table
        i = next(i for i, meld in enumerate(table) if self.takes(meld, card, place))
        kind, low, high, suit = table[i]
        if place != "set":
            low, high = (_grank(card), high) if place == "below" else (low, _grank(card))
        return [*table[:i], (kind, low, high, suit), *table[i + 1 :]]

    def end_moved(self, fits: tuple, card: int, place: str) -> tuple[set[int], ...]:
        """The fit planes after the single joins a run's end as ditch.smart's planner models
        them (``PlayPlanner.after_single``): the end it moves off is taken as gone, though
        another run may still end there."""
        rank, suits = _grank(card), [card // 13] if self.same_suit else range(4)
        step = -1 if place == "below" else 1
        at = 1 if place == "below" else 2
        out = list(fits)
        out[at] = fits[at] - {_of_grank(rank, s) for s in suits}
        out[at] |= {_of_grank(rank + step, s) for s in suits if 0 <= rank + step <= 12}
        return tuple(out)

    def table(self, state) -> list[tuple]:
        """The melds on the hand's table in the order played, from their cards (the singles
        that joined them included)."""
        out = []
        for meld in state.melds:
            kind = self.meld_kind(meld.cards)
            ranks = [_grank(c) for c in [*meld.cards, *meld.added]]
            suit = meld.cards[0] // 13 if kind == "run" and self.same_suit else None
            out.append((kind, min(ranks), max(ranks), suit))
        return out


def _ditch_plane(obs: np.ndarray, layout: dict, name: str, row: int = 0) -> set[int]:
    start = layout[name][0] + 52 * row
    return set(np.flatnonzero(obs[start : start + 52]).tolist())


def _ditch_verdict(rules: _DitchRules, env, gain: int, held: list[int]) -> int:
    """Ending the hand now, having earned ``gain`` more and holding ``held``: 1 if that surely
    wins the hand (or the match, once someone reaches the target), -1 if it may not, 0 if the
    match surely goes on. A card the player cannot see costs at most what the dearest card
    costs (a partner's) and at least what the cheapest costs (a rival's)."""
    raw = env.unwrapped
    state, n = raw.hand_state, raw.game.num_players
    side = [s % 2 if rules.teams else s for s in range(n)]
    costs = [rules.penalty(c) for c in range(52)]
    me = side[state.current]
    sides = dict.fromkeys(side, 0.0)
    if rules.target is not None:
        sides.update(zip(side, raw.match.totals_by_seat().tolist(), strict=True))
    for s in range(n):
        cost = len(state.hands[s]) * (max(costs) if side[s] == me else min(costs))
        if s == state.current:
            cost = sum(map(rules.penalty, held)) - gain
        sides[side[s]] += state.earned[s] - cost
    if rules.target is not None and max(sides.values()) < rules.target:
        return 0
    mine = sides.pop(me)
    return 1 if mine > max(sides.values()) else -1


def _expected_ditch_rows(env, rules: _DitchRules):
    """For every action id, at the decision of the player to act: the first 23 columns of its
    ``ditch_plans`` row (``ditch_actions``), and what it does (the hand it leaves, the points it
    earns, the table after), worked out from its name and what the player sees. ``None`` for an
    illegal action that names only cards held (the builder documents no row for those); a zero
    row for one that names a card not held, cards that are no meld, or a single that does not
    fit that way. Third, where a single moves a run's end (``single_extends_meld``) and the
    planner's model (:meth:`_DitchRules.end_moved`) gives another "kept cards that fit after"
    column, that value."""
    raw = env.unwrapped
    game, state = raw.game, raw.hand_state
    step = env.observe(env.agent_selection)
    obs, mask = step["observation"], step["action_mask"]
    layout = game.observation_layout
    hand = []  # in position order, as the observation shows it
    for pos in range(rules.hand_limit):
        hand += sorted(_ditch_plane(obs, layout, "hand_positions", pos))
    assert hand == sorted(state.hand_cards(state.current), key=lambda c: (_grank(c), c // 13))
    shown = set(hand) | _ditch_plane(obs, layout, "discard_pile")
    for part in ("sets", "runs", "singles"):
        for seat in range(game.num_players):
            shown |= _ditch_plane(obs, layout, part, seat)
    unseen = set(range(52)) - shown
    others = [c for s in range(game.num_players) if s != state.current for c in state.hand_cards(s)]
    assert unseen == set(state.pile_cards()) | set(others)  # the draw pile and the other hands
    stock = state.pile_size
    table = rules.table(state)
    fits = rules.fits(table)
    planes = ("fits_set", "fits_below_run", "fits_above_run")
    assert fits == tuple(_ditch_plane(obs, layout, p) for p in planes)

    def live(cards, pair) -> int:
        return sum(pair(c, u) for c in cards for u in unseen)

    def fitting(cards, fits_then) -> float:
        return sum(any(c in plane for plane in fits_then) for c in cards) / 3

    def describe(kind: int, moved, kept, after) -> np.ndarray:
        row = np.zeros(23)
        row[kind] = 1
        if moved:
            row[6] = len(moved) / 3
            row[11] = any(_grank(c) == 12 for c in moved)
            row[12] = sum(map(_grank, moved)) / len(moved) / 12
            row[13] = live(moved, rules.run_pair) / 8
            row[14] = live(moved, rules.set_pair) / 3
            row[15] = fitting(moved, fits)
        row[16] = len(kept) / rules.hand_limit
        row[17] = sum(map(rules.penalty, kept)) / 20
        row[18] = live(kept, rules.run_pair) / 16
        row[19] = live(kept, rules.set_pair) / 6
        row[20] = fitting(kept, rules.fits(after))
        row[21] = sum(bool(rules.meld_kind(p)) for p in itertools.combinations(kept, 2)) / 3
        row[22] = stock / 52
        return row

    rows: dict[int, np.ndarray | None] = {}
    does: dict[int, dict] = {}
    planned: dict[int, float] = {}
    for action in range(game.num_actions):
        words = env.action_name(action).split()
        at = [int(w) for w in words[1:] if w.isdigit()]
        if words[0] == "draw":
            row = describe(0, [], hand, table)  # the cards drawn are not known yet
            row[6] = at[0] / 3
            row[16] = (len(hand) + at[0]) / rules.hand_limit
            row[22] = (stock - at[0]) / 52
            rows[action] = row if mask[action] else None
            does[action] = {"size": len(hand) + at[0], "stock": stock - at[0]}
            continue
        if max(at, default=-1) >= len(hand) or (words == ["ditch", "all"] and not hand):
            rows[action] = np.zeros(23)  # names a card not held
            continue
        cards = hand if words == ["ditch", "all"] else [hand[p] for p in at]
        rest = [c for c in hand if c not in cards]
        did = {"cards": cards, "hand": rest, "gain": 0, "after": table, "ends": False}
        if words[0] == "meld":
            kind = rules.meld_kind(cards)
            if kind is None:
                rows[action] = np.zeros(23)  # no meld
                continue
            did["after"] = rules.melded(table, cards)
            row = describe(1, cards, rest, did["after"])
            did["gain"] = rules.meld_points[kind]
            row[7] = did["gain"] / 25
            row[8], row[9] = kind == "set", kind == "run"
            did["ends"] = row[10] = rules.ends_hand(kind, cards)
        elif words[0] == "single":
            places = [
                p
                for p, plane in zip(("set", "below", "above"), fits, strict=True)
                if cards[0] in plane
            ]
            place = words[2] if rules.extends else next(iter(places), None)
            if place not in places:
                rows[action] = np.zeros(23)  # the card does not fit that way
                continue
            did["after"] = rules.joined(table, cards[0], place)
            row = describe(2, cards, rest, did["after"])
            did["gain"] = rules.points(cards[0])
            row[7] = did["gain"] / 25
            if rules.extends and place != "set":
                planner = fitting(rest, rules.end_moved(fits, cards[0], place))
                if planner != row[20]:
                    planned[action] = planner
        elif words == ["ditch", "all"]:
            row = describe(4, hand, [], table)
        elif words[0] == "ditch":
            row = describe(3, cards, rest, table)
        else:
            row = describe(5, [], hand, table)
        rows[action] = row if mask[action] else None
        does[action] = did
    return rows, does, planned


def _check_ditch_successor(env, rules: _DitchRules, action: int, did: dict) -> None:
    """The rules' own successor of a legal action agrees with what its row says it does."""
    raw = env.unwrapped
    state = raw.hand_state
    seat, name = state.current, raw.describe_action(action)
    after = state.copy()
    raw.game.apply(after, action, np.random.default_rng(0))
    if "size" in did:  # a draw
        assert len(after.hands[seat]) == did["size"] and after.pile_size == did["stock"], name
        return
    named = parse_cards([w for w in name.partition(":")[2].split() if len(w) == 2])
    assert named == did["cards"], name
    assert sorted(after.hand_cards(seat)) == sorted(did["hand"]), name
    assert after.earned[seat] - state.earned[seat] == did["gain"], name
    assert (after.over and after.end_reason == "blind_run") == did["ends"], name
    assert rules.fits(rules.table(after)) == rules.fits(did["after"]), name
    if did["ends"] and _ditch_verdict(rules, env, did["gain"], did["hand"]) == 1:
        # a sure win is a win, whatever the cards the player could not see
        side = [s % 2 if rules.teams else s for s in range(raw.game.num_players)]
        sides = dict.fromkeys(side, 0.0)
        if rules.target is not None:  # a side's match total, then each member's hand points
            sides.update(zip(side, raw.match.totals_by_seat().tolist(), strict=True))
        for s, points in enumerate(after.points.tolist()):
            sides[side[s]] += points
        mine = sides.pop(side[seat])
        assert mine > max(sides.values()), name
        assert rules.target is None or mine >= rules.target, name


def _check_ditch_decision(env, rules: _DitchRules, features: dict, judge, seen: Counter) -> None:
    """Every column of every action's rows (both feature sets) at the decision of the player to
    act."""
    raw = env.unwrapped
    step = env.observe(env.agent_selection)
    obs, mask = step["observation"], step["action_mask"]
    rows, does, planned = _expected_ditch_rows(env, rules)
    blocks = {name: f(obs).reshape(f.num_actions, f.width) for name, f in features.items()}
    # ditch_plans: ditch.smart's worth of each legal action of the play phase (its public
    # estimate), with the verdicts and the gaps to the best worked out again
    worths = judge.action_worths(raw.game.decode(obs))
    legal = set(np.flatnonzero(mask).tolist())
    assert set(worths) == (legal if raw.hand_state.phase == Phase.PLAY else set())
    keys = {a: w + 1e6 * v for a, (w, v) in worths.items()}  # a sure win first, an unsure end last
    best = max(keys.values(), default=0.0)
    for action, row in rows.items():
        label, name = raw.action_name(action), raw.describe_action(action)
        if row is None:
            continue
        # a legal action is always described, an action described by a zero row never legal
        assert row.any() == bool(mask[action]), name
        plan = np.zeros(3)
        if action in worths:
            worth, verdict = worths[action]
            did = does[action]
            if did["ends"]:  # the meld ends the hand: its points less what the rest costs
                assert worth == did["gain"] - sum(map(rules.penalty, did["hand"])), name
                assert verdict == _ditch_verdict(rules, env, did["gain"], did["hand"]), name
                seen[f"an ending meld valued {verdict}"] += 1
            elif not label.startswith(("meld", "single")):  # these end nothing
                assert verdict == 0 and (worth == 0 or label != "ditch all"), name
            plan = [np.clip(worth / 25, -4, 4), verdict, np.clip((keys[action] - best) / 25, -4, 0)]
        want = np.concatenate([row, plan])
        if mask[action]:
            _check_ditch_successor(env, rules, action, does[action])
            seen[DITCH_COLUMNS[int(np.argmax(row[:6]))]] += 1
            seen["an ace moved"] += bool(row[11])
        for features_name, block in blocks.items():
            got = block[action]
            bad = np.abs(got - want[: len(got)]) > 1e-5
            if action in planned and bad[20] and abs(got[20] - planned[action]) < 1e-6:
                bad[20] = False  # the planner's model of a shared run end (see above)
                seen["a shared run end"] += 1
            assert not bad.any(), f"{features_name}, {name}: " + "; ".join(
                f"column {c} ({DITCH_COLUMNS[c]}) is {got[c]:.6g}, not {want[c]:.6g}"
                for c in np.flatnonzero(bad)
            )


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (2, {}),  # the first hands of a match to 500
        (4, {"teams": True, "target_score": None}),
        (3, {"draw_rule": "up_to_3", "max_hand": 7, "target_score": None}),
        (2, {"runs_same_suit": True, "target_score": None}),
        (2, {"single_extends_meld": True, "draw_rule": "up_to_3", "target_score": None}),
        (4, {"single_extends_meld": True, "runs_same_suit": True, "target_score": 60}),
        (
            3,
            {
                **{"points_single": 3, "points_single_ace": 7, "points_set": 9, "points_run": 15},
                **{"hand_penalty": "none", "target_score": None},
            },
        ),
        (2, {"points_single": 4, "points_single_ace": 1, "target_score": 20}),
    ],
)
def test_ditch_descriptions_agree_with_every_action_applied(players, options):
    """Every column of ``ditch_actions`` and ``ditch_plans`` for every action id, worked out
    again from the rules for the legal actions (and zero rows where the action names cards not
    held, cards that are no meld or a single that does not fit), only the worths of the play
    phase's actions taken from ditch.smart (its ``action_worths``). The first game opens on two
    hand-ending runs (J-Q-K), one that surely wins a single hand and one that does not (25
    points each side); then the games play on at random and as ditch.smart would, every other
    decision checked."""
    rules = _DitchRules(options)
    features = {
        name: make_features(name, "ditch_rummy", players, options)
        for name in ("ditch_actions", "ditch_plans")
    }
    judge = SmartDitch("ditch_rummy", players, options)
    rng = np.random.default_rng(7)
    seen: Counter = Counter()
    checked = 0
    # the first game's opening: player_0 draws J-Q-K (and ditches it), player_1 melds a run
    # (the others pass), and player_0 draws J-Q-K again; every decision up to that one checked
    deck = deck_with_top("Jc Qc Kc 4c 5c 6c Jd Qd Kd")
    opening = ["draw 3", "ditch all", "draw 3", "meld 0 1 2", *["draw 0"] * (players - 2), "draw 3"]
    for seed in itertools.count():
        env = ditch_rummy_v0.env(num_players=players, **options)
        env.reset(seed=seed, options={"deck": deck} if seed == 0 else None)
        script = opening if seed == 0 else []
        for decision, _agent in enumerate(env.agent_iter()):
            step, _r, term, trunc, _i = env.last()
            if term or trunc:
                env.step(None)
                continue
            if decision <= len(script) or rng.random() < 0.5:
                _check_ditch_decision(env, rules, features, judge, seen)
                checked += 1
            mask = step["action_mask"]
            if decision < len(script):
                choice = env.unwrapped.action_index(script[decision])
            elif rng.random() < 0.6:
                choice = judge.act(step["observation"], mask, rng)
            else:
                choice = int(rng.choice(np.flatnonzero(mask)))
            env.step(choice)
            if checked >= 250:
                break
        if checked >= 250:
            break
    kinds = [f"kind: {k}" for k in ("draw", "meld", "single", "ditch one", "ditch all", "end turn")]
    assert all(seen[k] for k in [*kinds, "an ace moved"]), seen
    # the opening's runs decide a single hand, and a match whose target they reach
    verdicts = (0,) if (rules.target or 0) > rules.meld_points["run"] else (1, -1)
    assert all(seen[f"an ending meld valued {v}"] for v in verdicts), seen


@pytest.mark.parametrize(
    ("variant", "name", "players", "options"),
    [
        ("ditch_rummy", "ditch_actions", 2, {}),
        ("ditch_rummy", "ditch_actions", 4, {"teams": True}),
        ("ditch_rummy", "ditch_actions", 3, {"draw_rule": "up_to_3", "single_extends_meld": True}),
        ("ditch_rummy", "ditch_plans", 2, {}),
        ("ditch_rummy", "ditch_plans", 3, {"draw_rule": "up_to_3", "single_extends_meld": True}),
        ("rummy500", "rummy500_actions", 2, {}),
        ("rummy500", "rummy500_actions", 4, {"top_discard_free": True}),
        ("rummy500", "rummy500_actions_v1", 3, {}),
    ],
)
def test_every_legal_action_is_described(variant, name, players, options):
    feats = make_features(name, variant, players, options)
    vec = make_vector(variant, 32, players, **options)
    vec.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(150):
        block = feats.batch(vec.observations).reshape(32, feats.num_actions, feats.width)
        legal = vec.action_masks.astype(bool)
        described = np.abs(block).sum(axis=2) > 0
        assert (described | ~legal).all()
        assert np.isfinite(block).all()
        # the same observation always gives the same description, row by row or batched
        assert np.array_equal(block[3].reshape(-1), feats(vec.observations[3]))
        vec.step(uniform_legal_actions(vec.action_masks, rng))


def test_rummy500_descriptions_refuse_two_decks():
    with pytest.raises(ValueError, match="one-deck games"):
        make_features("rummy500_actions", "rummy500", 6, {})


# ------------------------------------------------------------------ the shared scorer
def test_the_scorer_scores_every_action_with_the_same_weights():
    layout = action_layout("ditch_rummy", 2, {}, "ditch_actions", mask_in_obs=False)
    start, width, actions = layout["action_start"], layout["action_width"], layout["num_actions"]
    th.manual_seed(0)
    scorer = ActionScorer(layout, [32], card_arch=[16, 16])
    x = th.rand(3, layout["input_size"])
    block = x[:, start : start + actions * width].reshape(3, actions, width)
    block[:, 5] = block[:, 9]  # two actions with the same description...
    scores = scorer(x)
    assert th.allclose(scores[:, 5], scores[:, 9])  # ...get the same score
    y = x.clone()
    y[:, start + 2 * width] += 1.0  # one value of action 2's description
    moved = (scorer(y) - scores).abs() > 1e-7
    assert moved[:, 2].all() and not moved[:, [a for a in range(actions) if a != 2]].any()
    # an action without a description is not scored (0); gradients reach every weight
    z = x.clone()
    z[:, start + 4 * width : start + 5 * width] = 0.0
    out = scorer(z)
    assert (out[:, 4] == 0).all() and th.allclose(out[:, 5], scores[:, 5])
    out.sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in scorer.parameters())


def test_the_scorers_gradients_sum_in_an_order_that_does_not_depend_on_the_threads():
    """No step of the scorer's backward sums with indexing's backward (``IndexBackward0``):
    on CPU that sums the rows that share a destination (each game's context row, over its
    actions) with atomic adds whose order changes with the threads' timing, so seeded runs
    that update on two threads drifted apart in the last bits on a busy machine. The gathers
    are ``index_select``, whose backward sums in index order."""
    from rummyzoo.agents.networks import CardScorer, card_layout

    def steps_of(network, layout):
        out = network(th.rand(4, layout["input_size"]))
        seen, todo = set(), [out.grad_fn]
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            todo += [next_node for next_node, _ in node.next_functions]
        return {type(node).__name__ for node in seen}

    th.manual_seed(1)
    layout = action_layout("ditch_rummy", 2, {}, "ditch_plans", mask_in_obs=False)
    names = steps_of(ActionScorer(layout, [64], card_arch=[64, 64]), layout)
    assert "IndexSelectBackward0" in names  # (the walk reaches the gathers)
    assert "IndexBackward0" not in names
    # Knock Rummy's card network shares its weights over the cards by expanding, not gathering
    layout = card_layout("knock_rummy", 2, {}, None, mask_in_obs=False)
    names = steps_of(CardScorer(layout, [64], [64, 64]), layout)
    assert "ExpandBackward0" in names and "IndexBackward0" not in names


def test_actions_network_needs_action_descriptions():
    with pytest.raises(ConfigLoadError, match=r"policy_kwargs\.network: the 'actions' network"):
        validate_config({"variant": "ditch_rummy", "policy_kwargs": {"network": "actions"}})
    with pytest.raises(ConfigLoadError, match="features: 'rummy500_actions' are for rummy500"):
        validate_config({"variant": "ditch_rummy", "features": "rummy500_actions"})


@pytest.mark.parametrize(
    ("variant", "features", "algo"),
    [
        ("ditch_rummy", "ditch_actions", "ppo"),
        ("ditch_rummy", "ditch_actions", "dqn"),
        ("ditch_rummy", "ditch_plans", "ppo"),
        ("rummy500", "rummy500_actions_v1", "ppo"),
        ("rummy500", "rummy500_actions", "dqn"),
    ],
)
def test_actions_network_trains_saves_and_plays(tmp_path, variant, features, algo):
    run = tmp_path / algo
    overrides = [
        f"variant={variant}",
        f"features={features}",
        "policy_kwargs.network=actions",
        "env_options.target_score=null",
        "league.sampling=pfsp",
    ]
    summary = train_from_file(str(CONFIGS / f"smoke_{algo}.yaml"), overrides, str(run), ["test"])
    last = run / "checkpoints" / "last.rz"
    meta = read_meta(last)
    assert meta["steps"] == summary["steps"] >= 256
    assert meta["network"]["type"] == "actions"
    policy = load_policy(last, variant, 2)
    assert type(policy.model.policy).__name__.startswith("Action")
    options = {"target_score": None}
    result = run_arena(
        variant, 2, [str(last), "random"], deals=2, seed=0, workers=1, options=options
    )
    assert result.games == 4
    assert_refuses_other_envs(last, variant)


# ------------------------------------------------------------------ margin reward
@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [("ditch_rummy", 2, {}), ("ditch_rummy", 4, {"teams": True}), ("rummy500", 3, {})],
)
def test_margin_reward_is_the_points_margin_and_zero_sum(variant, players, options):
    game = make_game(
        variant, players, reward="margin", reward_scale=10.0, target_score=None, **options
    )
    match = Match(game)
    rng = np.random.default_rng(4)
    match.reset(seed=3)
    end = None
    while end is None or end.points is None:
        end = match.play(int(rng.choice(np.flatnonzero(match.legal_mask()))))
    rewards = np.asarray(end.rewards, dtype=float)
    points = np.asarray(end.points, dtype=float)
    groups = np.asarray(game.score_groups)
    sides = [points[groups == g].sum() for g in sorted(set(groups.tolist()))]
    for seat in range(players):
        mine = sides[groups[seat]]
        others = [p for g, p in enumerate(sides) if g != groups[seat]]
        assert rewards[seat] == pytest.approx((mine - np.mean(others)) / 10.0)
    per_side = [rewards[groups == g][0] for g in sorted(set(groups.tolist()))]
    assert sum(per_side) == pytest.approx(0.0)


# ------------------------------------------------------------------ PFSP league
def test_pfsp_draws_the_hardest_opponents_most():
    mixture = OpponentMixture(
        [("random", 1.0), ("ditch.greedy", 1.0), ("self", 1.0)],
        "ditch_rummy",
        2,
        pfsp_exponent=2.0,
        pfsp_window=50,
        snapshot_loader=lambda *a: make_agent_random(),
    )
    # an empty pool: "self" falls back to the other entries
    assert mixture.probabilities() == pytest.approx({"random": 0.5, "ditch.greedy": 0.5})
    for _ in range(40):
        mixture.record(["random"], 1.0)
        mixture.record(["ditch.greedy"], 0.0)
    mixture.add_snapshot("a.rz", 100)
    mixture.add_snapshot("b.rz", 200)
    for _ in range(20):
        mixture.record(["self@100"], 1.0)
        mixture.record(["self@200"], 0.5)
    p = mixture.probabilities()
    assert sum(p.values()) == pytest.approx(1.0)
    assert p["ditch.greedy"] > p["self@200"] > p["self@100"] and p["ditch.greedy"] > p["random"]
    # (1 - 1/42)^2 against (1 - 41/42)^2: random nearly fades out, but is never dropped
    assert 0 < p["random"] < 0.01
    assert mixture.win_rate("ditch.greedy") == pytest.approx(1 / 42)
    # a window of 50 games: old results leave it
    for _ in range(50):
        mixture.record(["ditch.greedy"], 1.0)
    assert mixture.win_rate("ditch.greedy") == pytest.approx(51 / 52)
    # sampling follows the probabilities, and is the same for the same seed
    rng = np.random.default_rng(0)
    drawn = [mixture.sample(rng)[0] for _ in range(2000)]
    again = [mixture.sample(np.random.default_rng(0))[0] for _ in range(1)]
    assert again[0] == drawn[0]
    p = mixture.probabilities()
    for label in ("random", "ditch.greedy", "self@100", "self@200"):
        assert drawn.count(label) / 2000 == pytest.approx(p[label], abs=0.04)


def test_pfsp_snapshot_draws_follow_new_results_and_new_snapshots():
    """The snapshots' draw weights are kept between draws; a result or a new snapshot must
    change what is drawn next."""
    mixture = OpponentMixture(
        [("self", 1.0)],
        "ditch_rummy",
        2,
        pfsp_exponent=2.0,
        pfsp_window=50,
        snapshot_loader=lambda *a: make_agent_random(),
    )
    mixture.add_snapshot("a.rz", 100)
    mixture.add_snapshot("b.rz", 200)
    rng = np.random.default_rng(1)
    first = [mixture.sample(rng)[0] for _ in range(1000)]
    assert first.count("self@100") / 1000 == pytest.approx(0.5, abs=0.05)
    for _ in range(50):  # the learner always beats the older snapshot: it fades out
        mixture.record(["self@100"], 1.0)
    p = mixture.probabilities()
    assert p["self@100"] < 0.01
    after = [mixture.sample(rng)[0] for _ in range(1000)]
    assert after.count("self@100") / 1000 == pytest.approx(p["self@100"], abs=0.01)
    mixture.add_snapshot("c.rz", 300)
    p = mixture.probabilities()
    newest = [mixture.sample(rng)[0] for _ in range(1000)]
    assert newest.count("self@300") / 1000 == pytest.approx(p["self@300"], abs=0.05)


def _game(points, opponents, opponent_points, rivals, winner, truncated=False):
    return {
        "points": points, "opponents": opponents, "opponent_points": opponent_points,
        "rivals": rivals, "winner": winner, "truncated": truncated,
    }  # fmt: skip


def test_pfsp_head_to_head_scores_each_rival_by_points():
    """``league.score``: ``winner`` gives every opponent at the table the learner's win or loss
    (a tie for the win counts as a win); ``head_to_head`` scores each rival on its own by the
    points of the two sides, and a partner not at all."""
    entries = [("random", 1.0), ("knock.greedy", 1.0), ("knock.smart", 1.0)]
    opponents = ["random", "knock.greedy", "knock.smart"]
    game = _game(10.0, opponents, [5.0, 10.0, 20.0], [True, True, True], winner=False)
    by_winner = OpponentMixture(entries, "knock_rummy", 4, pfsp_exponent=1.0)
    by_points = OpponentMixture(
        entries, "knock_rummy", 4, pfsp_exponent=1.0, pfsp_score="head_to_head"
    )
    for mixture in (by_winner, by_points):
        mixture.record_game(game)
        mixture.record_game({**game, "truncated": True})  # a cut game counts nothing
    assert by_winner.results() == {label: [0.0] for label in opponents}
    assert by_points.results() == {"random": [1.0], "knock.greedy": [0.5], "knock.smart": [0.0]}
    # the hardest rival by points is drawn most, where the winner's count sees no difference
    p = by_points.probabilities()
    assert p["knock.smart"] > p["knock.greedy"] > p["random"]
    assert by_winner.probabilities() == pytest.approx(dict.fromkeys(opponents, 1 / 3))
    # teams: the partner (seat 2 of 4, not a rival) counts nothing; a shared win ties
    teams = OpponentMixture(
        [("random", 1.0), ("ditch.smart", 1.0)], "ditch_rummy", 4, pfsp_exponent=1.0,
        pfsp_score="head_to_head",
    )  # fmt: skip
    teams.record_game(
        _game(30.0, ["ditch.smart", "random", "ditch.smart"], [30.0, 30.0, 30.0],
              [True, False, True], winner=True)
    )  # fmt: skip
    assert teams.results() == {"ditch.smart": [0.5, 0.5]}
    # by the winner too, the partner counts nothing: its side's result is the learner's own
    # (counted, a strong partner looked hard to beat and was drawn as an opponent the more)
    teams_by_winner = OpponentMixture(
        [("random", 1.0), ("ditch.smart", 1.0)], "ditch_rummy", 4, pfsp_exponent=1.0
    )
    teams_by_winner.record_game(
        _game(30.0, ["ditch.smart", "random", "ditch.smart"], [30.0, 30.0, 30.0],
              [True, False, True], winner=False)
    )  # fmt: skip
    assert teams_by_winner.results() == {"ditch.smart": [0.0, 0.0]}
    with pytest.raises(ValueError, match="pfsp_score must be 'winner' or 'head_to_head'"):
        OpponentMixture(entries, "knock_rummy", 4, pfsp_score="points")


def test_pfsp_head_to_head_in_the_batched_env_scores_the_tables_it_plays():
    """Four-player games on the batched env: each finished game scores each opponent as the
    game's info says (its points against the learner's)."""
    mixture = OpponentMixture(
        [("random", 1.0), ("knock.greedy", 1.0)], "knock_rummy", 4, pfsp_exponent=1.0,
        pfsp_score="head_to_head",
    )  # fmt: skip
    env = BatchedSeatEnv(
        "knock_rummy", 4, {"target_score": None}, opponents=mixture, num_envs=8, seed=3
    )
    env.reset()
    expected: dict[str, list[float]] = {}
    rng = np.random.default_rng(0)
    games = 0
    while games < 30:
        masks = env.action_masks()
        actions = np.asarray([rng.choice(np.flatnonzero(m)) for m in masks])
        _obs, _rewards, dones, infos = env.step(actions)
        for i in np.flatnonzero(dones):
            game = infos[i]["game"]
            if not game["truncated"]:
                games += 1
                for label, theirs in zip(game["opponents"], game["opponent_points"], strict=True):
                    mine = game["points"]
                    score = 1.0 if mine > theirs else (0.5 if mine == theirs else 0.0)
                    expected.setdefault(label, []).append(score)
    # the same scores per opponent (the env may record a step's games in another order)
    assert {k: sorted(v) for k, v in mixture.results().items()} == {
        k: sorted(v) for k, v in expected.items()
    }
    assert set(expected) == {"random", "knock.greedy"}
    assert len({score for scores in expected.values() for score in scores}) > 1


def test_pfsp_without_results_keeps_the_weights():
    mixture = OpponentMixture(
        [("random", 3.0), ("ditch.greedy", 1.0)], "ditch_rummy", 2, pfsp_exponent=1.0
    )
    assert mixture.probabilities() == pytest.approx({"random": 0.75, "ditch.greedy": 0.25})
    with pytest.raises(ValueError, match="pfsp_exponent must be positive"):
        OpponentMixture([("random", 1.0)], "ditch_rummy", 2, pfsp_exponent=0.0)


def test_per_game_envs_share_one_league():
    """With ``vec_env: dummy`` (or ``subproc``) every game's env keeps a mixture of its own; the
    run's SeatLeague gathers each game's new results into one league and hands it to every
    game, counting each result once, within the window."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rummyzoo.training.callbacks import SeatLeague
    from rummyzoo.training.seat_env import SeatEnv

    def game_env():
        return SeatEnv(
            "ditch_rummy",
            opponents=OpponentMixture(
                [("random", 1.0), ("ditch.greedy", 1.0)], "ditch_rummy", 2, pfsp_exponent=1.0,
                pfsp_window=5,
            ),
        )  # fmt: skip

    venv = DummyVecEnv([game_env, game_env])
    first, second = (env.opponents for env in venv.envs)
    league = SeatLeague(venv, window=5)
    first.record(["random"], 1.0)
    second.record(["random"], 1.0)
    second.record(["ditch.greedy"], 0.0)
    merged = {"random": [1.0, 1.0], "ditch.greedy": [0.0]}
    assert league.results() == merged
    for mixture in (first, second):  # every game draws from the whole league
        assert mixture.results() == merged
    assert league.results() == merged  # each result once
    probabilities = league.probabilities()
    assert probabilities == pytest.approx(first.probabilities())
    assert probabilities["ditch.greedy"] > probabilities["random"]  # the harder one
    assert league.win_rate("random") == pytest.approx(3 / 4)
    for _ in range(4):
        first.record(["random"], 0.0)
    assert league.results()["random"] == [1.0, 0.0, 0.0, 0.0, 0.0]  # the last 5
    league.set_results({"random": [0.0]})  # a resumed run's league
    assert second.results() == {"random": [0.0]} and league.win_rate("random") == 1 / 3


def test_distinct_tables_seat_every_entry_once_before_any_twice():
    names = ["random", "ditch.greedy", "ditch.smart"]
    table = OpponentMixture([(n, 1.0) for n in names], "ditch_rummy", 4, distinct=True)
    rng = np.random.default_rng(0)
    drawn = [[label for label, _ in table.sample_table(rng, 3)] for _ in range(600)]
    assert all(sorted(t) == sorted(names) for t in drawn)
    for seat in range(3):  # every entry takes every seat about as often
        for name in names:
            assert [t[seat] for t in drawn].count(name) / 600 == pytest.approx(1 / 3, abs=0.07)
    # more seats than entries: every entry once, then the draws start over
    pair = OpponentMixture([("random", 1.0), ("ditch.smart", 1.0)], "ditch_rummy", 4, distinct=True)
    for _ in range(50):
        labels = [label for label, _ in pair.sample_table(rng, 3)]
        assert set(labels[:2]) == {"random", "ditch.smart"}
    # the weights decide the first seat, then the order of the rest
    weighted = OpponentMixture(
        [("random", 3.0), ("ditch.smart", 1.0)], "ditch_rummy", 3, distinct=True
    )
    firsts = [weighted.sample_table(rng, 2)[0][0] for _ in range(2000)]
    assert firsts.count("random") / 2000 == pytest.approx(0.75, abs=0.04)
    # PFSP priorities weigh the draws without replacement too
    league = OpponentMixture(
        [("random", 1.0), ("ditch.smart", 1.0)],
        "ditch_rummy",
        3,
        pfsp_exponent=2.0,
        distinct=True,
    )
    for _ in range(40):
        league.record(["random"], 1.0)
        league.record(["ditch.smart"], 0.0)
    firsts = [league.sample_table(rng, 2)[0][0] for _ in range(500)]
    assert firsts.count("ditch.smart") / 500 > 0.95


def test_distinct_tables_report_each_opponents_share_of_the_seats():
    """``probabilities()`` with distinct tables: the mean share of a game's opponent seats
    each entry takes, exactly what the draws give."""
    two = OpponentMixture([("random", 3.0), ("ditch.smart", 1.0)], "ditch_rummy", 4, distinct=True)
    # two seats take one of each; the third is drawn by the weights again
    assert two.probabilities() == pytest.approx(
        {"random": (1 + 0.75) / 3, "ditch.smart": (1 + 0.25) / 3}
    )
    three = OpponentMixture(
        [("random", 5.0), ("ditch.greedy", 2.0), ("ditch.smart", 1.0)],
        "ditch_rummy",
        3,
        distinct=True,
    )
    rng = np.random.default_rng(4)
    seats = [label for _ in range(6000) for label, _ in three.sample_table(rng, 2)]
    for label, p in three.probabilities().items():
        assert seats.count(label) / len(seats) == pytest.approx(p, abs=0.015)
    # as many seats as entries: one of each, whatever the weights
    table = OpponentMixture(
        [("random", 5.0), ("ditch.greedy", 2.0), ("ditch.smart", 1.0)],
        "ditch_rummy",
        4,
        distinct=True,
    )
    assert list(table.probabilities().values()) == pytest.approx([1 / 3] * 3)


def test_independent_tables_draw_each_seat_on_its_own():
    names = [("random", 1.0), ("ditch.greedy", 1.0), ("ditch.smart", 1.0)]
    mixture = OpponentMixture(names, "ditch_rummy", 4)
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    tables = [[label for label, _ in mixture.sample_table(a, 3)] for _ in range(300)]
    # the same draws as one seat at a time (the streams of earlier runs are unchanged)
    assert tables == [[mixture.sample(b)[0] for _ in range(3)] for _ in range(300)]
    repeated = sum(len(set(t)) < 3 for t in tables) / 300
    assert repeated == pytest.approx(1 - 6 / 27, abs=0.08)


def make_agent_random():
    from rummyzoo.agents.registry import make_agent

    return make_agent("random", "ditch_rummy", 2, {})


def test_league_config_is_validated():
    with pytest.raises(ConfigLoadError, match=r"league\.sampling"):
        validate_config({"league": {"sampling": "elo"}})
    with pytest.raises(ConfigLoadError, match=r"league\.tables"):
        validate_config({"league": {"tables": "unique"}})
    with pytest.raises(ConfigLoadError, match="league tables: distinct runs on backend: sb3"):
        validate_config({"backend": "rllib", "league": {"tables": "distinct"}})
    with pytest.raises(ConfigLoadError, match=r"league\.exponent"):
        validate_config({"league": {"sampling": "pfsp", "exponent": 0}})
    with pytest.raises(ConfigLoadError, match=r"league\.score"):
        validate_config({"league": {"sampling": "pfsp", "score": "points"}})
    with pytest.raises(ConfigLoadError, match="league score: head_to_head is what PFSP counts"):
        validate_config({"league": {"score": "head_to_head"}})
    league = validate_config({"league": {"sampling": "pfsp", "score": "head_to_head"}}).league
    assert league.score == "head_to_head"
    assert validate_config({}).league.score == "winner"


def test_league_probabilities_add_up_and_distinct_tables_wait_for_the_pool():
    """``self`` listed twice reports both shares (the draws count both); with ``distinct``
    tables and no snapshot yet, ``self`` takes no seat, so no entry sits twice at a table."""
    twice = OpponentMixture(
        [("random", 1.0), ("self", 1.0), ("self", 1.0)],
        "knock_rummy",
        2,
        snapshot_loader=lambda *a: make_agent_random(),
    )
    twice.add_snapshot("a.rz", 0)
    p = twice.probabilities()
    assert sum(p.values()) == pytest.approx(1.0) and p["self@0"] == pytest.approx(2 / 3)
    rng = np.random.default_rng(0)
    drawn = [twice.sample(rng)[0] for _ in range(3000)]
    assert drawn.count("self@0") / 3000 == pytest.approx(2 / 3, abs=0.03)
    table = OpponentMixture(
        [("random", 1.0), ("knock.greedy", 1.0), ("self", 2.0)],
        "knock_rummy",
        3,
        distinct=True,
        snapshot_loader=lambda *a: make_agent_random(),
    )
    for _ in range(300):
        labels = [label for label, _ in table.sample_table(rng, 2)]
        assert sorted(labels) == ["knock.greedy", "random"], labels
    assert table.probabilities() == pytest.approx({"random": 0.5, "knock.greedy": 0.5})
    table.add_snapshot("a.rz", 0)
    seen = {label for _ in range(300) for label, _ in table.sample_table(rng, 2)}
    assert "self@0" in seen


def test_league_refuses_priorities_that_round_to_zero_and_weights_that_overflow():
    with pytest.raises(ConfigLoadError, match="rounds to 0; keep exponent x log10"):
        validate_config({"league": {"sampling": "pfsp", "exponent": 200, "window": 200}})
    assert validate_config({"league": {"sampling": "pfsp", "exponent": 100}}).league.exponent == 100
    with pytest.raises(ConfigLoadError, match="weights must add up to a finite number"):
        validate_config({"opponents": [{"name": "random", "weight": 1e308}] * 2})


def test_snapshots_that_left_the_pool_are_let_go():
    """The batched env kept every snapshot that ever sat at a table (a network each); those
    that left the pool and sit nowhere are freed, and the games play on."""
    import gc
    import weakref

    from rummyzoo.agents.registry import make_agent

    loaded = []

    def loader(path, variant, n, options):
        policy = make_agent("random", variant, n, options)
        loaded.append(weakref.ref(policy))
        return policy

    mixture = OpponentMixture(
        [("self", 1.0)], "knock_rummy", 2, snapshot_loader=loader, pool_size=2, sampling="latest"
    )
    env = BatchedSeatEnv(
        "knock_rummy", 2, {"target_score": None}, opponents=mixture, num_envs=4, seed=0
    )
    env.add_snapshot("p0.rz", 0)
    env.reset()
    rng = np.random.default_rng(0)
    for step in range(1, 401):
        env.step(np.array([int(rng.choice(np.flatnonzero(m))) for m in env.action_masks()]))
        if step % 20 == 0:
            env.add_snapshot(f"p{step}.rz", step)
    gc.collect()
    alive = sum(ref() is not None for ref in loaded)
    assert len(loaded) > 10 and alive <= 2 + 4, (len(loaded), alive)
