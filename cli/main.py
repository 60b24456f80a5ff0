"""The ``rummyzoo`` command line."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from rummyzoo.envs.registry import VARIANTS


def _cmd_bench_env(args: argparse.Namespace) -> int:
    from rummyzoo.cli.bench import run_bench

    run_bench(args)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
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


def _cmd_arena(args: argparse.Namespace) -> int:
    """Play duplicate deals between agents and report win rates, points and ratings."""
    import shlex

    from rummyzoo.agents.arena import (
        format_report,
        parse_options,
        run_arena,
        summarize,
        write_csv,
        write_heatmap,
        write_json,
    )

    options = parse_options(args.option)
    result = run_arena(
        args.variant,
        args.players,
        args.agents,
        deals=args.deals,
        seed=args.seed,
        options=options,
        workers=args.workers,
        quiet=args.quiet,
    )
    command = ["rummyzoo", "arena", args.variant, "--players", str(args.players), "--agents"]
    command += [*args.agents, "--deals", str(args.deals), "--seed", str(args.seed)]
    for item in args.option or []:
        command += ["--option", item]
    report = summarize(result, command=shlex.join(command))
    print(format_report(report))
    written = []
    if args.json:
        written.append(write_json(report, args.json))
    if args.csv:
        written.append(write_csv(report, args.csv))
    if args.heatmap:
        written.append(write_heatmap(report, args.heatmap))
    for path in written:
        print(f"wrote {path}")
    if args.save_games:
        from rummyzoo.agents.arena import save_arena_games

        limit = args.save_limit if args.save_limit > 0 else None
        saved = save_arena_games(
            args.variant,
            args.players,
            args.agents,
            deals=args.deals,
            seed=args.seed,
            options=options,
            folder=args.save_games,
            limit=limit,
        )
        print(f"saved {len(saved)} game(s) to {args.save_games} (rummyzoo replay FILE)")
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    """Play a variant in the terminal against agents."""
    from rummyzoo.agents.arena import parse_options
    from rummyzoo.cli.play import play_game

    play_game(
        args.variant,
        num_players=args.players,
        opponents=args.opponents,
        seat=args.seat,
        options=parse_options(args.option),
        seed=args.seed,
        color=False if args.no_color else None,
        save=args.save,
    )
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    """Step through a saved game after checking that it re-plays exactly."""
    import os

    from rummyzoo.cli.display import show_replay

    color = not args.no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ

    def read_line() -> str | None:
        try:
            return input("")
        except EOFError:
            return None

    try:
        show_replay(
            args.file,
            view=None if args.open else args.seat,
            step=args.step,
            read_line=read_line,
            color=color,
        )
    except KeyboardInterrupt:
        print()
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    """Train from a config file, or resume a run folder."""
    import json

    from rummyzoo.training.train import resume_run, train_from_file

    argv = (
        ["rummyzoo", *sys.argv[1:]]
        if sys.argv and sys.argv[0].endswith("rummyzoo")
        else ["rummyzoo", "train"]
    )
    progress = not args.no_progress
    if args.resume:
        summary = resume_run(args.resume, args.set or [], argv, progress_bar=progress)
    else:
        if not args.config:
            raise ValueError("give a CONFIG file, or --resume RUN_DIR")
        summary = train_from_file(
            args.config, args.set or [], args.run_dir, argv, progress_bar=progress
        )
    print(json.dumps(summary, indent=2))
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    """A checkpoint against the baselines of its variant, through the arena."""
    import json
    from pathlib import Path

    from rummyzoo.agents.arena import format_report, parse_options, run_arena, summarize
    from rummyzoo.agents.arena.evaluate import baseline_names
    from rummyzoo.agents.checkpoints import read_meta

    meta = read_meta(args.checkpoint)
    variant, players = meta["variant"], meta["num_players"]
    options = {**meta["options"], **parse_options(args.option)}
    opponents = args.opponents or baseline_names(variant)
    results = {}
    for opponent in opponents:
        agents = [args.checkpoint] + [opponent] * (players - 1)
        result = run_arena(
            variant,
            players,
            agents,
            deals=args.deals,
            seed=args.seed,
            options=options,
            workers=args.workers,
            quiet=args.quiet,
        )
        report = summarize(result)
        print(f"== {Path(args.checkpoint).name} vs {opponent}")
        print(format_report(report))
        results[opponent] = report["agents"][result.labels[0]]
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "checkpoint": args.checkpoint,
            "variant": variant,
            "players": players,
            "options": options,
            "deals": args.deals,
            "seed": args.seed,
            "results": results,
        }
        path.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rummyzoo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser(
        "bench-env", help="random legal games through the AEC loop: speed in JSON"
    )
    bench.add_argument("variant", choices=sorted(VARIANTS))
    bench.add_argument("--players", type=int, default=2)
    bench.add_argument("--seconds", type=float, default=5.0)
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--raw", action="store_true", help="bench raw_env instead of env()")
    bench.add_argument("--reseed", action="store_true", help="reset with a new seed every game")
    bench.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run this many segments of --seconds; decisions/s is the median segment's rate",
    )
    bench.add_argument("--deadwood-hands", type=int, default=20000)
    bench.add_argument(
        "--option", action="append", metavar="KEY=VALUE", help="a rules option (repeatable)"
    )
    bench.add_argument("--json", metavar="PATH", help="write the results here")
    bench.set_defaults(func=_cmd_bench_env)

    demo = sub.add_parser("demo", help="play and print one seeded game between random agents")
    demo.add_argument("variant", choices=sorted(VARIANTS))
    demo.add_argument("--players", type=int, default=2)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_cmd_demo)

    arena = sub.add_parser(
        "arena",
        help="duplicate deals between agents: win rates, points, cross table and ratings",
        description="Play DEALS seeded deals between the agents, each deal once per seating "
        "(every rotation of every line-up, so each agent plays the same cards from every seat), "
        "and report per agent the win rate and mean points per hand with 95% intervals; with "
        "more than two agents also a cross table and Bradley-Terry (Elo-scale) ratings.",
    )
    arena.add_argument("variant", choices=sorted(VARIANTS))
    arena.add_argument("--players", type=int, default=2, help="seats per game (default 2)")
    arena.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help="two or more of: random, a heuristic such as knock.greedy, a checkpoint path",
    )
    arena.add_argument("--deals", type=int, default=100, help="deals to play (default 100)")
    arena.add_argument("--seed", type=int, default=0)
    arena.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default: one per CPU; 1 plays in this process)",
    )
    arena.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="a rules option of the variant, e.g. --option target_score=100 (repeatable)",
    )
    arena.add_argument("--json", metavar="PATH", help="write the full report as JSON")
    arena.add_argument("--csv", metavar="PATH", help="write one row per agent as CSV")
    arena.add_argument("--heatmap", metavar="PATH", help="write the cross table as a PNG")
    arena.add_argument("--quiet", action="store_true", help="no progress bar")
    arena.add_argument(
        "--save-games",
        metavar="DIR",
        help="also save games of the run as replay JSON files here (rummyzoo replay FILE)",
    )
    arena.add_argument(
        "--save-limit",
        type=int,
        default=10,
        metavar="K",
        help="save at most K games, the first deals first (default 10; 0 = all)",
    )
    arena.set_defaults(func=_cmd_arena)

    play = sub.add_parser(
        "play",
        help="play a variant in the terminal against heuristics or checkpoints",
        description="Play VARIANT in the terminal. Moves are listed by number and name; type "
        "either. help shows the commands and rules; quit, Ctrl-D or Ctrl-C leave.",
    )
    play.add_argument("variant", choices=sorted(VARIANTS))
    play.add_argument("--players", type=int, default=2, help="seats, you included (default 2)")
    play.add_argument(
        "--opponents",
        nargs="+",
        metavar="AGENT",
        help="agents for the other seats in order, cycled if fewer (default: the variant's "
        "strongest heuristic); random, a heuristic such as knock.smart, or a checkpoint path",
    )
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0: you start)")
    play.add_argument("--seed", type=int, default=None, help="deal seed (default: a fresh one)")
    play.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="a rules option, e.g. --option target_score=null for one hand (repeatable)",
    )
    play.add_argument("--no-color", action="store_true", help="no ANSI colours")
    play.add_argument("--save", metavar="FILE", help="save the game as a replay JSON file")
    play.set_defaults(func=_cmd_play)

    replay = sub.add_parser(
        "replay",
        help="step through a saved game (checked to re-play exactly)",
        description="Re-play a saved game from its decks and actions, check every hand's "
        "points against the record (a mismatch is reported as corrupt), then print it move by "
        "move.",
    )
    replay.add_argument("file", help="a replay JSON file (arena --save-games, play --save)")
    view = replay.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, default=None, help="show only this seat's hand")
    view.add_argument("--open", action="store_true", help="show every hand (the default)")
    replay.add_argument("--step", action="store_true", help="wait for Enter between moves")
    replay.add_argument("--no-color", action="store_true", help="no ANSI colours")
    replay.set_defaults(func=_cmd_replay)

    train = sub.add_parser("train", help="train from a YAML config (or resume a run)")
    train.add_argument("config", nargs="?", help="YAML run config, e.g. configs/knock_ppo.yaml")
    train.add_argument(
        "--set", action="append", metavar="KEY.SUB=VALUE", help="override a config key (repeatable)"
    )
    train.add_argument("--run-dir", help="run folder (default: runs/<config>_<time>)")
    train.add_argument(
        "--resume", metavar="RUN_DIR", help="continue an interrupted run from its last checkpoint"
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.set_defaults(func=_cmd_train)

    evaluate = sub.add_parser("evaluate", help="a checkpoint against the baselines (arena)")
    evaluate.add_argument("checkpoint")
    evaluate.add_argument(
        "--opponents", nargs="+", help="default: random and every heuristic of the variant"
    )
    evaluate.add_argument("--deals", type=int, default=500)
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--workers", type=int, default=None)
    evaluate.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="evaluation-only option, e.g. target_score=100",
    )
    evaluate.add_argument("--json", metavar="PATH")
    evaluate.add_argument("--quiet", action="store_true")
    evaluate.set_defaults(func=_cmd_evaluate)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        print(f"rummyzoo {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
