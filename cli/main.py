"""The ``rummyzoo`` command line: one module per command, over shared parent parsers."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
import warnings
from typing import Any

from rummyzoo.agents.checkpoints import package_version
from rummyzoo.cli import (
    arena,
    bench,
    bench_rllib,
    bench_train,
    curves,
    demo,
    evaluate,
    export,
    play,
    replay,
    serve,
    train,
)
from rummyzoo.cli.common import Parents, shown_message
from rummyzoo.envs.play import is_agent_failure
from rummyzoo.envs.workers import ProcessDied

#: what ``rummyzoo --help`` says the tool is
DESCRIPTION = (
    "rummyzoo: Knock Rummy, Ditch Rummy and 500 Rum as reinforcement-learning environments. "
    "Train agents from YAML configs, benchmark them against the heuristics in the arena, "
    "play and replay games. `rummyzoo COMMAND --help` describes a command."
)

#: The commands, in the order ``rummyzoo --help`` lists them.
COMMANDS = (
    bench, bench_train, bench_rllib, demo, arena, play, replay, serve, train, curves, evaluate, export,
)  # fmt: skip


class _WholeNamesParser(argparse.ArgumentParser):
    """A command's parser that takes options by their whole names only: argparse would read
    ``--progress off`` as ``--progress-every off`` and then complain about a number."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rummyzoo", description=DESCRIPTION, allow_abbrev=False)
    parser.add_argument("--version", action="version", version=f"rummyzoo {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_WholeNamesParser)
    parents = Parents()
    for command in COMMANDS:
        command.register(sub, parents)
    parser.set_defaults(_commands=sub.choices)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a batch scheduler, ``docker stop``) stopped a command: it stops as
    Ctrl-C stops it (its worker processes with it) and exits with 143, as a process that the
    signal ended would."""

    signum = int(signal.SIGTERM)


def _terminated(signum: int, frame: object) -> None:
    raise Terminated("terminated")


class _StopsAgain:
    """A ``sys.unraisablehook`` for a command's run over ``previous``: a stop (Ctrl-C, or
    SIGTERM as :class:`Terminated`) whose KeyboardInterrupt landed where Python cannot raise it
    (a ``__del__``, a weakref callback: it prints it and goes on) is sent again to the main
    thread, so that it stops the command where it can be raised (a blocking call there is cut
    short, as by the first); everything else goes to ``previous``. It is sent from another
    thread a moment later (sent from here, its handler would run here, where it would land
    unraisable again), and only while the hook is armed: :meth:`disarm` at the command's end
    says which stop had no time to come again."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.lock = threading.RLock()  # (the hook may run in the thread that holds it)
        self.armed = True
        self.pending: list[int] = []  # stops noted and not sent again yet
        self.main = threading.main_thread().ident

    def __call__(self, unraisable: Any) -> None:
        try:
            exc = getattr(unraisable, "exc_value", None)
            signum = int(getattr(exc, "signum", signal.SIGINT))
            if not (
                self.armed
                and isinstance(exc, KeyboardInterrupt)
                and hasattr(signal, "pthread_kill")  # (not on Windows)
                and callable(signal.getsignal(signum))
            ):
                self.previous(unraisable)
                return
            self._again(signum)
        except KeyboardInterrupt as stop:  # one that landed here, in the hook: the same
            self._again(int(getattr(stop, "signum", signal.SIGINT)))

    def _again(self, signum: int) -> None:
        with self.lock:
            self.pending.append(signum)
        again = threading.Timer(0.01, self._send, (signum,))
        again.daemon = True
        again.start()

    def _send(self, signum: int) -> None:
        with self.lock:
            if self.armed and signum in self.pending:
                self.pending.remove(signum)
                signal.pthread_kill(self.main, signum)

    def disarm(self) -> int | None:
        """Send nothing more; the signal of a stop that came as the command ended and was not
        sent again (None: none)."""
        with self.lock:
            self.armed = False
            return self.pending[0] if self.pending else None


def _notes(exc: BaseException) -> str:
    return "".join(f" ({note})" for note in getattr(exc, "__notes__", ()))


