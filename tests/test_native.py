"""The compiled kernels (``envs/_native.c``, ``envs/_knock.c``, ``envs/_ditch.c``): results and
clear errors on bad input."""

from __future__ import annotations

import copy
import os
from array import array

import numpy as np
import pytest

from rummyzoo.envs.native import load_kernels

# The module itself, whatever RUMMYZOO_PURE_PYTHON says (that switch only changes the default).
kernels = load_kernels()
#: CI builds the kernels and sets this: a failed build fails these tests instead of skipping them.
REQUIRED = os.environ.get("RUMMYZOO_REQUIRE_COMPILED", "") not in ("", "0")
needs_kernels = pytest.mark.skipif(
    kernels is None and not REQUIRED, reason="the compiled kernels are not built here"
)


@needs_kernels
def test_deal_round_the_table():
    planes = np.zeros((4, 52), np.float32)
    deck = np.arange(52, dtype=np.int64)[::-1].copy()  # 51, 50, ...
    masks, cards = kernels.deal(planes, deck, 5, 2, 1)
    assert cards == deck.tolist()
    # Cards 51, 49, 47 go to seat 1; 50, 48 to seat 0.
    assert masks == [(1 << 50) | (1 << 48), (1 << 51) | (1 << 49) | (1 << 47)]
    assert np.flatnonzero(planes[0]).tolist() == [48, 50]
    assert np.flatnonzero(planes[1]).tolist() == [47, 49, 51]
    assert not planes[2:].any()


@needs_kernels
@pytest.mark.parametrize(
    ("deck", "args", "error"),
    [
        (np.arange(52, dtype=np.int32), (5, 2, 0), TypeError),  # wrong dtype
        (np.arange(104, dtype=np.int64)[::2], (5, 2, 0), TypeError),  # not contiguous
        (np.arange(52, dtype=np.int64), (53, 2, 0), ValueError),  # more cards than the deck
        (np.arange(52, dtype=np.int64), (5, 5, 0), ValueError),  # more players than rows
        (np.arange(52, dtype=np.int64), (5, 2, -1), ValueError),
        (np.arange(52, dtype=np.int64) + 1, (5, 2, 0), ValueError),  # card 52 does not exist
    ],
)
def test_deal_rejects_bad_input(deck, args, error):
    planes = np.zeros((4, 52), np.float32)
    with pytest.raises(error):
        kernels.deal(planes, deck, *args)
    assert not planes.any()  # nothing dealt


def test_random_policy_draws_like_numpy():
    """The policy takes the documented pick, ``legal[int(rng.random() * legal.size)]``, from the
    same random stream, also after the generator is reseeded in place (as the arena does between
    deals): the compiled pick where built, the numpy code under RUMMYZOO_PURE_PYTHON=1 and for
    masks of other dtypes."""
    from rummyzoo.agents.random_agent import RandomPolicy
    from rummyzoo.envs.seeding import new_generator, seed_generator

    policy = RandomPolicy()
    masks = np.random.default_rng(1).random((3000, 106)) < 0.1
    masks[:, 7] = True
    rngs = [new_generator(), new_generator()]
    for rng in rngs:
        seed_generator(rng, 5, 0)
    picks, expected = [], []
    for i, mask in enumerate(masks):
        if i == 1500:
            for rng in rngs:
                seed_generator(rng, 9, 1)
        kind = (np.int8, np.bool_, np.uint8)[i % 3]
        picks.append(policy.act(None, mask.astype(kind), rngs[0]))
        legal = np.flatnonzero(mask)
        expected.append(int(legal[int(rngs[1].random() * legal.size)]))
    assert picks == expected
    assert all(masks[i, a] for i, a in enumerate(picks))
    assert rngs[0].random() == rngs[1].random()  # both streams used alike


@pytest.mark.parametrize("mask", [np.zeros(5, np.int8), np.zeros(5, np.float32)])
def test_random_policy_rejects_an_empty_mask(mask):
    from rummyzoo.agents.random_agent import RandomPolicy

    with pytest.raises(ValueError, match="all-zero"):
        RandomPolicy().act(None, mask, np.random.default_rng(0))


@needs_kernels
def test_uniform_nonzero_rejects_a_bad_capsule():
    with pytest.raises(ValueError):
        kernels.uniform_nonzero(np.ones(3, np.int8), object())


@needs_kernels
def test_uniform_picks_agree_with_numpy_over_odd_sizes_and_byte_values():
    # the picks are made sixteen or eight mask bytes at a time: sizes around those blocks and
    # past 255 blocks (a count per lane kept in a byte), masks whose nonzero entries are any
    # byte value (negative ones, 0x80) as well as ones, and long masks almost all zero
    rng = np.random.default_rng(3)
    long_sizes = [4079, 4080, 4081, 4096, 8160, 9001]  # 255 blocks of 16 items and past them
    for trial in range(2000 + len(long_sizes)):
        size = int(rng.integers(0, 70)) if trial % 2 else int(rng.integers(0, 500))
        if trial >= 2000:
            size = long_sizes[trial - 2000]
        mask = (rng.random(size) < rng.random()).astype(np.int8)
        if trial % 3 == 0:
            mask *= rng.integers(-128, 128, size).astype(np.int8)
        if trial >= 2000 and trial % 2:
            mask[:] = 0
            mask[-1] = 1
        legal = np.flatnonzero(mask)
        draw = np.random.default_rng(trial).random()
        expected = -1 if legal.size == 0 else int(legal[int(draw * legal.size)])
        pick = kernels.uniform_nonzero(mask, np.random.default_rng(trial).bit_generator.capsule)
        assert pick == expected, (trial, size)
        rows = np.stack([mask, np.roll(mask, 1), np.zeros_like(mask)])
        out = np.empty(3, np.int64)
        kernels.uniform_nonzero_rows(rows, np.random.default_rng(trial).bit_generator.capsule, out)
        draws = np.random.default_rng(trial).random(3)
        for r in range(3):
            legal = np.flatnonzero(rows[r])
            assert out[r] == (-1 if legal.size == 0 else legal[int(draws[r] * legal.size)])


