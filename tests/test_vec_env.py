"""The batched training env: the learner's view of N games, opponents batched by policy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.vec_env import VecMonitor

from rummyzoo.agents.base import BasePolicy
from rummyzoo.envs.vector import uniform_legal_actions
from rummyzoo.training.config import load_config
from rummyzoo.training.seat_env import OpponentMixture, SeatEnv
from rummyzoo.training.train import build_model, build_vec_env
from rummyzoo.training.vec_env import BatchedSeatEnv

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def _random_actions(env, rng):
    return uniform_legal_actions(env.action_masks().astype(np.int8), rng)


@pytest.mark.parametrize("batched", [True, False])
def test_a_match_pays_the_hands_that_end_before_the_learner_first_acts(batched):
    """Four-player Knock Rummy matches to 100, the learner in the last seat: the first hands
    often end before it acts (random play knocks half the time it may). An episode's rewards
    add up to the learner's match points all the same (``scaled``: its points / 10),
    paid from its first decision on, in the batched env and the seat env alike."""
    from rummyzoo.training.seat_env import SeatEnv

    kwargs = {"opponents": ["random"], "reward": "scaled", "reward_scale": 10, "learner_seat": 3}
    options = {"target_score": 100}
    rng = np.random.default_rng(0)
    early = episodes = 0
    if batched:
        env = BatchedSeatEnv("knock_rummy", 4, options, num_envs=8, seed=5, **kwargs)
        env.reset()
        totals = np.zeros(8)
        for _ in range(600):
            _obs, rewards, dones, infos = env.step(_random_actions(env, rng))
            totals += rewards
            for i in np.flatnonzero(dones):
                game = infos[i]["game"]
                assert totals[i] == pytest.approx(game["points"] / 10, abs=1e-4), game
                early += game["hands"] > 0 and game["decisions"] < game["hands"]
                totals[i] = 0.0
                episodes += 1
        env.close()
    else:
        env = SeatEnv("knock_rummy", 4, options, **kwargs)
        for seed in range(40):
            env.reset(seed=seed)
            early += bool(env._hand_points)  # hands ended before the learner's first decision
            total, done = 0.0, False
            while not done:
                legal = np.flatnonzero(env.action_masks())
                _obs, reward, term, trunc, info = env.step(int(rng.choice(legal)))
                total += reward
                done = term or trunc
            assert total == pytest.approx(info["game"]["points"] / 10, abs=1e-4), info["game"]
            episodes += 1
    assert episodes > 10 and early > 0


@pytest.mark.parametrize("variant", ["knock_rummy", "ditch_rummy", "rummy500"])
def test_rewards_add_up_to_the_learners_points(variant):
    """One hand per episode, scaled rewards: an episode's rewards are its points / scale,
    and every observation is the learner's own, at its turn."""
    env = BatchedSeatEnv(
        variant,
        2,
        {"target_score": None},
        opponents=["random"],
        num_envs=6,
        seed=2,
        reward_scale=50,
    )
    obs = env.reset()
    rng = np.random.default_rng(0)
    totals = np.zeros(6)
    episodes = 0
    for _ in range(400):
        engine = env.engine
        np.testing.assert_array_equal(engine.current, env.seats)
        np.testing.assert_array_equal(obs, engine.observations)
        assert env.action_masks().any(axis=1).all()
        obs, rewards, dones, infos = env.step(_random_actions(env, rng))
        totals += rewards
        for i in np.flatnonzero(dones):
            game = infos[i]["game"]
            assert totals[i] == pytest.approx(game["points"] / 50, abs=1e-5)
            assert game["hands"] == len(game["hand_points"]) <= 1
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            assert infos[i]["TimeLimit.truncated"] is game["truncated"]
            totals[i] = 0.0
            episodes += 1
    assert episodes > 0
    env.close()


def test_learner_seats_rotate_and_features_and_masks_are_appended():
    env = BatchedSeatEnv(
        "knock_rummy",
        3,
        {},
        opponents=["random"],
        num_envs=4,
        seed=1,
        features="knock_deadwood",
        mask_in_obs=True,
    )
    obs = env.reset()
    assert obs.shape == (4, env.obs_size + 106 + env.num_actions)
    np.testing.assert_array_equal(obs[:, -env.num_actions :], env.action_masks())
    rng = np.random.default_rng(3)
    for _ in range(200):
        env.step(_random_actions(env, rng))
        # every match (skipped ones included) gave the learner the next seat
        np.testing.assert_array_equal(env.seats, (env._matches - 1) % 3)
    assert env._matches.min() > 1


class CountingBatch(BasePolicy):
    """A network-like opponent: counts its batched calls and the rows in each."""

    name = "counting"

    def __init__(self):
        self.calls = []

    def act(self, observation, action_mask, rng):  # pragma: no cover - must not be used
        raise AssertionError("a policy with act_batch is asked once per round")

    def act_batch(self, observations, masks, rng):
        self.calls.append(len(observations))
        return uniform_legal_actions(masks.astype(np.int8), rng)


