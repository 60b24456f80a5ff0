"""MaskablePPO whose policy computes its masked distribution without distribution objects.

sb3-contrib's ``MaskableActorCriticPolicy`` builds a distribution object, and builds it again
to apply the mask, in ``forward`` (every step of the rollouts) and in ``evaluate_actions``
(every minibatch of the updates): for the small networks of card games the objects cost more
than the network itself. The functions here run the same tensor operations, in the same order,
on the policy's own features, latents, value and logits, without the objects:

* the logits normalized, an illegal action's set to ``-1e8`` and normalized again (what
  ``MaskableCategorical.apply_masking`` computes);
* :func:`masked_forward`: an action drawn by ``torch.multinomial`` from the softmax (greedy:
  its argmax), its log-probability and the value;
* :func:`masked_evaluate_actions`: the values, log-probabilities and entropies of given actions
  (an illegal action adds nothing to the entropy).

So the results are sb3-contrib's to the bit (the tests compare them), the random draws too: a
seeded run trains exactly as before, only faster.

:class:`MaskedPPO` is ``MaskablePPO`` with both on its policy; it saves, loads and plays as
``MaskablePPO`` (the policy's class is unchanged). Prediction is unchanged.
"""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from torch.nn import functional as F

__all__ = [
    "HUGE_NEG",
    "MaskedPPO",
    "bootstrap_timeouts",
    "masked_evaluate_actions",
    "masked_forward",
    "play_rollout",
    "use_masked_policy",
]

#: the logit sb3-contrib gives an illegal action (``MaskableCategorical``)
HUGE_NEG = -1e8