@needs_kernels
def test_first_illegal_finds_the_first_action_not_legal_in_its_game():
    rng = np.random.default_rng(4)
    for _ in range(500):
        masks = (rng.random((20, 13)) < 0.5).astype(np.int8)
        games = rng.permutation(20)[: int(rng.integers(0, 21))].astype(np.int64)
        actions = rng.integers(-2, 16, games.size).astype(np.int64)
        if rng.random() < 0.5:  # mostly legal: the first illegal one late, or none
            for j, g in enumerate(games):
                legal = np.flatnonzero(masks[g])
                if legal.size and rng.random() < 0.97:
                    actions[j] = rng.choice(legal)
        ok = [0 <= a < 13 and masks[g, a] != 0 for g, a in zip(games, actions, strict=True)]
        expected = next((j for j, good in enumerate(ok) if not good), -1)
        assert kernels.first_illegal(masks, games, actions) == expected
    masks = np.ones((4, 5), np.int8)
    games, actions = np.arange(4), np.zeros(4, np.int64)
    with pytest.raises(IndexError, match="game 4 out of range"):
        kernels.first_illegal(masks, np.array([0, 4]), np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="actions"):
        kernels.first_illegal(masks, games, np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="actions"):
        kernels.first_illegal(masks, games, np.zeros(4, np.int32))
    with pytest.raises(TypeError, match="masks"):
        kernels.first_illegal(masks.astype(bool), games, actions)
    with pytest.raises(TypeError, match="3 arguments"):
        kernels.first_illegal(masks, games)


@needs_kernels
def test_mask_names_lists_the_cards_lowest_first():
    from rummyzoo.envs.cards import CARD_NAMES, parse_cards, to_mask

    mask = to_mask(parse_cards("Ks As 2c Td 9h"))
    assert kernels.mask_names(mask, CARD_NAMES) == ["2c", "Td", "9h", "As", "Ks"]
    assert kernels.mask_names(0, CARD_NAMES) == []
    assert kernels.mask_names((1 << 52) - 1, CARD_NAMES) == list(CARD_NAMES)
    with pytest.raises(ValueError, match="52 bits"):
        kernels.mask_names(1 << 52, CARD_NAMES)
    with pytest.raises(TypeError, match="52 names"):
        kernels.mask_names(1, CARD_NAMES[:51])
    with pytest.raises(OverflowError):
        kernels.mask_names(-1, CARD_NAMES)


@needs_kernels
@pytest.mark.parametrize(
    ("positions", "values"),
    [
        (range(13), range(12)),  # 12 rank values
        ([*range(13), 13], range(13)),  # no rank 13
        ([*range(13), 0, 1], range(13)),  # 15 positions
        ([], range(13)),
        (range(13), [*range(12), -1]),  # a negative value
    ],
)
@needs_kernels
def test_solver_rejects_bad_tables(positions, values):
    with pytest.raises(ValueError):
        kernels.Solver(list(positions), list(values))


# ------------------------------------------------------------------ Knock Rummy's compiled turn
def _knock_pair(**options):
    """A compiled Knock Rummy match and its game."""
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    game = make_game("knock_rummy", 2, kernels=kernels, **options)
    match = Match(game)
    match.reset(seed=5)
    return game, match


@needs_kernels
def test_knock_kernel_leaves_moves_it_does_not_play_untouched():
    """A discard at the stock's end (the Python code ends the hand there, by the rules' option)
    and a move of the other phase are the Python code's: ``apply`` answers False and the state
    is as it was. A knock is played through its showdown."""
    import copy

    from rummyzoo.envs.knock_rummy.rules import DRAW_STOCK, KNOCK_BASE, Phase

    game, match = _knock_pair(void_threshold=2)
    kernel, state = game._kernel, match.state
    assert state.phase is Phase.DRAW
    held = state.hand_cards(state.current)[0]
    assert kernel.apply(state, 2 + held) is False  # a discard in the draw phase
    assert kernel.apply(state, DRAW_STOCK) is True
    assert state.phase is Phase.DISCARD
    after_draw = copy.deepcopy(state)
    state.stock_pos = len(state.stock) - 2  # the stock at its threshold
    assert kernel.apply(state, 2 + held) is False
    assert kernel.apply(state, DRAW_STOCK) is False  # a draw in the discard phase
    state.stock_pos = after_draw.stock_pos
    names = ("bits", "stock", "discard", "current", "turn", "taken", "phase", "over", "points")
    for name in names:
        assert getattr(state, name) == getattr(after_draw, name), name
    assert state.planes.tobytes() == after_draw.planes.tobytes()
    assert kernel.apply(state, KNOCK_BASE + held) is True
    assert state.over and state.knocker == after_draw.current and sum(state.points) == 0


@needs_kernels
def test_knock_kernel_rejects_bad_input():
    game, match = _knock_pair()
    kernel = game._kernel
    with pytest.raises(TypeError, match="takes 2 arguments"):
        kernel.apply(match.state)
    with pytest.raises(AttributeError):
        kernel.apply(object(), 0)
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    wide = Match(make_game("knock_rummy", 4, kernels=kernels))
    wide.reset(seed=1)
    with pytest.raises(ValueError, match="not a Knock Rummy state of this game"):
        kernel.mask(wide.state)  # four players' planes for a two-player game
    state = match.state
    state.stock = tuple(state.stock)
    with pytest.raises(TypeError, match="stock must be a list"):
        kernel.apply(state, 0)
    with pytest.raises(ValueError, match=r"seat must be in 0\.\.1"):
        kernel.observe(match.state, 2, match.seat_totals)
    n, size = 3, game.obs_size
    arrays = (
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.zeros((n, size), np.float32),
        np.zeros((n, 106), np.int8),
        np.zeros(n, np.int64),
    )
    with pytest.raises(TypeError, match="matches must be a list"):
        kernel.step((match,) * n, *arrays)
    with pytest.raises(TypeError, match="observations has the wrong type or shape"):
        kernel.step([match] * n, arrays[0], arrays[1], np.zeros((n, size), np.float64), *arrays[3:])
    with pytest.raises(IndexError, match="game 5 out of range"):
        kernel.step([match] * n, np.array([5]), *arrays[1:])
    with pytest.raises(TypeError):
        kernels.KnockKernel(object(), {})
    with pytest.raises(KeyError, match="missing players"):
        kernels.KnockKernel(game.solver.compiled_solver, {})


