"""The core of every variant: the pure-rules :class:`Game` interface, errors and option checks.

This layer imports neither PettingZoo nor gymnasium. A variant's rules module subclasses
:class:`Game` (rules over a small mutable numpy state) and declares its options as a frozen
dataclass whose fields are checked against their type hints by :func:`validate_fields`. The
match layer (:mod:`rummyzoo.envs.match`) plays hands of a game into a match, and the AEC layer
(:mod:`rummyzoo.envs.aec`) turns a match into a PettingZoo env.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import operator
import reprlib
import sys
import types
import typing
from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "ConfigError",
    "Game",
    "HandState",
    "IllegalActionError",
    "ViewsSurviveCopies",
    "check_action",
    "check_choice",
    "check_range",
    "make_config",
    "validate_fields",
]

_ORDERED_DECK = np.arange(52 * 4, dtype=np.int64)
_ORDERED_DECK.flags.writeable = False


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the current state."""


class ConfigError(ValueError):
    """A rules or env option that is unknown, of the wrong type or out of range."""


@cache
def _field_types(cls: type) -> dict[str, tuple[tuple[type, ...], bool]]:
    """Per field of a dataclass: (accepted value types, whether None is accepted)."""
    hints = typing.get_type_hints(cls)
    out: dict[str, tuple[tuple[type, ...], bool]] = {}
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        members = (
            typing.get_args(hint)
            if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
            else (hint,)
        )
        nullable = type(None) in members
        accepted: list[type] = []
        for member in members:
            if member is float:
                accepted += [float, int]  # an int is a valid float option
            elif isinstance(member, type) and member is not type(None):
                accepted.append(member)
        out[field.name] = (tuple(accepted), nullable)
    return out


def _type_name(accepted: tuple[type, ...], nullable: bool) -> str:
    names = list(dict.fromkeys(t.__name__ for t in accepted))
    if "float" in names and "int" in names:
        names.remove("int")
    return " | ".join(names + (["None"] if nullable else []))


def _native_number(value: Any, accepted: tuple[type, ...]) -> Any:
    """``value`` as a Python bool, int or float where it is a numpy one of an accepted kind."""
    if isinstance(value, np.bool_) and bool in accepted:
        return bool(value)
    if isinstance(value, np.integer) and int in accepted:
        return int(value)
    if isinstance(value, np.floating) and float in accepted:
        return float(value)
    return value


