"""PPO's lean masked policy: sb3-contrib's masked distribution without its objects, in the
rollouts and the updates, for every network type, to the bit."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from rummyzoo.training.config import validate_config
from rummyzoo.training.ppo import MaskedPPO, masked_evaluate_actions, masked_forward
from rummyzoo.training.train import build_model, build_vec_env

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

NETWORKS = [
    ("knock_rummy", "mlp", None),
    ("knock_rummy", "cards", "knock_deadwood"),
    ("ditch_rummy", "actions", "ditch_actions"),
    ("rummy500", "actions", "rummy500_actions"),
]


def _model(variant: str, network: str, features: str | None, n_envs: int = 8):
    config = validate_config(
        {
            "variant": variant,
            "algo": "ppo",
            "n_timesteps": 256,
            "n_envs": n_envs,
            "vec_env": "batched",
            "features": features,
            "env_options": {"target_score": None},
            "hyperparams": {"n_steps": 16, "batch_size": 64, "n_epochs": 1},
            "policy_kwargs": {"network": network, "net_arch": [32, 32]},
            "opponents": [{"name": "random", "weight": 1}],
        }
    )
    env = build_vec_env(config)
    model = build_model(config, env, None)
    return model, env


def _rows(env, steps: int = 0) -> tuple[th.Tensor, np.ndarray]:
    """The learner's inputs and masks after ``steps`` steps of its first legal actions."""
    obs = env.reset()
    for _ in range(steps + 1):
        masks = np.stack(env.env_method("action_masks")).astype(bool)  # as MaskablePPO asks
        if not steps:
            break
        obs, _, _, _ = env.step(masks.argmax(axis=1))
        steps -= 1
    return th.as_tensor(obs), masks


def _exact(got: th.Tensor, expected: th.Tensor) -> None:
    th.testing.assert_close(got, expected, rtol=0, atol=0)


@pytest.mark.parametrize(("variant", "network", "features"), NETWORKS)
def test_masked_forward_is_sb3_contribs_to_the_bit(variant, network, features):
    model, env = _model(variant, network, features)
    try:
        assert isinstance(model, MaskedPPO)
        policy = model.policy
        obs, masks = _rows(env, steps=1)
        for deterministic in (False, True):
            outputs = []
            for forward in (policy.forward, MaskableActorCriticPolicy.forward.__get__(policy)):
                th.manual_seed(0)  # the same draws
                with th.no_grad():
                    outputs.append(forward(obs, deterministic=deterministic, action_masks=masks))
            (actions, values, log_prob), expected = outputs
            assert actions.shape == (len(obs),) and values.shape == (len(obs), 1)
            assert masks[np.arange(len(obs)), actions.numpy()].all()
            for got, want in zip((actions, values, log_prob), expected, strict=True):
                _exact(got, want)
        assert policy.forward.__func__ is masked_forward
    finally:
        env.close()


@pytest.mark.parametrize(("variant", "network", "features"), NETWORKS)
def test_masked_evaluate_actions_is_sb3_contribs_to_the_bit(variant, network, features):
    model, env = _model(variant, network, features)
    try:
        policy = model.policy
        obs, masks = _rows(env, steps=1)
        with th.no_grad():
            actions, _, _ = policy(obs, action_masks=masks)
        results = []
        for evaluate in (masked_evaluate_actions, MaskableActorCriticPolicy.evaluate_actions):
            policy.zero_grad()
            values, log_prob, entropy = evaluate(policy, obs, actions, action_masks=masks)
            # a loss of PPO's shape: every output and its gradients
            (values.sum() + log_prob.exp().sum() - 0.1 * entropy.sum()).backward()
            grads = [p.grad.clone() for p in policy.parameters() if p.grad is not None]
            results.append((values.detach(), log_prob.detach(), entropy.detach(), grads))
        lean, sb3 = results
        for got, want in zip(lean[:3], sb3[:3], strict=True):
            _exact(got, want)
        assert (lean[2] > 0).any()  # a real choice somewhere: the entropies are compared
        assert len(lean[3]) == len(sb3[3]) > 0
        for got, want in zip(lean[3], sb3[3], strict=True):
            _exact(got, want)
        assert policy.evaluate_actions.__func__ is masked_evaluate_actions
    finally:
        env.close()


def test_a_seeded_run_trains_as_sb3_contribs_does():
    trained = []
    for lean in (True, False):
        model, env = _model("knock_rummy", "cards", "knock_deadwood")
        try:
            if not lean:  # the same model with sb3-contrib's own policy methods
                del model.policy.forward, model.policy.evaluate_actions
                assert "forward" not in vars(model.policy)
            model.learn(256)
            trained.append([p.detach().clone() for p in model.policy.parameters()])
        finally:
            env.close()
    for got, want in zip(*trained, strict=True):
        _exact(got, want)