@needs_kernels
@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 6, "split_rounding": "exact", "undercut_penalty_to": "all_lower"},
        {"num_players": 5, "split_rounding": "floor", "undercut_penalty_to": "winners_only"},
        {"num_players": 2, "hand_size": 3, "rummy_bonus": 7, "undercut_penalty": 3},
    ],
)
def test_knock_kernel_scores_showdowns_as_the_python_code(options):
    """Knocks with every card of the hand in many deals, compiled and in Python: the same
    deadwood, melds, winners and points to the bit, split pots (fractional and floored shares),
    rummy bonuses and undercuts among them; the points sum to zero (exact shares) or lose
    under a point a winner (floored)."""
    from rummyzoo.envs.knock_rummy.rules import DRAW_STOCK, KNOCK_BASE
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.native import PURE
    from rummyzoo.envs.registry import make_game

    options = dict(options)  # the parametrize dict is shared by reruns: not changed here
    players = options.pop("num_players")
    fast = Match(make_game("knock_rummy", players, kernels=kernels, **options))
    slow = Match(make_game("knock_rummy", players, kernels=PURE, **options))
    seen = {"split": 0, "fraction": 0, "gin": 0, "undercut": 0, "remainder": 0}
    for seed in range(150):
        fast.reset(seed=seed)
        slow.reset(seed=seed)
        fast.play(DRAW_STOCK)
        slow.play(DRAW_STOCK)
        seat = fast.state.current
        for card in slow.state.hand_cards(seat):
            a, b = copy.deepcopy(fast), copy.deepcopy(slow)
            a.play(KNOCK_BASE + card)
            b.play(KNOCK_BASE + card)
            sa, sb = a.state, b.state
            assert (sa.deadwood, sa.melds, sa.winners, sa.knocker) == (
                sb.deadwood, sb.melds, sb.winners, sb.knocker
            )  # fmt: skip
            assert [p.hex() for p in sa.points] == [p.hex() for p in sb.points]
            assert sa.over and sb.over
            # transfers: zero-sum with exact shares (rummy bonus and undercuts included); a
            # floored share loses less than a point per winner
            total = float(sum(sa.points))
            if options.get("split_rounding", "exact") == "exact":
                assert abs(total) < 1e-9, (seed, card, sa.points)
            else:
                assert -len(sa.winners) < total <= 0, (seed, card, sa.points)
            seen["split"] += len(sb.winners) > 1
            seen["fraction"] += any(p != int(p) for p in sb.points)
            seen["gin"] += sb.deadwood[seat] == 0 and sb.winners == [seat]
            seen["undercut"] += any(d < sb.deadwood[seat] for d in sb.deadwood)
            seen["remainder"] += total < 0  # a floored share left part of the pot
    # two players never split a pot (a tie goes to the knocker's opponent)
    wanted = {"undercut", "gin"} if players == 2 else {"undercut", "split"}
    wanted |= {"fraction"} if players == 6 else set()
    wanted |= {"remainder"} if options.get("split_rounding") == "floor" else set()
    assert all(seen[k] > 0 for k in wanted), seen


@needs_kernels
def test_knock_kernel_refuses_what_would_write_out_of_bounds():
    """Each of these crashed the interpreter or wrote past an array's end: a hand mask past
    card 51, a kernel never initialised or whose re-initialisation failed, read-only output
    arrays, and indices that the kernel's own writes would change (games sharing current's
    memory)."""
    from rummyzoo.envs.registry import make_game

    game, match = _knock_pair()
    kernel = game._kernel
    n, size = 1, game.obs_size

    def arrays(writeable=True):
        out = (np.zeros((n, size), np.float32), np.zeros((n, 106), np.int8), np.zeros(n, np.int64))
        for a in out:
            a.flags.writeable = writeable
        return out

    match.play(0)  # drawn: the mask of the discard reads the hand
    state = match.state
    held = state.bits[state.current]
    state.bits[state.current] = held | 1 << 60
    with pytest.raises(ValueError, match="52-bit card mask"):
        kernel.rows([match], np.zeros(1, np.int64), *arrays())
    state.bits[state.current] = held
    with pytest.raises(TypeError, match="not writeable"):
        kernel.rows([match], np.zeros(1, np.int64), *arrays(writeable=False))
    # two games of 4 seats whose seat to act is 2: games [0, 1] and current share memory, so
    # writing game 0's seat to act makes the next index 2, past the two games
    from rummyzoo.envs.match import Match

    four = make_game("knock_rummy", 4, kernels=kernels, first_dealer=1)
    pair = [Match(four), Match(four)]
    for m in pair:
        m.reset(seed=2)
    shared = np.array([0, 1, 0], np.int64)
    outs = (np.zeros((2, four.obs_size), np.float32), np.zeros((2, 106), np.int8))
    with pytest.raises(IndexError, match="game 2 out of range"):
        four._kernel.rows(pair, shared[:2], *outs, shared[1:])
    blank = kernels.KnockKernel.__new__(kernels.KnockKernel)
    with pytest.raises(RuntimeError, match="not initialised"):
        blank.mask(state)
    layout = game._native_layout()
    ready = make_game("knock_rummy", 2, kernels=kernels)._kernel
    with pytest.raises(RuntimeError, match="initialised already"):  # a call may hold its tables
        ready.__init__(game.solver.compiled_solver, layout)
    broken = kernels.KnockKernel.__new__(kernels.KnockKernel)
    with pytest.raises(ValueError, match="outside the observation"):
        broken.__init__(game.solver.compiled_solver, {**layout, "stock_at": 1 << 20})
    with pytest.raises(RuntimeError, match="not initialised"):
        broken.observe(state, 0, match.seat_totals)
    # the rules' whole ranges build compiled as they do in Python
    assert make_game("knock_rummy", 2, kernels=kernels, rummy_bonus=2**30, max_turns=2**31 - 1)


# ------------------------------------------------------------------ Ditch Rummy's compiled turn
MAX_POINTS_OPTIONS = ("points_single", "points_single_ace", "points_set", "points_run")
DITCH_OPTIONS = [
    (2, {}),
    (3, {"single_extends_meld": True}),
    (4, {"teams": True, "single_extends_meld": True, "runs_same_suit": True}),
    (2, {"draw_rule": "up_to_3", "max_hand": 10, "hand_penalty": "none", "points_run": 7}),
    # the rules' largest point values (larger ones built in Python and failed compiled, with
    # the kernel's error naming none of the options), in single hands (a match of them ends
    # with its first meld)
    (2, {**dict.fromkeys(MAX_POINTS_OPTIONS, 2**24 - 1), "target_score": None}),
]


