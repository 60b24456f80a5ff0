"""Speed benchmarks: random legal games through the AEC loop and through the vector engine
(alternating, with their ratio), and the deadwood solver."""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.random_agent import RandomPolicy
from rummyzoo.cli.common import Parents, check_outputs, parse_options, platform_info
from rummyzoo.envs.cards import to_mask
from rummyzoo.envs.files import write_json
from rummyzoo.envs.melds import MeldSolver
from rummyzoo.envs.native import compiled_kernels
from rummyzoo.envs.play import play_aec
from rummyzoo.envs.registry import make_env, make_vector
from rummyzoo.envs.vector import uniform_legal_actions

#: The layers of a profile (:func:`profile_layers`), in the order they are shown.
PROFILE_LAYERS = (
    "rules",
    "match",
    "engine",
    "aec",
    "players",
    "kernels",
    "built-ins",
    "numpy",
    "other",
)
_PACKAGE = Path(__file__).resolve().parent.parent  # the package's root
#: files of the package's envs/ by layer (any other file of envs/ is the rules': the variants'
#: packages, cards, melds, decks)
_ENV_FILES = {
    "vector.py": "engine",
    "workers.py": "engine",
    "match.py": "match",
    "core.py": "match",
    "seeding.py": "match",
    "aec.py": "aec",
    "native.py": "kernels",
    "play.py": "players",
    "registry.py": "other",
}


def code_layer(filename: str) -> str:
    """The layer of :data:`PROFILE_LAYERS` that a profiled function's file belongs to:
    ``rules`` (a variant's rules, cards, melds, decks), ``match`` (hands into matches),
    ``engine`` (the vector engine and its workers), ``aec`` (the AEC env, the variant's env
    module and PettingZoo), ``players`` (the random player and the play loop), ``kernels``
    (the Python side of the compiled kernels), ``built-ins`` (functions written in C: numpy's
    and Python's, the compiled kernels), ``numpy`` (numpy's Python code), ``other``."""
    if filename == "~" or filename.startswith("<"):
        return "built-ins"
    path = Path(filename).resolve()
    try:
        parts = path.relative_to(_PACKAGE).parts
    except ValueError:
        parts = ()
    if not parts or parts[0] not in ("envs", "agents", "cli", "training"):
        # not the package's own code (a virtual environment can lie inside its folder)
        if "pettingzoo" in path.parts:
            return "aec"
        return "numpy" if "numpy" in path.parts else "other"
    if parts[0] == "envs":
        if len(parts) > 2:
            return "rules"
        if parts[1].endswith("_v0.py"):
            return "aec"
        return _ENV_FILES.get(parts[1], "rules")
    if parts[0] == "agents" or parts[:2] == ("cli", "bench.py"):
        return "players"
    return "other"


