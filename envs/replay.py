"""Game replays: record a game as JSON, re-simulate it exactly, step through it in the terminal.

Format (version 1)
------------------
A replay is one JSON object:

=====================  ===================================================================
key                    content
=====================  ===================================================================
``format``             1
``variant``            ``knock_rummy``, ``ditch_rummy`` or ``rummy500``
``num_players``        seats
``options``            the rules options the game was played with
``seed``               the env seed (fixes the decks of later hands and in-hand chance)
``dealt_from_seed``    true: every deck came from the seed; false: the first deck was given
                       to ``reset`` and the later ones came from the seed
``decks``              the deck of every hand as card strings, top of the stock first
``agents``             a name per seat (``knock.smart``, ``random``, ``human``, a checkpoint)
``actions``            ``[[seat, "action name"], ...]`` in the order played
``points``             raw points of every finished hand: ``points[hand][seat]``
``final``              episode points per seat (a team's points for each member)
``finished``           the episode ended (false: the recording stopped mid-game)
``truncated``          the episode ended at the turn or hand cap
=====================  ===================================================================

Extra keys (e.g. ``source``: where an arena game came from) are kept and ignored.

Re-simulation (:func:`verify_replay`, :class:`ReplaySimulation`) rebuilds the env with the same
options, resets it with ``seed`` (and the first deck when it was given), checks that every hand
is dealt the recorded deck, applies every action by name and compares the points of every hand
and the final totals. Anything that does not match (an unknown or illegal action, a wrong seat,
a different deck, different points, a broken file) raises :class:`ReplayError`:
``replay FILE is corrupt: ...``.

Recording: a :class:`Recorder` is an observer of the play loop
(:func:`rummyzoo.envs.play.play_episode`): it writes down every deck, action and hand result
as the game is played, so whatever plays a game (the arena, the terminal game, sample games in
training) records it without playing it twice; :func:`record_game` plays one game of policies
and returns its replay. Re-simulation plays the recorded actions through the same loop.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.envs.cards import CARD_NAMES
from rummyzoo.envs.core import IllegalActionError, finite_number, short_repr
from rummyzoo.envs.match import HandEnd, Match
from rummyzoo.envs.play import Deal, Decision, play_episode
from rummyzoo.envs.registry import VARIANTS, make_match
from rummyzoo.envs.seeding import check_seed

__all__ = [
    "FORMAT_VERSION",
    "HandOver",
    "Move",
    "Recorder",
    "ReplayError",
    "ReplaySimulation",
    "check_replay",
    "describe_action",
    "hands_played",
    "legal_moves",
    "load_replay",
    "make_play_match",
    "random_seed",
    "record_game",
    "replay_frames",
    "save_replay",
    "verify_replay",
]

FORMAT_VERSION = 1
REQUIRED_KEYS = (
    "format",
    "variant",
    "num_players",
    "options",
    "seed",
    "decks",
    "agents",
    "actions",
    "points",
    "final",
)


class ReplayError(ValueError):
    """A replay file that cannot be read or does not reproduce its recorded game."""


def make_play_match(variant: str, num_players: int, options: dict[str, Any] | None = None) -> Match:
    """The match of a recorded or human game (raw points, text rendering).

    :raises ValueError: unknown variant, unsupported player count, a reserved option.
    :raises ConfigError: an unknown or invalid rules option.
    """
    return make_match(variant, num_players, options, "rummyzoo itself", render_mode="ansi")


def random_seed() -> int:
    """A fresh seed from OS entropy (recorded, so the game can be replayed), below 2**53: a
    JSON number that JavaScript (the web app, a replay page) reads exactly."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 11)


def describe_action(match: Match, action: int, public: bool = False) -> str:
    """The action's name, with the cards it moves where the variant can say (Ditch Rummy);
    ``public``: as the other seats may be told it (no positions in a hidden hand)."""
    return match.game.describe_action(match.state, action, public)


def _deck_strings(deck: np.ndarray) -> list[str]:
    return [CARD_NAMES[int(c)] for c in deck]


# ---------------------------------------------------------------------------- recording
@dataclass
class Move:
    """One action as it was played: its position in the game, who played it and what it was
    (``description``; ``public``: what the other seats were told of it)."""

    index: int
    seat: int
    action: int
    name: str
    description: str
    public: str

    def seen_by(self, view: int | None) -> str:
        """The description as ``view``'s seat sees it (None: every hand open)."""
        return self.description if view is None or view == self.seat else self.public


