"""Play a variant in the terminal against heuristics or checkpoints: ``rummyzoo play VARIANT``.

The screen shows what the rules let the human see: the table from the human's seat (own hand,
the discard pile, what opponents melded or took openly, hand sizes, scores) with suit symbols,
red diamonds and hearts on a colour terminal, then the legal moves, numbered. A move is chosen
by its number or its name (``discard Kh``, ``knock 10h``, ``K♥``-style cards too); a unique start
of a name or the words of one move are enough (``ditch 9c``). ``help`` shows the commands and the
variant's rules, ``quit``, Ctrl-D (end of input) or Ctrl-C leave cleanly. Opponents' moves are
printed by name; at the end of every hand all hands are shown (melds and deadwood where the
variant has them) with the hand's points and the match totals.

Each variant adds what its decisions need: Knock Rummy shows, before each discard, the deadwood
of the hand as held and what each discard that may knock would leave (the rules' own solver);
Ditch Rummy lists ``draw 0`` into an empty hand as the pass it is; 500 Rum says why a dig is
refused (the must-use rule for the deepest card taken).

.. code-block:: console

    rummyzoo play knock_rummy --opponents knock.smart --seed 7
    rummyzoo play ditch_rummy --players 3 --option target_score=null
    rummyzoo play rummy500 --opponents runs/x/checkpoints/best.rz --save game.json
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shlex
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from rummyzoo.agents.base import Policy
from rummyzoo.agents.checkpoints import learnt_rules_said, trained_players, trained_rules
from rummyzoo.agents.registry import agent_names, check_agent_object, make_agent
from rummyzoo.cli.common import Parents, output_file, parse_options
from rummyzoo.cli.display import colour_cards, hand_over_text, render_table, verdict
from rummyzoo.envs.core import ConfigError
from rummyzoo.envs.files import is_file
from rummyzoo.envs.match import HandEnd, Match
from rummyzoo.envs.play import Decision, play_episode
from rummyzoo.envs.registry import check_players, variant_module
from rummyzoo.envs.replay import (
    HandOver,
    Recorder,
    describe_action,
    hand_over,
    make_play_match,
    random_seed,
    save_replay,
)

__all__ = ["PlayResult", "default_opponents", "match_move", "play_game", "strongest_agent"]

#: Heuristic tiers from strongest to weakest (an agent is ``<variant prefix>.<tier>``).
TIER_ORDER = ("expert", "strong", "smart", "greedy")  # plug-in agents may name these tiers
QUIT_WORDS = ("quit", "q", "exit")
HELP_WORDS = ("help", "?", "h")
MOVES_WORDS = ("moves", "m", "list")
TABLE_WORDS = ("table", "t", "show")
VARIANT_TITLES = {
    "knock_rummy": "Knock Rummy",
    "ditch_rummy": "Ditch Rummy",
    "rummy500": "500 Rum",
}

COMMANDS_HELP = """\
commands:
  NUMBER          play the move with that number
  NAME            play a move by its name, e.g. "discard Kh" (any case; 10h or Th; K♥ works);
                  a unique start of a name ("draw") or the words of one move ("ditch 9c") is enough
  moves, m        list the legal moves again
  table, t        show the table again
  help, ?         this help and the rules
  quit, q         leave the game (Ctrl-D and Ctrl-C leave too)"""

#: What the screen shows or does differently in a variant, for ``help``.
VARIANT_HELP = {
    "knock_rummy": """\
deadwood: before you discard, a line shows the deadwood of your hand as it is (its best melds
  found by the rules' own solver) and what each discard you may knock with would leave.""",
    "ditch_rummy": """\
draw 0 with an empty hand is a pass: nothing is drawn and your turn ends at once (the list
  says so). It stays on the list: with an empty hand it is the only way to pass without
  drawing, which leaves the draw pile as it is and counts towards a stall (a full round in
  which nobody draws, plays or ditches ends the hand).""",
    "rummy500": """\
digging: the deepest card you take from the discard pile must be used at once (your first
  play puts it in a meld or lays it off, no discard before that), so only digs with such a play
  are listed; a refused dig says why.""",
}


