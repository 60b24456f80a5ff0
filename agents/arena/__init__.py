"""The arena: many seeded games between agents, with duplicate deals, seat rotation and ratings.

How games are scheduled
-----------------------
Deal ``d`` of a run with seed ``S`` is the env seed ``SeedSequence([S, d])`` (it fixes every deck
of the episode, also the later hands of a match, and the in-hand chance such as reshuffles). Each
deal is played once per *seating*:

* ``K >= N`` agents for ``N`` seats: every combination of ``N`` agents (a round robin; just the
  one line-up when ``K == N``); ``K < N``: one line-up that fills the seats by cycling the agent
  list (``A B C A`` for three agents and four seats). An agent then holds several seats of one
  game; each seat counts as one of its games, and seats held by the same agent are not compared
  with each other.
* Each line-up is played in every seating of a *balanced* design (``seating="balanced"``, the
  default): every ordered pair of the line-up's places holds every ordered pair of seats equally
  often (:func:`balanced_orders`: ``N (N - 1)`` seatings, 60 at 6 seats). So every agent
  sits in every seat on identical cards, which cancels the luck of the deal (duplicate play),
  and also sits after and before every other agent equally often: at three or more seats who
  plays after whom matters (in Knock Rummy the next player may take your discard), and rotations
  alone keep that order fixed (rotating ``A B C D`` always seats ``D`` after ``C``). With partners (Ditch
  Rummy's teams, seats 0+2 against 1+3) the same design makes every agent partner every other
  one equally often. At two seats, and for a line-up of copies of one agent, the design is the
  ``N`` rotations (seat ``s`` gets the line-up's place ``(s + r) % N`` in rotation ``r``), with
  partners in every distinct partnership (copies of one agent, which play alike, count as one:
  which copy partners whom changes no game): ``seating="rotations"`` plays that for every line-up
  (fewer games a deal; the order around the table is then fixed). The evaluations of a
  checkpoint against copies of one opponent use rotations: only the checkpoint's figures are
  read there, and rotations seat it after and before the copies alike; the arena reports each
  copy on its own, and copies seated by rotations would not sit alike.
* With partners and fewer agents than seats but more than teams (three agents at Ditch Rummy's
  four seats), an agent's copies always partner each other: a copy on each side would share
  whichever side's win. Either design then plays every seating in which each agent sits and
  none sits on two sides (``A A`` against ``B C`` and its mirror images, for each agent as the
  pair: 12 seatings for three agents at four seats).

Agents' random streams are seeded from ``(S, d, seating, seat)``. Games depend on nothing else,
so the numbers are the same whatever the number of worker processes; results are merged in deal
order.

What is measured
----------------
* **win rate**: a game's win goes to the seat(s) with the top episode points; ``k`` tied seats
  (or teams, whose members share points) get ``1/k`` each. Reported with a 95% Wilson interval
  using the deal-clustered effective sample size (see :mod:`rummyzoo.agents.arena.stats`).
* **mean points** per hand: an agent's points over all its games divided by the hands they
  took (one hand a game unless the variant plays a match to a target score), with a 95% t
  interval over deals (the ratio estimator's; with single hands the t interval over per-deal
  means).
* **cross table** (any number of agents): the share of head-to-head comparisons row beat column;
  two agents in the same game are compared by episode points (a tie is half), teammates are not
  compared.
* **ratings** (more than two agents): Bradley-Terry on the Elo scale fitted from all pairwise
  comparisons, anchored at ``random`` when exactly one agent is ``random``, else at the mean,
  with a bootstrap over deals (see :mod:`rummyzoo.agents.arena.ratings`).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import dataclasses
import io
import math
import multiprocessing
import os
import pickle
import re
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import combinations, permutations, product
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.arena.kept import DealRows, agent_identity
from rummyzoo.agents.arena.ratings import MIN_DEALS, Ratings, bootstrap_ratings
from rummyzoo.agents.arena.stats import clustered_ratio_interval, win_rate_interval
from rummyzoo.agents.base import BasePolicy, Policy
from rummyzoo.agents.checkpoints import package_version
from rummyzoo.agents.registry import check_agent_object, loads_as_checkpoint, make_agent
from rummyzoo.envs import files
from rummyzoo.envs.core import printable
from rummyzoo.envs.match import REPORT_OPTION_NAMES, Match
from rummyzoo.envs.play import play_episode
from rummyzoo.envs.registry import check_players, make_match
from rummyzoo.envs.replay import Recorder, record_game, save_replay
from rummyzoo.envs.seeding import check_seed, new_generator, seed_generator
from rummyzoo.envs.workers import ProcessDied, portable_exception, usable_cpus

__all__ = [
    "SEATING_DESIGNS",
    "ArenaResult",
    "ArenaWorkers",
    "as_given",
    "balanced_orders",
    "deal_seeds",
    "format_report",
    "heatmap_figure",
    "made_as_given",
    "make_arena_match",
    "pinned_checkpoints",
    "record_episode",
    "run_arena",
    "save_arena_games",
    "seatings",
    "summarize",
    "write_csv",
    "write_heatmap",
    "write_json",
]


AgentSpec = str | Policy


def make_arena_match(variant: str, num_players: int, options: dict[str, Any] | None = None):
    """The match the arena plays on (build once and reuse: each game resets it).

    :raises ValueError: unknown variant, unsupported player count, a reserved option.
    :raises ConfigError: an unknown or invalid rules option.
    """
    return make_match(variant, num_players, options, "the arena (it scores raw points)")


# ---------------------------------------------------------------------------- scheduling
#: How each line-up is seated around the table (see the module docstring); the first is the
#: default.
SEATING_DESIGNS = ("balanced", "rotations")

#: Irreducible polynomials over GF(2) (bit i = coefficient of x**i) for the fields of 4 and 8
#: elements.
_GF2_MODULI = {4: 0b111, 8: 0b1011}


def _field_ops(n: int) -> tuple[Any, Any] | None:
    """(add, multiply) of a field of ``n`` elements ``0 .. n-1``, or None where there is none
    (``n`` not prime and not 4 or 8)."""
    if n >= 2 and all(n % d for d in range(2, int(n**0.5) + 1)):
        return (lambda x, y: (x + y) % n), (lambda x, y: x * y % n)
    modulus = _GF2_MODULI.get(n)
    if modulus is None:
        return None
    top = n  # x**k, the bit that the modulus clears

    def multiply(x: int, y: int) -> int:
        out = 0
        while y:
            if y & 1:
                out ^= x
            y >>= 1
            x <<= 1
            if x & top:
                x ^= modulus
        return out

    return (lambda x, y: x ^ y), multiply


def _projective_orders(q: int) -> list[tuple[int, ...]]:
    """PSL(2, q) for a prime ``q`` as permutations of its projective line, ``0..q-1`` and ``q``
    for the point at infinity: 2-transitive, each ordered pair of points taken to each ordered
    pair by the same number of its ``q (q*q - 1) / 2`` maps (in sorted order)."""
    inf = q
    squares = {x * x % q for x in range(1, q)}

    def image(a: int, b: int, c: int, d: int, x: int) -> int:
        if x == inf:
            return inf if c == 0 else a * pow(c, -1, q) % q
        den = (c * x + d) % q
        return inf if den == 0 else (a * x + b) * pow(den, -1, q) % q

    orders = {
        tuple(image(a, b, c, d, x) for x in range(q + 1))
        for a in range(q)
        for b in range(q)
        for c in range(q)
        for d in range(q)
        if (a * d - b * c) % q in squares
    }
    return sorted(orders)


def balanced_orders(n: int) -> list[tuple[int, ...]]:
    """Seatings of ``n`` places (``seating[s]`` = the place at seat ``s``) in which every ordered
    pair of places holds every ordered pair of seats equally often.

    For ``n`` a prime or 4 or 8 these are the ``n (n - 1)`` maps ``s -> a s + b`` of the field of
    ``n`` elements (``a != 0``): for any two seats and any two places exactly one of them puts
    the places there. For a prime ``n`` the first ``n`` (``a = 1``) are the rotations. At 6
    seats no such set of 30 exists (there is no projective plane of order 6); the 60 maps
    ``x -> (a x + b) / (c x + d)`` of the projective line over the field of 5 elements whose
    ``a d - b c`` is a nonzero square (the group PSL(2, 5), with the point at infinity as seat
    5) put any two places at any two seats exactly twice.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"need at least 2 seats, got {n!r}")
    if n == 6:
        return _projective_orders(5)
    ops = _field_ops(n)
    if ops is None:
        raise ValueError(f"no balanced seating design for {n} seats")
    add, multiply = ops
    return [tuple(add(multiply(a, s), b) for s in range(n)) for a in range(1, n) for b in range(n)]


