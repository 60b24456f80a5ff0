"""Learning curves: a run's evaluation win rate against each baseline over training steps.

Every evaluation a run makes (``evaluation.interval``, and one before any RL when
``evaluation.at_start``) is kept in the run folder (``evaluations.json`` after each one,
``state.json`` at each checkpoint, ``summary.json`` once it is done). :func:`curve_figure` draws them: one line per evaluation
opponent with its 95% interval as a band, the warm start's evaluation (step 0) marked, and the
line of an even share of the wins, which separates beating the opponents from losing to them:
0.5 with two sides, 1/4 when the learner faces three opponents at four seats (teams are two
sides).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any


def run_evaluations(run_dir: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the run's config, its evaluations in step order) from a run folder.

    :raises FileNotFoundError: nothing there, or a folder that is not a run's.
    :raises NotADirectoryError: a file, not a folder.
    :raises ValueError: a run without evaluations.
    """
    import yaml

    run = Path(run_dir)
    config_path = run / "config.yaml"
    if not run.exists():
        raise FileNotFoundError(
            f"{run} does not exist (give a run's folder, the one that holds config.yaml)"
        )
    if not run.is_dir():
        raise NotADirectoryError(
            f"{run} is a file: give a run's folder (the one that holds config.yaml)"
        )
    if not config_path.is_file():
        raise FileNotFoundError(f"{run} is not a run folder (no config.yaml in it)")
    try:
        config = yaml.safe_load(config_path.read_text()) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{config_path} is not a valid YAML config: {reason}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{config_path} is not a run config (not a mapping of keys)")
    _check_read_fields(config, config_path)
    history = saved_evaluations(run)
    if not history:
        raise ValueError(f"run {run} has no evaluations yet (see evaluation.interval)")
    return config, sorted(history, key=lambda e: e["steps"])


def _check_read_fields(config: dict[str, Any], path: Path) -> None:
    """:raises ValueError: naming the file and the key, for a field the figure reads that a
    hand edit made the wrong kind (a run's own config is always right)."""
    players = config.get("num_players", 2)
    if isinstance(players, bool) or not isinstance(players, int) or players < 2:
        raise ValueError(f"{path}: num_players must be an int of at least 2, got {players!r}")
    for key in ("env_options", "evaluation"):
        if not isinstance(config.get(key) or {}, dict):
            raise ValueError(f"{path}: {key} must be a mapping of keys, got {config[key]!r}")
    options = (config.get("evaluation") or {}).get("options")
    if not isinstance(options or {}, dict):
        raise ValueError(f"{path}: evaluation.options must be a mapping of keys, got {options!r}")


#: The files of a run that hold its evaluations, the one read last first.
EVALUATION_FILES = ("summary.json", "evaluations.json", "state.json")


def saved_evaluations(run: Path) -> list[dict[str, Any]]:
    """A run's evaluations, the latest its files hold: ``summary.json``'s (once it has
    finished), ``evaluations.json``'s (written after each evaluation) or ``state.json``'s (at
    each checkpoint). A damaged file among sound ones is passed over with a warning naming it.

    :raises ValueError: where every file that holds evaluations is damaged (the first named):
        not JSON, or its evaluations malformed.
    """
    history, damaged = read_evaluations(run)
    for why in damaged:
        warnings.warn(f"{why}: its evaluations are left out", stacklevel=2)
    return history


def read_evaluations(run: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """:func:`saved_evaluations`, and what is wrong with each damaged file among sound ones
    (no warning: for a caller that shows them itself).

    :raises ValueError: where every file that holds evaluations is damaged.
    """
    found: list[list[dict[str, Any]]] = []
    damaged: list[str] = []
    for name in EVALUATION_FILES:
        path = Path(run) / name
        if not path.is_file():
            continue
        try:
            doc = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, RecursionError, ValueError) as exc:
            damaged.append(f"{path} is not readable JSON ({exc})")
            continue
        history = doc.get("evaluations", doc.get("eval_history")) if isinstance(doc, dict) else 0
        if history is None:
            continue
        if not isinstance(history, list) or not all(
            isinstance(e, dict)
            and isinstance(e.get("steps"), int)
            and isinstance(e.get("results"), dict)
            and all(_drawable(r) for r in e["results"].values())
            for e in history
        ):
            damaged.append(f"{path} is corrupt: its evaluations are not a list of evaluations")
            continue
        if history:
            found.append(history)
    if damaged and not found:
        raise ValueError(damaged[0])
    return max(found, key=lambda h: h[-1]["steps"], default=[]), damaged


def _drawable(result: Any) -> bool:
    """An opponent's result with the win rate and interval a curve draws."""
    if not isinstance(result, dict):
        return False
    ci = result.get("win_rate_ci")
    numbers = [result.get("win_rate"), *(ci if isinstance(ci, list) and len(ci) == 2 else [])]
    return len(numbers) == 3 and all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in numbers
    )


