"""Training throughput: learner steps per second of a config, and where the time goes.

:func:`bench_train` builds a config's env and model and trains it for a number of learner
steps with nothing else running (no evaluation, no checkpoints, no warm start), timing:

* ``env``: the env's step, less the opponents' decisions (rules, observations, masks);
* ``opponents``: the opponents choosing their actions (batched env only: ``act_batch``
  calls; with a ``dummy``/``subproc`` env they are part of ``env``); with ``workers`` above 1,
  those of the learner's process only, and ``env`` its step with the wait for the helpers;
  the helpers' opponents, which ran beside it, are ``helper_opponent_seconds``;
* ``inference``: the learner's network choosing actions during collection;
* ``wait``: PPO with ``workers`` above 1 only: this process waiting, at the end of each
  rollout, for the helpers' rollouts (they play theirs with their own copy of the network,
  whose inference is not in ``inference``);
* ``buffer``: adding to the rollout / replay buffer (and PPO's returns and advantages);
* ``update``: the gradient updates;
* ``other``: what is left (the algorithm's own bookkeeping, tensor conversions...).

``collection_steps_per_s`` counts the collection phases only (everything but the updates),
``steps_per_s`` the whole run. A self-play pool (``pool``) fills the opponent pool with that
many snapshots of freshly initialised networks (different seeds) and plays against them only.
Without one, a config's ``self`` opponent plays one such snapshot (a run's pool holds the
learner as it starts from step 0 on), and its other opponents theirs, by their weights.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rummyzoo.envs.workers import settled_heap
from rummyzoo.training.config import RunConfig

__all__ = ["bench_train"]


class _Clock:
    """Seconds spent in wrapped calls, by part."""

    def __init__(self) -> None:
        self.parts: dict[str, float] = {}

    def wrap(self, part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.parts.setdefault(part, 0.0)
        clock = time.perf_counter
        parts = self.parts

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                parts[part] += clock() - start

        return timed


def _fill_pool(config: RunConfig, env: Any, pool: int, folder: Path) -> None:
    """``pool`` snapshots of fresh networks of the config's kind, in the env's opponent pool."""
    from rummyzoo.agents.checkpoints import save_checkpoint
    from rummyzoo.training.run_folder import checkpoint_meta
    from rummyzoo.training.train import build_model

    for k in range(pool):
        model = build_model(config.model_copy(update={"seed": config.seed + 1 + k}), env, None)
        path = folder / f"snapshot_{k}.rz"
        save_checkpoint(model, path, checkpoint_meta(config, 0))
        env.env_method("add_snapshot", str(path), k)


def bench_train(config: RunConfig, steps: int, pool: int = 0) -> dict[str, Any]:
    """Train ``config`` for ``steps`` learner steps and time its parts (module docstring).

    :param pool: self-play snapshots to play against (0: the config's opponents).
    """
    import torch

    from rummyzoo.training.config import OpponentSpec
    from rummyzoo.training.train import build_model, build_vec_env

    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if pool < 0:
        raise ValueError(f"pool must be 0 or more, got {pool}")
    if config.backend != "sb3":
        raise ValueError(
            f"this config trains on backend: {config.backend}, which bench-train does not time "
            "(it times the stable-baselines3 backend): use rummyzoo bench-rllib"
        )
    torch.set_num_threads(config.torch_threads)
    if pool:
        config = config.model_copy(update={"opponents": [OpponentSpec(name="self")]}, deep=True)
        config.self_play.pool_size = max(config.self_play.pool_size, pool)
    clock = _Clock()
    env = build_vec_env(config)
    with tempfile.TemporaryDirectory(prefix="rummyzoo-bench-") as tmp:
        if pool:
            _fill_pool(config, env, pool, Path(tmp))
        elif any(o.name == "self" for o in config.opponents):
            # a run's pool holds the learner as it starts from step 0 on: its network plays
            # the config's `self` seats here too (an empty pool gave them to the others)
            _fill_pool(config, env, 1, Path(tmp))
        model = build_model(config, env, None)
        batched = getattr(env, "venv", None)
        engine_env = batched if hasattr(batched, "opponent_seconds") else None
        if engine_env is not None:
            engine_env.opponent_seconds = 0.0
        env.step_wait = clock.wrap("env", env.step_wait)
        env.reset = clock.wrap("env", env.reset)
        if config.algo == "ppo" and hasattr(batched, "start_rollouts"):
            # PPO over several processes steps this process's share on its own
            own = batched.local_monitor
            own.step_wait = clock.wrap("env", own.step_wait)
            batched.finish_rollouts = clock.wrap("wait", batched.finish_rollouts)
        if config.algo == "ppo":
            model.policy.forward = clock.wrap("inference", model.policy.forward)
            buffer = model.rollout_buffer
            buffer.add = clock.wrap("buffer", buffer.add)
            buffer.compute_returns_and_advantage = clock.wrap(
                "buffer", buffer.compute_returns_and_advantage
            )
        else:
            model._sample_action = clock.wrap("inference", model._sample_action)
            model.replay_buffer.add = clock.wrap("buffer", model.replay_buffer.add)
        model.train = clock.wrap("update", model.train)
        start = time.perf_counter()
        cpu_start = time.process_time()
        with settled_heap():
            model.learn(total_timesteps=steps, progress_bar=False)
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        # who the opponents' seats draw, by name (a snapshot as self@steps)
        local_env = getattr(engine_env, "local", engine_env)
        mixture = getattr(local_env, "opponents", None)
        if mixture is not None:
            drawn = {label: float(p) for label, p in mixture.probabilities().items()}
        else:  # dummy / subproc: each game's env holds its own (asked, not sent whole)
            report = env.env_method("league_report", indices=[0])[0]
            drawn = {label: float(p) for label, (p, _) in report.items()}
        env.close()
    parts = dict(clock.parts)
    done = int(model.num_timesteps)
    helper_opponents = 0.0
    if engine_env is not None:
        # the time split is of this process's wall time: with several processes, the helpers'
        # opponents ran beside it and are reported apart
        local = getattr(engine_env, "local", engine_env)
        parts["opponents"] = local.opponent_seconds
        parts["env"] -= parts["opponents"]
        helper_opponents = engine_env.opponent_seconds - local.opponent_seconds
    parts["other"] = wall - sum(parts.values())
    collection = wall - parts["update"]
    return {
        "variant": config.variant,
        "num_players": config.num_players,
        "algo": config.algo,
        "vec_env": config.vec_env,
        "n_envs": config.n_envs,
        "workers": config.workers,
        "opponents": [o.name for o in config.opponents],
        "opponent_probabilities": drawn,
        "pool": pool,
        "hyperparams": config.hyperparams.model_dump(),
        "net_arch": config.policy_kwargs.model_dump(mode="json")["net_arch"],
        "steps": done,
        "seconds": wall,
        "cpu_seconds": cpu,
        "steps_per_s": done / wall,
        "collection_seconds": collection,
        "collection_steps_per_s": done / collection if collection > 0 else None,
        "seconds_by_part": parts,
        "share_by_part": {k: v / wall for k, v in parts.items()},
        "helper_opponent_seconds": helper_opponents,
    }
