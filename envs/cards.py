"""Cards: ids, text form and numpy hand vectors shared by every variant.

A card id is ``suit * 13 + rank`` with rank 0 = Ace ... 12 = King and suits in the order
clubs, diamonds, hearts, spades (ids 0-51). The text form is rank + suit letter (``"As"``,
``"Td"``, ``"Kh"``, ``"2c"``); parsing accepts upper or lower case and ``10`` for ten.

One-deck hands are ``bool`` vectors of length 52; two-deck hands (500 Rum with 5-8 players)
are ``int8`` count vectors of length 52 (each entry 0, 1 or 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet

import numpy as np

NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = 52

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "cdhs"
SUIT_SYMBOLS = "♣♦♥♠"

#: Card value in Knock Rummy (and the usual rummy count): A=1, 2-10 pip value, J/Q/K=10.
PIP_VALUES = np.array([min(r + 1, 10) for r in range(NUM_RANKS)] * NUM_SUITS, dtype=np.int64)

CARD_NAMES: tuple[str, ...] = tuple(r + s for s in SUIT_CHARS for r in RANK_CHARS)
_NAME_TO_ID: dict[str, int] = {name.lower(): cid for cid, name in enumerate(CARD_NAMES)}
_NAME_TO_ID.update({"10" + name[1]: cid for cid, name in enumerate(CARD_NAMES) if name[0] == "T"})


def card_id(rank: int, suit: int) -> int:
    """The id of the card of ``rank`` (0 = Ace ... 12 = King) and ``suit`` (0 = clubs ... 3 = spades)."""
    if not (0 <= rank < NUM_RANKS and 0 <= suit < NUM_SUITS):
        raise ValueError(f"rank must be 0-12 and suit 0-3, got rank={rank}, suit={suit}")
    return suit * NUM_RANKS + rank


def rank_of(card: int) -> int:
    """Rank index of a card id (0 = Ace ... 12 = King)."""
    return card % NUM_RANKS


def suit_of(card: int) -> int:
    """Suit index of a card id (0 = clubs, 1 = diamonds, 2 = hearts, 3 = spades)."""
    return card // NUM_RANKS


def parse_card(text: str) -> int:
    """Parse one card (``"As"``, ``"td"``, ``"10h"``) into its id.

    :raises ValueError: naming the text when it is not a card.
    """
    key = text.strip().lower()
    try:
        return _NAME_TO_ID[key]
    except KeyError:
        raise ValueError(
            f"not a card: {text!r} (expected rank A,2-9,T/10,J,Q,K followed by suit c,d,h,s)"
        ) from None


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Parse ``"As 2s 3s"`` (or a list of card strings) into a list of card ids, in order."""
    if isinstance(text, str):
        parts = text.replace(",", " ").split()
    elif isinstance(text, (set, frozenset, dict)):  # (no order to keep)
        raise ValueError(
            f"cards must be a string or a list of card strings, in order; got a "
            f"{type(text).__name__}, which has no order"
        )
    elif isinstance(text, Iterable):
        parts = list(text)
    else:
        raise ValueError(f"cards must be a string or a list of card strings, got {text!r}")
    for part in parts:
        if not isinstance(part, str):
            if isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_)):
                raise ValueError(
                    f"cards must be card strings, got {int(part)} (these are card ids already)"
                )
            raise ValueError(f"cards must be card strings, got {part!r}")
    return [parse_card(p) for p in parts]


