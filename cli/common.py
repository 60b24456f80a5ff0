"""What the commands share: the parent parsers of their common arguments and option parsing."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rummyzoo.envs.core import ConfigError
from rummyzoo.envs.registry import VARIANTS

__all__ = ["Parents", "parse_options"]


def parse_options(items: Sequence[str] | None) -> dict[str, Any]:
    """Options from ``key=value`` strings; values are read as JSON when possible.

    ``target_score=100`` gives an int, ``teams=true`` a bool, ``target_score=null`` None;
    anything that is not JSON stays a string (``stock_exhaustion=reshuffle``).

    :raises ConfigError: an item without ``=`` or a key given twice.
    """
    options: dict[str, Any] = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--option expects key=value, got {item!r}")
        if key in options:
            raise ConfigError(f"--option {key} is given twice")
        if key == "num_players":
            raise ConfigError("--option num_players: the player count is --players N")
        try:
            options[key] = json.loads(text)
        except json.JSONDecodeError:
            options[key] = text
    return options


def output_file(
    path: str | Path,
    flag: str,
    suffix: str | None = None,
    suffixes: tuple[str, ...] | None = None,
) -> Path:
    """The file a command will write (checked before any work): not a folder, its folder a
    folder that can be written in; with ``suffix``, a name without one gets it
    (``--out curve`` writes ``curve.png``); with ``suffixes``, the name must end in one.

    :raises ValueError: naming ``flag`` and what is wrong.
    """
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"{flag} {path} is a folder: give the name of a file to write")
    parent = next((p for p in out.parents if p.exists()), Path("."))
    if not parent.is_dir():
        raise ValueError(f"{flag} {path}: {parent} is a file, not a folder")
    if suffix and not out.suffix:
        out = out.with_suffix(suffix)
    if suffixes and out.suffix.lower() not in suffixes:
        raise ValueError(f"{flag} {path}: the file must end in {' or '.join(suffixes)}")
    # what the folder allows is only known by trying (permission bits say nothing to root);
    # the folders still to make are made when the file is written
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise ValueError(f"{flag} {path}: cannot write in {parent} ({exc.strerror})") from None
    return out


#: The picture formats matplotlib writes (``--heatmap``, ``curves --out``).
PICTURE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".eps")


def platform_info() -> dict[str, Any]:
    """What a benchmark ran on, the same keys in every benchmark's JSON: Python's and
    numpy's versions (torch's where it is loaded), the processor architecture and its cores."""
    import os
    import platform

    import numpy as np

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    if "torch" in sys.modules:
        info["torch"] = sys.modules["torch"].__version__
    return info


def check_outputs(args: argparse.Namespace, *flags: str) -> None:
    """Check the files that ``flags`` (``"json"`` for ``--json``) name, before any work: a
    folder, a path under a file or a folder that cannot be written in fails now, not after the
    whole run (:func:`output_file`); ``--heatmap`` also needs a picture's suffix (none: .png),
    and gets it in ``args``."""
    for flag in flags:
        value = getattr(args, flag, None)
        if value == "":
            raise ValueError(f"--{flag.replace('_', '-')} '': give a file name")
        if value:
            if flag == "heatmap":
                out = output_file(value, "--heatmap", ".png", PICTURE_SUFFIXES)
                setattr(args, flag, str(out))
            else:
                output_file(value, "--" + flag.replace("_", "-"))


def seed_number(text: str) -> int:
    """``--seed``'s type: a non-negative integer (argparse names the flag on an error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


class Parents:
    """Parent parsers for the arguments that several commands take, each defined once.

    ``game()``: the variant (positional) and ``--players``; ``options()``: repeatable
    ``--option KEY=VALUE``; ``seed(default)``: ``--seed``; ``runs(deals)``: ``--deals``,
    ``--workers`` and ``--quiet`` of commands that play through the arena. Each call builds a
    fresh parent (argparse shares a parent's actions with its children, so a default set on
    one command would otherwise change the others).
    """

    @staticmethod
    def game() -> argparse.ArgumentParser:
        parent = argparse.ArgumentParser(add_help=False)
        parent.add_argument("variant", choices=sorted(VARIANTS))
        parent.add_argument("--players", type=int, default=2, help="seats (default 2)")
        return parent

    @staticmethod
    def options() -> argparse.ArgumentParser:
        parent = argparse.ArgumentParser(add_help=False)
        parent.add_argument(
            "--option",
            action="append",
            metavar="KEY=VALUE",
            help="an option of the variant, read as JSON where it parses (e.g. "
            "target_score=100, target_score=null for one hand, teams=true); repeatable",
        )
        return parent

    @staticmethod
    def seed(default: int | None = 0) -> argparse.ArgumentParser:
        parent = argparse.ArgumentParser(add_help=False)
        shown = "a fresh one" if default is None else default
        parent.add_argument(
            "--seed", type=seed_number, default=default, help=f"seed (default {shown})"
        )
        return parent

    @staticmethod
    def runs(deals: int) -> argparse.ArgumentParser:
        parent = argparse.ArgumentParser(add_help=False)
        parent.add_argument(
            "--deals", type=int, default=deals, help=f"deals to play (default {deals})"
        )
        parent.add_argument(
            "--workers",
            type=int,
            default=None,
            help="worker processes (default: one per CPU; 1 plays in this process)",
        )
        parent.add_argument("--quiet", action="store_true", help="no progress bar")
        return parent
