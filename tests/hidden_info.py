"""The hidden-information property: swapping cards a viewer cannot see must leave that viewer's
observation (and, on its turn, its mask) unchanged. Here are the check and, per variant, the
moves of hidden cards (``SWAP_HIDDEN``) and of a viewer's own card (``SWAP_OWN``, the control:
that one must show)."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from rummyzoo.envs.cards import NUM_CARDS
from rummyzoo.envs.rummy500.rules import _HANDS


def hidden_swap_check(
    players: int, rng: np.random.Generator, swap_hidden: Callable
) -> tuple[Callable, list[int]]:
    """A per-decision ``check(env, obs)`` and a one-item counter of the swaps it made.

    ``swap_hidden(state, viewer, rng) -> bool`` moves hidden cards of the variant's state. The
    viewer is the seat to act half of the time (so its mask is compared too), else any seat.
    """
    swaps = [0]

    def check(env, obs) -> None:
        if rng.random() < 0.5:
            viewer = env.hand_state.current
        else:
            viewer = int(rng.integers(players))
        before = env.observe(f"player_{viewer}")
        if swap_hidden(env.hand_state, viewer, rng):
            swaps[0] += 1
            env.match.mask = None  # the acting hand may have changed
            after = env.observe(f"player_{viewer}")
            assert np.array_equal(before["observation"], after["observation"])
            if viewer == env.hand_state.current:
                assert np.array_equal(before["action_mask"], after["action_mask"])
        assert (env.game.card_locations(env.hand_state) == env.game.num_decks).all()

    return check, swaps


# ------------------------------------------------------------------ Knock Rummy
def _knock_hidden(state, seat) -> list[int]:
    return np.flatnonzero((state.hands[seat] > 0) & (state.known[seat] == 0)).tolist()


def _knock_move(state, seat, out, into) -> None:
    state.hands[seat, out] = 0.0
    state.hands[seat, into] = 1.0
    state.bits[seat] ^= (1 << out) | (1 << into)


def swap_hidden_knock(state, viewer, rng) -> bool:
    """Swap one card another player holds unseen with a stock card or another hidden card."""
    n = state.hands.shape[0]
    others = [s for s in range(n) if s != viewer]
    owner = others[rng.integers(len(others))]
    hidden = _knock_hidden(state, owner)
    if not hidden:
        return False
    card = hidden[rng.integers(len(hidden))]
    other_hidden = [(s, c) for s in others if s != owner for c in _knock_hidden(state, s)]
    if state.stock_size and (not other_hidden or rng.random() < 0.5):
        pos = state.stock_pos + int(rng.integers(state.stock_size))
        state.stock = list(state.stock)  # the dealt stock is the record of the deal
        other = int(state.stock[pos])
        state.stock[pos] = card
    else:
        if not other_hidden:
            return False
        seat2, other = other_hidden[rng.integers(len(other_hidden))]
        _knock_move(state, seat2, other, card)
    _knock_move(state, owner, card, other)
    return True


def swap_own_knock(state, seat, rng) -> bool:
    """Swap a card of ``seat`` with the top of the stock."""
    hand = state.hand_cards(seat)
    card = hand[rng.integers(len(hand))]
    state.stock = list(state.stock)
    other = int(state.stock[state.stock_pos])
    state.stock[state.stock_pos] = card
    _knock_move(state, seat, card, other)
    return True


# ------------------------------------------------------------------ 500 Rum
def _r500_hidden(state, seat) -> list[int]:
    """Cards ``seat`` holds that nobody else knows of (one entry per unknown copy)."""
    n = len(state.sizes)
    cells, hand, known = state.cells, seat * NUM_CARDS, (2 * n + seat) * NUM_CARDS
    return [c for c in range(NUM_CARDS) for _ in range(cells[hand + c] - cells[known + c])]


def r500_move(state, seat, card, delta) -> None:
    """One copy of ``card`` into (``delta=1``) or out of (-1) a 500 Rum hand, every record kept."""
    state.cells[seat * NUM_CARDS + card] += delta
    held = state.cells[seat * NUM_CARDS + card] > 0
    at = _HANDS + seat  # the seat's hand in the state's words
    state.words[at] = (state.words[at] & ~(1 << card)) | (held << card)


def swap_hidden_r500(state, viewer, rng) -> bool:
    """Swap one card another player holds unseen with a stock card or another hidden card
    (and now and then reorder the stock)."""
    n = len(state.sizes)
    others = [s for s in range(n) if s != viewer]
    if state.pending >= 0:
        # The acting player has promised a play with the dug card; keep its hand playable.
        others = [s for s in others if s != state.current]
    if not others:
        return False
    owner = others[rng.integers(len(others))]
    hidden = _r500_hidden(state, owner)
    if not hidden:
        return False
    card = hidden[rng.integers(len(hidden))]
    other_hidden = [(s, c) for s in others if s != owner for c in _r500_hidden(state, s)]
    if state.stock_size and (not other_hidden or rng.random() < 0.5):
        pos = state.stock_pos + int(rng.integers(state.stock_size))
        other = state.stock[pos]
        state.stock[pos] = card
    else:
        if not other_hidden:
            return False
        seat2, other = other_hidden[rng.integers(len(other_hidden))]
        r500_move(state, seat2, other, -1)
        r500_move(state, seat2, card, +1)
    r500_move(state, owner, card, -1)
    r500_move(state, owner, other, +1)
    if state.stock_size > 1 and rng.random() < 0.5:  # and reorder the stock
        rest = state.stock[state.stock_pos :]
        rng.shuffle(rest)
        state.stock[state.stock_pos :] = rest
    return True


def swap_own_r500(state, seat, rng) -> bool:
    """Swap a card of ``seat`` with the top of the stock."""
    hand = state.hand_cards(seat)
    card = hand[rng.integers(len(hand))]
    other = state.stock[state.stock_pos]
    r500_move(state, seat, card, -1)
    r500_move(state, seat, other, +1)
    state.stock[state.stock_pos] = card
    return True


# ------------------------------------------------------------------ Ditch Rummy
def swap_hidden_ditch(state, viewer, rng) -> bool:
    """Deal the cards ``viewer`` cannot see (other hands, the draw pile) afresh, sizes kept."""
    others = [i for i in range(len(state.hands)) if i != viewer]
    before = [state.hands[i] for i in others], list(state.pile[state.pile_pos :])
    hidden = [o for i in others for o in state.hands[i]] + state.pile[state.pile_pos :]
    rng.shuffle(hidden)
    at = 0
    for i in others:
        size = len(state.hands[i])
        state.hands[i] = tuple(sorted(hidden[at : at + size]))
        at += size
    state.pile[state.pile_pos :] = hidden[at:]
    return ([state.hands[i] for i in others], list(state.pile[state.pile_pos :])) != before


def swap_own_ditch(state, seat, rng) -> bool:
    """Swap a card of ``seat`` (if it holds one) with the top of the draw pile."""
    hand = list(state.hands[seat])
    if not hand or state.pile_pos >= len(state.pile):
        return False
    i = int(rng.integers(len(hand)))
    hand[i], state.pile[state.pile_pos] = state.pile[state.pile_pos], hand[i]
    state.hands[seat] = tuple(sorted(hand))
    return True


SWAP_HIDDEN: dict[str, Callable] = {
    "knock_rummy": swap_hidden_knock,
    "rummy500": swap_hidden_r500,
    "ditch_rummy": swap_hidden_ditch,
}
SWAP_OWN: dict[str, Callable] = {
    "knock_rummy": swap_own_knock,
    "rummy500": swap_own_r500,
    "ditch_rummy": swap_own_ditch,
}


# ------------------------------------------------------------------ replays of two deals
def public_action(raw, action: int) -> str:
    """What the table sees of ``action`` by the seat to act: Ditch Rummy's actions name hand
    positions, so there the cards they move; elsewhere the action's name (it names the cards)."""
    if raw.game.name == "ditch_rummy":
        described = raw.game.describe_action(raw.hand_state, action)
        return re.sub(r"^(\w+)( \d+)+", r"\1", described)
    return raw.action_name(action)


