"""The play loop: a :class:`~rummyzoo.envs.match.Match` played by policies.

The places that play one game at a time (the arena and its recorded games, the per-game
training seat env, the terminal and web games, sample games, the demo) play them here, on the
match layer, and watch them through events instead of reaching into env state. The vector
engine (:mod:`rummyzoo.envs.vector`) steps many games at once for the batched training env,
the warm start's batched teacher games and the RLlib env, with the same match layer and rules.
Events:

* :class:`Deal` when a hand is dealt (its number, dealer and deck; the state is
  ``match.state``),
* :class:`Decision` when a seat has chosen an action that the rules accept, just before it is
  played (``match.state`` and ``match.legal_mask()`` are still those it chose from),
* :class:`~rummyzoo.envs.match.HandEnd` when a hand has ended (its points, rewards and infos;
  the next hand, if any, is already dealt).

A policy is any object with ``act(observation, action_mask, rng) -> int`` and
``reset(seat)`` (:class:`rummyzoo.agents.Policy`); this module needs nothing else of it.

:func:`play_aec` is the same loop through PettingZoo's AEC API (``agent_iter`` / ``last`` /
``step``), for what must go through that API: the env benchmark measures it.
:func:`play_vector` plays many matches at once on the vector engine, with batched calls for
the policies that take them (the arena's batched evaluation of a network).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from rummyzoo.envs.core import IllegalActionError, check_action, read_only, short_repr
from rummyzoo.envs.match import HandEnd, Match

__all__ = [
    "Deal",
    "Decision",
    "Episode",
    "VectorEpisodes",
    "play_aec",
    "play_episode",
    "play_turns",
    "play_vector",
]


@dataclass(frozen=True, slots=True)
class Deal:
    """A hand was dealt: ``hand`` is its 1-based number in the match."""

    hand: int
    dealer: int
    deck: np.ndarray


@dataclass(frozen=True, slots=True)
class Decision:
    """``seat`` plays ``action`` (checked legal; not applied yet)."""

    seat: int
    action: int


Event = Deal | Decision | HandEnd
#: ``on_event(event, match)``, called for every event of a game.
OnEvent = Callable[[Event, Match], None]


@dataclass
class Episode:
    """One finished episode.

    :ivar points: episode points per seat (raw points summed over the hands; a team's points
        for each of its members).
    :ivar hands: hands dealt (a hand cut by the turn cap counts).
    :ivar decisions: actions played.
    :ivar truncated: a cap (turns per hand or hands per match) ended the episode.
    :ivar deck: the first hand's deck, top of the stock first (the record of the deal).
    :ivar last: the last hand's end (its infos carry ``winner`` when the match was decided).
    """

    points: np.ndarray
    hands: int
    decisions: int
    truncated: bool
    deck: np.ndarray
    last: HandEnd | None


def _rng_for(rngs: np.random.Generator | Sequence[np.random.Generator], seat: int) -> Any:
    return rngs if isinstance(rngs, np.random.Generator) else rngs[seat]


def play_turns(
    match: Match,
    policies: Sequence[Any],
    rngs: np.random.Generator | Sequence[np.random.Generator],
    until: int | None = None,
    on_event: OnEvent | None = None,
    labels: Sequence[str | None] | None = None,
    role: str = "",
) -> list[HandEnd]:
    """Let the policies play while the match is live and the seat to act is not ``until``.

    :param policies: one per seat (the entry of ``until`` is never asked and may be None).
    :param rngs: one generator for all seats, or one per seat.
    :param until: the seat whose turn stops the loop (None: play to the end of the match).
    :param labels: per seat, the name an agent's errors give it (else its ``name``).
    :param role: what those errors call the seat before its number (``"the learner's
        opponent at "``).
    :returns: the ends of the hands that finished meanwhile.
    :raises IllegalActionError: a policy chose an illegal action; the message names it.
    """
    ends: list[HandEnd] = []
    while not match.over:
        seat = match.state.current
        if seat == until:
            break
        policy = policies[seat]
        try:
            # a view it cannot write through: the match checks its action against this very
            # array (an agent that set an illegal action's entry had it accepted)
            mask = read_only(match.legal_mask())
            action = policy.act(match.observe(seat), mask, _rng_for(rngs, seat))
        except (Exception, SystemExit) as exc:
            raise_agent_failure(exc, _label(labels, seat, policy), f"{role}seat {seat}")
        try:
            a = match.check(action)
        except IllegalActionError as exc:
            who = _label(labels, seat, policy)
            raise illegal_action_error(who, f"{role}seat {seat}", exc) from exc
        if on_event is not None:
            on_event(Decision(seat, a), match)
        end = match.play(a)
        if end is not None:
            ends.append(end)
            if on_event is not None:
                on_event(end, match)
                if not end.match_over:
                    on_event(Deal(match.hand_index + 1, match.dealer, match.deck), match)
    return ends


def _label(labels: Sequence[str | None] | None, seat: int, policy: Any) -> Any:
    """What an error names the agent in ``seat``: its label, else the agent itself."""
    label = labels[seat] if labels is not None else None
    return policy if label is None else label


def raise_agent_failure(
    exc: BaseException, who: Any, where: str, doing: str = "choosing its action"
) -> NoReturn:
    """Raise what an agent (``who``, at ``where``) raised while ``doing`` something, with
    :func:`agent_error_note` (its type and traceback kept); its own ``sys.exit()``, which would
    end the program without a word, as a ``RuntimeError`` saying so, with the same note."""
    if isinstance(exc, SystemExit):
        error = RuntimeError(f"sys.exit({exc.code!r}) was called")
        error.add_note(agent_error_note(who, where, doing))
        raise error from exc
    exc.add_note(agent_error_note(who, where, doing))
    raise exc


#: how :func:`agent_error_note` begins
AGENT_NOTE = "raised by agent "


def agent_error_note(who: Any, where: str, doing: str = "choosing its action") -> str:
    """The note added to an error that an agent raised while ``doing`` something (the error
    keeps its type and traceback); ``where``: its seat (and game)."""
    return f"{AGENT_NOTE}{_agent_name(who)!r} ({where}) while {doing}"


def is_agent_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is an agent's own error (:func:`raise_agent_failure` noted it; the note
    crosses processes with it), not one of bad input."""
    return any(str(note).startswith(AGENT_NOTE) for note in getattr(exc, "__notes__", ()))


def reset_agent(policy: Any, seat: int, who: Any, where: str) -> None:
    """``policy.reset(seat)`` for a new game; what it raises names the agent (``who``, at
    ``where``), as an error of its ``act`` does."""
    try:
        policy.reset(seat)
    except (Exception, SystemExit) as exc:
        raise_agent_failure(exc, who, where, "starting a game")


def _agent_name(who: Any) -> str:
    """``who`` itself where it is a label, else the agent's ``name`` (or its type's)."""
    return who if isinstance(who, str) else str(getattr(who, "name", type(who).__name__))


def illegal_action_error(who: Any, where: str, why: object) -> IllegalActionError:
    """The error of an agent (``who``, at ``where``) that chose an illegal action."""
    return IllegalActionError(
        f"agent {_agent_name(who)!r} ({where}) chose an illegal action: {why}"
    )


def batch_actions(chosen: Any, count: int) -> np.ndarray:
    """What an agent's ``act_batch`` returned for ``count`` games, as int64 action ids.

    :raises IllegalActionError: anything but ``count`` ints (floats or bools, which a cast would
        cut down to ids, or one value for every game)."""
    chosen = np.asarray(chosen)
    if chosen.shape != (count,) or chosen.dtype.kind not in "iu":
        raise IllegalActionError(
            f"act_batch must return {count} int action ids (one a game), got {chosen.dtype} "
            f"of shape {chosen.shape}"
        )
    return chosen.astype(np.int64, copy=False)


def seats_text(seats: Any) -> str:
    """``seat 2`` or ``seats 0, 1`` for the distinct seats in ``seats``."""
    found = sorted({int(s) for s in seats})
    return f"seat{'s' if len(found) > 1 else ''} {', '.join(map(str, found))}"


def play_episode(
    match: Match,
    policies: Sequence[Any],
    rngs: np.random.Generator | Sequence[np.random.Generator],
    seed: int | None = None,
    deck: Any = None,
    on_event: OnEvent | None = None,
    labels: Sequence[str] | None = None,
) -> Episode:
    """Reset ``match`` (with ``seed`` and a first ``deck``) and play it to its end.

    :param policies: one per seat; ``reset(seat)`` is called on each first.
    :param rngs: one generator for all seats, or one per seat, handed to ``act``.
    :param labels: names for error messages (default: the policies' ``name``).
    :raises IllegalActionError: a policy chose an illegal action; the message names it.
    """
    n = match.num_players
    if len(policies) != n:
        raise ValueError(f"need one policy per seat ({n}), got {len(policies)}")
    for seat, policy in enumerate(policies):
        if not (
            callable(getattr(policy, "act", None)) and callable(getattr(policy, "reset", None))
        ):
            raise ValueError(
                f"the policy at seat {seat} is no agent (it needs act and reset methods): "
                f"{short_repr(policy)}"
            )
    if not isinstance(rngs, np.random.Generator) and not (
        isinstance(rngs, Sequence)
        and len(rngs) == n
        and all(isinstance(r, np.random.Generator) for r in rngs)
    ):
        raise ValueError(
            f"rngs must be a numpy Generator or a list of one per seat ({n}), got {rngs!r}"
        )
    match.reset(seed, deck)
    first_deck = np.array(match.deck, copy=True)
    for seat, policy in enumerate(policies):
        reset_agent(policy, seat, _label(labels, seat, policy), f"seat {seat}")
    if on_event is not None:
        on_event(Deal(1, match.dealer, match.deck), match)
    points = np.zeros(n, dtype=np.float64)
    last = None
    hands = 0
    truncated = False
    for end in play_turns(match, policies, rngs, None, on_event, labels):
        last = end
        if end.seat_points is not None:
            points += end.seat_points
        hands = end.index
        truncated = end.truncated_by is not None
    return Episode(points, hands, match.decisions, truncated, first_deck, last)


def play_aec(env: Any, policy: Any, rng: np.random.Generator) -> tuple[int, int]:
    """Play one episode of a reset AEC env with ``policy`` in every seat, through
    ``agent_iter()`` / ``last()`` / ``step()``.

    :returns: (decisions played, truncated agent steps).
    """
    decisions = truncated = 0
    for _agent in env.agent_iter():
        obs, _reward, terminated, trunc, _info = env.last()
        if terminated or trunc:
            truncated += trunc
            env.step(None)
            continue
        env.step(policy.act(obs["observation"], obs["action_mask"], rng))
        decisions += 1
    return decisions, truncated


@dataclass
class VectorEpisodes:
    """One finished match per game of :func:`play_vector` (arrays, game by game).

    :ivar points: episode points per game and seat (a team's points for each member).
    :ivar hands: hands dealt (a hand cut by the turn cap counts).
    :ivar decisions: actions played.
    :ivar truncated: a cap ended the match.
    :ivar decks: each game's first deck (top of the stock first).
    """

    points: np.ndarray
    hands: np.ndarray
    decisions: np.ndarray
    truncated: np.ndarray
    decks: np.ndarray


def play_vector(
    vec: Any,
    policies: Sequence[Sequence[Any]],
    rngs: Sequence[Sequence[np.random.Generator]],
    seeds: Sequence[int],
    labels: Sequence[Sequence[str]] | None = None,
) -> VectorEpisodes:
    """Play one match in every game of a vector engine (:class:`~rummyzoo.envs.vector.VectorEnv`)
    with a policy and a generator per game and seat.

    Each game ``i`` is reset with ``seeds[i]`` and played as :func:`play_episode` plays it.
    At each step the games are grouped by the policy to act there: a policy with
    ``act_batch(observations, masks, rng)`` whose choices need no random draws
    (``uses_rng`` false, e.g. a greedy network) acts in all its games with one call, any other
    with ``act`` game by game, each game with its own generator; so every game is move for
    move the game :func:`play_episode` plays (up to the rounding of a batched network call). A policy
    object may sit in many games at once, so it must keep no state between moves (give each
    game its own copy otherwise).

    :raises IllegalActionError: a policy chose an illegal action; the message names it.
    """
    n = vec.num_envs
    if not (len(policies) == len(rngs) == len(seeds) == n):
        raise ValueError(f"need policies, generators and a seed for each of the {n} games")
    vec.reset(seed=list(seeds))
    decks = np.stack([m.deck for m in vec.matches]) if hasattr(vec, "matches") else None
    for i, game in enumerate(policies):
        for seat, policy in enumerate(game):
            reset_agent(
                policy, seat, labels[i][seat] if labels is not None else policy, f"seat {seat}"
            )
    players = vec.num_players
    groups = np.asarray(vec.game.score_groups)
    same_side = groups[:, None] == groups[None, :]
    points = np.zeros((n, players))
    hands = np.zeros(n, dtype=np.int64)
    decisions = np.zeros(n, dtype=np.int64)
    truncated = np.zeros(n, dtype=bool)
    live = np.ones(n, dtype=bool)
    actions = np.zeros(n, dtype=np.int64)

    def illegal(i: int, why: object) -> IllegalActionError:
        """The error of game ``i``'s agent to act, naming it and its seat."""
        seat = int(vec.current[i])
        who = labels[i][seat] if labels is not None else policies[i][seat]
        return illegal_action_error(who, f"seat {seat}", why)

    while live.any():
        games = np.flatnonzero(live)
        seats = vec.current[games].tolist()
        batched: dict[int, tuple[Any, list[int]]] = {}
        for k, (i, seat) in enumerate(zip(games.tolist(), seats, strict=True)):
            policy = policies[i][seat]
            if hasattr(policy, "act_batch") and not getattr(policy, "uses_rng", True):
                entry = batched.setdefault(id(policy), (policy, []))
                entry[1].append(k)
            else:
                try:
                    chosen = policy.act(vec.observations[i], vec.action_masks[i], rngs[i][seat])
                except (Exception, SystemExit) as exc:
                    who = labels[i][seat] if labels is not None else policy
                    raise_agent_failure(exc, who, f"seat {seat}")
                try:  # an int in range, as one game at a time requires (not a float cut down)
                    actions[k] = check_action(chosen, vec.num_actions)
                except IllegalActionError as exc:
                    raise illegal(i, f"game {i}: {exc}") from None
        for policy, ks in batched.values():
            rows = games[ks]
            first = int(rows[0])  # its generator goes unused (the policy draws nothing)
            # the policy's label in one of its games (it acts at that game's seat to act)
            who = labels[first][int(vec.current[first])] if labels is not None else policy
            where = f"{seats_text(vec.current[rows])}, deciding for {rows.size} games at once"
            try:
                chosen = policy.act_batch(
                    vec.observations[rows], vec.action_masks[rows], rngs[first][vec.current[first]]
                )
            except (Exception, SystemExit) as exc:
                raise_agent_failure(exc, who, where)
            # one int action a game, as one game at a time requires (not a float cut down, nor
            # one value for every game)
            try:
                actions[ks] = batch_actions(chosen, rows.size)
            except IllegalActionError as exc:
                raise illegal_action_error(who, where, exc) from None
        try:
            vec.step(actions[: games.size], games=games)
        except IllegalActionError as exc:
            raise illegal(exc.game, exc) from exc
        decisions[games] += 1
        for i in games[vec.hand_done[games]].tolist():
            hand = vec.hand_points[i]
            hands[i] += 1
            if not np.isnan(hand[0]):
                points[i] += (same_side * hand[None, :]).sum(axis=1)
        ended = games[(vec.terminated | vec.truncated)[games]]
        truncated[ended] = vec.truncated[ended]
        live[ended] = False
    return VectorEpisodes(points, hands, decisions, truncated, decks)