def seatings(
    num_agents: int,
    num_seats: int,
    score_groups: Sequence[int] | None = None,
    design: str = "balanced",
    kinds: Sequence[Any] | None = None,
) -> list[tuple[int, ...]]:
    """Agent index per seat for every game of one deal (see the module docstring).

    :param score_groups: the scoring group of each seat (teams share one); where seats are
        partnered, the rotations are played in every distinct partnership (of kinds: which
        copy of one kind partners whom is no other partnership).
    :param design: ``balanced`` or ``rotations`` (see :data:`SEATING_DESIGNS`).
    :param kinds: what each agent is (equal kinds play alike: the same agent name); a line-up of
        one kind is seated by rotations in either design. None: every agent its own.
    """
    if num_agents < 2:
        raise ValueError(f"the arena needs at least 2 agents, got {num_agents}")
    if design not in SEATING_DESIGNS:
        raise ValueError(f"seating must be one of {', '.join(SEATING_DESIGNS)}, got {design!r}")
    kinds = list(range(num_agents)) if kinds is None else list(kinds)
    if len(kinds) != num_agents:
        raise ValueError(f"need one kind per agent ({num_agents}), got {len(kinds)}")
    if num_agents >= num_seats:
        lineups = list(combinations(range(num_agents), num_seats))
    else:
        lineups = [tuple(i % num_agents for i in range(num_seats))]
    groups = list(range(num_seats)) if score_groups is None else list(score_groups)
    if len(groups) != num_seats:
        raise ValueError(f"need one score group per seat ({num_seats}), got {len(groups)}")
    teams = len(set(groups)) < num_seats
    partnered = teams and num_agents >= num_seats
    # as many agents as teams: each agent is a team (cycling puts its copies in one team's
    # seats), which the balanced design would break up
    one_team_each = teams and num_agents == len(set(groups))
    balanced = design == "balanced" and num_seats > 2 and not one_team_each
    if teams and not partnered and not one_team_each:
        return _partnered_copies(num_agents, groups)
    result: list[tuple[int, ...]] = []
    placed: set[tuple[int, ...]] = set()  # (what result holds: a list's search grew as its square)
    for lineup in lineups:
        if balanced and not _rotations_suffice(lineup, kinds):
            for order in balanced_orders(num_seats):  # an agent in two seats: each once
                seating = tuple(lineup[p] for p in order)
                if seating not in placed:
                    placed.add(seating)
                    result.append(seating)
            continue
        orders = [lineup]
        if partnered:
            # each partnership once, copies of one agent (one kind) counted as one: which copy
            # partners the agent changes nothing (it made an evaluation against three copies
            # play 3 partnerships x 4 rotations where 4 seatings are the whole design)
            first: dict[Any, int] = {}
            kind = [first.setdefault(k, len(first)) for k in kinds]  # (kinds of any type)
            orders, seen = [], set()
            for order in permutations(lineup):
                teams = tuple(
                    sorted(
                        tuple(
                            sorted(
                                kind[a] for a, g in zip(order, groups, strict=True) if g == group
                            )
                        )
                        for group in set(groups)
                    )
                )
                if teams not in seen:
                    seen.add(teams)
                    orders.append(order)
        for order in orders:
            for r in range(num_seats):
                seating = tuple(order[(s + r) % num_seats] for s in range(num_seats))
                if seating not in placed:
                    placed.add(seating)
                    result.append(seating)
    return result


def _partnered_copies(num_agents: int, groups: Sequence[int]) -> list[tuple[int, ...]]:
    """Every seating of ``num_agents`` agents (fewer than the seats, more than the teams)
    in which each agent sits and all of an agent's seats are on one side (``groups``: each
    seat's side): a copy on each side would share whichever side's win. The set is the same
    under any renaming of the agents, so each agent holds as many seats as any other."""
    found = []
    for seating in product(range(num_agents), repeat=len(groups)):
        sides: dict[int, set[int]] = {}
        for agent, group in zip(seating, groups, strict=True):
            sides.setdefault(agent, set()).add(group)
        if len(sides) == num_agents and all(len(side) == 1 for side in sides.values()):
            found.append(seating)
    return found


def _rotations_suffice(lineup: Sequence[int], kinds: Sequence[Any]) -> bool:
    """Whether the rotations of ``lineup`` give every order of its players around the table
    that the report can tell apart: all of one kind. (With one policy against two copies of an
    opponent, rotations seat the first copy always right after the policy and the second
    always before it, and the report shows each copy's own figures.)"""
    return len({kinds[a] for a in lineup}) == 1


def deal_seeds(seed: int, deal: int) -> tuple[int, int]:
    """``(env seed, agents' key)`` of deal ``deal`` of a run seeded ``seed``."""
    state = np.random.SeedSequence([seed, deal]).generate_state(3, np.uint64)
    return int(state[0]), int(state[1]) | (int(state[2]) << 64)


def _shown(spec: Any) -> str:
    """How the arena's reports name an agent: a checkpoint by its file name rather than its
    whole path (:func:`_distinct_file_labels` adds the parts that tell two apart)."""
    if isinstance(spec, str):  # (an agent's name without the spaces around it, as it plays)
        name = spec if files.is_file(spec) else spec.strip()
        return Path(name).name if files.is_file(name) else name
    return str(getattr(spec, "name", type(spec).__name__))


def _distinct_file_labels(agents: Sequence[Any], shown: list[str]) -> list[str]:
    """``shown`` with each checkpoint file shown by as many of its path's last parts as tell it
    from another file of the same name (``A/checkpoints/best.rz`` and ``B/checkpoints/best.rz``,
    not ``best.rz#1`` and ``best.rz#2``, which are for copies of one agent)."""
    paths = {
        i: Path(spec)
        for i, spec in enumerate(agents)
        if isinstance(spec, str) and files.is_file(spec)
    }
    real = {i: path.resolve() for i, path in paths.items()}
    out = list(shown)
    for i, path in paths.items():
        depth = 1
        while depth < len(path.parts) and any(
            real[j] != real[i] and other.parts[-depth:] == path.parts[-depth:]
            for j, other in paths.items()
        ):
            depth += 1
        out[i] = "/".join(path.parts[-depth:])
    return out


def unique_labels(names: Sequence[str]) -> list[str]:
    """Agent names made unique for the report (``random#1``, ``random#2`` for repeats; a
    number that another agent's own name already is, ``random#1`` given as a name, is passed
    over: two agents' figures were merged into one row)."""
    taken = {name for name in names if names.count(name) == 1}
    labels = []
    for i, name in enumerate(names):
        if names.count(name) == 1:
            labels.append(name)
            continue
        number = names[:i].count(name) + 1
        while f"{name}#{number}" in taken:
            number += 1
        label = f"{name}#{number}"
        taken.add(label)
        labels.append(label)
    return labels


# ---------------------------------------------------------------------------- playing
@dataclass
class _Plan:
    """Everything a worker needs to play any range of deals."""

    variant: str
    num_players: int
    options: dict[str, Any]
    specs: list[AgentSpec]
    labels: list[str]
    seatings: list[tuple[int, ...]]
    seed: int
    keep_decks: bool
    #: record games as replays into this folder (None: no recording) ...
    record_folder: str | None = None
    #: ... the first ``record_limit`` games of the run (None: all)
    record_limit: int | None = None
    #: games played at once on the vector engine (1: one after another)
    batch: int = 1


