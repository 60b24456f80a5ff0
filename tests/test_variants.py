"""Every variant of ``envs.registry.VARIANTS`` through one set of checks: the PettingZoo API and
seed tests, the same seed giving the same game, observations blind to hidden cards, cards
conserved, masks live, zero-sum scoring where the rules are zero-sum, scripted deals, and games
built with the compiled kernels against games built with ``kernels=PURE``.

Each variant brings its player counts and options (``API_CASES``, ``SEED_CASES``, ``SETUPS``), a
random policy that favours the actions that make its games long (``PLAY``), and its own ways to
move hidden cards (``hidden_info``). Checks that only one variant has stay in its own files.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hidden_info import SWAP_HIDDEN, SWAP_OWN, hidden_swap_check
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test
from state_helpers import ditch_state, rummy500_state

from rummyzoo.envs.aec import RummyEnv
from rummyzoo.envs.cards import CARD_NAMES, parse_cards
from rummyzoo.envs.core import ConfigError
from rummyzoo.envs.decks import deck_for
from rummyzoo.envs.knock_rummy.rules import KNOCK_BASE
from rummyzoo.envs.native import PURE, compiled_kernels, load_kernels
from rummyzoo.envs.registry import VARIANTS, make_env, make_game
from rummyzoo.envs.rummy500.tables import DISCARD_BASE, MELD_BASE

# ------------------------------------------------------------------ what each variant brings
#: (variant, players, options, wrapped env, cycles) for ``api_test``.
API_CASES = [
    *[("knock_rummy", n, {}, True, 300) for n in (2, 3, 4, 5, 6)],
    ("knock_rummy", 3, {"target_score": 50}, True, 500),
    ("knock_rummy", 2, {}, False, 200),
    *[("ditch_rummy", n, {}, True, 400) for n in (2, 3, 4)],
    ("ditch_rummy", 4, {"teams": True}, True, 400),
    ("ditch_rummy", 3, {"target_score": None}, False, 300),
    ("ditch_rummy", 3, {"single_extends_meld": True, "runs_same_suit": True}, False, 300),
    ("ditch_rummy", 3, {"draw_rule": "up_to_3", "max_hand": 5, "hand_penalty": "none"}, False, 300),
    *[("rummy500", n, {}, True, 300) for n in (2, 3, 4, 5, 8)],
    (
        "rummy500",
        3,
        {
            "target_score": None,
            "top_discard_free": True,
            "stock_exhaustion": "end_after_last_stock_turn",
        },
        True,
        300,
    ),
    ("rummy500", 6, {}, False, 200),
]
#: (variant, players, options, cycles) for ``seed_test`` (the wrapped env).
SEED_CASES = [
    *[("knock_rummy", n, {}, 300) for n in (2, 3, 4, 5, 6)],
    *[("ditch_rummy", n, {}, 400) for n in (2, 3, 4)],
    ("ditch_rummy", 4, {"teams": True}, 400),
    *[("rummy500", n, {}, 300) for n in (2, 3, 4, 5, 8)],
]

_DITCH_SEATS = st.sampled_from([(2, False), (3, False), (4, False), (4, True)])
#: Per variant, a strategy of (players, rules options) for the property tests.
SETUPS = {
    "knock_rummy": st.tuples(
        st.integers(2, 6),
        st.fixed_dictionaries(
            {
                "stock_exhaustion": st.sampled_from(["void", "reshuffle", "showdown"]),
                "allow_discard_of_taken": st.booleans(),
                "undercut_penalty_to": st.sampled_from(["all_lower", "winners_only"]),
                "knock_max_deadwood": st.sampled_from([None, 10, 25]),
                "void_threshold": st.sampled_from([0, 2]),
            }
        ),
    ),
    "ditch_rummy": st.tuples(
        _DITCH_SEATS,
        st.fixed_dictionaries(
            {
                "draw_rule": st.sampled_from(["fill_to_3", "up_to_3"]),
                "runs_same_suit": st.booleans(),
                "single_extends_meld": st.booleans(),
                "hand_penalty": st.sampled_from(["per_card", "none"]),
            }
        ),
    ).map(lambda t: (t[0][0], {"teams": t[0][1], **t[1]})),
    "rummy500": st.tuples(
        st.integers(2, 8),
        st.fixed_dictionaries(
            {
                "top_discard_free": st.booleans(),
                "stock_exhaustion": st.sampled_from(["discard_only", "end_after_last_stock_turn"]),
            }
        ),
    ),
}


def _quiet_knock(game, legal):
    return legal[legal < KNOCK_BASE]  # knock rarely, so games reach the stock's end


def _busy_ditch(game, legal):
    return legal[(legal >= 1) & (legal < game.ditch_base)]  # draw and play, so hands run long


def _plays_500(game, legal):
    return legal[(legal >= MELD_BASE) & (legal < DISCARD_BASE)]  # melds and lay-offs: long runs


#: Per variant: the turn cap of the random games, the actions the random policy favours and how
#: often, and the match targets of the conservation and same-seed games (None = one hand).
PLAY = {
    "knock_rummy": {"max_turns": 120, "prefer": _quiet_knock, "odds": 0.9, "max_iter": 5000},
    "ditch_rummy": {"max_turns": 150, "prefer": _busy_ditch, "odds": 0.7, "max_iter": 20_000},
    "rummy500": {"max_turns": 300, "prefer": _plays_500, "odds": 0.5, "max_iter": 20_000},
}
CONSERVED_TARGET = {"knock_rummy": None, "ditch_rummy": 150, "rummy500": None}
SAME_SEED_TARGET = {"knock_rummy": 40, "ditch_rummy": 100, "rummy500": 100}
#: Variants whose hand points always sum to zero (Knock Rummy's transfers, exact shares).
ZERO_SUM = ["knock_rummy"]
#: Hypothesis examples per property and variant.
EXAMPLES = {
    "conserved": {"knock_rummy": 40, "ditch_rummy": 30, "rummy500": 60},
    "same_seed": {"knock_rummy": 25, "ditch_rummy": 25, "rummy500": 20},
    "hidden": {"knock_rummy": 30, "ditch_rummy": 25, "rummy500": 40},
    "zero_sum": {"knock_rummy": 40},
    "kernels": {"knock_rummy": 30, "ditch_rummy": 10, "rummy500": 10},
}
#: Per variant, a state's whole record (to compare two games move by move).
STATE = {
    "knock_rummy": lambda s: (
        s.bits,
        list(s.stock),
        s.stock_pos,
        s.planes.tobytes(),
        list(s.discard),
        (s.current, s.phase, type(s.phase), s.turn, s.taken, s.knocker, s.over, s.void),
    ),
    "ditch_rummy": ditch_state,
    "rummy500": rummy500_state,
}
#: Per variant, what a hand dealt: (hands, the turned-up card(s), the stock from the top).
DEALT = {
    "knock_rummy": lambda s, n: ([s.hand_cards(i) for i in range(n)], s.discard, s.stock_cards()),
    "ditch_rummy": lambda s, n: ([s.hand_cards(i) for i in range(n)], [], s.pile_cards()),
    "rummy500": lambda s, n: ([s.hand_cards(i) for i in range(n)], s.pile, s.stock_cards()),
}


def test_every_variant_brings_its_cases():
    for table in (
        {c[0] for c in API_CASES},
        {c[0] for c in SEED_CASES},
        set(SETUPS),
        set(PLAY),
        set(STATE),
        set(DEALT),
        set(SWAP_HIDDEN),
        set(SWAP_OWN),
    ):
        assert table == set(VARIANTS)
    for name, counts in EXAMPLES.items():
        assert set(counts) == (set(ZERO_SUM) if name == "zero_sum" else set(VARIANTS)), name


def _case_id(case) -> str:
    variant, players, options, *rest = case
    parts = [variant, f"{players}p", *(f"{k}={v}" for k, v in options.items())]
    if len(rest) == 2 and not rest[0]:
        parts.append("raw")
    return "-".join(parts)


def random_game(variant, players, seed, options, policy_seed, check=None, target=None, after=None):
    """Play one seeded game on the raw env with a random policy that favours the variant's long
    games (``PLAY``); ``check(env, obs)`` runs before every decision, ``after(env, action)``
    after every step. Returns the env and the trace (agent, action, observation, mask)."""
    play = PLAY[variant]
    options = {"target_score": target, "max_turns": play["max_turns"], **options}
    env = make_env(variant, players, wrapped=False, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    trace = []
    for agent in env.agent_iter(max_iter=play["max_iter"]):
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if check is not None:
            check(env, obs)
            obs = env.observe(agent)  # the check may have moved hidden cards
        legal = np.flatnonzero(obs["action_mask"])
        favoured = play["prefer"](env.game, legal)
        pool = favoured if favoured.size and rng.random() < play["odds"] else legal
        action = int(pool[rng.integers(pool.size)])
        trace.append((agent, action, obs["observation"].copy(), obs["action_mask"].copy()))
        env.step(action)
        if after is not None:
            after(env, action)
    return env, trace


def for_examples(prop: str, variant: str, body) -> None:
    """Run ``body(players, options, seed)`` on the variant's hypothesis examples for ``prop``."""

    @settings(max_examples=EXAMPLES[prop][variant], deadline=None)
    @given(SETUPS[variant], st.integers(0, 2**31))
    def run(setup, seed):
        players, options = setup
        body(players, options, seed)

    run()


