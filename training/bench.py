"""Speed benchmarks: random legal games through the full AEC loop, and the deadwood solver."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.random_agent import RandomPolicy
from rummyzoo.envs.cards import to_mask
from rummyzoo.envs.melds import MeldSolver
from rummyzoo.envs.registry import make_env


def bench_env(
    variant: str,
    num_players: int = 2,
    seconds: float = 5.0,
    seed: int = 0,
    wrapped: bool = True,
    options: dict[str, Any] | None = None,
    reseed: bool = False,
) -> dict[str, Any]:
    """Play random legal games for ``seconds`` through ``env.agent_iter()`` / ``last()`` / ``step()``.

    The env is seeded once and then reset without a seed between games, as a training loop
    does (``reseed=True`` reseeds every game instead); a decision is one ``step`` of a live agent.
    """
    env = make_env(variant, num_players, wrapped=wrapped, **(options or {}))
    policy = RandomPolicy()
    rng = np.random.default_rng(seed)
    games = decisions = truncated = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    deadline = start + seconds
    env.reset(seed=seed)
    while True:
        if games:
            env.reset(seed=seed + games if reseed else None)
        for _agent in env.agent_iter():
            obs, _reward, terminated, trunc, _info = env.last()
            if terminated or trunc:
                truncated += trunc
                env.step(None)
                continue
            env.step(policy.act(obs["observation"], obs["action_mask"], rng))
            decisions += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return {
        "variant": variant,
        "num_players": num_players,
        "api": "env() (wrapped)" if wrapped else "raw_env",
        "reseed_every_game": reseed,
        "seconds": elapsed,
        "games": games,
        "decisions": decisions,
        "decisions_per_s": decisions / elapsed,
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
        "deadwood_hand_size": hand_size,
        "deadwood_hands": hands,
        "deadwood_median_us": float(np.median(times) / 1000),
        "deadwood_mean_us": float(times.mean() / 1000),
        "deadwood_p99_us": float(np.percentile(times, 99) / 1000),
    }


def run_bench(args: Any) -> dict[str, Any]:
    from rummyzoo.training.arena import parse_options

    options = parse_options(args.option)
    result = bench_env(
        args.variant,
        args.players,
        args.seconds,
        args.seed,
        wrapped=not args.raw,
        reseed=args.reseed,
        options=options,
    )
    result["options"] = options
    result.update(bench_deadwood(hands=args.deadwood_hands))
    result["python"] = platform.python_version()
    result["numpy"] = np.__version__
    result["machine"] = platform.machine()
    shown = ", ".join(f"{k}={v}" for k, v in options.items())
    print(
        f"{result['variant']} ({result['num_players']} players, {result['api']}"
        f"{', ' + shown if shown else ''}): "
        f"{result['decisions_per_s']:,.0f} decisions/s, {result['games_per_s']:,.1f} games/s, "
        f"{result['decisions_per_game']:.1f} decisions/game over {result['games']} games "
        f"in {result['seconds']:.1f}s ({result['decisions_per_cpu_s']:,.0f} per CPU-second)"
    )
    print(
        f"deadwood solver: median {result['deadwood_median_us']:.1f} us, mean "
        f"{result['deadwood_mean_us']:.1f} us, p99 {result['deadwood_p99_us']:.1f} us per "
        f"{result['deadwood_hand_size']}-card hand"
    )
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {path}")
    return result