def test_a_batched_opponent_is_called_once_per_round_for_all_its_games():
    mixture = OpponentMixture([("random", 1.0)], "knock_rummy", 2)
    counting = CountingBatch()
    mixture._fixed["random"] = counting
    env = BatchedSeatEnv("knock_rummy", 2, {}, opponents=mixture, num_envs=16, seed=0)
    env.reset()
    stepped = []
    step = env.engine.step

    def counted(actions, games=None):
        stepped.append(len(actions))
        return step(actions, games)

    env.engine.step = counted
    rng = np.random.default_rng(1)
    for _ in range(20):
        counting.calls.clear()
        stepped.clear()
        env.step(_random_actions(env, rng))
        # the learner's round, then one call per opponent round with all its waiting games
        assert stepped[0] == 16
        assert counting.calls == stepped[1:]


def test_action_masks_come_as_one_array_and_illegal_actions_are_penalized():
    env = VecMonitor(BatchedSeatEnv("ditch_rummy", 2, {}, opponents=["random"], num_envs=5))
    env.reset()
    masks = get_action_masks(env)
    assert masks.shape == (5, env.action_space.n) and masks.dtype == bool
    inner = env.venv
    before = inner.engine.observations.copy()
    actions = _random_actions(inner, np.random.default_rng(0))
    illegal = int(np.flatnonzero(~masks[1])[0])
    actions[1] = illegal
    _, rewards, dones, infos = env.step(actions)
    assert rewards[1] == -1.0 and infos[1]["illegal_action"] == illegal and not dones[1]
    np.testing.assert_array_equal(inner.engine.observations[1], before[1])
    with pytest.raises(ValueError, match="all its games"):
        inner.set_attr("gamma", 0.5, indices=[0])
    # a bad seed is refused when given, and the next reset still works (every reset failed)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="seed must be a non-negative int"):
            inner.seed(bad)
    assert env.reset().shape[0] == 5


def test_whatever_is_sent_as_an_action_is_penalized_as_in_the_per_game_env():
    """None, a huge int, a bool or a timedelta among the actions costs its game the penalty,
    with what was sent in ``illegal_action``, as SeatEnv does; the other games play on."""
    env = BatchedSeatEnv("knock_rummy", 2, {}, opponents=["random"], num_envs=3, seed=3)
    env.reset()
    for sent in (None, 2**70, True, np.timedelta64(1, "s"), "1"):
        for as_array in (False, True):
            legal = [int(np.flatnonzero(mask)[0]) for mask in env.action_masks()]
            decisions = env._decisions.copy()
            actions = [sent, *legal[1:]]
            _, rewards, dones, infos = env.step(
                np.array(actions, dtype=object) if as_array else actions
            )
            assert rewards[0] == -1.0 and not dones[0], sent
            assert type(infos[0]["illegal_action"]) is type(sent), sent
            assert infos[0]["illegal_action"] == sent or sent is None, sent
            assert all("illegal_action" not in info for info in infos[1:]), sent
            assert env._decisions[0] == decisions[0], sent
    # an array of timedelta64 (numpy counts it among its integers; its tolist() makes ints)
    for unit in ("m8[ns]", "m8[s]"):
        legal = [int(np.flatnonzero(mask)[0]) for mask in env.action_masks()]
        sent = np.array(legal, dtype=unit)
        _, rewards, dones, infos = env.step(sent)
        assert rewards.tolist() == [-1.0] * 3 and not dones.any(), unit
        assert [info["illegal_action"] for info in infos] == list(sent), unit
        assert all(type(info["illegal_action"]) is np.timedelta64 for info in infos), unit
    # the per-game env refuses them alike
    seat = SeatEnv("knock_rummy", 2, {}, opponents=["random"])
    seat.reset(seed=3)
    for sent in (np.timedelta64(0), np.timedelta64(0, "s")):
        _, reward, *_, info = seat.step(sent)
        assert reward == -1.0 and info["illegal_action"] is sent, sent


@pytest.mark.parametrize("batched", [True, False])
def test_distinct_tables_seat_each_opponent_once_a_game(batched):
    """``league.tables: distinct`` in a run: at 4 players with 3 opponents, every game of the
    batched env and of the per-game env seats each of them once."""
    config = load_config(
        CONFIGS / "knock_4p_ppo.yaml",
        [
            "n_envs=8",
            "vec_env=" + ("batched" if batched else "dummy"),
            "pretrain=null",
            "league.sampling=weights",
            "league.tables=distinct",
            "opponents=[{name: random}, {name: knock.greedy}, {name: knock.smart}]",
        ],
    )
    env = build_vec_env(config)
    names = {"random", "knock.greedy", "knock.smart"}
    tables = []
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(200):
        masks = get_action_masks(env).astype(np.int8)
        _, _, dones, infos = env.step(uniform_legal_actions(masks, rng))
        tables += [
            info["game"]["opponents"] for info, done in zip(infos, dones, strict=True) if done
        ]
    env.close()
    assert len(tables) >= 20
    assert all(len(t) == 3 and set(t) == names for t in tables)


def test_snapshots_join_one_pool_for_every_game(tmp_path):
    env = BatchedSeatEnv("knock_rummy", 2, {}, opponents=["self"], num_envs=3)
    assert env.env_method("add_snapshot", "a.rz", 10) == [None] * 3
    assert [s.path for s in env.opponents.pool] == ["a.rz"]


