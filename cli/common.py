"""What the commands share: the parent parsers of their common arguments and option parsing."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rummyzoo.envs.core import ConfigError, printable
from rummyzoo.envs.files import is_stream, unwritable
from rummyzoo.envs.registry import VARIANTS

__all__ = ["Parents", "parse_options"]


#: The characters of a message the commands print whole, at most (a file's crafted name or
#: value could make one of megabytes).
MESSAGE_LIMIT = 4000


def shown_message(text: object) -> str:
    """A message for the terminal: :func:`printable` (its lines kept, each after the first
    indented unless it is: a crafted value cannot write a line of the command's own), cut
    short past :data:`MESSAGE_LIMIT` characters."""
    shown = re.sub(r"\n(?=\S)", "\n  ", printable(text, lines=True))
    if len(shown) <= MESSAGE_LIMIT:
        return shown
    return f"{shown[:MESSAGE_LIMIT]}... ({len(shown) - MESSAGE_LIMIT:,} more characters)"


def parse_options(items: Sequence[str] | None) -> dict[str, Any]:
    """Options from ``key=value`` strings; values are read as JSON when possible.

    ``target_score=100`` gives an int, ``teams=true`` a bool, ``target_score=null`` None
    (``True``, ``False`` and ``None`` too, in any case, as in agent parameters); anything else
    that is not JSON stays a string (``stock_exhaustion=reshuffle``).

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
            raise ConfigError(
                "--option num_players: the player count is no option (--players N where the "
                "command takes it; evaluate plays the checkpoint's own count)"
            )
        words = {"true": True, "false": False, "null": None, "none": None}
        try:
            options[key] = json.loads(text)
        except json.JSONDecodeError:
            options[key] = words.get(text.strip().lower(), text)
        except ValueError:  # a number of more digits than Python reads as an int
            raise ConfigError(
                f"--option {key}: a number of {len(text.strip())} characters, more than Python "
                f"reads as an int ({sys.get_int_max_str_digits()} digits)"
            ) from None
    return options


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (links and ``..`` followed; either may not exist)."""
    try:
        if a.exists() and b.exists():
            return a.samefile(b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_not_inputs(out: Path, flag: str, path: str | Path, inputs: Sequence[str | Path]) -> None:
    """Refuse an output that names a file the command reads (a checkpoint, a config, the
    replay itself), which writing it would destroy.

    :raises ValueError: naming ``flag`` and the input.
    """
    for item in inputs:
        if _same_file(out, Path(item)):
            raise ValueError(
                f"{flag} {path} would overwrite {item}, which this command reads: name another file"
            )


def output_file(
    path: str | Path,
    flag: str,
    suffix: str | None = None,
    suffixes: tuple[str, ...] | None = None,
    inputs: Sequence[str | Path] = (),
) -> Path:
    """The file a command will write (checked before any work): a name, not a folder, its
    folder a folder that can be written in, none of the files the command reads (``inputs``:
    see :func:`check_not_inputs`); with ``suffix``, a name without one gets it (``--out
    curve`` writes ``curve.png``); with ``suffixes``, the name must end in one. ``-`` is the
    command's own output (``/dev/stdout``), written as the stream it is.

    :raises ValueError: naming ``flag`` and what is wrong.
    """
    if str(path) == "":
        raise ValueError(f"{flag} '': give a file name")
    if str(path) == "-":  # the command's own output, as "-" means for most commands
        path = "/dev/stdout"
    out = Path(path)
    if out.is_dir() or str(path).endswith(("/", os.sep)):  # (a path drops a trailing slash)
        raise ValueError(f"{flag} {path} is a folder: give the name of a file to write")
    parent = next((p for p in out.parents if p.exists()), Path("."))
    if not parent.is_dir():
        raise ValueError(f"{flag} {path}: {parent} is a file, not a folder")
    # a stream (/dev/stdout, a pipe) is written as it is, whatever its name
    stream = is_stream(out)
    if suffix and not out.suffix and not stream:
        out = out.with_suffix(suffix)
    if suffixes and out.suffix.lower() not in suffixes and not stream:
        raise ValueError(f"{flag} {path}: the file must end in {' or '.join(suffixes)}")
    check_not_inputs(out, flag, path, inputs)
    if not stream:  # (a stream's folder, /dev/fd, takes no new file: it is not made in it)
        _check_writable(parent, flag, path)
    return out


def _check_writable(folder: Path, flag: str, path: str | Path) -> None:
    # the folders still to make are made when the file is written
    why = unwritable(folder)
    if why is not None:
        raise ValueError(f"{flag} {path}: cannot write in {folder} ({why.strerror})")


def output_folder(path: str | Path, flag: str) -> Path:
    """The folder a command will write files in (checked before any work): a name, not a
    file, under a folder (the nearest that exists) that can be written in.

    :raises ValueError: naming ``flag`` and what is wrong.
    """
    if str(path) == "":
        raise ValueError(f"{flag} '': give a folder name")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {path} is a file: give a folder")
    nearest = next((p for p in (out, *out.parents) if p.exists()), Path("."))
    if not nearest.is_dir():
        raise ValueError(f"{flag} {path}: {nearest} is a file, not a folder")
    _check_writable(nearest, flag, path)
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


def check_outputs(
    args: argparse.Namespace,
    *flags: str,
    inputs: Sequence[str | Path] = (),
    folders: Sequence[str] = (),
) -> None:
    """Check the files that ``flags`` (``"json"`` for ``--json``) name, and the folders that
    ``folders`` name, before any work: a folder, a path under a file, a folder that cannot be
    written in, a file the command reads (``inputs``) or two outputs that name one path fail
    now, not after the whole run (:func:`output_file`, :func:`output_folder`); ``--heatmap``
    also needs a picture's suffix (none: .png), and gets it in ``args``."""
    named: list[tuple[str, Path]] = []
    for flag in (*flags, *folders):
        value = getattr(args, flag, None)
        option = "--" + flag.replace("_", "-")
        if value is None:
            continue
        if flag in folders:
            out = output_folder(value, option)
        elif flag == "heatmap":
            out = output_file(value, option, ".png", PICTURE_SUFFIXES, inputs)
            setattr(args, flag, str(out))
        else:
            out = output_file(value, option, inputs=inputs)
        for other, path in named:
            if _same_file(out, path):
                raise ValueError(
                    f"{other} and {option} name the same path ({value}): give each its own"
                )
        named.append((option, out.resolve()))


def _entry_number(part: str) -> bool:
    """Whether a key's part is a list entry's number that int() reads: ASCII digits (not "²"),
    short of int()'s digit limit."""
    part = part.strip()
    return part.isascii() and part.isdigit() and len(part) <= 18


def check_overrides(items: Sequence[str] | None, flag: str = "--set") -> list[str]:
    """``items`` (``KEY.SUB=VALUE`` overrides) where no key is set twice and none is set whole
    after a key inside it: one of the two would be lost, as ``--option`` refuses too (a key
    inside another set whole before it, ``--set self_play={...} --set
    self_play.pool_size=3``, applies in order and is allowed).

    :raises ValueError: naming the key.
    """
    seen: dict[tuple[str, ...], str] = {}
    for item in items or []:
        text, sep, _ = item.partition("=")
        if not sep:
            continue  # the config's own check names it
        # (a list entry's number as a number: opponents.00 is opponents.0)
        key = tuple(
            str(int(p)) if _entry_number(p) else p.strip() for p in text.split(".")
        )  # (the config names what is wrong with any other)
        for earlier, given in seen.items():
            if earlier == key:
                raise ValueError(
                    f"{flag} {'.'.join(key)} is given twice ({given!r}, {item!r}): give it once"
                )
            if earlier[: len(key)] == key:  # set whole after a key inside it: that key is lost
                raise ValueError(
                    f"{flag} {item!r} replaces the whole of {'.'.join(key)}, so the earlier "
                    f"{given!r} is lost: set the whole first, then the keys inside it"
                )
        seen[key] = item
    return list(items or [])


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
    def overrides() -> argparse.ArgumentParser:
        """``--set KEY.SUB=VALUE`` (repeatable) of the commands that take a run config."""
        parent = argparse.ArgumentParser(add_help=False)
        parent.add_argument(
            "--set",
            action="append",
            metavar="KEY.SUB=VALUE",
            help="override a config key (repeatable; a key at most once)",
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


@contextlib.contextmanager
def note_on_stop(note: str | None) -> Iterator[None]:
    """A stop (Ctrl-C, or SIGTERM as one) that ends the block carries ``note`` (None: none),
    which the command's line about the stop shows."""
    try:
        yield
    except KeyboardInterrupt as stop:
        if note is not None:
            stop.add_note(note)
        raise