def _masked_log_pmf(
    policy: Any, obs: th.Tensor, action_masks: np.ndarray | th.Tensor | None
) -> tuple[th.Tensor, th.Tensor, th.Tensor | None]:
    """(normalized log-probabilities of every action ``(N, A)``, values ``(N, 1)``, the legal
    mask or None)."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    values = policy.value_net(latent_vf)
    logits = policy.action_net(latent_pi)
    log_pmf = logits - logits.logsumexp(dim=-1, keepdim=True)
    legal = None
    if action_masks is not None:
        legal = th.as_tensor(action_masks, dtype=th.bool, device=log_pmf.device)
        legal = legal.reshape(log_pmf.shape)
        # th.where(legal, log_pmf, HUGE_NEG) as products and a sum, which take a fraction of
        # where's time (and of its backward's): x * 1.0 + 0.0 is x, x * 0.0 + HUGE_NEG is
        # HUGE_NEG; the gradient is the upstream one times 1 or 0
        keep = legal.to(log_pmf.dtype)
        masked = log_pmf * keep + keep.mul(-HUGE_NEG).add_(HUGE_NEG)
        # an update: forward and backward skip the illegal entries; a rollout (no gradient):
        # torch's own, which measured no slower there
        normalizer = _MaskedLogSumExp.apply if masked.requires_grad else _logsumexp
        norm = normalizer(masked, legal)
        if not math.isfinite(norm.detach().sum().item()):
            # a row with an infinite or NaN log-probability (a diverged network's logits, or
            # two so far apart that their difference overflows), where 0 * inf is NaN and the
            # row's NaN reaches its normalizer; th.where gives an illegal entry HUGE_NEG
            # whatever it was: its masking then, for the same values as ever
            huge_neg = th.tensor(HUGE_NEG, dtype=log_pmf.dtype, device=log_pmf.device)
            masked = th.where(legal, log_pmf, huge_neg)
            norm = normalizer(masked, legal)
        log_pmf = masked - norm
    return log_pmf, values, legal


def _logsumexp(x: th.Tensor, _legal: th.Tensor) -> th.Tensor:
    return x.logsumexp(dim=-1, keepdim=True)


def _monitors_only(env: Any) -> bool:
    """Whether the wrappers around the env of several processes (``env``) are all
    ``VecMonitor``s, whose work the helpers' whole rollouts do themselves. Any other wrapper (``VecNormalize``, ``VecFrameStack``...)
    must see every step, so such an env is stepped here step by step, as any VecEnv is (the
    helpers' rollouts skipped it: the wrapper was never applied); a warning says so (once a
    run, as Python's warnings filter shows it)."""
    from stable_baselines3.common.vec_env import VecEnvWrapper, VecMonitor

    others = []
    while isinstance(env, VecEnvWrapper):
        if not isinstance(env, VecMonitor):
            others.append(type(env).__name__)
        env = env.venv
    if others:
        warnings.warn(
            f"{', '.join(others)} around the games of several processes: collected step by "
            "step through the wrappers (the helpers do not play whole rollouts)",
            stacklevel=4,
        )
    return not others


class _MaskedLogSumExp(th.autograd.Function):
    """``x.logsumexp(dim=-1, keepdim=True)`` and its gradient, to the bit, for ``x`` whose
    entries outside ``legal`` are :data:`HUGE_NEG`, without the exponential of those entries.

    Their exponentials are 0 either way, but on CPU torch's ``exp`` of an argument below about
    -87 takes some twenty times as long as of an ordinary one, and with most actions illegal
    they were most of the elements: this computes the exponential of 0 there and sets it to 0,
    as torch's ``logsumexp`` (the row's maximum subtracted, ``exp_``, ``sum``, ``log_``, the
    maximum added back) and its backward (the gradient times ``exp(x - result)``) get it. A
    row with no legal action is computed whole, as torch does. The zeroing is a product with a
    0/1 tensor, which gives the same values as ``masked_fill_`` in a fifth of its time.
    It takes the legal entries to lie above :data:`HUGE_NEG`: logits that spread by more than
    that (a network diverged by some 1e8) give infinite values here, where sb3-contrib's
    masking of the raw logits stays finite.
    """

    @staticmethod
    def forward(ctx: Any, x: th.Tensor, legal: th.Tensor) -> th.Tensor:
        # 0 where illegal in a row with a legal action, else 1: a product with it zeroes those
        # entries before the exponential (exp(-0.0) is 1) and after it, as masked_fill_ would,
        # and keeps the others as they are (x * 1.0 is x), at a fraction of masked_fill_'s time
        keep = (~legal & legal.any(dim=-1, keepdim=True)).logical_not_().to(x.dtype)
        maxes = x.amax(dim=-1, keepdim=True)
        exps = (x - maxes).mul_(keep).exp_().mul_(keep)
        result = exps.sum(dim=-1, keepdim=True).log_().add_(maxes)
        ctx.save_for_backward(x, keep, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: th.Tensor) -> tuple[th.Tensor, None]:
        x, keep, result = ctx.saved_tensors
        exps = (x - result).mul_(keep).exp_().mul_(keep)
        return grad * exps, None


def masked_forward(
    policy: Any,
    obs: th.Tensor,
    deterministic: bool = False,
    action_masks: np.ndarray | th.Tensor | None = None,
) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
    """(actions, values, log-probabilities) of a ``MaskableActorCriticPolicy`` with a
    discrete action space, as its ``forward`` returns them: actions ``(N,)``, values
    ``(N, 1)``, log-probabilities ``(N,)``."""
    log_pmf, values, _ = _masked_log_pmf(policy, obs, action_masks)
    probs = F.softmax(log_pmf, dim=-1)
    if deterministic:
        actions = th.argmax(probs, dim=1)
    else:
        actions = th.multinomial(probs, 1, True)[:, 0]
    log_prob = log_pmf.gather(-1, actions[:, None]).squeeze(-1)
    return actions, values, log_prob


def masked_evaluate_actions(
    policy: Any,
    obs: th.Tensor,
    actions: th.Tensor,
    action_masks: np.ndarray | th.Tensor | None = None,
) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
    """(values ``(N, 1)``, log-probabilities ``(N,)``, entropies ``(N,)``) of ``actions``, as
    ``MaskableActorCriticPolicy.evaluate_actions`` returns them."""
    log_pmf, values, legal = _masked_log_pmf(policy, obs, action_masks)
    return _evaluated(log_pmf, values, legal, actions)


def _evaluated(
    log_pmf: th.Tensor, values: th.Tensor, legal: th.Tensor | None, actions: th.Tensor
) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
    log_prob = log_pmf.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)
    p_log_p = log_pmf * F.softmax(log_pmf, dim=-1)
    if legal is not None:  # th.where(legal, p_log_p, 0.0): a product, as in _masked_log_pmf
        p_log_p = p_log_p * legal.to(p_log_p.dtype)
    return values, log_prob, -p_log_p.sum(-1)


