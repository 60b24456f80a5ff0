"""The vector engine: the same games as the AEC env, auto-reset, seeding, bad actions."""

from __future__ import annotations

import os

import numpy as np
import pytest
from state_helpers import ditch_state, rummy500_state

from rummyzoo.envs import ConfigError, IllegalActionError, knock_rummy_v0
from rummyzoo.envs.knock_rummy.rules import KNOCK_BASE
from rummyzoo.envs.native import PURE, compiled_kernels, load_kernels
from rummyzoo.envs.registry import make_env, make_vector
from rummyzoo.envs.vector import VectorEnv, uniform_legal_actions

CASES = [
    ("knock_rummy", 2, {}),
    ("knock_rummy", 3, {"knock_max_deadwood": 10, "target_score": 60}),
    ("knock_rummy", 2, {"stock_exhaustion": "reshuffle", "max_turns": 40, "reward": "win_loss"}),
    ("ditch_rummy", 2, {"target_score": None}),
    ("ditch_rummy", 4, {"teams": True, "target_score": 150, "reward": "scaled"}),
    ("rummy500", 2, {"target_score": 200}),
    ("rummy500", 3, {"target_score": None, "max_turns": 30}),
]


def _aec_rows(env):
    raw = env.unwrapped
    obs, _, term, trunc, _ = env.last()
    assert not (term or trunc)
    cum = np.array([raw._cumulative_rewards[a] for a in raw.possible_agents])
    infos = [raw.infos[a] for a in raw.possible_agents]
    return raw.agent_name_mapping[env.agent_selection], obs, cum, infos


@pytest.mark.parametrize(("variant", "players", "options"), CASES)
def test_same_games_as_the_aec_env(variant, players, options):
    """Same seeds, same actions: identical observations, masks, rewards and infos at every
    step, through match ends (auto-reset against the AEC env's unseeded reset)."""
    n = 5
    vec = make_vector(variant, n, players, infos=True, **options)
    envs = [make_env(variant, players, **options) for _ in range(n)]
    vec.reset(seed=40)
    for i, env in enumerate(envs):
        env.reset(seed=40 + i)
    rng = np.random.default_rng(1)
    ended = hands = 0
    fresh = np.zeros(n, dtype=bool)  # a game whose match has just restarted
    for _step in range(300):
        for i, env in enumerate(envs):
            seat, obs, cum, infos = _aec_rows(env)
            assert vec.current[i] == seat
            np.testing.assert_array_equal(vec.observations[i], obs["observation"])
            np.testing.assert_array_equal(vec.action_masks[i], obs["action_mask"])
            if not fresh[i]:  # a restarted game still shows the finished match's rewards
                np.testing.assert_array_equal(vec.rewards[i], cum)
                assert vec.infos[i] == infos
        actions = uniform_legal_actions(vec.action_masks, rng)
        vec.step(actions)
        hands += int(vec.hand_done.sum())
        fresh[:] = False
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            raw = env.unwrapped
            done = bool(vec.terminated[i] or vec.truncated[i])
            assert bool(vec.terminated[i]) == all(raw.terminations.values())
            assert bool(vec.truncated[i]) == all(raw.truncations.values())
            if done:
                ended += 1
                cum = np.array([raw._cumulative_rewards[a] for a in raw.possible_agents])
                np.testing.assert_array_equal(vec.rewards[i], cum)
                assert vec.infos[i] == [raw.infos[a] for a in raw.possible_agents]
                for s, agent in enumerate(raw.possible_agents):
                    np.testing.assert_array_equal(
                        vec.final_observation(i, s), raw.observe(agent)["observation"]
                    )
                env.reset()
                fresh[i] = True
    assert hands > 0
    if options.get("target_score", "x") is None or variant == "knock_rummy":
        assert ended > 0


def test_the_variant_modules_build_it():
    vec = knock_rummy_v0.vector(num_envs=3, num_players=4, knock_max_deadwood=10)
    assert isinstance(vec, VectorEnv)
    assert (vec.num_envs, vec.num_players) == (3, 4)
    assert vec.observations.shape == (3, vec.obs_size)
    assert vec.action_masks.shape == (3, vec.num_actions)
    assert vec.rewards.shape == (3, 4)
    assert "vector(" in knock_rummy_v0.__doc__


def test_auto_reset_starts_the_next_match_and_clears_its_rewards():
    vec = make_vector("knock_rummy", 4, 2)  # one hand per match: a match ends with each hand
    vec.reset(seed=3)
    rng = np.random.default_rng(0)
    while not vec.terminated.any():
        vec.step(uniform_legal_actions(vec.action_masks, rng))
    i = int(np.flatnonzero(vec.terminated)[0])
    assert vec.matches_done[i] == 1
    assert vec.rewards[i].sum() == 0 and np.abs(vec.rewards[i]).sum() > 0  # zero-sum points
    match = vec.matches[i]
    assert not match.over and match.decisions == 0  # the new match, at its first decision
    assert vec.current[i] == match.state.current
    np.testing.assert_array_equal(vec.observations[i], vec.observe(i, vec.current[i]))
    vec.step(uniform_legal_actions(vec.action_masks, rng))
    assert not vec.hand_done[i] or vec.rewards[i].any()
    if not vec.hand_done[i]:
        np.testing.assert_array_equal(vec.rewards[i], 0.0)


