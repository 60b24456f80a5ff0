"""``rummyzoo export OLD.zip [OUT] --trust``: a stable-baselines3 zip you trust, converted into
a shareable checkpoint (``.rz``: weights and JSON only, see :mod:`rummyzoo.agents.safe`); the
same for the learner of an RLlib checkpoint of a run (``RUN/checkpoints/rllib``)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from rummyzoo.cli.common import Parents, output_file

#: how the line of a written checkpoint says it replaced a file (atomically, once whole)
REPLACED = " (it replaced the file that was there)"


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    export = sub.add_parser(
        "export",
        help="convert a stable-baselines3 zip (or a run's RLlib checkpoint) you trust into a "
        "shareable checkpoint (.rz)",
        description="Convert a stable-baselines3 checkpoint zip (what rummyzoo wrote before "
        "shareable checkpoints, or a run's resume file checkpoints/last.zip) into a shareable "
        ".rz checkpoint that loads without running code; or the learner module of an RLlib "
        "checkpoint of a run (RUN/checkpoints/rllib). Converting must load the file, which "
        "unpickles it and can run code: convert only files you trust, and say so with --trust.",
    )
    export.add_argument(
        "checkpoint", help="the stable-baselines3 .zip, or RLlib checkpoint folder, to convert"
    )
    export.add_argument(
        "out",
        nargs="?",
        help="the .rz to write (default: CHECKPOINT as .rz; an RLlib folder, checkpoints/rllib: "
        "checkpoints/rllib_export.rz beside it)",
    )
    export.add_argument(
        "--trust",
        action="store_true",
        help="I trust this file: converting it unpickles it, which can run code",
    )
    export.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rummyzoo.agents.checkpoints import check_exportable, export_checkpoint
    from rummyzoo.agents.safe import SUFFIX
    from rummyzoo.training.rllib import export_rllib, is_rllib_checkpoint

    again = shlex.join(["rummyzoo", "export", args.checkpoint, *([args.out] if args.out else [])])
    rllib = is_rllib_checkpoint(args.checkpoint)
    # the file to write, checked before the checkpoint is loaded (the default one too): a
    # shareable checkpoint, whose name says so (a name without a suffix gets .rz)
    out = args.out
    if out is not None:
        out = str(output_file(out, "OUT", SUFFIX, (SUFFIX,), inputs=[args.checkpoint]))
    if not rllib:
        check_exportable(args.checkpoint)  # reads JSON and the zip's names only
        if out is None:
            default = Path(args.checkpoint).with_suffix(SUFFIX)
            out = str(output_file(default, "the default OUT", inputs=[args.checkpoint]))
    if rllib:
        if not args.trust:
            raise ValueError(
                f"converting {args.checkpoint} must unpickle it (RLlib checkpoints store Python "
                f"objects), so convert only checkpoints you trust: {again} --trust"
            )
        done = export_rllib(args.checkpoint, out)
        replacing = REPLACED if done["replaced"] else ""
        print(
            f"wrote {done['path']}{replacing}: the learner of {args.checkpoint} "
            f"({done['variant']}, step {done['steps']:,}); it loads without unpickling "
            f"(rummyzoo evaluate {shlex.quote(str(done['path']))})"
        )
        return 0

    if not args.trust:
        raise ValueError(
            f"converting {args.checkpoint} must unpickle it (a stable-baselines3 zip stores "
            "Python objects, and loading them can run any code), so convert only files you "
            f"trust: {again} --trust"
        )
    replacing = REPLACED if Path(out).exists() else ""
    result = export_checkpoint(args.checkpoint, out)
    print(
        f"wrote {result['path']}{replacing}: a {result['algo']} {result['network']} network of "
        f"{result['parameters']:,} parameters, loaded back and identical to {args.checkpoint}; "
        f"it loads without unpickling (rummyzoo evaluate {shlex.quote(str(result['path']))})"
    )
    return 0