def format_card(card: int, symbols: bool = False) -> str:
    """Text form of one card id; with ``symbols`` the suit is drawn as ♣♦♥♠."""
    if isinstance(card, (bool, np.bool_)) or not isinstance(card, (int, np.integer)):
        hint = " (parse_card reads card strings)" if isinstance(card, str) else ""
        raise ValueError(f"card id must be an int 0-51, got {card!r}{hint}")
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id must be 0-51, got {card}")
    name = CARD_NAMES[int(card)]
    return name[0] + SUIT_SYMBOLS[int(card) // NUM_RANKS] if symbols else name


def format_cards(cards: Iterable[int], symbols: bool = False) -> str:
    """Space-separated text form of card ids, in the order given."""
    return " ".join(format_card(c, symbols) for c in cards)


def hand_vector(cards: Iterable[int]) -> np.ndarray:
    """A one-deck hand as a ``bool`` vector of length 52.

    :raises ValueError: when a card appears twice.
    """
    vec = np.zeros(NUM_CARDS, dtype=bool)
    for c in cards:
        if vec[c]:
            raise ValueError(f"card {format_card(c)} appears twice in a one-deck hand")
        vec[c] = True
    return vec


def count_vector(cards: Iterable[int], max_copies: int = 2) -> np.ndarray:
    """A two-deck hand as an ``int8`` count vector of length 52.

    :raises ValueError: when a card appears more than ``max_copies`` times.
    """
    vec = np.zeros(NUM_CARDS, dtype=np.int8)
    for c in cards:
        vec[c] += 1
        if vec[c] > max_copies:
            raise ValueError(f"card {format_card(c)} appears more than {max_copies} times")
    return vec


def cards_of(vector: np.ndarray) -> list[int]:
    """Card ids held in a bool or count vector (a card held twice is listed twice)."""
    vec = np.asarray(vector)
    if vec.dtype == bool:
        return np.flatnonzero(vec).tolist()
    return np.repeat(np.arange(NUM_CARDS), vec.astype(np.int64)).tolist()


def to_mask(cards: Iterable[int]) -> int:
    """A one-deck set of cards as a 52-bit Python int (bit ``c`` set for card ``c``)."""
    mask = 0
    for c in cards:
        mask |= 1 << int(c)
    return mask


_SUIT_CARDS: dict[int, tuple[int, ...]] = {}


def _suit_cards(key: int) -> tuple[int, ...]:
    suit, pattern = key >> NUM_RANKS, key & 0x1FFF
    cards = tuple(suit * NUM_RANKS + r for r in range(NUM_RANKS) if pattern >> r & 1)
    _SUIT_CARDS[key] = cards
    return cards


def mask_cards(mask: int) -> list[int]:
    """Card ids of a 52-bit mask, in id order."""
    out: list[int] = []
    for suit in range(NUM_SUITS):
        pattern = (mask >> (NUM_RANKS * suit)) & 0x1FFF
        if pattern:
            key = suit << NUM_RANKS | pattern
            out.extend(_SUIT_CARDS.get(key) or _suit_cards(key))
    return out


def vector_to_mask(vector: np.ndarray) -> int:
    """A bool hand vector (length 52) as a 52-bit int."""
    return int.from_bytes(
        np.packbits(np.asarray(vector, dtype=bool), bitorder="little").tobytes(), "little"
    )


def _deck_entry(card: object, index: int) -> int:
    """One deck entry: a card string or an int / numpy integer id 0..51 (not a bool)."""
    if isinstance(card, str):
        return parse_card(card)
    if isinstance(card, (int, np.integer)) and not isinstance(card, (bool, np.bool_)):
        if 0 <= card < NUM_CARDS:
            return int(card)
        raise ValueError(f"deck entry {index} is {int(card)}, not a card id 0..{NUM_CARDS - 1}")
    raise ValueError(
        f"deck entry {index} is {card!r} ({type(card).__name__}): give card strings such as "
        f"'As' or int ids 0..{NUM_CARDS - 1}"
    )


def check_ordered(cards: object, what: str) -> None:
    """Refuse a set (or a mapping) where the order of ``cards`` matters: it has none of its own
    (a set of card strings iterates in an order that changes from run to run)."""
    if isinstance(cards, AbstractSet):
        raise ValueError(f"{what} lists cards in order, not a set ({type(cards).__name__})")
    if isinstance(cards, Mapping):
        raise ValueError(f"{what} lists cards in order, not a mapping ({type(cards).__name__})")


def parse_deck(deck: Iterable[str | int] | str, num_decks: int = 1) -> np.ndarray:
    """Validate a full deck order (card strings or ids, or one string of cards) and return it
    as an id array.

    :raises ValueError: naming a bad entry (a float, a bool, None, an id out of range, a string
        that is no card), or when the deck is not exactly ``num_decks`` copies of every card.
    """
    check_ordered(deck, "a deck (top first)")
    if isinstance(deck, str):
        deck = deck.replace(",", " ").split()
    elif not isinstance(deck, Iterable):
        raise ValueError(f"a deck is a list of cards, got {deck!r} ({type(deck).__name__})")
    ids = [_deck_entry(c, i) for i, c in enumerate(deck)]
    expected = NUM_CARDS * num_decks
    counts = np.bincount(np.asarray(ids, dtype=np.int64), minlength=NUM_CARDS) if ids else None
    if (
        len(ids) != expected
        or counts is None
        or len(counts) != NUM_CARDS
        or not (counts == num_decks).all()
    ):
        wrong = ""
        if counts is not None and len(counts) == NUM_CARDS:
            for label, which in (
                ("too many", counts > num_decks),
                ("too few", counts < num_decks),
            ):
                cards = [f"{CARD_NAMES[c]} x{counts[c]}" for c in np.flatnonzero(which)]
                if cards:
                    more = f" and {len(cards) - 8} more" if len(cards) > 8 else ""
                    wrong += f"; {label}: {', '.join(cards[:8])}{more}"
        raise ValueError(
            f"deck must hold each of the 52 cards exactly {num_decks} time(s) ({expected} cards); "
            f"got {len(ids)} cards{wrong}"
        )
    return np.asarray(ids, dtype=np.int64)


def plane_masks(values: np.ndarray) -> list[int]:
    """Each 52-card plane of ``values`` (a multiple of 52 long) as the mask of its non-zero
    cards."""
    rows = values.reshape(-1, NUM_CARDS)
    packed = np.zeros((len(rows), 8), dtype=np.uint8)
    packed[:, :7] = np.packbits(rows != 0, axis=1, bitorder="little")
    return packed.view("<u8").ravel().tolist()


def card_count(n: int) -> str:
    """``"1 card"``, ``"5 cards"``: a number of cards as a table shows it."""
    return f"{n} card" if n == 1 else f"{n} cards"