# ------------------------------------------------------------------ PettingZoo API
@pytest.mark.parametrize("case", API_CASES, ids=_case_id)
def test_api(case):
    variant, players, options, wrapped, cycles = case
    api_test(make_env(variant, players, wrapped=wrapped, **options), num_cycles=cycles)


@pytest.mark.parametrize("case", SEED_CASES, ids=_case_id)
def test_seed(case):
    variant, players, options, cycles = case
    seed_test(lambda: make_env(variant, players, **options), num_cycles=cycles)


# ------------------------------------------------------------------ properties of random games
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_cards_conserved_and_mask_live(variant):
    """Every card is in exactly ``num_decks`` places at every decision; the seat to act has a
    legal action and the others none."""

    def body(players, options, seed):
        def check(env, obs):
            assert (env.game.card_locations(env.hand_state) == env.game.num_decks).all()
            assert obs["action_mask"].sum() > 0
            for other in env.agents:
                if other != env.agent_selection:
                    assert not env.observe(other)["action_mask"].any()

        target = CONSERVED_TARGET[variant]
        env, trace = random_game(variant, players, seed, options, seed + 1, check, target)
        assert trace and (env.game.card_locations(env.hand_state) == env.game.num_decks).all()

    for_examples("conserved", variant, body)


@pytest.mark.parametrize("variant", ZERO_SUM)
def test_points_sum_to_zero(variant):
    """Uniform random play to the end of the hand: the rewards of all seats sum to zero."""

    def body(players, options, seed):
        env = make_env(variant, players, wrapped=False, **options)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        total = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter(max_iter=5000):
            obs, reward, term, trunc, _ = env.last()
            total[agent] += reward
            legal = np.flatnonzero(obs["action_mask"])
            env.step(None if term or trunc else int(rng.choice(legal)))
        assert abs(sum(total.values())) < 1e-9

    for_examples("zero_sum", variant, body)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_same_seed_same_game(variant):
    """A seed fixes a whole match: the same policy sees the same observations and masks."""

    def body(players, options, seed):
        target = SAME_SEED_TARGET[variant]
        env1, first = random_game(variant, players, seed, options, 7, target=target)
        env2, second = random_game(variant, players, seed, options, 7, target=target)
        assert len(first) == len(second)
        for (a1, x1, o1, m1), (a2, x2, o2, m2) in zip(first, second, strict=True):
            assert a1 == a2 and x1 == x2
            assert np.array_equal(o1, o2) and np.array_equal(m1, m2)
        assert env1.match_totals == env2.match_totals

    for_examples("same_seed", variant, body)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_observation_ignores_hidden_cards(variant):
    """Cards a viewer cannot see are moved before decisions; its observation (and its mask when
    it acts) stays the same and the cards stay conserved."""

    def body(players, options, seed):
        rng = np.random.default_rng(seed)
        check, swaps = hidden_swap_check(players, rng, SWAP_HIDDEN[variant])
        random_game(variant, players, seed, options, seed, check)
        assert swaps[0] > 0

    for_examples("hidden", variant, body)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_observation_changes_with_own_cards(variant):
    """The invariance test above can fail: swapping a card of the viewer's own is visible."""
    env = make_env(variant, 2, wrapped=False)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(50):  # until player_0 holds a card (a Ditch Rummy hand starts empty)
        before = env.observe("player_0")["observation"].copy()
        if SWAP_OWN[variant](env.hand_state, 0, rng):
            break
        env.step(int(rng.choice(env.legal_actions())))
    else:
        pytest.fail("player_0 never held a card")
    assert not np.array_equal(before, env.observe("player_0")["observation"])


