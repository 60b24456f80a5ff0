"""Evaluation of a policy or checkpoint against the baselines, through the arena."""

from __future__ import annotations

from typing import Any

import numpy as np

from rummyzoo.agents.base import Policy
from rummyzoo.agents.registry import agent_names, make_agent
from rummyzoo.envs.registry import make_env
from rummyzoo.training.arena import run_arena, summarize


def evaluate_policy(
    policy: Policy,
    opponent: str,
    variant: str,
    num_players: int,
    options: dict[str, Any],
    deals: int,
    seed: int,
    workers: int = 1,
) -> dict[str, Any]:
    """The policy against ``num_players - 1`` copies of ``opponent`` on duplicate deals.

    Returns the policy's arena entry: ``win_rate``, ``win_rate_ci``, ``mean_points``,
    ``mean_points_ci``, ``games``.
    """
    agents: list[Any] = [policy] + [opponent] * (num_players - 1)
    result = run_arena(
        variant, num_players, agents, deals=deals, seed=seed, options=options, workers=workers
    )
    report = summarize(result, resamples=0)
    return report["agents"][result.labels[0]]


def baseline_names(variant: str) -> list[str]:
    """Random play and every heuristic of a variant."""
    return [n for n in agent_names(variant) if n == "random" or n.startswith(_prefix(variant))]


def _prefix(variant: str) -> str:
    return {"knock_rummy": "knock.", "ditch_rummy": "ditch.", "rummy500": "rummy500."}.get(
        variant, variant + "."
    )


def sample_game_text(
    policy: Policy,
    opponent: str,
    variant: str,
    num_players: int,
    options: dict[str, Any],
    seed: int,
) -> str:
    """One full game, the policy in seat 0 against ``opponent``, as readable text."""
    env = make_env(variant, num_players, wrapped=False, render_mode="ansi", **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seats: list[Policy] = [policy] + [
        make_agent(opponent, variant, num_players, options) for _ in range(num_players - 1)
    ]
    for s, p in enumerate(seats):
        p.reset(s)
    lines = [f"learner = player_0, opponents = {opponent}", env.render(), ""]
    infos: dict[str, Any] = {}
    for agent in env.agent_iter(max_iter=20_000):
        obs, _r, term, trunc, _info = env.last()
        if term or trunc:
            infos[agent] = dict(env.infos.get(agent, {}))
            env.step(None)
            continue
        seat = env.agent_name_mapping[agent]
        action = seats[seat].act(obs["observation"], obs["action_mask"], rng)
        lines.append(f"{agent}: {env.action_name(action)}")
        hands = env._hand_index
        env.step(action)
        if env._hand_index > hands and not any(env.terminations.values()):
            points = ", ".join(f"{a} {env.infos[a]['points']:+g}" for a in env.possible_agents)
            lines += [f"-- hand {env._hand_index} over: {points}; next hand --", env.render(), ""]
    lines.append(env.render())
    lines.append("points: " + ", ".join(f"{a} {i.get('points', 0):+g}" for a, i in infos.items()))
    return "\n".join(lines)