def profile_layers(run_for: Callable[[float], int], seconds: float) -> dict[str, Any]:
    """Run ``run_for(seconds)`` (a runner that returns the decisions it played) under
    cProfile: the share of the profiled time spent in each layer's own code
    (:func:`code_layer`; cProfile's ``tottime``, so a function's callees count in their own
    layers), with the decisions played. The profiler slows the code down (it times every
    call), so the shares say where the time goes, not how fast it goes."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        decisions = run_for(seconds)
    finally:
        profiler.disable()
    totals = dict.fromkeys(PROFILE_LAYERS, 0.0)
    profiler.create_stats()
    for (filename, _line, _name), stat in profiler.stats.items():  # type: ignore[attr-defined]
        totals[code_layer(filename)] += stat[2]  # own time (tottime)
    total = sum(totals.values())
    return {
        "decisions": decisions,
        "profiled_seconds": total,
        "layers": {k: (v / total if total > 0 else 0.0) for k, v in totals.items()},
    }


def aec_runner(env: Any, policy: Any, rng: np.random.Generator) -> Callable[[float], int]:
    """A runner for ``env`` (reset, ready to play): ``run_for(limit)`` plays whole random
    games through the AEC loop, each followed by an unseeded reset, until ``limit`` seconds
    have passed, and returns the decisions played."""

    def run_for(limit: float) -> int:
        deadline = time.perf_counter() + limit
        decisions = 0
        while True:
            decisions += play_aec(env, policy, rng)[0]
            env.reset()
            if time.perf_counter() >= deadline:
                return decisions

    return run_for


def _show_profile(label: str, profile: dict[str, Any]) -> str:
    shares = sorted(profile["layers"].items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{name} {share:.0%}" for name, share in shares if share >= 0.005)
    return f"  profile of the {label} (own time by layer, cProfile): {shown}"


def bench_env(
    variant: str,
    num_players: int = 2,
    seconds: float = 5.0,
    seed: int = 0,
    wrapped: bool = True,
    options: dict[str, Any] | None = None,
    reseed: bool = False,
    repeat: int = 1,
    profile: bool = False,
) -> dict[str, Any]:
    """Play random legal games for ``seconds`` through ``env.agent_iter()`` / ``last()`` / ``step()``.

    The env is seeded once and then reset without a seed between games, as a training loop
    does (``reseed=True`` reseeds every game instead); a decision is one ``step`` of a live agent.
    With ``repeat`` > 1 the run is that many segments of ``seconds`` each (the games go on
    from one to the next) and ``decisions_per_s`` is the median segment's rate, so a burst of
    load from elsewhere on the machine moves it less; every segment's rate is reported too.
    ``profile``: then one more segment under cProfile gives ``profile["aec"]``
    (:func:`profile_layers`).
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    env = make_env(variant, num_players, wrapped=wrapped, **(options or {}))
    policy = RandomPolicy()
    rng = np.random.default_rng(seed)
    games = decisions = truncated = 0
    rates = []
    game_rates = []
    elapsed = cpu = 0.0
    env.reset(seed=seed)
    warm = time.perf_counter() + min(seconds, 0.5)  # untimed, as the vector engine's warm-up
    while time.perf_counter() < warm:
        play_aec(env, policy, rng)
        env.reset()
    env.reset(seed=seed)  # the timed games: those of the seed
    for _ in range(repeat):
        seg_decisions, seg_games = decisions, games
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
        game_rates.append((games - seg_games) / seg_seconds)
    profiled = None
    if profile:
        env.reset()  # the last timed game has ended
        profiled = {"aec": profile_layers(aec_runner(env, policy, rng), seconds)}
    result = {
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
        # like decisions_per_s, the median segment's rate (games that end in a segment)
        "games_per_s": float(np.median(game_rates)),
        "decisions_per_game": decisions / max(games, 1),
        "cpu_seconds": cpu,
        "decisions_per_cpu_s": decisions / cpu if cpu > 0 else None,
        "truncated_agent_steps": truncated,
    }
    if profiled is not None:
        result["profile"] = profiled
    return result


def _rss(workers: Sequence[Any] = ()) -> int:
    """Resident memory of this process and the memory of the worker processes ``workers``
    (their own pages, the unique set: the libraries and shared blocks that they share with
    this process are counted once, here), in bytes. Other children (multiprocessing's
    resource tracker, its fork server) do not count."""
    import psutil

    total = psutil.Process().memory_info().rss
    for worker in workers:
        with contextlib.suppress(psutil.Error):
            total += psutil.Process(worker.pid).memory_full_info().uss
    return total


def _segments(
    runners: dict[str, Callable[[float], int]], seconds: float, repeat: int
) -> dict[str, list[float]]:
    """Run each runner for ``seconds`` in turn, ``repeat`` rounds: decisions/s per segment."""
    rates: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeat):
        for name, run_for in runners.items():
            start = time.perf_counter()
            decisions = run_for(seconds)
            rates[name].append(decisions / (time.perf_counter() - start))
    return rates


#: Hands every game plays before the engine's memory is read: a game keeps a batch of shuffled
#: decks that doubles up to 64 as its hands use them (``Match._next_deck``), so an engine grows
#: by some 26 KiB a game (a deck of 52) over its first 64 hands, and then holds still.
SETTLE_HANDS = 64
#: The longest the settling may take; a figure read before every game played SETTLE_HANDS
#: hands says how many the least played (``memory_settle_hands``).
SETTLE_SECONDS = 120.0


