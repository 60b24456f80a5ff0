"""Helpers for Knock Rummy tests: build deck orders from card strings, play scripted games."""

from __future__ import annotations

from rummyzoo.envs import knock_rummy_v0
from rummyzoo.envs.cards import CARD_NAMES, parse_cards


def deck_for(hands: list[str], up: str, stock: str = "", first_seat: int = 0) -> list[str]:
    """A full 52-card order dealing ``hands[i]`` to seat i, then ``up``, then ``stock`` on top.

    Dealing is one card at a time clockwise from ``first_seat`` (the seat left of the dealer);
    unnamed cards fill the bottom of the stock in id order.
    """
    parsed = [parse_cards(h) for h in hands]
    n = len(parsed)
    size = len(parsed[0])
    assert all(len(h) == size for h in parsed), "every hand needs the same size"
    order: list[int] = []
    for k in range(size):
        for j in range(n):
            seat = (first_seat + j) % n
            order.append(parsed[seat][k])
    order += parse_cards(up) + parse_cards(stock)
    rest = [c for c in range(52) if c not in set(order)]
    assert len(order) + len(rest) == 52, "a card is named twice"
    return [CARD_NAMES[c] for c in order + rest]


def play(env, script: list[str]) -> None:
    """Step the env through readable action names, in turn order."""
    raw = env.unwrapped
    for name in script:
        env.step(raw.action_index(name))


def make(num_players: int, hands: list[str], up: str, stock: str = "", **options):
    """A raw Knock env reset onto the given deal."""
    env = knock_rummy_v0.raw_env(num_players=num_players, **options)
    env.reset(seed=0, options={"deck": deck_for(hands, up, stock)})
    return env