def test_game_i_is_the_game_of_seed_s_plus_i():
    vec = make_vector("ditch_rummy", 3, 2)
    single = make_vector("ditch_rummy", 1, 2)
    vec.reset(seed=100)
    single.reset(seed=102)
    rng = np.random.default_rng(5)
    for _ in range(60):
        np.testing.assert_array_equal(vec.observations[2], single.observations[0])
        actions = uniform_legal_actions(vec.action_masks, rng)
        vec.step(actions)
        single.step(actions[2:])
    # per-game seeds, and the same seed twice: the same games
    a = make_vector("rummy500", 2, 2)
    b = make_vector("rummy500", 2, 2)
    a.reset(seed=[7, 9])
    b.reset(seed=[7, 9])
    np.testing.assert_array_equal(a.observations, b.observations)
    c = make_vector("rummy500", 2, 2)
    c.reset(seed=7)
    np.testing.assert_array_equal(a.observations[0], c.observations[0])
    assert not np.array_equal(a.observations[1], c.observations[1])  # seed 9 vs seed 8


def _snapshot(vec):
    arrays = {k: v.copy() for k, v in vec.buffers.items()}
    seats = [[vec.observe(i, s) for s in range(vec.num_players)] for i in range(vec.num_envs)]
    return arrays, seats, [m.decisions for m in vec.matches]


def _assert_unchanged(vec, before):
    arrays, seats, decisions = before
    for name, value in vec.buffers.items():
        np.testing.assert_array_equal(value, arrays[name], err_msg=name)
    for i in range(vec.num_envs):
        for s in range(vec.num_players):
            np.testing.assert_array_equal(vec.observe(i, s), seats[i][s])
    assert [m.decisions for m in vec.matches] == decisions


@pytest.mark.parametrize(("variant", "players", "options"), [CASES[0], CASES[4], CASES[5]])
def test_the_documented_reward_reading_counts_each_reward_once(variant, players, options):
    """The module's recipe: a seat's entry at each of its decisions, every seat's on the step
    that ends the match (and not again at the restarted match's first decision) adds up to
    each match's rewards as the AEC env gives them step by step."""
    n = 3
    vec = make_vector(variant, n, players, **options)
    envs = [make_env(variant, players, **options) for _ in range(n)]
    vec.reset(seed=70)
    for i, env in enumerate(envs):
        env.reset(seed=70 + i)
    counted = np.zeros((n, players))
    truth = np.zeros((n, players))
    ended = 0
    just_ended = np.zeros(n, dtype=bool)
    rng = np.random.default_rng(3)
    for _step in range(400):
        for i in range(n):
            if not just_ended[i]:
                counted[i, vec.current[i]] += vec.rewards[i, vec.current[i]]
        actions = uniform_legal_actions(vec.action_masks, rng)
        vec.step(actions)
        just_ended = vec.terminated | vec.truncated
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            raw = env.unwrapped
            truth[i] += [raw.rewards[a] for a in raw.possible_agents]
            if just_ended[i]:
                counted[i] += vec.rewards[i]
                np.testing.assert_allclose(counted[i], truth[i], atol=1e-9)
                counted[i] = truth[i] = 0.0
                ended += 1
                env.reset()
    assert ended > 0


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pure"])
def test_an_illegal_action_names_its_game_and_changes_no_game(compiled):
    # an int64 array of one action per game is checked by the compiled kernels where built
    # (first_illegal), anything else and the pure-Python engine by numpy: the same errors
    vec = make_vector("knock_rummy", 4, 2, kernels=built_kernels() if compiled else PURE)
    assert (vec._first_illegal is not None) == compiled
    vec.reset(seed=8)
    rng = np.random.default_rng(2)
    for _ in range(3):
        vec.step(uniform_legal_actions(vec.action_masks, rng))
    before = _snapshot(vec)
    actions = uniform_legal_actions(vec.action_masks, rng)
    bad = int(np.flatnonzero(vec.action_masks[2] == 0)[0])
    actions[2] = bad
    with pytest.raises(IllegalActionError) as err:
        vec.step(actions)
    # the AEC env's message for the same state and action, with the game named first
    try:
        vec.matches[2].check(bad)
    except IllegalActionError as exc:
        expected = f"game 2: {exc}"
    assert str(err.value) == expected
    assert "legal actions:" in str(err.value)
    _assert_unchanged(vec, before)
    actions[2] = int(np.flatnonzero(vec.action_masks[2])[0])
    illegal_0 = int(np.flatnonzero(vec.action_masks[0] == 0)[0])
    for wrong, fragment in [
        (np.append(actions, 0), "one action per game"),
        (actions[:3], "one action per game"),
        (np.where(np.arange(4) == 1, 10_000, actions), "game 1: "),
        (np.where(np.arange(4) == 3, -1, actions), "game 3: "),
        (actions.astype(np.float64), "not an action id"),
        (np.array([*actions[:2].tolist(), True, actions[3]], dtype=object), "game 2: .*bool"),
        # a huge id makes numpy's array objects (or floats): the game whose id it is is named
        (
            [*actions[:3].tolist(), 2**70],
            r"game 3: .*action 1180591620717411303424 is out of range",
        ),
        (
            [*actions[:1].tolist(), 2**63, *actions[2:].tolist()],
            r"game 1: .*action 9223372036854775808 is out of range",
        ),
        ([*actions[:2].tolist(), True, *actions[3:].tolist()], r"game 2: .*True \(bool\)"),
        # a 0-d array of a bool among ints: numpy reads it as 0 or 1, the AEC env refuses it
        (
            [*actions[:1].tolist(), np.array(True), *actions[2:].tolist()],
            r"game 1: .*\(ndarray\) is not an action id",
        ),
        # a float among ints: numpy reads them all as floats, the message names the caller's
        ([*actions[:2].tolist(), 1.5, *actions[3:].tolist()], r"game 2: .*action 1\.5 \(float\)"),
        # a list among the actions (numpy cannot make an array of them): its game is named
        ([*actions[:1].tolist(), [0], *actions[2:].tolist()], r"game 1: .*\[0\] \(list\)"),
        # a ragged list among the actions (numpy fails on it even to count its dimensions)
        ([*actions[:1].tolist(), [1, [2]], *actions[2:].tolist()], r"game 1: .*\(list\) is not"),
        # numpy counts timedelta64 among its integers: no action ids, as in the AEC env
        (actions.astype("m8[s]"), r"game 0: .*\(timedelta64\) is not an action id"),
        ([*actions[:3].tolist(), np.timedelta64(1, "s")], r"game 3: .*\(timedelta64\)"),
        # the first game whose action is not legal is named, whatever is wrong in a later one
        ([illegal_0, *actions[1:3].tolist(), None], r"game 0: illegal action"),
        ([illegal_0, *actions[1:3].tolist(), 1.5], r"game 0: illegal action"),
        ([illegal_0, *actions[1:3].tolist(), [0]], r"game 0: illegal action"),
        (np.array([illegal_0, *actions[1:3].tolist(), "x"], dtype=object), r"game 0: illegal"),
        # an int with more digits than Python writes as a str: refused as out of range (its
        # repr raised a ValueError, past the refusal that names the game)
        ([*actions[:1].tolist(), 10**5000, *actions[2:].tolist()], r"game 1: .*more than"),
        ([*actions[:2].tolist(), -(10**5000), *actions[3:].tolist()], r"game 2: .*out of range"),
        # an unsigned id past int64's range is named as given (not as -1)
        (
            np.where(np.arange(4) == 3, np.iinfo(np.uint64).max, actions).astype(np.uint64),
            r"game 3: .*action 18446744073709551615 is out of range",
        ),
    ]:
        with pytest.raises(IllegalActionError, match=fragment):
            vec.step(wrong)
        _assert_unchanged(vec, before)
    for games, fragment in [([0, 0], "once per call"), ([4], "0..3"), ([[0]], "1-d")]:
        with pytest.raises(ValueError, match=fragment):
            vec.step(np.zeros(np.asarray(games).shape[0], dtype=np.int64), games=games)
        _assert_unchanged(vec, before)
    # legal ids of mixed integer types, which numpy turns into floats, are legal ids
    import copy

    clone = copy.deepcopy(vec)
    mixed = [np.uint64(a) if i % 2 else np.int8(a) for i, a in enumerate(actions.tolist())]
    clone.step(mixed)
    assert [m.decisions for m in clone.matches] != list(before[2])
    # so is a 0-d integer array among ints (the AEC env plays it as its id too)
    zero_d = copy.deepcopy(vec)
    zero_d.step([*actions[:1].tolist(), np.array(actions[1]), *actions[2:].tolist()])
    for name, value in zero_d.buffers.items():
        np.testing.assert_array_equal(clone.buffers[name], value, err_msg=name)
    # and the legal step still plays as if nothing had happened
    vec.step(actions)
    for name, value in vec.buffers.items():
        np.testing.assert_array_equal(clone.buffers[name], value, err_msg=name)
    for i, match in enumerate(vec.matches):
        restarted = vec.terminated[i] or vec.truncated[i]
        assert match.decisions == (0 if restarted else before[2][i] + 1)


