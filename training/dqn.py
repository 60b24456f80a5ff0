"""DQN with action masking done right.

The seat env appends the legal-action mask to each observation (``mask_in_obs=True``), so the
replay buffer stores every next state's mask with it. Masking then applies everywhere:

* greedy actions: Q-values of illegal actions are set to -inf before the argmax;
* exploration (and the warm-up before ``learning_starts``): random actions are drawn among the
  legal ones only;
* the TD target: ``max_a' Q_target(s', a')`` runs over the legal actions of ``s'`` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from stable_baselines3 import DQN
from torch.nn import functional as F

from rummyzoo.agents.networks import MaskedDQNPolicy, mask_from_obs, masked_max


def sample_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks``."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, row in enumerate(masks):
        legal = np.flatnonzero(row)
        if legal.size == 0:
            raise ValueError("no legal action to sample: the observation's mask is empty")
        out[i] = legal[rng.integers(legal.size)]
    return out


class MaskedDQN(DQN):
    """stable-baselines3 DQN with masking in acting, exploring and the TD target."""

    policy_aliases = {"MlpPolicy": MaskedDQNPolicy}  # noqa: RUF012

    def _setup_model(self) -> None:
        super()._setup_model()
        self._explore_rng = np.random.default_rng(self.seed)

    @property
    def num_actions(self) -> int:
        return int(self.action_space.n)

    def _legal_random(self, observation: np.ndarray) -> np.ndarray:
        obs = np.asarray(observation).reshape(-1, self.observation_space.shape[0])
        return sample_legal(mask_from_obs(obs, self.num_actions), self._explore_rng)

    def predict(
        self,
        observation: np.ndarray,
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]:
        if not deterministic and self._explore_rng.random() < self.exploration_rate:
            actions = self._legal_random(observation)
            if np.asarray(observation).ndim == 1:
                return actions[0], state
            return actions, state
        return self.policy.predict(observation, state, episode_start, deterministic)

    def _sample_action(
        self, learning_starts: int, action_noise: Any = None, n_envs: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        if self.num_timesteps < learning_starts:
            action = self._legal_random(self._last_obs)
        else:
            action, _ = self.predict(self._last_obs, deterministic=False)
        return action, action

    def td_target(
        self,
        rewards: th.Tensor,
        next_obs: th.Tensor,
        dones: th.Tensor,
        discounts: th.Tensor | float | None = None,
    ) -> th.Tensor:
        """``r + discount * (1 - done) * max over legal a' of Q_target(s', a')``, shape (B, 1)."""
        discounts = self.gamma if discounts is None else discounts
        with th.no_grad():
            next_q = self.q_net_target(next_obs)
            best = masked_max(next_q, mask_from_obs(next_obs, self.num_actions)).reshape(-1, 1)
            return rewards + (1 - dones) * discounts * best

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """SB3's DQN update with the masked TD target."""
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        losses = []
        for _ in range(gradient_steps):
            data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)
            target = self.td_target(
                data.rewards, data.next_observations, data.dones, data.discounts
            )
            current = th.gather(self.q_net(data.observations), dim=1, index=data.actions.long())
            loss = F.smooth_l1_loss(current, target)
            losses.append(loss.item())
            self.policy.optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
            self.policy.optimizer.step()
        self._n_updates += gradient_steps
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(np.mean(losses)))