# ------------------------------------------------------------------ the kernels seam
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_make_game_passes_the_kernels_on(variant):
    assert make_game(variant, 2, kernels=PURE).kernels is None
    assert make_game(variant, 2, kernels=False).kernels is None
    assert make_game(variant, 2).kernels is compiled_kernels()
    kernels = load_kernels()
    if kernels is not None:
        assert make_game(variant, 2, kernels=kernels).kernels is kernels
    with pytest.raises(TypeError, match="kernels must be"):
        make_game(variant, 2, kernels="fast")
    with pytest.raises(ConfigError, match="target_score"):
        make_game(variant, 2, kernels=PURE, target_score=0)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pure"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_observe_reads_totals_changed_in_place(variant, compiled):
    """A game's observation keeps the match totals it last wrote and skips writing them again
    for the same read-only array (a match's totals: a new one whenever they change); a
    writeable array changed in place since is read again, and a match's totals refuse a
    write."""
    kernels = load_kernels() if compiled else PURE
    if compiled and kernels is None:
        pytest.skip("the compiled kernels are not built here")
    env = RummyEnv(make_game(variant, 2, kernels=kernels, target_score=500))
    env.reset(seed=3)
    game, match = env.game, env.match
    totals = np.zeros(2)
    before = game.observe(match.state, 0, totals).copy()
    totals[0] = 250.0
    after = game.observe(match.state, 0, totals)
    assert not np.array_equal(before, after)  # the scores' cells moved
    assert np.array_equal(after, game.observe(match.state, 0, np.array([250.0, 0.0])))
    totals[0] = 0.0
    assert np.array_equal(before, game.observe(match.state, 0, totals))
    rng = np.random.default_rng(3)
    while match.hand_index == 0:  # the first hand's end makes the match's totals
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    assert not match.seat_totals.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        match.seat_totals[0] = 1.0
    seat = int(env.agent_selection.split("_")[1])
    fresh = np.array(match.seat_totals)  # writeable, the same values
    assert np.array_equal(
        env.observe(env.agent_selection)["observation"], game.observe(match.state, seat, fresh)
    )


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_pure_and_compiled_games_agree(variant):
    """A game built with the compiled kernels and one built with ``kernels=PURE``, side by side:
    the same state, observations, masks and infos for every agent at every decision, and the
    same rewards (what installs without the kernels run)."""
    kernels = load_kernels()
    if kernels is None:
        if os.environ.get("RUMMYZOO_REQUIRE_COMPILED", "") not in ("", "0"):
            pytest.fail("the compiled kernels were not built (envs/_native.c)")
        pytest.skip("the compiled kernels are not built here")

    def body(players, options, seed):
        options = {"target_score": 60, "max_turns": 120, **options}
        env = RummyEnv(make_game(variant, players, kernels=kernels, **options))
        plain = RummyEnv(make_game(variant, players, kernels=PURE, **options))
        assert env.game.kernels is kernels and plain.game.kernels is None
        env.reset(seed=seed)
        plain.reset(seed=seed)
        rng = np.random.default_rng(seed)
        state = STATE[variant]
        for agent in env.agent_iter(max_iter=3000):
            for viewer in env.agents:
                a, b = env.observe(viewer), plain.observe(viewer)
                assert a["observation"].dtype == b["observation"].dtype == np.float32
                assert a["action_mask"].dtype == b["action_mask"].dtype == np.int8
                assert np.array_equal(a["observation"], b["observation"]), viewer
                assert np.array_equal(a["action_mask"], b["action_mask"]), viewer
            assert state(env.hand_state) == state(plain.hand_state)
            assert env.infos == plain.infos
            if env.terminations[agent] or env.truncations[agent]:
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))
            env.step(action)
            plain.step(action)
        assert env.rewards == plain.rewards

    for_examples("kernels", variant, body)