@pytest.mark.parametrize("variant", ["knock_rummy", "ditch_rummy", "rummy500"])
@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_a_short_training_run_on_the_batched_env(variant, algo):
    config = load_config(
        CONFIGS / f"smoke_{algo}.yaml",
        [f"variant={variant}", "n_envs=8", "vec_env=batched", "env_options.target_score=null"],
    )
    env = build_vec_env(config)
    assert isinstance(env.venv, BatchedSeatEnv)
    model = build_model(config, env, None)
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    env.close()


def test_the_warm_start_collects_teacher_games_on_the_batched_env():
    from rummyzoo.training.pretrain import collect_teacher_games_batched

    def collect():
        env = BatchedSeatEnv(
            "knock_rummy",
            2,
            {"target_score": 30},
            opponents=["knock.greedy"],
            num_envs=8,
            features="knock_deadwood",
        )
        step = env.step

        def recording_step(actions):
            out = step(actions)
            for i in np.flatnonzero(out[2]).tolist():
                finished.append(out[3][i]["game"]["points"] / env.reward_scale)
            return out

        env.step = recording_step
        return collect_teacher_games_batched(env, "knock.greedy", 400, seed=4, gamma=0.9)

    finished: list[float] = []  # each finished game's points / scale, in the order they end
    data = collect()
    n = len(data["actions"])
    assert n >= 400 and data["obs"].shape == (n, 312 + 106)
    assert data["masks"][np.arange(n), data["actions"]].all()
    games, ret = data["games"], data["returns"]
    assert np.all(np.diff(games) >= 0) and games[-1] >= 1  # whole games, one after another
    last = np.r_[np.flatnonzero(np.diff(games)), n - 1]  # each game's last decision
    rewards = ret.astype(np.float64).copy()
    rewards[:-1] -= 0.9 * np.where(games[1:] == games[:-1], ret[1:], 0.0)
    assert np.count_nonzero(np.abs(rewards[last]) > 1e-6) >= 1  # a match ends with its points
    # each game's rewards add up to what the env reports the learner earned in it
    totals = np.bincount(games, weights=rewards)
    np.testing.assert_allclose(totals, finished[: len(totals)], atol=1e-5)
    finished.clear()
    again = collect()
    np.testing.assert_array_equal(again["actions"], data["actions"])


def test_workers_need_the_batched_engine_and_enough_games():
    from rummyzoo.training.config import ConfigLoadError

    with pytest.raises(ConfigLoadError, match="needs vec_env: batched"):
        load_config(CONFIGS / "smoke_ppo.yaml", ["workers=2", "vec_env=dummy"])
    with pytest.raises(ConfigLoadError, match="at least 4 games"):
        load_config(CONFIGS / "smoke_ppo.yaml", ["workers=4", "n_envs=2"])
    assert load_config(CONFIGS / "smoke_ppo.yaml", []).vec_env == "batched"  # the default


def test_random_play_in_one_call_is_random_play_row_by_row():
    from rummyzoo.agents.random_agent import RandomPolicy

    masks = (np.random.default_rng(0).random((40, 30)) < 0.2).astype(np.int8)
    masks[:, 3] = 1
    policy = RandomPolicy()
    batch = policy.act_batch(None, masks, np.random.default_rng(6))
    rng = np.random.default_rng(6)
    rows = [policy.act(None, m, rng) for m in masks]
    assert batch.tolist() == rows
    masks[5] = 0
    with pytest.raises(ValueError, match="all-zero"):
        policy.act_batch(None, masks, rng)


def test_a_short_ppo_run_on_two_workers_adds_up():
    """PPO on the batched env over two processes (``workers: 2``): each episode's return is
    the learner's points of its one hand over the reward scale, in both shares."""
    from stable_baselines3.common.callbacks import BaseCallback

    from rummyzoo.training.split_env import SplitSeatEnv

    config = load_config(
        CONFIGS / "smoke_ppo.yaml", ["n_envs=8", "workers=2", "env_options.target_score=null"]
    )
    env = build_vec_env(config)
    split = env.venv
    assert isinstance(split, SplitSeatEnv) and split.processes == 2
    batched = split.local
    episodes = []

    class Episodes(BaseCallback):
        def _on_step(self):
            infos, dones = self.locals["infos"], self.locals["dones"]
            for k, (info, done) in enumerate(zip(infos, dones, strict=True)):
                if done:
                    episodes.append((k, info["episode"]["r"], info["game"]["points"]))
            return True

    model = build_model(config, env, None)
    model.learn(total_timesteps=320, callback=Episodes())
    env.close()
    assert model.num_timesteps >= 320
    assert len(episodes) > 10
    assert {k < 4 for k, _, _ in episodes} == {True, False}  # games of both shares
    scale = batched.reward_scale
    for _, ret, points in episodes:
        assert ret == pytest.approx(points / scale, abs=1e-4)


def test_knock_features_of_many_rows_at_once_are_those_of_each_row():
    from rummyzoo.agents.features import make_features
    from rummyzoo.envs.registry import make_vector

    for players, options in ((2, {}), (3, {"allow_discard_of_taken": True})):
        features = make_features("knock_deadwood", "knock_rummy", players, options)
        vec = make_vector("knock_rummy", 12, players, **options)
        vec.reset(seed=5)
        rng = np.random.default_rng(1)
        for _ in range(30):
            rows = np.stack([features(o) for o in vec.observations])
            np.testing.assert_array_equal(features.batch(vec.observations), rows)
            vec.step(uniform_legal_actions(vec.action_masks, rng))


