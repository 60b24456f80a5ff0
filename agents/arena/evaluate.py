"""Evaluation of a policy or checkpoint against the baselines, through the arena."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.arena import ArenaWorkers, run_arena, summarize
from rummyzoo.agents.base import Policy
from rummyzoo.agents.registry import AGENTS, make_agent
from rummyzoo.envs.match import HandEnd, Match
from rummyzoo.envs.play import Deal, Decision, play_episode
from rummyzoo.envs.registry import make_match
from rummyzoo.envs.replay import Recorder


def evaluate_policy(
    policy: Policy | str, opponent: str, *args: Any, **kwargs: Any
) -> dict[str, Any]:
    """The policy against ``num_players - 1`` copies of ``opponent`` on duplicate deals,
    ``batch`` games at once (a network policy decides for all of them with one call); the
    arguments are :func:`evaluation_report`'s.

    Returns the policy's arena entry: ``win_rate``, ``win_rate_ci``, ``mean_points``,
    ``mean_points_ci``, ``games``.
    """
    report, label = evaluation_report(policy, opponent, *args, **kwargs)
    return policy_entry(report, label)


#: A table of the policy and copies of one opponent rates them anchored at their mean (the
#: arena's report says so); alone in the policy's entry those figures would pass for ratings
#: anchored at random play, so the entry leaves them out (the report's gaps remain).
_TABLE_RATINGS = ("rating", "rating_ci", "rating_se")


def policy_entry(report: dict[str, Any], label: str) -> dict[str, Any]:
    """The policy's entry of an :func:`evaluation_report`, without the table's ratings."""
    return {k: v for k, v in report["agents"][label].items() if k not in _TABLE_RATINGS}


def evaluation_report(
    policy: Policy | str,
    opponent: str,
    variant: str,
    num_players: int,
    options: dict[str, Any],
    deals: int,
    seed: int,
    workers: int = 1,
    batch: int = 64,
    resamples: int = 0,
    quiet: bool = True,
    pool: ArenaWorkers | None = None,
    keep_deals: str | Path | None = None,
    pinned: dict[str, str] | None = None,
) -> tuple[dict[str, Any], str]:
    """The arena's report of the policy against ``num_players - 1`` copies of ``opponent`` on
    ``deals`` duplicate deals (``batch`` games at once), and the policy's label in it
    (``resamples``: the ratings' bootstrap, for 3 or more players; ``pool``: worker processes
    kept from one opponent to the next, in place of ``workers`` new ones; ``keep_deals``: the
    arena's file of its deals, and ``pinned``, checkpoint files read already: see
    :func:`~rummyzoo.agents.arena.run_arena`)."""
    agents: list[Any] = [policy] + [opponent] * (num_players - 1)
    result = run_arena(
        variant,
        num_players,
        agents,
        deals=deals,
        seed=seed,
        options=options,
        workers=workers,
        quiet=quiet,
        batch=batch,
        # the policy sits after and before the copies alike in their rotations, and only its
        # figures are read
        seating="rotations",
        pool=pool,
        keep_deals=keep_deals,
        pinned=pinned,
    )
    return summarize(result, resamples=resamples), result.labels[0]


def kept_deals_file(folder: str | Path, opponent: str) -> Path:
    """The file in ``folder`` that keeps the deals of the evaluation against ``opponent``:
    its name as it is where it makes a plain file name, else its plain characters and a short
    hash of the whole (a checkpoint's path, settings in parentheses)."""
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", opponent).strip("._") or "opponent"
    if plain != opponent:
        plain = f"{plain[-60:]}-{hashlib.sha256(opponent.encode()).hexdigest()[:10]}"
    return Path(folder) / f"{plain}.npz"


def baseline_names(variant: str) -> list[str]:
    """Random play and every heuristic shipped for a variant (in the registry's order)."""
    return [name for name, (_, _, only) in AGENTS.items() if only in (None, variant)]


def sample_game(
    policy: Policy,
    opponent: str,
    variant: str,
    num_players: int,
    options: dict[str, Any],
    seed: int,
) -> tuple[str, dict[str, Any]]:
    """One full game, the policy in seat 0 against ``opponent``: as readable text, and as a
    replay (recorded in the same pass; the learner is recorded as ``learner``)."""
    match = make_match(variant, num_players, options, "the sample game", render_mode="ansi")
    seats: list[Policy] = [policy] + [
        make_agent(opponent, variant, num_players, options) for _ in range(num_players - 1)
    ]
    lines = [f"learner = player_0, opponents = {opponent}"]
    recorder = Recorder(variant, options, ["learner"] + [opponent] * (num_players - 1), seed)

    def table() -> str:
        return match.game.render(match.state, None, match.totals_by_seat())

    def write(event: Any, match: Match) -> None:
        recorder(event, match)
        if type(event) is Deal and event.hand == 1:
            lines.extend([table(), ""])
        elif type(event) is Decision:
            lines.append(f"player_{event.seat}: {match.game.action_name(event.action)}")
        elif type(event) is HandEnd and not event.match_over:
            points = ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(event.points))
            lines.extend([f"-- hand {event.index} over: {points}; next hand --", table(), ""])

    episode = play_episode(match, seats, np.random.default_rng(seed), seed=seed, on_event=write)
    last = episode.last
    lines.append(match.game.render(last.state, None, match.totals_by_seat()))
    # the episode's points (a match's totals, a team's for each member), not the last hand's
    points = episode.points.tolist()
    lines.append("points: " + ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(points)))
    return "\n".join(lines), recorder.to_dict()