@dataclass
class HandOver:
    """A hand that just ended.

    :param number: 1 for the first hand of the episode.
    :param state: the finished hand's state (render it with ``game.render``).
    :param points: raw points per seat (None when the hand was truncated).
    :param totals: match totals per seat after the hand.
    :param infos: the hand's infos, per agent.
    :param truncated: the hand hit the turn or hand cap.
    :param episode_over: no hand follows.
    """

    number: int
    state: Any
    points: list[float] | None
    totals: list[float]
    infos: dict[str, dict[str, Any]]
    truncated: bool
    episode_over: bool


def hand_over(end: HandEnd, match: Match) -> HandOver:
    """The :class:`HandOver` of a hand end reported by the play loop."""
    truncated = end.truncated_by is not None
    return HandOver(
        number=end.index,
        state=end.state,
        points=None if end.points is None else [float(p) for p in end.points],
        totals=match.totals_by_seat().tolist(),
        infos={a: dict(i) for a, i in zip(match.seat_names, end.infos, strict=True)},
        truncated=truncated,
        episode_over=end.match_over,
    )


class Recorder:
    """Records a game as it is played: pass it as ``on_event`` to the play loop.

    :param variant: the variant name, and ``options`` the rules options, recorded as given.
    :param agents: a name per seat.
    :param seed: the match's seed (recorded; the deal stream follows from it).
    :param dealt_from_seed: False when the first deck was given to the reset.
    """

    def __init__(
        self,
        variant: str,
        options: dict[str, Any],
        agents: Sequence[str],
        seed: int,
        dealt_from_seed: bool = True,
    ) -> None:
        self.variant = variant
        self.options = dict(options)
        self.agents = [str(a) for a in agents]
        self.seed = check_seed(seed, none_too=False)
        self.dealt_from_seed = dealt_from_seed
        self.decks: list[list[str]] = []
        self.actions: list[list[Any]] = []
        self.points: list[list[float]] = []
        self.final: list[float] = [0.0] * len(self.agents)
        self.finished = False
        self.truncated = False

    def __call__(self, event: Any, match: Match) -> None:
        if type(event) is Decision:
            self.actions.append([event.seat, match.game.action_names[event.action]])
        elif type(event) is Deal:
            self.decks.append(_deck_strings(event.deck))
        elif type(event) is HandEnd:
            if event.points is not None:
                self.points.append([float(p) for p in event.points])
            self.final = match.totals_by_seat().tolist()
            self.finished = event.match_over
            self.truncated = event.truncated_by is not None

    def to_dict(self, **extra: Any) -> dict[str, Any]:
        """The replay as a JSON-ready dict (``extra`` keys are added, e.g. ``source``)."""
        return {
            "format": FORMAT_VERSION,
            "variant": self.variant,
            "num_players": len(self.agents),
            "options": self.options,
            "seed": self.seed,
            "dealt_from_seed": self.dealt_from_seed,
            "decks": [list(d) for d in self.decks],
            "agents": list(self.agents),
            "actions": [list(a) for a in self.actions],
            "points": [list(p) for p in self.points],
            "final": list(self.final),
            "finished": self.finished,
            "truncated": self.truncated,
            **extra,
        }


