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

import types
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from torch.nn import functional as F

__all__ = [
    "HUGE_NEG",
    "MaskedPPO",
    "masked_evaluate_actions",
    "masked_forward",
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
        huge_neg = th.tensor(HUGE_NEG, dtype=log_pmf.dtype, device=log_pmf.device)
        masked = th.where(legal, log_pmf, huge_neg)
        log_pmf = masked - masked.logsumexp(dim=-1, keepdim=True)
    return log_pmf, values, legal


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
    if legal is not None:
        p_log_p = th.where(legal, p_log_p, th.tensor(0.0, device=p_log_p.device))
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

    def _setup_model(self) -> None:
        super()._setup_model()
        use_masked_policy(self.policy)

    def _excluded_save_params(self) -> list[str]:
        # the reference is the run's warm_start.rz, read back on resume (train.py)
        return [*super()._excluded_save_params(), "anchor"]

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