def anchor_kl(
    log_pmf: th.Tensor, reference_log_pmf: th.Tensor, legal: th.Tensor | None
) -> th.Tensor:
    """``KL(reference || policy)`` per row over the legal actions, ``(N,)``: the
    cross-entropy of the policy's log-probabilities ``log_pmf`` under the reference's less
    the reference's entropy (0 where the two agree)."""
    ref_p = reference_log_pmf.exp()
    terms = ref_p * (reference_log_pmf - log_pmf)
    if legal is not None:
        terms = th.where(legal, terms, th.zeros((), dtype=terms.dtype, device=terms.device))
    return terms.sum(-1)


def bootstrap_timeouts(
    policy: Any, rewards: np.ndarray, dones: np.ndarray, infos: list[dict[str, Any]], gamma: float
) -> None:
    """Add ``gamma`` times the value of its last observation to the reward of each game cut
    short by a time limit (in place), as stable-baselines3's rollouts do."""
    for i in np.flatnonzero(dones):
        terminal = infos[i].get("terminal_observation")
        if terminal is not None and infos[i].get("TimeLimit.truncated", False):
            with th.no_grad():
                value = policy.predict_values(policy.obs_to_tensor(terminal)[0])
            rewards[i] += gamma * value[0]


def play_rollout(
    policy: Any,
    env: Any,
    masks_of: Any,
    obs: np.ndarray,
    steps: int,
    gamma: float,
    out: dict[str, np.ndarray],
    after_step: Callable[[int, list[tuple[int, dict[str, Any]]]], None] | None = None,
) -> tuple[np.ndarray, list[tuple[int, int, dict[str, Any]]]]:
    """Play ``steps`` steps of the VecEnv ``env`` from ``obs`` with ``policy``, its masks from
    ``masks_of()``, writing step ``t`` into row ``t`` of ``out``'s ``obs``, ``masks``,
    ``actions``, ``values``, ``log_probs``, ``rewards`` and ``dones`` (time-limit cuts
    bootstrapped, :func:`bootstrap_timeouts`). Returns the last observations and the non-empty
    infos as ``(step, game, info)``.

    :param after_step: called as ``after_step(t, infos)`` once row ``t`` is written, with that
        step's non-empty infos as ``(game, info)``.
    """
    infos_out: list[tuple[int, int, dict[str, Any]]] = []
    for t in range(steps):
        masks = masks_of()
        with th.no_grad():
            actions, values, log_probs = policy(
                th.as_tensor(obs, device=policy.device), action_masks=masks
            )
        actions = actions.cpu().numpy()
        out["obs"][t] = obs
        out["masks"][t] = masks
        out["actions"][t] = actions
        out["values"][t] = values.cpu().numpy().reshape(-1)
        out["log_probs"][t] = log_probs.cpu().numpy()
        obs, rewards, dones, infos = env.step(actions)
        bootstrap_timeouts(policy, rewards, dones, infos, gamma)
        out["rewards"][t] = rewards
        out["dones"][t] = dones
        step_infos = [(i, info) for i, info in enumerate(infos) if info]
        infos_out += [(t, i, info) for i, info in step_infos]
        if after_step is not None:
            after_step(t, step_infos)
    return obs, infos_out


def use_masked_policy(policy: Any) -> bool:
    """Give ``policy`` :func:`masked_forward` and :func:`masked_evaluate_actions` as its
    ``forward`` and ``evaluate_actions`` where they apply (a discrete action space); returns
    whether it did."""
    if not isinstance(policy.action_space, spaces.Discrete):
        return False
    policy.forward = types.MethodType(masked_forward, policy)
    policy.evaluate_actions = types.MethodType(masked_evaluate_actions, policy)
    return True


