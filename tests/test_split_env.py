"""The batched training env split between processes (``workers`` > 1): the same games, seeded
and reproducible, every share's results in the league, snapshots in every share, failures named."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from rummyzoo.envs.core import ConfigError
from rummyzoo.envs.vector import uniform_legal_actions
from rummyzoo.training.config import load_config
from rummyzoo.training.split_env import SplitSeatEnv
from rummyzoo.training.train import build_batched_env, build_model, build_vec_env

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def _config(*overrides: str):
    return load_config(
        CONFIGS / "smoke_ppo.yaml",
        ["n_envs=10", "env_options.target_score=null", "opponents.0.name=random", *overrides],
    )


def _play(env, steps: int, seed: int = 0) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    out = [(env.reset(), env.action_masks())]
    for _ in range(steps):
        actions = uniform_legal_actions(env.action_masks().astype(np.int8), rng)
        env.step_async(actions)
        obs, rewards, dones, infos = env.step_wait()
        out.append((obs, env.action_masks(), rewards, dones))
        assert env.action_masks().any(axis=1).all()  # the learner can act in every game
        for info, done in zip(infos, dones, strict=True):
            assert ("game" in info) == bool(done)
            if done:
                assert info["terminal_observation"].shape == obs.shape[1:]
    return out


def test_games_start_from_the_seeds_they_have_in_one_process():
    one = build_batched_env(_config())
    split = build_batched_env(_config("workers=3"))
    try:
        assert isinstance(split, SplitSeatEnv) and split.processes == 3
        assert split.bounds.tolist() == [0, 4, 7, 10]
        for env in (one, split):
            env.seed(11)
        np.testing.assert_array_equal(split.reset(), one.reset())
        np.testing.assert_array_equal(split.action_masks(), one.action_masks())
        assert split.reset_infos == one.reset_infos
    finally:
        one.close()
        split.close()


def test_a_seeded_split_run_is_reproducible():
    runs = []
    for _ in range(2):
        env = build_batched_env(_config("workers=2"))
        try:
            env.seed(3)
            runs.append(_play(env, 40))
        finally:
            env.close()
    for first, second in zip(*runs, strict=True):
        for a, b in zip(first, second, strict=True):
            np.testing.assert_array_equal(a, b)
    assert sum(step[3].sum() for step in runs[0][1:]) > 10  # matches ended meanwhile


def test_the_league_records_every_shares_matches():
    env = build_batched_env(_config("workers=2", "league.sampling=pfsp"))
    try:
        rng = np.random.default_rng(0)
        env.reset()
        finished = {"local": 0, "helper": 0}
        for _ in range(40):
            env.step_async(uniform_legal_actions(env.action_masks().astype(np.int8), rng))
            _, _, dones, infos = env.step_wait()
            for k, (info, done) in enumerate(zip(infos, dones, strict=True)):
                if done and not info["game"]["truncated"]:
                    finished["local" if k < 5 else "helper"] += 1
        assert finished["local"] > 0 and finished["helper"] > 0
        recorded = len(env.opponents._results["random"])
        window = env.opponents.pfsp_window
        assert recorded == min(window, finished["local"] + finished["helper"])
    finally:
        env.close()


def test_a_snapshot_reaches_every_share(tmp_path):
    config = _config("workers=2")
    env = build_vec_env(config)
    try:
        model = build_model(config, env, None)
        from rummyzoo.agents.checkpoints import save_checkpoint
        from rummyzoo.training.train import checkpoint_meta

        path = tmp_path / "snapshot.rz"
        save_checkpoint(model, path, checkpoint_meta(config, 0))
        env.env_method("add_snapshot", str(path), 5)
        split = env.venv
        assert [s.steps for s in split.opponents.pool] == [5]
        (helper_pool,) = split._ask(("get", "opponents.pool"))
        assert [(s.path, s.steps) for s in helper_pool] == [(str(path), 5)]
    finally:
        env.close()


def _failing_share(config_data, num_envs, first):
    if first > 0:
        raise ValueError(f"no share from game {first}")
    from rummyzoo.training.train import share_env

    return share_env(config_data, num_envs, first)


def test_a_helper_that_fails_is_named_and_the_env_closes():
    data = _config().model_dump(mode="json")
    with pytest.raises(RuntimeError, match=r"helper process 1 failed:(.|\n)*no share from game 5"):
        SplitSeatEnv(functools.partial(_failing_share, data), 10, processes=2)


@pytest.mark.parametrize("call", ["step", "reset"])
def test_a_helper_that_dies_is_named_whatever_the_env_was_doing(call):
    """A helper killed between two calls: the next call's message to it breaks the pipe, and
    the env says which helper died and how, and closes. A bare BrokenPipeError had passed for
    the reader of stdout gone: ``rummyzoo train`` then ended with no message at all."""
    import os
    import signal

    env = build_batched_env(_config("workers=2"))
    env.reset()
    helper = env._procs[0]
    blocks = [b.name for b in env._blocks]
    os.kill(helper.pid, signal.SIGKILL)
    helper.join(timeout=10)
    with pytest.raises(RuntimeError, match=r"helper process 1 died \(exit code -9\)"):
        if call == "step":
            env.step(uniform_legal_actions(env.action_masks(), np.random.default_rng(0)))
        else:
            env.reset()
    assert env._closed
    assert not [name for name in blocks if Path("/dev/shm", name).exists()]


def _share_with_a_failing_opponent(config_data, num_envs, first, fail_at=1):
    """A share whose opponent plays an illegal action in the helper's games (first > 0), at
    its ``fail_at``-th decision."""
    from rummyzoo.agents.random_agent import RandomPolicy
    from rummyzoo.training.train import share_env

    class Failing(RandomPolicy):
        calls = 0

        def act_batch(self, observations, masks, rng):
            actions = super().act_batch(observations, masks, rng)
            Failing.calls += 1
            if Failing.calls == fail_at:
                actions[0] = int(np.flatnonzero(masks[0] == 0)[0])
            return actions

    env = share_env(config_data, num_envs, first)
    if first > 0:
        env.opponents._fixed["random"] = Failing()
    return env


def test_an_opponent_that_fails_in_a_helper_is_named_and_the_env_closes():
    data = _config().model_dump(mode="json")
    env = SplitSeatEnv(functools.partial(_share_with_a_failing_opponent, data), 10, processes=2)
    procs = list(env._procs)
    try:
        with pytest.raises(
            RuntimeError, match=r"helper process 1 failed:(.|\n)*IllegalActionError"
        ):
            _play(env, 20)
        with pytest.raises(RuntimeError, match="closed"):
            env.reset()
        assert len(procs) == 1 and not procs[0].is_alive()  # the helper was stopped
    finally:
        env.close()


def test_split_sizes_are_checked():
    data = _config().model_dump(mode="json")
    from rummyzoo.training.train import share_env

    make = functools.partial(share_env, data)
    for processes in (1, 11, True):
        with pytest.raises(ConfigError, match="processes"):
            SplitSeatEnv(make, 10, processes=processes)


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_short_runs_train_on_two_processes(tmp_path, algo):
    """With a warm start, as every shipped config has one (its teacher's games are played in
    this process: the same data as with one process)."""
    from rummyzoo.training.train import train

    overrides = ["n_envs=8", "n_timesteps=400", "env_options.target_score=null"]
    warm = ["pretrain.teacher=knock.greedy", "pretrain.decisions=200", "pretrain.epochs=1"]
    result = train(
        load_config(CONFIGS / f"smoke_{algo}.yaml", [*overrides, "workers=2", *warm]),
        run_dir=tmp_path / "run",
    )
    assert result["steps"] >= 400
    assert (tmp_path / "run" / "checkpoints" / "best.rz").exists()
    one = train(
        load_config(CONFIGS / f"smoke_{algo}.yaml", [*overrides, *warm]), run_dir=tmp_path / "one"
    )
    timings = ("collect_seconds", "fit_seconds")
    same = {k: v for k, v in result["pretrain"].items() if k not in timings}
    assert same == {k: v for k, v in one["pretrain"].items() if k not in timings}


def _replay_share(config, part: slice):
    """A share of a run's games in this process, seeded as the run seeds it (game ``i`` of the
    run: ``config.game_seed(i)``)."""
    from rummyzoo.training.train import share_env

    share = share_env(config.model_dump(mode="json"), part.stop - part.start, part.start)
    share.seed(config.game_seed(part.start))
    return share


def test_ppo_rollouts_over_processes_record_the_games_their_actions_play():
    """Each process plays its games' rollout with its own copy of the policy: the buffer holds,
    for every game, the transitions that replaying its recorded actions in one process gives,
    the helpers' log-probabilities and values are the learner's network's, the callbacks see
    each ended match's last observation (the helpers' come through shared memory), and the
    next rollout goes on from where this one left every game."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Keep(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.infos: list[list[dict]] = []

        def _on_step(self) -> bool:
            self.infos.append(self.locals["infos"])
            return True

    config = _config("workers=3", "hyperparams.n_steps=9", "seed=5")
    env = build_vec_env(config)
    model = build_model(config, env, None)
    split = env.unwrapped
    steps = model.n_steps
    keep = Keep()
    try:
        _, callback = model._setup_learn(10_000, keep)
        assert model.collect_rollouts(env, callback, model.rollout_buffer, steps)
        buf = model.rollout_buffer
        assert buf.full and buf.pos == steps
        assert model.num_timesteps == steps * config.n_envs
        # the run's episode statistics are every ended match's, step by step in game order
        ended_episodes = [i["episode"] for step in keep.infos for i in step if "episode" in i]
        assert ended_episodes and list(model.ep_info_buffer) == ended_episodes[-100:]
        shares = [split.local_games, *split.helper_slices]
        assert [s.start for s in shares] == split.bounds[:-1].tolist()
        ended = 0
        for part in shares:
            share = _replay_share(config, part)
            obs = share.reset()
            np.testing.assert_array_equal(buf.episode_starts[0, part], True)
            returns = np.zeros(part.stop - part.start, dtype=np.float32)
            lengths = np.zeros(part.stop - part.start, dtype=np.int32)
            for t in range(steps):
                np.testing.assert_array_equal(buf.observations[t, part], obs)
                np.testing.assert_array_equal(buf.action_masks[t, part], share.action_masks())
                share.step_async(buf.actions[t, part, 0].astype(np.int64))
                obs, rewards, dones, infos = share.step_wait()
                np.testing.assert_allclose(buf.rewards[t, part], rewards, rtol=1e-6)
                returns += buf.rewards[t, part]
                lengths += 1
                for i in np.flatnonzero(dones):
                    seen = keep.infos[t][part.start + i]
                    np.testing.assert_array_equal(
                        seen["terminal_observation"], infos[i]["terminal_observation"]
                    )
                    assert seen["game"] == infos[i]["game"]
                    # VecMonitor's return and length, as numpy scalars (the helpers' come
                    # through shared memory)
                    episode = seen["episode"]
                    assert type(episode["r"]) is np.float32 and episode["r"] == returns[i]
                    assert type(episode["l"]) is np.int32 and episode["l"] == lengths[i]
                    assert isinstance(episode["t"], float)
                    returns[i], lengths[i] = 0, 0
                if t + 1 < steps:
                    np.testing.assert_array_equal(buf.episode_starts[t + 1, part], dones)
                ended += int(dones.sum())
            np.testing.assert_array_equal(model._last_obs[part], obs)
            np.testing.assert_array_equal(model._last_episode_starts[part], dones)
        assert ended > 0  # games ended and started again within the rollout
        # the helpers' network is the learner's: the same log-probabilities and values
        import torch as th

        flat = slice(split.helper_slices[0].start, config.n_envs)
        obs_t = th.as_tensor(buf.observations[:, flat].reshape(-1, buf.obs_shape[0]))
        actions_t = th.as_tensor(buf.actions[:, flat].reshape(-1))
        masks = buf.action_masks[:, flat].reshape(len(actions_t), -1)
        with th.no_grad():
            values, log_probs, _ = model.policy.evaluate_actions(obs_t, actions_t, masks)
        np.testing.assert_allclose(buf.log_probs[:, flat].reshape(-1), log_probs, atol=1e-5)
        np.testing.assert_allclose(buf.values[:, flat].reshape(-1), values.reshape(-1), atol=1e-5)
        # the next rollout starts where this one left every game
        last_obs, last_starts = model._last_obs.copy(), model._last_episode_starts.copy()
        finals = [
            (info, info["terminal_observation"].copy())
            for step in keep.infos
            for info in step
            if "terminal_observation" in info
        ]
        assert model.collect_rollouts(env, callback, model.rollout_buffer, steps)
        np.testing.assert_array_equal(buf.observations[0], last_obs)
        np.testing.assert_array_equal(buf.episode_starts[0], last_starts)
        blocks = [views["terminal_obs"] for _, _, views in split._rollouts[1]]
        for info, final in finals:  # the shared block is reused: the infos hold copies
            np.testing.assert_array_equal(info["terminal_observation"], final)
            assert not any(np.shares_memory(info["terminal_observation"], b) for b in blocks)
    finally:
        env.close()


