"""``rummyzoo export OLD.zip [OUT] --trust``: a stable-baselines3 zip you trust, converted into
a shareable checkpoint (``.rz``: weights and JSON only, see :mod:`rummyzoo.agents.safe`)."""

from __future__ import annotations

import argparse

from rummyzoo.cli.common import Parents


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    export = sub.add_parser(
        "export",
        help="convert a stable-baselines3 zip you trust into a shareable checkpoint (.rz)",
        description="Convert a stable-baselines3 checkpoint zip (what rummyzoo wrote before "
        "shareable checkpoints, or a run's resume file checkpoints/last.zip) into a shareable "
        ".rz checkpoint that loads without running code. Converting must load the zip, which "
        "unpickles it and can run code: convert only files you trust, and say so with --trust.",
    )
    export.add_argument("checkpoint", help="the stable-baselines3 .zip to convert")
    export.add_argument("out", nargs="?", help="the .rz to write (default: CHECKPOINT as .rz)")
    export.add_argument(
        "--trust",
        action="store_true",
        help="I trust this file: converting it unpickles it, which can run code",
    )
    export.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rummyzoo.agents.checkpoints import check_exportable, export_checkpoint

    check_exportable(args.checkpoint)  # reads JSON and the zip's names only
    if not args.trust:
        raise ValueError(
            f"converting {args.checkpoint} must unpickle it (a stable-baselines3 zip stores "
            "Python objects, and loading them can run any code), so convert only files you "
            f"trust: rummyzoo export {args.checkpoint} --trust"
        )
    result = export_checkpoint(args.checkpoint, args.out)
    print(
        f"wrote {result['path']}: a {result['algo']} {result['network']} network of "
        f"{result['parameters']:,} parameters, loaded back and identical to {args.checkpoint}; "
        f"it loads without unpickling (rummyzoo evaluate {result['path']})"
    )
    return 0