def test_the_arrays_are_read_only_so_no_edit_lets_an_illegal_action_through():
    vec = make_vector("knock_rummy", 2, 2)
    vec.reset(seed=0)
    before = _snapshot(vec)
    illegal = int(np.flatnonzero(vec.action_masks[0] == 0)[0])
    for name, array in [*vec.buffers.items(), ("matches_done", vec.matches_done)]:
        assert getattr(vec, name) is array or name == "matches_done"
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        vec.action_masks[0, illegal] = 1  # an agent masking in place on the engine's array
    actions = uniform_legal_actions(vec.action_masks, np.random.default_rng(0))
    actions[0] = illegal
    with pytest.raises(IllegalActionError, match="game 0: "):
        vec.step(actions)
    _assert_unchanged(vec, before)
    # nor can the arrays be set writeable again (a plain view's flag can be, its base writeable)
    for array in vec.buffers.values():
        with pytest.raises(ValueError, match="WRITEABLE"):
            array.flags.writeable = True
    # and the engine judges actions by its own masks, not by whatever the attribute now holds
    vec.action_masks = np.ones_like(vec.action_masks)
    for games in (None, [0]):
        with pytest.raises(IllegalActionError, match="game 0: "):
            vec.step(actions if games is None else actions[:1], games=games)
        with pytest.raises(IllegalActionError, match="game 0: "):
            vec.step(actions.tolist() if games is None else [illegal], games=games)
    _assert_unchanged(vec, before)


def test_stepping_some_games_leaves_the_others_alone():
    vec = make_vector("ditch_rummy", 4, 3)
    vec.reset(seed=1)
    rng = np.random.default_rng(4)
    before = {k: v.copy() for k, v in vec.buffers.items()}
    games = np.array([1, 3])
    actions = uniform_legal_actions(vec.action_masks[games], rng)
    vec.step(actions, games=games)
    for name in ("observations", "action_masks", "current", "rewards"):
        np.testing.assert_array_equal(vec.buffers[name][[0, 2]], before[name][[0, 2]])
    assert [m.decisions for m in vec.matches] == [0, 1, 0, 1]
    vec.step(np.zeros(0, dtype=np.int64), games=np.zeros(0, dtype=np.int64))  # nothing to do