def test_masked_forward_draws_each_action_with_its_probability():
    model, env = _model("knock_rummy", "mlp", None)
    try:
        policy = model.policy
        obs, masks = _rows(env, steps=1)  # Knock Rummy: a discard after the draw
        k = int(masks.sum(axis=1).argmax())  # the row with the most legal actions
        with th.no_grad():  # logits that differ clearly from action to action
            policy.action_net.bias.copy_(th.linspace(-2.0, 2.0, policy.action_net.bias.numel()))
        draws = 20_000
        row_obs = obs[k : k + 1].repeat(draws, 1)
        row_mask = np.repeat(masks[k : k + 1], draws, axis=0)
        th.manual_seed(1)
        with th.no_grad():
            actions, _, _ = masked_forward(policy, row_obs, action_masks=row_mask)
            dist = policy.get_distribution(obs[k : k + 1], action_masks=masks[k : k + 1])
            probs = dist.distribution.probs[0]
        counts = np.bincount(actions.numpy(), minlength=probs.numel()) / draws
        assert masks[k].sum() >= 3 and probs.max() < 0.9  # a real choice to draw from
        assert counts[~masks[k]].sum() == 0
        # a binomial share over 20,000 draws has a standard deviation of at most 0.0036
        np.testing.assert_allclose(counts, probs.numpy(), atol=0.02)
    finally:
        env.close()


def test_a_loaded_model_keeps_the_lean_forward(tmp_path):
    model, env = _model("knock_rummy", "mlp", None)
    try:
        model.learn(128)
        path = tmp_path / "last.zip"
        model.save(str(path))
    finally:
        env.close()
    loaded = MaskedPPO.load(str(path))  # how a resumed run loads its model
    assert loaded.policy.forward.__func__ is masked_forward
    assert loaded.policy.evaluate_actions.__func__ is masked_evaluate_actions
    assert type(loaded.policy) is MaskableActorCriticPolicy  # saves and plays as before


@pytest.mark.parametrize("activation", ["relu", "tanh", "elu", "leaky_relu"])
def test_a_checkpoints_mlp_logits_skip_the_module_calls_to_the_bit(tmp_path, activation):
    from rummyzoo.agents.checkpoints import load_policy, mlp_actor_layers, save_checkpoint
    from rummyzoo.training.train import checkpoint_meta

    config = validate_config(
        {
            "variant": "knock_rummy",
            "algo": "ppo",
            "n_envs": 8,
            "env_options": {"target_score": None},
            "policy_kwargs": {"net_arch": [32, 32], "activation_fn": activation},
        }
    )
    env = build_vec_env(config)
    try:
        model = build_model(config, env, None)
        path = tmp_path / "mlp.rz"
        save_checkpoint(model, path, checkpoint_meta(config, 0))
        obs, masks = _rows(env, steps=1)
    finally:
        env.close()
    fast = load_policy(path, "knock_rummy", 2, {"target_score": None}, deterministic=False)
    slow = load_policy(path, "knock_rummy", 2, {"target_score": None}, deterministic=False)
    slow._actor_layers = ()  # the modules' own calls
    assert len(mlp_actor_layers(fast.model.policy)) == 5  # 2 x (linear, activation), action net
    inputs = th.randn(64, obs.shape[1])
    with th.no_grad():
        _exact(fast._logits(inputs), slow._logits(inputs))
    raw = obs.numpy()
    for seed in range(3):
        got = fast.act_batch(raw, masks, np.random.default_rng(seed))
        want = slow.act_batch(raw, masks, np.random.default_rng(seed))
        assert got.tolist() == want.tolist()
    assert len(fast._actor_layers) == 5 and slow._actor_layers == ()  # each took its path
    # a sampled draw, written out row by row: one uniform per row, the first legal action whose
    # running sum of exp(logit - the legal maximum) passes it times their total
    rng = np.random.default_rng(11)
    rows = inputs.numpy()
    legal = rng.random((64, masks.shape[1])) < rng.uniform(0.02, 0.6, size=(64, 1))
    legal[np.arange(64), rng.integers(0, masks.shape[1], 64)] = True
    with th.no_grad():
        logits = fast._logits(inputs).numpy().astype(np.float64)
    for seed in range(3):
        draws = np.random.default_rng(seed).random(64)
        want = []
        for row, ok, u in zip(logits, legal, draws, strict=True):
            ids = np.flatnonzero(ok).tolist()
            top = max(row[a] for a in ids)
            running = list(itertools.accumulate(math.exp(row[a] - top) for a in ids))
            want.append(next(a for a, c in zip(ids, running, strict=True) if c > u * running[-1]))
        assert fast.act_batch(rows, legal, np.random.default_rng(seed)).tolist() == want