def _play_as(agent_name, env, steps, rng):
    """Let a heuristic choose the learner's actions; per finished episode: (its summed reward,
    its seat, the deck it was dealt)."""
    from rummyzoo.agents.registry import make_agent
    from rummyzoo.training.vec_env import act_batch

    agent = make_agent(agent_name, env.variant, env.num_players, env.env_options)
    n = env.num_envs
    totals = np.zeros(n)
    start = [(int(env.seats[i]), env.engine.matches[i].deck) for i in range(n)]
    episodes = []
    for _ in range(steps):
        actions = act_batch(agent, env.engine.observations, env.action_masks(), rng)
        _, rewards, dones, _ = env.step(actions)
        totals += rewards
        for i in np.flatnonzero(dones).tolist():
            episodes.append((totals[i], *start[i]))
            totals[i] = 0.0
            start[i] = (int(env.seats[i]), env.engine.matches[i].deck)
    return episodes


@pytest.mark.parametrize(
    "players, options", [(2, {}), (4, {"teams": True})], ids=["2 players", "teams"]
)
def test_a_duplicate_baseline_that_plays_as_the_learner_cancels_every_deal(players, options):
    """The learner plays ditch.smart's moves against heuristics, and ditch.smart sets the
    baseline: each deal's twin is the very same game, so every hand's reward is 0."""
    env = BatchedSeatEnv(
        "ditch_rummy",
        players,
        {"target_score": None, **options},
        opponents=["ditch.greedy", "ditch.smart"],
        num_envs=6,
        reward="margin",
        seed=5,
        duplicate_baseline="ditch.smart",
    )
    env.reset()
    episodes = _play_as("ditch.smart", env, 300, np.random.default_rng(0))
    assert len(episodes) >= 10
    assert [total for total, _, _ in episodes] == [0.0] * len(episodes)


def test_a_duplicate_baseline_subtracts_the_baseline_agents_own_result_on_the_deal():
    """Against the same seeds without a baseline, each hand's reward falls by exactly the
    reward ditch.greedy earns in the learner's seat of that deal against the same opponent
    (played here in a match of its own on the recorded deck)."""
    from rummyzoo.agents.registry import make_agent
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    options = {"target_score": None}

    def run(baseline):
        env = BatchedSeatEnv(
            "ditch_rummy", 2, options, opponents=["ditch.smart"], num_envs=4,
            reward="margin", seed=9, duplicate_baseline=baseline,
        )  # fmt: skip
        env.reset()
        return _play_as("ditch.smart", env, 250, np.random.default_rng(1))

    plain, based = run(None), run("ditch.greedy")
    assert len(plain) == len(based) >= 8
    greedy = make_agent("ditch.greedy", "ditch_rummy", 2, options)
    smart = make_agent("ditch.smart", "ditch_rummy", 2, options)
    moved = 0
    for (own, seat, deck), (rest, seat_b, deck_b) in zip(plain, based, strict=True):
        assert seat == seat_b and np.array_equal(deck, deck_b)
        match = Match(make_game("ditch_rummy", 2, reward="margin", **options))
        match.reset(seed=0, deck=deck)
        players = [smart, smart]
        players[seat] = greedy
        while True:
            mover = match.current
            end = match.step(players[mover].act(match.observe(mover), match.legal_mask(), None))
            if end is not None:
                break
        assert rest == pytest.approx(own - end.rewards[seat], abs=1e-5)
        moved += end.rewards[seat] != 0
    assert moved >= 1


def test_a_hand_the_turn_cap_cuts_pays_no_baseline():
    """A cut hand is bootstrapped from the value of where it stopped, which already counts the
    baseline's result to come: its reward is the same with and without a baseline, while the
    hands that end pay less the baseline's result."""
    from rummyzoo.agents.registry import make_agent
    from rummyzoo.training.vec_env import act_batch

    options = {"target_score": None, "max_turns": 26}  # about half of greedy's hands are cut

    def run(baseline):
        env = BatchedSeatEnv(
            "ditch_rummy", 2, options, opponents=["ditch.greedy"], num_envs=4,
            reward="margin", seed=3, duplicate_baseline=baseline,
        )  # fmt: skip
        env.reset()
        rng = np.random.default_rng(2)
        agent = make_agent("ditch.greedy", "ditch_rummy", 2, options)
        totals, out = np.zeros(env.num_envs), []
        for _ in range(400):
            actions = act_batch(agent, env.engine.observations, env.action_masks(), rng)
            _, rewards, dones, infos = env.step(actions)
            totals += rewards
            for i in np.flatnonzero(dones).tolist():
                out.append((totals[i], infos[i]["TimeLimit.truncated"]))
                totals[i] = 0.0
        return out

    plain, based = run(None), run("ditch.smart")
    assert len(plain) == len(based)
    cut = [(a, b) for (a, t), (b, _) in zip(plain, based, strict=True) if t]
    ended = [(a, b) for (a, t), (b, _) in zip(plain, based, strict=True) if not t]
    assert cut and ended
    assert all(a == b for a, b in cut)
    assert any(a != b for a, b in ended)