def settled_memory(
    variant: str,
    num_envs: int,
    num_players: int,
    options: dict[str, Any],
    seed: int,
    workers: int = 1,
) -> dict[str, float]:
    """The memory an engine of ``num_envs`` games holds once every game has played
    :data:`SETTLE_HANDS` hands of random play: ``per_game`` bytes, the ``hands`` the least
    played game played, and the ``seconds`` it took. Measured in a fresh process, as the
    growth of its resident memory (and with workers, their own memory: their interpreters
    included, the pages they share with it counted once) from before the engine was built,
    the variant imported and freed memory handed back, so that little freed memory is there
    to be reused unseen; the engine plays at full speed (traced, its allocations took six
    times as long, and an engine read after a second had not settled: Knock Rummy's 1,024
    games held 16 MiB then and 36 MiB from their 64th hand on)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe(duplex=False)
    spec = (variant, num_envs, num_players, options, seed, workers)
    child = context.Process(target=_memory_child, args=(there, spec), name="rummyzoo-memory")
    child.start()
    there.close()
    try:
        status, value = here.recv()
    except EOFError:
        child.join()
        status, value = "error", f"the process measuring memory ended ({child.exitcode})"
    except BaseException:  # stopped (Ctrl-C, SIGTERM): the measuring process stops too
        child.terminate()
        raise
    finally:
        child.join()
    if status != "ok":
        raise RuntimeError(f"measuring the engine's memory failed: {value}")
    return value


def _memory_child(conn: Any, spec: tuple[Any, ...]) -> None:
    """:func:`settled_memory`'s measurement, in its own process; sends ``("ok", result)`` or
    ``("error", text)``."""
    import gc
    import traceback

    try:
        variant, num_envs, num_players, options, seed, workers = spec
        make_vector(variant, 1, num_players, **options)  # imports the variant: not the games'
        gc.collect()
        _trim()
        before = _rss()
        if workers > 1:
            from rummyzoo.envs.workers import WorkerVectorEnv

            vec: Any = WorkerVectorEnv(
                variant, num_envs, num_players, num_workers=workers, **options
            )
        else:
            vec = make_vector(variant, num_envs, num_players, **options)
        vec.reset(seed=seed)
        rng = np.random.default_rng(seed)
        actions = np.empty(num_envs, dtype=np.int64)
        hands = np.zeros(num_envs, dtype=np.int64)
        start = time.perf_counter()
        while hands.min() < SETTLE_HANDS and time.perf_counter() - start < SETTLE_SECONDS:
            for _ in range(16):
                uniform_legal_actions(vec.action_masks, rng, actions)
                vec.step(actions)
                hands += vec.hand_done
        seconds = time.perf_counter() - start
        memory = _rss(getattr(vec, "_procs", ())) - before
        result = {"per_game": memory / num_envs, "hands": int(hands.min()), "seconds": seconds}
        if hasattr(vec, "close"):
            vec.close()
        conn.send(("ok", result))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _trim() -> None:
    """Hand the memory the allocator holds free back to the system, where it can (glibc)."""
    import ctypes
    import ctypes.util

    with contextlib.suppress(OSError, AttributeError, TypeError):
        name = ctypes.util.find_library("c")
        if name:
            ctypes.CDLL(name).malloc_trim(0)


def bench_vector(
    variant: str,
    num_envs: int,
    num_players: int = 2,
    seconds: float = 5.0,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    repeat: int = 1,
    workers: int = 1,
    compare: bool = True,
    profile: bool = False,
) -> dict[str, Any]:
    """Random legal play through the vector engine (``num_envs`` games, one batched random
    pick per step), alternating segment by segment with the AEC loop of :func:`bench_env`
    (``compare``), so both see the same machine; rates are the median segment's.

    ``memory_per_game_bytes`` is what an engine of the same games holds once it has settled,
    divided by ``num_envs``: measured in a fresh process (:func:`settled_memory`), the growth
    of its resident memory (with workers, and the workers' own memory) from before the engine
    was built to when every game has played :data:`SETTLE_HANDS` hands.

    ``profile``: after the timed segments, one more segment of each setup under cProfile
    gives ``profile["vector"]`` (and ``profile["aec"]``): where each one's time goes by layer
    (:func:`profile_layers`). One process only.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    if profile and workers > 1:
        raise ValueError("--profile times one process: leave out --workers")
    options = dict(options or {})
    memory = settled_memory(variant, num_envs, num_players, options, seed, workers)
    if workers > 1:
        from rummyzoo.envs.workers import WorkerVectorEnv

        vec: Any = WorkerVectorEnv(variant, num_envs, num_players, num_workers=workers, **options)
    else:
        vec = make_vector(variant, num_envs, num_players, **options)
    vec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = np.empty(num_envs, dtype=np.int64)
    # decisions per match: the whole length of each match that ended (the decisions of those
    # still being played would weigh the few that ended)
    counts = {"matches": 0, "decisions": 0}
    played = np.zeros(num_envs, dtype=np.int64)  # decisions of each game's match so far

    def run_vector(limit: float) -> int:
        # what is timed: the random picks and the steps, nothing of the benchmark's own
        deadline = time.perf_counter() + limit
        steps = 0
        while True:
            for _ in range(8):
                uniform_legal_actions(vec.action_masks, rng, actions)
                vec.step(actions)
            steps += 8
            if time.perf_counter() >= deadline:
                break
        return steps * num_envs

    def count_matches(limit: float) -> None:
        """Untimed: the whole length of each match that ends (the decisions of those still
        being played would weigh the few that ended)."""
        played[:] = 0  # from a match's start: those under way are counted from their next
        fresh = np.zeros(num_envs, dtype=bool)
        deadline = time.perf_counter() + limit
        while time.perf_counter() < deadline:
            uniform_legal_actions(vec.action_masks, rng, actions)
            vec.step(actions)
            np.add(played, 1, out=played)
            ended = vec.terminated | vec.truncated
            if ended.any():
                whole = ended & fresh
                counts["matches"] += int(whole.sum())
                counts["decisions"] += int(played[whole].sum())
                played[ended] = 0
                fresh |= ended

    run_vector(min(seconds, 1.0))  # warm-up: every game has dealt and played
    counts["matches"] = counts["decisions"] = 0
    runners: dict[str, Callable[[float], int]] = {"vector": run_vector}
    if compare:
        env = make_env(variant, num_players, **options)
        policy = RandomPolicy()
        aec_rng = np.random.default_rng(seed)
        env.reset(seed=seed)

        runners = {"aec": aec_runner(env, policy, aec_rng), "vector": run_vector}
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    rates = _segments(runners, seconds, repeat)
    wall = time.perf_counter() - wall_start
    cpu = time.process_time() - cpu_start
    profiled = (
        {name: profile_layers(run_for, seconds) for name, run_for in runners.items()}
        if profile
        else None
    )
    count_matches(seconds * repeat)  # as long as the timed segments
    timed = dict(counts)
    if hasattr(vec, "close"):
        vec.close()
    result: dict[str, Any] = {
        "variant": variant,
        "num_players": num_players,
        "num_envs": num_envs,
        "workers": workers,
        "options": options,
        "code": "compiled kernels" if compiled_kernels() is not None else "pure Python",
        "seconds_per_segment": seconds,
        "repeat": repeat,
        "vector_decisions_per_s": float(np.median(rates["vector"])),
        "vector_decisions_per_s_segments": rates["vector"],
        "vector_decisions_per_s_per_worker": float(np.median(rates["vector"])) / workers,
        "vector_matches": timed["matches"],
        "vector_decisions_per_match": (
            timed["decisions"] / timed["matches"] if timed["matches"] else None
        ),
        "memory_per_game_bytes": memory["per_game"],
        "memory_measure": "rss",
        "memory_settle_hands": memory["hands"],
        "memory_settle_seconds": memory["seconds"],
        # what the engine held for its num_envs games (a per-game figure from few games
        # carries the engine's fixed part, and with workers their processes')
        "memory_mb": memory["per_game"] * num_envs / 2**20,
        "parent_cpu_seconds": cpu,
        "wall_seconds": wall,
    }
    if compare:
        aec = float(np.median(rates["aec"]))
        result["aec_decisions_per_s"] = aec
        result["aec_decisions_per_s_segments"] = rates["aec"]
        result["ratio_vector_to_aec"] = result["vector_decisions_per_s"] / aec
        result["ratio_segments"] = [
            v / a for v, a in zip(rates["vector"], rates["aec"], strict=True)
        ]
    if profiled is not None:
        result["profile"] = profiled
    return result


def bench_deadwood(hands: int = 20000, hand_size: int = 11, seed: int = 0) -> dict[str, Any]:
    """Median and mean microseconds of the exact aces-low deadwood solver per random hand:
    each hand timed on its own, less the median time of the clock's own reading (an empty
    interval, some 60 ns here: a third of the compiled solver's time).

    A fresh solver is used so nothing is cached between runs of the benchmark.
    """
    rng = np.random.default_rng(seed)
    masks = [to_mask(rng.choice(52, size=hand_size, replace=False)) for _ in range(hands)]
    solver = MeldSolver(ace="low")
    times = np.empty(hands)
    clock = time.perf_counter_ns
    for i in range(hands):
        t = clock()
        times[i] = clock() - t
    timer = float(np.median(times))
    for i, m in enumerate(masks):
        t = clock()
        solver.solve_mask(m)
        times[i] = clock() - t
    times -= timer
    return {
        "deadwood_solver": solver.backend,
        "deadwood_hand_size": hand_size,
        "deadwood_hands": hands,
        "deadwood_median_us": float(np.median(times) / 1000),
        "deadwood_mean_us": float(times.mean() / 1000),
        "deadwood_p99_us": float(np.percentile(times, 99) / 1000),
        "deadwood_timer_us": timer / 1000,
    }


#: Random 11-card hands the Knock Rummy deadwood solver is timed on.
DEADWOOD_HANDS = 20000


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    bench = sub.add_parser(
        "bench-env",
        parents=[parents.game(), parents.seed(), parents.options()],
        help="random legal games through the AEC loop (or the vector engine): speed in JSON",
        description="Play random legal games of VARIANT for --seconds through the AEC env and "
        "report decisions/s (with --num-envs N, through the vector engine of N games as well, "
        "alternating with the AEC loop, and the ratio, and the engine's memory per game; "
        "--workers splits the engine over processes) and, for Knock Rummy, the deadwood "
        "solver's time per hand. --profile adds where the time goes by layer; --json writes "
        "it all.",
    )
    bench.add_argument(
        "--seconds", type=float, default=5.0, help="length of each timed segment (default 5)"
    )
    bench.add_argument("--raw", action="store_true", help="bench raw_env instead of env()")
    bench.add_argument("--reseed", action="store_true", help="reset with a new seed every game")
    bench.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run this many segments of --seconds; decisions/s is the median segment's rate "
        "(default 1)",
    )
    bench.add_argument(
        "--deadwood-hands",
        type=int,
        help=f"hands for the Knock Rummy deadwood-solver timing (knock_rummy only; default "
        f"{DEADWOOD_HANDS:,})",
    )
    bench.add_argument(
        "--num-envs",
        type=int,
        metavar="N",
        help="bench the vector engine with N games, alternating with the AEC loop (ratio)",
    )
    bench.add_argument(
        "--workers", type=int, default=1, help="worker processes of the vector engine"
    )
    bench.add_argument(
        "--no-compare",
        action="store_true",
        help="with --num-envs: time the vector engine only (no AEC segments)",
    )
    bench.add_argument(
        "--profile",
        action="store_true",
        help="then one more segment of each setup under cProfile: the share of its time in "
        "each layer's own code (rules, match, engine, aec, players, kernels, built-ins, ...)",
    )
    bench.add_argument("--json", metavar="PATH", help="write the results here")
    bench.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_outputs(args, "json")
    run_bench(args)
    return 0