def test_bad_settings_are_refused_clearly():
    with pytest.raises(ConfigError, match="knock_max_deadwod"):
        make_vector("knock_rummy", 2, 2, knock_max_deadwod=10)
    with pytest.raises(ConfigError, match="target_score"):
        make_vector("ditch_rummy", 2, 2, target_score=0)
    with pytest.raises(ConfigError, match="num_envs"):
        make_vector("knock_rummy", 0, 2)
    with pytest.raises(ConfigError, match="num_envs"):
        make_vector("knock_rummy", True, 2)
    # so many games that no machine's memory holds them: refused before any is built (it
    # grew until the machine ran out)
    with pytest.raises(ConfigError, match=r"num_envs 10,000,000,000,000 \(a run config's n_envs\): that many games cannot "
                       r"fit in this machine's memory \(\d+ GiB, and a game takes more than 8 KiB\)"):  # fmt: skip
        make_vector("knock_rummy", 10**13, 2)
    # numpy ints too: a small type must not overflow the check, a large one not slip past it
    with pytest.raises(ConfigError, match=r"num_envs 2,000,000,000 .* cannot fit"):
        make_vector("knock_rummy", np.int32(2_000_000_000), 2)
    assert make_vector("knock_rummy", np.int8(3), 2).num_envs == 3
    with pytest.raises(ConfigError, match="2-6 players, got 9"):
        make_vector("knock_rummy", 2, 9)
    with pytest.raises(ConfigError, match=r"num_players must be an int, got '3' \(str\)"):
        make_vector("knock_rummy", 2, "3")
    with pytest.raises(ConfigError, match="infos must be True or False, got 'no'"):
        make_vector("knock_rummy", 2, 2, infos="no")
    vec = make_vector("knock_rummy", 2, 2)
    with pytest.raises(RuntimeError, match="reset"):
        vec.step(np.zeros(2, dtype=np.int64))
    vec.reset(seed=5)
    before = _snapshot(vec)
    for call, fragment in [
        (lambda: vec.observe(0, 2), "seat must be a seat in 0..1, got 2"),
        (lambda: vec.observe(0, -1), "seat must be a seat in 0..1, got -1"),
        (lambda: vec.observe(0, True), "seat must be"),
        (lambda: vec.observe(vec.num_envs, 0), "game must be an int in 0.."),
        (lambda: vec.final_observation(0, 5), "seat must be"),
        (lambda: vec.render(0, view=7), "view must be a seat in 0..1, got 7"),
    ]:
        with pytest.raises(ValueError, match=fragment):
            call()
    for seed, fragment in [
        (-1, "seed"),
        ("7", "seed"),
        ([1], "one seed per game"),
        ([1, -2], "seed of game 1 must be a non-negative int or None, got -2"),
        (1.5, "seed"),
        (object(), "seed"),
        (np.array(5), r"got array\(5\) \(ndarray\)"),
        ({1, 2}, "a set, whose order is not the games'"),
    ]:
        with pytest.raises(ValueError, match=fragment):
            vec.reset(seed=seed)
        _assert_unchanged(vec, before)
    # None for one game continues that game's streams, as reset(seed=None) does for all
    other = make_vector("knock_rummy", 2, 2)
    other.reset(seed=[3, None])
    fresh = make_vector("knock_rummy", 1, 2)
    fresh.reset(seed=3)
    np.testing.assert_array_equal(other.observations[0], fresh.observations[0])
    wrong = {"observations": np.zeros((2, 3), dtype=np.float32)}
    with pytest.raises(ValueError, match="observations"):
        VectorEnv(vec.game, 2, buffers=wrong)
    # a strided view of the right shape and type: the engine writes rows through flat views
    strided = {"rewards": np.zeros((2, 4), dtype=np.float64)[:, ::2]}
    with pytest.raises(ValueError, match=r"rewards.*not C-contiguous"):
        VectorEnv(vec.game, 2, buffers=strided)
    # a read-only array is refused up front, not half-way through a step that writes it
    frozen = np.zeros((2, 2), dtype=bool)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"winners.*read-only"):
        VectorEnv(vec.game, 2, buffers={"winners": frozen})
    # a misspelt name was ignored (the caller's array never written), a list a bare AttributeError
    mine = np.zeros((2, vec.obs_size), dtype=np.float32)
    with pytest.raises(ValueError, match=r"buffers has no such array: 'observation' \(the "):
        VectorEnv(vec.game, 2, buffers={"observation": mine})
    with pytest.raises(TypeError, match="buffers must be a dict of arrays by name, got list"):
        VectorEnv(vec.game, 2, buffers=[mine])
    with pytest.raises(TypeError, match="buffer 'observations' must be a numpy array, got list"):
        VectorEnv(vec.game, 2, buffers={"observations": mine.tolist()})


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("where", ["step", "reset"])
def test_a_step_or_reset_cut_short_refuses_to_go_on_until_a_reset(monkeypatch, compiled, where):
    """An interrupt (Ctrl-C) in the middle of a call has played some games and not written
    their rows: the engine says so and refuses every game until a reset deals them again."""
    if compiled and compiled_kernels() is None:
        pytest.skip("no compiled kernels")
    kernels = None if compiled else PURE
    vec = make_vector("rummy500", 8, 2, kernels=kernels)
    vec.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        vec.step(uniform_legal_actions(vec.action_masks, rng))

    def interrupt_after(call):
        def cut(*args):
            call(*args)  # this part is played, then the interrupt comes
            raise KeyboardInterrupt

        return cut

    with monkeypatch.context() as patch:
        if where == "reset":
            patch.setattr(vec, "_write_rows", interrupt_after(vec._write_rows))
        elif compiled:  # after the compiled step played every game's move
            patch.setattr(vec.game, "play_batch", interrupt_after(vec.game.play_batch))
        else:  # after games 0-3 played theirs
            from rummyzoo.envs.match import Match

            play, calls = Match.play, []

            def play_until_the_fourth(match, action):
                calls.append(action)
                end = play(match, action)
                if len(calls) == 4:
                    raise KeyboardInterrupt
                return end

            patch.setattr(Match, "play", play_until_the_fourth)
        with pytest.raises(KeyboardInterrupt):
            if where == "step":
                vec.step(uniform_legal_actions(vec.action_masks, rng))
            else:
                vec.reset(seed=9)
    said = rf"a {where}\(\) was cut short by KeyboardInterrupt.*call reset\(\)"
    with pytest.raises(RuntimeError, match=said + " before step"):
        vec.step(uniform_legal_actions(vec.action_masks, rng))
    for query in (vec.observe, vec.final_observation, vec.render):
        with pytest.raises(RuntimeError, match=said):
            query(0, 0)
    vec.reset(seed=9)
    fresh = make_vector("rummy500", 8, 2, kernels=kernels)
    fresh.reset(seed=9)
    for name in ("observations", "action_masks", "current", "rewards"):
        np.testing.assert_array_equal(getattr(vec, name), getattr(fresh, name), err_msg=name)
    vec.step(uniform_legal_actions(vec.action_masks, rng))  # and it plays on


