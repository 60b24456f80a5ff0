"""``rummyzoo evaluate CHECKPOINT``: a checkpoint against the baselines of its variant."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from rummyzoo.cli.common import Parents, check_outputs, note_on_stop, parse_options, printable
from rummyzoo.envs.files import is_file, write_json


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    evaluate = sub.add_parser(
        "evaluate",
        parents=[parents.runs(500), parents.seed(), parents.options()],
        help="a checkpoint against the baselines (arena)",
        description="Play a checkpoint against random play and the variant's heuristics (or "
        "--opponents) on duplicate deals, seats rotated: one line per opponent with the win "
        "rate and points per hand and their 95% intervals, then the run the checkpoint came "
        "from.",
    )
    evaluate.add_argument("checkpoint")
    evaluate.add_argument(
        "--opponents", nargs="+", help="default: random and every heuristic of the variant"
    )
    evaluate.add_argument(
        "--batch",
        type=int,
        default=64,
        help="games each process plays at once, the network deciding for all of them with "
        "one call (default 64; 1: one game after another)",
    )
    evaluate.add_argument("--json", metavar="PATH", help="write the results as JSON")
    evaluate.add_argument(
        "--report", action="store_true", help="also print the full arena report per opponent"
    )
    evaluate.add_argument(
        "--keep-deals",
        metavar="DIR",
        help="keep each opponent's deals in a file in DIR as they are played; run again with "
        "the same DIR, it plays only the deals they lack (a stopped evaluation goes on where "
        "it was, one with more --deals plays only the new deals)",
    )
    evaluate.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """A checkpoint against the baselines of its variant, through the arena."""
    check_outputs(
        args,
        "json",
        inputs=[args.checkpoint, *filter(is_file, args.opponents or ())],
        folders=["keep_deals"],
    )
    twice = sorted({o for o in args.opponents or () if args.opponents.count(o) > 1})
    if twice:  # each opponent is one evaluation, reported under its name
        raise ValueError(f"--opponents names {', '.join(twice)} twice: give each opponent once")

    from rummyzoo.agents.arena import as_given, pinned_checkpoints

    # the checkpoint read once (a live run's last.rz may be rewritten meanwhile): its header,
    # its options and every opponent's games are of the same bytes
    with pinned_checkpoints([args.checkpoint]) as pinned:
        try:
            return _evaluate_pinned(args, pinned)
        except Exception as exc:
            as_given(exc, pinned)
            raise


def _evaluate_pinned(args: argparse.Namespace, pinned: dict[str, str]) -> int:
    """:func:`run` with the checkpoint's bytes read once (``pinned``: its private copy)."""
    from rummyzoo.agents.arena import ArenaWorkers, format_report, made_as_given
    from rummyzoo.agents.arena.evaluate import (
        baseline_names,
        evaluation_report,
        kept_deals_file,
        policy_entry,
    )
    from rummyzoo.agents.arena.kept import OtherArenaError
    from rummyzoo.agents.checkpoints import (
        MATCH_CAPS,
        capped_match_options,
        check_recorded_options,
        read_meta,
        recorded_game_options,
    )
    from rummyzoo.envs.workers import usable_cpus

    meta = made_as_given(
        args.checkpoint, pinned.get(args.checkpoint, args.checkpoint), pinned, read_meta
    )
    check_recorded_options(meta, args.checkpoint)  # the games below are played under them
    variant, players = meta["variant"], meta["num_players"]
    given = parse_options(args.option)
    recorded = recorded_game_options(meta)
    caps = {k: v for k, v in recorded.items() if k in MATCH_CAPS and k not in given}
    options = {**recorded, **capped_match_options(caps, args.checkpoint, variant), **given}
    opponents = args.opponents or baseline_names(variant)
    results = {}
    reports: list[str] = []
    kept_lines: list[str] = []
    # One set of worker processes for every opponent (each start imports torch: seconds);
    # the arena checks --workers and --deals.
    workers = usable_cpus() if args.workers is None else args.workers
    shared = workers > 1 and args.deals > 1
    with (
        ArenaWorkers(min(workers, args.deals)) if shared else contextlib.nullcontext() as pool,
        note_on_stop(
            None
            if args.keep_deals
            else "--keep-deals DIR keeps the deals as they are played, so that a stopped "
            "evaluation goes on from them"
        ),
    ):
        for opponent in opponents:
            kept = None if args.keep_deals is None else kept_deals_file(args.keep_deals, opponent)
            try:
                report, label = evaluation_report(
                    args.checkpoint, opponent, variant, players, options, args.deals,
                    args.seed, args.workers, args.batch, resamples=1000, quiet=args.quiet,
                    pool=pool, keep_deals=kept, pinned=pinned,
                )  # fmt: skip
            except OtherArenaError as exc:
                raise ValueError(
                    f"--keep-deals {args.keep_deals} holds the deals of another evaluation "
                    f"against {opponent} ({exc.path.name}: not this one's "
                    f"{_what_differs(exc, opponent)}): give another folder, or remove that "
                    "file"
                ) from None
            if args.report:  # printed once the files are written
                reports.append(
                    f"== {Path(args.checkpoint).name} vs {opponent}\n{format_report(report)}"
                )
            results[opponent] = policy_entry(report, label)
            if kept is not None:  # what the kept deals gave (printed with the results)
                read = next((n for n in report["notes"] if "deals were read from" in n), None)
                kept_lines.append(
                    f"  {opponent}: {read or f'every deal played now, kept in {kept}'}"
                )
    written = None
    if args.json:  # first: a reader that goes away early (``| head``) stops the printing only
        payload = {
            "checkpoint": args.checkpoint,
            "variant": variant,
            "players": players,
            "options": options,
            "deals": args.deals,
            "seed": args.seed,
            "results": results,
        }
        written = write_json(payload, args.json)
    for text in reports:
        _show(text)
    shown = ", ".join(f"{k}={v}" for k, v in options.items()) or "default rules"
    games = next(iter(results.values()))["games"] if results else 0
    steps = meta.get("steps")
    run_dir = Path(args.checkpoint).resolve().parent.parent
    trained = f"trained {steps:,} steps, " if isinstance(steps, int) else ""
    if steps == 0:  # the network as RL found it: the warm start's, where the run had one
        warm = _warm_start(run_dir)
        trained = f"{warm}, " if warm else "untrained: 0 steps, "
    _show(
        f"{args.checkpoint} ({trained}{variant}, {players} players, {shown}): {args.deals:,} "
        f"duplicate deals per opponent ({games:,} games), seed {args.seed}"
    )
    _show(format_results(results))
    if kept_lines:
        _show("kept deals (--keep-deals):")
        _show("\n".join(kept_lines))
    if (run_dir / "summary.json").exists():  # a checkpoint of a run folder: recall the run
        _show()
        _show(recall_run(run_dir / "summary.json"))
    elif (run_dir / "config.yaml").is_file() and (run_dir / "checkpoints").is_dir():
        from rummyzoo.training.run_folder import run_progress

        _show()  # a run not finished (stopped, or training now): where it stands
        _show(f"the run it comes from, {run_dir}: {run_progress(run_dir)['text']}")
    if written is not None:
        _show(f"wrote {written}")
    return 0