class MaskedPPO(MaskablePPO):
    """``MaskablePPO`` whose policy uses :func:`masked_forward` and
    :func:`masked_evaluate_actions` (module docstring).

    With an anchor (:meth:`set_anchor`: a frozen reference policy, the warm start's, and a
    coefficient ``c > 0``), every update's loss gains ``c * mean KL(reference || policy)``
    over the minibatch's states (:func:`anchor_kl`), and ``train/anchor_kl`` logs the mean
    KL of each update phase. Without one (or with ``c = 0``) the updates are
    ``MaskablePPO``'s own.
    """

    anchor: Any = None
    anchor_coef: float = 0.0
    #: torch threads of the updates (None: as many as the process has); the collection keeps
    #: the process's own number
    update_threads: int | None = None

    def _setup_model(self) -> None:
        super()._setup_model()
        use_masked_policy(self.policy)

    def _excluded_save_params(self) -> list[str]:
        # the reference is the run's warm_start.rz, read back on resume (train.py)
        return [*super()._excluded_save_params(), "anchor", "update_threads"]

    def set_anchor(self, reference: Any, coef: float) -> None:
        """Anchor the updates to ``reference`` (a policy of the same network and inputs,
        used frozen) with weight ``coef``."""
        if coef < 0:
            raise ValueError(f"the anchor's coefficient must be >= 0, got {coef}")
        reference = reference.to(self.device)
        reference.set_training_mode(False)
        for param in reference.parameters():
            param.requires_grad_(False)
        self.anchor = reference
        self.anchor_coef = float(coef)

    def train(self) -> None:
        threads = th.get_num_threads()
        if self.update_threads is None or self.update_threads == threads:
            self._train()
            return
        th.set_num_threads(self.update_threads)
        try:
            self._train()
        finally:
            th.set_num_threads(threads)

    def _train(self) -> None:
        if self.anchor is None or self.anchor_coef <= 0:
            super().train()
            return
        policy = self.policy
        optimizer = policy.optimizer
        reference = self.anchor
        coef = self.anchor_coef
        pending: list[th.Tensor] = []
        kls: list[float] = []

        def evaluate_actions(
            obs: th.Tensor, actions: th.Tensor, action_masks: Any = None
        ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
            log_pmf, values, legal = _masked_log_pmf(policy, obs, action_masks)
            with th.no_grad():
                reference_log_pmf = _masked_log_pmf(reference, obs, action_masks)[0]
            pending[:] = [anchor_kl(log_pmf, reference_log_pmf, legal).mean()]
            return _evaluated(log_pmf, values, legal, actions)

        zero_grad = optimizer.zero_grad

        def zero_grad_then_anchor(set_to_none: bool = True) -> None:
            # MaskablePPO clears the gradients right before the backward pass of its loss:
            # the anchor's gradient goes in first, and its own adds to it (before clipping)
            zero_grad(set_to_none=set_to_none)
            if pending:
                kl = pending.pop()
                kls.append(kl.item())
                (coef * kl).backward(retain_graph=True)

        own = policy.__dict__.get("evaluate_actions")  # the masked one, bound to the policy
        own_zero_grad = optimizer.__dict__.get("zero_grad")
        policy.evaluate_actions = evaluate_actions
        optimizer.zero_grad = zero_grad_then_anchor  # type: ignore[method-assign]
        try:
            super().train()
        finally:
            if own is None:
                del policy.evaluate_actions
            else:
                policy.evaluate_actions = own
            if own_zero_grad is None:
                del optimizer.zero_grad  # back to the class's method
            else:
                optimizer.zero_grad = own_zero_grad
        if kls:
            self.logger.record("train/anchor_kl", float(np.mean(kls)))

    def collect_rollouts(
        self,
        env: Any,
        callback: Any,
        rollout_buffer: Any,
        n_rollout_steps: int,
        use_masking: bool = True,
    ) -> bool:
        split = getattr(env, "unwrapped", env)
        if use_masking and hasattr(split, "start_rollouts") and _monitors_only(env):
            return self._collect_split(split, callback, rollout_buffer, n_rollout_steps)
        return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)

    def _collect_split(
        self, split: Any, callback: Any, rollout_buffer: Any, n_rollout_steps: int
    ) -> bool:
        """``collect_rollouts`` over a :class:`~rummyzoo.training.split_env.SplitSeatEnv`:
        each helper process plays its games' rollout on its own with a copy of the policy
        (``start_rollouts``) while this process plays its own share step by step, so that no
        process waits for another within a rollout. Once every share is done, the callbacks
        see the rollout's steps in order, each with every game's rewards, dones and infos
        (as ``MaskablePPO`` shows them, only later: a callback that stops the training stops
        it at the end of the rollout)."""
        assert self._last_obs is not None, "No previous observation was provided"
        self.policy.set_training_mode(False)
        rollout_buffer.reset()
        callback.on_rollout_start()
        buf, local, n = rollout_buffer, split.local_games, n_rollout_steps
        # the helpers' draws: seeded from the run's seed and the step they start at (a resumed
        # run's helpers do not replay the draws of its start), from fresh entropy in a run
        # without a seed
        seed = self.seed if self.seed is not None else np.random.SeedSequence().entropy
        dones = np.empty((n, split.num_envs), dtype=bool)
        whole = {  # every game's columns: the helpers' steps are copied in as they come
            "obs": buf.observations,
            "masks": buf.action_masks,
            "actions": buf.actions[..., 0],
            "values": buf.values,
            "log_probs": buf.log_probs,
            "rewards": buf.rewards,
            "dones": dones,
        }
        split.start_rollouts(
            self.policy, n, self.gamma, (seed + self.num_timesteps) % 2**32, into=whole
        )
        own = {key: array[:, local] for key, array in whole.items()}  # this process's
        try:
            obs, local_infos = play_rollout(
                self.policy,
                split.local_monitor,
                split.local.action_masks,
                self._last_obs[local],
                n,
                self.gamma,
                own,
                # the helpers' steps that are in, taken while this share plays (their pipes
                # drained, their copies made before the last helper's step is in)
                after_step=lambda _t, _infos: split.poll_rollouts(),
            )
            with th.no_grad():
                values = self.policy.predict_values(th.as_tensor(obs, device=self.device))
            last_values = np.empty(split.num_envs, dtype=np.float32)
            last_values[local] = values.cpu().numpy().reshape(-1)
            new_obs, rollouts, helper_infos = split.finish_rollouts(obs)
        except BaseException:
            # this process's share stopped mid-rollout (an error, Ctrl-C): the helpers' rollouts
            # are not read, and the env closes rather than be left waiting for them
            split.close()
            raise
        for part, rollout in zip(split.helper_slices, rollouts, strict=True):
            last_values[part] = rollout["last_values"]
        buf.episode_starts[0] = self._last_episode_starts
        buf.episode_starts[1:] = dones[:-1]
        # each step's non-empty infos in the order of the games (the local share comes first)
        sparse: list[list[tuple[int, dict[str, Any]]]] = [[] for _ in range(n)]
        for t, i, info in local_infos:
            sparse[t].append((local.start + i, info))
        for t, game, info in helper_infos:
            sparse[t].append((game, info))
        buf.pos, buf.full = buf.buffer_size, True
        self._last_obs = new_obs
        self._last_episode_starts = dones[-1].copy()
        for t in range(n):  # the steps as the callbacks see them in one process
            infos: list[dict[str, Any]] = [{} for _ in range(split.num_envs)]
            for game, info in sparse[t]:
                infos[game] = info
            rewards = buf.rewards[t].copy()
            actions = buf.actions[t].astype(np.int64)
            step_dones = dones[t]
            step_obs = buf.observations[t + 1] if t + 1 < n else new_obs
            self.num_timesteps += split.num_envs
            callback.update_locals(
                {
                    "infos": infos,
                    "dones": step_dones,
                    "rewards": rewards,
                    "actions": actions,
                    "new_obs": step_obs,
                    "n_steps": t + 1,
                    "env": split,
                }
            )
            if not callback.on_step():
                return False
            # only the non-empty infos, in order: the same as all of them, sooner
            games = [game for game, _ in sparse[t]]
            self._update_info_buffer([info for _, info in sparse[t]], step_dones[games])
        buf.compute_returns_and_advantage(
            last_values=th.as_tensor(last_values), dones=self._last_episode_starts
        )
        callback.on_rollout_end()
        return True