def strongest_agent(variant: str) -> str:
    """The strongest heuristic registered for ``variant`` (by tier name), else ``random``."""
    heuristics = [n for n in agent_names(variant) if n != "random"]
    for tier in TIER_ORDER:
        for name in heuristics:
            if name.rsplit(".", 1)[-1] == tier:
                return name
    return heuristics[-1] if heuristics else "random"


def default_opponents(
    variant: str, num_players: int, opponents: Sequence[str | Policy] | None
) -> list[str | Policy]:
    """One opponent per other seat: ``opponents`` cycled, or the strongest heuristic.

    :raises ValueError: more opponents than other seats.
    """
    specs = list(opponents or [strongest_agent(variant)])
    if len(specs) > num_players - 1:
        names = ", ".join(s if isinstance(s, str) else str(getattr(s, "name", s)) for s in specs)
        raise ValueError(
            f"{len(specs)} opponents given for {num_players - 1} other seat(s): {names}"
        )
    return [specs[i % len(specs)] for i in range(num_players - 1)]


def rules_summary(variant: str, options: dict[str, Any] | None = None) -> str:
    """The rules section of the variant's documentation page (its module docstring), as plain
    text, and the rule options of this game (``options``) that are not the defaults."""
    module = variant_module(variant)
    text = _rules_section(module.__doc__ or "")
    text = re.sub(r"``([^`]+)``", r"\1", text)  # reST literals, bold and emphasis as plain text
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(\S[^*\n]*?)\*(?![\w*])", r"\1", text)
    shown = ", ".join(f"{k}={v!r}" for k, v in (options or {}).items())
    rules = f"this game's options: {shown}" if shown else "this game plays the default options"
    return f"{text}\n\n{rules} (every option and its default: python -m pydoc {module.__name__})"


def _rules_section(doc: str) -> str:
    lines = doc.splitlines()

    def is_heading(i: int) -> bool:
        return (
            i + 1 < len(lines)
            and lines[i].strip() != ""
            and set(lines[i + 1].strip()) == {"-"}
            and len(lines[i + 1].strip()) >= 3
        )

    start = next(
        (i for i in range(len(lines)) if is_heading(i) and lines[i].startswith("Rules")), None
    )
    if start is None:
        return doc.strip()
    end = next((i for i in range(start + 2, len(lines)) if is_heading(i)), len(lines))
    return "\n".join(lines[start:end]).strip()


# ---------------------------------------------------------------------------- moves
_SYMBOL_LETTERS = str.maketrans({"♣": "c", "♦": "d", "♥": "h", "♠": "s"})


def _normalise(text: str) -> str:
    """Lower case, suit symbols as letters, ``10`` as ``t``, punctuation dropped."""
    text = text.translate(_SYMBOL_LETTERS).lower()
    text = re.sub(r"[:()+,;]", " ", text)
    words = [("t" + w[2:]) if re.fullmatch(r"10[cdhs]", w) else w for w in text.split()]
    return " ".join(words)


@functools.lru_cache(maxsize=32)
def _actions_by_name(names: tuple[str, ...]) -> dict[str, int]:
    """Each normalised action name's first action id (a game's names, normalised once)."""
    index: dict[str, int] = {}
    for action, name in enumerate(names):
        index.setdefault(_normalise(name), action)
    return index


def _number_range(count: int) -> str:
    return "1" if count == 1 else f"a number 1-{count}"