def replay_name(variant: str, seed: int, deal: int, seating: int) -> str:
    """The file name of a recorded arena game."""
    return f"{variant}_seed{seed}_deal{deal:04d}_seating{seating:02d}.json"


class _Table:
    """One process's match and policies, reused across games."""

    def __init__(
        self, plan: _Plan, policies: list[Policy] | None = None, match: Match | None = None
    ) -> None:
        self.plan = plan
        self.match = (
            match
            if match is not None
            else make_arena_match(plan.variant, plan.num_players, plan.options)
        )
        self.rngs = [new_generator() for _ in range(plan.num_players)]
        # (agent index, copy number) -> policy; an agent holding two seats gets two copies.
        self.instances: dict[tuple[int, int], Policy] = {}
        if policies is not None:
            for i, policy in enumerate(policies):
                self.instances[(i, 0)] = policy

    def build_policies(self) -> None:
        """Build every agent now (loading checkpoints, importing torch), not in the first game."""
        for key in range(len(self.plan.specs)):
            self._policy(key, 0)

    def _policy(self, agent: int, copy_number: int) -> Policy:
        key = (agent, copy_number)
        if key not in self.instances:
            spec = self.plan.specs[agent]
            if isinstance(spec, str):
                self.instances[key] = make_agent(
                    spec, self.plan.variant, self.plan.num_players, self.plan.options
                )
            elif copy_number == 0:
                self.instances[key] = spec
            else:
                self.instances[key] = copy.deepcopy(self._policy(agent, 0))
        return self.instances[key]

    def play_deals(self, start: int, stop: int) -> dict[str, Any]:
        if self.plan.batch > 1:
            return self.play_batched(range(start, stop), self.plan.batch)
        return self.play(range(start, stop))

    def play(self, deals: Sequence[int], max_records: int | None = None) -> dict[str, Any]:
        """Play every seating of each deal; the games' arrays (and the replays written, at
        most ``max_records`` of them)."""
        plan = self.plan
        n = plan.num_players
        per_deal = len(plan.seatings)
        games = len(deals) * per_deal
        points = np.zeros((games, n))
        hands = np.zeros(games, dtype=np.int64)
        decisions = np.zeros(games, dtype=np.int64)
        truncated = np.zeros(games, dtype=bool)
        decks: list[np.ndarray] = []
        written: list[str] = []
        written_deals: list[int] = []
        g = 0
        for deal in deals:
            env_seed, agent_key = deal_seeds(plan.seed, deal)
            for index, seating in enumerate(plan.seatings):
                policies = [
                    self._policy(agent, seating[:seat].count(agent))
                    for seat, agent in enumerate(seating)
                ]
                for seat, rng in enumerate(self.rngs):
                    seed_generator(rng, agent_key | (index << 128), seat)
                labels = [plan.labels[a] for a in seating]
                recorder = None
                game_index = deal * per_deal + index
                if (
                    plan.record_folder is not None
                    and (plan.record_limit is None or game_index < plan.record_limit)
                    and (max_records is None or len(written) < max_records)
                ):
                    recorder = Recorder(plan.variant, plan.options, labels, env_seed)
                result = play_episode(
                    self.match, policies, self.rngs, env_seed, on_event=recorder, labels=labels
                )
                if recorder is not None:
                    replay = recorder.to_dict(
                        source={"arena_seed": plan.seed, "deal": deal, "seating": index}
                    )
                    name = replay_name(plan.variant, plan.seed, deal, index)
                    written.append(str(save_replay(replay, Path(plan.record_folder) / name)))
                    written_deals.append(deal)
                points[g] = result.points
                hands[g] = result.hands
                decisions[g] = result.decisions
                truncated[g] = result.truncated
                if plan.keep_decks:
                    decks.append(result.deck)
                g += 1
        out: dict[str, Any] = {
            "points": points,
            "hands": hands,
            "decisions": decisions,
            "truncated": truncated,
            "replays": written,
            "replay_deals": written_deals,
        }
        if plan.keep_decks:
            out["decks"] = np.stack(decks) if decks else np.zeros((0, 0), dtype=np.int64)
        return out

    def play_batched(self, deals: Sequence[int], batch: int, bar: Any = None) -> dict[str, Any]:
        """:meth:`play` with up to ``batch`` games at once on the vector engine (no replays):
        every game gets the seed and generators that :meth:`play` gives it, and a policy
        that acts in batches (a network) decides for all its games with one call."""
        from rummyzoo.envs.play import play_vector
        from rummyzoo.envs.vector import VectorEnv

        plan = self.plan
        n = plan.num_players
        jobs = [(deal, index) for deal in deals for index in range(len(plan.seatings))]
        vec = None
        parts = []
        for start in range(0, len(jobs), batch):
            chunk = jobs[start : start + batch]
            if vec is None or vec.num_envs != len(chunk):
                vec = VectorEnv(self.match.game, len(chunk))
            seeds, policies, rngs, labels = [], [], [], []
            for deal, index in chunk:
                env_seed, agent_key = deal_seeds(plan.seed, deal)
                seating = plan.seatings[index]
                seats = []
                for seat, agent in enumerate(seating):
                    policy = self._policy(agent, seating[:seat].count(agent))
                    if _keeps_state(policy):  # its own copy in each game
                        policy = copy.deepcopy(policy)
                    seats.append(policy)
                gens = [new_generator() for _ in range(n)]
                for seat, rng in enumerate(gens):
                    seed_generator(rng, agent_key | (index << 128), seat)
                seeds.append(env_seed)
                policies.append(seats)
                rngs.append(gens)
                labels.append([plan.labels[a] for a in seating])
            done = play_vector(vec, policies, rngs, seeds, labels)
            part: dict[str, Any] = {
                "points": done.points,
                "hands": done.hands,
                "decisions": done.decisions,
                "truncated": done.truncated,
            }
            if plan.keep_decks:
                part["decks"] = done.decks
            parts.append(part)
            if bar is not None:
                bar.update(len(chunk))
        out = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
        return {**out, "replays": [], "replay_deals": []}


def _keeps_state(policy: Policy) -> bool:
    """Whether a policy may remember anything between moves (it overrides ``reset``)."""
    reset = getattr(type(policy), "reset", None)
    return reset is not None and reset is not BasePolicy.reset


#: the table a worker process last played at: (its run's key, the table)
_WORKER_TABLE: tuple[str, _Table] | None = None


def _init_worker() -> None:
    # Workers run side by side; a model's math library must not spread each over every core.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # The parent process built every agent first and has shown its warnings once already.
    warnings.simplefilter("ignore", UserWarning)
    threading.Thread(target=_leave_with_parent, args=(os.getppid(),), daemon=True).start()