def _what_differs(exc: Any, opponent: str) -> str:
    """What of an evaluation differs from the one whose deals a file keeps: the checkpoint
    (the arena's first agent), the opponent (the others), the options...."""
    named = []
    for key in exc.differ:
        if key != "agents":
            named.append(key)
            continue
        before, now = exc.stored.get("agents") or [None], exc.ours.get("agents") or [None]
        if before[:1] != now[:1]:
            named.append("checkpoint")
        if before[1:] != now[1:]:
            named.append(f"opponent {opponent}")
    return ", ".join(named)


def _show(text: object = "") -> None:
    """Print ``text`` with what is not printable escaped (a crafted file or agent name cannot
    clear the screen or set the window's title)."""
    print(printable(text, lines=True))


def _warm_start(run_dir: Path) -> str | None:
    """What the warm start of the run in ``run_dir`` was, from its state (None: none, or no
    run's state there)."""
    from rummyzoo.training.run_state import read_state

    try:
        pretrain = read_state(run_dir).get("pretrain")
    except ValueError:
        return None
    if not isinstance(pretrain, dict):
        return None
    teacher, decisions = pretrain.get("teacher"), pretrain.get("decisions")
    if not isinstance(decisions, int):
        return "the warm start only"
    return f"the warm start only ({decisions:,} decisions imitated from {teacher})"


def recall_run(path: Path) -> str:
    """The summary of the run a checkpoint comes from, or a line saying it cannot be read."""
    from rummyzoo.training.run_folder import format_summary, read_summary

    try:
        return "the run it comes from:\n" + format_summary(read_summary(path.parent))
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError) as exc:
        return f"(the run it comes from: {path} cannot be read: {type(exc).__name__} {exc})"


def format_results(results: dict[str, dict]) -> str:
    """One line per opponent: win rate and points per hand, each with its 95% interval."""
    width = max([len("opponent"), *(len(o) for o in results)])
    lines = [f"  {'opponent':<{width}}  win rate [95% CI]       points per hand [95% CI]"]
    for opponent, r in results.items():
        rate = f"{r['win_rate']:.3f} {_interval(r['win_rate_ci'], '.3f')}"
        points = f"{r['mean_points']:+7.2f} {_interval(r['mean_points_ci'], '+.2f')}"
        lines.append(f"  {opponent:<{width}}  {rate:<20}  {points}")
    return "\n".join(lines)


def _interval(ci: Any, spec: str) -> str:
    """``[low, high]``, or ``[none: 1 deal]`` where one deal gives no interval."""
    if ci is None or None in ci:
        return "[none: 1 deal]"
    return f"[{ci[0]:{spec}}, {ci[1]:{spec}}]"