def test_scorer_networks_keep_their_module_calls():
    from rummyzoo.agents.checkpoints import mlp_actor_layers

    for variant, network, features in NETWORKS[1:]:
        model, env = _model(variant, network, features)
        env.close()
        assert mlp_actor_layers(model.policy) is None


def test_the_masked_normalizer_is_torchs_logsumexp_to_the_bit():
    """The updates' log-normalizer of masked logits (it skips the exponentials of the illegal
    actions): the same values and gradients as ``logsumexp`` over random shapes, scales and
    masks, rows without a legal action included."""
    from rummyzoo.training.ppo import HUGE_NEG, _MaskedLogSumExp

    gen = th.Generator().manual_seed(7)
    rows_without_legal = 0
    for _ in range(60):
        n, a = (int(v) for v in th.randint(1, 300, (2,), generator=gen))
        logits = th.randn(n, a, generator=gen) * float(th.rand((), generator=gen) * 150)
        legal = th.rand(n, a, generator=gen) < float(th.rand((), generator=gen))
        legal[th.rand(n, generator=gen) < 0.9, 0] = True
        rows_without_legal += int((~legal.any(-1)).sum())
        weights = th.randn(n, a, generator=gen)
        results = []
        for normalizer in (
            lambda x, _legal: x.logsumexp(dim=-1, keepdim=True),
            _MaskedLogSumExp.apply,
        ):
            x = logits.clone().requires_grad_(True)
            log_pmf = x - x.logsumexp(dim=-1, keepdim=True)
            masked = th.where(legal, log_pmf, th.tensor(HUGE_NEG))
            out = masked - normalizer(masked, legal)
            (out * weights).sum().backward()
            results.append((out.detach(), x.grad))
        (want, want_grad), (got, got_grad) = results
        _exact(got, want)
        _exact(got_grad, want_grad)
    assert rows_without_legal > 0


class _LogitsPolicy:
    """A policy whose logits are its input (and its value the first of them)."""

    share_features_extractor = True

    def extract_features(self, obs):
        return obs

    def mlp_extractor(self, features):
        return features, features

    def value_net(self, latent):
        return latent[:, :1]

    def action_net(self, latent):
        return latent


def test_masking_gives_torch_wheres_result_for_non_finite_logits():
    """An illegal action's logit of -inf or +inf, NaN, or logits whose difference overflows
    float32: the masked log-probabilities, entropies and gradients are those of
    ``th.where(legal, log_pmf, HUGE_NEG)`` and the same normalizer (a product by 0 would make
    the row NaN)."""
    from rummyzoo.training.ppo import HUGE_NEG, _evaluated, _masked_log_pmf, _MaskedLogSumExp

    inf, nan = math.inf, math.nan
    rows = th.tensor(
        [
            [1.0, 2.0, -inf, 0.5],
            [1.0, 2.0, inf, 0.5],
            [1.0, nan, 3.0, 0.5],
            [2e38, 1.0, -2e38, 0.5],
            [0.3, -0.2, 0.1, 5.0],
        ]
    )
    legal = th.tensor([[True, True, False, True]] * 5)
    policy = _LogitsPolicy()

    def _same(got, want):  # to the bit, NaN where the reference has NaN (row 2's)
        th.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)

    for grad in (False, True):
        x = rows.clone().requires_grad_(grad)
        log_pmf, _, mask = _masked_log_pmf(policy, x, legal.numpy())
        # the reference: th.where's masking, then the normalizer of that mode (torch's own in a
        # rollout, the one that skips the illegal entries in an update)
        y = rows.clone().requires_grad_(grad)
        ref = y - y.logsumexp(dim=-1, keepdim=True)
        ref = th.where(legal, ref, th.tensor(HUGE_NEG))
        if grad:
            ref = ref - _MaskedLogSumExp.apply(ref, legal)
        else:
            ref = ref - ref.logsumexp(dim=-1, keepdim=True)
        _same(log_pmf, ref)
        # finite where the legal logits are (row 1's illegal +inf leaves the legal actions no
        # mass, as th.where's masking does; row 2's NaN is a legal action's)
        assert th.isfinite(log_pmf[[0, 3, 4]]).all()
        actions = th.tensor([0, 1, 3, 3, 3])
        got = _evaluated(log_pmf, x[:, :1], mask, actions)
        p_log_p = ref * th.softmax(ref, dim=-1)
        want_entropy = -th.where(legal, p_log_p, th.tensor(0.0)).sum(-1)
        _same(got[1], ref.gather(-1, actions[:, None]).squeeze(-1))
        _same(got[2], want_entropy)
        if grad:
            (got[1].sum() - 0.1 * got[2].sum()).backward()
            want_log_prob = ref.gather(-1, actions[:, None]).squeeze(-1)
            (want_log_prob.sum() - 0.1 * want_entropy.sum()).backward()
            _same(x.grad, y.grad)
            assert th.isfinite(x.grad[[0, 3, 4]]).all()