def _leave_with_parent(parent: int) -> None:
    """End this worker once the process that started it is gone. The pool's pipes do not tell
    it: each worker holds both ends of them, so a parent killed outright (SIGKILL, the kernel's
    out-of-memory killer) left its workers blocked on them for good, holding their memory."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


class ArenaWorkers:
    """Worker processes kept for several arena runs: ``with ArenaWorkers(2) as pool:`` then
    ``run_arena(..., pool=pool)`` as often as needed. Each process starts once (spawned: it
    imports numpy, the agents and torch, seconds each) and builds a run's agents at its first
    deals of that run. ``rummyzoo evaluate`` plays one arena per opponent in them."""

    def __init__(self, workers: int | None) -> None:
        if workers is None:
            workers = usable_cpus()
        self.workers = _positive_int("workers", workers)
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False

    def executor(self) -> ProcessPoolExecutor:
        """The processes, started at the first call (and again after one of them died)."""
        if self._closed:
            raise ValueError("these arena worker processes were closed: make a new ArenaWorkers")
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                # spawned: safe with threads (torch) in the parent
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
            )
        return self._executor

    def close(self) -> None:
        """Stop the processes (they finish the deals they are playing); the pool is done."""
        self._closed = True
        self._drop()

    def _drop(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def _kill(self) -> None:
        """End the processes now, their deals unfinished (the run was stopped); the next run
        starts new ones."""
        if self._executor is not None:
            # the executor's processes by pid (no public handle on them before Python 3.14)
            for process in list(getattr(self._executor, "_processes", {}).values()):
                process.terminate()
            self._drop()

    def __enter__(self) -> ArenaWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _positive_int(name: str, value: Any) -> int:
    """``value`` as an int (a numpy integer too), or a ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Torch on one thread while the arena plays in this process (a network decides for a few
    positions at a time: more threads cost more than they give), then as it was."""
    torch = sys.modules.get("torch")
    threads = None if torch is None else torch.get_num_threads()
    if threads is not None and threads > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if threads is not None and threads > 1:
            torch.set_num_threads(threads)


def _worker_play(key: str, plan: bytes, start: int, stop: int) -> dict[str, Any]:
    """Deals ``start`` to ``stop`` of the run ``key`` in a worker (its pickled plan read and
    its agents built at the run's first deals there)."""
    global _WORKER_TABLE
    try:
        if _WORKER_TABLE is None or _WORKER_TABLE[0] != key:
            _WORKER_TABLE = None  # the last run's agents go before this run's are built
            table = _Table(pickle.loads(plan))
            table.build_policies()
            torch = sys.modules.get("torch")
            if torch is not None:
                torch.set_num_threads(1)
            _WORKER_TABLE = (key, table)
        return _WORKER_TABLE[1].play_deals(start, stop)
    except Exception as exc:
        # an agent's exception that pickling cannot rebuild broke the whole pool, unnamed:
        # it crosses as its nearest built-in type, with its notes (the agent, its seat)
        plain = portable_exception(exc)
        if plain is exc:
            raise
        raise plain from exc


@dataclass
class ArenaResult:
    """Every game of an arena run, in deal order (seatings in :func:`seatings` order).

    Arrays have one row per game: ``deal`` (G,), ``seating`` (G,) index into ``seatings``,
    ``seat_agents`` (G, N) agent index per seat, ``points`` (G, N) episode points, ``hands``,
    ``decisions`` and ``truncated`` (G,), and ``decks`` (G, cards) when kept.
    """

    variant: str
    num_players: int
    options: dict[str, Any]
    seed: int
    deals: int
    names: list[str]
    labels: list[str]
    seatings: list[tuple[int, ...]]
    score_groups: np.ndarray
    deal: np.ndarray
    seating: np.ndarray
    seat_agents: np.ndarray
    points: np.ndarray
    hands: np.ndarray
    decisions: np.ndarray
    truncated: np.ndarray
    decks: np.ndarray | None = None
    seating_design: str = "balanced"
    elapsed: float = 0.0
    workers: int = 1
    notes: list[str] = field(default_factory=list)
    replays: list[str] = field(default_factory=list)

    @property
    def games(self) -> int:
        return int(self.deal.size)


def _progress_bar(total: int, quiet: bool, labels: Sequence[str]):
    """The games' bar on a terminal, named by the line-up (``a vs b``, or the number of agents
    where that is long)."""
    from tqdm import tqdm

    disable = quiet or not sys.stderr.isatty()
    name = " vs ".join(labels)
    if len(name) > 48:
        name = f"{len(labels)} agents"
    return tqdm(
        total=total, desc=name, unit="game", file=sys.stderr, disable=disable, dynamic_ncols=True
    )


#: The most games one arena run plays (its games' rows are held in memory).
MAX_GAMES = 50_000_000


@contextlib.contextmanager
def pinned_checkpoints(agents: Sequence[Any]) -> Iterator[dict[str, str]]:
    """Each checkpoint file among ``agents`` (an agent given by a file's path) in a private
    copy of its bytes, read once, that keeps the file's name: ``{path as given: copy}``; the
    copies go when the block ends. Played from the copies, a file rewritten while the games
    are played (a training run's ``last.rz`` or ``best.rz``) is played as it was at the start
    by every seat, every worker and every opponent alike, and the arena's record of it (its
    hash) is of those bytes. A file that cannot be read is left as given (its loader says
    why)."""
    import shutil
    import tempfile

    paths = sorted(
        {a for a in agents if isinstance(a, str) and files.is_file(a) and loads_as_checkpoint(a)}
    )
    if not paths:
        yield {}
        return
    with tempfile.TemporaryDirectory(prefix="rummyzoo-pinned-") as folder:
        copies = {}
        for k, path in enumerate(paths):
            copy_path = Path(folder) / str(k) / Path(path).name
            copy_path.parent.mkdir()
            try:
                with Path(path).open("rb") as src, copy_path.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
            except OSError:
                continue
            copies[path] = str(copy_path)
        yield copies


def _said_as_given(text: Any, pinned: dict[str, str]) -> Any:
    """``text`` (a string; anything else as it is) with each pinned copy's path, and the files
    beside it, named by the path it was given as (``pinned``: path as given -> copy)."""
    if not isinstance(text, str):
        return text
    for given, copy_path in pinned.items():
        text = text.replace(copy_path, given)
        folder, above = Path(copy_path).parent, Path(given).parent
        beside = "" if str(above) == "." else str(above).rstrip(os.sep) + os.sep
        text = text.replace(str(folder) + os.sep, beside)
    return text


def as_given(exc: BaseException, pinned: dict[str, str]) -> None:
    """Make ``exc`` (an agent that could not be made, a file that could not be read: its
    arguments, file names and notes) name each pinned copy (``pinned``: path as given -> copy,
    :func:`pinned_checkpoints`), and the files beside it, by the path it was given as."""
    if not pinned:
        return
    exc.args = tuple(_said_as_given(a, pinned) for a in exc.args)
    for name in ("filename", "filename2"):
        if isinstance(getattr(exc, name, None), str):
            setattr(exc, name, _said_as_given(getattr(exc, name), pinned))
    if hasattr(exc, "__notes__"):
        exc.__notes__ = [_said_as_given(n, pinned) for n in exc.__notes__]


def made_as_given(
    spec: str, played_as: str, pinned: dict[str, str], make: Callable[[str], Any]
) -> Any:
    """``make(played_as)``: the agent (or metadata) of a pinned copy, its warnings naming the
    file as given (``spec``); where it fails, the failure of ``make(spec)``, the file as given
    (whose messages name it, its quoting and the files beside it as they are), else the
    copy's failure named as given (the file has changed since it was read)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            made = make(played_as)
        except Exception as exc:
            failed = exc
        else:
            failed = None
    for warning in caught:
        text = _said_as_given(str(warning.message), pinned)
        warnings.warn_explicit(
            text, warning.category, warning.filename, warning.lineno, source=warning.source
        )
    if failed is None:
        return made
    if played_as != spec:
        make(spec)  # (raises, naming the file as given)
    as_given(failed, pinned)
    raise failed


def run_arena(
    variant: str,
    num_players: int,
    agents: Sequence[AgentSpec],
    deals: int,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    workers: int | None = 1,
    quiet: bool = True,
    keep_decks: bool = False,
    save_games: str | Path | None = None,
    save_limit: int | None = 10,
    batch: int = 1,
    seating: str = "balanced",
    pool: ArenaWorkers | None = None,
    keep_deals: str | Path | None = None,
    pinned: dict[str, str] | None = None,
) -> ArenaResult:
    """Play ``deals`` duplicate deals between ``agents``; see the module docstring. A
    checkpoint file is read once, at the start, and played as it was then
    (:func:`pinned_checkpoints`).

    :param agents: agent names (``random``, ``knock.greedy``, a checkpoint path) or policies.
    :param options: rules options of the variant (e.g. ``{"target_score": 100}``).
    :param workers: worker processes (``None``: one per CPU); 1 plays in this process.
    :param quiet: no progress bar (it is shown on a terminal's stderr otherwise).
    :param keep_decks: record each game's first deck (for checking the duplicates).
    :param save_games: a folder: the arena records games as replays while it plays them
        (``ArenaResult.replays`` lists the files) ...
    :param save_limit: ... the first ``save_limit`` games of the run (None: every game).
    :param batch: games played at once on the vector engine (by each worker; not with
        ``save_games``): the same games (the same seeds and generators), and a network
        decides for all its games with one call. 1: one game after another.
    :param seating: how each line-up is seated: ``balanced`` (every agent after and before every
        other equally often) or ``rotations`` (see the module docstring).
    :param pool: worker processes kept from run to run (:class:`ArenaWorkers`), used in place
        of ``workers`` new ones.
    :param keep_deals: a file that keeps the deals' games as they are played (written
        atomically every few seconds, and when the run ends, is stopped or fails): where it
        holds deals of this same arena, they are not played again, so a stopped run goes on
        where it was and a run with more ``deals`` plays only the new ones (see
        :mod:`rummyzoo.agents.arena.kept`). An agent is known by its name (a checkpoint by its
        bytes): after changing the code of an agent, give a new file.
    :param pinned: checkpoint files read already (``{path as given: its copy}``, of
        :func:`pinned_checkpoints`: one evaluation's opponents all play the same bytes),
        played from their copies and named as given.
    :raises ValueError: unknown variant or agent, unsupported player count, a bad option, fewer
        than two agents, a checkpoint for another variant, an agent playing illegally, or a
        ``keep_deals`` file of another arena (nothing is played then).
    """
    if isinstance(agents, str):
        raise ValueError(f"agents must be a list of agents, got the one name {agents!r}")
    pinned = dict(pinned or {})
    with pinned_checkpoints(
        [a for a in agents if not (isinstance(a, str) and a in pinned)]
    ) as copies:
        pinned.update(copies)
        playing = [pinned.get(a, a) if isinstance(a, str) else a for a in agents]
        return _play_arena(
            variant, num_players, list(agents), playing, pinned, deals, seed, options, workers,
            quiet, keep_decks, save_games, save_limit, batch, seating, pool, keep_deals,
        )  # fmt: skip


def _play_arena(
    variant: str,
    num_players: int,
    agents: list[AgentSpec],
    playing: list[AgentSpec],
    pinned: dict[str, str],
    deals: int,
    seed: int,
    options: dict[str, Any] | None,
    workers: int | None,
    quiet: bool,
    keep_decks: bool,
    save_games: str | Path | None,
    save_limit: int | None,
    batch: int,
    seating: str,
    pool: ArenaWorkers | None,
    keep_deals: str | Path | None,
) -> ArenaResult:
    """:func:`run_arena` with ``playing``: ``agents`` as they are played (checkpoint files in
    their pinned copies, ``pinned``; ``agents`` name them, in the reports and messages)."""
    options = dict(options or {})
    deals = _positive_int("deals", deals)
    seed = check_seed(seed, none_too=False)
    if pool is not None:
        workers = pool.workers
    elif workers is None:
        workers = usable_cpus()
    workers = _positive_int("workers", workers)
    if len(agents) < 2:
        raise ValueError(f"the arena needs at least 2 agents, got {len(agents)}")
    check_players(variant, num_players)
    batch = _positive_int("batch", batch)
    if save_games is not None and (
        not isinstance(save_games, (str, os.PathLike)) or not str(save_games)
    ):
        raise ValueError(f"save_games must be a folder name, got {save_games!r}")
    if batch > 1 and save_games is not None:
        raise ValueError(
            "batch > 1 does not record games: save_games (--save-games) needs batch=1 (--batch 1)"
        )
    if save_limit is not None and (isinstance(save_limit, bool) or save_limit < 1):
        raise ValueError(f"save_limit must be a positive int or None, got {save_limit!r}")
    match = make_arena_match(variant, num_players, options)  # validates the options
    policies: list[Policy] = []
    names: list[str] = []
    shown: list[str] = []
    for spec, played_as in zip(agents, playing, strict=True):
        if isinstance(spec, str):
            policies.append(
                made_as_given(
                    spec,
                    played_as,
                    pinned,
                    lambda name: make_agent(name, variant, num_players, options),
                )
            )
            names.append(spec)
            shown.append(_shown(spec))
        elif isinstance(spec, Policy):
            check_agent_object(spec, variant, num_players, options)
            policies.append(spec)
            names.append(str(getattr(spec, "name", type(spec).__name__)))
            shown.append(names[-1])
        else:
            raise ValueError(f"an agent must be a name or a Policy, got {spec!r}")
    labels = unique_labels(_distinct_file_labels(agents, shown))
    table_seatings = seatings(
        len(agents), num_players, match.game.score_groups, seating, _kinds(agents)
    )
    notes = []
    if len(agents) < num_players:
        sides = len(set(match.game.score_groups))
        filled = (
            "an agent's copies partner each other"
            if sides < num_players
            else "seats filled by cycling the agent list"
        )
        notes.append(
            f"{len(agents)} agents for {num_players} seats: {filled}; each seat an agent holds "
            "counts as one of its games"
        )
    plan = _Plan(
        variant,
        num_players,
        options,
        list(playing),
        labels,
        table_seatings,
        seed,
        keep_decks,
        None if save_games is None else str(save_games),
        save_limit,
        batch,
    )
    per_deal = len(table_seatings)
    if deals * per_deal > MAX_GAMES:  # (its rows are held in memory: gigabytes past this)
        raise ValueError(
            f"deals {deals:,} x {per_deal} seatings = {deals * per_deal:,} games, more than an "
            f"arena run plays ({MAX_GAMES:,}): play fewer deals"
        )
    if keep_deals is not None and (
        not isinstance(keep_deals, (str, os.PathLike)) or not str(keep_deals)
    ):
        raise ValueError(f"keep_deals must be a file name, got {keep_deals!r}")
    played = DealRows(per_deal, keep_decks)
    if keep_deals is not None:
        key = {
            "rummyzoo": package_version(),
            "variant": variant,
            "players": num_players,
            # every rule and match setting, defaults filled in (a default spelled out is the
            # same arena as one left out)
            "options": {
                **dataclasses.asdict(match.game.rules),
                **{
                    k: v
                    for k, v in dataclasses.asdict(match.options).items()
                    if k not in REPORT_OPTION_NAMES
                },
            },
            "agents": [
                agent_identity(spec, label) for spec, label in zip(playing, labels, strict=True)
            ],
            "seed": seed,
            "seatings": table_seatings,
            "keep_decks": keep_decks,
            "save_games": None if save_games is None else str(Path(save_games).resolve()),
            "save_limit": save_limit,
        }
        played = DealRows(per_deal, keep_decks, keep_deals, key)
    with played.held():  # (another run with the file: refused here, before any play)
        played.load()  # (another arena's file: refused here too)
        workers = min(workers, deals)
        # the parts the run plays, as one run of these deals plays them; a part the file lacks a
        # deal of is played whole, so that each part's games are those of one run (a network's
        # batch of games, a worker's chunk)
        todo = [(a, b) for a, b in _parts(deals, per_deal, workers, batch) if played.lacks(a, b)]
        if todo:  # (a file that cannot be replaced: refused here, before any play)
            played.rewrite()
        read = deals - sum(b - a for a, b in todo)
        if read:
            some = f"all {deals}" if read == deals else f"{read} of the {deals}"
            notes.append(
                f"{some} deals were read from {keep_deals} (played by an earlier run of this "
                f"arena){'' if read == deals else ', the rest played now'}"
            )
        start_time = time.perf_counter()
        try:
            with _progress_bar(deals * per_deal, quiet, labels) as bar:
                bar.update(read * per_deal)
                if not todo:
                    pass
                elif workers == 1:
                    table = _Table(plan, policies, match)
                    table.build_policies()  # torch imported (by a checkpoint) before it is set
                    with _one_torch_thread():
                        for a, b in todo:
                            if batch > 1:
                                played.add(range(a, b), table.play_batched(range(a, b), batch, bar))
                            else:
                                played.add(range(a, b), table.play_deals(a, b))
                                bar.update((b - a) * per_deal)
                elif pool is not None:
                    _play_parallel(plan, todo, bar, pool, played.add)
                else:
                    with ArenaWorkers(min(workers, len(todo))) as own:
                        _play_parallel(plan, todo, bar, own, played.add)
        except BaseException as stop:
            # what was played is kept (a stop, a dead worker, an agent's failure); a file that
            # cannot be written then is said, and the stop goes on as it came
            try:
                saved = played.save()
            except Exception as failed:  # (a full disk...)
                stop.add_note(f"the deals played could not be kept in {keep_deals}: {failed}")
                saved = None
            if keep_deals is not None and isinstance(stop, KeyboardInterrupt) and saved is not None:
                kept = sum(1 for d in played.rows if d < deals)
                stop.add_note(
                    f"{kept} of the {deals} deals are kept in {keep_deals}: the same command "
                    "again goes on from them"
                    if kept
                    else f"no part of the run had finished (its deals are kept as each part "
                    f"of {_deals(max((b - a for a, b in todo), default=1))} ends): nothing is "
                    f"kept in {keep_deals}"
                )
            raise
        played.save()
        elapsed = time.perf_counter() - start_time

        merged, replays = played.merged(deals)
    game_deal = np.repeat(np.arange(deals), len(table_seatings))
    game_seating = np.tile(np.arange(len(table_seatings)), deals)
    seat_agents = np.asarray(table_seatings, dtype=np.int64)[game_seating]
    return ArenaResult(
        variant=variant,
        num_players=num_players,
        options=options,
        seed=seed,
        deals=deals,
        names=names,
        labels=labels,
        seatings=table_seatings,
        score_groups=np.asarray(match.game.score_groups, dtype=np.int64),
        deal=game_deal,
        seating=game_seating,
        seat_agents=seat_agents,
        points=merged["points"],
        hands=merged["hands"],
        decisions=merged["decisions"],
        truncated=merged["truncated"],
        decks=merged.get("decks"),
        seating_design=seating,
        elapsed=elapsed,
        workers=workers,
        notes=notes,
        replays=replays,
    )


def _deals(n: int) -> str:
    return f"{n:,} deal{'' if n == 1 else 's'}"


#: Deals of a worker's part, at most: a stopped run keeps the parts that finished.
PART_DEALS = 200


def _parts(deals: int, per_deal: int, workers: int, batch: int) -> list[tuple[int, int]]:
    """The ranges of deals ``(start, stop)`` that a run of ``deals`` deals plays as one part:
    a worker's chunk (about 8 a worker, :data:`PART_DEALS` at most), a block of whole batches in one process (deal
    numbers from a multiple of the block's size, so that every batch holds the games it holds
    when all the deals are played in one call: a network's scores of a batch can differ in
    their last bits from another batch's), else one deal."""
    if workers > 1:  # (at most PART_DEALS: a stopped run keeps what it played but the last)
        size = max(1, min(math.ceil(deals / (workers * 8)), PART_DEALS))
    elif batch > 1:
        whole = batch // math.gcd(batch, per_deal)  # the fewest deals that fill whole batches
        size = whole * max(1, math.ceil(max(256, 4 * batch) / (whole * per_deal)))
    else:
        size = 1
    return [(start, min(start + size, deals)) for start in range(0, deals, size)]


def _play_parallel(
    plan: _Plan,
    parts: Sequence[tuple[int, int]],
    bar: Any,
    pool: ArenaWorkers,
    done: Callable[[range, dict[str, Any]], None],
) -> None:
    """Play each part ``(start, stop)`` of the deals in the pool's processes, its games
    handed to ``done`` (its deals, its part) as it finishes; where one fails, the others that
    finish are handed over before its error is raised."""
    key = uuid.uuid4().hex
    # pickled once (its agents may be networks), sent with every chunk, read once per worker
    packed = pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL)
    pending: dict[Any, tuple[int, int]] = {}

    def take(futures: Any) -> BaseException | None:
        """Hand over the finished parts of ``futures``; the first error among them."""
        error = None
        for future in futures:
            a, b = pending.pop(future)
            if future.cancelled():
                continue
            failed = future.exception()
            if failed is not None:
                error = error or failed
                continue
            done(range(a, b), future.result())
            bar.update((b - a) * len(plan.seatings))
        return error

    try:
        executor = pool.executor()
        for a, b in parts:
            pending[executor.submit(_worker_play, key, packed, a, b)] = (a, b)
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            error = take(finished)
            if error is not None:
                raise error
    except BrokenProcessPool:
        pool._drop()  # a worker died: the next run starts new processes
        raise ProcessDied(
            "a worker process of the arena ended under it (killed, out of memory...); "
            "--workers 1 plays in this process"
        ) from None
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the deals under way are not waited for
        pool._kill()
        raise
    except BaseException as failed:
        for future in pending:
            future.cancel()
        wait(pending)  # the pool is left idle for the next run; what finished is kept
        try:
            take(list(pending))
        except Exception as keeping:  # (the failure that led here is what to see)
            failed.add_note(f"the parts that finished could not be kept: {keeping}")
        raise


def _resolve(spec: AgentSpec, variant: str, num_players: int, options: dict[str, Any]) -> Policy:
    return make_agent(spec, variant, num_players, options) if isinstance(spec, str) else spec


def _kinds(agents: Sequence[AgentSpec]) -> list[Any]:
    """What each agent is, for the seating design: a name (the same name plays alike) or the
    policy object itself."""
    return [spec if isinstance(spec, str) else id(spec) for spec in agents]


def _agent_label(spec: AgentSpec) -> str:
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", type(spec).__name__))


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
    if len(agents) != num_players:
        raise ValueError(f"need one agent per seat ({num_players}), got {len(agents)}")
    check_players(variant, num_players)
    policies = [_resolve(a, variant, num_players, options) for a in agents]
    names = list(labels) if labels is not None else [_agent_label(a) for a in agents]
    return record_game(variant, policies, names, seed, options, rngs, deck)


def save_arena_games(
    variant: str,
    num_players: int,
    agents: Sequence[AgentSpec],
    deals: int | Sequence[int],
    seed: int = 0,
    options: dict[str, Any] | None = None,
    folder: str | Path = "replays",
    limit: int | None = 10,
    seating: str = "balanced",
) -> list[Path]:
    """Play chosen deals of an arena run (same seeds, seatings and agent streams) and save
    each game as a replay.

    The arena's own table plays them, recording as it plays, so a saved game's ``final``
    equals the arena's points for that game (``run_arena(..., save_games=folder)`` records a
    whole run's games the same way without a second pass).

    :param deals: the number of deals of the run (deals ``0 .. deals-1``) or chosen deal indices.
    :param limit: at most this many games are written (None: all).
    :param seating: the run's seating design (see :func:`run_arena`).
    :returns: the paths written, in deal and seating order.
    """
    options = dict(options or {})
    seed = check_seed(seed, none_too=False)
    if isinstance(deals, int):
        if isinstance(deals, bool) or deals < 1:
            raise ValueError(
                f"deals must be a positive int or a list of deal indices, got {deals!r}"
            )
        chosen = list(range(deals))
    else:
        chosen = [int(d) for d in deals]
    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise ValueError(f"limit must be a positive int or None, got {limit!r}")
    check_players(variant, num_players)
    # named as the arena's report names them (a checkpoint by its file name)
    labels = unique_labels(_distinct_file_labels(agents, [_shown(a) for a in agents]))
    groups = make_arena_match(variant, num_players, options).game.score_groups
    table_seatings = seatings(len(agents), num_players, groups, seating, _kinds(agents))
    plan = _Plan(
        variant, num_players, options, list(agents), labels, table_seatings, seed, False,
        str(folder), None,
    )  # fmt: skip
    table = _Table(plan)
    if limit is not None:  # only as many deals as the limit needs
        chosen = chosen[: math.ceil(limit / len(table_seatings))]
    return [Path(p) for p in table.play(chosen, max_records=limit)["replays"]]


# ---------------------------------------------------------------------------- statistics
def win_credits(points: np.ndarray, score_groups: np.ndarray) -> np.ndarray:
    """Win credit per game and seat: ``1/k`` to each seat of the ``k`` top-scoring groups."""
    points = np.asarray(points, dtype=np.float64)
    groups = np.asarray(score_groups)
    top = points.max(axis=1, keepdims=True)
    at_top = points == top
    num_groups = int(groups.max()) + 1
    group_at_top = np.zeros((points.shape[0], num_groups), dtype=bool)
    for seat, group in enumerate(groups):
        group_at_top[:, group] |= at_top[:, seat]
    tied = group_at_top.sum(axis=1, keepdims=True)
    return at_top / tied


def pairwise_by_deal(result: ArenaResult) -> tuple[np.ndarray, np.ndarray]:
    """``(wins, counts)`` of shape (D, K, K): head-to-head credit and comparisons per deal."""
    k = len(result.labels)
    wins = np.zeros((result.deals, k, k))
    counts = np.zeros((result.deals, k, k))
    groups = result.score_groups
    for s, t in combinations(range(result.num_players), 2):
        if groups[s] == groups[t]:
            continue  # teammates share their points; comparing them says nothing
        a = result.seat_agents[:, s]
        b = result.seat_agents[:, t]
        valid = a != b
        ps, pt = result.points[valid, s], result.points[valid, t]
        score = (ps > pt) + 0.5 * (ps == pt)
        deal, a, b = result.deal[valid], a[valid], b[valid]
        np.add.at(wins, (deal, a, b), score)
        np.add.at(wins, (deal, b, a), 1.0 - score)
        np.add.at(counts, (deal, a, b), 1.0)
        np.add.at(counts, (deal, b, a), 1.0)
    return wins, counts


def rating_gaps(ratings: Ratings, labels: Sequence[str]) -> list[dict[str, Any]]:
    """Each pair of agents once, the higher-rated first: its rating gap and the gap's 95%
    interval (:attr:`~rummyzoo.agents.arena.ratings.Ratings.gap_ci`)."""
    assert ratings.gap_ci is not None
    gaps = []
    for i, j in combinations(range(len(labels)), 2):
        hi, lo = (i, j) if ratings.elo[i] >= ratings.elo[j] else (j, i)
        gaps.append(
            {
                "agent": labels[hi],
                "over": labels[lo],
                "gap": _num(ratings.elo[hi] - ratings.elo[lo]),
                "gap_ci": [_num(v) for v in ratings.gap_ci[hi, lo]],
            }
        )
    return gaps


def _num(x: float) -> float | None:
    """A JSON-safe number (NaN and infinities become None)."""
    x = float(x)
    return x if math.isfinite(x) else None


def rating_anchor(names: Sequence[str]) -> int | None:
    """Index of the only agent that is random play (``random``, or ``random()`` with no
    parameters: ratings are anchored there), else None (the mean)."""
    plain = [re.sub(r"\s+", "", name) for name in names]
    plain = ["random" if name == "random()" else name for name in plain]
    return plain.index("random") if plain.count("random") == 1 else None


def summarize(
    result: ArenaResult, resamples: int = 1000, command: str | None = None
) -> dict[str, Any]:
    """The report of a run as a JSON-ready dict (see the module docstring for the definitions)."""
    k = len(result.labels)
    credits = win_credits(result.points, result.score_groups)
    hands_of_seat = np.broadcast_to(result.hands[:, None], result.points.shape)
    deal_of_seat = np.broadcast_to(result.deal[:, None], result.points.shape)
    game_of_seat = np.broadcast_to(np.arange(len(result.deal))[:, None], result.points.shape)
    wins, counts = pairwise_by_deal(result)
    total_wins, total_counts = wins.sum(axis=0), counts.sum(axis=0)
    ratings: Ratings | None = None
    anchor = rating_anchor(result.names)
    if k > 2:
        ratings = bootstrap_ratings(wins, counts, anchor, resamples=resamples, seed=result.seed)
    agents: dict[str, dict[str, Any]] = {}
    for i, label in enumerate(result.labels):
        mask = result.seat_agents == i
        rate, rate_ci, n_eff = win_rate_interval(credits[mask], deal_of_seat[mask])
        mean_points, points_ci = clustered_ratio_interval(
            result.points[mask], hands_of_seat[mask], deal_of_seat[mask], game_of_seat[mask]
        )
        entry: dict[str, Any] = {
            "name": result.names[i],
            "games": int(mask.sum()),
            "win_rate": _num(rate),
            "win_rate_ci": [_num(rate_ci[0]), _num(rate_ci[1])],
            "win_rate_effective_n": _num(n_eff),
            "mean_points": _num(mean_points),
            "mean_points_ci": [_num(points_ci[0]), _num(points_ci[1])],
            "mean_points_per_game": _num(result.points[mask].mean()),
            "score_vs_others": _num(total_wins[i].sum() / max(total_counts[i].sum(), 1)),
        }
        if ratings is not None:
            entry["rating"] = _num(ratings.elo[i])
            entry["rating_ci"] = [_num(ratings.ci[i, 0]), _num(ratings.ci[i, 1])]
            entry["rating_se"] = _num(ratings.se[i])
        agents[label] = entry
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total_counts > 0, total_wins / total_counts, np.nan)
    report: dict[str, Any] = {
        "variant": result.variant,
        "players": result.num_players,
        "options": result.options,
        "seed": result.seed,
        "deals": result.deals,
        "seating": result.seating_design,
        "seatings_per_deal": len(result.seatings),
        "games": result.games,
        "agents": agents,
        "cross_table": {
            "agents": result.labels,
            "score": [[_num(x) for x in row] for row in share],
            "comparisons": total_counts.astype(int).tolist(),
            "meaning": "score[i][j]: share of comparisons agent i beat agent j (ties half)",
        },
        "mean_decisions_per_game": _num(result.decisions.mean()),
        "mean_hands_per_game": _num(result.hands.mean()),
        "truncated_games": int(result.truncated.sum()),
        "workers": result.workers,
        "elapsed_seconds": round(result.elapsed, 3),
        "notes": list(result.notes),
        "statistics": {
            "win_rate_ci": "95% Wilson score interval, effective sample size from the "
            "deal-clustered standard error (below 50 deals scaled by (t(49) / t(deals - 1))^2; "
            "where the deals show no spread, the number of deals)",
            "mean_points": "points per hand (all points / all hands); 95% Student t interval "
            "over deals (ratio estimator)",
        },
    }
    if ratings is not None:
        report["ratings"] = {
            "model": "Bradley-Terry, Elo scale (400 log10)",
            "anchor": "mean" if ratings.anchor is None else result.labels[ratings.anchor],
            "uncertainty": {
                "bootstrap": f"bootstrap over deals ({resamples} resamples)",
                "none": f"none: fewer than {MIN_DEALS} deals, too few to measure the spread "
                "between deals",
            }.get(ratings.method, ratings.method),
            "regularised": ratings.regularised,
            "open_ends": "an interval's end written null where the other is a number is open "
            "(the terminal's inf: the bootstrap never found a bound on that side); [null, null] "
            "is no interval",
        }
        if ratings.gap_ci is not None:
            report["ratings"]["gaps"] = rating_gaps(ratings, result.labels)
        if ratings.regularised:
            report["notes"].append(
                "ratings: an agent or group never lost (or never won) against some others; one "
                "virtual draw per pair keeps the ratings finite, and the gaps it alone sets "
                "(one side never beat the other, not even through others) have no interval "
                "(n/a), or, where the two sides met, a one-sided one from their head-to-head "
                "record (each deal they met in one trial the stronger side won)"
            )
    if command is not None:
        report["command"] = command
    return report


