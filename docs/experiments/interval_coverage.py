"""How often the arena's 95% intervals hold the true value (a measurement script).

A reference run of many deals (seed 999999) stands for the truth: each agent's win rate, points
per hand and, with more than two agents, rating and rating gaps. Then ``--runs`` runs of
``--deals`` deals each (seeds 1, 2, ...), summarised as ``rummyzoo arena`` summarises them,
and for each interval the share of runs whose interval holds the reference's value (with its
own 95% Wilson interval)::

    python docs/experiments/interval_coverage.py knock_rummy --agents random knock.greedy \\
        --option target_score=100 --deals 50 --runs 200 --reference-deals 50000
    python docs/experiments/interval_coverage.py knock_rummy --players 4 --agents random \\
        knock.greedy knock.smart 'knock.greedy(knock_threshold=5)' --option target_score=null \\
        --deals 10 --runs 600 --reference-deals 20000

``--json PATH`` writes what it printed.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from typing import Any

from rummyzoo.agents.arena import run_arena, summarize
from rummyzoo.agents.arena.stats import wilson_interval
from rummyzoo.cli.common import parse_options

REFERENCE_SEED = 999_999


def _holds(interval: Any, value: float) -> bool | None:
    """Whether ``interval`` holds ``value`` (an open end holds all; None: no interval)."""
    if interval is None:
        return None
    low, high = interval
    if low is None and high is None:
        return None
    low = -math.inf if low is None else low
    high = math.inf if high is None else high
    return low <= value <= high


def _values(report: dict[str, Any]) -> dict[str, tuple[float, Any]]:
    """Every checked figure of an arena report: name -> (value, interval)."""
    out = {}
    for label, entry in report["agents"].items():
        out[f"{label} win rate"] = (entry["win_rate"], entry["win_rate_ci"])
        out[f"{label} points per hand"] = (entry["mean_points"], entry["mean_points_ci"])
        if entry.get("rating") is not None and report["ratings"]["anchor"] != label:
            out[f"{label} rating"] = (entry["rating"], entry.get("rating_ci"))
    intervals = {}
    for gap in report.get("ratings", {}).get("gaps", []):
        interval = gap.get("gap_ci")
        intervals[gap["agent"], gap["over"]] = interval
        if interval is not None:  # the same gap the other way round
            low, high = interval
            interval = [None if high is None else -high, None if low is None else -low]
        intervals[gap["over"], gap["agent"]] = interval
    rated = [label for label, entry in report["agents"].items() if entry.get("rating") is not None]
    for i, first in enumerate(rated):  # each pair one way (the agents' order) in every run
        for second in rated[i + 1 :]:
            value = report["agents"][first]["rating"] - report["agents"][second]["rating"]
            out[f"{first} over {second}"] = (value, intervals.get((first, second)))
    return out


def coverage(args: argparse.Namespace) -> dict[str, Any]:
    options = parse_options(args.option)

    def report(deals: int, seed: int, resamples: int) -> dict[str, Any]:
        result = run_arena(
            args.variant, args.players, args.agents, deals=deals, seed=seed, options=options,
            workers=1,
        )  # fmt: skip
        return summarize(result, resamples=resamples)

    truth = {k: v for k, (v, _) in _values(report(args.reference_deals, REFERENCE_SEED, 0)).items()}
    held: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    for seed in range(1, args.runs + 1):
        for name, (_, interval) in _values(report(args.deals, seed, 1000)).items():
            if name not in truth:  # a gap the reference run left without an estimate
                continue
            verdict = _holds(interval, truth[name])
            if verdict is not None:
                (held if verdict else missed)[name] += 1
    rows = {}
    for name in truth:
        runs = held[name] + missed[name]
        if runs:
            low, high = wilson_interval(held[name], runs)
            rows[name] = {
                "reference": truth[name],
                "runs": runs,
                "held": held[name],
                "coverage": held[name] / runs,
                "coverage_ci": [low, high],
            }
    return {
        "variant": args.variant,
        "players": args.players,
        "agents": args.agents,
        "options": options,
        "deals": args.deals,
        "runs": args.runs,
        "reference_deals": args.reference_deals,
        "reference_seed": REFERENCE_SEED,
        "coverage": rows,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant")
    parser.add_argument("--agents", nargs="+", required=True)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--deals", type=int, default=50)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--reference-deals", type=int, default=20_000)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    out = coverage(args)
    print(
        f"{args.variant}, {args.players} players, {' / '.join(args.agents)}: {args.runs} runs "
        f"of {args.deals} deals against a reference of {args.reference_deals} deals"
    )
    for name, row in out["coverage"].items():
        low, high = row["coverage_ci"]
        print(
            f"  {name:48s} {100 * row['coverage']:5.1f}% [{100 * low:4.1f}, {100 * high:5.1f}]"
            f"  ({row['held']}/{row['runs']})"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out


if __name__ == "__main__":
    main()