def _ditch_matches(players, options, seed):
    """A compiled Ditch Rummy match and its pure-Python twin, reset alike."""
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.native import PURE
    from rummyzoo.envs.registry import make_game

    fast = Match(make_game("ditch_rummy", players, kernels=kernels, **options))
    slow = Match(make_game("ditch_rummy", players, kernels=PURE, **options))
    fast.reset(seed=seed)
    slow.reset(seed=seed)
    return fast, slow


@needs_kernels
@pytest.mark.parametrize(("players", "options"), DITCH_OPTIONS)
def test_ditch_kernel_plays_every_legal_move_as_the_python_code(players, options):
    """At every decision of random games, every legal move played by the kernel and by the Python
    code on copies of the state: the kernel plays each one itself (``apply`` answers True), the
    states after it are alike in every field, and so are the masks and every seat's
    observation before it. Melds, singles onto each target, blind runs and ditching the whole
    hand all occur (the test counts them)."""
    from state_helpers import ditch_state

    fast, slow = _ditch_matches(players, options, seed=players)
    kernel, python = fast.game, slow.game
    rng = np.random.default_rng(players)
    seen = {"meld": 0, "single": 0, "ditch all": 0, "blind_run": 0, "stall": 0}
    single_kinds = set()
    for _ in range(1500):
        a, b = fast.state, slow.state
        assert ditch_state(a) == ditch_state(b)
        mask = kernel.legal_mask(a)
        assert np.array_equal(mask, python.legal_mask(b))
        for seat in range(players):
            obs = kernel.observe(a, seat, fast.seat_totals)
            assert np.array_equal(obs, python.observe(b, seat, slow.seat_totals))
        for action in np.flatnonzero(mask).tolist():
            x, y = a.copy(), b.copy()
            assert kernel._kernel.apply(x, action) is True, python.action_names[action]
            python.apply(y, action, None)
            assert ditch_state(x) == ditch_state(y), python.action_names[action]
            name = python.action_names[action]
            kind = name.rsplit(" ", 1)[0] if name.startswith(("meld", "single")) else name
            seen["meld"] += name.startswith("meld")
            seen["single"] += name.startswith("single")
            single_kinds.add(name.split()[-1] if name.startswith("single") else None)
            seen["ditch all"] += kind == "ditch all"
            seen["blind_run"] += y.end_reason == "blind_run"
            seen["stall"] += y.end_reason == "stall"
        action = int(rng.choice(np.flatnonzero(mask)))
        end_a, end_b = fast.play(action), slow.play(action)
        if (end_a is None) != (end_b is None):
            pytest.fail("one match ended a hand and the other did not")
        if end_a is not None and end_a.match_over:
            fast, slow = _ditch_matches(players, options, seed=int(rng.integers(1 << 30)))
    if options.get("runs_same_suit"):
        seen.pop("blind_run")  # a blind run of one suit is rare
    assert all(count > 0 for count in seen.values()), seen
    if options.get("single_extends_meld"):
        assert {"set", "below", "above"} <= single_kinds, single_kinds


@needs_kernels
def test_ditch_kernel_leaves_moves_that_are_not_legal_untouched():
    """Moves not legal now are the Python code's (which the env never sends them to: it checks
    them first): ``apply`` answers False and the state is as it was."""
    from state_helpers import ditch_state

    fast, _ = _ditch_matches(2, {"single_extends_meld": True}, seed=3)
    game, state = fast.game, fast.state
    kernel = game._kernel
    before = ditch_state(state)
    names = ["ditch 0", "end turn", "ditch all", "meld 0 1", "single 0 set", "draw 0"]
    refused = [game.action_index(name) for name in names[:5]] + [-1, game.num_actions]
    for action in refused:  # the draw step: only draws are legal
        assert kernel.apply(state, action) is False, action
    assert ditch_state(state) == before
    fast.play(game.action_index("draw 3"))
    before = ditch_state(state)
    mask = game.legal_mask(state)
    for action in np.flatnonzero(mask == 0).tolist():
        if not game.action_names[action].startswith("draw"):
            assert kernel.apply(state, action) is False, game.action_names[action]
    assert kernel.apply(state, game.action_index("draw 1")) is False
    assert ditch_state(state) == before


