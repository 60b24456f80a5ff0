"""``rummyzoo demo VARIANT``: play and print one seeded game between random agents."""

from __future__ import annotations

import argparse

import numpy as np

from rummyzoo.cli.common import Parents


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    demo = sub.add_parser(
        "demo",
        parents=[parents.game(), parents.seed()],
        help="play and print one seeded game between random agents",
    )
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play and print one seeded game between random agents."""
    from rummyzoo.agents.random_agent import RandomPolicy
    from rummyzoo.envs.match import HandEnd, Match
    from rummyzoo.envs.play import Decision, play_episode
    from rummyzoo.envs.registry import make_game

    match = Match(make_game(args.variant, args.players, render_mode="ansi"))

    def show(event: object, match: Match) -> None:
        if type(event) is Decision:
            print(f"player_{event.seat}: {match.game.action_name(event.action)}")
        elif type(event) is HandEnd:
            print(match.game.render(event.state, None, match.totals_by_seat()))
            if not event.match_over:
                print()

    match.reset(args.seed)
    print(match.game.render(match.state, None, match.totals_by_seat()))
    policies = [RandomPolicy()] * args.players
    episode = play_episode(
        match, policies, np.random.default_rng(args.seed), seed=args.seed, on_event=show
    )
    for seat, info in enumerate(episode.last.infos):
        print(f"player_{seat}: {info.get('points', 0):+g} points")
    return 0