def test_supplied_buffers_are_written_in_place():
    vec = make_vector("rummy500", 3, 2)
    from rummyzoo.envs.vector import buffer_specs

    buffers = {
        name: np.zeros(shape, dtype) for name, (shape, dtype) in buffer_specs(3, vec.game).items()
    }
    mine = VectorEnv(vec.game, 3, buffers=buffers)
    mine.reset(seed=2)
    vec.reset(seed=2)
    assert np.shares_memory(mine.observations, buffers["observations"])
    np.testing.assert_array_equal(buffers["observations"], vec.observations)


def test_uniform_legal_actions_is_uniform_and_the_same_compiled_or_not():
    rng = np.random.default_rng(3)
    masks = (rng.random((300, 50)) < 0.3).astype(np.int8)
    masks[7] = 0
    a = uniform_legal_actions(masks, np.random.default_rng(9), kernels=PURE)
    assert a[7] == -1
    rows = np.flatnonzero(masks.any(axis=1))
    assert masks[rows, a[rows]].all()
    if compiled_kernels() is not None:
        b = uniform_legal_actions(masks, np.random.default_rng(9))
        np.testing.assert_array_equal(a, b)
    # one row, many draws: every legal action about equally often
    row = np.zeros((20_000, 6), dtype=np.int8)
    row[:, [0, 2, 5]] = 1
    picks = uniform_legal_actions(row, np.random.default_rng(0))
    counts = np.bincount(picks, minlength=6)
    assert counts[[1, 3, 4]].sum() == 0
    assert np.all(np.abs(counts[[0, 2, 5]] / 20_000 - 1 / 3) < 0.015)


def _unaligned(values: np.ndarray, dtype) -> np.ndarray:
    """The same values in a writeable C-contiguous array at an odd address (as read out of a
    byte buffer)."""
    raw = bytearray(b"\0" + np.ascontiguousarray(values, dtype=dtype).tobytes())
    out = np.frombuffer(raw, dtype, offset=1)
    assert out.flags.c_contiguous and out.flags.writeable and not out.flags.aligned
    return out


@pytest.mark.parametrize("compiled", [True, False])
def test_unaligned_arrays_play_as_their_values_and_unaligned_buffers_are_refused(compiled):
    kernels = None if compiled else PURE
    if compiled and compiled_kernels() is None:
        pytest.skip("compiled kernels not built")
    plain, odd = (make_vector("rummy500", 4, 2, kernels=kernels) for _ in range(2))
    rng = np.random.default_rng(0)
    for vec in (plain, odd):
        vec.reset(seed=0)
    for step in range(40):
        acts = uniform_legal_actions(plain.action_masks, rng)
        games = None if step % 2 else [2, 0]
        chosen = acts if games is None else acts[games]
        plain.step(chosen, games=games)
        odd.step(_unaligned(chosen, np.int64), games=games)
        np.testing.assert_array_equal(plain.observations, odd.observations)
        np.testing.assert_array_equal(plain.action_masks, odd.action_masks)
    # uniform picks into any out array, the same compiled or not
    masks = plain.action_masks
    want = uniform_legal_actions(masks, np.random.default_rng(4), kernels=PURE)
    for out in (
        np.empty(4, np.int32),
        np.empty(8, np.int64)[::2],
        _unaligned(np.zeros(4), np.int64),
    ):
        got = uniform_legal_actions(
            masks,
            np.random.default_rng(4),
            out=out,
            kernels=kernels,
        )
        assert got is out and got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="one entry per row"):
        uniform_legal_actions(masks, rng, out=np.empty(3, np.int64), kernels=kernels)
    with pytest.raises(ValueError, match="2-d array"):
        uniform_legal_actions(masks[0], rng, kernels=kernels)
    game = plain.game
    odd_obs = _unaligned(np.zeros((4, game.obs_size)), np.float32).reshape(4, game.obs_size)
    with pytest.raises(ValueError, match=r"buffer 'observations' .*not aligned"):
        VectorEnv(game, 4, buffers={"observations": odd_obs})


def test_a_closed_engine_refuses_to_play_and_works_in_a_with_block():
    with make_vector("ditch_rummy", 2, 2) as vec:
        vec.reset(seed=0)
        vec.step(uniform_legal_actions(vec.action_masks, np.random.default_rng(0)))
    for call in (lambda: vec.reset(seed=1), lambda: vec.step(np.zeros(2, dtype=np.int64))):
        with pytest.raises(RuntimeError, match="this VectorEnv is closed"):
            call()
    assert vec.observations.shape[0] == 2  # the arrays stay readable


