"""Warm start by behaviour cloning: the learner first imitates a teacher, then RL takes over.

With ``pretrain: {teacher: knock.smart, decisions: N}`` in a PPO config, a run begins by
letting the teacher play the learner's seat in the very training env (same opponents, rewards,
features), recording N decisions. The policy network is then fitted to the teacher's choices
(cross-entropy over the legal actions) and the value network to the discounted returns that
followed, for a few epochs; 10% of the games are held out to measure how often the network
picks the teacher's action. PPO then starts from that policy instead of from random play.

A DQN run is warm-started the same way (:func:`clone_into_dqn`): its Q-network is fitted to
the returns of the teacher's actions with a large margin over the other legal actions, so its
greedy policy starts as the teacher's.

Nothing of the teacher is kept: the checkpoint is the network alone, reading only the learner's
own observation. The time the warm start takes is part of the run (``summary.json`` and the
``pretrain/*`` TensorBoard scalars report it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch as th
from torch.nn import functional as F

from rummyzoo.agents.registry import make_agent


class RowStore:
    """Rows of one shape and dtype, stored in fixed blocks as they come (no list of arrays,
    no growing copies) and gathered once, in any order, into one array: each block is freed as
    soon as its last wanted row is copied, so the gather needs little more than its result."""

    BLOCK = 1024

    def __init__(self, row_shape: tuple[int, ...] = (0,), dtype: Any = np.float32) -> None:
        """:param row_shape, dtype: of an empty store's rows (else those of the first rows)."""
        self.blocks: list[np.ndarray | None] = []
        self.size = 0
        self.row_shape, self.dtype = tuple(row_shape), np.dtype(dtype)

    def add(self, rows: np.ndarray) -> int:
        """Append ``rows`` (an array of rows, all of the first rows' shape and dtype); returns
        the index of the first."""
        if self.blocks and (rows.shape[1:], rows.dtype) != (self.row_shape, self.dtype):
            raise ValueError(
                f"rows of shape {rows.shape[1:]} and dtype {rows.dtype} added to a store of "
                f"{self.row_shape} {self.dtype}"
            )
        self.row_shape, self.dtype = rows.shape[1:], rows.dtype
        first = self.size
        done = 0
        while done < len(rows):
            at = self.size % self.BLOCK
            if at == 0:
                self.blocks.append(np.empty((self.BLOCK, *rows.shape[1:]), dtype=rows.dtype))
            take = min(self.BLOCK - at, len(rows) - done)
            block = self.blocks[-1]
            assert block is not None
            block[at : at + take] = rows[done : done + take]
            done += take
            self.size += take
        return first

    def gather(self, order: np.ndarray) -> np.ndarray:
        """The rows ``order`` (indices returned by :meth:`add`, each at most once), as one
        array; the store is emptied."""
        order = np.asarray(order, dtype=np.int64)
        if order.size and (order.min() < 0 or order.max() >= self.size):
            raise IndexError(f"rows {order.min()}..{order.max()} of a store of {self.size}")
        out = np.empty((len(order), *self.row_shape), dtype=self.dtype)
        block_of, offset = np.divmod(order, self.BLOCK)
        last_use = np.full(len(self.blocks), -1, dtype=np.int64)
        np.maximum.at(last_use, block_of, np.arange(len(order)))
        for b in np.flatnonzero(last_use < 0).tolist():
            self.blocks[b] = None
        for start in range(0, len(order), self.BLOCK):
            stop = min(start + self.BLOCK, len(order))
            blocks, offsets = block_of[start:stop], offset[start:stop]
            for b in np.unique(blocks).tolist():
                chosen = blocks == b
                out[start:stop][chosen] = self.blocks[b][offsets[chosen]]  # type: ignore[index]
            for b in np.flatnonzero((last_use >= start) & (last_use < stop)).tolist():
                self.blocks[b] = None
        self.blocks, self.size = [], 0
        return out


