"""``rummyzoo arena VARIANT --agents A B ...``: duplicate deals between agents."""

from __future__ import annotations

import argparse

from rummyzoo.agents.arena import SEATING_DESIGNS
from rummyzoo.cli.common import Parents, check_outputs, note_on_stop, parse_options, printable
from rummyzoo.envs.files import is_file


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    arena = sub.add_parser(
        "arena",
        parents=[parents.game(), parents.runs(100), parents.seed(), parents.options()],
        help="duplicate deals between agents: win rates, points, cross table and ratings",
        description="Play DEALS seeded deals between the agents, each deal once per seating "
        "(every line-up in every seating of a balanced design, so each agent plays the same cards "
        "from every seat and sits after every other agent equally often), "
        "and report per agent the win rate and mean points per hand with 95% intervals; with "
        "more than two agents also a cross table and Bradley-Terry (Elo-scale) ratings.",
    )
    arena.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help="two or more of: random, a heuristic such as knock.greedy, a checkpoint path, "
        "or package.module:ClassName for your own agent class; a heuristic or class may take "
        "constructor parameters in parentheses (quoted): 'knock.smart(knock_margin=5)'",
    )
    arena.add_argument("--json", metavar="PATH", help="write the full report as JSON")
    arena.add_argument("--csv", metavar="PATH", help="write one row per agent as CSV")
    arena.add_argument("--heatmap", metavar="PATH", help="write the cross table as a PNG")
    arena.add_argument(
        "--save-games",
        metavar="DIR",
        help="also save games of the run as replay JSON files here, recorded as they are "
        "played (rummyzoo replay FILE)",
    )
    arena.add_argument(
        "--save-limit",
        type=int,
        metavar="K",
        help="save at most K games, the first deals first (default 10; 0 = all)",
    )
    arena.add_argument(
        "--batch",
        type=int,
        default=1,
        metavar="N",
        help="games each process plays at once on the vector engine, a greedy network "
        "deciding for all of them with one call (the same games; not with --save-games)",
    )
    arena.add_argument(
        "--seating",
        choices=SEATING_DESIGNS,
        default=SEATING_DESIGNS[0],
        help="balanced (default): at 3+ seats every agent sits after and before every other "
        "equally often (N(N-1) seatings a line-up, 60 at 6 seats); rotations: the N "
        "rotations of each line-up only (fewer games; the order around the table stays "
        "fixed). With teams and fewer agents than seats but more than teams, either plays "
        "every seating in which an agent's copies partner each other (12 for 3 agents at 4)",
    )
    arena.add_argument(
        "--keep-deals",
        metavar="FILE",
        help="keep the deals' games in FILE as they are played (every few seconds, and when "
        "the arena ends or is stopped); run again with the same FILE, the arena plays only "
        "the deals it lacks: a stopped arena goes on where it was, and one with more --deals "
        "plays only the new deals (FILE must be of the same arena: variant, players, rules "
        "and match options, agents, seed, seating, saved games, rummyzoo version)",
    )
    arena.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play duplicate deals between agents and report win rates, points and ratings."""
    if args.save_limit is not None and args.save_games is None:
        raise ValueError("--save-limit limits the games --save-games keeps: give --save-games DIR")
    if args.save_limit is None:
        args.save_limit = 10
    if args.save_limit < 0:
        raise ValueError(f"--save-limit must be 0 (every game) or more, got {args.save_limit}")
    # the checkpoints it plays are files it reads (a name that is no file is an agent's)
    files = [a for a in args.agents if is_file(a)]
    check_outputs(
        args, "json", "csv", "heatmap", "keep_deals", inputs=files, folders=["save_games"]
    )
    import shlex

    from rummyzoo.agents.arena import (
        format_report,
        run_arena,
        summarize,
        write_csv,
        write_heatmap,
        write_json,
    )

    options = parse_options(args.option)
    keep_hint = (
        None
        if args.keep_deals
        else "--keep-deals FILE keeps the deals as they are played, so that a stopped arena "
        "goes on from them"
    )
    with note_on_stop(keep_hint):
        result = run_arena(
            args.variant,
            args.players,
            args.agents,
            deals=args.deals,
            seed=args.seed,
            options=options,
            workers=args.workers,
            quiet=args.quiet,
            save_games=args.save_games,
            save_limit=args.save_limit or None,
            batch=args.batch,
            seating=args.seating,
            keep_deals=args.keep_deals,
        )
    command = ["rummyzoo", "arena", args.variant, "--players", str(args.players), "--agents"]
    command += [*args.agents, "--deals", str(args.deals), "--seed", str(args.seed)]
    if args.seating != SEATING_DESIGNS[0]:
        command += ["--seating", args.seating]
    for item in args.option or []:
        command += ["--option", item]
    report = summarize(result, command=shlex.join(command))
    # the files first: a reader that goes away early (``| head``) stops the printing, not them
    written = []
    if args.json:
        written.append(write_json(report, args.json))
    if args.csv:
        written.append(write_csv(report, args.csv))
    if args.heatmap:
        written.append(write_heatmap(report, args.heatmap))
    # (what names say, escaped: a crafted checkpoint's name cannot clear the screen)
    print(printable(format_report(report), lines=True))
    for path in written:
        print(printable(f"wrote {path}"))
    if args.save_games:
        saved = f"saved {len(result.replays)} game(s) to {args.save_games} (rummyzoo replay FILE)"
        print(printable(saved))
    return 0
