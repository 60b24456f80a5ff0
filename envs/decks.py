"""Scripted decks: the full deck order that deals given hands, upcard and top of the stock.

``env.reset(options={"deck": order})`` deals the first hand from ``order`` (top of the stock
first). :func:`deck_for` writes that order from card strings, for every variant:

- Knock Rummy and 500 Rum deal one card at a time, clockwise from the dealer's left, turn up the
  next card as the first discard and leave the rest as the stock (``Game.new_hand``).
- Ditch Rummy deals nothing and turns up nothing: the whole deck is the draw pile, so give it only
  ``stock`` (the top of the draw pile).

.. code-block:: python

    from rummyzoo.envs import knock_rummy_v0
    from rummyzoo.envs.decks import deck_for

    env = knock_rummy_v0.raw_env(num_players=2, hand_size=3)
    env.reset(options={"deck": deck_for(["As 2s 3s", "Kh Kd Kc"], "7c", "9d")})
    # player_0 holds As 2s 3s, player_1 Kh Kd Kc, the 7c is turned up and the 9d drawn next
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rummyzoo.envs.cards import CARD_NAMES, NUM_CARDS, check_ordered, format_cards, parse_cards

__all__ = ["deal_order", "deck_for"]


def deal_order(num_players: int, hand_size: int, dealer: int | None = None) -> list[int]:
    """The seat each of the first ``num_players * hand_size`` cards of the deck goes to: one card
    at a time, clockwise from the dealer's left (``dealer`` None: the last seat, the match's
    default first dealer, so seat 0 gets the first card)."""
    if num_players < 1:
        raise ValueError(f"need at least one seat, got num_players={num_players}")
    if dealer is None:
        dealer = num_players - 1
    if not 0 <= dealer < num_players:
        raise ValueError(f"dealer must be a seat 0-{num_players - 1}, got {dealer}")
    return [(dealer + 1 + k) % num_players for k in range(num_players * hand_size)]


def deck_for(
    hands: Sequence[str | Iterable[str]] = (),
    upcard: str | None = None,
    stock: str | Iterable[str] = "",
    decks: int = 1,
    dealer: int | None = None,
) -> list[str]:
    """The full deck order (top of the stock first) that deals ``hands[i]`` to seat ``i``, turns
    up ``upcard`` and puts ``stock`` (first card on top) on top of the stock.

    The cards not named follow in card-id order (clubs A-K, diamonds, hearts, spades), each
    ``decks`` times; a hand lists its cards in any order.

    :param hands: one hand per seat (card strings such as ``"As 2s 3s"``, or lists of them), all
        of the same size; empty for Ditch Rummy, which deals nothing.
    :param upcard: the card turned up after the deal (Knock Rummy, 500 Rum); None without hands.
    :param stock: the top of the stock (Ditch Rummy: of the draw pile).
    :param decks: copies of each card in the deck (500 Rum with 5-8 players plays with 2).
    :param dealer: the seat that deals (None: the last seat, as in a match's first hand).
    :raises ValueError: hands of different sizes, an upcard missing or without a deal, a card
        named more often than the deck holds it, a bad dealer.
    """
    if isinstance(hands, str):
        raise ValueError(
            f"hands must list one hand per seat, got the string {hands!r}: "
            f"write hands=[{hands!r}, ...]"
        )
    check_ordered(hands, "hands (one per seat, in seat order)")
    check_ordered(stock, "stock (its top card first)")
    parsed = [parse_cards(h) for h in hands]
    order: list[int] = []
    if parsed:
        size = len(parsed[0])
        if any(len(h) != size for h in parsed):
            raise ValueError(f"every hand needs the same size, got {[len(h) for h in parsed]}")
        if upcard is None:
            raise ValueError("a deal turns up a card after the hands: give the upcard")
        cards = [iter(h) for h in parsed]
        order = [next(cards[seat]) for seat in deal_order(len(parsed), size, dealer)]
        order += parse_cards(upcard)
        if len(order) != len(parsed) * size + 1:
            raise ValueError(f"upcard must be one card, got {upcard!r}")
    elif upcard is not None:
        raise ValueError(
            f"upcard {upcard!r} without hands: a variant that deals nothing (Ditch Rummy) "
            "turns up nothing; put the cards in stock"
        )
    order += parse_cards(stock)
    used = Counter(order)
    extra = [c for c, k in sorted(used.items()) if k > decks]
    if extra:
        raise ValueError(
            f"{format_cards(extra)} named more often than {decks} deck(s) hold (each card "
            f"{decks} time(s))"
        )
    rest = [c for c in range(NUM_CARDS) for _ in range(decks - used[c])]
    return [CARD_NAMES[c] for c in order + rest]
