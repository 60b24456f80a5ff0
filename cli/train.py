"""``rummyzoo train CONFIG`` (or ``--resume RUN_DIR``): training from a YAML config."""

from __future__ import annotations

import argparse

from rummyzoo.cli.common import Parents, check_overrides


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    train = sub.add_parser(
        "train",
        help="train from a YAML config (or resume a run)",
        description="Train from a YAML config into a run folder, or resume one. Progress is a "
        "live bar on a terminal and a line every --progress-every seconds otherwise (logs, CI); "
        "the end is a readable summary (the full one is RUN_DIR/summary.json).",
        parents=[parents.overrides()],
    )
    train.add_argument(
        "config",
        nargs="?",
        help="YAML run config: a file (configs/knock_ppo.yaml), or a shipped config by name, "
        "from any folder (knock_ppo; a missing file's error lists them)",
    )
    train.add_argument("--run-dir", help="run folder (default: runs/<config>_<time>)")
    train.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue an interrupted run from its last checkpoint (a run folder you trust: "
        "its last.zip is a stable-baselines3 zip, and an RLlib run's checkpoints/rllib is "
        "RLlib's checkpoint, whose loading unpickles Python objects)",
    )
    shown = train.add_mutually_exclusive_group()
    shown.add_argument(
        "--no-progress",
        action="store_true",
        help="no live bar: a progress line every --progress-every seconds instead",
    )
    shown.add_argument("--quiet", action="store_true", help="no progress at all")
    train.add_argument(
        "--progress-every",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="seconds between progress lines when there is no bar (default 30)",
    )
    train.add_argument("--json", action="store_true", help="print the summary as JSON")
    train.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train from a config file, or resume a run folder."""
    import json

    from rummyzoo.training.run_folder import format_summary
    from rummyzoo.training.train import resume_run, train_from_file

    argv = list(getattr(args, "argv", ["rummyzoo", "train"]))  # as main() parsed it
    progress = "off" if args.quiet else ("lines" if args.no_progress else "auto")
    if not 0 < args.progress_every < float("inf"):  # NaN too
        raise ValueError(
            f"--progress-every must be a positive number of seconds, got {args.progress_every:g}"
        )
    if args.run_dir == "" or args.resume == "":
        raise ValueError(f"{'--run-dir' if args.run_dir == '' else '--resume'} '': give a folder")
    kwargs = {"progress": progress, "progress_every": args.progress_every}
    if args.resume:
        if args.config or args.run_dir:
            given = "CONFIG" if args.config else "--run-dir"
            raise ValueError(
                f"--resume continues {args.resume} with its own config.yaml: give no {given} "
                "with it (--set changes the resumed config)"
            )
        summary = resume_run(args.resume, check_overrides(args.set), argv, **kwargs)
    else:
        if not args.config:
            raise ValueError(
                "give a CONFIG (a file, or a shipped config's name: knock_ppo), or --resume RUN_DIR"
            )
        summary = train_from_file(
            args.config, check_overrides(args.set), args.run_dir, argv, **kwargs
        )
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))
    return 0
