"""The ``rummyzoo`` command line."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from rummyzoo.envs.registry import VARIANTS


def _cmd_bench_env(args: argparse.Namespace) -> int:
    from rummyzoo.training.bench import run_bench

    run_bench(args)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    """Play and print one seeded game between random agents."""
    from rummyzoo.agents.random_agent import RandomPolicy
    from rummyzoo.envs.registry import make_env

    env = make_env(args.variant, args.players, render_mode="ansi")
    env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    policy = RandomPolicy()
    print(env.render())
    for agent in env.agent_iter():
        obs, _reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = policy.act(obs["observation"], obs["action_mask"], rng)
        print(f"{agent}: {env.unwrapped.action_name(action)}")
        env.step(action)
    print(env.render())
    for agent, info in env.unwrapped.infos.items():
        print(f"{agent}: {info.get('points', 0):+g} points")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rummyzoo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser(
        "bench-env", help="random legal games through the AEC loop: speed in JSON"
    )
    bench.add_argument("variant", choices=sorted(VARIANTS))
    bench.add_argument("--players", type=int, default=2)
    bench.add_argument("--seconds", type=float, default=5.0)
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--raw", action="store_true", help="bench raw_env instead of env()")
    bench.add_argument("--reseed", action="store_true", help="reset with a new seed every game")
    bench.add_argument("--deadwood-hands", type=int, default=20000)
    bench.add_argument("--json", metavar="PATH", help="write the results here")
    bench.set_defaults(func=_cmd_bench_env)

    demo = sub.add_parser("demo", help="play and print one seeded game between random agents")
    demo.add_argument("variant", choices=sorted(VARIANTS))
    demo.add_argument("--players", type=int, default=2)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        print(f"rummyzoo {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
