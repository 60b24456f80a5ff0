"""Behaviour-cloning warm start: teacher games, returns, fitting, config checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from run_helpers import tb_steps

from rummyzoo.training.config import ConfigLoadError, load_config, validate_config
from rummyzoo.training.pretrain import clone_into_dqn, clone_into_ppo, collect_teacher_games
from rummyzoo.training.seat_env import SeatEnv
from rummyzoo.training.train import build_model, build_vec_env, train_from_file

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def _env():
    return SeatEnv(
        "knock_rummy",
        2,
        {"target_score": 30},
        opponents=["knock.greedy"],
        features="knock_deadwood",
    )


def test_teacher_games_and_returns():
    gamma = 0.9
    data = collect_teacher_games(_env(), "knock.greedy", 300, seed=4, gamma=gamma)
    n = len(data["actions"])
    assert n >= 300
    assert data["obs"].shape[0] == data["masks"].shape[0] == n == len(data["returns"])
    # Every recorded action was legal in its state.
    assert data["masks"][np.arange(n), data["actions"]].all()
    # The same seed records the same games.
    again = collect_teacher_games(_env(), "knock.greedy", 300, seed=4, gamma=gamma)
    assert np.array_equal(again["actions"], data["actions"])
    # Returns discount within a game and restart at each game's end.
    games, ret = data["games"], data["returns"]
    assert games[-1] >= 1
    ends = np.flatnonzero(np.diff(games)) + 1  # first decision of each later game
    for start in ends:
        assert games[start] == games[start - 1] + 1
    rewards = np.empty(n)
    for i in range(n):
        nxt = ret[i + 1] if i + 1 < n and games[i + 1] == games[i] else 0.0
        rewards[i] = ret[i] - gamma * nxt
    # The rewards recovered from the returns are the ones the env paid: zero inside hands
    # and nonzero at hand ends, each game's total equals the learner's match points / scale.
    assert np.count_nonzero(np.abs(rewards) > 1e-6) >= games[-1] + 1


def test_cloning_learns_the_teacher():
    config = load_config(
        CONFIGS / "smoke_ppo.yaml",
        ["features=knock_deadwood", "policy_kwargs.network=cards", "env_options.target_score=30"],
    )
    data = collect_teacher_games(_env(), "knock.greedy", 3000, seed=1, gamma=0.99)
    env = build_vec_env(config)
    model = build_model(config, env, None)
    before = clone_into_ppo(model, data, epochs=0, batch_size=128, learning_rate=1e-3)
    after = clone_into_ppo(model, data, epochs=8, batch_size=128, learning_rate=2e-3)
    env.close()
    assert after["held_out"] > 100
    assert after["cross_entropy"] < before["cross_entropy"]
    assert after["accuracy"] > max(0.8, before["accuracy"] + 0.2), (before, after)


def test_dqn_cloning_learns_the_teacher():
    config = load_config(
        CONFIGS / "smoke_dqn.yaml",
        ["features=knock_deadwood", "policy_kwargs.network=cards", "env_options.target_score=30"],
    )
    env_with_mask = SeatEnv(
        "knock_rummy",
        2,
        {"target_score": 30},
        opponents=["knock.greedy"],
        features="knock_deadwood",
        mask_in_obs=True,
    )
    data = collect_teacher_games(env_with_mask, "knock.greedy", 3000, seed=1, gamma=0.99)
    env = build_vec_env(config)
    model = build_model(config, env, None)
    before = clone_into_dqn(model, data, epochs=0, batch_size=128, learning_rate=1e-3)
    after = clone_into_dqn(model, data, epochs=8, batch_size=128, learning_rate=2e-3)
    env.close()
    assert after["held_out"] > 100
    assert after["accuracy"] > max(0.8, before["accuracy"] + 0.2), (before, after)
    assert np.isfinite(after["value_loss"])
    # the target network starts as the fitted Q-network
    for name, tensor in model.policy.q_net.state_dict().items():
        assert (model.policy.q_net_target.state_dict()[name] == tensor).all(), name


def test_pretrained_run_records_its_warm_start(tmp_path):
    summary = train_from_file(
        str(CONFIGS / "smoke_ppo.yaml"),
        ["features=knock_deadwood", "pretrain.teacher=knock.greedy", "pretrain.decisions=200"],
        str(tmp_path / "run"),
        ["test"],
    )
    pre = summary["pretrain"]
    assert pre["teacher"] == "knock.greedy" and pre["decisions"] >= 200
    assert 0.0 <= pre["accuracy"] <= 1.0
    assert list((tmp_path / "run" / "tb" / "pretrain").glob("events.*"))
    # the network the warm start left, before any RL, is kept beside the others
    from rummyzoo.agents.checkpoints import read_meta

    assert read_meta(tmp_path / "run" / "checkpoints" / "warm_start.rz")["steps"] == 0


@pytest.mark.parametrize(
    "data, message",
    [
        ({"pretrain": {"teacher": "nobody"}}, r"pretrain\.teacher"),
        ({"pretrain": {"teacher": "knock.smart", "decisions": 0}}, r"pretrain\.decisions"),
        ({"pretrain": {"teacher": "knock.smart", "margin": 0}}, r"pretrain\.margin"),
        ({"pretrain": {"teacher": "knock.smart", "demo_coef": -1}}, r"pretrain\.demo_coef"),
        (
            {"algo": "dqn", "pretrain": {"teacher": "knock.smart", "demo_batch_size": 0}},
            r"pretrain\.demo_batch_size",
        ),
        # the large margin is the DQN warm start's: a PPO config that sets it is refused
        (
            {"algo": "ppo", "pretrain": {"teacher": "knock.smart", "demo_coef": 1.0}},
            r"pretrain\.demo_coef.*DQN warm start",
        ),
        (
            {"pretrain": {"teacher": "knock.smart", "margin": 0.5}},
            r"pretrain\.margin.*DQN warm start",
        ),
    ],
)
def test_pretrain_config_errors(data, message):
    with pytest.raises(ConfigLoadError, match=message):
        validate_config(data)


def test_a_ppo_config_written_back_in_full_validates_again():
    """A run folder's config.yaml (and the config a Ray worker rebuilds) holds every field,
    the DQN warm start's defaults included: they do not count as set."""
    from rummyzoo.training.config import config_to_yaml

    config = load_config(CONFIGS / "knock_ppo.yaml")
    import yaml

    again = validate_config(yaml.safe_load(config_to_yaml(config)))
    assert again == config
    assert validate_config(config.model_dump()) == config


