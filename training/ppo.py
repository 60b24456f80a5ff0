"""MaskablePPO whose policy computes its masked distribution without distribution objects.

sb3-contrib's ``MaskableActorCriticPolicy`` builds a masked distribution object, and builds it
again to apply the mask, in ``forward`` (every step of the rollouts) and in
``evaluate_actions`` (every minibatch of the updates): for the small networks of card games
that costs more than the network itself. The functions here are the same computations on the
policy's own features, latents, value and logits, with the mask applied as sb3-contrib applies
it (an illegal action's logit set to ``-1e8``):

* :func:`masked_forward`: an action drawn from the softmax (the Gumbel-max draw: the argmax of
  the log-probabilities plus independent Gumbel noise picks each action with its probability),
  its log-probability and the value;
* :func:`masked_evaluate_actions`: the values, log-probabilities and entropies of given actions,
  with the same gradients.

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

__all__ = [
    "HUGE_NEG",
    "MaskedPPO",
    "masked_evaluate_actions",
    "masked_forward",
    "use_masked_policy",
]

#: the logit sb3-contrib gives an illegal action (``MaskableCategorical``)
HUGE_NEG = -1e8


def _masked_log_probs(
    policy: Any, obs: th.Tensor, action_masks: np.ndarray | th.Tensor | None
) -> tuple[th.Tensor, th.Tensor, th.Tensor | None]:
    """(log-probabilities of every action ``(N, A)``, values ``(N, 1)``, legal mask or None)."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    values = policy.value_net(latent_vf)
    logits = policy.action_net(latent_pi)
    legal = None
    if action_masks is not None:
        legal = th.as_tensor(action_masks, device=logits.device).reshape(logits.shape).bool()
        logits = logits.masked_fill(~legal, HUGE_NEG)
    return logits.log_softmax(dim=-1), values, legal


def masked_forward(
    policy: Any,
    obs: th.Tensor,
    deterministic: bool = False,
    action_masks: np.ndarray | th.Tensor | None = None,
) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
    """(actions, values, log-probabilities) of a ``MaskableActorCriticPolicy`` with a
    discrete action space, as its ``forward`` returns them: actions ``(N,)``, values
    ``(N, 1)``, log-probabilities ``(N,)``."""
    log_probs, values, _ = _masked_log_probs(policy, obs, action_masks)
    if deterministic:
        actions = log_probs.argmax(dim=-1)
    else:
        # Gumbel-max: -log(E) for E ~ Exp(1) is Gumbel noise
        noise = th.empty_like(log_probs).exponential_().log_()
        actions = (log_probs - noise).argmax(dim=-1)
    log_prob = log_probs.gather(1, actions[:, None]).squeeze(1)
    return actions, values, log_prob


def masked_evaluate_actions(
    policy: Any,
    obs: th.Tensor,
    actions: th.Tensor,
    action_masks: np.ndarray | th.Tensor | None = None,
) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
    """(values ``(N, 1)``, log-probabilities ``(N,)``, entropies ``(N,)``) of ``actions``, as
    ``MaskableActorCriticPolicy.evaluate_actions`` returns them (an illegal action adds
    nothing to the entropy)."""
    log_probs, values, legal = _masked_log_probs(policy, obs, action_masks)
    log_prob = log_probs.gather(1, actions.long().reshape(-1, 1)).squeeze(1)
    p_log_p = log_probs * log_probs.exp()
    if legal is not None:
        p_log_p = p_log_p.masked_fill(~legal, 0.0)
    return values, log_prob, -p_log_p.sum(dim=-1)


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
