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

Recording: :func:`record_episode` plays a game between agents and returns its replay;
:class:`GameRecorder` records a game stepped by someone else (``rummyzoo play`` uses it);
:func:`save_arena_games` replays chosen deals of an arena run, seat for seat and with the same
random streams, and writes one file per game; :func:`save_sample_game` writes one game of a
policy in training against an opponent.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.base import Policy
from rummyzoo.agents.registry import make_agent
from rummyzoo.envs.cards import CARD_NAMES
from rummyzoo.envs.match import REPORT_OPTION_NAMES
from rummyzoo.envs.registry import VARIANTS, check_players, make_env
from rummyzoo.envs.seeding import check_seed, new_generator, seed_generator

__all__ = [
    "FORMAT_VERSION",
    "GameRecorder",
    "HandOver",
    "Move",
    "ReplayError",
    "ReplaySimulation",
    "colour_cards",
    "describe_action",
    "load_replay",
    "make_play_env",
    "random_seed",
    "record_episode",
    "save_arena_games",
    "save_replay",
    "save_sample_game",
    "verify_replay",
]

FORMAT_VERSION = 1
#: Env options that replays and human games set themselves.
RESERVED_OPTIONS = REPORT_OPTION_NAMES
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

AgentSpec = str | Policy


class ReplayError(ValueError):
    """A replay file that cannot be read or does not reproduce its recorded game."""


# ---------------------------------------------------------------------------- display helpers
_CARD_TOKEN = re.compile(r"(?<!\w)(10|[A2-9TJQK])([cdhs])(?!\w)")
_SUIT_SYMBOL = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
_RED = "\x1b[1;31m"
_BLACK = "\x1b[1m"
_RESET = "\x1b[0m"


def colour_cards(text: str, symbols: bool = True, color: bool = False) -> str:
    """Draw every card in ``text`` (``Kh``, ``Td``, ``10s``) with a suit symbol, and in colour.

    With ``symbols`` a card reads ``K♥``, ``10♦``; with ``color`` diamonds and hearts are red and clubs and spades bold (ANSI escapes).
    """

    def draw(match: re.Match[str]) -> str:
        rank, suit = match.group(1), match.group(2)
        if symbols:
            card = ("10" if rank == "T" else rank) + _SUIT_SYMBOL[suit]
        else:
            card = rank + suit
        if not color:
            return card
        return f"{_RED if suit in 'dh' else _BLACK}{card}{_RESET}"

    return _CARD_TOKEN.sub(draw, text)


def describe_action(raw: Any, action: int) -> str:
    """The action's name, with the cards it moves where the variant can say (Ditch Rummy)."""
    describe = getattr(raw, "describe_action", None)
    return describe(action) if describe is not None else raw.action_name(action)


def make_play_env(variant: str, num_players: int, options: dict[str, Any] | None = None) -> Any:
    """The raw env of a recorded or human game: raw points as rewards, text rendering.

    :raises ValueError: unknown variant, unsupported player count, a reserved option.
    :raises ConfigError: an unknown or invalid rules option.
    """
    options = dict(options or {})
    reserved = sorted(set(options) & set(RESERVED_OPTIONS))
    if reserved:
        raise ValueError(
            f"option(s) {', '.join(reserved)} are set by rummyzoo itself; pass rules options only"
        )
    check_players(variant, num_players)
    return make_env(
        variant, num_players, wrapped=False, reward="points", render_mode="ansi", **options
    )


def random_seed() -> int:
    """A fresh seed from OS entropy (recorded, so the game can be replayed)."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)


def _deck_strings(deck: np.ndarray) -> list[str]:
    return [CARD_NAMES[int(c)] for c in deck]


def _agent_label(spec: AgentSpec) -> str:
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", type(spec).__name__))


# ---------------------------------------------------------------------------- recording
@dataclass
class Move:
    """One action as it was played: its position in the game, who played it and what it was."""

    index: int
    seat: int
    action: int
    name: str
    description: str


@dataclass
class HandOver:
    """A hand that just ended.

    :param number: 1 for the first hand of the episode.
    :param state: the finished hand's state (render it with ``raw.game.render``).
    :param points: raw points per seat (None when the hand was truncated).
    :param totals: match totals per seat after the hand.
    :param infos: the env's ``infos`` for the hand, per agent.
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


