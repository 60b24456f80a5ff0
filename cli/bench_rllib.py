"""``rummyzoo bench-rllib CONFIG``: env steps/s of a config on Ray RLlib, by env runners."""

from __future__ import annotations

import argparse
import shlex

from rummyzoo.cli.common import Parents, check_outputs, check_overrides, platform_info
from rummyzoo.envs.files import write_json


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    bench = sub.add_parser(
        "bench-rllib",
        help="RLlib throughput of a config with 1, 2, ... env runners: env steps/s in JSON",
        description="Train CONFIG on the rllib backend for --iterations PPO iterations (after "
        "two untimed ones: a warm-up, and one that reads the starting step count) with each --env-runners count, one after another in --repeat rounds (no "
        "evaluation, warm start or checkpoints), and report env steps/s (every seat's "
        "decisions, sampling and updates together) and each count's ratio to the first.",
        parents=[parents.overrides()],
    )
    bench.add_argument("config", help="YAML run config (its backend is set to rllib)")
    bench.add_argument(
        "--env-runners",
        type=int,
        nargs="+",
        default=[1, 2],
        metavar="K",
        help="the env-runner counts to time, each ratio to the first's (default 1 2)",
    )
    bench.add_argument(
        "--iterations", type=int, default=5, help="timed iterations per run (default 5)"
    )
    bench.add_argument("--repeat", type=int, default=2, help="rounds (default 2)")
    bench.add_argument("--json", metavar="PATH", help="write the results here")
    bench.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_outputs(args, "json", inputs=[args.config])
    from rummyzoo.training.config import load_config
    from rummyzoo.training.rllib import bench_rllib

    if args.iterations < 1 or args.repeat < 1 or min(args.env_runners) < 0:
        raise ValueError("--iterations and --repeat must be positive, --env-runners >= 0")
    if len(set(args.env_runners)) < len(args.env_runners):
        raise ValueError(f"--env-runners names a count twice: {args.env_runners}")
    overrides = check_overrides(args.set)
    backend = [o for o in overrides if o.partition("=")[0].strip() == "backend"]
    if backend:
        raise ValueError(f"--set {backend[0]}: bench-rllib times the rllib backend; drop it")
    overrides = ["backend=rllib", *overrides]
    try:
        config = load_config(args.config, overrides)
    except ValueError as exc:
        # a refusal of the backend this command sets is the config's, not the user's --set
        text = str(exc)
        if "--set backend=rllib:" not in text or "\n" in text:
            raise
        why = text.split("--set backend=rllib:", 1)[1].strip()
        raise ValueError(
            f"{args.config} cannot train on RLlib, which this command times: {why}"
        ) from None
    result = bench_rllib(config, args.env_runners, args.iterations, args.repeat)
    result["command"] = " ".join(shlex.quote(a) for a in args.argv)
    result.update(platform_info())
    for s in result["settings"]:
        rounds = ", ".join(f"{x:,.0f}" for x in s["env_steps_per_s"])
        ratio = s["ratio_to_first"]
        print(
            f"{s['num_env_runners']} env runner(s): {s['median_env_steps_per_s']:,.0f} env "
            f"steps/s (rounds: {rounds}); "
            + (
                "no ratio (the first setting sampled nothing)"
                if ratio is None
                else f"{ratio:.2f}x the first"
            )
        )
    if args.json:
        path = write_json(result, args.json)
        print(f"wrote {path}")
    return 0
