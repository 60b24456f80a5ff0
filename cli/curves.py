"""``rummyzoo curves RUN --out PNG``: a run's learning curves (evaluation win rate per
baseline over training steps, with 95% bands), as a PNG."""

from __future__ import annotations

import argparse
import sys

from rummyzoo.cli.common import PICTURE_SUFFIXES, Parents, output_file
from rummyzoo.envs.files import is_stream


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    curves = sub.add_parser(
        "curves",
        help="plot a run's evaluation win rates over training steps (PNG)",
        description="Plot the evaluations of a training run (win rate against each evaluation "
        "opponent, with its 95% interval as a band) over training steps, as a PNG. Works on a "
        "finished run and on one still training.",
    )
    curves.add_argument("run", help="the run folder (what rummyzoo train --run-dir wrote)")
    curves.add_argument("--out", required=True, help="the PNG to write (-: standard output)")
    curves.add_argument("--title", help="the chart's title (default: variant, players, algo)")
    curves.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rummyzoo.training.curves import run_evaluations, write_curves

    out = output_file(args.out, "--out", ".png", PICTURE_SUFFIXES)
    read = run_evaluations(args.run)  # once: a damaged file's warning is given once
    history = read[1]
    stream = is_stream(out)
    path = write_curves(args.run, out, args.title, read)
    print(
        f"wrote {path}: {len(history)} evaluations, steps {history[0]['steps']:,} to {history[-1]['steps']:,}",
        # a picture written to this process's output (--out /dev/stdout > f.png) is the output
        file=sys.stderr if stream else sys.stdout,
    )
    return 0
