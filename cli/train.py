"""``rummyzoo train CONFIG`` (or ``--resume RUN_DIR``): training from a YAML config."""

from __future__ import annotations

import argparse
import sys

from rummyzoo.cli.common import Parents


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
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
    train.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