def test_a_duplicate_baseline_needs_single_hands_on_the_batched_engine():
    from rummyzoo.envs.core import ConfigError
    from rummyzoo.training.config import ConfigLoadError

    base = ["variant=ditch_rummy", "env_options.target_score=null", "reward=margin"]
    config = load_config(CONFIGS / "smoke_ppo.yaml", [*base, "duplicate_baseline=ditch.smart"])
    assert config.duplicate_baseline == "ditch.smart"
    with pytest.raises(ConfigLoadError, match="compares single hands"):
        load_config(
            CONFIGS / "smoke_ppo.yaml",
            [
                "variant=ditch_rummy",
                "env_options.target_score=500",
                "duplicate_baseline=ditch.smart",
            ],
        )
    with pytest.raises(ConfigLoadError, match="needs vec_env: batched"):
        load_config(
            CONFIGS / "smoke_ppo.yaml", [*base, "vec_env=dummy", "duplicate_baseline=ditch.smart"]
        )
    with pytest.raises(ConfigLoadError, match="plays knock_rummy, not ditch_rummy"):
        load_config(CONFIGS / "smoke_ppo.yaml", [*base, "duplicate_baseline=knock.smart"])
    with pytest.raises(ConfigError, match="needs single hands"):
        BatchedSeatEnv("ditch_rummy", 2, {}, num_envs=2, duplicate_baseline="ditch.smart")


@pytest.mark.parametrize("variant", ["knock_rummy", "ditch_rummy", "rummy500"])
def test_a_short_ppo_run_with_a_duplicate_baseline(variant):
    smart = {
        "knock_rummy": "knock.smart",
        "ditch_rummy": "ditch.smart",
        "rummy500": "rummy500.smart",
    }
    config = load_config(
        CONFIGS / "smoke_ppo.yaml",
        [
            f"variant={variant}",
            "n_envs=8",
            "env_options.target_score=null",
            "reward=margin",
            f"duplicate_baseline={smart[variant]}",
        ],
    )
    env = build_vec_env(config)
    assert env.venv.duplicate_baseline == smart[variant]
    model = build_model(config, env, None)
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    env.close()


@pytest.mark.parametrize("batched", [True, False])
def test_each_opponents_result_against_the_learner_is_in_the_game_info(batched):
    """Ditch Rummy teams (4 seats, partners opposite): each opponent's side's points and
    whether it is a rival, as the self-play rating scores them; the batched env and the
    per-game env agree."""
    from rummyzoo.training.callbacks import snapshot_comparisons
    from rummyzoo.training.seat_env import SeatEnv

    options = {"teams": True, "target_score": None}
    if batched:
        env = BatchedSeatEnv("ditch_rummy", 4, options, opponents=["random"], num_envs=3, seed=1)
        env.reset()
    else:
        env = SeatEnv("ditch_rummy", 4, options, opponents=["random"])
        env.reset(seed=1)
    rng = np.random.default_rng(1)
    games = []
    while len(games) < 4:
        if batched:
            _obs, _r, dones, infos = env.step(_random_actions(env, rng))
            games += [infos[i]["game"] for i in np.flatnonzero(dones)]
        else:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _obs, _r, term, trunc, info = env.step(action)
            if term or trunc:
                games.append(info["game"])
                env.reset()
    for game in games:
        seat = game["seat"]
        others = [s for s in range(4) if s != seat]
        partner = (seat + 2) % 4
        assert game["rivals"] == [s != partner for s in others]
        # a partner's side is the learner's own
        assert game["opponent_points"][others.index(partner)] == game["points"]
        rivals = [p for p, r in zip(game["opponent_points"], game["rivals"], strict=True) if r]
        assert rivals[0] == rivals[1]  # the two rivals are one team
        labelled = {**game, "opponents": ["self@0", "self@100", "self@200"]}
        expected = (
            1.0 if game["points"] > rivals[0] else (0.5 if game["points"] == rivals[0] else 0.0)
        )
        assert snapshot_comparisons(labelled) == [
            (int(label[5:]), expected)
            for label, rival in zip(labelled["opponents"], game["rivals"], strict=True)
            if rival
        ]


def test_snapshot_comparisons_are_wins_not_points():
    """Ditch Rummy and 500 Rum hands score positive points for both players: a learner that
    scored 120 against a snapshot's 150 lost that comparison."""
    from rummyzoo.training.callbacks import snapshot_comparisons

    game = {"points": 120.0, "opponents": ["self@4096", "random"], "opponent_points": [150.0, 90.0]}
    game |= {"rivals": [True, True], "truncated": False}
    assert snapshot_comparisons(game) == [(4096, 0.0)]
    assert snapshot_comparisons({**game, "points": 150.0}) == [(4096, 0.5)]
    assert snapshot_comparisons({**game, "truncated": True}) == []