@pytest.mark.parametrize("variant", ["knock_rummy", "ditch_rummy", "rummy500"])
@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_engine_plays_on_exactly_as_the_original(variant, players, how):
    """A deep or pickled copy of an engine mid-game steps as the original does (its arrays
    are the copy's own, read-only as the original's, and judge its actions); the copy's moves
    leave the original untouched."""
    import copy
    import pickle

    def clone(engine):
        return copy.deepcopy(engine) if how == "deepcopy" else pickle.loads(pickle.dumps(engine))

    names = ("observations", "action_masks", "current", "rewards", "hand_done", "terminated")
    vec = make_vector(variant, 6, players)
    vec.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(15):
        vec.step(uniform_legal_actions(vec.action_masks, rng))
    copied = clone(vec)
    before = {name: getattr(vec, name).copy() for name in names}
    probe = clone(copied)
    for _ in range(5):
        probe.step(uniform_legal_actions(probe.action_masks, rng))
    assert all(np.array_equal(getattr(vec, name), before[name]) for name in names)
    with pytest.raises(ValueError, match="read-only"):
        copied.action_masks[:] = 1
    illegal = int(np.flatnonzero(copied.action_masks[0] == 0)[0])
    with pytest.raises(IllegalActionError, match="game 0"):
        copied.step(np.full(6, illegal))
    hands = 0
    for _ in range(300):
        actions = uniform_legal_actions(vec.action_masks, rng)
        vec.step(actions)
        copied.step(actions)
        for name in names:
            assert np.array_equal(getattr(copied, name), getattr(vec, name)), name
        hands += int(vec.hand_done.sum())
    assert hands > 0  # the copies went on past hands' ends alike


def built_kernels():
    """The kernels module, whatever RUMMYZOO_PURE_PYTHON says (skipped where not built)."""
    kernels = load_kernels()
    if kernels is None:
        if os.environ.get("RUMMYZOO_REQUIRE_COMPILED", "") not in ("", "0"):
            pytest.fail("the compiled kernels were not built (envs/_native.c)")
        pytest.skip("the compiled kernels are not built here")
    return kernels


def compiled_and_pure(variant, n, players, options, seed):
    """Two engines of ``n`` games reset alike: with the compiled step (the kernels module,
    whatever RUMMYZOO_PURE_PYTHON says; skipped where it is not built) and in Python."""
    kernels = built_kernels()
    fast = make_vector(variant, n, players, infos=True, kernels=kernels, **options)
    slow = make_vector(variant, n, players, infos=True, kernels=PURE, **options)
    assert fast.game.play_batch is not None and slow.game.play_batch is None
    fast.reset(seed=seed)
    slow.reset(seed=seed)
    return fast, slow


KNOCK_KERNEL_CASES = [
    (2, {}),
    (2, {"knock_max_deadwood": 10, "target_score": 20, "max_turns": 60}),
    (3, {"knock_max_deadwood": 25, "stock_exhaustion": "reshuffle", "void_threshold": 2}),
    (4, {"stock_exhaustion": "showdown", "allow_discard_of_taken": True, "max_turns": 25}),
    (6, {"knock_max_deadwood": 0, "target_score": None, "reward": "win_loss"}),
]


@pytest.mark.parametrize(("players", "options"), KNOCK_KERNEL_CASES)
def test_knock_compiled_step_plays_as_the_python_code(players, options):
    """Knock Rummy's compiled step (``play_batch``, envs/_knock.c) and the Python code, side by
    side: every array, the infos and each game's whole state alike after every step, through
    the stock's end, reshuffles, the turn cap and match ends (a policy that seldom knocks)."""
    n = 12
    fast, slow = compiled_and_pure("knock_rummy", n, players, options, seed=7)
    rng = np.random.default_rng(players)
    knock = KNOCK_BASE
    counts = {"hands": 0, "matches": 0, "reshuffles": 0}
    for step in range(400):
        for name in fast.buffers:
            np.testing.assert_array_equal(fast.buffers[name], slow.buffers[name], err_msg=name)
        assert fast.infos == slow.infos
        for a, b in zip(fast.matches, slow.matches, strict=True):
            sa, sb = a.state, b.state
            assert (sa.bits, sa.stock, sa.stock_pos, sa.discard) == (
                sb.bits, sb.stock, sb.stock_pos, sb.discard
            ), step  # fmt: skip
            assert (sa.current, sa.phase, type(sa.phase), sa.turn, sa.taken) == (
                sb.current, sb.phase, type(sb.phase), sb.turn, sb.taken
            )  # fmt: skip
            assert sa.planes.tobytes() == sb.planes.tobytes()
            assert (a.decisions, a.hand_index, a.totals) == (b.decisions, b.hand_index, b.totals)
            counts["reshuffles"] += sa.stock_pos == 0
        masks = fast.action_masks.copy()
        quiet = masks.copy()
        quiet[:, knock:] = 0  # knock one time in ten where a discard is open
        keep = (rng.random(n) < 0.9) & (quiet.sum(axis=1) > 0)
        masks[keep] = quiet[keep]
        actions = uniform_legal_actions(masks, rng)
        fast.step(actions)
        slow.step(actions)
        counts["hands"] += int(fast.hand_done.sum())
        counts["matches"] += int((fast.terminated | fast.truncated).sum())
    assert counts["hands"] > 0 and counts["matches"] > 0, counts
    if options.get("stock_exhaustion") == "reshuffle":
        assert counts["reshuffles"] > 0


DITCH_KERNEL_CASES = [
    (2, {"target_score": 60}),
    (3, {"target_score": 100, "max_turns": 40}),
    (4, {"teams": True, "single_extends_meld": True, "runs_same_suit": True, "target_score": 30}),
    (
        2,
        {
            "draw_rule": "up_to_3",
            "max_hand": 10,
            "hand_penalty": "none",
            "reward": "win_loss",
            "target_score": 50,
        },
    ),
    (4, {"draw_rule": "up_to_3", "single_extends_meld": True, "target_score": None}),
]