# ------------------------------------------------------------------ scripted deals
DEAL_CASES = [
    ("knock_rummy", 2, None),
    ("knock_rummy", 4, 1),
    ("knock_rummy", 6, 0),
    ("ditch_rummy", 2, None),
    ("ditch_rummy", 4, 1),
    ("rummy500", 2, None),
    ("rummy500", 3, 2),
    ("rummy500", 5, None),
    ("rummy500", 8, 3),
]


@pytest.mark.parametrize(("variant", "players", "dealer"), DEAL_CASES)
def test_deck_for_deals_what_it_names(variant, players, dealer):
    """``deck_for`` follows each variant's deal: the named hands, upcard and top of the stock
    (of the draw pile for Ditch Rummy, which deals nothing) are where it says."""
    env = make_env(variant, players, wrapped=False, first_dealer=dealer)
    game = env.game
    size = getattr(game.rules, "hand_size", 0)
    rng = np.random.default_rng(players)
    pool = [CARD_NAMES[c] for c in rng.permutation(52 * game.num_decks) % 52]
    if game.num_decks == 2:  # seat 0 holds both copies of a card
        twin = pool.index(pool[0], 1)
        pool[1], pool[twin] = pool[twin], pool[1]
    hands = [" ".join(pool[i * size : (i + 1) * size]) for i in range(players if size else 0)]
    up = pool[players * size] if size else None
    stock = pool[players * size + 1 : players * size + 6]
    env.reset(seed=0, options={"deck": deck_for(hands, up, stock, game.num_decks, dealer)})
    dealt, turned, top = DEALT[variant](env.hand_state, players)
    for seat in range(players):
        expected = sorted(parse_cards(hands[seat])) if hands else []
        assert sorted(dealt[seat]) == expected, seat
    assert list(turned) == ([] if up is None else parse_cards(up))
    assert list(top[:5]) == parse_cards(stock)
    first = players - 1 if dealer is None else dealer
    assert env.agent_selection == f"player_{(first + 1) % players}"


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_docs_example_of_each_env_runs_a_game_to_its_end(variant):
    """The first code block of each env module's documentation, run as a user would copy it:
    it plays until every agent is done."""
    import importlib
    import textwrap

    module = importlib.import_module(VARIANTS[variant][0])
    lines = module.__doc__.split(".. code-block:: python")[1].split("\n")[1:]
    block = []
    for line in lines:  # the block is the indented lines that follow (blank lines inside it)
        if line.strip() and not line.startswith(" "):
            break
        block.append(line)
    code = textwrap.dedent("\n".join(block))
    assert "env.step" in code, code
    namespace: dict = {}
    exec(code, namespace)
    env = namespace["env"]
    assert env.agents == [] and env.unwrapped.hand_state.over