def finite_number(value: Any) -> bool:
    """An int or float read from a file that is a real number: finite, not a bool, and an int
    no larger than a float holds exactly (a huge int is no game's points or rating)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) <= 2**53
    return isinstance(value, float) and math.isfinite(value)


def validate_fields(config: Any) -> None:
    """Type-check a dataclass config against its type hints.

    ``bool`` is accepted only where the hint names ``bool`` (it is an ``int`` to Python), an
    ``int`` wherever a ``float`` is accepted, ``None`` where the hint is optional.

    :raises ConfigError: naming the field, the bad value and the expected type.
    """
    for name, (accepted, nullable) in _field_types(type(config)).items():
        value = getattr(config, name)
        if value is None and nullable:
            continue
        if not accepted:
            continue
        # a numpy number is taken as the Python number it holds (stored as that)
        native = _native_number(value, accepted)
        if native is not value:
            object.__setattr__(config, name, native)
            value = native
        ok = isinstance(value, accepted) and not (isinstance(value, bool) and bool not in accepted)
        if not ok:
            raise ConfigError(
                f"{option_name(config, name)} must be {_type_name(accepted, nullable)}, "
                f"got {short_repr(value)} ({type(value).__name__})"
            )


def printable(text: object, lines: bool = False) -> str:
    """``text`` with each character that is not printable as its escape (``\\x1b``...), so
    that a crafted name cannot clear the screen, set the window's title or write text of its
    own; ``lines``: new lines and tabs kept."""
    keep = "\n\t" if lines else ""
    return "".join(c if c.isprintable() or c in keep else ascii(c)[1:-1] for c in str(text))


def make_config(
    cls: type, num_players: int, options: dict[str, Any], others: Sequence[str] = ()
) -> Any:
    """Build a frozen rules config, rejecting unknown option names clearly (``others``: the
    other option names valid beside these, the match's, named in the error too)."""
    if "num_players" in options:
        raise ConfigError(
            "num_players is not an option here: it is the player count "
            "(env(num_players=N), --players N on the command line)"
        )
    refuse_unknown(cls, options, others)
    return cls(num_players=num_players, **options)


def refuse_unknown(cls: type, options: Any, others: Sequence[str] = ()) -> None:
    """Raise :class:`ConfigError` naming each of ``options``' names that is neither a field of
    the rules class ``cls`` nor one of ``others`` (the other option names valid here, named in
    the error beside the rules'), with the closest valid name where one is close."""
    names = {f.name for f in dataclasses.fields(cls)} - {"num_players"}
    unknown = sorted(set(options) - names - set(others))
    if unknown:
        valid = sorted(names)
        close = [
            f"{shown} (did you mean {found[0]!r}?)" if found else shown
            for name in unknown
            # a name that is no identifier is quoted: a file's control characters stay escaped
            for shown in [name if name.isidentifier() else repr(name)]
            for found in [difflib.get_close_matches(name, [*valid, *others], n=1)]
        ]
        more = f"; match options: {', '.join(sorted(others))}" if others else ""
        raise ConfigError(
            f"unknown option(s) for {getattr(cls, 'options_of', cls.__name__)}: {', '.join(close)}; "
            f"valid options: {', '.join(valid)}{more}"
        )


def option_name(config: Any, name: str) -> str:
    """How an error names option ``name`` of ``config`` (a rules or match options dataclass,
    or its class): ``knock_rummy option knock_max_deadwood``, ``match option target_score``
    (the class's ``options_of``; else ``Class.name``)."""
    cls = config if isinstance(config, type) else type(config)
    owner = getattr(cls, "options_of", None)
    if owner is None:
        return f"{cls.__name__}.{name}"
    # the player count is no option (the env's own argument)
    return f"{owner} {name}" if name == "num_players" else f"{owner} option {name}"


def check_choice(config: Any, name: str, choices: Sequence[Any]) -> None:
    value = getattr(config, name)
    if value not in choices:
        raise ConfigError(
            f"{option_name(config, name)} must be one of {list(choices)}, got {short_repr(value)}"
        )


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written through (the array itself still can).

    A contiguous array's view is made over its memory exported read-only, so numpy refuses to
    set the view's ``writeable`` flag back (a plain view's flag can be set back, its base
    being writeable). A library that writes through a read-only array's memory anyway (torch's
    ``as_tensor`` warns that it may) is outside what numpy can stop."""
    if array.flags.c_contiguous and not array.dtype.hasobject:
        if array.ndim == 1:  # (a mask each decision of the play loop: the quick way)
            try:
                return np.frombuffer(memoryview(array).toreadonly(), dtype=array.dtype)
            except (ValueError, TypeError):  # a format memoryview lacks: the way below
                pass
        memory = memoryview(array.reshape(-1).view(np.uint8)).toreadonly()
        return np.frombuffer(memory, dtype=array.dtype).reshape(array.shape)
    view = array.view()
    view.flags.writeable = False
    return view


class _ShortRepr(reprlib.Repr):
    """``reprlib``'s shortened reprs, with an int too long for a str (which has no repr) told
    by its number of digits."""

    def repr_int(self, x: int, level: int) -> str:
        text = int_shown(x)
        return text if len(text) <= self.maxlong else super().repr_int(x, level)


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (a value a user sent is not echoed whole).

    Containers are shown to a few items and levels (``reprlib``): a value of a few hundred
    bytes of YAML aliases, lists of the same list nested ten deep, has a whole repr of
    gigabytes."""
    shown = _ShortRepr()
    shown.maxlevel = 3
    shown.maxlist = shown.maxtuple = shown.maxdict = shown.maxset = shown.maxfrozenset = 6
    shown.maxstring = shown.maxother = shown.maxlong = limit
    text = shown.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def number_shown(value: Any) -> str:
    """A number for an error message: as written, or for an int of more than 20 digits, how
    many it has."""
    text = int_shown(value)
    return text if len(text) <= 20 or text.startswith("an int") else f"an int of {len(text)} digits"


def int_shown(value: Any) -> str:
    """``repr(value)``, or for an int past Python's limit of digits for a str (4,300 unless
    set otherwise), which has no repr, how many digits it has at least."""
    try:
        return repr(value)
    except ValueError:
        return f"an int of more than {sys.get_int_max_str_digits()} digits"


#: The largest value of a whole-number option without an upper bound of its own (the games
#: keep such numbers in numpy arrays and floats).
INT_OPTION_MAX = 2**31 - 1