# ---------------------------------------------------------------------------- output
def _fmt(x: float | None, spec: str) -> str:
    if x is None:
        return "n/a"
    digits = int(spec.rsplit(".", 1)[1].rstrip("f")) if "." in spec else 6
    return format(round(x, digits) + 0.0, spec)  # + 0.0: no "-0"


def _interval(low: float | None, high: float | None, spec: str) -> str:
    """``[low, high]``; a one-sided interval (one end None, the other a number) open on that
    side, ``[+852, inf)``."""
    if (low is None) != (high is None):
        if high is None:
            return f"[{_fmt(low, spec)}, inf)"
        return f"(-inf, {_fmt(high, spec)}]"
    return f"[{_fmt(low, spec)}, {_fmt(high, spec)}]"


def format_report(report: dict[str, Any]) -> str:
    """A readable terminal table of :func:`summarize`'s report."""
    lines = []
    opts = ", ".join(f"{k}={v!r}" for k, v in report["options"].items())
    lines.append(
        f"{report['variant']}, {report['players']} players{' (' + opts + ')' if opts else ''}: "
        f"{report['deals']} deals x {report['seatings_per_deal']} seatings = {report['games']} "
        f"games, seed {report['seed']}, {report['elapsed_seconds']:.1f} s on "
        f"{report['workers']} worker{'s' if report['workers'] != 1 else ''}"
    )
    labels = list(report["agents"])
    has_rating = "ratings" in report
    width = max(8, *(len(label) for label in labels))
    head = (
        f"{'agent':<{width}}  {'games':>6}  {'win rate':>8}  {'95% CI':<16}  "
        f"{'points/hand':>11}  {'95% CI':<18}"
    )
    if has_rating:
        head += f"  {'rating':>13}  {'95% CI':<16}"
    lines += ["", head, "-" * len(head)]
    for label, a in report["agents"].items():
        lo, hi = a["win_rate_ci"]
        plo, phi = a["mean_points_ci"]
        row = (
            f"{label:<{width}}  {a['games']:>6}  {_fmt(a['win_rate'], '.3f'):>8}  "
            f"{'[' + _fmt(lo, '.3f') + ', ' + _fmt(hi, '.3f') + ']':<16}  "
            f"{_fmt(a['mean_points'], '+.2f'):>11}  "
            f"{'[' + _fmt(plo, '+.2f') + ', ' + _fmt(phi, '+.2f') + ']':<18}"
        )
        if has_rating:
            rlo, rhi = a["rating_ci"]
            rating = f"{_fmt(a['rating'], '+.0f')} ± {_fmt(a['rating_se'], '.0f')}"
            row += f"  {rating:>13}  {_interval(rlo, rhi, '+.0f'):<16}"
        lines.append(row)
    if has_rating:
        r = report["ratings"]
        lines.append(
            f"ratings: {r['model']}, anchored at {r['anchor']}, uncertainty by {r['uncertainty']}"
        )
        if r.get("gaps"):
            lines.append("rating gaps (95% intervals of the difference, same bootstrap):")
            for g in r["gaps"]:
                lo, hi = g["gap_ci"]
                lines.append(
                    f"  {g['agent']} over {g['over']}: {_fmt(g['gap'], '+.0f')} "
                    f"{_interval(lo, hi, '+.0f')}"
                )
    if len(labels) > 2:
        table = report["cross_table"]
        cell = max(7, *(len(label) for label in labels))
        lines += ["", "cross table: share of head-to-head comparisons the row beat the column"]
        lines.append(" " * width + "".join(f"  {label:>{cell}}" for label in labels))
        for i, label in enumerate(labels):
            cells = []
            for j in range(len(labels)):
                value = table["score"][i][j]
                cells.append("-" if i == j or value is None else f"{value:.3f}")
            lines.append(f"{label:<{width}}" + "".join(f"  {c:>{cell}}" for c in cells))
        lines.append(f"(comparisons per pair: {_pair_counts(table)})")
    extra = []
    if report["truncated_games"]:
        extra.append(
            f"{report['truncated_games']} games cut short by a cap (the turn cap, max_turns, "
            "or max_hands)"
        )
    extra += report["notes"]
    if extra:
        lines.append("")
        lines += [f"note: {n}" for n in extra]
    return "\n".join(line.rstrip() for line in lines)


