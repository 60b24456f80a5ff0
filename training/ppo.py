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
    log_prob = log_pmf.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)
    p_log_p = log_pmf * F.softmax(log_pmf, dim=-1)
    if legal is not None:
        p_log_p = th.where(legal, p_log_p, th.tensor(0.0, device=p_log_p.device))
    return values, log_prob, -p_log_p.sum(-1)


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
    :func:`masked_evaluate_actions` (module docstring)."""

    def _setup_model(self) -> None:
        super()._setup_model()
        use_masked_policy(self.policy)