def test_ppo_rollouts_start_each_helper_from_the_whole_league():
    """With PPO's rollouts every helper weighs its opponents by every share's results: it
    starts each rollout from the learner's league and adds its own share's games to it."""
    config = _config(
        "workers=2",
        "league.sampling=pfsp",
        "league.window=100000",
        "hyperparams.n_steps=16",
        "opponents=[{name: random, weight: 1}, {name: knock.greedy, weight: 1}]",
    )
    env = build_vec_env(config)
    model = build_model(config, env, None)
    split = env.unwrapped
    try:
        _, callback = model._setup_learn(10_000, None)
        assert model.collect_rollouts(env, callback, model.rollout_buffer, model.n_steps)
        league = split.opponents.results()
        (helper,) = split._ask(("get", "opponents._results"))
        own = {label: list(found) for label, found in helper.items()}
        # so far the helper knows only its own share's games, a part of the league
        assert sum(map(len, own.values())) < sum(map(len, league.values()))
        split.start_rollouts(model.policy, 16, 0.99, 0)
        _, _, infos = split.finish_rollouts(model._last_obs[split.local_games])
        new = {}
        for _, _, info in infos:
            game = info.get("game")
            if game is not None and not game["truncated"]:
                for label in game["opponents"]:
                    new.setdefault(label, []).append(float(game["winner"]))
        assert new  # the helper's games ended meanwhile
        (helper,) = split._ask(("get", "opponents._results"))
        for label in set(league) | set(new):
            assert list(helper[label]) == league.get(label, []) + new.get(label, [])
    finally:
        env.close()