def test_only_int_actions_play_and_one_per_game():
    """A float is no action id (the per-game env penalises it too): nothing is cut down to an
    int and played; a wrong count of actions is refused by name."""
    env = BatchedSeatEnv("knock_rummy", 2, {}, opponents=["random"], num_envs=2, seed=3)
    env.reset()
    before = env.engine.observations.copy()
    _obs, rewards, dones, infos = env.step(np.array([1.7, 0.99]))
    assert rewards.tolist() == [-1.0, -1.0] and not dones.any()
    assert [info["illegal_action"] for info in infos] == [1.7, 0.99]
    np.testing.assert_array_equal(env.engine.observations, before)  # no game moved
    for wrong in (np.array([0, 0, 0]), np.zeros((1, 2), dtype=np.int64)):
        with pytest.raises(
            ValueError,
            match=r"need one action per game \(2: shape \(2,\) or \(2, 1\)\), got an array "
            rf"of shape \({wrong.shape[0]},",
        ):
            env.step(wrong)  # (a 1 x 2 array, two actions in one row, was played as a row)
    np.testing.assert_array_equal(env.engine.observations, before)
    env.step(np.flatnonzero(env.action_masks()[0])[:1].repeat(2)[:, None])  # (N, 1): SB3's


@pytest.mark.parametrize("failure", [KeyboardInterrupt, ValueError])
@pytest.mark.parametrize("variant", ["knock_rummy", "ditch_rummy"])
def test_a_step_cut_short_while_opponents_move_is_refused_until_a_reset(variant, failure):
    """Ctrl-C or an opponent's error after the learner's move and before the opponents' left
    the games at an opponent's turn: the next step played the learner's action in the
    opponent's seat (or failed naming another player's illegal action), with the learner's
    stale mask. Now every use but a reset is refused by name, and a reset deals again."""
    env = BatchedSeatEnv(variant, 2, {}, opponents=["random"], num_envs=3, seed=5)
    env.reset()
    rng = np.random.default_rng(0)
    policy = next(p for row in env.policies for p in row if p is not None)
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        raise failure("stop")

    policy.act = policy.act_batch = failing  # the opponents' next move fails
    with pytest.raises(failure):
        for _ in range(20):
            env.step(uniform_legal_actions(env.action_masks(), rng))
    assert calls
    del policy.act, policy.act_batch
    for call in (env.action_masks, lambda: env.step(np.zeros(3, dtype=np.int64))):
        with pytest.raises(RuntimeError, match=r"cut short .* call reset\(\) to deal every game"):
            call()
    obs = env.reset()
    assert (env.engine.current == env.seats).all() and obs.shape[0] == 3
    for _ in range(20):
        env.step(uniform_legal_actions(env.action_masks(), rng))


def test_a_per_game_step_cut_short_while_opponents_move_is_refused_until_a_reset():
    """The per-game env (``vec_env: dummy`` or ``subproc``) as the batched one: after Ctrl-C
    while the opponents moved, the next step played the learner's action in an opponent's
    seat."""
    env = SeatEnv("knock_rummy", 2, {}, opponents=["knock.greedy"])
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    match = env.match
    while match.current == env.seat:  # the learner's moves played, then the stop landed
        match.play(int(np.flatnonzero(match.legal_mask())[0]))
    with pytest.raises(RuntimeError, match=r"cut short .* at an opponent's turn: call reset\(\)"):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    env.reset(seed=6)
    for _ in range(20):
        _obs, _r, done, truncated, _info = env.step(
            int(rng.choice(np.flatnonzero(env.action_masks())))
        )
        if done or truncated:
            env.reset()


def test_misuse_of_the_batched_env_is_refused_by_name():
    with pytest.raises(
        ValueError, match=r"opponents must be a list of agent names, got 'knock\.greedy'"
    ):
        BatchedSeatEnv("knock_rummy", 2, {}, opponents="knock.greedy", num_envs=2)
    with pytest.raises(ValueError, match="opponent weights must be positive numbers"):
        OpponentMixture([("random", float("nan"))], "knock_rummy", 2, {})
    for cls in (BatchedSeatEnv, SeatEnv):  # "no" was taken for True
        for flag in ("bootstrap_cuts", "mask_in_obs"):
            with pytest.raises(ValueError, match=f"{flag} must be True or False, got 'no'"):
                cls("knock_rummy", 2, {}, opponents=["random"], **{flag: "no"})
    env = BatchedSeatEnv("knock_rummy", 2, {}, opponents=["random"], num_envs=2, seed=0)
    env.set_options({"deck": list(range(52))})
    with pytest.warns(UserWarning, match="ignores reset options"):
        env.reset()
    env.reset()  # the options were used up: no warning again
    env.close()
    for call in (env.reset, lambda: env.step(np.zeros(2, dtype=np.int64))):
        with pytest.raises(RuntimeError, match="this BatchedSeatEnv is closed"):
            call()


def test_the_per_game_env_of_processes_once_closed_says_so():
    """``vec_env: subproc`` used after ``close()`` said a game's process had died."""
    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "knock_bench.yaml",
        ["vec_env=subproc", "n_envs=2", "env_options.target_score=null"],
    )
    env = build_vec_env(config)
    env.reset()
    env.close()
    env.close()  # twice is fine
    calls = (env.reset, lambda: env.step(np.zeros(2, dtype=np.int64)),
             lambda: env.get_attr("seat"), lambda: env.env_method("action_masks"))  # fmt: skip
    for call in calls:
        with pytest.raises(
            RuntimeError, match=r"^this training env \(vec_env: subproc\) is closed$"
        ):
            call()