@pytest.mark.parametrize(("players", "options"), DITCH_KERNEL_CASES)
def test_ditch_compiled_step_plays_as_the_python_code(players, options):
    """Ditch Rummy's compiled step (``play_batch``, envs/_ditch.c) and the Python code, side by
    side: every array, the infos and each game's whole state alike after every step, through
    melds and singles (left to the Python code), the draw pile's end, stalls, the turn cap and
    match ends. A policy that passes more than uniform play makes stalls happen."""
    n = 12
    fast, slow = compiled_and_pure("ditch_rummy", n, players, options, seed=11)
    game = fast.game
    rng = np.random.default_rng(players)
    counts = {"hands": 0, "matches": 0, "cut": 0, "stall": 0, "draw_pile_empty": 0, "blind_run": 0}
    for step in range(500):
        for name in fast.buffers:
            np.testing.assert_array_equal(fast.buffers[name], slow.buffers[name], err_msg=name)
        assert fast.infos == slow.infos
        for a, b in zip(fast.matches, slow.matches, strict=True):
            assert ditch_state(a.state) == ditch_state(b.state), step
            assert (a.decisions, a.hand_index, a.totals) == (b.decisions, b.hand_index, b.totals)
        masks = fast.action_masks.copy()
        passing = masks.copy()
        passing[:, 1 : game.meld_base] = 0  # draw nothing, then end the turn, where it can
        keep = (rng.random(n) < 0.06) & (passing.sum(axis=1) > 0)
        masks[keep] = passing[keep]
        actions = uniform_legal_actions(masks, rng)
        fast.step(actions)
        slow.step(actions)
        counts["hands"] += int(fast.hand_done.sum())
        counts["matches"] += int((fast.terminated | fast.truncated).sum())
        counts["cut"] += int(fast.truncated.sum())
        for i in np.flatnonzero(fast.hand_done).tolist():
            for info in fast.infos[i]:
                reason = info.get("end_reason")
                if reason in counts:
                    counts[reason] += 1
                    break
    assert counts["matches"] > 0 and counts["stall"] > 0 and counts["draw_pile_empty"] > 0, counts
    if "max_turns" in options:
        assert counts["cut"] > 0, counts


RUMMY500_KERNEL_CASES = [
    (2, {"target_score": 150}),
    (3, {"top_discard_free": True, "target_score": 200, "max_turns": 40}),
    (4, {"stock_exhaustion": "end_after_last_stock_turn", "target_score": None}),
    (6, {"target_score": 250}),
]


@pytest.mark.parametrize(("players", "options"), RUMMY500_KERNEL_CASES)
def test_rummy500_compiled_step_plays_as_the_python_code(players, options):
    """500 Rum's compiled step (``play_batch``, envs/_rummy500.c) and the Python code, side by
    side: every array, the infos and each game's whole state alike after every step, through
    digs, melds and lay-offs (left to the Python code), going out, the stock's end, the turn cap
    and match ends, with one deck and two."""
    n = 10
    fast, slow = compiled_and_pure("rummy500", n, players, options, seed=5)
    counts = {"matches": 0, "cut": 0, "went out": 0, "stock exhausted": 0, "pass": 0}
    rng = np.random.default_rng(players)
    for step in range(500):
        for name in fast.buffers:
            np.testing.assert_array_equal(fast.buffers[name], slow.buffers[name], err_msg=name)
        assert fast.infos == slow.infos
        for a, b in zip(fast.matches, slow.matches, strict=True):
            assert rummy500_state(a.state) == rummy500_state(b.state), step
            assert (a.decisions, a.hand_index, a.totals) == (b.decisions, b.hand_index, b.totals)
        actions = uniform_legal_actions(fast.action_masks, rng)
        fast.step(actions)
        slow.step(actions)
        counts["matches"] += int((fast.terminated | fast.truncated).sum())
        counts["cut"] += int(fast.truncated.sum())
        for i in np.flatnonzero(fast.hand_done).tolist():
            reason = fast.matches[i].state.end_reason if not fast.truncated[i] else None
            for info in fast.infos[i]:
                reason = info.get("end_reason", reason)
            if reason in counts:
                counts[reason] += 1
    assert counts["matches"] > 0 and counts["went out"] > 0, counts
    if "max_turns" in options:
        assert counts["cut"] > 0, counts


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("knock_rummy", {"target_score": 20}),
        ("knock_rummy", {"max_turns": 3, "reward": "win_loss"}),
    ],
)
def test_hand_ends_written_row_by_row_or_all_at_once_alike(monkeypatch, variant, options):
    # the ends of a step are written row by row when few, by numpy's indexing when many: both
    # ways give the same arrays (hands, matches decided and cut, rewards, winners)
    import rummyzoo.envs.vector as vector_module

    runs = []
    for few in (0, 10**9):  # 0: always all at once; 10**9: always row by row
        monkeypatch.setattr(vector_module, "_FEW_ROWS", few)
        vec = make_vector(variant, 64, 2, **options)
        vec.reset(seed=5)
        rng = np.random.default_rng(6)
        steps, ends = [], []
        for _ in range(60):
            vec.step(uniform_legal_actions(vec.action_masks, rng))
            steps.append({k: v.copy() for k, v in vec.buffers.items()})
            ends.append(int(vec.hand_done.sum()))
        runs.append((steps, ends, vec.matches_done.copy()))
    (steps, ends, done), (other, other_ends, other_done) = runs
    assert ends == other_ends and max(ends) >= 2
    assert done.sum() > 0
    np.testing.assert_array_equal(done, other_done)
    for k, (mine, theirs) in enumerate(zip(steps, other, strict=True)):
        for name, value in mine.items():
            np.testing.assert_array_equal(value, theirs[name], err_msg=f"step {k}: {name}")