def _pair_counts(table: dict[str, Any]) -> str:
    counts = table["comparisons"]
    values = {counts[i][j] for i in range(len(counts)) for j in range(len(counts)) if i != j}
    if len(values) == 1:
        return str(values.pop())
    return f"{min(values)}-{max(values)}"


def write_json(report: dict[str, Any], path: str | Path) -> Path:
    """Write the report as JSON, atomically (parent folders are created)."""
    return files.write_json(report, path, allow_nan=False)


CSV_COLUMNS = (
    "agent",
    "name",
    "games",
    "win_rate",
    "win_rate_low",
    "win_rate_high",
    "mean_points",
    "mean_points_low",
    "mean_points_high",
    "rating",
    "rating_low",
    "rating_high",
    "rating_se",
)


def write_csv(report: dict[str, Any], path: str | Path) -> Path:
    """Write one row per agent (rating columns empty with two agents), atomically."""
    path = Path(path)
    handle = io.StringIO(newline="")  # (the rows in memory, then the file written whole)
    writer = csv.writer(handle)
    writer.writerow(CSV_COLUMNS)
    for label, a in report["agents"].items():
        rating_ci = a.get("rating_ci", [None, None])
        row = [
            label,
            a["name"],
            a["games"],
            a["win_rate"],
            *a["win_rate_ci"],
            a["mean_points"],
            *a["mean_points_ci"],
            a.get("rating"),
            *rating_ci,
            a.get("rating_se"),
        ]
        writer.writerow(["" if v is None else v for v in row])
    files.atomic_write_text(path, handle.getvalue())
    return path