def test_a_helpers_steps_come_in_while_this_process_plays_its_share():
    """The helpers send each step of their rollout as soon as it is played: this process takes
    it in while it plays its own share (``poll_rollouts``), copying the helper's rows into
    ``into`` before the rollout is finished, and what it took is what the helper recorded."""
    import time

    config = _config("workers=2", "seed=3")
    env = build_vec_env(config)
    model = build_model(config, env, None)
    split = env.unwrapped
    steps, n = 12, split.num_envs
    (part,) = split.helper_slices
    into = {
        "obs": np.full((steps, n, split.local.input_size), np.nan, dtype=np.float32),
        "masks": np.zeros((steps, n, split.num_actions), dtype=np.float32),
        "actions": np.full((steps, n), -1.0, dtype=np.float32),
        "values": np.full((steps, n), np.nan, dtype=np.float32),
        "log_probs": np.full((steps, n), np.nan, dtype=np.float32),
        "rewards": np.full((steps, n), np.nan, dtype=np.float32),
        "dones": np.zeros((steps, n), dtype=bool),
    }
    try:
        model._setup_learn(1_000, None)
        with pytest.raises(
            ValueError, match=r"into\['obs'\] must have shape \(12, 10, \d+\), got \(3, 10,"
        ):
            split.start_rollouts(model.policy, steps, 0.99, 0, into={"obs": into["obs"][:3]})
        with pytest.raises(ValueError, match=r"into\['masks'\] must have shape \(12, 10, \d+\)"):
            split.start_rollouts(
                model.policy, steps, 0.99, 0, into={"masks": into["masks"][..., 1:]}
            )
        with pytest.raises(ValueError, match=r"no rollout records: \['extra'\]"):
            split.start_rollouts(model.policy, steps, 0.99, 0, into={"extra": into["obs"]})
        assert not split._rolling  # refused before anything was sent
        split.start_rollouts(model.policy, steps, 0.99, 0, into=into)
        deadline = time.monotonic() + 30
        while np.isnan(into["values"][steps - 1, part]).any():  # every step in, unfinished
            assert time.monotonic() < deadline, "the helper's steps never came in"
            split.poll_rollouts()
            time.sleep(0.001)
        assert split._rolling
        taken = {key: array[:, part].copy() for key, array in into.items()}
        new_obs, (rollout,), infos = split.finish_rollouts(model._last_obs[split.local_games])
        for key, array in taken.items():  # all taken before the rollout was finished
            np.testing.assert_array_equal(array, rollout[key].astype(array.dtype), err_msg=key)
        np.testing.assert_array_equal(into["dones"][:, part], rollout["dones"])
        ended = [(t, game) for t, game, info in infos if "game" in info]
        assert ended == [
            (t, part.start + i) for t, i in zip(*np.nonzero(rollout["dones"]), strict=True)
        ]
        for _, _, info in infos:  # the last observations came through shared memory
            if "terminal_observation" in info:
                assert info["terminal_observation"].shape == new_obs.shape[1:]
        # the local share's columns are this process's to write: untouched here
        assert np.isnan(into["values"][:, split.local_games]).all()
    finally:
        env.close()


