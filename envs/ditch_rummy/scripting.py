"""Scripted Ditch Rummy hands: deck orders from card strings and play by action names.

Ditch Rummy deals nothing, so a scripted deck is the top of its draw pile
(:func:`rummyzoo.envs.decks.deck_for` ``(stock=...)``, or :func:`deck_with_top`).

.. code-block:: python

    from rummyzoo.envs import ditch_rummy_v0
    from rummyzoo.envs.ditch_rummy.scripting import deck_with_top, play

    env = ditch_rummy_v0.raw_env(num_players=2)
    env.reset(options={"deck": deck_with_top("9c 9h Kd 9d")})
    play(env, ["draw 3", "meld 0 1", "end turn"])  # player_0 melds the set 9c 9h
"""

from __future__ import annotations

from collections.abc import Iterable

from rummyzoo.envs.decks import deck_for


def deck_with_top(top: str | Iterable[str]) -> list[str]:
    """A full 52-card order whose draw pile starts with ``top`` (first card on top):
    :func:`rummyzoo.envs.decks.deck_for` of a deck that deals nothing (``deck_for(stock=top)``).

    The cards not named follow in card-id order (clubs A-K, diamonds, hearts, spades).

    :raises ValueError: when a card is named twice.
    """
    return deck_for(stock=top)


def play(env, names: Iterable[str]) -> None:
    """Step ``env`` (raw or wrapped) through readable action names, in turn order."""
    raw = env.unwrapped
    for name in names:
        env.step(raw.action_index(name))