def heatmap_title(report: dict[str, Any], width: int = 60) -> str:
    """The heatmap's title: what was played (variant, players, deals, options), then what the
    cells mean, in lines of at most ``width`` characters."""
    import textwrap

    options = ", ".join(f"{k}={v!r}" for k, v in report["options"].items()) or "default options"
    played = (
        f"{report['variant']}, {report['players']} players, {report['deals']:,} deals, {options}"
    )
    return "\n".join([*textwrap.wrap(played, width), "row's score against column"])


def heatmap_figure(report: dict[str, Any]) -> Any:
    """The cross table as a matplotlib figure (row's score against column), titled (its
    ``get_suptitle()``) with :func:`heatmap_title`; not saved."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    table = report["cross_table"]
    labels = table["agents"]
    k = len(labels)
    score = np.array([[np.nan if v is None else v for v in row] for row in table["score"]])
    np.fill_diagonal(score, np.nan)
    size = 1.2 + 0.9 * k
    fig = Figure(figsize=(size + 1.5, size + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(score), cmap=cmap, vmin=0.0, vmax=1.0)
    shown = [_plain(label) for label in labels]  # (a "$" starts no mathematics in a name)
    ax.set_xticks(range(k), shown, rotation=45, ha="right")
    ax.set_yticks(range(k), shown)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    for i in range(k):
        for j in range(k):
            if i != j and not np.isnan(score[i, j]):
                colour = "white" if abs(score[i, j] - 0.5) > 0.3 else "black"
                ax.text(j, i, f"{score[i, j]:.2f}", ha="center", va="center", color=colour)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    # About 11 characters of a 10-point title to the inch of figure width.
    title = heatmap_title(report, width=max(40, int((size + 1.5) * 11)))
    fig.suptitle(_plain(title), fontsize=10)
    return fig


def _plain(text: str) -> str:
    """``text`` as matplotlib draws it as it is: a ``$`` escaped (a pair would be read as
    mathematics, and a name like ``a$\\foo$`` failed to draw), and what is not printable
    as its escape (no font draws it)."""
    return printable(text, lines=True).replace("$", r"\$")


def write_heatmap(report: dict[str, Any], path: str | Path) -> Path:
    """Write a PNG heatmap of the cross table (row's score against column), titled with the
    variant, players, deals and options of the run (the picture's kind from the path's
    suffix: .svg, .pdf...), atomically."""
    path = Path(path)
    kind = path.suffix.lower().lstrip(".") or "png"  # (a stream without a suffix: a PNG)
    picture = io.BytesIO()
    heatmap_figure(report).savefig(picture, format=kind, dpi=120)
    files.atomic_write_bytes(path, picture.getvalue())  # (a stream written as it is)
    return path