def collect_teacher_games(
    env: Any,
    teacher_name: str,
    decisions: int,
    seed: int,
    gamma: float,
    progress: Callable[[int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Let ``teacher_name`` play the learner's seat of a :class:`SeatEnv` for ``decisions``
    decisions (finishing the game in progress). Returns the learner inputs, masks, actions,
    discounted returns and a game id per decision."""
    teacher = make_agent(teacher_name, env.variant, env.num_players, env.env_options)
    rng = np.random.default_rng(seed)
    store = RowStore()  # the learner inputs: large rows (thousands of features each)
    masks, actions, rewards, games = [], [], [], []
    obs, _ = env.reset(seed=seed)
    game = 0
    while True:
        # The teacher sees what the learner would: its own observation and the legal moves.
        seen = env.match.observe(env.seat)
        action = int(teacher.act(seen, env.action_masks().astype(np.int8), rng))
        store.add(np.asarray(obs, dtype=np.float32)[None])
        masks.append(env.action_masks().copy())
        actions.append(action)
        games.append(game)
        obs, reward, terminated, truncated, _ = env.step(action)
        rewards.append(float(reward))
        if terminated or truncated:
            game += 1
            if progress is not None:
                progress(len(actions))
            if len(actions) >= decisions:
                break
            obs, _ = env.reset()
    returns = np.zeros(len(rewards), dtype=np.float32)
    running = 0.0
    for i in range(len(rewards) - 1, -1, -1):
        if i + 1 < len(rewards) and games[i + 1] != games[i]:
            running = 0.0
        running = rewards[i] + gamma * running
        returns[i] = running
    return {
        "obs": store.gather(np.arange(len(actions))),
        "masks": np.asarray(masks, dtype=bool),
        "actions": np.asarray(actions, dtype=np.int64),
        "returns": returns,
        "games": np.asarray(games, dtype=np.int64),
    }


def collect_teacher_games_batched(
    env: Any,
    teacher_name: str,
    decisions: int,
    seed: int,
    gamma: float,
    progress: Callable[[int], None] | None = None,
) -> dict[str, np.ndarray]:
    """:func:`collect_teacher_games` on a :class:`~rummyzoo.training.vec_env.BatchedSeatEnv`:
    the teacher plays the learner's seat in all its games at once (its ``act_batch`` where it
    has one, else game by game) until the finished games hold ``decisions`` decisions; the
    games still in progress then are left out. Games are numbered in the order they finish."""
    from rummyzoo.training.vec_env import act_batch

    teacher = make_agent(teacher_name, env.variant, env.num_players, env.env_options)
    rng = np.random.default_rng(seed)
    env.seed(seed)
    obs = env.reset()
    n = env.num_envs
    store = RowStore()  # the learner inputs, in the order they came
    running: list[list[tuple[int, np.ndarray, int, float]]] = [[] for _ in range(n)]
    finished: list[list[tuple[int, np.ndarray, int, float]]] = []
    count = 0
    while count < decisions:
        masks = env.action_masks()
        # The teacher sees what the learner would: its own observation and the legal moves.
        actions = act_batch(teacher, env.engine.observations, masks.astype(np.int8), rng)
        first = store.add(np.asarray(obs, dtype=np.float32))
        next_obs, rewards, dones, _ = env.step(actions)
        for i in range(n):
            running[i].append((first + i, masks[i], int(actions[i]), float(rewards[i])))
        for i in np.flatnonzero(dones).tolist():
            finished.append(running[i])
            count += len(running[i])
            running[i] = []
        if progress is not None and dones.any():
            progress(min(count, decisions))
        obs = next_obs
    rows = [step for game in finished for step in game]
    games = np.repeat(np.arange(len(finished)), [len(g) for g in finished])
    returns = np.zeros(len(rows), dtype=np.float32)
    k = len(rows)
    for game in reversed(finished):
        total = 0.0
        for step in reversed(game):
            k -= 1
            total = step[3] + gamma * total
            returns[k] = total
    return {
        "obs": store.gather(np.asarray([r[0] for r in rows], dtype=np.int64)),
        "masks": np.asarray([r[1] for r in rows], dtype=bool),
        "actions": np.asarray([r[2] for r in rows], dtype=np.int64),
        "returns": returns,
        "games": games.astype(np.int64),
    }


def _split(games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The decisions fitted and those held out to measure the fit: one game in ten is held
    out (one decision in ten when there are too few games, the last one of fewer than ten;
    a single decision is both fitted and measured)."""
    n = len(games)
    held = games % 10 == 9
    if held.all() or not held.any():
        held = np.arange(n) % 10 == 9
        if not held.any() and n > 1:
            held[-1] = True
    if not held.any():
        return np.arange(n), np.arange(n)
    return np.flatnonzero(~held), np.flatnonzero(held)


def clone_into_ppo(
    model: Any,
    data: dict[str, np.ndarray],
    epochs: int,
    batch_size: int,
    learning_rate: float,
    value_coef: float = 0.5,
    seed: int = 0,
) -> dict[str, float]:
    """Fit a MaskablePPO policy to the teacher's actions and its value net to the returns.

    :returns: held-out accuracy (share of the teacher's actions the network ranks first),
        held-out cross-entropy, and the final value loss.
    """
    policy = model.policy
    device = policy.device
    train_idx, held = _split(data["games"])
    tensors = {
        k: th.as_tensor(data[k], device=device) for k in ("obs", "masks", "actions", "returns")
    }
    test_idx = th.as_tensor(held, device=device)
    optimizer = th.optim.Adam(policy.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    policy.set_training_mode(True)
    value_loss = 0.0
    for _ in range(epochs):
        order = rng.permutation(train_idx)
        for start in range(0, len(order), batch_size):
            idx = th.as_tensor(order[start : start + batch_size], device=device)
            obs = tensors["obs"][idx]
            dist = policy.get_distribution(obs, action_masks=tensors["masks"][idx])
            log_prob = dist.log_prob(tensors["actions"][idx])
            values = policy.predict_values(obs).flatten()
            v_loss = F.mse_loss(values, tensors["returns"][idx])
            loss = -log_prob.mean() + value_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            value_loss = float(v_loss.item())
    policy.set_training_mode(False)
    with th.no_grad():
        obs = tensors["obs"][test_idx]
        masks = tensors["masks"][test_idx]
        dist = policy.get_distribution(obs, action_masks=masks)
        acts = tensors["actions"][test_idx]
        logits = dist.distribution.logits
        accuracy = float((logits.argmax(dim=1) == acts).float().mean().item())
        cross_entropy = float(-dist.log_prob(acts).mean().item())
    return {
        "accuracy": accuracy,
        "cross_entropy": cross_entropy,
        "value_loss": value_loss,
        "held_out": len(test_idx),
    }


def clone_into_dqn(
    model: Any,
    data: dict[str, np.ndarray],
    epochs: int,
    batch_size: int,
    learning_rate: float,
    margin: float = 0.05,
    margin_coef: float = 1.0,
    seed: int = 0,
) -> dict[str, float]:
    """Fit a masked DQN's Q-network to the teacher: Q(s, teacher's action) to the discounted
    return that followed, and a large-margin term that puts the teacher's action at least
    ``margin`` above every other legal action (as in deep Q-learning from demonstrations), so
    the greedy policy starts as the teacher's and its values are those of the teacher's play.
    The target network starts as a copy.

    :returns: held-out accuracy (share of the teacher's actions ranked first), held-out
        mean squared error of Q(s, teacher's action), and the final loss.
    """
    from rummyzoo.agents.networks import mask_from_obs
    from rummyzoo.training.dqn import large_margin

    policy = model.policy
    q_net = policy.q_net
    device = policy.device
    n = int(model.action_space.n)
    train_idx, held = _split(data["games"])
    tensors = {k: th.as_tensor(data[k], device=device) for k in ("obs", "actions", "returns")}
    test_idx = th.as_tensor(held, device=device)
    optimizer = th.optim.Adam(q_net.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    q_net.train(True)
    last = 0.0

    def losses(obs: th.Tensor, acts: th.Tensor, returns: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        q = q_net(obs)
        chosen = q.gather(1, acts[:, None]).squeeze(1)
        return F.mse_loss(chosen, returns), large_margin(q, obs, acts, margin, n)

    for _ in range(epochs):
        order = rng.permutation(train_idx)
        for start in range(0, len(order), batch_size):
            idx = th.as_tensor(order[start : start + batch_size], device=device)
            value, margin_term = losses(
                tensors["obs"][idx], tensors["actions"][idx], tensors["returns"][idx]
            )
            loss = value + margin_coef * margin_term
            optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(q_net.parameters(), 10.0)
            optimizer.step()
            last = float(loss.item())
    q_net.train(False)
    policy.q_net_target.load_state_dict(q_net.state_dict())
    with th.no_grad():
        obs = tensors["obs"][test_idx]
        acts = tensors["actions"][test_idx]
        q = q_net(obs).masked_fill(~mask_from_obs(obs, n), -th.inf)
        accuracy = float((q.argmax(dim=1) == acts).float().mean().item())
        chosen = q.gather(1, acts[:, None]).squeeze(1)
        error = float(F.mse_loss(chosen, tensors["returns"][test_idx]).item())
    return {"accuracy": accuracy, "value_loss": error, "loss": last, "held_out": len(test_idx)}


def pretrain(
    model: Any, config: Any, seat_env: Any, progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Run the configured warm start on ``model`` (see the module docstring), in ``seat_env``:
    a :class:`~rummyzoo.training.seat_env.SeatEnv` or a batched env.

    :param progress: called with the number of teacher decisions recorded so far.
    """
    spec = config.pretrain
    started = time.perf_counter()
    collect = collect_teacher_games if hasattr(seat_env, "match") else collect_teacher_games_batched
    data = collect(
        seat_env,
        spec.teacher,
        spec.decisions,
        seed=config.teacher_seed(),
        gamma=config.hyperparams.gamma,
        progress=progress,
    )
    collected = time.perf_counter()
    fit = {
        "epochs": spec.epochs,
        "batch_size": spec.batch_size,
        "learning_rate": spec.learning_rate,
        "seed": config.seed,
    }
    if config.algo == "dqn":
        result = clone_into_dqn(
            model, data, margin=spec.margin, margin_coef=spec.margin_coef, **fit
        )
        if spec.demo_coef > 0:
            model.set_demonstrations(
                data["obs"], data["actions"], spec.demo_coef, spec.margin, spec.demo_batch_size
            )
    else:
        result = clone_into_ppo(model, data, **fit)
    done = time.perf_counter()
    result.update(
        {
            "teacher": spec.teacher,
            "decisions": len(data["actions"]),
            "games": int(data["games"][-1] + 1),
            "collect_seconds": collected - started,
            "fit_seconds": done - collected,
        }
    )
    return result