def record_game(
    variant: str,
    policies: Sequence[Any],
    labels: Sequence[str],
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    rngs: np.random.Generator | Sequence[np.random.Generator] | None = None,
    deck: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Play one game between ``policies`` (one per seat) and return its replay.

    :param labels: the names recorded for the seats.
    :param seed: the match seed (a fresh one when None; it is recorded).
    :param rngs: the policies' random generators (default: one per seat, seeded from ``seed``).
    :param deck: deal the first hand from this order (card strings).
    """
    options = dict(options or {})
    if len(labels) != len(policies):
        raise ValueError(
            f"one label per policy: {len(policies)} policies, {len(labels)} labels ({list(labels)!r})"
        )
    match = make_play_match(variant, len(policies), options)
    seed = random_seed() if seed is None else check_seed(seed)
    if rngs is None:
        rngs = [np.random.default_rng([seed, seat]) for seat in range(len(policies))]
    recorder = Recorder(variant, options, labels, seed, deck is None)
    play_episode(match, policies, rngs, seed=seed, deck=deck, on_event=recorder, labels=labels)
    return recorder.to_dict()


def save_replay(replay: dict[str, Any], path: str | Path) -> Path:
    """Write a replay as JSON, atomically (parent folders are created)."""
    from rummyzoo.envs.files import write_json

    return write_json(replay, path, indent=1)


# ---------------------------------------------------------------------------- loading
#: The largest replay file read (the longest matches' replays are a few MiB).
MAX_REPLAY_BYTES = 64 << 20
#: The most moves a replay page (:func:`replay_frames`) shows: each is a whole table, some 1 KB
#: of the page and 4 KB of memory while it is made, where a match to 500 of 500 Rum at 8
#: players between heuristics and random play makes about a thousand (a file under
#: MAX_REPLAY_BYTES may hold a million moves).
MAX_FRAME_MOVES = 20_000


def load_replay(path: str | Path) -> dict[str, Any]:
    """Read and check the structure of a replay file.

    :raises ReplayError: unreadable file, broken JSON, a missing key or a value of the wrong type.
    """
    source = str(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_REPLAY_BYTES + 1)  # (a device or a pipe may never end)
        if len(raw) > MAX_REPLAY_BYTES:
            raise ReplayError(
                f"replay {source} is larger than a replay may be ({MAX_REPLAY_BYTES >> 20} MiB)"
            )
        text = raw.decode("utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot read replay {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ReplayError(
            f"replay {source} is corrupt: not UTF-8 text (a replay is a JSON file)"
        ) from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, a number too long, nesting
        raise ReplayError(f"replay {source} is corrupt: not valid JSON ({exc})") from None
    check_replay(data, source)
    return data


def _is_text(value: str) -> bool:
    """Whether ``value`` can be written as UTF-8 (a JSON string may hold a lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for a message, cut short where it is long."""
    text = ascii(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _corrupt(source: str, why: str) -> ReplayError:
    return ReplayError(f"replay {source} is corrupt: {why}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_replay(data: Any, source: str = "<replay>") -> None:
    """Check the keys and value types of a replay dict (not the game: see :func:`verify_replay`).

    :raises ReplayError: naming the first problem.
    """
    if not isinstance(data, dict):
        raise _corrupt(source, f"expected a JSON object, got {type(data).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise _corrupt(source, f"missing key(s): {', '.join(missing)}")
    if not _is_int(data["format"]) or data["format"] != FORMAT_VERSION:
        raise _corrupt(source, f"format {short_repr(data['format'], 60)} is not {FORMAT_VERSION}")
    if not isinstance(data["variant"], str) or data["variant"] not in VARIANTS:
        raise _corrupt(source, f"unknown variant {short_repr(data['variant'], 60)}")
    n = data["num_players"]
    if not _is_int(n) or n < 1:
        raise _corrupt(source, f"num_players must be a positive int, got {n!r}")
    if not isinstance(data["options"], dict):
        raise _corrupt(source, "options must be an object")
    if not _is_int(data["seed"]) or data["seed"] < 0:
        raise _corrupt(source, f"seed must be a non-negative int, got {data['seed']!r}")
    decks = data["decks"]
    if (
        not isinstance(decks, list)
        or not decks
        or not all(isinstance(d, list) and all(isinstance(c, str) for c in d) for d in decks)
    ):
        raise _corrupt(source, "decks must be a non-empty list of card-string lists")
    agents = data["agents"]
    if not isinstance(agents, list) or len(agents) != n:
        raise _corrupt(source, f"agents must list one name per seat ({n})")
    for seat, agent in enumerate(agents):
        if not isinstance(agent, str) or not _is_text(agent):
            raise _corrupt(source, f"agents[{seat}] must be a name (text), got {_shown(agent)}")
    actions = data["actions"]
    if not isinstance(actions, list):
        raise _corrupt(source, "actions must be a list of [seat, name] pairs")
    for i, item in enumerate(actions):
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not _is_int(item[0])
            or not isinstance(item[1], str)
        ):
            raise _corrupt(source, f"action {i} must be [seat, name], got {item!r}")
    points = data["points"]
    if not isinstance(points, list) or not all(
        isinstance(p, list) and len(p) == n and all(finite_number(x) for x in p) for p in points
    ):
        raise _corrupt(source, f"points must list {n} numbers per hand")
    final = data["final"]
    if not isinstance(final, list) or len(final) != n or not all(finite_number(x) for x in final):
        raise _corrupt(source, f"final must list {n} numbers")
    for key in ("finished", "truncated", "dealt_from_seed"):
        if key in data and not isinstance(data[key], bool):
            raise _corrupt(source, f"{key} must be true or false")


# ---------------------------------------------------------------------------- re-simulation
def _same(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, abs_tol=1e-9) for x, y in zip(a, b, strict=False)
    )


def _fmt_points(points: Sequence[float]) -> str:
    return "[" + ", ".join(f"{p:+g}" for p in points) + "]"


class _Departure(Exception):
    """The game left its record (raised inside the play loop, turned into ReplayError)."""


class _OutOfMoves(_Departure):
    """The recorded actions ran out while the game goes on."""


class _RecordedMoves:
    """The policy of every seat in a re-simulation: the recorded actions, checked in order."""

    def __init__(self, actions: list[list[Any]]) -> None:
        self.actions = actions
        self.next = 0
        self.match: Match | None = None

    def reset(self, seat: int | None = None) -> None:
        return None

    def act(self, observation: Any, action_mask: np.ndarray, rng: Any) -> int:
        match = self.match
        i = self.next
        if i >= len(self.actions):
            raise _OutOfMoves(f"the recorded actions stop after {i} moves, before the game ends")
        seat, name = self.actions[i]
        to_act = match.state.current
        if seat != to_act:
            raise _Departure(
                f"action {i} ({name!r}) is recorded for seat {seat}, but seat {to_act} is to act"
            )
        try:
            action = match.game.action_index(name)
        except ValueError as exc:
            raise _Departure(f"action {i}: {exc}") from None
        if not action_mask[action]:
            legal = np.flatnonzero(action_mask).tolist()
            shown = ", ".join(match.game.action_names[a] for a in legal[:12])
            more = " ..." if len(legal) > 12 else ""
            raise _Departure(
                f"action {i} ({name!r}) by player_{seat} is illegal there; legal: {shown}{more}"
            )
        self.next = i + 1
        return action


class ReplaySimulation:
    """A replay re-played on a fresh match through the play loop, checked as it goes.

    :meth:`run` re-plays the whole game; ``on_event(event, sim)`` (if given) sees each
    :class:`Move` before it is applied (``sim.match`` still shows the position it was played
    in) and each :class:`HandOver`. :meth:`events` returns them all as a list.

    :raises ReplayError: from ``run`` as soon as the game departs from the record.
    """

    def __init__(self, data: dict[str, Any], source: str = "<replay>") -> None:
        check_replay(data, source)
        self.data = data
        self.source = source
        try:
            self.match = make_play_match(data["variant"], data["num_players"], data["options"])
        except ValueError as exc:
            raise _corrupt(source, f"cannot rebuild the env: {exc}") from None
        self.points: list[list[float]] = []
        self.moves = 0

    def _fail(self, why: str) -> ReplayError:
        return _corrupt(self.source, why)

    def events(self) -> list[Move | HandOver]:
        out: list[Move | HandOver] = []
        self.run(lambda event, sim: out.append(event))
        return out

    def run(self, on_event: Any = None) -> dict[str, Any]:
        """Re-play the whole game; return ``{"hands", "points", "final", "moves"}``."""
        data = self.data
        match = self.match
        decks = data["decks"]
        first_given = not data.get("dealt_from_seed", True)
        moves = _RecordedMoves(data["actions"])
        moves.match = match
        hands_recorded = len(data["points"])
        self.points = []
        self.moves = 0

        dealt = [0]

        def watch(event: Any, match: Match) -> None:
            if type(event) is Deal:
                dealt[0] += 1
                if (
                    event.hand > len(decks)
                    and moves.next == len(data["actions"])
                    and not data.get("finished", True)
                ):  # a recording stopped between two hands
                    raise _OutOfMoves(f"the recording stops before hand {event.hand} is dealt")
                self._check_deck(event.hand - 1, _deck_strings(event.deck))
            elif type(event) is Decision:
                if on_event is not None:
                    name = match.game.action_names[event.action]
                    move = Move(
                        self.moves, event.seat, event.action, name,
                        describe_action(match, event.action),
                        describe_action(match, event.action, public=True),
                    )  # fmt: skip
                    on_event(move, self)
                self.moves += 1
            elif type(event) is HandEnd:
                over = hand_over(event, match)
                if over.points is not None:
                    k = over.number - 1
                    if k >= hands_recorded:
                        raise _Departure(
                            f"hand {over.number} ends after action {self.moves - 1}, but only "
                            f"{hands_recorded} hand(s) have recorded points"
                        )
                    if not _same(over.points, data["points"][k]):
                        raise _Departure(
                            f"hand {over.number} scores {_fmt_points(over.points)}, but the "
                            f"replay records {_fmt_points(data['points'][k])}"
                        )
                    self.points.append(over.points)
                if on_event is not None:
                    on_event(over, self)

        policies = [moves] * data["num_players"]
        episode = None
        try:
            try:
                episode = play_episode(
                    match, policies, np.random.default_rng(0), seed=data["seed"],
                    deck=decks[0] if first_given else None, on_event=watch,
                )  # fmt: skip
            except ValueError as exc:
                # UnicodeError: the caller's output (``on_event``) cannot show a card
                if isinstance(exc, (IllegalActionError, ReplayError, UnicodeError)):
                    raise
                raise _Departure(f"cannot deal the first hand: {exc}") from None
        except _OutOfMoves as exc:
            if data.get("finished", True):  # an unfinished recording may stop mid-game
                raise self._fail(str(exc)) from None
        except _Departure as exc:
            raise self._fail(str(exc)) from None
        else:
            if moves.next < len(data["actions"]):
                left = len(data["actions"]) - moves.next
                raise self._fail(
                    f"the game ends after action {moves.next}, but {left} more are recorded"
                )
            if dealt[0] != len(decks):
                raise self._fail(
                    f"the game deals {dealt[0]} hand(s), but {len(decks)} decks are recorded"
                )
            if not data.get("finished", True):
                raise self._fail(
                    f"the game ends after action {moves.next}, but the replay records it as "
                    "unfinished (finished: false)"
                )
            truncated = bool(episode is not None and episode.truncated)
            if bool(data.get("truncated", truncated)) != truncated:
                raise self._fail(
                    f"the game ends {'at a turn or hand cap' if truncated else 'by play'}, but the "
                    f"replay records truncated: {str(not truncated).lower()}"
                )
        if len(self.points) != hands_recorded:
            raise self._fail(
                f"{len(self.points)} hand(s) were played, but {hands_recorded} are recorded"
            )
        totals = match.totals_by_seat().tolist()
        if not _same(totals, data["final"]):
            raise self._fail(
                f"final points are {_fmt_points(totals)}, but the replay records "
                f"{_fmt_points(data['final'])}"
            )
        return {
            "hands": len(self.points),
            "points": self.points,
            "final": totals,
            "moves": self.moves,
        }

    def _check_deck(self, hand: int, dealt: list[str]) -> None:
        decks = self.data["decks"]
        if hand >= len(decks):
            raise _Departure(
                f"hand {hand + 1} is dealt, but only {len(decks)} deck(s) are recorded"
            )
        if [c.lower() for c in decks[hand]] != [c.lower() for c in dealt]:
            diff = next(
                (
                    j
                    for j, (a, b) in enumerate(zip(decks[hand], dealt, strict=False))
                    if a.lower() != b.lower()
                ),
                min(len(decks[hand]), len(dealt)),
            )
            raise _Departure(
                f"hand {hand + 1} is dealt a different deck than recorded (first difference at "
                f"card {diff}: recorded {decks[hand][diff] if diff < len(decks[hand]) else 'none'}, "
                f"dealt {dealt[diff] if diff < len(dealt) else 'none'})"
            )


def verify_replay(data: dict[str, Any] | str | Path, source: str | None = None) -> dict[str, Any]:
    """Re-simulate a replay (a dict or a file) and check it against its record.

    :returns: ``{"hands", "points", "final", "moves"}`` of the re-played game.
    :raises ReplayError: ``replay SOURCE is corrupt: ...`` naming what does not match.
    """
    if isinstance(data, (str, Path)):
        source = source or str(data)
        data = load_replay(data)
    return ReplaySimulation(data, source or "<replay>").run()


# ---------------------------------------------------------------------------- frames
def legal_moves(match: Match) -> list[dict[str, Any]]:
    """The legal actions of the seat to act: ``[{"action", "name", "description"}]``."""
    game = match.game
    return [
        {"action": int(a), "name": game.action_names[a], "description": describe_action(match, a)}
        for a in np.flatnonzero(match.legal_mask())
    ]


def replay_frames(
    data: dict[str, Any], view: int | None = None, source: str = "<replay>"
) -> dict[str, Any]:
    """A verified replay as the frames a viewer steps through (the HTML replay page).

    One frame per move (the table as the mover saw it, the move, the legal alternatives) and
    one per hand end (every hand open, the hand's points and the totals); a recording that
    stops mid-hand ends with a ``stop`` frame, the table as it stands. Tables are
    :meth:`~rummyzoo.envs.core.Game.table_view` dicts from ``view``'s seat (None: all open);
    the alternatives of another seat's move are not shown from a seat's view, only counted
    (they would tell what that seat holds).

    :raises ReplayError: the replay does not re-play exactly.
    :raises ValueError: ``view`` is not a seat of the game.
    """
    n = data.get("num_players") if isinstance(data, dict) else None
    if view is not None and (not isinstance(n, int) or not 0 <= view < n):
        raise ValueError(f"view must be a seat 0..{(n or 1) - 1}, got {view!r}")
    actions = data.get("actions") if isinstance(data, dict) else None
    if isinstance(actions, list) and len(actions) > MAX_FRAME_MOVES:
        raise ValueError(
            f"replay {source} has {len(actions):,} moves: a page shows at most "
            f"{MAX_FRAME_MOVES:,} (each move a table; `rummyzoo replay FILE` steps through a game "
            "of any length in the terminal)"
        )
    sim = ReplaySimulation(data, source)
    match = sim.match
    frames: list[dict[str, Any]] = []
    hand = [1]

    def record(event: Move | HandOver, sim: ReplaySimulation) -> None:
        totals = match.totals_by_seat()
        if isinstance(event, Move):
            moves = legal_moves(match)
            hidden = view is not None and view != event.seat
            frames.append(
                {
                    "kind": "move",
                    "index": event.index,
                    "hand": hand[0],
                    "seat": event.seat,
                    "agent": data["agents"][event.seat],
                    "move": event.seen_by(view),
                    # a seat's view hides the others' alternatives, their number too (500
                    # Rum's count of legal digs tells which pile cards they can meld)
                    "legal": None if hidden else [m["description"] for m in moves],
                    "legal_count": None if hidden else len(moves),
                    "table": match.game.table_view(match.state, view, totals),
                }
            )
        else:
            frames.append(
                {
                    "kind": "hand_over",
                    "hand": event.number,
                    "points": event.points,
                    "totals": list(event.totals),
                    "truncated": event.truncated,
                    "episode_over": event.episode_over,
                    "table": match.game.table_view(
                        event.state, None, np.asarray(event.totals, dtype=np.float64)
                    ),
                }
            )
            hand[0] = event.number + 1

    summary = sim.run(record)
    if not data.get("finished", True) and (not frames or frames[-1]["kind"] != "hand_over"):
        # a recording that stops mid-hand (or before the first move): the table as it stands
        frames.append(
            {
                "kind": "stop",
                "hand": hand[0],
                "moves": summary["moves"],
                "table": match.game.table_view(match.state, view, match.totals_by_seat()),
            }
        )
    return {
        "variant": data["variant"],
        "num_players": data["num_players"],
        "agents": list(data["agents"]),
        "options": dict(data["options"]),
        "seed": data["seed"] if view is None else None,  # the seed deals every hidden card
        "view": view,
        "hands": summary["hands"],
        "final": summary["final"],
        "frames": frames,
    }


def hands_played(data: dict[str, Any], finished: int) -> str:
    """How many hands a finished recording ``data`` played, in words, from its ``finished``
    hands (those with points): a last hand dealt and cut short by the turn cap counts too
    ("3 hand(s), the last cut short by the turn cap"), and a match stopped by the cap on
    hands says so."""
    hands = f"{finished} hand(s)"
    if len(data["decks"]) > finished:  # the last hand dealt ended at the turn cap
        return f"{len(data['decks'])} hand(s), the last cut short by the turn cap"
    if data.get("truncated"):
        hands += ", stopped by the cap on hands"
    return hands
