"""``rummyzoo demo VARIANT``: play and print one seeded game between random agents.

By default every move is printed, one a line, under a heading for each hand, with the table
(every hand open) when a hand is dealt (unless nothing is dealt, as in Ditch Rummy) and when it
ends; ``--quiet`` prints one line per hand
with its points instead, then the final table. Either way the output ends with one
``player_N: +P points`` line per seat: the game's points (summed over its hands).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from rummyzoo.cli.common import Parents

__all__ = ["play_demo"]


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    demo = sub.add_parser(
        "demo",
        parents=[parents.game(), parents.options(), parents.seed()],
        help="play and print one seeded game between random agents",
        description="Play one seeded game between random agents and print it: every move, "
        "with the table when each hand is dealt and when it ends, then every seat's points.",
    )
    demo.add_argument(
        "--quiet",
        action="store_true",
        help="print only one line per hand (its points), the final table and every seat's "
        "points, not the moves",
    )
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play and print one seeded game between random agents."""
    from rummyzoo.cli.common import parse_options

    options = parse_options(args.option)
    play_demo(args.variant, args.players, args.seed, quiet=args.quiet, options=options)
    return 0


def _points(points: list[float]) -> str:
    return ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(points))


def play_demo(
    variant: str,
    num_players: int = 2,
    seed: int = 0,
    quiet: bool = False,
    output: Callable[[str], None] = print,
    options: dict[str, Any] | None = None,
) -> Any:
    """Play one game of random agents with ``seed`` and write it line by line to ``output``
    (``options``: the variant's rules and match options, e.g. ``target_score``).

    :returns: the :class:`~rummyzoo.envs.play.Episode`; its ``points`` are the final lines.
    """
    from rummyzoo.agents.random_agent import RandomPolicy
    from rummyzoo.cli.display import hand_over_text
    from rummyzoo.envs.match import HandEnd, Match
    from rummyzoo.envs.play import Deal, Decision, play_episode
    from rummyzoo.envs.replay import describe_action, hand_over, make_play_match

    match = make_play_match(variant, num_players, options)
    target = match.options.target_score
    length = "one hand" if target is None else f"a match to {target}"
    output(f"{variant}, {num_players} random agents, {length}; seed {seed}")
    last_state = None

    def show(event: object, match: Match) -> None:
        nonlocal last_state
        if type(event) is Deal:
            if not quiet:
                output("")
                output(f"== hand {event.hand} (dealer player_{event.dealer}) ==")
                held = getattr(match.state, "hand_cards", None)
                if held is None or any(held(s) for s in range(num_players)):  # cards dealt
                    output(match.game.render(match.state, None, match.totals_by_seat()))
        elif type(event) is Decision:
            if not quiet:
                output(f"player_{event.seat}: {describe_action(match, event.action)}")
        elif type(event) is HandEnd:
            over = hand_over(event, match)
            last_state = event.state
            if not quiet:
                output("")
                output(hand_over_text(match, over))
            elif over.points is None:
                output(f"hand {over.number}: stopped at the turn cap (no points)")
            else:
                total = ", ".join(f"{t:g}" for t in over.totals)
                output(f"hand {over.number}: {_points(over.points)} (totals {total})")

    policies = [RandomPolicy()] * num_players
    episode = play_episode(match, policies, np.random.default_rng(seed), seed=seed, on_event=show)
    if quiet and last_state is not None:
        output("")
        output(match.game.render(last_state, None, match.totals_by_seat()))
    output("")
    cut = f", stopped at {episode.last.truncated_by}" if episode.truncated else ""
    output(f"game over after {episode.hands} hand(s), {episode.decisions} moves{cut}:")
    for seat, points in enumerate(episode.points):
        output(f"player_{seat}: {points:+g} points")
    return episode