def _write_json(result: dict[str, Any], path: str | None) -> None:
    if path:
        out = write_json(result, path)
        print(f"wrote {out}")


def _platform(result: dict[str, Any]) -> None:
    result.update(platform_info())


def run_vector_bench(args: Any, options: dict[str, Any]) -> dict[str, Any]:
    if args.num_envs < 1:
        raise ValueError(f"--num-envs must be at least 1, got {args.num_envs}")
    if not 1 <= args.workers <= args.num_envs:
        raise ValueError(f"--workers must be 1..{args.num_envs}, got {args.workers}")
    result = bench_vector(
        args.variant,
        args.num_envs,
        args.players,
        args.seconds,
        args.seed,
        options,
        args.repeat,
        args.workers,
        compare=not args.no_compare,
        profile=args.profile,
    )
    _platform(result)
    shown = ", ".join(f"{k}={v}" for k, v in options.items())
    print(
        f"{args.variant} ({args.players} players, {result['code']}"
        f"{', ' + shown if shown else ''}): vector engine, {args.num_envs} games, "
        f"{args.workers} worker{'s' if args.workers > 1 else ''}: "
        f"{result['vector_decisions_per_s']:,.0f} decisions/s "
        f"({result['vector_decisions_per_s_per_worker']:,.0f} per worker), "
        + (
            f"{result['vector_decisions_per_match']:.1f} decisions/match"
            if result["vector_decisions_per_match"] is not None
            else "no match finished in the timed segments"
        )
    )
    if "aec_decisions_per_s" in result:
        ratios = ", ".join(f"{r:.2f}" for r in result["ratio_segments"])
        print(
            f"  AEC loop in alternate segments: {result['aec_decisions_per_s']:,.0f} decisions/s;"
            f" vector / AEC = {result['ratio_vector_to_aec']:.2f}x (per segment: {ratios})"
        )
    print(
        f"  memory: {result['memory_mb']:,.1f} MiB for {result['num_envs']:,} games "
        f"({result['memory_per_game_bytes'] / 1024:,.1f} KiB a game, fixed parts included; "
        f"settled: every game played {result['memory_settle_hands']:,} hands)"
    )
    for name, label in (("vector", "vector engine"), ("aec", "AEC loop")):
        if name in result.get("profile", {}):
            print(_show_profile(label, result["profile"][name]))
    _write_json(result, args.json)
    return result