def _agent_failed(command: str, exc: BaseException) -> int:
    """An agent's own bug (whatever its type): its traceback, to find it by, then one line
    naming the agent; exit 1. A checkpoint that cannot play (its file's fault, not code's):
    the line alone."""
    from rummyzoo.agents.checkpoints import CheckpointError

    if not isinstance(exc, CheckpointError):
        traceback.print_exception(exc, file=sys.stderr)
    print(
        f"rummyzoo {command}: error: an agent failed: {shown_message(f'{exc}{_notes(exc)}')}",
        file=sys.stderr,
    )
    return 1


def _one_line(command: str, exc: BaseException, code: int) -> int:
    """An error in one line with its notes, exit ``code``; an agent's own, as such."""
    if is_agent_failure(exc):
        return _agent_failed(command, exc)
    print(f"rummyzoo {command}: error: {shown_message(f'{exc}{_notes(exc)}')}", file=sys.stderr)
    return code


def _one_line_warning(message: Warning | str, category: type, *_args: object, **_kw: object) -> str:
    return f"rummyzoo: warning: {shown_message(message)}\n"


def main(argv: list[str] | None = None) -> int:
    warnings.formatwarning = _one_line_warning
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    args.argv = ["rummyzoo", *(sys.argv[1:] if argv is None else argv)]  # what a run records
    if unknown:  # said by the command, with its usage (not the list of every command)
        args._commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    # SIGTERM as Ctrl-C while the command runs (``train`` puts its own handler over it for a
    # run), where nothing else handles it: Python's default would end the process at once,
    # its worker processes left playing on
    sigterm = None
    unraisable_hook = sys.unraisablehook
    stops: _StopsAgain | None = None
    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            sigterm = signal.signal(signal.SIGTERM, _terminated)
        sys.unraisablehook = stops = _StopsAgain(unraisable_hook)
    try:
        try:
            code = int(args.func(args) or 0)
        finally:  # nothing sent again past here (a stop sent before lands here at the latest)
            missed = None if stops is None else stops.disarm()
        if missed is not None:  # a stop as the command ended: a stop all the same
            raise Terminated("terminated") if missed == signal.SIGTERM else KeyboardInterrupt
        return code
    except UnicodeEncodeError as exc:  # before ValueError: it is one
        print(
            f"rummyzoo {args.command}: error: the output's encoding ({sys.stdout.encoding}) cannot show "
            f"{exc.object[exc.start : exc.end]!r}: set PYTHONIOENCODING=utf-8 (or use a UTF-8 "
            "terminal)",
            file=sys.stderr,
        )
        return 2
    except (
        ValueError,
        FileNotFoundError,
        FileExistsError,
        NotADirectoryError,
        IsADirectoryError,
        PermissionError,
    ) as exc:  # bad input, or a path that cannot be what the command needs: one line
        # with the notes it gathered on the way
        return _one_line(args.command, exc, 2)
    except ProcessDied as exc:  # a process of the command's games ended under it: one line
        print(
            f"rummyzoo {args.command}: error: {shown_message(f'{exc}{_notes(exc)}')}",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt as exc:  # Ctrl-C: one line, no traceback
        why = f"; {exc}" if str(exc) else ""
        shown = shown_message(f"{why}{_notes(exc)}")
        print(f"\nrummyzoo {args.command}: interrupted{shown}", file=sys.stderr)
        return 128 + getattr(exc, "signum", 2)  # 130 for Ctrl-C, 143 for SIGTERM
    except BrokenPipeError:  # the reader went away (``rummyzoo demo | head``)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that Python's exit flush does not fail too
        return 141
    except OSError as exc:  # the machine's (a full disk, a device's error): one line
        return _one_line(args.command, exc, 1)
    except Exception as exc:  # an agent's own error of any other type, too
        if not is_agent_failure(exc):
            raise
        return _agent_failed(args.command, exc)
    finally:  # (each step whatever stops the one before: a stop can land here too)
        try:
            if stops is not None:
                stops.disarm()
        finally:
            try:
                if stops is not None and sys.unraisablehook is stops:  # (unless replaced since)
                    sys.unraisablehook = unraisable_hook
            finally:
                if sigterm is not None:
                    signal.signal(signal.SIGTERM, sigterm)


if __name__ == "__main__":
    sys.exit(main())