def test_a_helper_that_fails_mid_rollout_is_named_after_the_steps_it_sent():
    """A helper that fails after it has sent some of its rollout's steps: its failure, not a
    step, is what the rollout ends with, and the env closes."""
    from stable_baselines3.common.vec_env import VecMonitor

    config = _config("workers=2", "hyperparams.n_steps=16")
    data = config.model_dump(mode="json")
    share = functools.partial(_share_with_a_failing_opponent, data, fail_at=12)
    split = SplitSeatEnv(share, 10, processes=2)
    env = VecMonitor(split)
    model = build_model(config, env, None)
    procs = list(split._procs)
    statuses = []
    message = split._message
    try:
        _, callback = model._setup_learn(1_000, None)

        def spied(h):
            status, value = message(h)
            statuses.append(status)
            return status, value

        split._message = spied
        with pytest.raises(
            RuntimeError, match=r"helper process 1 failed:(.|\n)*IllegalActionError"
        ):
            model.collect_rollouts(env, callback, model.rollout_buffer, model.n_steps)
        assert "step" in statuses  # steps came in before the failure
        assert split._closed and not procs[0].is_alive()
        assert split._poller is None and split._into is None
    finally:
        split.close()


@pytest.mark.parametrize("select_poll", [True, False])
def test_the_poller_finds_the_pipes_with_a_message(monkeypatch, select_poll):
    """Which helpers have a message waiting, without waiting: by ``select.poll``, or by
    multiprocessing's ``wait`` where there is no ``select.poll``; a helper done is not asked."""
    import multiprocessing
    import select

    from rummyzoo.training.split_env import _Poller

    if not select_poll:
        monkeypatch.delattr(select, "poll")
    pipes = [multiprocessing.Pipe() for _ in range(3)]
    try:
        poller = _Poller([ours for ours, _ in pipes])
        assert poller.ready() == []
        pipes[2][1].send_bytes(b"x")
        pipes[0][1].send_bytes(b"y")
        assert sorted(poller.ready()) == [0, 2]
        assert pipes[0][0].recv_bytes() == b"y"
        assert poller.ready() == [2]
        poller.done(2)
        assert poller.ready() == []
        pipes[1][1].close()  # a helper gone: its pipe reads as ready, and reading it says so
        assert poller.ready() == [1]
    finally:
        for ours, theirs in pipes:
            ours.close()
            theirs.close()