def run_bench(args: Any) -> dict[str, Any]:
    import math

    if not (math.isfinite(args.seconds) and args.seconds > 0):
        raise ValueError(f"--seconds must be a positive number, got {args.seconds}")
    if args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, got {args.repeat}")
    hands = args.deadwood_hands
    if hands is not None and hands < 1:
        raise ValueError(f"--deadwood-hands must be at least 1, got {hands}")
    if args.variant != "knock_rummy" and hands is not None:
        raise ValueError(
            f"--deadwood-hands times Knock Rummy's deadwood solver: {args.variant} has none"
        )
    options = parse_options(args.option)
    if "render_mode" in options:
        raise ValueError(
            "--option render_mode: the benchmarks time play without rendering (the vector "
            "engine has no renderer to match the AEC env's)"
        )
    if args.num_envs is not None:
        aec_only = [
            flag
            for flag, on in (
                ("--raw", args.raw),
                ("--reseed", args.reseed),
                ("--deadwood-hands", hands is not None),
            )
            if on
        ]
        if aec_only:
            raise ValueError(
                f"{' and '.join(aec_only)} time the AEC loop alone: leave out --num-envs"
            )
        return run_vector_bench(args, options)
    given = [
        flag
        for flag, on in (("--workers", args.workers != 1), ("--no-compare", args.no_compare))
        if on
    ]
    if given:
        raise ValueError(
            f"{' and '.join(given)} time the vector engine: give --num-envs N with them"
        )
    result = bench_env(
        args.variant,
        args.players,
        args.seconds,
        args.seed,
        wrapped=not args.raw,
        reseed=args.reseed,
        options=options,
        repeat=args.repeat,
        profile=args.profile,
    )
    result["options"] = options
    if args.variant == "knock_rummy":  # the solver of Knock Rummy's deadwood
        result.update(bench_deadwood(hands=DEADWOOD_HANDS if hands is None else hands))
    _platform(result)
    shown = ", ".join(f"{k}={v}" for k, v in options.items())
    print(
        f"{result['variant']} ({result['num_players']} players, {result['api']}, {result['code']}"
        f"{', ' + shown if shown else ''}): "
        f"{result['decisions_per_s']:,.0f} decisions/s, {result['games_per_s']:,.1f} games/s"
        f"{' (median segment)' if result['repeat'] > 1 else ''}; "
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
            f"deadwood solver: median {result['deadwood_median_us']:.2f} us, mean "
            f"{result['deadwood_mean_us']:.2f} us, p99 {result['deadwood_p99_us']:.2f} us per "
            f"{result['deadwood_hand_size']}-card hand ({result['deadwood_solver']} search)"
        )
    if "profile" in result:
        print(_show_profile("AEC loop", result["profile"]["aec"]))
    _write_json(result, args.json)
    return result
