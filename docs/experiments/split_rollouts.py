"""Where a PPO rollout's time goes with the games split between processes (a measurement
script).

Trains a config with ``workers`` processes (2 unless ``--set`` says otherwise)
for ``--steps`` learner steps, as ``rummyzoo bench-train`` does, with timers around the parts
of each rollout that the learner's process plays::

    python docs/experiments/split_rollouts.py CONFIG [--set KEY=VALUE ...] [--steps S]
        [--skip K] [--json PATH]

For each rollout after the first ``K`` (a run's first rollouts start the helpers' networks and
warm the caches), in milliseconds: ``start``, from the rollout's start to the first step of
this process's own share (the buffer reset, the weights sent to the helpers); ``play``, its
own share's steps, the helpers' steps taken in between them included (``poll``, their part);
``finish``, from its last step until every helper's rollout is in and taken in (the values
of its own last observations, the wait for the helpers, what is left of their steps to take
in, the league's records of their matches); ``after``, the rest (the callbacks' steps, the
returns); and ``rollout``, the whole. Medians over the rollouts (and
every rollout's figures in the JSON), and the run's collection rate (steps a second outside
the updates).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from rummyzoo.training import ppo, split_env
from rummyzoo.training.bench import bench_train
from rummyzoo.training.config import load_config


def _timed(owner: Any, name: str, spans: list[tuple[str, float, float]], label: str) -> None:
    """Wrap ``owner.name`` to record ``(label, start, end)`` of every call into ``spans``."""
    inner: Callable[..., Any] = getattr(owner, name)
    clock = time.perf_counter

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return inner(*args, **kwargs)
        finally:
            spans.append((label, start, clock()))

    setattr(owner, name, timed)


def measure(config_path: str, overrides: list[str], steps: int, skip: int) -> dict[str, Any]:
    config = load_config(config_path, ["workers=2", *overrides])  # (validated, as --set is)
    if config.algo != "ppo":
        raise SystemExit(
            "split_rollouts times PPO's rollouts: the config trains with " + config.algo
        )
    spans: list[tuple[str, float, float]] = []
    wrapped = [
        (ppo.MaskedPPO, "collect_rollouts", "rollout"),
        (ppo, "play_rollout", "play"),
        (split_env.SplitSeatEnv, "finish_rollouts", "finish"),
    ]
    if hasattr(split_env.SplitSeatEnv, "poll_rollouts"):  # (code before it: poll 0)
        wrapped.append((split_env.SplitSeatEnv, "poll_rollouts", "poll"))
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in wrapped]
    for owner, name, label in wrapped:
        _timed(owner, name, spans, label)
    try:
        result = bench_train(config, steps)
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
    rows: list[dict[str, float]] = []
    for label, lo, hi in spans:
        if label != "rollout":
            continue
        inside = [s for s in spans if s[0] != "rollout" and lo <= s[1] and s[2] <= hi]
        plays = [s for s in inside if s[0] == "play"]
        finishes = [s for s in inside if s[0] == "finish"]
        if len(plays) != 1 or len(finishes) != 1:
            raise SystemExit(
                "a rollout was not collected over several processes (its own share played, "
                "the helpers' finished): is the config's vec_env batched and its workers 2 or more?"
            )
        (play,), (finish,) = plays, finishes
        rows.append(
            {
                "start": play[1] - lo,
                "play": play[2] - play[1],
                "poll": sum(s[2] - s[1] for s in inside if s[0] == "poll"),
                "finish": finish[2] - play[2],
                "after": hi - finish[2],
                "rollout": hi - lo,
            }
        )
    kept = rows[skip:]
    if not kept:
        raise SystemExit(f"{len(rows)} rollouts, all skipped: more --steps or a smaller --skip")
    return {
        "config": config_path,
        "set": overrides,
        "workers": config.workers,
        "steps": result["steps"],
        "rollouts": len(rows),
        "skipped": skip,
        "collection_steps_per_s": result["collection_steps_per_s"],
        "ms_median": {key: 1e3 * statistics.median(r[key] for r in kept) for key in kept[0]},
        "ms_per_rollout": [{key: 1e3 * value for key, value in r.items()} for r in rows],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--steps", type=int, default=2**18)
    parser.add_argument("--skip", type=int, default=8)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    report = measure(args.config, args.overrides, args.steps, args.skip)
    parts = ", ".join(f"{key} {value:.2f}" for key, value in report["ms_median"].items())
    print(
        f"{report['rollouts']} rollouts ({report['skipped']} skipped), ms a rollout (medians): "
        f"{parts}; {report['collection_steps_per_s']:,.0f} steps/s collecting"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return report


if __name__ == "__main__":
    main()