def test_an_interrupt_while_the_helpers_build_their_policy_closes_the_env(monkeypatch):
    """Ctrl-C while the helpers build their copies of the policy (the first rollout's start)
    leaves their answers unread: the env closes, rather than take them later for a rollout's."""
    config = _config("workers=2")
    env = build_vec_env(config)
    model = build_model(config, env, None)
    split = env.unwrapped
    model._setup_learn(1_000, None)

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(split, "_replies", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            split.start_rollouts(model.policy, 4, 0.99, 0)
        assert split._closed and split._weights is None and not split._rolling
    finally:
        env.close()


def test_a_step_where_an_answer_is_due_is_an_error(monkeypatch):
    """A helper's message out of step with the requests (a rollout's step where an answer is
    due) closes the env and says so, rather than pass for the answer."""
    from rummyzoo.training.split_env import _STEP_DONE

    env = build_batched_env(_config("workers=2"))
    try:
        env.reset()
        monkeypatch.setattr(env, "_message", lambda h: (_STEP_DONE, (0, [])))
        with pytest.raises(RuntimeError, match="helper process 1 sent 'step' where an answer"):
            env._reply(0)
        assert env._closed
    finally:
        env.close()


def test_ppo_updates_use_the_helpers_cores(monkeypatch):
    """The helpers wait while PPO updates the network: the updates take a thread per process
    (or ``update_threads``), the collection keeps the process's own number."""
    import torch as th
    from sb3_contrib import MaskablePPO

    seen = []
    monkeypatch.setattr(MaskablePPO, "train", lambda self: seen.append(th.get_num_threads()))
    threads = th.get_num_threads()
    th.set_num_threads(1)  # as a run with torch_threads: 1 sets it
    try:
        for workers, overrides, expected in [(2, (), 2), (2, ("update_threads=3",), 3), (1, (), 1)]:
            config = _config(f"workers={workers}", *overrides)
            env = build_vec_env(config)
            try:
                model = build_model(config, env, None)
                model.train()
            finally:
                env.close()
            assert seen.pop() == expected
            assert th.get_num_threads() == 1  # the collection's number again
    finally:
        th.set_num_threads(threads)


def test_the_env_refuses_other_work_while_the_helpers_play_a_rollout():
    config = _config("workers=2")
    env = build_vec_env(config)
    model = build_model(config, env, None)
    split = env.unwrapped
    try:
        model._setup_learn(1_000, None)
        with pytest.raises(RuntimeError, match="no rollout to finish"):
            split.finish_rollouts(model._last_obs[split.local_games])
        split.start_rollouts(model.policy, 4, 0.99, 0)
        with pytest.raises(RuntimeError, match="playing a rollout"):
            split.start_rollouts(model.policy, 4, 0.99, 0)
        with pytest.raises(RuntimeError, match="playing a rollout"):
            env.step(np.zeros(config.n_envs, dtype=np.int64))
        with pytest.raises(RuntimeError, match="playing a rollout"):
            split.env_method("add_snapshot", "x.rz", 1)
        assert split.local.opponents.pool == []  # nothing changed here either
        # refused too, without closing the env (they closed it, the rollout lost)
        for call in (
            split.reset,
            lambda: split.get_attr("skipped_games"),
            lambda: split.get_attr("opponent_seconds"),
        ):
            with pytest.raises(RuntimeError, match="playing a rollout"):
                call()
        assert not split._closed
        _obs, rollouts, _infos = split.finish_rollouts(model._last_obs[split.local_games])
        assert len(rollouts) == 1  # the helper's rollout, whole
    finally:
        env.close()  # ends the helpers, their rollout in flight unread
    assert split._procs == []


def test_a_bad_seed_is_refused_before_any_share_takes_it():
    env = build_batched_env(_config("workers=2"))
    try:
        with pytest.raises(ValueError, match="seed must be a non-negative int"):
            env.seed(-1)
        env.seed(4)  # the env goes on as if the bad seed had not been given
        _play(env, 3)
    finally:
        env.close()


def test_an_exchange_cut_short_closes_the_env_instead_of_reading_stale_replies(monkeypatch):
    """This process's share failing (or Ctrl-C) after the helpers were sent a step leaves their
    replies unread: the env closes, so that no later call takes them for its own."""
    env = build_batched_env(_config("workers=2"))
    env.reset()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(env.local, "step_wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        env.step(uniform_legal_actions(env.action_masks(), np.random.default_rng(0)))
    assert env._closed and env._procs == []
    with pytest.raises(RuntimeError, match="this SplitSeatEnv is closed"):
        env.reset()


def test_a_rollout_cut_short_in_this_process_closes_the_env(monkeypatch):
    import rummyzoo.training.ppo as ppo

    config = _config("workers=2")
    env = build_vec_env(config)
    model = build_model(config, env, None)
    split = env.unwrapped
    _, callback = model._setup_learn(1_000, None)

    def failing(*args, **kwargs):
        raise ValueError("the local share failed")

    monkeypatch.setattr(ppo, "play_rollout", failing)
    with pytest.raises(ValueError, match="the local share failed"):
        model.collect_rollouts(env, callback, model.rollout_buffer, model.n_steps)
    assert split._closed and split._procs == [] and not split._rolling
    with pytest.raises(RuntimeError, match="this SplitSeatEnv is closed"):
        split.reset()


def test_a_share_that_cannot_be_sent_to_a_helper_is_an_error_not_a_hang():
    """A ``make_share`` that cannot be pickled (a lambda): the helper never starts, and the
    env's start fails with the pickling error (it waited for that helper's answer forever)."""
    data = _config().model_dump(mode="json")
    from rummyzoo.training.train import share_env

    with pytest.raises(Exception, match=r"pickle|Pickl") as info:
        SplitSeatEnv(lambda size, lo: share_env(data, size, lo), 10, processes=2)
    assert not isinstance(info.value, AssertionError)


def test_a_dead_helper_closes_the_env_once(monkeypatch):
    """The broken pipe of a dead helper closes the env; the close does not find the helper dead
    again and close once more, and more (it recursed until Python's limit)."""
    import os
    import signal

    closes = []
    original = SplitSeatEnv._close
    monkeypatch.setattr(SplitSeatEnv, "_close", lambda self: (closes.append(1), original(self)))
    env = build_batched_env(_config("workers=3"))
    env.reset()
    os.kill(env._procs[0].pid, signal.SIGKILL)
    env._procs[0].join(timeout=10)
    with pytest.raises(RuntimeError, match=r"helper process 1 died"):
        env.reset()
    assert closes == [1] and env._procs == []


def test_helpers_draw_from_the_runs_seed_and_the_step_they_start_at(monkeypatch):
    """The helpers' copies of the policy are seeded with the run's seed plus the step of the
    first rollout they play: a resumed run's helpers do not replay the draws of its start."""
    config = _config("workers=2", "seed=9")
    env = build_vec_env(config)
    model = build_model(config, env, None)
    split = env.unwrapped
    seeds = []
    original = split.start_rollouts
    monkeypatch.setattr(
        split,
        "start_rollouts",
        lambda p, n, g, seed, **kw: (seeds.append(seed), original(p, n, g, seed, **kw)),
    )
    try:
        _, callback = model._setup_learn(1_000, None)
        model.num_timesteps = 4_096  # as a run resumed at that step
        assert model.collect_rollouts(env, callback, model.rollout_buffer, model.n_steps)
    finally:
        env.close()
    assert seeds == [9 + 4_096]


def test_a_reset_starts_the_episode_counts_afresh():
    env = build_batched_env(_config("workers=2"))
    try:
        env.reset()
        monitor = env.local_monitor
        monitor.step_async(
            uniform_legal_actions(env.local.action_masks(), np.random.default_rng(0))
        )
        monitor.step_wait()
        assert monitor.episode_lengths.any()
        env.reset()
        assert env.local_monitor is monitor  # the same object (a benchmark may wrap it)
        assert not monitor.episode_lengths.any() and not monitor.episode_returns.any()
    finally:
        env.close()


def test_a_resumed_league_reaches_every_share(tmp_path):
    """With DQN's step-by-step exchange each helper draws from its own share's results: a
    resume restored the league in this process's share only, and the helpers started empty.
    The run's callback now hands it to every share (as a resume of a DQN run does)."""
    from types import SimpleNamespace

    from rummyzoo.training.callbacks import RunCallback

    two = "opponents=[{name: random, weight: 1}, {name: knock.greedy, weight: 1}]"
    overrides = ["n_envs=10", "env_options.target_score=null", "workers=2", two]
    config = load_config(CONFIGS / "smoke_dqn.yaml", [*overrides, "league.sampling=pfsp"])
    env = build_vec_env(config)
    try:
        results = {"random": [1.0] * 50, "knock.greedy": [0.0] * 50}
        callback = RunCallback(config, tmp_path / "run", state={"league_results": results})
        callback.model = SimpleNamespace(get_env=lambda: env)  # as a model sets it
        callback._restore_league()
        split = env.unwrapped
        (helper,) = split._ask(("get", "opponents._results"))
        assert {label: list(found) for label, found in helper.items()} == results
        assert split.opponents.results() == results
    finally:
        env.close()


def test_actions_that_are_no_ints_are_illegal_as_in_one_process():
    """A float or a bool is an illegal action in every game (a penalty, nothing played, the
    value sent in ``illegal_action``), as one process has it: the split cast them to ints
    and played 0.7 as action 0; an action count that does not fit names the counts."""
    one = build_batched_env(_config())
    split = build_batched_env(_config("workers=2"))
    try:
        for env in (one, split):
            env.seed(5)
            env.reset()
        huge = np.full(10, np.iinfo(np.uint64).max, dtype=np.uint64)  # no int64: wraps to -1
        for sent in (np.full(10, 0.7), np.ones(10, dtype=bool), huge):
            got = []
            for env in (one, split):
                before = env.action_masks().copy()
                env.step_async(sent)
                obs, rewards, _, infos = env.step_wait()
                np.testing.assert_array_equal(env.action_masks(), before)  # nothing played
                got.append((obs, rewards, [info.get("illegal_action") for info in infos]))
            np.testing.assert_array_equal(got[0][0], got[1][0])
            np.testing.assert_array_equal(got[0][1], got[1][1])
            assert got[0][2] == got[1][2] == [sent[0].item()] * 10
            assert got[1][1].tolist() == [-1.0] * 10
        with pytest.raises(ValueError, match=r"need one action per game \(10: .*, got .* \(3,\)"):
            split.step_async(np.zeros(3, dtype=np.int64))
        # the reset options and seeds of one process: said, not dropped without a word
        split.set_options({"deck": list(range(52))})
        with pytest.warns(UserWarning, match="SplitSeatEnv ignores reset options"):
            split.reset()
        with pytest.raises(ValueError, match="seed must be a non-negative int"):
            split.seed(-1)
    finally:
        one.close()
        split.close()


def test_ppo_steps_the_wrappers_around_the_games_of_several_processes(tmp_path, monkeypatch):
    """A wrapper that must see every step (``VecNormalize`` here) around the split env: the
    rollout goes through it, step by step, with a warning (the helpers' whole rollouts left
    it out: the observations reached the buffer unnormalized, unclipped); under ``VecMonitor``
    alone the helpers play their whole rollouts."""
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from rummyzoo.training.ppo import MaskedPPO

    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))  # the log folder of learn(), not the temp dir's
    split = build_batched_env(_config("workers=2"))
    try:
        wrapped = VecNormalize(VecMonitor(split), clip_obs=0.5)
        model = MaskedPPO(
            "MlpPolicy", wrapped, n_steps=4, batch_size=20, n_epochs=1, seed=0, device="cpu",
            policy_kwargs={"net_arch": [8]},
        )  # fmt: skip
        with pytest.warns(UserWarning, match="VecNormalize around the games of several"):
            model.learn(40)
        assert np.abs(model.rollout_buffer.observations).max() <= 0.5  # clipped: normalized
        assert wrapped.obs_rms.count > 40  # every step's observations seen
    finally:
        split.close()
    split = build_batched_env(_config("workers=2"))
    try:
        model = MaskedPPO(
            "MlpPolicy", VecMonitor(split), n_steps=4, batch_size=20, n_epochs=1, seed=0,
            device="cpu", policy_kwargs={"net_arch": [8]},
        )  # fmt: skip
        started = []
        start = split.start_rollouts
        split.start_rollouts = lambda *args, **kw: started.append(1) or start(*args, **kw)
        model.learn(40)
        assert started  # the helpers' own rollouts
    finally:
        split.close()


def test_the_helpers_preload_adds_to_the_fork_servers_list_what_imports_here(monkeypatch, tmp_path):
    # the fork server's list is the process's (other users' modules stay, and come first); a
    # module that fails to import here is left out: one whose import raises other than an
    # ImportError would stop the fork server for every process started from it
    import multiprocessing
    from multiprocessing import forkserver

    from rummyzoo.training import split_env

    (tmp_path / "rummyzoo_test_raises.py").write_text("raise RuntimeError('no')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ctx = multiprocessing.get_context("forkserver")
    before = list(forkserver._forkserver._preload_modules)
    try:
        ctx.set_forkserver_preload(["__main__", "json"])
        wanted = ["rummyzoo_no_such_module", "rummyzoo_test_raises", "colorsys", "json"]
        monkeypatch.setattr(split_env, "HELPER_PRELOAD", wanted)
        split_env.preload_helpers(ctx)
        assert forkserver._forkserver._preload_modules == ["__main__", "json", "colorsys"]
    finally:
        ctx.set_forkserver_preload(before)