@needs_kernels
def test_ditch_kernel_rejects_bad_input():
    """Clear errors, nothing written: wrong arguments, another game's state, hands that are not
    sorted tuples of order ids, wrong arrays, a kernel never initialised, a bad layout."""
    from state_helpers import ditch_state

    fast, _ = _ditch_matches(2, {}, seed=1)
    game, state = fast.game, fast.state
    kernel = game._kernel
    fast.play(game.action_index("draw 3"))
    with pytest.raises(TypeError, match="takes 2 arguments"):
        kernel.apply(state)
    with pytest.raises(AttributeError):
        kernel.apply(object(), 0)
    wide, _ = _ditch_matches(4, {}, seed=1)
    with pytest.raises(TypeError, match="flat has the wrong type or shape"):
        kernel.mask(wide.state)  # four players' public facts for a two-player game
    before = ditch_state(state)
    seat = state.current
    held = state.hands[seat]
    for bad, error in [
        (list(held), "hand must be a tuple"),
        (held[::-1], "sorted order ids"),
        ((60, *held[1:]), "sorted order ids"),
        (held * 4, "not a Ditch Rummy state"),  # more cards than a hand may hold
    ]:
        state.hands[seat] = bad
        with pytest.raises((TypeError, ValueError), match=error):
            kernel.apply(state, game.action_index("ditch 0"))
    state.hands[seat] = held
    # another seat's hand, read only when the hand ends: checked before anything is written
    other = 1 - seat
    theirs = state.hands[other]
    state.hands[other] = (60,)
    with pytest.raises(ValueError, match="sorted order ids"):
        kernel.apply(state, game.action_index("end turn"))
    state.hands[other] = theirs
    state.pile = tuple(state.pile)
    with pytest.raises(TypeError, match="pile must be a list"):
        kernel.apply(state, game.action_index("ditch 0"))
    state.pile = list(state.pile)
    # the public facts: card planes as bytes, numbers as float32, of this game's sizes
    bits, flat = state.bits, state.flat
    for name, bad in [
        ("bits", bits.astype(np.float32)), ("bits", bits[:-1].copy()),
        ("flat", flat.astype(np.float64)), ("flat", flat[:-1].copy()),
    ]:  # fmt: skip
        setattr(state, name, bad)
        with pytest.raises(TypeError, match=f"state's {name} has the wrong type or shape"):
            kernel.apply(state, game.action_index("ditch 0"))
        setattr(state, name, bits if name == "bits" else flat)
    assert ditch_state(state) == before
    with pytest.raises(ValueError, match=r"seat must be in 0\.\.1"):
        kernel.observe(state, 2, fast.seat_totals)
    with pytest.raises(TypeError, match="float64 vector"):
        kernel.observe(state, 0, [0.0, 0.0])
    n, size = 2, game.obs_size
    arrays = (
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.zeros((n, size), np.float32),
        np.zeros((n, game.num_actions), np.int8),
        np.zeros(n, np.int64),
    )
    with pytest.raises(TypeError, match="matches must be a list"):
        kernel.step((fast,) * n, *arrays)
    with pytest.raises(TypeError, match="action_masks has the wrong type or shape"):
        kernel.step([fast] * n, *arrays[:3], np.zeros((n, 5), np.int8), arrays[4])
    with pytest.raises(IndexError, match="game 5 out of range"):
        kernel.step([fast] * n, np.array([5]), *arrays[1:])
    deck = np.arange(52)
    for dealer, cards, error in [
        (2, deck, r"dealer must be in 0\.\.1, got 2"),
        (0, deck[:51], "52 card ids"),
        (0, np.r_[deck[:51], 52], "52 card ids"),
        (0, np.zeros((2, 52), np.int64), "too deep"),
    ]:
        with pytest.raises(ValueError, match=error):
            kernel.deal(dealer, cards)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        kernel.deal(0)
    dealt = kernel.deal(1, deck)
    assert dealt.current == 0 and dealt.pile_cards() == deck.tolist()
    blank = kernels.DitchKernel.__new__(kernels.DitchKernel)
    with pytest.raises(RuntimeError, match="not initialised"):
        blank.mask(state)
    with pytest.raises(RuntimeError, match="not initialised"):
        blank.deal(0, deck)
    layout = game._native_layout()
    with pytest.raises(KeyError, match="missing players"):
        kernels.DitchKernel({})
    for far in (1 << 40, -1, layout["flat_size"] + layout["bits_size"]):
        gather = [g.copy() for g in layout["gather"]]
        gather[1][5] = far
        with pytest.raises(ValueError, match="gather indexes the buffer"):
            kernels.DitchKernel({**layout, "gather": gather})
    with pytest.raises(ValueError, match="gather indexes the buffer"):
        kernels.DitchKernel({**layout, "gather": layout["gather"][:1]})  # one seat's
    with pytest.raises(TypeError, match="flat_template has the wrong type or shape"):
        kernels.DitchKernel({**layout, "flat_template": layout["flat_template"][:-1]})
    with pytest.raises(ValueError, match="fl_scores"):
        kernels.DitchKernel({**layout, "fl_scores": layout["flat_size"]})
    with pytest.raises(ValueError, match="fl_discard"):  # a card plane, in bits
        kernels.DitchKernel({**layout, "fl_discard": layout["bits_size"] - 51})
    with pytest.raises(ValueError, match="52 small ints"):
        kernels.DitchKernel({**layout, "card_penalty": [1] * 51})
    with pytest.raises(RuntimeError, match="initialised already"):
        kernels.DitchKernel(layout).__init__(layout)
    again = kernels.DitchKernel.__new__(kernels.DitchKernel)
    with pytest.raises(ValueError, match="pair_kind"):
        again.__init__({**layout, "pair_kind": b""})
    with pytest.raises(RuntimeError, match="not initialised"):
        again.mask(state)
    assert ditch_state(state) == before


@needs_kernels
def test_kernels_read_other_state_classes_through_their_attributes():
    """The kernels read a state's fields at their slots' offsets only where the object is
    exactly the class they were built with, and that class is unchanged; a subclass (here one
    whose ``turn`` is a property that counts its reads) and a class changed since go through
    Python's attribute access, with the same results."""
    from state_helpers import ditch_state

    from rummyzoo.envs.ditch_rummy.rules import DitchState

    reads = []

    class Counted(DitchState):
        __slots__ = ("_turn",)

        @property
        def turn(self):
            reads.append(1)
            return self._turn

        @turn.setter
        def turn(self, value):
            self._turn = value

    fast, slow = _ditch_matches(2, {}, seed=4)
    game = fast.game
    for _ in range(3):  # the draw step, the play step, and the next seat's draw
        action = int(np.flatnonzero(game.legal_mask(fast.state))[-1])
        plain, source = fast.state.copy(), fast.state.copy()
        counted = Counted()
        for cls in DitchState.__mro__:
            for name in getattr(cls, "__slots__", ()):
                if hasattr(source, name):
                    setattr(counted, name, getattr(source, name))
        assert game._kernel.apply(counted, action) is True
        assert game._kernel.apply(plain, action) is True
        assert ditch_state(counted) == ditch_state(plain)
        fast.play(action)
        slow.play(action)
    assert reads  # the subclass's property was read, not its slot
    # the class itself changed since the kernel was built: its ``turn`` now a property
    slot = DitchState.__dict__["turn"]
    reads.clear()
    DitchState.turn = property(
        lambda s: reads.append(1) or slot.__get__(s), lambda s, v: slot.__set__(s, v)
    )
    try:
        for _ in range(20):
            action = int(np.flatnonzero(game.legal_mask(fast.state))[0])
            mine, theirs = fast.state.copy(), slow.state.copy()
            reads.clear()
            assert game._kernel.apply(mine, action) is True
            assert reads  # read through the property, not at the slot's offset
            slow.game.apply(theirs, action, None)
            assert ditch_state(mine) == ditch_state(theirs)
            fast.play(action)
            slow.play(action)
    finally:
        DitchState.turn = slot


