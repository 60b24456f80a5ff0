"""Where the vector engine's time goes, measured without a profiler (a measurement script).

Random legal play through the vector engine, as ``rummyzoo bench-env VARIANT --num-envs N``
plays it, on one core (run it under ``taskset -c 1``)::

    python docs/experiments/vector_parts.py VARIANT [--players P] [--num-envs N]
        timers around the parts of each step: nanoseconds a decision in the compiled step, the
        hands' ends (the compiled finish with the next deals and restarts; what it leaves to
        the Python code, ``Match.played`` and the engine's rows of them), the check of the
        actions, the rows written by Python, the random picks, and the whole step (a JSON list:
        an object of them for each span)
    python docs/experiments/vector_parts.py VARIANT --sizes 8 32 256 1024
        decisions/s of engines of several sizes, alternating in one process (medians)
    python docs/experiments/vector_parts.py VARIANT --gc
        the same loop with Python's garbage collector on and off, alternating (the ratio)

``--json PATH`` writes what it printed.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from rummyzoo.cli.common import parse_options
from rummyzoo.envs import match as match_module
from rummyzoo.envs.registry import make_vector
from rummyzoo.envs.vector import VectorEnv, uniform_legal_actions


class Player:
    """An engine of ``num_envs`` games and its random player."""

    def __init__(
        self, variant: str, num_envs: int, players: int, seed: int = 0, **options: Any
    ) -> None:
        self.engine = make_vector(variant, num_envs, players, **options)
        self.engine.reset(seed=seed)
        self.rng = np.random.default_rng(seed)
        self.actions = np.empty(num_envs, dtype=np.int64)
        self.picking = 0  # nanoseconds in the random picks

    def steps(self, seconds: float) -> tuple[int, int]:
        """Play for ``seconds``: (decisions, nanoseconds)."""
        engine, rng, actions = self.engine, self.rng, self.actions
        start = time.perf_counter_ns()
        deadline = start + seconds * 1e9
        steps = 0
        now = start
        while now < deadline:
            uniform_legal_actions(engine.action_masks, rng, actions)
            picked = time.perf_counter_ns()
            self.picking += picked - now
            engine.step(actions)
            steps += 1
            now = time.perf_counter_ns()
        return steps * engine.num_envs, now - start


@contextmanager
def timers(engine: VectorEnv, spent: dict[str, int]) -> Iterator[None]:
    """Add the nanoseconds of each timed part of ``engine``'s steps to ``spent``."""
    undo: list[tuple[Any, str, Any]] = []

    def wrap(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            begun = time.perf_counter_ns()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0) + time.perf_counter_ns() - begun

        undo.append((owner, name, owner.__dict__.get(name)))
        setattr(owner, name, timed)

    wrap(VectorEnv, "check", "check")
    wrap(VectorEnv, "_finish_compiled", "compiled finish")
    wrap(VectorEnv, "_hands_ended", "hands' rows")
    wrap(VectorEnv, "_write_rows", "rows by Python")
    wrap(match_module.Match, "played", "Match.played")
    if engine.game.play_batch is not None:
        wrap(engine.game, "play_batch", "compiled step")
    try:
        yield
    finally:
        for owner, name, before in reversed(undo):
            if before is None:
                delattr(owner, name)
            else:
                setattr(owner, name, before)


def parts(
    variant: str, players: int, num_envs: int, seconds: float, spans: int, **options: Any
) -> list[dict]:
    """Nanoseconds a decision in each part, one dict per span."""
    player = Player(variant, num_envs, players, **options)
    player.steps(min(seconds, 1.0))  # warm-up: every game has dealt and played
    out = []
    for _ in range(spans):
        spent: dict[str, int] = {}
        player.picking = 0
        with timers(player.engine, spent):
            decisions, total = player.steps(seconds)
        row = {label: round(ns / decisions, 1) for label, ns in spent.items()}
        row["random picks"] = round(player.picking / decisions, 1)
        row["decision"] = round(total / decisions, 1)
        out.append(row)
    return out


def alternate(runs: dict[str, Callable[[float], float]], seconds: float, rounds: int) -> dict:
    """Each run's rate in ``rounds`` alternating segments: the medians and every segment's."""
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            rates[name].append(run(seconds))
    return {name: {"median": statistics.median(r), "segments": r} for name, r in rates.items()}


def rate_of(player: Player) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        decisions, ns = player.steps(seconds)
        return decisions / ns * 1e9

    return run


def sizes(variant: str, players: int, counts: list[int], seconds: float, rounds: int) -> dict:
    """Decisions/s of engines of each size, alternating."""
    runs = {str(n): rate_of(Player(variant, n, players)) for n in counts}
    for run in runs.values():
        run(min(seconds, 0.5))
    return alternate(runs, seconds, rounds)


def gc_ratio(variant: str, players: int, num_envs: int, seconds: float, rounds: int) -> dict:
    """Decisions/s with the garbage collector on and off, alternating, and their ratio."""
    play = rate_of(Player(variant, num_envs, players))
    play(min(seconds, 1.0))

    def switched(on: bool) -> Callable[[float], float]:
        def run(s: float) -> float:
            (gc.enable if on else gc.disable)()
            try:
                return play(s)
            finally:
                gc.enable()

        return run

    result = alternate({"on": switched(True), "off": switched(False)}, seconds, rounds)
    pairs = zip(result["on"]["segments"], result["off"]["segments"], strict=True)
    ratios = [b / a for a, b in pairs]
    result["off / on"] = {"median": statistics.median(ratios), "segments": ratios}
    return result


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variant")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=3.0, help="per span or segment")
    ap.add_argument("--spans", type=int, default=3, help="timed spans, or alternating rounds")
    ap.add_argument("--sizes", type=int, nargs="+", help="engine sizes to compare")
    ap.add_argument("--gc", action="store_true", help="the garbage collector on against off")
    ap.add_argument("--json", help="write the result here")
    ap.add_argument(
        "--option", action="append", metavar="KEY=VALUE", help="an env option (timers only)"
    )
    args = ap.parse_args(argv)
    if args.sizes:
        result: Any = sizes(args.variant, args.players, args.sizes, args.seconds, args.spans)
    elif args.gc:
        result = gc_ratio(args.variant, args.players, args.num_envs, args.seconds, args.spans)
    else:
        options = parse_options(args.option)
        result = parts(
            args.variant, args.players, args.num_envs, args.seconds, args.spans, **options
        )
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return {"result": result}


if __name__ == "__main__":
    main()