FINISH_CASES = [
    ("knock_rummy", 2, {}),
    ("knock_rummy", 3, {"target_score": 40, "reward": "points", "max_hands": 4}),
    ("knock_rummy", 2, {"knock_max_deadwood": 10, "target_score": 30, "reward": "win_loss"}),
    ("knock_rummy", 4, {"max_turns": 4, "reward": "scaled", "reward_scale": 7.0}),
    ("ditch_rummy", 2, {"target_score": 60}),
    ("ditch_rummy", 4, {"teams": True, "target_score": 80, "reward": "margin"}),
    ("ditch_rummy", 4, {"teams": True, "target_score": None, "reward": "win_loss"}),
    ("ditch_rummy", 3, {"target_score": 70, "reward": "win_loss", "max_hands": 2}),
    ("rummy500", 2, {"target_score": 120}),
    ("rummy500", 3, {"target_score": None, "reward": "points", "max_turns": 40}),
]


@pytest.mark.parametrize(("variant", "players", "options"), FINISH_CASES)
def test_compiled_hand_ends_finish_as_the_python_code(variant, players, options):
    """Without infos the compiled code finishes the hands' ends (``finish_hands``: the totals,
    rewards and rows, the next deal or the match's restart): every array, each match's totals,
    counters and dealer, and each finished match's last observations as the Python code gives
    them, through decided matches, ties for the lead, ``max_hands`` and the turn cap (the
    hands' ends it leaves to the Python code)."""
    kernels = built_kernels()
    n = 12
    fast = make_vector(variant, n, players, kernels=kernels, **options)
    slow = make_vector(variant, n, players, kernels=PURE, **options)
    assert fast._finish is not None and slow._finish is None
    fast.reset(seed=21)
    slow.reset(seed=21)
    rng = np.random.default_rng(players)
    finished = left = matches = cut = 0
    finish = fast._finish

    def counted(*args):
        nonlocal finished, left
        out = finish(*args)
        finished += len(out[1]) + len(out[2])
        left += len(out[0])
        return out

    fast._finish = counted
    for step in range(300):
        for name in fast.buffers:
            np.testing.assert_array_equal(fast.buffers[name], slow.buffers[name], err_msg=name)
        for a, b in zip(fast.matches, slow.matches, strict=True):
            assert (a.decisions, a.hand_index, a.totals, a.dealer, a.over) == (
                b.decisions, b.hand_index, b.totals, b.dealer, b.over
            ), step  # fmt: skip
            assert type(a.totals[0]) is type(b.totals[0])
            np.testing.assert_array_equal(a.seat_totals, b.seat_totals)
            # read-only, both ways: the observations keep the totals by identity
            assert not a.seat_totals.flags.writeable and not b.seat_totals.flags.writeable
            assert a.mask is None or b.mask is None or np.array_equal(a.mask, b.mask)
        for i in np.flatnonzero(fast.terminated | fast.truncated).tolist():
            matches += 1
            for seat in range(players):
                np.testing.assert_array_equal(
                    fast.final_observation(i, seat), slow.final_observation(i, seat)
                )
        actions = uniform_legal_actions(fast.action_masks, rng)
        fast.step(actions)
        slow.step(actions)
        cut += int(fast.truncated.sum())
    assert finished > 0 and matches > 0, (finished, matches)
    if "max_hands" in options:
        assert left > 0  # the cap's ends went through the Python code
    if "max_hands" in options or "max_turns" in options:
        assert cut > 0


def test_compiled_hand_ends_only_where_they_apply():
    """Infos kept, or a reward mode it does not know (``lead``, ``rank``): every hand's end goes
    through the Python code; an engine without the kernels has no compiled finish."""
    kernels = built_kernels()
    assert make_vector("knock_rummy", 2, 2, kernels=kernels)._finish is not None
    assert make_vector("knock_rummy", 2, 2, kernels=kernels, infos=True)._finish is None
    for mode in ("lead", "rank"):
        vec = make_vector("ditch_rummy", 2, 2, kernels=kernels, reward=mode)
        assert vec._finish is None
    assert make_vector("rummy500", 2, 2, kernels=PURE)._finish is None


def test_finish_hands_refuses_bad_arguments():
    kernels = built_kernels()
    vec = make_vector("knock_rummy", 4, 2, kernels=kernels)
    vec.reset(seed=0)
    args = [
        vec.matches,
        np.arange(4, dtype=np.int64),
        vec._rewards,
        vec._hand_points,
        vec._winners,
        vec._hand_done,
        vec._terminated,
        vec._matches_done,
        vec._clear,
        vec._finish_settings,
    ]
    before = [m.hand_index for m in vec.matches]
    with pytest.raises(TypeError, match="10 arguments"):
        kernels.finish_hands(*args[:9])
    bad = list(args)
    bad[2] = vec._rewards.astype(np.float32)
    with pytest.raises(TypeError, match="rewards"):
        kernels.finish_hands(*bad)
    bad = list(args)
    bad[1] = np.array([7], dtype=np.int64)
    with pytest.raises(IndexError, match="game 7"):
        kernels.finish_hands(*bad)
    bad = list(args)
    bad[9] = ((0, 1), None, 9, 1.0, -1, vec.game.hand_winners)
    with pytest.raises(ValueError, match="reward mode"):
        kernels.finish_hands(*bad)
    # hands still going on are left alone, unchanged
    left, deal, restart = kernels.finish_hands(*args)
    assert left.tolist() == [0, 1, 2, 3] and deal.size == 0 and restart.size == 0
    assert [m.hand_index for m in vec.matches] == before
    assert not vec.hand_done.any()


def test_render_shows_the_view_of_the_render_view_option_as_the_aec_env():
    for view in (None, 1):
        env = make_env("knock_rummy", 2, render_mode="ansi", render_view=view)
        env.reset(seed=4)
        vec = make_vector("knock_rummy", 1, 2, render_view=view)
        vec.reset(seed=4)
        assert vec.render(0) == env.render()
        assert vec.render(0, view=None) == make_env(
            "knock_rummy", 2, render_mode="ansi"
        ).unwrapped.game.render(vec.matches[0].state, None, vec.matches[0].totals_by_seat())
    assert vec.render(0, view=None) != vec.render(0)  # all hands open, not seat 1's view