# ------------------------------------------------------------------ 500 Rum's compiled turn
@needs_kernels
@pytest.mark.parametrize(
    ("players", "options"),
    [
        (2, {}),
        (3, {"top_discard_free": True}),
        (4, {"stock_exhaustion": "end_after_last_stock_turn"}),
        (6, {}),
    ],
)
def test_rummy500_kernel_plays_every_legal_move_as_the_python_code(players, options):
    """At every decision of random games, two legal moves picked at random played by the
    compiled game and by the Python code on copies of the state: the same states after it in
    every field, and the same masks and observations before it. The kernel plays each one
    itself (``apply`` answers True): draws, digs, melds, lay-offs, discards and passes all occur
    (the test counts them)."""
    from state_helpers import rummy500_state

    from rummyzoo.envs.match import Match
    from rummyzoo.envs.native import PURE
    from rummyzoo.envs.registry import make_game

    fast = Match(make_game("rummy500", players, kernels=kernels, **options))
    slow = Match(make_game("rummy500", players, kernels=PURE, **options))
    compiled, python = fast.game, slow.game
    rng = np.random.default_rng(players)
    seen = {"went out": 0, "stock exhausted": 0, "pass": 0}
    for game_number in range(6):
        fast.reset(seed=game_number)
        slow.reset(seed=game_number)
        while not fast.over:
            a, b = fast.state, slow.state
            assert rummy500_state(a) == rummy500_state(b)
            for seat in range(players):
                obs = compiled.observe(a, seat, fast.seat_totals)
                assert np.array_equal(obs, python.observe(b, seat, slow.seat_totals))
            mask = fast.legal_mask()
            assert np.array_equal(mask, slow.legal_mask())
            legal = np.flatnonzero(mask)
            for action in rng.choice(legal, size=min(2, legal.size), replace=False).tolist():
                x, y = copy.deepcopy(a), copy.deepcopy(b)
                assert compiled._kernel.apply(x, action) is True, python.action_names[action]
                kind = python.action_names[action].split()[0]
                seen[kind] = seen.get(kind, 0) + 1
                python.apply(y, action, None)
                assert rummy500_state(x) == rummy500_state(y), python.action_names[action]
                if y.over:
                    seen[y.end_reason] += 1
            action = int(rng.choice(np.flatnonzero(mask)))
            fast.play(action)
            slow.play(action)
            if fast.hand_index:
                break  # one hand a game
    assert all(seen.get(kind) for kind in ("draw", "dig", "meld", "lay", "discard")), seen
    assert seen["went out"] + seen["stock exhausted"] + seen["pass"] > 0, seen


@needs_kernels
def test_rummy500_kernel_rejects_bad_input():
    """Clear errors, nothing written: wrong arguments, another game's state, card masks that are
    not 52-bit ints, a bad deck or dealer, a kernel never initialised, a bad layout."""
    from state_helpers import rummy500_state

    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    game = make_game("rummy500", 2, kernels=kernels)
    match = Match(game)
    match.reset(seed=3)
    kernel, state = game._kernel, match.state
    before = rummy500_state(state)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        kernel.apply(state)
    wide = Match(make_game("rummy500", 3, kernels=kernels))
    wide.reset(seed=1)
    with pytest.raises((TypeError, ValueError), match=r"buf|words is an array\('Q'\) of 10"):
        kernel.mask(wide.state)
    from rummyzoo.envs.rummy500.rules import _FITS, _HANDS

    # a lay-off target, a seat's hand, a seat's table points
    for at, bad, error in [
        (_FITS + 1, 1 << 60, "card mask has 52 bits"),
        (_HANDS, 1 << 52, "card mask has 52 bits"),
        (_HANDS + 3, 1 << 31, "table score must be below 2\\*\\*31"),
    ]:
        held = state.words[at]
        state.words[at] = bad
        with pytest.raises(ValueError, match=error):
            kernel.apply(state, 0)
        state.words[at] = held
    for name, bad, error in [
        ("words", list(state.words), r"words is an array\('Q'\)"),
        ("words", array("q", state.words), r"words is an array\('Q'\) of 10"),
        ("words", state.words[:-1], r"words is an array\('Q'\) of 10"),
        ("cells", bytes(state.cells), "cells is a bytearray"),
        ("cells", state.cells[:-52], "cells must have 728 bytes"),
    ]:
        held = getattr(state, name)
        setattr(state, name, bad)
        with pytest.raises((TypeError, ValueError), match=error):
            kernel.mask(state)
        setattr(state, name, held)
    assert rummy500_state(state) == before
    deck = np.arange(52)
    for dealer, cards, error in [
        (2, deck, r"dealer must be in 0\.\.1, got 2"),
        (0, deck[:51], "52 card ids"),
        (0, np.r_[deck[:51], -1], "52 card ids"),
    ]:
        with pytest.raises(ValueError, match=error):
            kernel.deal(dealer, cards)
    dealt = kernel.deal(1, deck)
    assert dealt.current == 0 and dealt.hand_cards(0) == list(range(0, 20, 2))
    blank = kernels.Rummy500Kernel.__new__(kernels.Rummy500Kernel)
    for call in (lambda: blank.mask(state), lambda: blank.deal(0, deck)):
        with pytest.raises(RuntimeError, match="not initialised"):
            call()
    layout = game._native_layout()
    with pytest.raises(KeyError, match="missing players"):
        kernels.Rummy500Kernel({})
    with pytest.raises(ValueError, match="melds lists the meld table"):
        kernels.Rummy500Kernel({**layout, "melds": layout["melds"][:-1]})
    with pytest.raises(ValueError, match="gather indexes the buffer"):
        kernels.Rummy500Kernel(
            {
                **layout,
                "gather": [g + layout["buf_size"] + layout["cells_size"] for g in layout["gather"]],
            }
        )
    with pytest.raises(ValueError, match="leave no stock"):
        kernels.Rummy500Kernel({**layout, "hand_size": 26})
    zeros = layout["zero_words"]
    for key, bad, error in [
        ("zero_words", memoryview(zeros), r"zero_words is an array\('Q'\) of 10 zeros"),
        ("zero_words", zeros + array("Q", [0]), r"zero_words is an array\('Q'\) of 10 zeros"),
        ("words_layout", (0, 1, 2, 5, 7), "words_layout is"),
    ]:
        with pytest.raises(ValueError, match=error):
            kernels.Rummy500Kernel({**layout, key: bad})
    kept = kernels.Rummy500Kernel(layout)
    zeros.append(0)  # the kernel keeps its own copy of the template
    assert kept.deal(1, deck).words.tolist()[_HANDS + 2 :] == [0, 0]
    zeros.pop()