def check_range(config: Any, name: str, low: float | None, high: float | None) -> None:
    value = getattr(config, name)
    if value is None:
        return
    if high is None and isinstance(value, int) and value > INT_OPTION_MAX:
        raise ConfigError(
            f"{option_name(config, name)} must be at most {INT_OPTION_MAX}, "
            f"got {number_shown(value)}"
        )
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ConfigError(
            f"{option_name(config, name)} must be in [{lo}, {hi}], got {short_repr(value)}"
        )


def check_observe_args(seat: Any, totals: Any, num_players: int) -> None:
    """What the compiled ``observe`` checks, for the Python one: a seat of the game and the
    match totals as a float64 vector of one value per seat.

    :raises ValueError: a seat outside ``0..num_players-1``.
    :raises TypeError: totals of another type, dtype or length.
    """
    seat = operator.index(seat)  # TypeError for a float, as the compiled one's
    if not 0 <= seat < num_players:
        raise ValueError(f"seat must be in 0..{num_players - 1}, got {seat}")
    if (
        type(totals) is not np.ndarray
        or totals.dtype != np.float64
        or totals.shape != (num_players,)
        or not totals.flags.c_contiguous
        or not totals.flags.aligned
    ):
        raise TypeError("the match totals must be a float64 vector, one per seat")


def unwrap_action(action: Any) -> Any:
    """``action`` itself, or the int a 0-d integer array holds (what stable-baselines3's
    ``predict`` gives for one observation, and what the action space's ``contains`` accepts)."""
    if isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        return action.item()
    return action


def is_action_int(value: Any) -> bool:
    """Whether ``value`` is an int that may name an action: an ``int`` or a numpy integer, not a
    bool, and not a ``timedelta64`` (which numpy counts among its integers)."""
    return isinstance(value, (int, np.integer)) and not isinstance(
        value, (bool, np.bool_, np.timedelta64)
    )


def check_action(action: Any, num_actions: int) -> int:
    """The action id of ``action``: an ``int``, a numpy integer or a 0-d integer array (what
    stable-baselines3's ``predict`` gives for one observation, and what the action space's
    ``contains`` accepts) in ``0..num_actions-1``.

    :raises IllegalActionError: for anything else (a float, a bool, a string, None, a list...),
        naming the value and its type.
    """
    action = unwrap_action(action)
    if is_action_int(action):
        a = int(action)
        if 0 <= a < num_actions:
            return a
        raise IllegalActionError(f"action {int_shown(a)} is out of range 0..{num_actions - 1}")
    raise IllegalActionError(
        f"action {action!r} ({type(action).__name__}) is not an action id: "
        f"pass an int 0..{num_actions - 1}"
    )


class ObservationTail:
    """The numbers and one-hots that follow an observation's card planes, read as Python
    floats once (a decoder's scalar fields).

    :param layout: the observation layout (name -> ``(start, stop)``).
    :param start: where the tail starts; every field at or after it can be read.
    """

    __slots__ = ("at", "start")

    def __init__(self, layout: dict[str, tuple[int, int]], start: int) -> None:
        self.start = start
        self.at = {name: (a - start, b - start) for name, (a, b) in layout.items() if a >= start}

    def read(self, obs: np.ndarray) -> TailValues:
        """The tail of ``obs``."""
        return TailValues(obs[self.start :].tolist(), self.at)


class TailValues:
    """One observation's tail (see :class:`ObservationTail`)."""

    __slots__ = ("at", "values")

    def __init__(self, values: list[float], at: dict[str, tuple[int, int]]) -> None:
        self.values = values
        self.at = at

    def part(self, name: str) -> list[float]:
        a, b = self.at[name]
        return self.values[a:b]

    def one(self, name: str) -> float:
        """A one-value field."""
        return self.values[self.at[name][0]]

    def ints(self, name: str, scale: float) -> tuple[int, ...]:
        """A field's values times ``scale``, rounded (as ``round`` rounds)."""
        return tuple(round(x * scale) for x in self.part(name))

    def first(self, name: str) -> int:
        """The index of a one-hot field's first non-zero value (-1: none)."""
        return next((i for i, x in enumerate(self.part(name)) if x), -1)


class _View(typing.NamedTuple):
    """Where a numpy array lies in the array that owns its memory (see :func:`pack_views`)."""

    owner: int
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: np.dtype
    writeable: bool


