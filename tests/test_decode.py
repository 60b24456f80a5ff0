"""Each variant's ``Game.decode`` reads its observations back: in random matches, at every step
and for every seat, the decoded view equals the one built from the true state (kept apart from
the observation), and every field of the observation layout reaches the view."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from rummyzoo.envs.cards import CARD_NAMES, NUM_CARDS, NUM_RANKS, NUM_SUITS
from rummyzoo.envs.ditch_rummy.rules import CARD_TO_ORDER, RUN, SET, DitchView, Fits
from rummyzoo.envs.ditch_rummy.rules import Phase as DitchPhase
from rummyzoo.envs.knock_rummy.rules import DISCARD_BASE, TAKE_DISCARD, KnockView
from rummyzoo.envs.knock_rummy.rules import Phase as KnockPhase
from rummyzoo.envs.match import Match
from rummyzoo.envs.native import PURE
from rummyzoo.envs.registry import make_game
from rummyzoo.envs.rummy500.rules import ObsPhase, Rummy500View
from rummyzoo.envs.rummy500.rules import Phase as Rummy500Phase
from rummyzoo.envs.rummy500.tables import pos_card

ALL = (1 << NUM_CARDS) - 1


def mask(cards: Any) -> int:
    out = 0
    for c in cards:
        out |= 1 << c
    return out


def rel(seat: int, viewer: int, n: int) -> int:
    return (seat - viewer) % n


def acting_phase(s: Any, viewer: int, phase_cls: type) -> Any:
    return phase_cls(s.phase) if viewer == s.current and not s.over else None


# ------------------------------------------------------------------------- expected views
class KnockTruth:
    """Knock views from the state, with the taken and thrown cards followed action by action
    (the state keeps them only in its observation planes)."""

    def __init__(self, game: Any) -> None:
        self.game = game
        self.hand_state: Any = None

    def _follow(self, s: Any) -> None:
        if s is not self.hand_state:  # a new hand
            self.hand_state = s
            self.known = [0] * self.game.num_players
            self.thrown = [0] * self.game.num_players

    def before(self, s: Any, action: int) -> None:
        self._follow(s)
        seat = s.current
        if action == TAKE_DISCARD:
            self.known[seat] |= 1 << s.discard[-1]
        elif action >= DISCARD_BASE:
            card = (action - DISCARD_BASE) % NUM_CARDS
            self.known[seat] &= ~(1 << card)
            self.thrown[seat] |= 1 << card

    def view(self, s: Any, viewer: int, totals: np.ndarray) -> KnockView:
        self._follow(s)
        game = self.game
        n = game.num_players
        opponents = [(viewer + k) % n for k in range(1, n)]
        known = tuple(self.known[o] for o in opponents)
        hand = s.bits[viewer]
        public = hand | mask(s.discard)
        for k in known:
            public |= k
        scored = game.match.target_score is not None
        return KnockView(
            hand=hand,
            top_discard=s.discard[-1] if s.discard else -1,
            buried_discards=mask(s.discard[:-1]),
            opponent_known=known,
            opponent_thrown=tuple(self.thrown[o] for o in opponents),
            unseen=ALL & ~public,
            stock=s.stock_size,
            phase=acting_phase(s, viewer, KnockPhase),
            to_act=rel(s.current, viewer, n),
            dealer=rel(s.dealer, viewer, n),
            turn=s.turn,
            scores=tuple(float(totals[(viewer + r) % n]) if scored else 0.0 for r in range(n)),
        )


class DitchTruth:
    def __init__(self, game: Any) -> None:
        self.game = game

    def before(self, s: Any, action: int) -> None:
        pass

    def view(self, s: Any, viewer: int, totals: np.ndarray) -> DitchView:
        game = self.game
        n = game.num_players
        seats = [(viewer + r) % n for r in range(n)]
        order = CARD_TO_ORDER

        def melded(seat: int, kind: int) -> int:
            return mask(
                order[c] for m in s.melds if m.owner == seat and m.kind == kind for c in m.cards
            )

        sets = tuple(melded(seat, SET) for seat in seats)
        runs = tuple(melded(seat, RUN) for seat in seats)
        singles = tuple(mask(order[c] for c in s.singles[seat]) for seat in seats)
        hand = mask(s.hands[viewer])
        discards = mask(order[c] for c in s.discard)
        shown = hand | discards
        for m in sets + runs + singles:
            shown |= m
        return DitchView(
            hand=tuple(s.hands[viewer]),
            discards=discards,
            sets=sets,
            runs=runs,
            singles=singles,
            unseen=ALL & ~shown,
            fits=Fits(
                mask(r for r in range(NUM_RANKS) if s.set_count[r]),
                mask(o for o in range(NUM_CARDS) if s.below[o]),
                mask(o for o in range(NUM_CARDS) if s.above[o]),
            ),
            hand_sizes=tuple(len(s.hands[seat]) for seat in seats),
            hand_points=tuple(s.earned[seat] for seat in seats),
            teammates=tuple(r == 0 or (game.rules.teams and r == 2) for r in range(n)),
            scores=tuple(round(float(totals[seat])) for seat in seats),
            stock=s.pile_size,
            phase=acting_phase(s, viewer, DitchPhase),
            to_act=rel(s.current, viewer, n),
            dealer=rel(s.dealer, viewer, n),
            drawn=s.drawn,
            idle_turns=s.idle,
            turn=s.turn,
        )


class Rummy500Truth:
    def __init__(self, game: Any) -> None:
        self.game = game

    def before(self, s: Any, action: int) -> None:
        pass

    def view(self, s: Any, viewer: int, totals: np.ndarray) -> Rummy500View:
        game = self.game
        n = game.num_players
        seats = [(viewer + r) % n for r in range(n)]
        laid = dict.fromkeys(range(n), 0)
        run_cards = 0
        for suit, lo, hi, owners in s.runs:
            for p in range(lo, hi + 1):
                laid[owners[p]] |= 1 << pos_card(suit, p)
                run_cards |= 1 << pos_card(suit, p)
        for rank, suits, owners in s.sets:
            for suit in range(NUM_SUITS):
                if suits >> suit & 1:
                    laid[owners[suit]] |= 1 << (suit * NUM_RANKS + rank)
        known = tuple(mask(game.known_cards(s, seat)) for seat in seats[1:])
        hand = s.bits[viewer]
        seen = hand | mask(s.pile)
        for m in list(laid.values()) + list(known):
            seen |= m
        scored = game.match.target_score is not None
        return Rummy500View(
            hand=hand,
            doubles=mask(c for c in range(NUM_CARDS) if game.planes(s)[viewer, c] > 1),
            discards=tuple(s.pile),
            top_discard=s.pile[-1] if s.pile else -1,
            laid=tuple(laid[seat] for seat in seats),
            run_cards=run_cards,
            fits=tuple(s.fits),
            opponent_known=known,
            unseen=ALL & ~seen,
            pending=s.pending,
            stock=s.stock_size,
            hand_sizes=tuple(s.sizes[seat] for seat in seats),
            table_points=tuple(s.table_points[seat] for seat in seats),
            phase=acting_phase(s, viewer, Rummy500Phase),
            to_act=rel(s.current, viewer, n),
            dealer=rel(s.dealer, viewer, n),
            turn=s.turn,
            scores=tuple(round(float(totals[seat])) if scored else 0 for seat in seats),
        )


TRUTHS: dict[str, Callable[[Any], Any]] = {
    "knock_rummy": KnockTruth,
    "ditch_rummy": DitchTruth,
    "rummy500": Rummy500Truth,
}


def differences(view: Any, expected: Any) -> list[str]:
    """The fields that differ (scores to float32 precision: Knock totals may be fractions)."""
    out = []
    for field in dataclasses.fields(view):
        got, want = getattr(view, field.name), getattr(expected, field.name)
        if field.name == "scores":
            ok = got == pytest.approx(want, rel=1e-6, abs=1e-4)
        else:
            ok = got == want and type(got) is type(want)
        if not ok:
            out.append(f"{field.name}: decoded {got!r}, true {want!r}")
    return out


def check_all_seats(game: Any, truth: Any, state: Any, totals: np.ndarray, where: str) -> None:
    for viewer in range(game.num_players):
        obs = game.observe(state, viewer, totals)
        view = game.decode(obs)
        wrong = differences(view, truth.view(state, viewer, totals))
        assert not wrong, f"{where}, seat {viewer}: " + "; ".join(wrong)


# ------------------------------------------------------------------------- random matches
CASES = [
    ("knock_rummy", 2, {"target_score": 100}),
    ("knock_rummy", 3, {"target_score": None, "kernels": PURE}),
    ("knock_rummy", 4, {"target_score": 60, "knock_max_deadwood": 10}),
    (
        "knock_rummy",
        2,
        {"target_score": 50, "knock_max_deadwood": 5, "stock_exhaustion": "reshuffle"},
    ),
    ("knock_rummy", 2, {"target_score": None, "stock_exhaustion": "showdown", "kernels": PURE}),
    ("ditch_rummy", 2, {"target_score": 60}),
    (
        "ditch_rummy",
        3,
        {
            "target_score": None,
            "draw_rule": "up_to_3",
            "max_hand": 5,
            "single_extends_meld": True,
        },
    ),
    ("ditch_rummy", 4, {"target_score": 80, "teams": True, "runs_same_suit": True}),
    ("rummy500", 2, {"target_score": 150}),
    ("rummy500", 3, {"target_score": None, "top_discard_free": True}),
    ("rummy500", 5, {"target_score": 100, "stock_exhaustion": "end_after_last_stock_turn"}),
]


@pytest.mark.parametrize(("variant", "players", "options"), CASES)
def test_decode_agrees_with_the_state_at_every_step(variant, players, options):
    game = make_game(variant, players, **options)
    truth = TRUTHS[variant](game)
    match = Match(game)
    rng = np.random.default_rng(players)
    steps = hands = seed = 0
    while steps < 1200:  # matches from seed 0 on, 1200 decisions in all
        match.reset(seed=seed)
        seed += 1
        while not match.over and steps < 1200:
            state = match.state
            check_all_seats(game, truth, state, match.seat_totals, f"step {steps}")
            legal = np.flatnonzero(match.legal_mask())
            action = int(legal[rng.integers(len(legal))])
            truth.before(state, action)
            end = match.play(action)
            steps += 1
            if end is not None and end.state.over:  # the finished hand, seen by everyone
                hands += 1
                check_all_seats(game, truth, end.state, match.seat_totals, f"end of hand {hands}")
    assert steps == 1200
    # the finished hands were checked too (random play rarely knocks at 5 with a reshuffled stock)
    assert hands >= 2 or options.get("stock_exhaustion") == "reshuffle"


def test_ditch_view_when_a_run_ends_the_hand():
    """The hand ends on the J-Q-K / Q-K-A meld, not at the end of a turn: the last turn still
    shows in the final observation."""
    game = make_game("ditch_rummy", 2, target_score=None)
    top = ["5c", "6d", "9h", "2c", "8d", "Th", "Qs", "Kd", "Ah"]
    match = Match(game)
    match.reset(seed=0, deck=top + [c for c in CARD_NAMES if c not in top])
    truth = DitchTruth(game)
    for name in ["draw 3", "meld 0 1", "ditch 0", "draw 3", "ditch all", "draw 3", "meld 0 1 2"]:
        check_all_seats(game, truth, match.state, match.seat_totals, name)
        end = match.play(game.action_index(name))
    assert end is not None and end.state.end_reason == "blind_run"
    check_all_seats(game, truth, end.state, match.seat_totals, "end of hand")


# ------------------------------------------------------------------------- every field is read
NOT_DECODED = {
    "knock_rummy": {"padding"},  # always zero
    "ditch_rummy": {"hand_positions"},  # the hand again, by position: ``hand`` is sorted
    "rummy500": {"discard_size"},  # the pile's length again: ``len(discards)``
}
#: The value that switches a cell on, where 1 is not a value the field takes.
ON_VALUE = {"discard_pile_lower": 1.0 / 104}  # a card's place in the pile: here the bottom


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("knock_rummy", 3, {"target_score": 100}),
        ("ditch_rummy", 4, {"target_score": 100, "teams": True}),
        ("rummy500", 3, {"target_score": 100}),
        ("rummy500", 5, {"target_score": 100}),
    ],
)
def test_every_observation_field_reaches_the_view(variant, players, options):
    """Changing any one field of the layout changes the decoded view (so no field is skipped
    or read from the wrong place)."""
    game = make_game(variant, players, **options)
    match = Match(game)
    match.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(40):  # into the hand, with cards on the table and in the pile
        legal = np.flatnonzero(match.legal_mask())
        match.play(int(legal[rng.integers(len(legal))]))
    obs = match.observe(match.state.current)
    base = game.decode(obs)
    for name, (start, stop) in game.observation_layout.items():
        if name in NOT_DECODED[variant] or stop == start:
            continue
        changed = obs.copy()
        cells = changed[start:stop]
        if stop - start == 1:  # a scalar: one more (a whole unit of any scale)
            cells[0] += 1.0
        else:  # a plane or a one-hot: a cell that is on switched off, else the first one on
            on = np.flatnonzero(cells)
            cell = on[0] if on.size else 0
            cells[cell] = 0.0 if cells[cell] else ON_VALUE.get(name, 1.0)
        assert game.decode(changed) != base, f"{variant}: field {name} does not reach the view"


# ------------------------------------------------------------------------- phases
def test_phases_are_int_enums_kept_in_the_state():
    assert [int(p) for p in KnockPhase] == [0, 1]
    assert [int(p) for p in DitchPhase] == [0, 1, 2]
    assert [int(p) for p in Rummy500Phase] == [0, 1]
    assert [int(p) for p in ObsPhase] == [0, 1, 2]
    for variant in ("knock_rummy", "ditch_rummy", "rummy500"):
        match = Match(make_game(variant, 2))
        match.reset(seed=0)
        assert match.state.phase == 0 and match.state.phase.name == "DRAW"


@pytest.mark.parametrize(
    ("variant", "built", "played"),
    [
        ("knock_rummy", 2, 3),
        ("ditch_rummy", 3, 2),
        ("rummy500", 2, 4),
    ],
)
def test_a_heuristic_built_for_another_table_says_so(variant, built, played):
    """An agent built for one player count, handed another's observation, names the sizes
    (it misread the planes, or failed deep inside, before)."""
    from rummyzoo.agents.registry import make_agent
    from rummyzoo.envs.registry import make_env

    env = make_env(variant, played)
    env.reset(seed=1)
    obs, *_ = env.last()
    agent = make_agent(f"{variant.split('_')[0]}.smart", variant, built)
    size = obs["observation"].shape[0]
    with pytest.raises(
        ValueError,
        match=rf"observation of shape \({size},\) where this .* "
        rf"game \({built} players\) has .*another player count or options",
    ):
        agent.act(obs["observation"], obs["action_mask"], np.random.default_rng(0))
