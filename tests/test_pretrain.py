"""Behaviour-cloning warm start: teacher games, returns, fitting, config checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    env = _env()
    points = []  # what the env reports each finished game earned the learner
    step = env.step

    def recording_step(action):
        out = step(action)
        if out[2] or out[3]:
            points.append(out[4]["game"]["points"])
        return out

    env.step = recording_step
    data = collect_teacher_games(env, "knock.greedy", 300, seed=4, gamma=gamma)
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
    totals = np.bincount(games, weights=rewards)
    assert len(points) == len(totals) and any(points)
    np.testing.assert_allclose(totals, np.asarray(points) / env.reward_scale, atol=1e-5)


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


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
@pytest.mark.parametrize("decisions", [1, 8])
def test_a_warm_start_of_a_few_decisions_fits_and_measures_them(tmp_path, algo, decisions):
    """Fewer than ten decisions still leave one held out to measure (a single one is fitted
    and measured), where a PPO warm start had none and crashed, leaving a half-made run."""
    summary = train_from_file(
        str(CONFIGS / f"smoke_{algo}.yaml"),
        [
            "env_options.target_score=null",
            f"pretrain={{teacher: knock.greedy, decisions: {decisions}, epochs: 2}}",
            "n_timesteps=64",
        ],
        str(tmp_path / "run"),
        ["t"],
        progress="off",
    )
    warm = summary["pretrain"]
    assert warm["held_out"] >= 1 and 0.0 <= warm["accuracy"] <= 1.0


def test_pretrained_run_records_its_warm_start(tmp_path):
    summary = train_from_file(
        str(CONFIGS / "smoke_ppo.yaml"),
        ["features=knock_deadwood", "pretrain.teacher=knock.greedy", "pretrain.decisions=1000"],
        str(tmp_path / "run"),
        ["test"],
    )
    pre = summary["pretrain"]
    assert pre["teacher"] == "knock.greedy" and pre["decisions"] >= 1000
    # a thousand decisions of knock.greedy: mostly learnt (0.63-0.73 over seeds 0-3, on 70-100
    # held-out decisions; a few hundred leave a score of a dozen or two, too few to tell)
    assert 0.5 < pre["accuracy"] <= 1.0
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
        ({"pretrain": {"teacher": "knock.smart", "anchor_coef": -1}}, r"pretrain\.anchor_coef"),
        # the anchor is PPO's: a DQN config (or PPO on the rllib backend) that sets it is refused
        (
            {"algo": "dqn", "pretrain": {"teacher": "knock.smart", "anchor_coef": 1.0}},
            r"pretrain\.anchor_coef.*PPO's warm start",
        ),
        (
            {"backend": "rllib", "pretrain": {"teacher": "knock.smart", "anchor_coef": 1.0}},
            r"pretrain\.anchor_coef.*sb3 backend",
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


def _with_and_without(
    tmp_path: Path, config: str, overrides: list[str], key: str, coef: float
) -> dict[float, Any]:
    """The last models of two runs of ``config``: with ``pretrain.<key>`` at ``coef`` and at
    0 (run folders ``run_<coef>``), as a resumed run loads them."""
    from rummyzoo.agents.checkpoints import load_model
    from rummyzoo.training.dqn import MaskedDQN
    from rummyzoo.training.ppo import MaskedPPO

    models = {}
    for value in (coef, 0.0):
        run = tmp_path / f"run_{value}"
        train_from_file(
            str(CONFIGS / config),
            [*overrides, f"pretrain.{key}={value}"],
            str(run),
            ["test"],
            progress="off",
        )
        models[value], _ = load_model(
            run / "checkpoints" / "last.zip", classes={"dqn": MaskedDQN, "ppo": MaskedPPO}
        )
    return models


def test_dqn_keeps_the_teachers_decisions_and_resumes_with_them(tmp_path):
    """With ``demo_coef`` every Q-learning update also pushes the teacher's recorded actions
    above the others: after the same RL steps, the greedy policy follows the teacher more
    closely than the same run without them, and a resumed run reads them back."""
    import torch as th

    from rummyzoo.agents.networks import mask_from_obs
    from rummyzoo.training.dqn import MaskedDQN
    from rummyzoo.training.run_folder import DEMONSTRATIONS
    from rummyzoo.training.train import resume_run

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
    models = _with_and_without(tmp_path, "smoke_dqn.yaml", overrides, "demo_coef", 2.0)
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
    with pytest.raises(
        ValueError, match=r"demonstrations.* is not there: .*or the file was removed"
    ):
        resume_run(str(run), ["n_timesteps=512"], ["test"], progress="off")
    # a run that started without them cannot take them up: said so (it was said a file was missing)
    with pytest.raises(ValueError, match=r"starts with demo_coef above 0 \(raise it in a new run"):
        resume_run(str(tmp_path / "run_0.0"), ["n_timesteps=512", "pretrain.demo_coef=1"],
                   ["test"], progress="off")  # fmt: skip


def test_anchor_kl_is_the_kl_divergence_over_the_legal_actions():
    import torch as th

    from rummyzoo.training.ppo import anchor_kl

    legal = th.tensor([[True, True, False, True], [True, False, False, False]])
    p = th.tensor([[0.5, 0.25, 0.0, 0.25], [1.0, 0.0, 0.0, 0.0]])
    q = th.tensor([[0.25, 0.25, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0]])
    # illegal actions carry the masked policy's huge negative log-probability, not -inf
    log_p = th.where(legal, p.clamp_min(1e-30).log(), th.tensor(-1e8))
    log_q = th.where(legal, q.clamp_min(1e-30).log(), th.tensor(-1e8))
    got = anchor_kl(log_q, log_p, legal)  # KL(p || q)
    want = 0.5 * np.log(0.5 / 0.25) + 0.25 * np.log(0.25 / 0.5)
    th.testing.assert_close(got, th.tensor([want, 0.0], dtype=th.float32), rtol=1e-6, atol=1e-7)
    assert float(anchor_kl(log_p, log_p, legal).abs().max()) == 0.0


def test_ppo_anchored_to_its_warm_start_stays_near_it_and_resumes_with_it(tmp_path):
    """With ``anchor_coef`` every PPO update also pulls the policy towards the warm start's:
    after the same RL steps the policy is much nearer the warm start than the same run's
    without the anchor, and a resumed run reads the reference back (and stops, saying so,
    without it)."""
    import torch as th

    from rummyzoo.agents.safe import load_checkpoint
    from rummyzoo.training.ppo import _masked_log_pmf, anchor_kl
    from rummyzoo.training.pretrain import collect_teacher_games_batched
    from rummyzoo.training.run_folder import WARM_START
    from rummyzoo.training.train import resume_run

    overrides = [
        "features=knock_deadwood",
        "policy_kwargs.network=cards",
        "opponents=[{name: knock.greedy}]",
        "pretrain.teacher=knock.greedy",
        "pretrain.decisions=400",
        "pretrain.epochs=4",
        "n_timesteps=512",
        "hyperparams.learning_rate=0.003",
        "hyperparams.n_epochs=4",
    ]
    models = _with_and_without(tmp_path, "smoke_ppo.yaml", overrides, "anchor_coef", 20.0)
    # the reference is not in the resume file
    assert all(getattr(model, "anchor", None) is None for model in models.values())
    policies = {coef: model.policy for coef, model in models.items()}
    run = tmp_path / "run_20.0"
    logged = tb_steps(run)
    assert any(tag.endswith("train/anchor_kl") for tag in logged)
    assert not any(tag.endswith("train/anchor_kl") for tag in tb_steps(tmp_path / "run_0.0"))
    # both runs start from the same warm start (same seed); compare them on the teacher's games
    warm = load_checkpoint(run / "checkpoints" / WARM_START)[0].policy
    env = build_vec_env(load_config(CONFIGS / "smoke_ppo.yaml", overrides))
    try:
        games = collect_teacher_games_batched(env, "knock.greedy", 300, seed=5, gamma=0.99)
    finally:
        env.close()
    obs = th.as_tensor(np.asarray(games["obs"]), dtype=th.float32)
    masks = th.as_tensor(np.asarray(games["masks"]), dtype=th.bool)

    def kl_from_warm(policy) -> float:
        with th.no_grad():
            ref = _masked_log_pmf(warm, obs, masks)[0]
            own, _, legal = _masked_log_pmf(policy, obs, masks)
            return float(anchor_kl(own, ref, legal).mean())

    anchored, free = kl_from_warm(policies[20.0]), kl_from_warm(policies[0.0])
    assert free > 0.01 and anchored < 0.5 * free, (anchored, free)
    summary = resume_run(str(run), ["n_timesteps=768"], ["test"], progress="off")
    assert summary["steps"] >= 768
    anchor_steps = [
        step for tag, steps in tb_steps(run).items() if tag.endswith("anchor_kl") for step in steps
    ]
    assert max(anchor_steps) > 512, anchor_steps
    (run / "checkpoints" / WARM_START).unlink()
    with pytest.raises(ValueError, match=r"anchors PPO to the warm start.*missing"):
        resume_run(str(run), ["n_timesteps=1024"], ["test"], progress="off")


def test_row_store_gathers_rows_in_any_order():
    """The teacher's observations are kept in blocks and gathered once into the order the
    games finished: the same rows as a plain stack, in that order (rows left out dropped)."""
    from rummyzoo.training.pretrain import RowStore

    rng = np.random.default_rng(0)
    rows = rng.random((3 * RowStore.BLOCK + 17, 5)).astype(np.float32)
    store = RowStore()
    starts = [store.add(rows[s : s + 37]) for s in range(0, len(rows), 37)]
    assert starts == list(range(0, len(rows), 37)) and store.size == len(rows)
    order = rng.permutation(len(rows))[: len(rows) - RowStore.BLOCK]  # a block's worth left out
    gathered = store.gather(order)
    assert gathered.dtype == np.float32 and np.array_equal(gathered, rows[order])
    assert store.blocks == [] and store.size == 0
    assert RowStore().gather(np.arange(0)).shape == (0, 0)  # nothing kept, nothing gathered
    store.add(rows[:3])
    with pytest.raises(ValueError, match="shape"):
        store.add(rows[:2, :4])
    with pytest.raises(IndexError, match="of a store of 3"):
        store.gather(np.array([0, 3]))
