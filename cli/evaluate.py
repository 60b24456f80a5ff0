"""``rummyzoo evaluate CHECKPOINT``: a checkpoint against the baselines of its variant."""

from __future__ import annotations

import argparse

from rummyzoo.cli.common import Parents, parse_options


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    evaluate = sub.add_parser(
        "evaluate",
        parents=[parents.runs(500), parents.seed(), parents.options()],
        help="a checkpoint against the baselines (arena)",
    )
    evaluate.add_argument("checkpoint")
    evaluate.add_argument(
        "--opponents", nargs="+", help="default: random and every heuristic of the variant"
    )
    evaluate.add_argument("--json", metavar="PATH")
    evaluate.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """A checkpoint against the baselines of its variant, through the arena."""
    import json
    from pathlib import Path

    from rummyzoo.agents.arena import format_report, run_arena, summarize
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
