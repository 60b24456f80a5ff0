"""Rollout search over ditch.smart in Ditch Rummy: how far above smart can search see?

At each of its decisions after the draw (where it has a choice), the searching player tries
every legal action in ``--worlds`` guesses of the hidden cards (the opponent's hand and the
draw pile's order, shuffled together; the same guesses for every action) and plays the rest of
the hand out with ditch.smart in both seats. It plays the action whose hands end with the best
mean margin. Each deal is played with the searcher in either seat, and again with ditch.smart
in its place (the duplicate baseline): the figure is the mean, over hands, of the searcher's
margin less smart's on the same deal and seat. ``--oracle`` searches the true hidden cards
instead (one world, a player that cheats: an upper bound, not a strategy).

    python docs/experiments/ditch_rollouts.py --worlds 8 --deals 90 --seed 3
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from rummyzoo.agents.ditch import SmartDitch
from rummyzoo.envs.ditch_rummy.rules import DitchState, Phase

SMART = SmartDitch(num_players=2, options={"target_score": None})
GAME = SMART.game
NO_TOTALS = np.zeros(2)


def smart_action(s: DitchState, rng: np.random.Generator) -> int:
    return SMART.act(GAME.observe(s, s.current, NO_TOTALS), GAME.legal_mask(s), rng)


def play_out(s: DitchState, rng: np.random.Generator) -> np.ndarray:
    while not s.over:
        GAME.apply(s, smart_action(s, rng), rng)
    return s.points


def guess(s: DitchState, seat: int, rng: np.random.Generator) -> DitchState:
    """A copy of ``s`` with the cards ``seat`` cannot see dealt anew."""
    world = s.copy()
    other = 1 - seat
    hidden = list(world.hands[other]) + world.pile[world.pile_pos :]
    rng.shuffle(hidden)
    k = len(world.hands[other])
    world.hands[other] = tuple(sorted(hidden[:k]))
    world.pile = world.pile[: world.pile_pos] + hidden[k:]
    return world


def search_action(s: DitchState, rng: np.random.Generator, worlds: int, oracle: bool) -> int:
    legal = np.flatnonzero(GAME.legal_mask(s))
    if legal.size == 1 or s.phase == Phase.DRAW:
        return smart_action(s, rng)
    seat = s.current
    guesses = [s] if oracle else [guess(s, seat, rng) for _ in range(worlds)]
    best, best_value = int(legal[0]), -np.inf
    for action in legal.tolist():
        value = 0.0
        for world in guesses:
            t = world.copy()
            GAME.apply(t, action, rng)
            points = play_out(t, rng)
            value += points[seat] - points[1 - seat]
        if value > best_value:
            best, best_value = action, value
    return best


def margin(deck: np.ndarray, seat: int, search: bool, args: argparse.Namespace) -> float:
    rng = np.random.default_rng(0)
    s = GAME.new_hand(rng, 1, deck)
    while not s.over:
        if search and s.current == seat:
            action = search_action(s, rng, args.worlds, args.oracle)
        else:
            action = smart_action(s, rng)
        GAME.apply(s, action, rng)
    return float(s.points[seat] - s.points[1 - seat])


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", type=int, default=8)
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--oracle", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    diffs = []
    for deal in range(args.deals):
        deck = GAME.shuffled_deck(np.random.default_rng([args.seed, deal]))
        for seat in (0, 1):
            diffs.append(margin(deck, seat, True, args) - margin(deck, seat, False, args))
    gains = np.asarray(diffs)
    se = float(gains.std(ddof=1) / np.sqrt(gains.size)) if gains.size > 1 else float("nan")
    out = {
        "worlds": args.worlds,
        "oracle": args.oracle,
        "hands": int(gains.size),
        "gain_per_hand": float(gains.mean()),
        "ci95": [float(gains.mean() - 1.96 * se), float(gains.mean() + 1.96 * se)],
        "seconds": time.perf_counter() - start,
    }
    print(
        f"searcher less smart on the same deals: {out['gain_per_hand']:+.1f} points a hand, "
        f"95% CI [{out['ci95'][0]:+.1f}, {out['ci95'][1]:+.1f}], {out['hands']} hands, "
        f"{out['seconds']:.0f} s"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
