"""The TensorBoard dashboard of a run: what the training callback logs at every evaluation
besides the win rates (see :mod:`rummyzoo.training.callbacks` for every tag).

* :func:`custom_layout`: the CUSTOM SCALARS tab: one chart per evaluation opponent with the
  win rate and its 95% interval as a margin band, one with the points per hand (and its
  interval), the learner's rating with its interval, the anchors' ratings, the strategy
  statistics, the league;
* :func:`cross_table`: a round robin of the learner, its newest pool snapshots and the
  baselines on duplicate deals: Bradley-Terry ratings anchored at random play (0) with bootstrap
  intervals, and the arena heatmap of the cross table (IMAGES tab);
* :func:`strategy_stats`: games of the learner against the first evaluation opponent, with
  :class:`~rummyzoo.training.strategy.StrategyStats` counting what it does (scalars and
  histograms under ``strategy/``);
* :func:`sample_markdown`: a sample game as markdown for the TEXT tab: a table per turn with
  the mover's hand, the table, the move and the legal alternatives.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.training.config import RunConfig

__all__ = ["cross_table", "custom_layout", "sample_markdown", "strategy_stats"]

#: Legal alternatives listed per move in the sample game (the rest are counted).
MAX_ALTERNATIVES = 12
#: Moves written out in the sample game's text (the replay file has them all).
MAX_SAMPLE_MOVES = 400


def eval_options(config: RunConfig) -> dict[str, Any]:
    return {**config.env_options, **config.evaluation.options}


def tag_name(name: str) -> str:
    """An opponent's name as one part of a TensorBoard tag: a checkpoint's path without the
    folders of the machine it is on (``runs/a/checkpoints/best.rz`` -> ``a.best.rz``: its run
    and its file), so that tags neither nest nor start with ``/``."""
    if "/" not in name and "\\" not in name:
        return name
    path = Path(name)
    parts = [p for p in path.parts[:-1] if p not in ("checkpoints", "pool", "/", "\\")]
    return ".".join([*parts[-1:], path.name])


def tag_names(names: Sequence[str]) -> dict[str, str]:
    """Each of ``names``' tag part (:func:`tag_name`), unique: a name whose part an earlier
    name has (two checkpoints ``a/checkpoints/best.rz`` in other folders) gets a short hash
    of its whole name added, and the first keeps its own (a resumed run's tags stay)."""
    tags: dict[str, str] = {}
    for name in dict.fromkeys(names):
        tag = tag_name(name)
        if tag in tags.values():
            tag = f"{tag}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
        tags[name] = tag
    return tags


def eval_tags(config: RunConfig, earlier: Sequence[str] = ()) -> dict[str, str]:
    """The evaluation opponents' tag parts: ``earlier`` ones (those of a resumed run's
    evaluations so far) first, then the config's."""
    return tag_names([*earlier, *config.evaluation.opponents])


def custom_layout(
    config: RunConfig, earlier: Sequence[str] = ()
) -> dict[str, dict[str, list[Any]]]:
    """The CUSTOM SCALARS layout (``SummaryWriter.add_custom_scalars``) of a run: a chart per
    evaluation opponent, ``earlier`` ones (those of a resumed run's evaluations so far) first."""
    evaluation: dict[str, list[Any]] = {}
    for opponent, part in eval_tags(config, earlier).items():
        tag = f"eval/{part}"
        evaluation[f"win rate vs {opponent} (95% CI)"] = [
            "Margin",
            [f"{tag}/win_rate", f"{tag}/win_rate_low", f"{tag}/win_rate_high"],
        ]
        evaluation[f"points per hand vs {opponent} (95% CI)"] = [
            "Margin",
            [f"{tag}/points_per_hand", f"{tag}/points_per_hand_low", f"{tag}/points_per_hand_high"],
        ]
    layout: dict[str, dict[str, list[Any]]] = {"evaluation": evaluation}
    if config.evaluation.cross_table_deals:
        layout["rating"] = {
            "learner's rating (95% CI; random = 0)": [
                "Margin",
                ["rating/learner", "rating/learner_low", "rating/learner_high"],
            ],
            "ratings of the anchors and snapshots": ["Multiline", [r"rating/(?!learner).*"]],
        }
    if config.evaluation.strategy_games:
        from rummyzoo.training.strategy import STATISTIC_CHARTS

        layout["strategy"] = {
            title: ["Multiline", [f"strategy/{names}$"]]
            for title, names in STATISTIC_CHARTS.items()
        }
    training = {
        "training games: win rate": ["Multiline", [r"charts/train_win_rate$"]],
        "training games: points per hand": ["Multiline", [r"charts/points_per_hand$"]],
    }
    if any(o.name == "self" for o in config.opponents):  # only self-play logs its rating
        training["self-play rating"] = ["Multiline", [r"selfplay/rating"]]
    if config.league.sampling == "pfsp":
        training["league: win rate by opponent"] = ["Multiline", [r"league/win_rate/.*"]]
        training["league: probability by opponent"] = ["Multiline", [r"league/probability/.*"]]
    layout["training"] = training
    return layout


def cross_table(
    learner: Any, config: RunConfig, pool: list[dict[str, Any]], seed: int
) -> dict[str, Any]:
    """The arena report of the learner, the newest ``cross_table_snapshots`` pool snapshots and
    every baseline of the variant on ``cross_table_deals`` duplicate deals of single hands under
    the evaluation's rules (ratings: Bradley-Terry with bootstrap intervals, anchored at random
    play)."""
    from rummyzoo.agents.arena import run_arena, summarize
    from rummyzoo.agents.arena.evaluate import baseline_names
    from rummyzoo.agents.checkpoints import load_policy

    cfg = config.evaluation
    # Single hands: the ratings rank who scores more per hand, and the round robin stays
    # short (two weak networks can draw out a match to its hand cap).
    options = {**eval_options(config), "target_score": None}
    agents: list[Any] = list(baseline_names(config.variant))
    keep = cfg.cross_table_snapshots
    for entry in pool[-keep:] if keep else []:
        if Path(entry["path"]).is_file():
            policy = load_policy(entry["path"], config.variant, config.num_players, options)
            policy.name = f"self@{entry['steps']}"
            agents.append(policy)
    agents.append(learner)
    result = run_arena(
        config.variant,
        config.num_players,
        agents,
        deals=cfg.cross_table_deals,
        seed=seed,
        options=options,
        batch=64,  # games at once (of the deals x seatings): the same games as one by one, up
        # to a network's float rounding in batches of other sizes
    )
    return summarize(result, resamples=200)


def strategy_stats(
    learner: Any, config: RunConfig, seed: int
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """``strategy_games`` single hands of the learner against the first evaluation opponent
    (the learner's seat rotating), summarized by :class:`StrategyStats`."""
    from rummyzoo.agents.registry import make_agent
    from rummyzoo.envs.play import play_episode
    from rummyzoo.envs.registry import make_match
    from rummyzoo.training.strategy import StrategyStats

    n = config.num_players
    options = {**eval_options(config), "target_score": None}  # hand by hand
    opponent = config.evaluation.opponents[0]
    match = make_match(config.variant, n, options, "strategy statistics")
    stats = StrategyStats(config.variant)
    others = [make_agent(opponent, config.variant, n, options) for _ in range(n - 1)]
    for game in range(config.evaluation.strategy_games):
        seat = game % n
        policies = list(others)
        policies.insert(seat, learner)
        stats.new_game(seat)
        play_episode(
            match, policies, np.random.default_rng([seed, game]), seed=seed + game, on_event=stats
        )
    return stats.summary()


def _md(text: str) -> str:
    """Text for a markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _cards(cards: list[str] | None) -> str:
    return " ".join(cards) if cards else "-"


def _table_cell(table: dict[str, Any]) -> str:
    parts = []
    for pile in table["piles"]:
        if pile["cards"] is None:
            parts.append(f"{pile['name']} {pile['count']}")
        else:
            top = pile["cards"][-1] if pile["cards"] else "-"
            parts.append(f"{pile['name']} {pile['count']} (top {top})")
    melds = [f"{m['kind']} {_cards(m['cards'])}" for m in table["table"]]
    for seat in table["seats"]:
        melds += [f"p{seat['seat']}: {_cards(m)}" for m in seat["melds"]]
    if melds:
        parts.append("melds: " + "; ".join(melds))
    return "; ".join(parts)


def sample_markdown(replay: dict[str, Any], title: str) -> str:
    """A replay as markdown for TensorBoard's TEXT tab: a table per turn (one row per move:
    the mover's hand before it, the table, the move, the legal alternatives) and a line per
    hand end. At most :data:`MAX_SAMPLE_MOVES` moves are written out."""
    from rummyzoo.envs.replay import replay_frames

    payload = replay_frames(replay)
    agents = payload["agents"]
    lines = [f"### {title}", ""]
    lines.append(", ".join(f"player_{s} = {a}" for s, a in enumerate(agents)))
    turn_seat: int | None = None
    written = 0
    for frame in payload["frames"]:
        if frame["kind"] == "hand_over":
            turn_seat = None
            points = frame["points"]
            shown = (
                ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(points))
                if points is not None
                else "cut by a cap, no points"
            )
            lines += ["", f"**hand {frame['hand']} over**: {shown}; totals "
                      + ", ".join(f"player_{s} {t:g}" for s, t in enumerate(frame["totals"]))]  # fmt: skip
            continue
        if written >= MAX_SAMPLE_MOVES:
            continue
        if frame["seat"] != turn_seat:
            turn_seat = frame["seat"]
            table = frame["table"]
            lines += [
                "",
                f"**hand {frame['hand']}, turn {table['turn']}: player_{turn_seat} "
                f"({agents[turn_seat]})**",
                "",
                "| hand | table | move | legal alternatives |",
                "| --- | --- | --- | --- |",
            ]
        table = frame["table"]
        hand = table["seats"][frame["seat"]]["hand"]
        legal = frame["legal"] or []
        others = [m for m in legal if m != frame["move"]]
        alternatives = ", ".join(others[:MAX_ALTERNATIVES])
        if len(others) > MAX_ALTERNATIVES:
            alternatives += f" (+{len(others) - MAX_ALTERNATIVES} more)"
        lines.append(
            f"| {_md(_cards(hand))} | {_md(_table_cell(table))} | **{_md(frame['move'])}** "
            f"| {_md(alternatives or 'none')} |"
        )
        written += 1
    total = sum(1 for f in payload["frames"] if f["kind"] == "move")
    if written < total:
        lines += ["", f"... {total - written} more moves in the replay file"]
    final = ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(payload["final"]))
    lines += ["", f"**final points**: {final}"]
    return "\n".join(lines)