@needs_kernels
def test_rummy500_kernel_refuses_a_count_past_the_decks():
    """A plane of counts already at the decks' copies of a card (a state no game reaches) is a
    clear error where a byte would wrap round: a meld whose card the seat has laid already."""
    from rummyzoo.envs.cards import parse_cards
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    game = make_game("rummy500", 2, kernels=kernels)
    match = Match(game)
    rng = np.random.default_rng(5)
    for seed in range(50):
        match.reset(seed=seed)
        while not match.over:
            legal = np.flatnonzero(match.legal_mask())
            melds = [a for a in legal.tolist() if game.action_names[a].startswith("meld")]
            if melds:
                break
            match.play(int(rng.choice(legal)))
        if melds:
            break
    state, action = copy.deepcopy(match.state), melds[0]
    card = parse_cards(game.action_names[action].split()[1:])[0]
    assert game._kernel.apply(copy.deepcopy(state), action)  # played on an untouched copy
    game.planes(state)[game.num_players + state.current, card] = 1  # laid already: 1 deck
    with pytest.raises(ValueError, match="not a 500 Rum state"):
        game._kernel.apply(state, action)


@needs_kernels
def test_kernels_refuse_states_that_would_crash_them():
    """Each of these crashed the interpreter, wrote past an array or read another game's state:
    a 500 Rum discard pile longer than the decks, numbers that run Python code when read (here
    one that empties the hands being read), a Ditch Rummy meld whose suit is out of range, a
    batch whose list of matches grows while it is played, totals in another byte order, and
    totals refused once and then taken as read. Now each is a clear error."""
    from rummyzoo.envs.ditch_rummy.rules import RUN, TableMeld
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    r5 = make_game("rummy500", 2, kernels=kernels)
    match = Match(r5)
    match.reset(seed=3)
    state = match.state
    state.pile = [0] + [1] * 120
    with pytest.raises(ValueError, match="not a 500 Rum state"):
        r5._kernel.apply(state, 2)  # a dig into the too-long pile
    match.reset(seed=3)
    state = match.state
    for bad in ([0.0, 0.0], np.array([100.0, 50.0]).astype(">f8")):
        for _ in range(2):  # refused each time, not kept as the last totals
            with pytest.raises(TypeError, match="float64 vector"):
                r5._kernel.observe(state, 0, bad)

    fast, _ = _ditch_matches(2, {"single_extends_meld": True}, seed=2)
    game, state = fast.game, fast.state
    seat = state.current

    class Emptying(int):  # an int subclass: its value is read as it is
        pass

    class Index:
        def __index__(self):
            state.hands.clear()
            return 0

    state.hands[seat] = (Index(),)
    with pytest.raises(TypeError, match="numbers are ints"):
        game._kernel.mask(state)
    state.hands[seat] = (Emptying(48),)
    state.phase = type(state.phase)(1)  # the play step, the hand a king
    state.above[48] = 1
    state.melds.append(TableMeld(1 - seat, RUN, [11, 12], 10, 11, -(1 << 32) + 5))
    with pytest.raises(ValueError, match="not a Ditch Rummy state"):
        game._kernel.apply(state, game.action_index("single 0 above"))

    plain = Match(game)
    plain.reset(seed=1)
    matches = [plain, plain]
    games = np.array([0, 1], np.int64)

    class Growing(Match):
        __slots__ = ()

        @property
        def state(self):
            matches.extend([plain] * 3)
            games[1] = 3  # a game past the two rows of the arrays
            return Match.__dict__["state"].__get__(self)

        @state.setter
        def state(self, value):
            Match.__dict__["state"].__set__(self, value)

    grower = Growing(game)
    grower.reset(seed=1)
    matches[0] = grower
    arrays = (
        np.zeros((2, game.obs_size), np.float32),
        np.zeros((2, game.num_actions), np.int8),
        np.zeros(2, np.int64),
    )
    with pytest.raises(IndexError, match="game 3 out of range"):
        game._kernel.rows(matches, games, *arrays)