def match_move(
    text: str,
    legal: Sequence[int],
    labels: Sequence[str],
    raw: Any,
    why: Callable[[int], str] | None = None,
    where: str = "moves lists them, help explains",
) -> tuple[int | None, str]:
    """The legal action meant by ``text``, or None and the reason it is not a legal move.

    ``text`` is a number of the list (1-based), an action name, a unique start of one, or
    words that all appear in exactly one move's label. ``why(action)``, when given, says why
    an action that ``text`` names exactly is illegal now (empty: no more than that); ``where``
    says where the player finds the moves (the terminal's commands by default).
    """
    key = _normalise(text)
    if not key:
        return None, f"type a move's number or name ({where})"
    if key.isascii() and key.isdigit():  # not "²" or "①", which int() refuses
        digits = key.lstrip("0") or "0"
        if len(digits) > len(str(len(legal))):  # past the list (and int()'s digit limit)
            shown = digits if len(digits) <= 12 else f"{digits[:6]}... ({len(digits)} digits)"
            return None, f"there is no move {shown}: choose {_number_range(len(legal))}"
        number = int(digits)
        if 1 <= number <= len(legal):
            return legal[number - 1], ""
        return None, f"there is no move {number}: choose {_number_range(len(legal))}"
    names = [_normalise(raw.action_name(a)) for a in legal]
    for action, name in zip(legal, names, strict=True):
        if key == name:
            return action, ""
    every = getattr(raw, "game", raw).action_names  # an env or its game
    named = _actions_by_name(tuple(every)).get(key)
    if named is not None:  # the exact name of a move that is not legal now: no other is meant
        return None, not_legal(raw, named, why, legal)
    # the words of the labels, their points left out ("single 1: 9c (+2)" is no "single 2")
    plain = [_normalise(_POINTS.sub(" ", label)) for label in labels]
    words = key.split()
    by_words = [
        a for a, label in zip(legal, plain, strict=True) if all(w in label.split() for w in words)
    ]
    if len(by_words) > 1:  # "ditch Kd" means "ditch 2: Kd" rather than "ditch all: 9c Kd"
        size = {a: len(label.split()) for a, label in zip(legal, plain, strict=True)}
        tightest = min(size[a] for a in by_words)
        if [size[a] for a in by_words].count(tightest) == 1:
            by_words = [a for a in by_words if size[a] == tightest]
    if len(by_words) == 1:
        return by_words[0], ""
    by_start = [
        a
        for a, label, name in zip(legal, plain, names, strict=True)
        if label.startswith(key) or name.startswith(key)
    ]
    if len(by_start) == 1:
        return by_start[0], ""
    candidates = by_words or by_start
    if candidates:
        shown = ", ".join(raw.action_name(a) for a in candidates[:10])
        more = " ..." if len(candidates) > 10 else ""
        return None, f"{text.strip()!r} could be any of: {shown}{more}; be more precise"
    try:
        action = raw.action_index(key)
    except ValueError:
        # the start of moves that exist but are not legal now ("take" while discarding)
        starts = [a for a, name in enumerate(every) if _normalise(name).startswith(key)]
        if len(starts) != 1:
            if starts:
                return (
                    None,
                    f"no {text.strip()!r} move is legal now; legal: {_legal_shown(raw, legal)}",
                )
            return None, (
                f"unknown move {text.strip()!r}: type {_number_range(len(legal))} or a move name "
                f"({where})"
            )
        action = starts[0]
    return None, not_legal(raw, action, why, legal)


#: a label's points (``(+25)``), which are no words of the move
_POINTS = re.compile(r"\(\s*[+-]\d+\s*\)")


def _legal_shown(raw: Any, legal: Sequence[int]) -> str:
    """The first legal moves' names, for a refusal."""
    more = " ..." if len(legal) > 12 else ""
    return ", ".join(raw.action_name(a) for a in legal[:12]) + more


def not_legal(raw: Any, action: int, why: Callable[[int], str] | None, legal: Sequence[int]) -> str:
    """Why ``action`` cannot be played now (``why(action)``: the game's reason, if any), and
    the legal moves."""
    detail = why(action) if why is not None else ""
    return (
        f"{raw.action_name(action)!r} is not a legal move now"
        + (f": {detail}" if detail else "")
        + f"; legal: {_legal_shown(raw, legal)}"
    )