def _what_seat_reads(raw, seat: int) -> tuple:
    """Everything ``seat`` may read through the public API (its view of the table included)."""
    match = raw.match
    view = raw.observe(f"player_{seat}")
    totals = match.totals_by_seat()
    return (
        view["observation"].tobytes(),
        view["action_mask"].tobytes(),
        repr(raw.infos),
        repr(raw.rewards),
        repr(raw.terminations),
        repr(raw.truncations),
        raw.agent_selection,
        raw.game.render(match.state, seat, totals),
        repr(raw.game.table_view(match.state, seat, totals)),
    )


def swapped_deal_check(
    make_env,
    seed: int,
    rng: np.random.Generator,
    steps: int = 300,
    prefer: Callable[[np.ndarray], np.ndarray] | None = None,
) -> int:
    """Play one random game twice, from its deal and from the same deal with two cards swapped
    (the same seed, so the same chance), with the same actions while the table sees the same.
    While a seat's own cards are the same in both, all it reads must be the same: history-made
    knowledge (what a seat is known to hold) must never depend on hidden cards. Returns the
    comparisons that could fail (made while some seat's hand differs between the two games);
    raises AssertionError at the first difference. ``prefer(legal)``: the legal actions the
    random player picks from nine times in ten (when any), so games run long."""
    first = make_env()
    first.reset(seed=seed)
    raw_a = first.unwrapped
    deck = raw_a.deck.tolist()
    i, j = (int(x) for x in rng.choice(len(deck), 2, replace=False))
    up = raw_a.game.num_players * getattr(raw_a.game.rules, "hand_size", -1)
    if deck[i] == deck[j] or up in (i, j):  # the same card, or the public up card
        return 0
    swapped = list(deck)
    swapped[i], swapped[j] = deck[j], deck[i]
    second = make_env()
    first.reset(seed=seed, options={"deck": deck})
    second.reset(seed=seed, options={"deck": swapped})
    raw_b = second.unwrapped
    seats = range(raw_a.game.num_players)
    alike = [True for _ in seats]
    compared = 0
    for step in range(steps):
        if raw_a.match.over or raw_a.match.hand_index or raw_a.hand_state.over:
            break  # one deal: the next hand is dealt from its own deck
        same = [
            sorted(raw_a.hand_state.hand_cards(seat)) == sorted(raw_b.hand_state.hand_cards(seat))
            for seat in seats
        ]
        for seat in seats:
            alike[seat] = alike[seat] and same[seat]
            if alike[seat]:
                compared += not all(same)  # counted while the two games differ in a hand
                assert _what_seat_reads(raw_a, seat) == _what_seat_reads(raw_b, seat), (
                    f"seed {seed}, cards {i} and {j} swapped: player_{seat} can tell the two "
                    f"deals apart at step {step}"
                )
        if not any(alike):
            break
        legal = np.flatnonzero(raw_a.observe(raw_a.agent_selection)["action_mask"])
        if prefer is not None and rng.random() < 0.9 and prefer(legal).size:
            legal = prefer(legal)
        action = int(rng.choice(legal))
        mask_b = raw_b.observe(raw_b.agent_selection)["action_mask"]
        if not mask_b[action] or public_action(raw_a, action) != public_action(raw_b, action):
            break  # the table now sees a difference
        first.step(action)
        second.step(action)
    return compared
