"""DQN with action masking done right.

The seat env appends the legal-action mask to each observation (``mask_in_obs=True``), so the
replay buffer stores every next state's mask with it. Masking then applies everywhere:

* greedy actions: Q-values of illegal actions are set to -inf before the argmax;
* exploration (and the warm-up before ``learning_starts``): random actions are drawn among the
  legal ones only;
* the TD target: ``max_a' Q_target(s', a')`` runs over the legal actions of ``s'`` only.

A game's last observation has no legal action, a game cut by the turn cap's too (the learner
acts no more in it), so its target is its reward alone: where PPO bootstraps a cut game from
the value of where it stopped, DQN scores it as an end (the cap shows in the observation's
turn count). The shipped configs' caps cut almost no game. With reward shaping the training
envs end a cut game's shaping with the potential 0 for DQN (``bootstrap_cuts=False``), as at an
end, so the shaped returns stay policy-neutral under this target.

A run warm-started from a teacher may keep the teacher's recorded decisions
(``pretrain.demo_coef``): every update then adds the large-margin term of deep Q-learning from
demonstrations (:func:`large_margin`) on a batch of them, so that Q-learning departs from the
teacher's choice only where the learnt values beat it by more than the margin.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from stable_baselines3 import DQN
from torch.nn import functional as F

from rummyzoo.agents.networks import MaskedDQNPolicy, mask_from_obs, masked_max
from rummyzoo.envs.files import atomic_write_bytes


def sample_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks``."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, row in enumerate(masks):
        legal = np.flatnonzero(row)
        if legal.size == 0:
            raise ValueError("no legal action to sample: the observation's mask is empty")
        out[i] = legal[rng.integers(legal.size)]
    return out


def large_margin(
    q: th.Tensor, obs: th.Tensor, actions: th.Tensor, margin: float, num_actions: int
) -> th.Tensor:
    """Mean over the batch of ``max over legal a of (Q(s, a) + margin * [a != a_E]) -
    Q(s, a_E)``: zero once the demonstrated action ``a_E`` is ``margin`` above every other
    legal action. ``actions`` has shape (B,)."""
    legal = mask_from_obs(obs, num_actions)
    chosen = q.gather(1, actions[:, None]).squeeze(1)
    bonus = th.full_like(q, margin).scatter_(1, actions[:, None], 0.0)
    best = (q + bonus).masked_fill(~legal, -th.inf).max(dim=1).values
    return (best - chosen).mean()


class MaskedDQN(DQN):
    """stable-baselines3 DQN with masking in acting, exploring and the TD target."""

    policy_aliases = {"MlpPolicy": MaskedDQNPolicy}  # noqa: RUF012

    def _setup_model(self) -> None:
        super()._setup_model()
        self._seed_draws(self.seed)
        self.demonstrations: dict[str, th.Tensor] | None = None
        self.refill_until = 0  # no updates up to this step (a resume refilling its buffer)
        self.demo_coef = 0.0
        self.demo_margin = 0.0
        self.demo_batch_size = 32

    def _seed_draws(self, seed: int | None) -> None:
        """The generators of the exploration and of the demonstration batches."""
        self._explore_rng = np.random.default_rng(seed)
        self._demo_rng = np.random.default_rng(None if seed is None else seed + 7)

    def set_random_seed(self, seed: int | None = None) -> None:
        super().set_random_seed(seed)
        # the exploration and demonstration draws go on from the new seed too (a resumed run
        # would otherwise replay the run's first draws: loading sets them from the run's seed)
        if seed is not None:
            self._seed_draws(seed)

    def _excluded_save_params(self) -> list[str]:
        # the demonstrations are saved beside the resume file (save_demonstrations), not in it
        return [*super()._excluded_save_params(), "demonstrations", "_logged_at", "refill_until"]

    def dump_logs(self) -> None:
        # stable-baselines3 writes its logs at every finished episode: games that end in the
        # same step of a vector env would write that step again and again
        if getattr(self, "_logged_at", None) == self.num_timesteps:
            return
        self._logged_at = self.num_timesteps
        super().dump_logs()

    def set_demonstrations(
        self,
        obs: np.ndarray,
        actions: np.ndarray,
        coef: float,
        margin: float,
        batch_size: int = 32,
    ) -> None:
        """Keep a teacher's decisions (learner observations, with their masks, and the
        teacher's actions) for the large-margin term of every update: ``batch_size`` of them
        drawn per update, the term weighted by ``coef``."""
        if len(obs) != len(actions) or len(obs) == 0:
            raise ValueError(
                f"demonstrations need as many actions as observations, and some: got "
                f"{len(obs)} observations and {len(actions)} actions"
            )
        device = self.policy.device
        self.demonstrations = {
            "obs": th.as_tensor(np.asarray(obs, dtype=np.float32), device=device),
            "actions": th.as_tensor(np.asarray(actions, dtype=np.int64), device=device),
        }
        self.demo_coef = float(coef)
        self.demo_margin = float(margin)
        self.demo_batch_size = int(batch_size)

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
        """SB3's DQN update with the masked TD target (none while a resumed run refills its
        replay buffer: :attr:`refill_until`)."""
        if self.num_timesteps <= getattr(self, "refill_until", 0):
            return
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        losses: list[float] = []
        demo_losses: list[float] = []
        for _ in range(gradient_steps):
            data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)
            target = self.td_target(
                data.rewards, data.next_observations, data.dones, data.discounts
            )
            demo = None
            if self.demonstrations is not None and self.demo_coef > 0:
                demo = self._demo_batch(self.demo_batch_size)
                # one forward pass for the replay batch and the demonstrations
                q_all = self.q_net(th.cat([data.observations, demo["obs"]]))
                q, q_demo = q_all[:batch_size], q_all[batch_size:]
            else:
                q = self.q_net(data.observations)
            current = th.gather(q, dim=1, index=data.actions.long())
            loss = F.smooth_l1_loss(current, target)
            losses.append(loss.item())
            if demo is not None:
                margin_loss = large_margin(
                    q_demo, demo["obs"], demo["actions"], self.demo_margin, self.num_actions
                )
                demo_losses.append(margin_loss.item())
                loss = loss + self.demo_coef * margin_loss
            self.policy.optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
            self.policy.optimizer.step()
        self._n_updates += gradient_steps
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(np.mean(losses)))
        if demo_losses:
            self.logger.record("train/demo_margin_loss", float(np.mean(demo_losses)))

    def save_demonstrations(self, path: str | Path) -> None:
        """Write the kept demonstrations (atomically) for a resumed run to read back."""
        assert self.demonstrations is not None
        buf = io.BytesIO()
        np.savez_compressed(
            buf,
            obs=self.demonstrations["obs"].cpu().numpy(),
            actions=self.demonstrations["actions"].cpu().numpy(),
        )
        atomic_write_bytes(Path(path), buf.getvalue())

    def load_demonstrations(
        self, path: str | Path, coef: float, margin: float, batch_size: int = 32
    ) -> None:
        """Read back what :meth:`save_demonstrations` wrote."""
        with np.load(Path(path), allow_pickle=False) as data:
            self.set_demonstrations(data["obs"], data["actions"], coef, margin, batch_size)

    def _demo_batch(self, batch_size: int) -> dict[str, th.Tensor]:
        assert self.demonstrations is not None
        size = len(self.demonstrations["actions"])
        idx = th.as_tensor(self._demo_rng.integers(size, size=batch_size), device=self.device)
        return {key: value[idx] for key, value in self.demonstrations.items()}