class GameRecorder:
    """Steps a raw env and records the game as a replay (decks, actions by name, points).

    Call :meth:`reset` instead of ``env.reset`` and :meth:`step` instead of ``env.step``.
    ``step`` returns a :class:`HandOver` when the action ended a hand, else None.

    :param env: a raw env in ``reward="points"`` mode (see :func:`make_play_env`).
    :param variant: the variant name, and ``options`` the rules options, recorded as given.
    :param agents: a name per seat.
    """

    def __init__(
        self, env: Any, variant: str, options: dict[str, Any], agents: Sequence[str]
    ) -> None:
        self.env = env.unwrapped
        if self.env.reward_mode != "points":
            raise ValueError(f"recording needs reward='points', got {self.env.reward_mode!r}")
        self.variant = variant
        self.options = dict(options)
        self.agents = [str(a) for a in agents]
        if len(self.agents) != len(self.env.possible_agents):
            raise ValueError(
                f"need one agent name per seat ({len(self.env.possible_agents)}), "
                f"got {len(self.agents)}"
            )
        self.seed: int | None = None
        self.dealt_from_seed = True
        self.decks: list[list[str]] = []
        self.actions: list[list[Any]] = []
        self.points: list[list[float]] = []
        self.truncated = False
        self._finished_state: Any = None
        # The env deals the next hand of a match inside the step that ends the previous one;
        # keep the finished hand's state so it can still be shown with every hand open.
        raw = self.env
        deal = raw._start_hand

        def start_hand(deck: Any) -> None:
            if raw.state is not None and raw.state.over:
                self._finished_state = raw.state
            deal(deck)

        raw._start_hand = start_hand

    @property
    def hands_finished(self) -> int:
        return len(self.points)

    @property
    def episode_over(self) -> bool:
        return not self.env.legal_actions()

    def current_seat(self) -> int:
        return self.env.agent_name_mapping[self.env.agent_selection]

    def reset(self, seed: int, deck: Sequence[str] | None = None) -> None:
        """Reset the env with ``seed`` (and a first deck) and start a new record."""
        self.seed = check_seed(seed)
        self.dealt_from_seed = deck is None
        self.env.reset(seed=self.seed, options=None if deck is None else {"deck": list(deck)})
        self.decks = [_deck_strings(self.env.deck)]
        self.actions = []
        self.points = []
        self.truncated = False
        self._finished_state = None

    def step(self, action: int) -> HandOver | None:
        """Apply ``action`` for the seat to act; the hand's end when it ended one."""
        raw = self.env
        seat = self.current_seat()
        name = raw.action_name(int(action))
        raw.step(int(action))
        self.actions.append([seat, name])
        return self._after_step()

    def _after_step(self) -> HandOver | None:
        raw = self.env
        first = raw.possible_agents[0]
        hand_index = int(raw.infos[first].get("hand_index", 0))
        truncated = any(raw.truncations.values())
        if hand_index > len(self.points):
            points = [float(raw.infos[a]["points"]) for a in raw.possible_agents]
            self.points.append(points)
            over = raw.state.over and self.episode_over
            state = raw.state if self._finished_state is None else self._finished_state
            self._finished_state = None
            if not over and not truncated:
                self.decks.append(_deck_strings(raw.deck))
            self.truncated = truncated
            return HandOver(
                number=hand_index,
                state=state,
                points=points,
                totals=self.totals(),
                infos={a: dict(i) for a, i in raw.infos.items()},
                truncated=truncated,
                episode_over=over or truncated,
            )
        if truncated:
            self.truncated = True
            return HandOver(
                number=hand_index + 1,
                state=raw.state,
                points=None,
                totals=self.totals(),
                infos={a: dict(i) for a, i in raw.infos.items()},
                truncated=True,
                episode_over=True,
            )
        return None

    def totals(self) -> list[float]:
        """Episode points per seat so far (a team's points for each member)."""
        return [float(v) for v in self.env.match_totals.values()]

    def to_dict(self, **extra: Any) -> dict[str, Any]:
        """The replay as a JSON-ready dict (``extra`` keys are added, e.g. ``source``)."""
        if self.seed is None:
            raise ValueError("nothing recorded yet: call reset first")
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
            "final": self.totals(),
            "finished": self.episode_over,
            "truncated": self.truncated,
            **extra,
        }


