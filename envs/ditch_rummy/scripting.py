"""Scripted Ditch Rummy hands: deck orders from card strings and play by action names.

.. code-block:: python

    from rummyzoo.envs import ditch_rummy_v0
    from rummyzoo.envs.ditch_rummy.scripting import deck_with_top, play

    env = ditch_rummy_v0.raw_env(num_players=2)
    env.reset(options={"deck": deck_with_top("9c 9h Kd 9d")})
    play(env, ["draw 3", "meld 0 1", "end turn"])  # player_0 melds the set 9c 9h
"""

from __future__ import annotations

from collections.abc import Iterable

from rummyzoo.envs.cards import CARD_NAMES, NUM_CARDS, parse_cards


def deck_with_top(top: str | Iterable[str]) -> list[str]:
    """A full 52-card order whose draw pile starts with ``top`` (first card on top).

    The cards not named follow in card-id order (clubs A-K, diamonds, hearts, spades).

    :raises ValueError: when a card is named twice.
    """
    first = parse_cards(top)
    if len(set(first)) != len(first):
        raise ValueError(f"a card is named twice in {top!r}")
    named = set(first)
    rest = [c for c in range(NUM_CARDS) if c not in named]
    return [CARD_NAMES[c] for c in first + rest]


def play(env, names: Iterable[str]) -> None:
    """Step ``env`` (raw or wrapped) through readable action names, in turn order."""
    raw = env.unwrapped
    for name in names:
        env.step(raw.action_index(name))