def test_dqn_keeps_the_teachers_decisions_and_resumes_with_them(tmp_path):
    """With ``demo_coef`` every Q-learning update also pushes the teacher's recorded actions
    above the others: after the same RL steps, the greedy policy follows the teacher more
    closely than the same run without them, and a resumed run reads them back."""
    import torch as th

    from rummyzoo.agents.checkpoints import load_model
    from rummyzoo.agents.networks import mask_from_obs
    from rummyzoo.training.dqn import MaskedDQN
    from rummyzoo.training.train import DEMONSTRATIONS, resume_run

    overrides = [
        "features=knock_deadwood",
        "policy_kwargs.network=cards",
        "env_options.target_score=30",
        "opponents=[{name: knock.greedy}]",
        "pretrain.teacher=knock.greedy",
        "pretrain.decisions=600",
        "pretrain.epochs=8",
        "pretrain.margin=0.5",
        "hyperparams.learning_rate=0.001",
    ]
    models = {}
    for coef in (2.0, 0.0):
        run = tmp_path / f"run_{coef}"
        train_from_file(
            str(CONFIGS / "smoke_dqn.yaml"),
            [*overrides, f"pretrain.demo_coef={coef}"],
            str(run),
            ["test"],
            progress="off",
        )
        models[coef], _ = load_model(run / "checkpoints" / "last.zip", classes={"dqn": MaskedDQN})
    run = tmp_path / "run_2.0"
    assert not (tmp_path / "run_0.0" / "checkpoints" / DEMONSTRATIONS).exists()
    demos = run / "checkpoints" / DEMONSTRATIONS
    with np.load(demos) as saved:
        obs, actions = th.as_tensor(saved["obs"]), saved["actions"]
    assert len(obs) == len(actions) >= 600
    assert getattr(models[2.0], "demonstrations", None) is None  # not inside the resume file

    def agreement(model: MaskedDQN) -> float:
        with th.no_grad():
            q = model.q_net(obs).masked_fill(~mask_from_obs(obs, model.num_actions), -th.inf)
        return float((q.argmax(dim=1).numpy() == actions).mean())

    kept, dropped = agreement(models[2.0]), agreement(models[0.0])
    assert kept > dropped + 0.05, (kept, dropped)
    # resuming for more steps reads the demonstrations back; without them it stops, saying so
    summary = resume_run(str(run), ["n_timesteps=384"], ["test"], progress="off")
    assert summary["steps"] == 384
    # the resumed run trained as the masked DQN with the margin term: it logged that term
    # after the resume point too
    margin_steps = [
        step
        for tag, steps in tb_steps(run).items()
        if tag.endswith("train/demo_margin_loss")
        for step in steps
    ]
    assert margin_steps and max(margin_steps) > 256, margin_steps
    demos.unlink()
    with pytest.raises(ValueError, match=r"demonstrations.*missing"):
        resume_run(str(run), ["n_timesteps=512"], ["test"], progress="off")