def format_moves(labels: Sequence[str], paint: Any, width: int = 100) -> str:
    """The numbered moves in columns (padding measured before colouring)."""
    items = [f"{i:>2}) {label}" for i, label in enumerate(labels, 1)]
    cell = max(len(colour_cards(item)) for item in items) + 3
    columns = max(1, min(4, width // cell))
    rows = -(-len(items) // columns)
    lines = []
    for r in range(rows):
        cells = [items[c * rows + r] for c in range(columns) if c * rows + r < len(items)]
        lines.append(
            "".join(paint(item) + " " * (cell - len(colour_cards(item))) for item in cells[:-1])
            + paint(cells[-1])
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- console
class _Leave(Exception):
    """The human left (quit, end of input)."""


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Console:
    """Reads answers and writes the screen; echoes answers when the input is not a terminal."""

    def __init__(self, input_stream: TextIO, output_stream: TextIO, color: bool) -> None:
        self.input = input_stream
        self.output = output_stream
        self.color = color
        self.echo = not _is_tty(input_stream)
        self.builtin = (
            input_stream is sys.stdin
            and output_stream is sys.stdout
            and _is_tty(input_stream)
            and _is_tty(output_stream)
        )

    def paint(self, text: str) -> str:
        return colour_cards(text, symbols=True, color=self.color)

    def say(self, text: str = "") -> None:
        self.output.write(text + "\n")
        self.output.flush()

    def ask(self, prompt: str) -> str:
        """One line of input (without the newline); raises :class:`_Leave` at end of input."""
        if self.builtin:
            try:
                return input(prompt)  # line editing on a real terminal
            except EOFError:
                self.say()
                raise _Leave from None
        self.output.write(prompt)
        self.output.flush()
        line = self.input.readline()
        if line == "":
            self.say()
            raise _Leave
        line = line.rstrip("\r\n")
        if self.echo:
            self.say(line)
        return line


# ---------------------------------------------------------------------------- the game
@dataclass
class PlayResult:
    """How a human game ended.

    :param finished: the episode ended (False: the human left first).
    :param points: raw points of each finished hand, ``points[hand][seat]``.
    :param totals: episode points per seat so far.
    :param seed: the env seed (replay the deals with it).
    :param replay: the game as a replay dict (see :mod:`rummyzoo.envs.replay`).
    """

    finished: bool
    points: list[list[float]]
    totals: list[float]
    seed: int
    replay: dict[str, Any] = field(repr=False, default_factory=dict)


def play_game(
    variant: str,
    num_players: int | None = None,
    opponents: Sequence[str | Policy] | None = None,
    seat: int = 0,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
    input_stream: TextIO | None = None,
    output_stream: TextIO | None = None,
    color: bool | None = None,
    save: str | None = None,
) -> PlayResult:
    """Play one episode of ``variant`` with a human at ``seat``, through text streams.

    :param num_players: the seats; None: the player count of the first checkpoint among
        ``opponents`` that is of this variant, else 2.
    :param opponents: agent names (or policies) for the other seats in seat order, cycled when
        fewer than ``num_players - 1``; default: the variant's strongest heuristic.
    :param options: rules options (``{"target_score": None}`` plays a single hand); a rule
        they leave out is the one the first checkpoint among ``opponents`` learnt (for its
        variant and player count), else the rule's default.
    :param seed: the env seed; a fresh one is drawn (and shown) when None.
    :param color: ANSI colours; default: when the output is a terminal and ``NO_COLOR`` is unset.
    :param save: write the game as a replay JSON file here (also when the human leaves).
    :raises ValueError: unknown variant or agent, bad player count, seat or option.
    """
    input_stream = input_stream if input_stream is not None else sys.stdin
    output_stream = output_stream if output_stream is not None else sys.stdout
    if color is None:
        color = _is_tty(output_stream) and "NO_COLOR" not in os.environ
    options = dict(options or {})
    # the game of the first checkpoint opponent of this variant, where the player does not
    # say otherwise
    trained = next(
        (
            s
            for s in opponents or ()
            if isinstance(s, str) and is_file(s) and trained_players(s, variant) is not None
        ),
        None,
    )
    if num_players is None:
        num_players = trained_players(trained, variant) if trained else 2
    check_players(variant, num_players)
    learnt = {} if trained is None else trained_rules(trained, variant, num_players)
    adopted = {k: v for k, v in learnt.items() if k not in options}
    options = {**adopted, **options}
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < num_players:
        raise ValueError(
            f"--seat must be 0..{num_players - 1} with {num_players} players, got {seat!r}"
        )
    specs = default_opponents(variant, num_players, opponents)
    try:
        match = make_play_match(variant, num_players, options)
    except ValueError as exc:  # an option of the checkpoint's rules said to be its own
        said = learnt_rules_said(str(exc), adopted, str(trained))
        if said == str(exc):
            raise
        raise ConfigError(said) from None
    # the seed deals every card: one picked here is shown only once the game is over
    given = seed is not None
    seed = random_seed() if seed is None else seed
    others = [s for s in range(num_players) if s != seat]
    policies: list[Any] = [None] * num_players
    labels = ["human"] * num_players
    for s, spec in zip(others, specs, strict=True):
        if isinstance(spec, str):
            policies[s] = make_agent(spec, variant, num_players, options)
            labels[s] = spec  # a checkpoint as the player named it: best.rz of which run
        else:  # an agent object: refused as its name would be, before the game starts
            check_agent_object(spec, variant, num_players, options)
            policies[s] = spec
            labels[s] = str(getattr(spec, "name", "agent"))
    rngs = [np.random.default_rng([seed, s]) for s in range(num_players)]
    recorder = Recorder(variant, options, labels, seed)
    console = _Console(input_stream, output_stream, color)
    session = _Session(console, match, recorder, seat, labels, variant)
    if adopted:
        session.learnt = (Path(str(trained)).name, adopted)
    policies[seat] = session  # the human's moves come from the terminal
    finished = False
    stopped: KeyboardInterrupt | None = None
    try:
        session.banner(seed if given else None)
        play_episode(match, policies, rngs, seed=seed, on_event=session.on_event, labels=labels)
        session.game_over(seed)
        finished = True
    except (_Leave, KeyboardInterrupt) as exc:
        console.say()
        if getattr(exc, "signum", None) == signal.SIGTERM:
            # stopped from outside (kill, a scheduler): the game is kept, then the command
            # ends as the signal asks (exit 143), not as a player who left
            stopped = exc
            console.say(f"stopped: the game was terminated (seed {seed})")
        else:
            console.say(f"goodbye: you left the game (seed {seed})")
    except BaseException:  # an opponent that failed: the game so far is kept, then the error
        if save:
            _save(recorder.to_dict(), save, console)
        raise
    replay = recorder.to_dict()
    if save:
        _save(replay, save, console)
    if stopped is not None:
        raise stopped
    return PlayResult(
        finished=finished,
        points=[list(p) for p in recorder.points],
        totals=match.totals_by_seat().tolist(),
        seed=seed,
        replay=replay,
    )


def _save(replay: dict[str, Any], save: str, console: _Console) -> None:
    path = save_replay(replay, save)
    console.say(f"saved the game to {path} (rummyzoo replay {shlex.quote(str(path))})")


class _Session:
    """One human game: the human's seat as a policy, and the game shown as it is played."""

    name = "human"

    def __init__(
        self,
        console: _Console,
        match: Match,
        recorder: Recorder,
        seat: int,
        labels: list[str],
        variant: str,
    ) -> None:
        self.console = console
        self.match = match
        self.recorder = recorder
        self.seat = seat
        self.labels = labels
        self.variant = variant
        #: (the checkpoint's file name, the rules taken from it) where the game plays them
        self.learnt: tuple[str, dict[str, Any]] | None = None

    def reset(self, seat: int | None = None) -> None:
        return None

    def banner(self, seed: int | None) -> None:
        """The game's opening lines; ``seed``: the one the player gave (None: one picked for
        the game, which is not shown before it is over: it deals every card)."""
        c = self.console
        n = len(self.labels)
        title = VARIANT_TITLES.get(self.variant, self.variant)
        target = self.match.options.target_score
        length = "one hand" if target is None else f"a match to {target}"
        shown = f"seed {seed}" if seed is not None else "its seed shown when it is over"
        c.say(f"{title}, {n} players, {length}; {shown}")
        if self.learnt is not None:  # rules taken from a checkpoint opponent
            name, rules = self.learnt
            shown = ", ".join(f"{k}={v!r}" for k, v in rules.items())
            c.say(f"the rules {name} learnt: {shown} (--option sets another)")
        others = ", ".join(f"player_{s} = {self.labels[s]}" for s in range(n) if s != self.seat)
        c.say(f"you are player_{self.seat}; {others}")
        c.say("type a move's number or name; help for the commands and rules, quit to leave")

    def who(self, seat: int) -> str:
        return "you" if seat == self.seat else f"player_{seat} ({self.labels[seat]})"

    def table(self) -> str:
        text = render_table(self.match, self.seat)
        return "\n".join(line for line in text.splitlines() if not line.startswith("legal:"))

    def on_event(self, event: Any, match: Match) -> None:
        self.recorder(event, match)
        c = self.console
        if type(event) is Decision:
            text = describe_action(match, event.action, public=event.seat != self.seat)
            c.say(c.paint(f"{self.who(event.seat)}: {text}"))
        elif type(event) is HandEnd:
            self.hand_over(hand_over(event, match))

    def act(self, observation: Any, action_mask: np.ndarray, rng: Any) -> int:
        """The human's move, read from the terminal (``quit`` leaves the game)."""
        c = self.console
        match = self.match
        legal = np.flatnonzero(action_mask).tolist()
        game = match.game
        labels = game.move_labels(match.state, legal)
        why = lambda a: game.illegal_reason(match.state, a)  # noqa: E731
        c.say()
        c.say(c.paint(self.table()))
        note = game.move_hint(match.state, self.seat, legal)
        if note:
            c.say(c.paint(note))
        c.say(f"-- player_{self.seat}, your move --")
        c.say(format_moves(labels, c.paint))
        while True:
            answer = c.ask("your move> ").strip()
            word = answer.lower()
            if word in QUIT_WORDS:
                raise _Leave
            if word in HELP_WORDS:
                c.say(COMMANDS_HELP)
                if self.variant in VARIANT_HELP:
                    c.say(c.paint(VARIANT_HELP[self.variant]))
                c.say()
                c.say(c.paint(rules_summary(self.variant, self.recorder.options)))
                continue
            if word in MOVES_WORDS:
                c.say(format_moves(labels, c.paint))
                continue
            if word in TABLE_WORDS:
                c.say(c.paint(self.table()))
                continue
            action, reason = match_move(answer, legal, labels, match.game, why)
            if action is not None:
                return action
            c.say(c.paint(reason))

    def hand_over(self, event: HandOver) -> None:
        c = self.console
        c.say()
        c.say(c.paint(hand_over_text(self.match, event)))
        if not event.episode_over:
            answer = c.ask(f"press Enter to deal hand {event.number + 1} (quit to leave)> ")
            if answer.strip().lower() in QUIT_WORDS:
                raise _Leave

    def game_over(self, seed: int) -> None:
        c = self.console
        totals = self.match.totals_by_seat().tolist()
        groups = self.match.game.score_groups.tolist()
        said = verdict(totals, self.seat, groups, self.who)
        final = ", ".join(f"{self.who(s)} {t:+g}" for s, t in enumerate(totals))
        c.say()
        c.say(f"game over: {said}. final points: {final} (seed {seed})")


def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    play = sub.add_parser(
        "play",
        parents=[parents.game(), parents.seed(None), parents.options()],
        help="play a variant in the terminal against heuristics or checkpoints",
        description="Play VARIANT in the terminal. Moves are listed by number and name; type "
        "either. help shows the commands and rules; quit, Ctrl-D or Ctrl-C leave.",
    )
    play.add_argument(
        "--opponents",
        nargs="+",
        metavar="AGENT",
        help="agents for the other seats in order, cycled if fewer (default: the variant's "
        "strongest heuristic); random, a heuristic such as knock.smart, a checkpoint path, or "
        "package.module:ClassName; a heuristic or class may take constructor parameters in "
        "parentheses (quoted): 'knock.smart(samples=48)'",
    )
    for action in play._actions:  # a checkpoint opponent's player count by default
        if action.dest == "players":
            action.default = None
            action.help = "seats (default: a checkpoint opponent's, else 2)"
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0: you start)")
    play.add_argument("--no-color", action="store_true", help="no ANSI colours")
    play.add_argument(
        "--save",
        metavar="FILE",
        help="save the game as a replay JSON file (FILE ends in .json; none: .json is added)",
    )
    play.set_defaults(func=run)


def _replay_file(path: str, inputs: list[str]) -> Path:
    """Where ``--save`` writes the game: a replay's name (none: .json), so that a slip of the
    name cannot replace a page or a checkpoint with it."""
    return output_file(path, "--save", ".json", (".json",), inputs=inputs)


def run(args: argparse.Namespace) -> int:
    """Play a variant in the terminal against agents."""
    files = [a for a in args.opponents or () if is_file(a)]  # checkpoints it reads
    play_game(
        args.variant,
        num_players=args.players,
        opponents=args.opponents,
        seat=args.seat,
        options=parse_options(args.option),
        seed=args.seed,
        color=False if args.no_color else None,
        save=None if args.save is None else str(_replay_file(args.save, files)),
    )
    return 0
