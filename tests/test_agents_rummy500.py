"""500 Rum heuristics: legal play everywhere, decisions on scripted deals, bad variants."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rummyzoo.agents.base import BasePolicy
from rummyzoo.agents.random_agent import RandomPolicy
from rummyzoo.agents.registry import make_agent
from rummyzoo.agents.rummy500 import GreedyRummy500, Planner, SmartRummy500
from rummyzoo.envs import rummy500_v0
from rummyzoo.envs.cards import CARD_NAMES, parse_cards
from rummyzoo.envs.rummy500.rules import Phase, Rummy500View
from rummyzoo.envs.rummy500.tables import DIG_BASE, DISCARD_BASE, MELD_BASE, MELDS

TIERS = ("rummy500.greedy", "rummy500.smart")


def play_game(num_players: int, names: list[str], seed: int, **options: Any) -> int:
    """Play one episode; every heuristic move must be legal. Returns the moves checked."""
    env = rummy500_v0.raw_env(num_players=num_players, **options)
    env.reset(seed=seed)
    players = {
        agent: (
            RandomPolicy()
            if names[i % len(names)] == "random"
            else make_agent(names[i % len(names)], "rummy500", num_players, options)
        )
        for i, agent in enumerate(env.possible_agents)
    }
    for policy in players.values():
        policy.reset()
    rng = np.random.default_rng(seed)
    checked = 0
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        mask = obs["action_mask"]
        assert mask.any(), f"all-zero mask for live {agent} (seed {seed}, {options})"
        action = players[agent].act(obs["observation"], mask, rng)
        if players[agent].name != "random":
            assert mask[action], (
                f"{players[agent].name} played illegal {env.action_name(action)} "
                f"({num_players} players, seed {seed}, {options})"
            )
            checked += 1
        env.step(action)
    return checked


@pytest.mark.parametrize(
    ("num_players", "seeds"),
    [(2, 40), (3, 16), (4, 12), (5, 8), (6, 5), (7, 4), (8, 6)],
)
@pytest.mark.parametrize(
    "options",
    [
        {"target_score": None},
        {"target_score": None, "top_discard_free": True},
        {"target_score": None, "stock_exhaustion": "end_after_last_stock_turn"},
        {
            "target_score": None,
            "top_discard_free": True,
            "stock_exhaustion": "end_after_last_stock_turn",
        },
    ],
    ids=["one-hand", "top-free", "end-after-stock", "top-free-end-after-stock"],
)
def test_heuristics_play_only_legal_actions(
    num_players: int, seeds: int, options: dict[str, Any]
) -> None:
    line_ups = [list(TIERS), ["rummy500.smart", "random"], ["rummy500.greedy", "random"]]
    checked = 0
    for seed in range(seeds):
        checked += play_game(num_players, line_ups[seed % 3], seed, **options)
    assert checked > 0


@pytest.mark.parametrize("num_players", [2, 4, 5])
def test_heuristics_play_legal_matches(num_players: int) -> None:
    """Whole matches (several hands, the deal rotating) to a short target."""
    for seed in range(2):
        assert play_game(num_players, list(TIERS), seed, target_score=150) > 0


# ------------------------------------------------------------------ scripted deals
def deal(p0: str, p1: str, up: str, stock: str) -> list[str]:
    """A 2-player deck: the hands (dealt alternately, player_0 first), the up card, the stock
    top first; the remaining cards follow in id order."""
    h0, h1 = parse_cards(p0), parse_cards(p1)
    head = [c for pair in zip(h0, h1, strict=True) for c in pair] + parse_cards(up)
    head += parse_cards(stock)
    rest = [c for c in range(52) if c not in head]
    return [CARD_NAMES[c] for c in head + rest]


def scripted_env(deck: list[str], **options: Any) -> rummy500_v0.raw_env:
    env = rummy500_v0.raw_env(num_players=2, target_score=None, **options)
    env.reset(seed=0, options={"deck": deck})
    return env


def act(env: rummy500_v0.raw_env, policy: BasePolicy) -> int:
    obs = env.observe(env.agent_selection)
    action = policy.act(obs["observation"], obs["action_mask"], np.random.default_rng(0))
    assert obs["action_mask"][action], env.action_name(action)
    return action


def step(env: rummy500_v0.raw_env, name: str) -> None:
    env.step(env.action_index(name))


RUN_DEAL = deal(
    "4h 5h 6h 2c 9d Js 7c Kd 3s Qc",
    "Ac 8c 2d 5d As Td 4s 6s 9s 8d",
    "Tc",
    "2h 3d",
)


def test_greedy_melds_a_run_it_holds() -> None:
    env = scripted_env(RUN_DEAL)
    greedy = GreedyRummy500(num_players=2, options={"target_score": None})
    assert env.action_name(act(env, greedy)) == "draw stock"
    env.step(0)
    assert env.action_name(act(env, greedy)) == "meld 4h 5h 6h"


def test_smart_holds_a_young_run_back() -> None:
    """Early in the hand, with 3h and 7h unseen, the run stays in hand (no lay-off target)."""
    env = scripted_env(RUN_DEAL)
    smart = SmartRummy500(num_players=2, options={"target_score": None})
    env.step(act(env, smart))
    action = act(env, smart)
    assert action >= DISCARD_BASE
    assert env.action_name(action) not in ("discard 4h", "discard 5h", "discard 6h")


def _early_view(
    hand: int,
    pile: list[int],
    table: int,
    known: int,
    unseen: int,
    stock: int,
    opponent_cards: int,
    turn: int,
) -> Rummy500View:
    """Seat 0's view in its play phase, 2 players, the opponent's melds ``table``."""
    return Rummy500View(
        hand=hand,
        doubles=0,
        discards=tuple(pile),
        top_discard=pile[-1],
        laid=(0, table),
        run_cards=0,
        fits=(0, 0, 0),
        opponent_known=(known,),
        unseen=unseen,
        pending=-1,
        stock=stock,
        hand_sizes=(10, opponent_cards),
        table_points=(0, 0),
        phase=Phase.PLAY,
        to_act=0,
        dealer=1,
        turn=turn,
        scores=(0, 0),
    )


@pytest.mark.parametrize(
    ("stock", "opponent_cards", "holds"), [(30, 10, True), (3, 10, False), (30, 2, False)]
)
def test_smart_melds_when_the_hand_may_end(stock: int, opponent_cards: int, holds: bool) -> None:
    """The run it holds back early is put down once the stock is short or a rival nearly out."""
    smart = SmartRummy500(num_players=2, options={"target_score": None})
    cards = parse_cards("4h 5h 6h 2c 9d Js 7c Kd 3s Qc")
    hand = sum(1 << c for c in cards)
    pile = parse_cards("Tc")
    unseen = (1 << 52) - 1 & ~hand & ~(1 << pile[0])
    seen = _early_view(hand, pile, 0, 0, unseen, stock, opponent_cards, turn=0)
    _, plays = smart.planner.solve(seen.hand, 0, seen.fits)
    assert [p.cards for p in plays] == [tuple(parse_cards("4h 5h 6h"))]
    assert (smart.keep_back(plays, seen) == ()) == holds


@pytest.mark.parametrize(
    ("where", "holds"),
    [("unseen", True), ("opponent", True), ("pile", True), ("table", False)],
)
def test_smart_holds_a_run_back_while_a_card_that_extends_it_is_in_play(
    where: str, holds: bool
) -> None:
    """4h-5h-6h early in the hand: 7h sits in a set of sevens on the table (out of play) and 3h
    is ``where``. Held back while 3h could still be laid off on it: unseen, in the pile, or in
    the opponent's hand (known from a dig: that case was played at once, a lay-off handed to
    the one player known to hold it); put down once 3h is out of play too."""
    smart = SmartRummy500(num_players=2, options={"target_score": None})
    hand = sum(1 << c for c in parse_cards("4h 5h 6h 2c 9d Js 7c Kd 3s Qc"))
    three, table = parse_cards("3h")[0], sum(1 << c for c in parse_cards("7h 7d 7s"))
    if where == "table":
        table |= (1 << three) | sum(1 << c for c in parse_cards("3d 3c"))
    pile = parse_cards("Tc 3h" if where == "pile" else "Tc")
    known = 1 << three if where == "opponent" else 0
    out = hand | table | known | sum(1 << c for c in pile)
    if where == "unseen":
        out &= ~(1 << three)
    seen = _early_view(hand, pile, table, known, (1 << 52) - 1 & ~out, 30, 10, turn=4)
    _, plays = smart.planner.solve(seen.hand, 0, seen.fits)
    assert [p.cards for p in plays] == [tuple(parse_cards("4h 5h 6h"))]
    assert (smart.keep_back(plays, seen) == ()) == holds


@pytest.mark.parametrize("cls", [GreedyRummy500, SmartRummy500])
def test_lays_off_and_goes_out(cls: type[BasePolicy]) -> None:
    """With every card playable, it plays them all (ending the hand without a discard)."""
    deck = deal(
        "4h 5h 6h 7h 9c 9d 9s Kc Kd Ks",
        "Ac 8c 2d 5d As Td 4s 6s 2s 8d",
        "3c",
        "Qd",
    )
    env = scripted_env(deck)
    policy = cls(num_players=2, options={"target_score": None})
    env.step(act(env, policy))  # draw stock: Qd is no help
    for _ in range(20):
        if env.terminations["player_0"]:
            break
        action = act(env, policy)
        if action >= DISCARD_BASE:
            assert env.action_name(action) == "discard Qd"
        env.step(action)
    assert env.infos["player_0"]["went_out"] == "player_0"
    assert env.infos["player_0"]["melded_points"] == 4 + 5 + 6 + 7 + 27 + 30


def test_smart_prefers_the_dig_that_enables_a_big_meld() -> None:
    deck = deal(
        "Kc 2c 3c 9h 5d 7s 8h Js Qh 6d",
        "4c 9d Td Ah 3s 5s Jc Jd 2h 6h",
        "Ks",
        "Kd 7c 8c",
    )
    env = scripted_env(deck)
    step(env, "draw stock")  # player_0 draws Kd
    step(env, "discard 6d")
    step(env, "draw stock")  # player_1 draws 7c
    step(env, "discard 4c")
    # Pile (bottom to top): Ks 6d 4c. Taking 4c melds 2c-3c-4c (18 points and penalty saved);
    # digging to Ks takes all three and melds Kc-Kd-Ks as well.
    obs = env.observe("player_0")
    assert obs["action_mask"][DIG_BASE + parse_cards("4c")[0]]
    assert obs["action_mask"][DIG_BASE + parse_cards("Ks")[0]]
    smart = SmartRummy500(num_players=2, options={"target_score": None})
    assert env.action_name(act(env, smart)) == "dig Ks"


def test_smart_never_takes_a_free_top_card_to_throw_it_back() -> None:
    """With ``top_discard_free``, Ad completes Ad-2d-3d, a young run smart would hold back; then
    Ad, in a complete meld, is its cheapest discard. It took Ad and threw it back, and two such
    players did so turn after turn until the turn cap ended the match."""
    deck = deal("2d 3d 9h 5c 7s 8h Js Qh 6c Kc", "4c 9d Td Ah 3s 5s Jc Jd 2h 6h", "Ad", "4s 7c")
    env = scripted_env(deck, top_discard_free=True)
    smart = SmartRummy500(num_players=2, options={"target_score": None, "top_discard_free": True})
    played = []
    while env.agent_selection == "player_0":
        action = act(env, smart)
        played.append(env.action_name(action))
        env.step(action)
    assert played == ["draw stock", "discard Kc"]


def test_smart_keeps_the_meld_it_holds_back() -> None:
    """Ah-2h-3h is a young meld smart holds back; the ace, worth 15 if the hand ended, was its
    dearest discard by value, and throwing it broke the meld (``meld_weight=0``, the old
    judgement). It throws Kc, a loose card, instead."""
    deck = deal("Ah Qc 8h 2h 7h Kc 7c 4s 3h 5s", "9s Ks Js Ac Jh Jd 5h 5c 6c 9c", "4d", "Qs")
    options = {"target_score": None}
    for smart, discard in (
        (SmartRummy500(num_players=2, options=options), "discard Kc"),
        (SmartRummy500(num_players=2, options=options, meld_weight=0), "discard Ah"),
    ):
        env = scripted_env(deck)
        played = []
        while env.agent_selection == "player_0":
            action = act(env, smart)
            played.append(env.action_name(action))
            env.step(action)
        assert played == ["draw stock", discard]


@pytest.mark.parametrize("cls", [GreedyRummy500, SmartRummy500])
def test_uses_the_dug_card_first(cls: type[BasePolicy]) -> None:
    deck = deal(
        "Kc Kd 2c 3c 9h 5d 7s 8h Js Qh",
        "4c 9d Td Ah 3s 5s Jc Jd 2h 6h",
        "Ks",
        "6d",
    )
    env = scripted_env(deck)
    policy = cls(num_players=2, options={"target_score": None})
    action = act(env, policy)
    assert env.action_name(action) == "dig Ks"
    env.step(action)
    obs = env.observe("player_0")
    assert obs["action_mask"][DISCARD_BASE:].sum() == 0  # the must-use phase
    action = act(env, policy)
    assert MELD_BASE <= action < DISCARD_BASE
    assert "Ks" in env.action_name(action)


def test_greedy_throws_its_highest_loose_card() -> None:
    deck = deal(
        "4h 5h 2c 3c 9s 5d 7s Kh Qs Jd",
        "Ac 8c 2d 9d As Td 4s 6s 2s 8d",
        "6c",
        "Th",
    )
    env = scripted_env(deck)
    greedy = GreedyRummy500(num_players=2, options={"target_score": None})
    env.step(act(env, greedy))  # draw stock (Th)
    # Loose cards (no card of their rank, none of their suit within two ranks): Kh, Qs, Jd,
    # Th, all worth 10; ties go to the highest rank.
    assert env.action_name(act(env, greedy)) == "discard Kh"


# ----------------------------------------------------------------------- planner
def test_planner_scores_runs_sets_and_low_aces() -> None:
    planner = Planner()
    hand = sum(1 << c for c in parse_cards("Ah 2h 3h 4h 7c 7d 7s Kc"))
    gain, plays = planner.solve(hand, 0, (0, 0, 0))
    # A-2-3-4 of hearts: 1+2+3+4 points, 15+2+3+4 saved; 7-7-7: 21 + 21; Kc stays.
    assert gain == (1 + 2 + 3 + 4) + (15 + 2 + 3 + 4) + 42
    assert sorted(len(p.cards) for p in plays) == [3, 4]


def test_planner_uses_table_lay_offs() -> None:
    planner = Planner()
    hand = sum(1 << c for c in parse_cards("8h 9h 2c"))
    fits_high = 1 << parse_cards("8h")[0]  # a run ending at 7h is on the table
    gain, plays = planner.solve(hand, 0, (0, 0, fits_high))
    assert gain == 2 * (8 + 9)
    assert [p.cards for p in plays] == [tuple(parse_cards("8h 9h"))]


def test_first_action_of_a_long_run_contains_the_pending_card() -> None:
    planner = Planner()
    hand = sum(1 << c for c in parse_cards("3s 4s 5s 6s 7s"))
    pending = parse_cards("7s")[0]
    _, plays = planner.solve_leading(hand, 0, (0, 0, 0), pending)
    meld = plays[0].first_action(pending) - MELD_BASE
    assert pending in MELDS[meld].cards


# --------------------------------------------------------------------- variants
@pytest.mark.parametrize("cls", [GreedyRummy500, SmartRummy500])
def test_rejects_another_variant(cls: type[BasePolicy]) -> None:
    with pytest.raises(ValueError, match="rummy500"):
        cls(variant="knock_rummy", num_players=2)


def test_registry_builds_both_tiers_and_strips_env_options() -> None:
    for name in TIERS:
        agent = make_agent(name, "rummy500", 3, {"render_mode": "ansi", "target_score": None})
        assert agent.name == name
        with pytest.raises(ValueError, match="rummy500"):
            make_agent(name, "knock_rummy", 2)