@pytest.mark.parametrize(
    ("variant", "players", "options", "opponent", "features", "shaping"),
    [
        ("knock_rummy", 2, {"target_score": None}, "knock.greedy", "knock_deadwood", None),
        ("knock_rummy", 2, {"target_score": 30}, "knock.greedy", None, "knock_deadwood"),
        ("ditch_rummy", 2, {"target_score": None}, "ditch.greedy", None, "ditch_hand_margin"),
        ("ditch_rummy", 4, {"target_score": None, "teams": True}, "ditch.greedy",
         "ditch_actions", None),
        ("rummy500", 2, {"target_score": None}, "rummy500.greedy", "rummy500_actions", None),
        ("rummy500", 3, {"target_score": 100}, "rummy500.greedy", None, None),
        # 4 players of single Knock hands: an opponent often knocks before the learner's first
        # decision, so matches are skipped (the seat rotates on in both envs)
        ("knock_rummy", 4, {"target_score": None}, "knock.greedy", None, None),
    ],
)  # fmt: skip
def test_one_batched_game_is_the_seat_env_step_by_step(
    variant, players, options, opponent, features, shaping
):
    """What the batched env claims: the learner gets what the per-game SeatEnv gives it, the
    same observations, masks, (shaped) rewards, ends and game summaries, match after match."""
    from rummyzoo.training.seat_env import SeatEnv

    kw = {"opponents": [opponent], "reward": "margin", "reward_scale": 100, "gamma": 0.99}
    kw |= {"features": features, "shaping": shaping}
    single = SeatEnv(variant, players, options, **kw)
    batched = BatchedSeatEnv(variant, players, options, num_envs=1, seed=5, **kw)
    obs, _ = single.reset(seed=5)
    rows = batched.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for step in range(300):
        assert np.array_equal(obs, rows[0]), step
        mask = single.action_masks()
        assert np.array_equal(mask, batched.action_masks()[0]), step
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = single.step(action)
        rows, rewards, dones, infos = batched.step(np.array([action]))
        assert reward == pytest.approx(float(rewards[0]), abs=1e-5), step
        assert (terminated or truncated) == bool(dones[0]), step
        if dones[0]:
            assert info["game"] == infos[0]["game"], step
            obs, _ = single.reset()
            ends += 1
    assert ends >= 5
    assert single.skipped_games == batched.skipped_games
    if players == 4 and variant == "knock_rummy":
        assert batched.skipped_games > 0  # the case this row is here for


@pytest.mark.parametrize("variant", ["knock_rummy", "ditch_rummy"])
def test_a_copied_batched_env_plays_on_as_the_original(variant):
    """A deep copy of the batched training env (opponents that draw from its random stream
    included) steps as the original does: its copied opponents take the original's places."""
    import copy

    env = BatchedSeatEnv(
        variant,
        3,
        env_options={"target_score": None},
        opponents=["random", "random"],
        num_envs=8,
        learner_seat="random",
        seed=3,
    )
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(uniform_legal_actions(env.action_masks().astype(np.int8), rng))
    copied = copy.deepcopy(env)
    for _ in range(200):
        actions = uniform_legal_actions(env.action_masks().astype(np.int8), rng)
        obs, rewards, dones, _ = env.step(actions)
        obs2, rewards2, dones2, _ = copied.step(actions)
        assert np.array_equal(obs, obs2) and np.array_equal(rewards, rewards2)
        assert np.array_equal(dones, dones2)


def _pool_env(tmp_path, snapshots, deterministic=False, algo="ppo", others=()):
    """Knock Rummy's batched env against a self-play pool of ``snapshots`` fresh networks (and
    the agents ``others`` as well, each as likely as the pool)."""
    from rummyzoo.training.bench import _fill_pool
    from rummyzoo.training.config import validate_config

    config = validate_config(
        {
            "variant": "knock_rummy",
            "algo": algo,
            "vec_env": "batched",
            "n_envs": 48,
            "seed": 3,
            "opponents": [{"name": name} for name in (*others, "self")],
            "self_play": {"pool_size": snapshots, "sampling": "uniform"},
            "env_options": {"target_score": None},
            "policy_kwargs": {"net_arch": [32, 32]},
        }
    )
    env = build_vec_env(config)
    _fill_pool(config, env, snapshots, tmp_path)
    batched = env.venv if hasattr(env, "venv") else env
    if deterministic:
        for snap in batched.opponents.pool:
            batched.opponents._snapshot_policy(snap).deterministic = True
    return env, batched