def _whole_row_draw(logits, masks, rng):
    """A sampled action per row, computed over whole rows (every action, the illegal ones at
    -inf): softmax in float64, running sums in action order, one uniform per row times the
    total, the first action whose running sum passes it; a NaN row (nothing passes) takes its
    first legal action."""
    full = logits.astype(np.float64)
    full[~masks] = -np.inf
    with np.errstate(invalid="ignore"):
        shifted = full - full.max(axis=1, keepdims=True)
        probs = np.where(masks, np.exp(np.where(masks, shifted, 0.0)), 0.0)
        cdf = np.cumsum(probs, axis=1)
        u = rng.random(len(cdf)) * cdf[:, -1]
        picks = np.minimum((cdf <= u[:, None]).sum(axis=1), masks.shape[1] - 1)
    bad = ~masks[np.arange(len(picks)), picks]
    picks[bad] = masks[bad].argmax(axis=1)
    return picks


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_kernels)])
def test_sampled_checkpoint_draws_are_those_over_whole_rows(compiled):
    """The sampled draw of checkpoints (``sample_legal``: the legal entries gathered, compiled
    where built) picks exactly the action the whole-row computation picks, and advances the
    generator alike, over random shapes, scales and masks, NaN and infinite logits included."""
    from rummyzoo.agents.checkpoints import sample_legal
    from rummyzoo.envs.native import PURE

    gen = np.random.default_rng(5)
    for trial in range(1500):
        n, width = int(gen.integers(1, 70)), int(gen.integers(1, 250))
        masks = gen.random((n, width)) < gen.choice([0.02, 0.1, 0.5, 1.0])
        masks[np.arange(n), gen.integers(0, width, n)] = True
        scale = gen.choice([1e-3, 1.0, 30.0, 1e3])
        logits = (gen.standard_normal((n, width)) * scale).astype(np.float32)
        if trial % 5 == 0:
            logits[gen.integers(0, n), gen.integers(0, width)] = gen.choice(
                [np.nan, np.inf, -np.inf]
            )
        want_rng, got_rng = np.random.default_rng(trial), np.random.default_rng(trial)
        want = _whole_row_draw(logits, masks, want_rng)
        with np.errstate(invalid="ignore"):
            got = sample_legal(logits, masks, got_rng, kernels=kernels if compiled else PURE)
        assert got.dtype == np.int64
        assert got.tolist() == want.tolist(), trial
        assert got_rng.bit_generator.state == want_rng.bit_generator.state


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_kernels)])
def test_sampled_draws_refuse_what_they_cannot_draw_and_take_any_generator(compiled):
    """``sample_legal`` refuses a row without a legal action (naming it) and logits of
    another shape than the masks, on either route; a legacy ``RandomState`` or unaligned
    logits take the numpy route, with the draws of the whole-row computation."""
    from rummyzoo.agents.checkpoints import sample_legal
    from rummyzoo.envs.native import PURE

    use = kernels if compiled else PURE
    gen = np.random.default_rng(3)
    logits = gen.standard_normal((4, 9)).astype(np.float32)
    masks = gen.random((4, 9)) < 0.4
    masks[:, 2] = True
    for row in (0, 2, 3):
        empty = masks.copy()
        empty[row] = False
        rng = np.random.default_rng(0)
        state = rng.bit_generator.state
        with pytest.raises(ValueError, match=f"row {row} has no legal entry"):
            sample_legal(logits, empty, rng, kernels=use)
        assert rng.bit_generator.state == state  # nothing drawn
    with pytest.raises(ValueError, match="one shape"):
        sample_legal(logits[:, :8], masks, np.random.default_rng(0), kernels=use)
    legacy = np.random.RandomState(4)
    got = sample_legal(logits, masks, legacy, kernels=use)
    assert got.tolist() == _whole_row_draw(logits, masks, np.random.RandomState(4)).tolist()
    raw = np.zeros(logits.nbytes + 1, np.uint8)[1:].view(np.float32)  # unaligned
    unaligned = np.ndarray(logits.shape, np.float32, buffer=raw.data)
    unaligned[...] = logits
    assert not unaligned.flags.aligned and unaligned.flags.c_contiguous
    got = sample_legal(unaligned, masks, np.random.default_rng(6), kernels=use)
    assert got.tolist() == _whole_row_draw(logits, masks, np.random.default_rng(6)).tolist()


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_kernels)])
def test_batched_draws_wait_for_the_generators_lock(compiled):
    """The batched random picks and the sampled checkpoint draws take the bit generator's lock,
    as numpy's own draws do: while another thread holds it, they wait."""
    import threading

    from rummyzoo.agents.checkpoints import sample_legal
    from rummyzoo.envs.native import PURE
    from rummyzoo.envs.vector import uniform_legal_actions

    use = kernels if compiled else PURE
    masks = np.ones((4, 5), np.int8)
    draws = {
        "picks": lambda rng: uniform_legal_actions(masks, rng, kernels=use),
        "sampled": lambda rng: sample_legal(
            np.zeros((4, 5), np.float32), masks.astype(bool), rng, kernels=use
        ),
    }
    for name, draw in draws.items():
        rng = np.random.default_rng(0)
        done = threading.Event()
        worker = threading.Thread(target=lambda d=draw, r=rng, e=done: (d(r), e.set()))
        with rng.bit_generator.lock:
            worker.start()
            assert not done.wait(0.2), name
        assert done.wait(10), name
        worker.join()


@needs_kernels
def test_legal_draw_kernels_refuse_bad_input():
    logits = np.zeros((3, 5), np.float32)
    masks = np.ones((3, 5), bool)
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="logits"):
        kernels.legal_shifted(logits.astype(np.float64), masks)
    with pytest.raises(TypeError, match="masks"):
        kernels.legal_shifted(logits, masks[:, :4].copy())
    empty = masks.copy()
    empty[1] = False
    with pytest.raises(ValueError, match="row 1 has no legal entry"):
        kernels.legal_shifted(logits, empty)
    weights = kernels.legal_shifted(logits, masks)
    assert weights.tolist() == [0.0] * 15
    out = np.full(3, -7, np.int64)
    state = rng.bit_generator.state
    with pytest.raises(TypeError, match="weights"):
        kernels.draw_legal(weights[:14].copy(), masks, rng.bit_generator.capsule, out)
    with pytest.raises(TypeError, match="out"):
        kernels.draw_legal(weights, masks, rng.bit_generator.capsule, out[:2].copy())
    with pytest.raises(ValueError, match="row 1 has no legal entry"):
        kernels.draw_legal(weights[:10].copy(), empty, rng.bit_generator.capsule, out)
    assert out.tolist() == [-7, -7, -7]  # nothing drawn or written
    assert rng.bit_generator.state == state
    kernels.draw_legal(np.exp(weights), masks, rng.bit_generator.capsule, out)  # weights 1
    assert out.tolist() == [int(u * 5) for u in np.random.default_rng(0).random(3)]


@pytest.mark.parametrize("variant", ["knock_rummy", "ditch_rummy", "rummy500"])
def test_observe_refuses_the_same_seats_and_totals_compiled_or_not(variant):
    """A game's ``observe`` takes a seat of the game and the totals as a float64 vector of one
    value per seat, in Python as the compiled kernels do (the Python one read seat -1 as the
    last seat, and totals of any dtype or a wrong length in Ditch Rummy)."""
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.native import PURE, compiled_kernels
    from rummyzoo.envs.registry import make_game

    kinds = [PURE] + ([None] if compiled_kernels() is not None else [])
    for kernels in kinds:
        game = make_game(variant, 3, kernels=kernels, target_score=100)
        match = Match(game)
        match.reset(seed=1)
        good = match.seat_totals
        assert game.observe(match.state, np.int64(1), good).shape == (game.obs_size,)
        for seat in (3, -1):
            with pytest.raises(ValueError, match=rf"seat must be in 0\.\.2, got {seat}"):
                game.observe(match.state, seat, good)
        for totals in (
            [10.0, 20.0, 30.0],
            np.array([10, 20, 30], np.float32),
            np.array([10, 20, 30]),
            np.array([10, 0, 20, 0, 30, 0.0])[::2],
            np.array([10, 20.0]),
        ):
            with pytest.raises(TypeError, match="float64 vector, one per seat"):
                game.observe(match.state, 0, totals)