def record_episode(
    variant: str,
    num_players: int,
    agents: Sequence[AgentSpec],
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    rngs: Sequence[np.random.Generator] | None = None,
    deck: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Play one episode between ``agents`` (a name or policy per seat) and return its replay.

    :param seed: the env seed (a fresh one when None; it is recorded).
    :param rngs: a random generator per seat for the agents (default: seeded from ``seed``).
    :param deck: deal the first hand from this order (card strings).
    :param labels: names recorded for the seats (default: the agent names).
    """
    options = dict(options or {})
    env = make_play_env(variant, num_players, options)
    if len(agents) != num_players:
        raise ValueError(f"need one agent per seat ({num_players}), got {len(agents)}")
    seed = random_seed() if seed is None else check_seed(seed)
    policies = [
        make_agent(a, variant, num_players, options) if isinstance(a, str) else a for a in agents
    ]
    if rngs is None:
        rngs = [np.random.default_rng([seed, seat]) for seat in range(num_players)]
    names = list(labels) if labels is not None else [_agent_label(a) for a in agents]
    recorder = GameRecorder(env, variant, options, names)
    recorder.reset(seed, deck)
    for seat, policy in enumerate(policies):
        policy.reset(seat)
    raw = recorder.env
    while not recorder.episode_over:
        seat = recorder.current_seat()
        obs = raw.observe(raw.agent_selection)
        action = policies[seat].act(obs["observation"], obs["action_mask"], rngs[seat])
        recorder.step(int(action))
    return recorder.to_dict()


def save_replay(replay: dict[str, Any], path: str | Path) -> Path:
    """Write a replay as JSON (parent folders are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(replay, indent=1) + "\n")
    return path


def save_arena_games(
    variant: str,
    num_players: int,
    agents: Sequence[AgentSpec],
    deals: int | Sequence[int],
    seed: int = 0,
    options: dict[str, Any] | None = None,
    folder: str | Path = "replays",
    limit: int | None = 10,
) -> list[Path]:
    """Replay deals of an arena run (same seeds, seatings and agent streams) and save each game.

    The games are exactly the arena's: deal ``d`` is played once per seating of
    :func:`rummyzoo.training.arena.seatings`, each seat's agent with the random stream the
    arena gives it, so a saved game's ``final`` equals the arena's points for that game.

    :param deals: the number of deals of the run (deals ``0 .. deals-1``) or chosen deal indices.
    :param limit: at most this many games are written (None: all).
    :returns: the paths written, in deal and seating order.
    """
    from rummyzoo.training.arena import deal_seeds, seatings, unique_labels

    options = dict(options or {})
    seed = check_seed(seed)
    if isinstance(deals, int):
        if isinstance(deals, bool) or deals < 1:
            raise ValueError(
                f"deals must be a positive int or a list of deal indices, got {deals!r}"
            )
        chosen = list(range(deals))
    else:
        chosen = [int(d) for d in deals]
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive int or None, got {limit!r}")
    check_players(variant, num_players)
    labels = unique_labels([_agent_label(a) for a in agents])
    table = seatings(len(agents), num_players)
    instances: dict[tuple[int, int], Policy] = {}

    def policy(agent: int, copy_number: int) -> Policy:
        key = (agent, copy_number)
        if key not in instances:
            spec = agents[agent]
            if isinstance(spec, str):
                instances[key] = make_agent(spec, variant, num_players, options)
            elif copy_number == 0:
                instances[key] = spec
            else:
                instances[key] = copy.deepcopy(policy(agent, 0))
        return instances[key]

    folder = Path(folder)
    written: list[Path] = []
    rngs = [new_generator() for _ in range(num_players)]
    for deal in chosen:
        env_seed, agent_key = deal_seeds(seed, deal)
        for index, seating in enumerate(table):
            if limit is not None and len(written) >= limit:
                return written
            seats = [policy(a, seating[:s].count(a)) for s, a in enumerate(seating)]
            for s, rng in enumerate(rngs):
                seed_generator(rng, agent_key | (index << 128), s)
            replay = record_episode(
                variant,
                num_players,
                seats,
                seed=env_seed,
                options=options,
                rngs=rngs,
                labels=[labels[a] for a in seating],
            )
            replay["source"] = {"arena_seed": seed, "deal": deal, "seating": index}
            path = folder / f"{variant}_seed{seed}_deal{deal:04d}_seating{index:02d}.json"
            written.append(save_replay(replay, path))
    return written


def save_sample_game(
    policy: Policy,
    opponent: AgentSpec,
    variant: str,
    num_players: int,
    options: dict[str, Any] | None,
    seed: int,
    path: str | Path,
) -> Path:
    """Play ``policy`` in seat 0 against ``num_players - 1`` copies of ``opponent``; save it.

    Meant for training evaluation (the learner is recorded as ``learner``).
    """
    opponents = [
        make_agent(opponent, variant, num_players, options)
        if isinstance(opponent, str)
        else opponent
        for _ in range(num_players - 1)
    ]
    label = _agent_label(opponent)
    replay = record_episode(
        variant,
        num_players,
        [policy, *opponents],
        seed=seed,
        options=options,
        labels=["learner"] + [label] * (num_players - 1),
    )
    return save_replay(replay, path)


# ---------------------------------------------------------------------------- loading
def load_replay(path: str | Path) -> dict[str, Any]:
    """Read and check the structure of a replay file.

    :raises ReplayError: unreadable file, broken JSON, a missing key or a value of the wrong type.
    """
    source = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ReplayError(f"cannot read replay {source}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplayError(f"replay {source} is corrupt: not valid JSON ({exc})") from None
    check_replay(data, source)
    return data


def _corrupt(source: str, why: str) -> ReplayError:
    return ReplayError(f"replay {source} is corrupt: {why}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_replay(data: Any, source: str = "<replay>") -> None:
    """Check the keys and value types of a replay dict (not the game: see :func:`verify_replay`).

    :raises ReplayError: naming the first problem.
    """
    if not isinstance(data, dict):
        raise _corrupt(source, f"expected a JSON object, got {type(data).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise _corrupt(source, f"missing key(s): {', '.join(missing)}")
    if data["format"] != FORMAT_VERSION:
        raise _corrupt(source, f"format {data['format']!r} is not {FORMAT_VERSION}")
    if data["variant"] not in VARIANTS:
        raise _corrupt(source, f"unknown variant {data['variant']!r}")
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
        isinstance(p, list) and len(p) == n and all(_is_number(x) for x in p) for p in points
    ):
        raise _corrupt(source, f"points must list {n} numbers per hand")
    final = data["final"]
    if not isinstance(final, list) or len(final) != n or not all(_is_number(x) for x in final):
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


@dataclass
class ReplaySimulation:
    """A replay re-played on a fresh env, checked against its record as it goes.

    Iterate :meth:`events` to get each :class:`Move` (before it is applied: ``env`` still shows
    the position it was played in) and each :class:`HandOver`; or call :meth:`run`.

    :raises ReplayError: from ``events``/``run`` as soon as the game departs from the record.
    """

    data: dict[str, Any]
    source: str = "<replay>"
    env: Any = field(init=False, default=None)
    recorder: GameRecorder = field(init=False)

    def __post_init__(self) -> None:
        check_replay(self.data, self.source)
        data = self.data
        try:
            self.env = make_play_env(data["variant"], data["num_players"], data["options"])
        except ValueError as exc:
            raise _corrupt(self.source, f"cannot rebuild the env: {exc}") from None
        self.recorder = GameRecorder(self.env, data["variant"], data["options"], data["agents"])

    def _fail(self, why: str) -> ReplayError:
        return _corrupt(self.source, why)

    def events(self) -> Iterator[Move | HandOver]:
        data = self.data
        recorder = self.recorder
        raw = recorder.env
        decks = data["decks"]
        first_given = not data.get("dealt_from_seed", True)
        try:
            recorder.reset(data["seed"], decks[0] if first_given else None)
        except ValueError as exc:
            raise self._fail(f"cannot deal the first hand: {exc}") from None
        self._check_deck(0)
        hands_recorded = len(data["points"])
        for i, (seat, name) in enumerate(data["actions"]):
            if recorder.episode_over:
                raise self._fail(
                    f"the game ends after action {i}, but {len(data['actions']) - i} more are recorded"
                )
            to_act = recorder.current_seat()
            if seat != to_act:
                raise self._fail(
                    f"action {i} ({name!r}) is recorded for seat {seat}, but seat {to_act} is to act"
                )
            try:
                action = raw.action_index(name)
            except ValueError as exc:
                raise self._fail(f"action {i}: {exc}") from None
            legal = raw.legal_actions()
            if action not in legal:
                shown = ", ".join(raw.action_name(a) for a in legal[:12])
                more = " ..." if len(legal) > 12 else ""
                raise self._fail(
                    f"action {i} ({name!r}) by player_{seat} is illegal there; legal: {shown}{more}"
                )
            yield Move(i, seat, action, raw.action_name(action), describe_action(raw, action))
            over = recorder.step(action)
            if over is None:
                continue
            if over.points is not None:
                k = over.number - 1
                if k >= hands_recorded:
                    raise self._fail(
                        f"hand {over.number} ends after action {i}, but only {hands_recorded} "
                        "hand(s) have recorded points"
                    )
                if not _same(over.points, data["points"][k]):
                    raise self._fail(
                        f"hand {over.number} scores {_fmt_points(over.points)}, but the replay "
                        f"records {_fmt_points(data['points'][k])}"
                    )
                if not over.episode_over:
                    self._check_deck(over.number)
            yield over
        finished = recorder.episode_over
        if data.get("finished", True) and not finished:
            raise self._fail(
                f"the recorded actions stop after {len(data['actions'])} moves, before the game ends"
            )
        if len(recorder.points) != hands_recorded:
            raise self._fail(
                f"{len(recorder.points)} hand(s) were played, but {hands_recorded} are recorded"
            )
        totals = recorder.totals()
        if not _same(totals, data["final"]):
            raise self._fail(
                f"final points are {_fmt_points(totals)}, but the replay records "
                f"{_fmt_points(data['final'])}"
            )

    def _check_deck(self, hand: int) -> None:
        decks = self.data["decks"]
        dealt = self.recorder.decks[-1]
        if hand >= len(decks):
            raise self._fail(
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
            raise self._fail(
                f"hand {hand + 1} is dealt a different deck than recorded (first difference at "
                f"card {diff}: recorded {decks[hand][diff] if diff < len(decks[hand]) else 'none'}, "
                f"dealt {dealt[diff] if diff < len(dealt) else 'none'})"
            )

    def run(self) -> dict[str, Any]:
        """Re-play the whole game; return ``{"hands", "points", "final", "moves"}``."""
        moves = 0
        for event in self.events():
            if isinstance(event, Move):
                moves += 1
        return {
            "hands": len(self.recorder.points),
            "points": self.recorder.points,
            "final": self.recorder.totals(),
            "moves": moves,
        }


def verify_replay(data: dict[str, Any] | str | Path, source: str | None = None) -> dict[str, Any]:
    """Re-simulate a replay (a dict or a file) and check it against its record.

    :returns: ``{"hands", "points", "final", "moves"}`` of the re-played game.
    :raises ReplayError: ``replay SOURCE is corrupt: ...`` naming what does not match.
    """
    if isinstance(data, (str, Path)):
        source = source or str(data)
        data = load_replay(data)
    return ReplaySimulation(data, source or "<replay>").run()


# ---------------------------------------------------------------------------- the viewer
def show_replay(
    path: str | Path,
    view: int | None = None,
    step: bool = False,
    output: Callable[[str], None] = print,
    read_line: Callable[[], str | None] | None = None,
    color: bool = False,
) -> dict[str, Any]:
    """Print a saved game move by move (``rummyzoo replay``), after checking it re-plays.

    :param view: the seat whose hand is shown (None: every hand open).
    :param step: wait for a line of input between moves: ``read_line`` returns the line, or None
        at end of input; EOF or ``q`` runs on to the end without waiting.
    :raises ReplayError: the file is unreadable or corrupt (nothing is printed then).
    """
    data = load_replay(path)
    n = data["num_players"]
    if view is not None and not 0 <= view < n:
        raise ValueError(f"--seat must be 0..{n - 1} for this {n}-player game, got {view}")
    summary = verify_replay(data, str(path))

    def paint(text: str) -> str:
        return colour_cards(text, symbols=True, color=color)

    sim = ReplaySimulation(data, str(path))
    raw = sim.env
    raw.render_view = view
    who = ", ".join(f"player_{s} = {a}" for s, a in enumerate(data["agents"]))
    options = ", ".join(f"{k}={v!r}" for k, v in data["options"].items()) or "defaults"
    output(
        f"replay of {data['variant']}, {n} players ({who}); seed {data['seed']}; options: {options}"
    )
    output("view: " + ("every hand open" if view is None else f"player_{view}'s hand only"))
    waiting = step
    last_seat: int | None = None
    for event in sim.events():
        if isinstance(event, Move):
            if event.seat != last_seat:
                output("")
                output(paint(raw.render()))
                last_seat = event.seat
            # A description names only cards the move puts face up, so every view may see it.
            text = event.description
            output(
                paint(
                    f"  {event.index + 1:>4}. player_{event.seat} ({data['agents'][event.seat]}): {text}"
                )
            )
            if waiting and read_line is not None:
                answer = read_line()
                if answer is None or answer.strip().lower() in ("q", "quit"):
                    waiting = False  # EOF or q: run on to the end without waiting
        else:
            last_seat = None
            output("")
            output(paint(hand_over_text(raw, event)))
    output("")
    final = ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(summary["final"]))
    output(f"game over after {summary['moves']} moves, {summary['hands']} hand(s): {final}")
    output("replay verified: every hand's points match the record")
    return summary


def hand_over_text(raw: Any, event: HandOver) -> str:
    """The end of a hand with every hand open and its points (the render shows match totals)."""
    lines = []
    if event.truncated and event.points is None:
        lines.append(f"== hand {event.number} stopped: {_truncation_reason(event)} (no points) ==")
    else:
        lines.append(f"== hand {event.number} over ==")
    totals = np.asarray(event.totals, dtype=np.float64)
    lines.append(raw.game.render(event.state, None, totals))
    if event.points is not None:
        lines.append(
            "hand points: " + ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(event.points))
        )
    if event.truncated and event.points is not None:
        lines.append(f"the match stops: {_truncation_reason(event)}")
    return "\n".join(lines)


def _truncation_reason(event: HandOver) -> str:
    for info in event.infos.values():
        if "truncated_by" in info:
            return f"cap {info['truncated_by']} reached"
    return "cap reached"
