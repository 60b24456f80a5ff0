"""``rummyzoo bench-train CONFIG``: learner steps/s of a training config, and where they go."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from rummyzoo.cli.common import Parents, check_outputs, check_overrides, platform_info
from rummyzoo.envs.files import write_json

PARTS = ("env", "opponents", "inference", "buffer", "wait", "update", "other")


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    bench = sub.add_parser(
        "bench-train",
        help="training throughput of a config (steps/s, time by part): speed in JSON",
        description="Train CONFIG for --steps learner steps with nothing else running (no "
        "evaluation, checkpoints or warm start) and report steps/s, collection steps/s and the "
        "time spent in the env, the opponents, the learner's inference, the buffer and the "
        "updates. --compare adds configurations (override sets) that run alternately with the "
        "base, --repeat times, and reports each one's ratio to the base.",
        parents=[parents.overrides()],
    )
    bench.add_argument(
        "config", help="YAML run config: a file, or a shipped config by name (knock_bench)"
    )
    bench.add_argument(
        "--steps", type=int, default=20_000, help="learner steps per run (default 20,000)"
    )
    bench.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="'KEY=VALUE ...'",
        help="another configuration: overrides on top of the base, space-separated; the token "
        "pool=K plays it against K fresh self-play snapshots (repeatable)",
    )
    bench.add_argument(
        "--pool",
        type=int,
        default=0,
        help="play against a self-play pool of this many fresh snapshots (0: the config's "
        "opponents)",
    )
    bench.add_argument(
        "--repeat", type=int, default=1, help="rounds of alternating runs (default 1)"
    )
    bench.add_argument("--json", metavar="PATH", help="write the results here")
    bench.set_defaults(func=run)


def _line(label: str, r: dict[str, Any]) -> str:
    share = ", ".join(f"{p} {r['share_by_part'][p]:.0%}" for p in PARTS if p in r["share_by_part"])
    return (
        f"{label}: {r['steps_per_s']:,.0f} steps/s end to end, "
        f"{r['collection_steps_per_s']:,.0f} collecting ({share})"
    )


def run(args: argparse.Namespace) -> int:
    check_outputs(args, "json", inputs=[args.config])
    import numpy as np

    from rummyzoo.training.bench import bench_train
    from rummyzoo.training.config import load_config

    if args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, got {args.repeat}")
    if args.steps < 1:
        raise ValueError(f"--steps must be at least 1, got {args.steps}")
    if args.pool < 0:
        raise ValueError(f"--pool must be 0 or more, got {args.pool}")
    base = check_overrides(args.set)
    setups = [("base", base, args.pool)]
    for k, text in enumerate(args.compare, 1):
        try:
            tokens = shlex.split(text)
        except ValueError as exc:
            raise ValueError(f"--compare {text!r}: {exc}") from None
        if not tokens:
            raise ValueError("--compare '' compares nothing: give KEY=VALUE settings (or pool=N)")
        pools = [t for t in tokens if t.startswith("pool=")]
        pool = args.pool
        if len(pools) > 1:
            raise ValueError(f"--compare {text!r}: pool= is given twice: give it once")
        if pools:
            value = pools[-1].partition("=")[2]
            if not (value.isascii() and value.isdigit()):  # (not "²", which int() refuses)
                raise ValueError(
                    f"--compare {text!r}: pool= needs a number of snapshots, got {value!r}"
                )
            pool = int(value)
        own = check_overrides([t for t in tokens if not t.startswith("pool=")], "--compare")
        overrides = base + own  # a --compare setting may change a --set one
        setups.append((f"#{k} {text}", overrides, pool))
    configs = []
    for k, (label, overrides, pool) in enumerate(setups):
        try:
            configs.append((label, load_config(args.config, overrides), pool))
        except ValueError as exc:  # a --compare setting is named as such, not as a --set
            if not k:
                raise
            given = set(overrides) - set(base)
            message = str(exc)
            for token in given:
                message = message.replace(f"--set {token}", f"--compare {token}")
            # the setup is the base with its --compare settings: what it refuses may read as
            # the base's (a --set, the file), which alone is valid
            raise ValueError(
                f"--compare {args.compare[k - 1]!r} (on top of the config and any --set): {message}"
            ) from None
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in setups}
    for round_ in range(args.repeat):
        for label, config, pool in configs:
            result = bench_train(config, args.steps, pool)
            runs[label].append(result)
            print(_line(f"[{round_ + 1}/{args.repeat}] {label}", result), flush=True)
    summary: dict[str, Any] = {
        "config": args.config,
        "set": base,
        "steps": args.steps,
        "pool": args.pool,
        "repeat": args.repeat,
        "setups": [],
    }
    first = None
    for label, _, _ in setups:
        results = runs[label]
        median = {
            key: float(np.median([r[key] for r in results]))
            for key in ("steps_per_s", "collection_steps_per_s")
        }
        entry = {"label": label, **median, "runs": results}
        if first is None:
            first = median
        else:
            entry["ratio_steps_per_s"] = median["steps_per_s"] / first["steps_per_s"]
            entry["ratio_collection_steps_per_s"] = (
                median["collection_steps_per_s"] / first["collection_steps_per_s"]
            )
            pairs = list(zip(results, runs["base"], strict=True))
            entry["ratio_collection_rounds"] = [
                r["collection_steps_per_s"] / b["collection_steps_per_s"] for r, b in pairs
            ]
            entry["ratio_steps_rounds"] = [r["steps_per_s"] / b["steps_per_s"] for r, b in pairs]
        summary["setups"].append(entry)
    summary.update(platform_info())
    # a run trains whole rollouts (PPO) or whole steps of every game: at least --steps
    trained = sorted({int(r["steps"]) for rs in runs.values() for r in rs})
    summary["steps_trained"] = trained
    each = f"{args.steps:,} steps each"
    if trained != [args.steps]:
        each = f"{' or '.join(f'{t:,}' for t in trained)} steps each ({args.steps:,} asked: whole rollouts)"
    print(f"median of {args.repeat} round(s), {each}:")
    for entry in summary["setups"]:
        ratio = ""
        if "ratio_steps_per_s" in entry:
            rounds = ", ".join(
                f"{a:.2f}x/{b:.2f}x"
                for a, b in zip(
                    entry["ratio_steps_rounds"], entry["ratio_collection_rounds"], strict=True
                )
            )
            ratio = (
                f"  ({entry['ratio_steps_per_s']:.2f}x end to end, "
                f"{entry['ratio_collection_steps_per_s']:.2f}x collecting; rounds, end to end/"
                f"collecting: {rounds})"
            )
        print(
            f"  {entry['label']}: {entry['steps_per_s']:,.0f} steps/s, "
            f"{entry['collection_steps_per_s']:,.0f} collecting{ratio}"
        )
    if args.json:
        path = write_json(summary, args.json)
        print(f"wrote {path}")
    return 0
