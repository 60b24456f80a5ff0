"""Helpers for Knock Rummy tests: scripted deals (the package's ``deck_for``), scripted play."""

from __future__ import annotations

from rummyzoo.envs import decks, knock_rummy_v0


def deck_for(hands: list[str], up: str, stock: str = "", first_seat: int = 0) -> list[str]:
    """:func:`rummyzoo.envs.decks.deck_for` with the seat left of the dealer, ``first_seat``,
    dealt the first card (the dealer is the seat before it)."""
    return decks.deck_for(hands, up, stock, dealer=(first_seat - 1) % len(hands))


def play(env, script: list[str]) -> None:
    """Step the env through readable action names, in turn order."""
    raw = env.unwrapped
    for name in script:
        env.step(raw.action_index(name))


def make(num_players: int, hands: list[str], up: str, stock: str = "", **options):
    """A raw Knock env reset onto the given deal."""
    env = knock_rummy_v0.raw_env(num_players=num_players, **options)
    env.reset(seed=0, options={"deck": decks.deck_for(hands, up, stock)})
    return env