def episode_target(config: dict[str, Any], options: dict[str, Any]) -> int | None:
    """The match target of an evaluation's games (None: one hand each): the options', else
    the variant's default (a match to 500 in Ditch Rummy and 500 Rum, one hand in Knock
    Rummy)."""
    from rummyzoo.envs.registry import make_game

    if "target_score" in options:
        return options["target_score"]
    try:
        game = make_game(str(config.get("variant")), int(config.get("num_players", 2)))
    except (TypeError, ValueError):
        return None
    return game.match.target_score


def scoring_sides(config: dict[str, Any]) -> int:
    """Sides that win or lose in a run's games: its players, or two with teams."""
    options = config.get("env_options") or {}
    return 2 if options.get("teams") else int(config.get("num_players", 2))


def evaluation_deals(config: dict[str, Any], history: list[dict[str, Any]]) -> str:
    """The duplicate deals of the evaluations, for the axis: the config's count, or each count
    in the order they came where a resumed run changed it (each evaluation's games are its
    deals times the seatings of a deal, which the run's games keep)."""
    deals = (config.get("evaluation") or {}).get("deals")
    if not isinstance(deals, int) or not history:
        return "?" if deals is None else str(deals)
    last = next(iter(history[-1]["results"].values()), {}).get("games")
    if not isinstance(last, int) or last <= 0:
        return str(deals)
    counts = [
        round(r["games"] * deals / last)
        for e in history
        for r in e["results"].values()
        if isinstance(r.get("games"), int)
    ]
    shown = list(dict.fromkeys(counts))
    return str(deals) if len(shown) <= 1 else ", then ".join(f"{c:,}" for c in shown)


def curve_figure(
    run_dir: str | Path,
    title: str | None = None,
    read: tuple[dict[str, Any], list[dict[str, Any]]] | None = None,
) -> Any:
    """The learning curves of a run as a matplotlib figure (not saved); ``read``: what
    :func:`run_evaluations` gave for it already (None: read it)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    config, history = run_evaluations(run_dir) if read is None else read
    fig = Figure(figsize=(7.5, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    # every opponent of every evaluation (a resume may change them), first seen first
    opponents = list(dict.fromkeys(o for e in history for o in e["results"]))
    for opponent in opponents:
        points = [(e["steps"], e["results"][opponent]) for e in history if opponent in e["results"]]
        steps = [s for s, _ in points]
        rate = [r["win_rate"] for _, r in points]
        low = [r["win_rate_ci"][0] for _, r in points]
        high = [r["win_rate_ci"][1] for _, r in points]
        (line,) = ax.plot(steps, rate, marker="o", markersize=3, label=f"vs {opponent}")
        if len(steps) > 1:
            ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        else:  # a band of one step has no width: the interval as a bar
            ax.errorbar(
                steps, rate, yerr=[[rate[0] - low[0]], [high[0] - rate[0]]], fmt="none",
                color=line.get_color(), alpha=0.5, capsize=4, linewidth=1,
            )  # fmt: skip
    every_step = sorted({e["steps"] for e in history})
    if len(every_step) == 1:  # one evaluation: a span around it, not the autoscale's sliver
        half = max(1.0, 0.1 * every_step[0])
        ax.set_xlim(every_step[0] - half, every_step[0] + half)
    even = 1.0 / scoring_sides(config)
    ax.axhline(even, color="grey", linewidth=0.8, linestyle="--")
    ax.annotate(
        f"even share ({even:.2g})",
        (1.0, even),
        xycoords=("axes fraction", "data"),
        xytext=(-4, 3),
        textcoords="offset points",
        ha="right",
        fontsize=8,
        color="grey",
    )
    if config.get("pretrain") and history[0]["steps"] == 0:
        ax.axvline(0, color="black", linewidth=0.8, linestyle=":")
        ax.annotate("warm start", (0, 0.02), xytext=(4, 0), textcoords="offset points", fontsize=8)
    ax.set_ylim(-0.03, 1.03)  # (a curve at 0 or 1 drawn whole, not on the frame)
    ax.set_xlabel("training steps (learner decisions)")
    deals = evaluation_deals(config, history)
    options = {
        **(config.get("env_options") or {}),
        **((config.get("evaluation") or {}).get("options") or {}),
    }
    episode = "one hand" if episode_target(config, options) is None else "a match"
    ax.set_ylabel(f"win rate ({deals} duplicate deals, {episode} each)")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    shown = (
        title
        or f"{config.get('variant', '?')}, {config.get('num_players', '?')} players, {config.get('algo', '?')}"
    )
    ax.set_title(shown + " (bands: 95% intervals)", fontsize=10)
    return fig


def write_curves(
    run_dir: str | Path,
    out: str | Path,
    title: str | None = None,
    read: tuple[dict[str, Any], list[dict[str, Any]]] | None = None,
) -> Path:
    """Write :func:`curve_figure` of a run as a PNG (the picture's kind from the path's
    suffix), whole (a stream written as it is). Returns the path."""
    import io

    from rummyzoo.envs.files import atomic_write_bytes

    out = Path(out)
    picture = io.BytesIO()
    kind = out.suffix.lower().lstrip(".") or "png"
    curve_figure(run_dir, title, read).savefig(picture, format=kind, dpi=110)
    atomic_write_bytes(out, picture.getvalue())
    return out