@pytest.mark.parametrize(
    ("algo", "deterministic", "others"),
    [
        ("ppo", False, ()),
        ("ppo", True, ()),
        ("dqn", False, ()),
        ("ppo", False, ("random", "knock.greedy")),
    ],
)
def test_a_pool_decides_in_one_call_as_snapshot_by_snapshot(
    tmp_path, monkeypatch, algo, deterministic, others
):
    """The snapshots of a self-play pool decide together (one act_groups call: inputs, masks
    and draws once) and play exactly the games they play one by one, other opponents (random
    play draws from the same generator) among them."""
    from rummyzoo.agents import checkpoints
    from rummyzoo.training import vec_env as vec_module

    calls = []
    act_groups = checkpoints.act_groups

    def counted(policies, counts, *args):
        calls.append(len(policies))
        return act_groups(policies, counts, *args)

    monkeypatch.setattr(checkpoints, "act_groups", counted)
    runs = []
    for together in (True, False):
        if not together:
            monkeypatch.setattr(vec_module, "_runs_together", lambda groups: [[g] for g in groups])
        env, batched = _pool_env(tmp_path / str(together), 3, deterministic, algo, others)
        obs = env.reset()
        rng = np.random.default_rng(4)
        seen = []
        for _ in range(60):
            obs, rewards, dones, _ = env.step(_random_actions(env, rng))
            seen.append((obs.copy(), rewards.copy(), dones.copy()))
        runs.append((seen, batched.rng.bit_generator.state))
        env.close()
    # the three snapshots decided together; with other opponents, those next to each other
    # in the opponents' order (here two)
    assert max(calls) == (2 if others else 3)
    assert runs[0][1] == runs[1][1]  # the same draws
    for (a, ra, da), (b, rb, db) in zip(runs[0][0], runs[1][0], strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(da, db)


def test_act_groups_refuses_what_it_cannot_decide(tmp_path):
    from rummyzoo.agents.checkpoints import act_groups

    env, batched = _pool_env(tmp_path, 2)
    env.reset()
    engine = batched.engine
    obs, masks = engine.observations[:6].copy(), engine.action_masks[:6].astype(bool)
    a, b = (batched.opponents._snapshot_policy(s) for s in batched.opponents.pool)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="counts"):
        act_groups([a, b], [2, 3], obs, masks, rng)
    empty = masks.copy()
    empty[4] = False
    with pytest.raises(ValueError, match=f"{b.name}: act called with an all-zero action mask"):
        act_groups([a, b], [3, 3], obs, empty, rng)
    b.deterministic = True
    with pytest.raises(ValueError, match="inputs_key"):
        act_groups([a, b], [3, 3], obs, masks, rng)
    assert rng.bit_generator.state == state  # nothing drawn
    b.deterministic = False
    got = act_groups([a, b], [3, 3], obs, masks, rng)
    assert masks[np.arange(6), got].all()
    env.close()


def test_runs_together_keep_the_opponents_order():
    """Snapshots next to each other in the order share a call; another opponent between them
    cuts the run, so every policy draws where it drew alone."""
    from types import SimpleNamespace

    from rummyzoo.agents.checkpoints import CheckpointPolicy
    from rummyzoo.agents.random_agent import RandomPolicy
    from rummyzoo.training.vec_env import _runs_together

    def checkpoint(key):
        policy = CheckpointPolicy.__new__(CheckpointPolicy)
        policy.algo, policy.deterministic, policy.mask_in_obs = "ppo", False, False
        policy._game_key = key
        return policy

    a, b, c, d = (checkpoint("knock") for _ in range(4))
    other_game = checkpoint("ditch")
    rand = RandomPolicy()
    groups = [(p, SimpleNamespace(name=i)) for i, p in enumerate([a, b, rand, c, d, other_game])]
    runs = _runs_together(groups)
    assert [[ks.name for _, ks in run] for run in runs] == [[0, 1], [2], [3, 4], [5]]


def test_a_snapshot_that_fails_in_the_pools_call_is_named(tmp_path):
    """Where one snapshot's network raises inside the pool's one call, the snapshots decide
    one by one again and the error names the snapshot that raised, with its games."""
    env, batched = _pool_env(tmp_path, 3)
    env.reset()
    snapshots = [batched.opponents._snapshot_policy(s) for s in batched.opponents.pool]
    broken = snapshots[1]

    def fail(tensor):
        raise RuntimeError("network bug")

    broken._scores = fail
    labels = {batched.opponents.snapshot_label(s) for s in batched.opponents.pool}
    with pytest.raises(RuntimeError, match="network bug") as raised:
        for _ in range(20):
            env.step(_random_actions(env, np.random.default_rng(0)))
    (note,) = raised.value.__notes__
    named = note.split("'")[1]
    assert named in labels and "games at once" in note
    assert named == batched.opponents.snapshot_label(batched.opponents.pool[1])
    env.close()


def test_a_hands_margin_in_team_games_is_against_the_best_rival_not_the_partner():
    """charts/score_margin: the learner's hand points less the best seat of another side (it
    took the partner's as well, so a team's winning hand could show a loss)."""
    from rummyzoo.training.seat_env import SeatEnv

    options = {"target_score": None, "teams": True}
    kw = {"opponents": ["ditch.greedy"], "reward": "margin", "reward_scale": 100}
    batched = BatchedSeatEnv("ditch_rummy", 4, options, num_envs=1, seed=2, **kw)
    single = SeatEnv("ditch_rummy", 4, options, **kw)
    batched.reset()
    single.reset(seed=2)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        action = int(rng.choice(np.flatnonzero(single.action_masks())))
        seat = int(batched.seats[0])
        _, _, dones, infos = batched.step(np.array([action]))
        single.step(action)
        engine = batched.engine
        if engine.hand_done[0] and dones[0] and not engine.truncated[0]:
            points = engine.hand_points[0]
            partner = (seat + 2) % 4
            rival = max(points[s] for s in range(4) if s not in (seat, partner))
            game = infos[0]["game"]
            assert game["margins"][-1] == pytest.approx(points[seat] - rival)
            checked += 1
        if dones[0]:
            single.reset()
    assert checked >= 3