def _owner_of(array: np.ndarray) -> np.ndarray:
    """The array at the end of ``array``'s chain of bases (the one that owns the memory),
    through the read-only memory of :func:`read_only`'s views."""
    while True:
        base = array.base
        if isinstance(base, memoryview):
            base = base.obj
        if not isinstance(base, np.ndarray):
            return array
        array = base


def pack_views(values: dict[str, Any]) -> tuple[list[np.ndarray], dict[str, Any]]:
    """``values`` (an object's attributes) ready to copy or pickle with the memory its numpy
    arrays share kept shared: every array (in lists, tuples and dicts too) becomes a note of
    where it lies in the array owning its memory, and the owners travel once each.
    :func:`unpack_views` rebuilds the arrays, read-only where they were. A container is
    replaced only where it holds an array, and once however often it is referenced, so
    containers shared between attributes stay shared."""
    owners: list[np.ndarray] = []
    index: dict[int, int] = {}
    memo: dict[int, Any] = {}

    def pack(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            owner = _owner_of(value)
            if not owner.flags.c_contiguous or owner.dtype.hasobject:
                return value
            k = index.get(id(owner))
            if k is None:
                k = index[id(owner)] = len(owners)
                owners.append(owner)
            offset = value.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
            return _View(k, offset, value.shape, value.strides, value.dtype, value.flags.writeable)
        kind = type(value)
        if kind is not list and kind is not tuple and kind is not dict:
            return value
        found = memo.get(id(value))
        if found is not None:
            return found[1]
        if kind is dict:
            items = {key: pack(item) for key, item in value.items()}
            same = all(items[key] is item for key, item in value.items())
        else:
            items = [pack(item) for item in value]
            same = all(a is b for a, b in zip(items, value, strict=True))
            if kind is tuple:
                items = tuple(items)
        out = value if same else _Packed(items)
        memo[id(value)] = (value, out)  # the value is held, so its id stays its own
        return out

    return owners, {name: pack(value) for name, value in values.items()}


class _Packed(typing.NamedTuple):
    """A list, tuple or dict that held numpy arrays, with them packed (see :func:`pack_views`)."""

    items: Any


def unpack_views(state: tuple[list[np.ndarray], dict[str, Any]]) -> dict[str, Any]:
    """The attributes :func:`pack_views` packed, their arrays rebuilt into the copied owners."""
    owners, values = state
    memo: dict[int, Any] = {}

    def unpack(value: Any) -> Any:
        if isinstance(value, _View):
            array = np.ndarray(
                value.shape, value.dtype, owners[value.owner], value.offset, value.strides
            )
            return array if value.writeable else read_only(array)
        if not isinstance(value, _Packed):
            return value
        found = memo.get(id(value))
        if found is not None:
            return found[1]
        items = value.items
        if type(items) is dict:
            out: Any = {key: unpack(item) for key, item in items.items()}
        else:
            out = [unpack(item) for item in items]
            if type(items) is tuple:
                out = tuple(out)
        memo[id(value)] = (value, out)
        return out

    return {name: unpack(value) for name, value in values.items()}


class ViewsSurviveCopies:
    """A mixin for objects whose numpy attributes share memory (a buffer and views of it that
    the object writes through): ``copy.deepcopy`` and pickling copy each buffer once and
    rebuild every view into the copy, read-only where it was (:func:`pack_views`). numpy alone
    gives every view memory of its own, so writes through one would no longer reach the
    others."""

    __slots__ = ()

    def _copied_attributes(self) -> dict[str, Any]:
        """The fields to copy: the instance dict where there is one, and every slot set."""
        found = dict(getattr(self, "__dict__", {}))
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                if hasattr(self, name):
                    found[name] = getattr(self, name)
        return found

    def __getstate__(self) -> tuple[list[np.ndarray], dict[str, Any]]:
        return pack_views(self._copied_attributes())

    def __setstate__(self, state: tuple[list[np.ndarray], dict[str, Any]]) -> None:
        for name, value in unpack_views(state).items():
            setattr(self, name, value)


class HandState(ViewsSurviveCopies):
    """Fields every variant's state carries (variants subclass and add their own).

    A state keeps numpy views into shared buffers (an observation row per seat, a plane per
    hand) that the rules write through; deep copies and pickles keep that sharing
    (:class:`ViewsSurviveCopies`), so a copied game (a search tree's node, say) plays on
    exactly as the original would.
    """

    __slots__ = ()

    current: int  # seat to act
    dealer: int
    turn: int  # completed turns in this hand
    over: bool  # the hand has ended (points are final)
    points: Any  # per seat, raw hand points once ``over`` (list of floats or float64 array)


def _rebuilt_game(cls: type[Game], rules: Any, match: Any, compiled: bool) -> Game:
    """A game as :meth:`Game.__reduce__` describes it (the pure-Python code where the compiled
    kernels are wanted but not built here)."""
    from rummyzoo.envs.native import PURE, load_kernels

    kernels = load_kernels() if compiled else None
    return cls(rules, match, kernels=PURE if kernels is None else kernels)


class Game:
    """Pure rules of one variant under one frozen config. Subclasses fill in the rules.

    Class attributes: ``name`` (variant id), ``match_defaults`` (the variant's defaults of the
    match options, e.g. its ``target_score``), and per instance ``num_players``,
    ``num_actions``, ``obs_size``, ``observation_layout`` (name -> (start, stop) in the flat
    observation), ``action_names`` (tuple of readable names), ``num_decks``. ``match`` is the
    :class:`~rummyzoo.envs.match.MatchOptions` the game is played under (the rules read the
    target score and the turn cap from it, e.g. to scale observations).
    """

    name: ClassVar[str] = ""
    match_defaults: ClassVar[dict[str, Any]] = {}
    rules: Any
    match: Any
    num_players: int
    num_actions: int
    obs_size: int
    num_decks: int = 1
    action_names: tuple[str, ...]
    observation_layout: dict[str, tuple[int, int]]
    score_groups: np.ndarray  # group (team) of each seat; seat i alone unless teams
    #: A compiled step of many games for the vector engine, where the variant has one:
    #: ``play_batch(matches, games, actions, observations, action_masks, current)`` plays each
    #: ``actions[j]`` in ``matches[games[j]]`` that it can play without Python and answers
    #: ``(unplayed, ended)``, two int64 arrays of positions ``j``: the moves it left alone, and
    #: those it played that ended the hand (the caller goes on with :meth:`Match.played`). For
    #: every other move it did what :meth:`Match.play` does and wrote the game's rows.
    play_batch: Any = None
    #: ``rows_batch(matches, games, observations, action_masks, current)``: each game's rows
    #: (the seat to act, its observation and mask) from its match now, where the variant has it.
    rows_batch: Any = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and deep-copied) as what built it: its class, rules, match options and
        whether it runs the compiled kernels. A kernels module cannot be pickled, so the copy
        is built afresh (in another process, that process's kernels), and agents that hold a
        game can be copied per seat or sent to worker processes."""
        compiled = getattr(self, "kernels", None) is not None
        return (_rebuilt_game, (type(self), self.rules, self.match, compiled))

    def check_observation(self, obs: Any) -> None:
        """:raises ValueError: ``obs`` is not one observation of this game (its size differs:
        read by a decoder built for another player count or options)."""
        size = np.shape(obs)
        if size != (self.obs_size,):
            raise ValueError(
                f"an observation of shape {size} where this {self.name} game "
                f"({self.num_players} players) has ({self.obs_size},): was the agent built "
                "for another player count or options?"
            )

    # -- to implement ---------------------------------------------------------
    def new_hand(self, rng: np.random.Generator, dealer: int, deck: np.ndarray) -> HandState:
        """Deal a hand from ``deck`` (top of the stock first). ``deck`` is read-only: it is kept
        as the record of the deal, so copy it before changing it."""
        raise NotImplementedError

    def legal_mask(self, state: HandState) -> np.ndarray:
        raise NotImplementedError

    def apply(self, state: HandState, action: int, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def observe(self, state: HandState, seat: int, totals: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def hand_info(self, state: HandState, seat: int) -> dict[str, Any]:
        """Variant-specific facts about a finished hand for ``infos`` (e.g. deadwood, melds)."""
        return {}

    def hand_winners(self, state: HandState) -> list[int] | None:
        """Seats that the rules name as the winners of a finished hand, or ``None`` when the
        winners are simply the seats (teams) with the most points."""
        return None

    def illegal_action_detail(self, state: HandState) -> str:
        """Extra context for an illegal-action message (e.g. the cards held); may be empty."""
        return ""

    def render(self, state: HandState, view: int | None, totals: np.ndarray) -> str:
        raise NotImplementedError

    def card_locations(self, state: HandState) -> np.ndarray:
        """How many places hold each card id (length 52): ``num_decks`` everywhere when sound."""
        raise NotImplementedError

    def table_view(self, state: HandState, view: int | None, totals: np.ndarray) -> dict[str, Any]:
        """The table as data (what :meth:`render` shows as text), for viewers and web pages.

        ``view``: the seat whose hand is shown (None: every hand open); other hands show only
        what that seat may see. Cards are card strings (``"Kh"``). Keys:

        * ``title``, ``status`` (text), ``dealer``, ``turn``, ``current`` (seat to act, None once
          the hand is over), ``over``;
        * ``piles``: ``[{"name", "count", "cards"}]`` (``cards`` only where they are face up,
          bottom first, so the last card is the top);
        * ``table``: melds on the table, ``[{"kind", "cards", "owner"}]`` (``owner``: a seat, or
          a list of seats per card where several laid it);
        * ``seats``: per seat ``{"seat", "name", "hand"`` (card strings, or None when hidden)
          ``, "count", "known"`` (cards of a hidden hand the viewer has seen)
          ``, "melds", "notes", "points"`` (hand points once over)``}``, and in Ditch Rummy
          ``"singles"`` (the single cards the seat played to the table);
        * ``notes``: further lines (e.g. what fits where);
        * ``scores``: the match totals per seat, ``target``: the target score (both None in
          single-hand play).
        """
        raise NotImplementedError

    def _view_frame(
        self, state: HandState, status: str, totals: np.ndarray, title: str
    ) -> dict[str, Any]:
        """The keys every variant's :meth:`table_view` shares."""
        target = self.match.target_score
        return {
            "title": title,
            "status": status,
            "dealer": int(state.dealer),
            "turn": int(state.turn),
            "current": None if state.over else int(state.current),
            "over": bool(state.over),
            "piles": [],
            "table": [],
            "seats": [],
            "notes": [],
            "scores": None if target is None else [float(t) for t in totals[: self.num_players]],
            "target": target,
        }

    # -- shared ---------------------------------------------------------------
    def scores_line(self, totals: np.ndarray, label: str = "scores") -> str | None:
        """The match totals as a render line (None in single-hand play)."""
        if self.match.target_score is None:
            return None
        shown = ", ".join(f"player_{i} {totals[i]:g}" for i in range(self.num_players))
        return f"{label}: {shown} (target {self.match.target_score})"

    def _index_names(self) -> None:
        self._name_to_action = {n.lower(): i for i, n in enumerate(self.action_names)}

    def action_name(self, action: int) -> str:
        return self.action_names[check_action(action, self.num_actions)]

    # -- what a human player is told (the terminal and web games)
    def describe_action(self, state: Any, action: int, public: bool = False) -> str:
        """The action's name, with what it moves where the variant says more (Ditch Rummy).

        ``public``: what the other seats may be told, where the name itself says more than the
        table sees (Ditch Rummy's actions name positions in a hidden hand)."""
        return self.action_name(action)

    def move_labels(self, state: Any, legal: Sequence[int]) -> list[str]:
        """The labels of the legal moves in a human's list of moves."""
        return [self.describe_action(state, a) for a in legal]

    def move_hint(self, state: Any, seat: int, legal: Sequence[int]) -> str | None:
        """A line shown to ``seat`` above its moves (Knock Rummy: its deadwood), or None."""
        return None

    def illegal_reason(self, state: Any, action: int) -> str:
        """Why ``action`` is illegal now, beyond "not a legal move" (empty: nothing more)."""
        return ""

    def action_index(self, name: str) -> int:
        key = " ".join(str(name).lower().replace("10", "t").split())
        try:
            return self._name_to_action[key]
        except KeyError:
            raise ValueError(
                f"unknown action name {name!r} for {self.name} (e.g. {self.action_names[0]!r}, "
                f"{self.action_names[-1]!r})"
            ) from None

    def shuffled_deck(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly shuffled deck (each card ``num_decks`` times), top of the stock first."""
        return self.shuffled_decks(rng, 1)[0]

    def shuffled_decks(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` shuffled decks as the rows of one read-only array.

        Row ``k`` is the deck that the ``k``-th of ``count`` successive calls of
        :meth:`shuffled_deck` would give (``Generator.permuted`` shuffles row after row from
        the same stream), so drawing decks in batches changes no deal.
        """
        size = 52 * self.num_decks
        decks = rng.permuted(np.broadcast_to(_ORDERED_DECK[:size], (count, size)), axis=1)
        if not decks.flags.c_contiguous:  # rows that are contiguous decks, for the deal
            decks = np.ascontiguousarray(decks)
        if self.num_decks > 1:
            decks %= 52
        decks.flags.writeable = False
        return decks
