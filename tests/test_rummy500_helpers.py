"""Helpers for the 500 Rum tests (deck orders from card strings, scripted play), and their checks."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rummyzoo.envs import rummy500_v0
from rummyzoo.envs.cards import CARD_NAMES, parse_card, parse_cards


def deck_for(hands: list[str], up: str, stock: str = "", first_seat: int = 0) -> list[str]:
    """A full deck order dealing ``hands[i]`` to seat i, then ``up``, then ``stock`` on top.

    Dealing is one card at a time clockwise from ``first_seat`` (the seat left of the dealer).
    5+ hands use two decks (each card twice). Unnamed cards fill the bottom of the stock in id
    order.
    """
    parsed = [parse_cards(h) for h in hands]
    n = len(parsed)
    decks = 1 if n <= 4 else 2
    size = len(parsed[0])
    assert all(len(h) == size for h in parsed), "every hand needs the same size"
    order: list[int] = []
    for k in range(size):
        for j in range(n):
            order.append(parsed[(first_seat + j) % n][k])
    order += parse_cards(up) + parse_cards(stock)
    used = Counter(order)
    assert all(v <= decks for v in used.values()), "a card is named too often"
    rest = [c for c in range(52) for _ in range(decks - used[c])]
    return [CARD_NAMES[c] for c in order + rest]


def make(hands: list[str], up: str, stock: str = "", **options):
    """A raw 500 Rum env (single hand unless ``target_score`` is given) reset onto the deal."""
    options.setdefault("target_score", None)
    hand_size = len(hands[0].split())
    env = rummy500_v0.raw_env(num_players=len(hands), hand_size=hand_size, **options)
    env.reset(seed=0, options={"deck": deck_for(hands, up, stock)})
    return env


def play(env, script: list[str]) -> None:
    """Step the env through readable action names, in turn order."""
    for name in script:
        env.step(env.unwrapped.action_index(name))


def legal_names(env) -> set[str]:
    """Readable names of the legal actions of the agent to act."""
    return {env.unwrapped.action_name(a) for a in env.unwrapped.legal_actions()}


def points(env) -> list[float]:
    """Raw hand points of every agent from ``infos``."""
    return [env.infos[a]["points"] for a in env.possible_agents]


def plane(env, agent: str, name: str, k: int = 0) -> dict[str, int]:
    """Card -> value of the k-th 52-card block of an observation entry (non-zero cards only)."""
    obs = env.observe(agent)["observation"]
    start, _ = env.unwrapped.game.observation_layout[name]
    block = obs[start + 52 * k : start + 52 * (k + 1)]
    return {CARD_NAMES[c]: float(block[c]) for c in np.flatnonzero(block)}


# ------------------------------------------------------------- self checks
def test_deck_for_deals_one_card_at_a_time_clockwise():
    deck = deck_for(["Ah 2h 3h", "4c 5c 6c"], up="Kd", stock="9s 8s")
    assert deck[:9] == ["Ah", "4c", "2h", "5c", "3h", "6c", "Kd", "9s", "8s"]
    assert sorted(deck) == sorted(CARD_NAMES)
    env = make(["Ah 2h 3h", "4c 5c 6c"], up="Kd", stock="9s 8s")
    state = env.unwrapped.state
    assert state.hand_cards(0) == parse_cards("Ah 2h 3h")
    assert state.hand_cards(1) == parse_cards("4c 5c 6c")
    assert state.pile == [parse_card("Kd")]
    assert state.stock_cards()[:2] == parse_cards("9s 8s")


def test_deck_for_two_decks_holds_every_card_twice():
    hands = ["7c 7c 7d", "2s 3s 4s", "Ah Kh Qh", "5d 6d 7d", "9c Tc Jc"]
    deck = deck_for(hands, up="Kd")
    assert len(deck) == 104 and Counter(deck) == Counter(CARD_NAMES * 2)
    env = make(hands, up="Kd")
    assert env.unwrapped.state.hand_cards(0) == parse_cards("7c 7c 7d")
    assert env.unwrapped.game.num_decks == 2
    with pytest.raises(AssertionError, match="too often"):
        deck_for(hands, up="7c")  # a third 7c
