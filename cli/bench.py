"""Speed benchmarks: random legal games through the full AEC loop, and the deadwood solver."""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.random_agent import RandomPolicy
from rummyzoo.cli.common import Parents, parse_options
from rummyzoo.envs.cards import to_mask
from rummyzoo.envs.melds import MeldSolver
from rummyzoo.envs.native import compiled_kernels
from rummyzoo.envs.play import play_aec
from rummyzoo.envs.registry import make_env


def bench_env(
    variant: str,
    num_players: int = 2,
    seconds: float = 5.0,
    seed: int = 0,
    wrapped: bool = True,
    options: dict[str, Any] | None = None,
    reseed: bool = False,
    repeat: int = 1,
) -> dict[str, Any]:
    """Play random legal games for ``seconds`` through ``env.agent_iter()`` / ``last()`` / ``step()``.

    The env is seeded once and then reset without a seed between games, as a training loop
    does (``reseed=True`` reseeds every game instead); a decision is one ``step`` of a live agent.
    With ``repeat`` > 1 the run is that many segments of ``seconds`` each (the games go on
    from one to the next) and ``decisions_per_s`` is the median segment's rate, so a burst of
    load from elsewhere on the machine moves it less; every segment's rate is reported too.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    env = make_env(variant, num_players, wrapped=wrapped, **(options or {}))
    policy = RandomPolicy()
    rng = np.random.default_rng(seed)
    games = decisions = truncated = 0
    rates = []
    elapsed = cpu = 0.0
    env.reset(seed=seed)
    for _ in range(repeat):
        seg_decisions = decisions
        start = time.perf_counter()
        cpu_start = time.process_time()
        deadline = start + seconds
        while True:
            if games:
                env.reset(seed=seed + games if reseed else None)
            played, cut = play_aec(env, policy, rng)
            decisions += played
            truncated += cut
            games += 1
            if time.perf_counter() >= deadline:
                break
        seg_seconds = time.perf_counter() - start
        cpu += time.process_time() - cpu_start
        elapsed += seg_seconds
        rates.append((decisions - seg_decisions) / seg_seconds)
    return {
        "variant": variant,
        "num_players": num_players,
        "api": "env() (wrapped)" if wrapped else "raw_env",
        # The compiled kernels (envs/_native.c) where built; else the pure-Python code.
        "code": "compiled kernels" if compiled_kernels() is not None else "pure Python",
        "reseed_every_game": reseed,
        "seconds": elapsed,
        "games": games,
        "decisions": decisions,
        "decisions_per_s": float(np.median(rates)),
        "decisions_per_s_segments": rates,
        "decisions_per_s_best": max(rates),
        "repeat": repeat,
        "games_per_s": games / elapsed,
        "decisions_per_game": decisions / max(games, 1),
        "cpu_seconds": cpu,
        "decisions_per_cpu_s": decisions / cpu if cpu > 0 else None,
        "truncated_agent_steps": truncated,
    }


def bench_deadwood(hands: int = 20000, hand_size: int = 11, seed: int = 0) -> dict[str, Any]:
    """Median and mean microseconds of the exact aces-low deadwood solver per random hand.

    A fresh solver is used so nothing is cached between runs of the benchmark.
    """
    rng = np.random.default_rng(seed)
    masks = [to_mask(rng.choice(52, size=hand_size, replace=False)) for _ in range(hands)]
    solver = MeldSolver(ace="low")
    times = np.empty(hands)
    clock = time.perf_counter_ns
    for i, m in enumerate(masks):
        t = clock()
        solver.solve_mask(m)
        times[i] = clock() - t
    return {
        "deadwood_solver": solver.backend,
        "deadwood_hand_size": hand_size,
        "deadwood_hands": hands,
        "deadwood_median_us": float(np.median(times) / 1000),
        "deadwood_mean_us": float(times.mean() / 1000),
        "deadwood_p99_us": float(np.percentile(times, 99) / 1000),
    }


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    bench = sub.add_parser(
        "bench-env",
        parents=[parents.game(), parents.seed(), parents.options()],
        help="random legal games through the AEC loop: speed in JSON",
    )
    bench.add_argument("--seconds", type=float, default=5.0)
    bench.add_argument("--raw", action="store_true", help="bench raw_env instead of env()")
    bench.add_argument("--reseed", action="store_true", help="reset with a new seed every game")
    bench.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run this many segments of --seconds; decisions/s is the median segment's rate",
    )
    bench.add_argument(
        "--deadwood-hands",
        type=int,
        default=20000,
        help="hands for the Knock Rummy deadwood-solver timing (knock_rummy only)",
    )
    bench.add_argument("--json", metavar="PATH", help="write the results here")
    bench.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    run_bench(args)
    return 0


def run_bench(args: Any) -> dict[str, Any]:
    options = parse_options(args.option)
    result = bench_env(
        args.variant,
        args.players,
        args.seconds,
        args.seed,
        wrapped=not args.raw,
        reseed=args.reseed,
        options=options,
        repeat=args.repeat,
    )
    result["options"] = options
    if args.variant == "knock_rummy":  # the solver of Knock Rummy's deadwood
        result.update(bench_deadwood(hands=args.deadwood_hands))
    result["python"] = platform.python_version()
    result["numpy"] = np.__version__
    result["machine"] = platform.machine()
    shown = ", ".join(f"{k}={v}" for k, v in options.items())
    print(
        f"{result['variant']} ({result['num_players']} players, {result['api']}, {result['code']}"
        f"{', ' + shown if shown else ''}): "
        f"{result['decisions_per_s']:,.0f} decisions/s, {result['games_per_s']:,.1f} games/s, "
        f"{result['decisions_per_game']:.1f} decisions/game over {result['games']} games "
        f"in {result['seconds']:.1f}s ({result['decisions_per_cpu_s']:,.0f} per CPU-second)"
    )
    if result["repeat"] > 1:
        shown = ", ".join(f"{r:,.0f}" for r in result["decisions_per_s_segments"])
        print(
            f"  median of {result['repeat']} segments of {args.seconds:g}s (best "
            f"{result['decisions_per_s_best']:,.0f}): {shown}"
        )
    if "deadwood_solver" in result:
        print(
            f"deadwood solver: median {result['deadwood_median_us']:.1f} us, mean "
            f"{result['deadwood_mean_us']:.1f} us, p99 {result['deadwood_p99_us']:.1f} us per "
            f"{result['deadwood_hand_size']}-card hand ({result['deadwood_solver']} search)"
        )
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {path}")
    return result
