"""The Ray RLlib backend (``backend: rllib``): multi-agent PPO on RLlib's current API stack
(RLModules, EnvRunners, Learners), from the same YAML configs as the stable-baselines3 backend.

* **The env** (:class:`MatchEnv`): a thin RLlib ``MultiAgentEnv`` over a rummyzoo match (the
  one play loop's match layer), turn-based: each step takes the action of the seat to act and
  returns the observation of the next one. An observation is a dict: ``observations`` (what
  the learner's network reads: the observation with the config's ``features``), ``raw`` (the
  env's observation, what heuristics read) and ``action_mask``. Rewards follow the config's
  ``reward`` mode; a seat's reward waits until its next turn (RLlib's hanging rewards), and
  what the hands that end before a seat's first decision pay it comes with that decision
  (RLlib keeps a reward before an agent's first observation out of what its Learner sees).
* **The modules**: ``learner``, the one trained module (:class:`LearnerModule`: the same
  network as the SB3 backend builds for the config: MLP, the card-shared or the action-shared
  scorer; masked logits, so illegal actions are never sampled, in exploration and inference
  alike); one non-trained :class:`AgentModule` per opponent named in ``opponents`` (random play
  or a heuristic); and with ``self`` among the opponents, ``self_play.pool_size`` frozen
  snapshot slots (``self_0`` ...), all holding the learner as it starts, then overwritten in
  turn at every ``snapshot_interval`` (the league; drawn by ``self_play.sampling``).
* **The mapping**: per episode, the learner takes a random seat and every other seat an
  opponent drawn by its weight (``self``'s weight shared by the snapshots).
* **The run folder** is the SB3 backend's: the resolved config, command, versions, TensorBoard
  (``eval/``, ``charts/``, ``selfplay/``, ``rating/``, ``strategy/``, sample games), evaluation
  against the baselines at the configured interval, ``best.rz``/``last.rz`` and periodic
  ``.rz`` checkpoints in rummyzoo's shareable format (``rummyzoo arena/evaluate/play`` take
  them), plus ``checkpoints/rllib/``, RLlib's own checkpoint, which ``--resume`` continues from.

Hyperparameters keep their SB3 names: ``learning_rate`` (lr), ``gamma``, ``gae_lambda``
(lambda_), ``clip_range`` (clip_param), ``ent_coef`` (entropy_coeff), ``vf_coef``
(vf_loss_coeff), ``max_grad_norm`` (grad_clip), ``n_epochs`` (num_epochs), ``batch_size``
(minibatch_size); a training batch holds ``n_steps * n_envs`` learner decisions (RLlib counts
``n_steps * n_envs * num_players`` env steps, every seat's decisions), split between the
``num_learners`` learners with each minibatch (:func:`learner_batches`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import re
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.envs.core import IllegalActionError, check_action
from rummyzoo.envs.play import illegal_action_error, raise_agent_failure
from rummyzoo.training.config import RllibSettings, RunConfig, rebuilt_config
from rummyzoo.training.seat_env import hand_margin, same_sides

__all__ = ["MatchEnv", "require_ray", "train_rllib"]

LEARNER = "learner"
#: The league of the running process: ``[(module id, weight), ...]`` of the opponents, set on
#: every EnvRunner when it changes (see :func:`set_league`).
_LEAGUE: list[tuple[str, float]] | None = None
#: this process's stream of seatings (see :func:`map_agent`), started from the run's seed and
#: the runner's index when the runner builds its envs
_SEATINGS: random.Random | None = None
#: the seatings of this process's episodes in flight, by episode id (each dropped when its
#: episode ends: see :func:`game_facts_callback`)
_SEATED: dict[str, tuple[int, list[str]]] = {}

RAY_MISSING = (
    "the rllib backend needs Ray RLlib, which is not installed: pip install 'rummyzoo[rllib]' "
    "(or pip install 'ray[rllib]')"
)


def require_ray() -> Any:
    """Import Ray, or fail with a message naming the extra to install."""
    try:
        import ray
        from ray.rllib.algorithms.ppo import PPOConfig  # noqa: F401
    except ImportError:
        raise ValueError(RAY_MISSING) from None
    return ray


# ---------------------------------------------------------------------------- env
def _env_parts(env_config: dict[str, Any]) -> tuple[Any, Any]:
    from rummyzoo.agents.features import make_features
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    variant, n = env_config["variant"], env_config["num_players"]
    options = dict(env_config["env_options"])
    report = {"reward": env_config["reward"], "reward_scale": env_config["reward_scale"]}
    match = Match(make_game(variant, n, **report, **options))
    features = make_features(env_config.get("features"), variant, n, options)
    return match, features


def env_config_of(config: RunConfig, seed: int | None = None) -> dict[str, Any]:
    """The env's config (``seed``: the games' seed, the run's unless given)."""
    return {
        "variant": config.variant,
        "num_players": config.num_players,
        "env_options": dict(config.env_options),
        "reward": config.reward,
        "reward_scale": config.reward_scale,
        "features": config.features,
        "seed": config.seed if seed is None else seed,
    }


def rllib_seed(seed: int) -> int:
    """The seed RLlib is given for a run of ``seed`` (``debugging(seed=)``): 31 bits drawn from
    it. RLlib seeds env runner ``w``'s numpy, torch and ``random`` with that seed + ``w``, and
    env ``i`` of the runner with that + ``i``. Given the run's seed itself, runner ``w + 1`` of a
    run drew what runner ``w`` of the run of the next seed drew, and a seed near 2^32 took
    numpy's seed past its range and stopped the runner; runs of neighbouring seeds now lie
    far apart, and every runner's seed is within numpy's range."""
    state = np.random.SeedSequence([int(seed), 0x524C4C42]).generate_state(1, dtype=np.uint32)
    return int(state[0]) >> 1


def _make_env_class() -> type:
    from gymnasium import spaces
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    class _MatchEnv(MultiAgentEnv):
        """See :class:`MatchEnv`."""

        def __init__(self, config: dict[str, Any] | None = None) -> None:
            super().__init__()
            # Every env of every runner plays its own games: a stream per (run's seed, runner,
            # env), the env's place read from the seed RLlib gives it at its first reset (see
            # reset: RLlib builds every env of a runner with vector_index 0). The indices are
            # attributes of RLlib's EnvContext, which the dict copy would drop.
            worker = int(getattr(config, "worker_index", 0))
            vector = int(getattr(config, "vector_index", 0))
            config = dict(config or {})
            self.match, self.features = _env_parts(config)
            game = self.match.game
            n = game.num_players
            extra = self.features.size if self.features is not None else 0
            space = spaces.Dict(
                {
                    "observations": spaces.Box(
                        -np.inf, np.inf, (game.obs_size + extra,), np.float32
                    ),
                    "raw": spaces.Box(-np.inf, np.inf, (game.obs_size,), np.float32),
                    "action_mask": spaces.Box(0.0, 1.0, (game.num_actions,), np.float32),
                }
            )
            self.agents = self.possible_agents = [f"player_{s}" for s in range(n)]
            self.observation_spaces = {a: space for a in self.agents}
            self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.agents}
            self._run_seed = int(config.get("seed", 0))
            self._rllib_seed = rllib_seed(self._run_seed)  # what algorithm_config gives RLlib
            self._stream = (worker, vector)
            start_seatings(self._run_seed, worker)
            self._rng = np.random.default_rng([self._run_seed, worker, vector])
            self._same_side = same_sides(game)
            self._facts: list[dict[str, Any]] = []
            self._decisions = [0] * n
            self._held = [0.0] * n

        def _obs(self, seat: int) -> dict[str, np.ndarray]:
            from rummyzoo.agents.features import learner_input

            match = self.match
            raw = match.observe(seat)
            if match.over:
                mask = np.zeros(match.game.num_actions, dtype=np.int8)
            else:
                mask = match.legal_mask().astype(np.int8)
            return {
                "observations": learner_input(raw, mask, self.features, False),
                "raw": np.asarray(raw, dtype=np.float32),
                "action_mask": mask.astype(np.float32),
            }

        def reset(self, *, seed: int | None = None, options: dict | None = None):
            if seed is not None:
                # RLlib seeds env i of runner w with its seed (rllib_seed) + w + i, which env 0
                # of runner w + 1 gets too, and builds every env of a runner from one context,
                # whose vector_index is 0: the env's place is what its seed adds to RLlib's
                # and the runner's, and the stream is (run's seed, runner, env), as apart for
                # runs of neighbouring seeds as for the envs of one run
                worker, vector = self._stream
                place = (seed - self._rllib_seed - worker) % 2**64
                self._rng = np.random.default_rng([self._run_seed, worker, vector, place])
            self.match.reset(int(self._rng.integers(2**63)))
            n = self.match.num_players
            self._facts = [
                {"hand_points": [], "margins": [], "points": 0.0, "hands": 0} for _ in range(n)
            ]
            self._decisions = [0] * n
            self._held = [0.0] * n
            seat = self.match.current
            return {self.agents[seat]: self._obs(seat)}, {}

        def step(self, action_dict: dict[str, Any]):
            match = self.match
            seat = match.current
            agent = self.agents[seat]
            if agent not in action_dict:
                raise ValueError(
                    f"no action for {agent}, the seat to act (got {list(action_dict)})"
                )
            # checked as the AEC env checks it: a float or a bool is refused, not cut to an int
            end = match.step(action_dict[agent])
            self._decisions[seat] += 1
            # RLlib wants a reward (zero or not) with every observation; a seat's share of
            # a hand end waits until its next turn.
            rewards = dict.fromkeys(self.agents, 0.0)
            truncated = False
            if end is not None:
                truncated = end.truncated_by is not None
                if end.rewards is not None:
                    rewards = {a: float(r) for a, r in zip(self.agents, end.rewards, strict=True)}
                if end.points is not None:
                    for s, facts in enumerate(self._facts):
                        facts["hand_points"].append(float(end.points[s]))
                        facts["margins"].append(float(hand_margin(end.points, s, self._same_side)))
                        facts["points"] += float(end.seat_points[s])
                        facts["hands"] = end.index
            # RLlib leaves a reward that comes before an agent's first observation (or with
            # it) out of the agent's own episode, which is what its Learner trains on: what
            # the hands that end before a seat's first decision pay it is held and paid with
            # that decision, as the AEC env pays it at the seat's first ``last()``.
            # (A seat that never acts before the match ends is given its share with the end:
            # RLlib keeps no episode of it, having no decision of it to learn from.)
            for s, a in enumerate(self.agents):
                if self._decisions[s] == 0 and not match.over:
                    self._held[s] += rewards[a]
                    rewards[a] = 0.0
                elif self._decisions[s] == 0:
                    rewards[a] += self._held[s]
                    self._held[s] = 0.0
            if self._held[seat] and self._decisions[seat] == 1:
                rewards[agent] += self._held[seat]
                self._held[seat] = 0.0
            if not match.over:
                nxt = match.current
                return (
                    {self.agents[nxt]: self._obs(nxt)},
                    rewards,
                    {"__all__": False},
                    {"__all__": False},
                    {},
                )
            winners = end.winners if end is not None else None
            infos = {}
            for s, a in enumerate(self.agents):
                facts = dict(self._facts[s])
                facts["decisions"] = self._decisions[s]
                facts["winner"] = bool(winners[s]) if winners is not None else False
                facts["truncated"] = truncated
                facts["side"] = int(self.match.game.score_groups[s])
                infos[a] = {"rummyzoo": facts}
            obs = {a: self._obs(s) for s, a in enumerate(self.agents)}
            return obs, rewards, {"__all__": not truncated}, {"__all__": truncated}, infos

    _MatchEnv.__name__ = "MatchEnv"
    _MatchEnv.__qualname__ = "MatchEnv"
    return _MatchEnv


@functools.cache
def match_env_class() -> type:
    """:class:`MatchEnv`, built on first use (it subclasses RLlib's ``MultiAgentEnv``)."""
    return _make_env_class()


class MatchEnv:
    """A rummyzoo match as a turn-based RLlib ``MultiAgentEnv`` (see the module docstring).
    ``MatchEnv(env_config)`` builds the RLlib class (:func:`match_env_class`)."""

    def __new__(cls, config: dict[str, Any] | None = None) -> Any:
        return match_env_class()(config)


# ---------------------------------------------------------------------------- modules
def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _make_module_classes() -> tuple[type, type]:
    import torch as th
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    class _LearnerModule(TorchRLModule, ValueFunctionAPI):
        """The config's SB3 actor-critic network as an RLModule: masked logits, values."""

        def setup(self) -> None:
            config = rebuilt_config(self.model_config["run_config"])
            self.policy = build_network(config)

        def _masked_logits(self, obs: dict[str, Any]) -> Any:
            policy = self.policy
            features = policy.extract_features(obs["observations"], policy.pi_features_extractor)
            logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
            return logits + th.clamp(th.log(obs["action_mask"]), min=FLOAT_MIN)

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch[Columns.OBS])}

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
            policy = self.policy
            obs = batch[Columns.OBS]["observations"]
            features = policy.extract_features(obs, policy.vf_features_extractor)
            return policy.value_net(policy.mlp_extractor.forward_critic(features)).squeeze(-1)

    class _AgentModule(RLModule):
        """Random play or a heuristic as a non-trained module (it reads the raw observation)."""

        def setup(self) -> None:
            from rummyzoo.agents.registry import make_agent

            cfg = self.model_config
            self.agent = make_agent(
                cfg["agent"], cfg["variant"], cfg["num_players"], cfg["env_options"]
            )
            self.rng = np.random.default_rng(module_seed(cfg["agent"]))

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            obs = batch[Columns.OBS]
            raw, masks = _numpy(obs["raw"]), _numpy(obs["action_mask"]) > 0
            name = self.model_config["agent"]
            where = "an opponent of the learner on RLlib"
            actions = np.empty(len(masks), dtype=np.int64)
            for i in range(len(masks)):
                try:
                    chosen = self.agent.act(raw[i], masks[i], self.rng)
                except (Exception, SystemExit) as exc:
                    raise_agent_failure(exc, name, where)
                try:  # what the arena and the other training envs refuse, named the same way
                    actions[i] = check_action(chosen, len(masks[i]))
                    if not masks[i][actions[i]]:
                        raise IllegalActionError(f"action {int(actions[i])} is not legal now")
                except IllegalActionError as exc:
                    raise illegal_action_error(name, where, exc) from None
            return {Columns.ACTIONS: actions}

        def _forward_train(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            raise NotImplementedError(f"{self.model_config['agent']} is not trained")

        def get_state(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return {}

        def set_state(self, state: dict[str, Any]) -> None:
            return None

    _LearnerModule.__name__ = _LearnerModule.__qualname__ = "LearnerModule"
    _AgentModule.__name__ = _AgentModule.__qualname__ = "AgentModule"
    return _LearnerModule, _AgentModule


def module_seed(agent: str) -> list[int]:
    """The seed of an opponent module's draws: the agent's name and the global numpy state of
    the process at the module's build. An env runner seeds that state from the run's seed and
    its index (``debugging(seed=)``, see :func:`rllib_seed`) before it builds its modules, so the opponents' streams
    follow the run's seed, each runner's its own (nothing of that state is drawn; with no seed,
    the process's own state)."""
    _, keys, pos, *_ = np.random.get_state()
    return [zlib.crc32(agent.encode()), int(pos), *(int(k) for k in keys[:4])]


@functools.cache
def module_classes() -> tuple[type, type]:
    """``(LearnerModule, AgentModule)``, built on first use."""
    return _make_module_classes()


def build_network(config: RunConfig) -> Any:
    """The SB3 actor-critic policy the SB3 backend would train for ``config`` (fresh weights)."""
    import gymnasium as gym
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from rummyzoo.agents.features import make_features
    from rummyzoo.envs.registry import make_game
    from rummyzoo.training.train import policy_choice

    game = make_game(config.variant, config.num_players, **config.env_options)
    features = make_features(
        config.features, config.variant, config.num_players, config.env_options
    )
    size = game.obs_size + (features.size if features is not None else 0)
    cls, kwargs = policy_choice(config)
    if cls == "MlpPolicy":
        cls = MaskableActorCriticPolicy
    observation_space = gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)
    return cls(observation_space, gym.spaces.Discrete(game.num_actions), lambda _: 0.0, **kwargs)


# ---------------------------------------------------------------------------- league
def set_league(entries: list[tuple[str, float]]) -> None:
    """The opponents (module id, weight) this process's episodes draw from."""
    global _LEAGUE
    _LEAGUE = [(str(m), float(w)) for m, w in entries if w > 0]


def clear_league() -> None:
    """Forget this process's league: episodes map by the league their config was built with."""
    global _LEAGUE
    _LEAGUE = None


def start_seatings(seed: int, worker: int) -> None:
    """Start this process's stream of seatings from the run's seed and the env runner's index:
    the runner's episodes then draw theirs in the order they start, which a seeded runner
    playing the same networks repeats (RLlib's episode ids, random ones, do not). Every env the
    runner builds starts it again (they are built together, before any episode; an env built
    later, in place of a failed one, restarts the draws of the episodes still to start, and
    those in flight keep their seats)."""
    global _SEATINGS
    _SEATINGS = random.Random(f"rummyzoo seatings {int(seed)} {int(worker)}")


def map_agent(
    agent_id: str,
    episode: Any,
    *,
    num_players: int,
    league: list[tuple[str, float]],
    seed: int = 0,
    **kw: Any,
) -> str:
    """The module of ``agent_id`` in ``episode``: the learner in one random seat, opponents by
    weight in the others, drawn from this process's stream of seatings when the episode first
    asks (the same answer for every later call of the episode, its chunks' included)."""
    key = str(episode.id_)
    seating = _SEATED.get(key)
    if seating is None:
        if _SEATINGS is None:
            start_seatings(seed, 0)
        assert _SEATINGS is not None
        entries = _LEAGUE if _LEAGUE is not None else league
        rng = _SEATINGS
        learner_seat = rng.randrange(num_players)
        picks = [
            rng.choices([m for m, _ in entries], weights=[w for _, w in entries])[0]
            for _ in range(num_players)
        ]
        seating = _SEATED[key] = (learner_seat, picks)
    learner_seat, picks = seating
    seat = int(str(agent_id).rsplit("_", 1)[1])
    return LEARNER if seat == learner_seat else picks[seat]


def module_id(name: str) -> str:
    """The RLModule id of an opponent named ``name`` (a heuristic, or a checkpoint's path):
    RLlib's ids may not hold the characters that file names may not (``/``, ``:``...)."""
    return re.sub(r'[<>:"/\\|?*]', "_", name)


def slot_ids(config: RunConfig) -> list[str]:
    if not any(o.name == "self" for o in config.opponents):
        return []
    return [f"self_{k}" for k in range(config.self_play.pool_size)]


def league_entries(config: RunConfig, slot_steps: dict[str, int]) -> list[tuple[str, float]]:
    """Opponent modules and their weights; ``self``'s weight is shared by the snapshots by
    ``self_play.sampling`` (uniform, newest only, or rising with recency), as the pool of the
    stable-baselines3 backend shares it: each snapshot (a step) once, however many slots still
    hold it (until the pool is full, the slots not yet overwritten hold the learner at step 0),
    its weight split between them."""
    entries: list[tuple[str, float]] = []
    for opponent in config.opponents:
        if opponent.name != "self":
            entries.append((module_id(opponent.name), opponent.weight))
            continue
        steps = sorted(set(slot_steps.values()))
        if not steps:
            continue
        mode = config.self_play.sampling
        if mode == "latest":
            weights = [0.0] * (len(steps) - 1) + [1.0]
        elif mode == "recent":
            weights = [float(k + 1) for k in range(len(steps))]
        else:
            weights = [1.0] * len(steps)
        total = sum(weights)
        of_step = dict(zip(steps, weights, strict=True))
        holders = Counter(slot_steps.values())
        for slot in sorted(slot_steps, key=lambda s: (slot_steps[s], s)):
            step = slot_steps[slot]
            entries.append((slot, opponent.weight * of_step[step] / total / holders[step]))
    return entries


# ---------------------------------------------------------------------------- the run
def check_resources(settings: RllibSettings, resources: dict[str, float]) -> None:
    """Refuse a config that asks for more CPUs or GPUs than the cluster (``resources``, as
    ``ray.cluster_resources()`` gives them) has."""
    cpus = float(resources.get("CPU", 0))
    gpus = float(resources.get("GPU", 0))
    # Ray reserves CPUs for the remote env runners and learners (the driver, which samples
    # with no env runners and updates with no learners, reserves none).
    need_cpus = (
        settings.num_env_runners * settings.num_cpus_per_env_runner
        + settings.num_learners * settings.num_cpus_per_learner
    )
    need_gpus = max(settings.num_learners, 1) * settings.num_gpus_per_learner
    if need_cpus > cpus:
        raise ValueError(
            f"the rllib settings need {need_cpus:g} CPUs ({settings.num_env_runners} env runner(s) "
            f"x {settings.num_cpus_per_env_runner:g} + {settings.num_learners} learner(s) x "
            f"{settings.num_cpus_per_learner:g}), but the Ray cluster has {cpus:g}: lower "
            "num_env_runners or num_learners, or add machines"
        )
    if need_gpus > gpus:
        raise ValueError(
            f"the rllib settings need {need_gpus:g} GPU(s), but the Ray cluster has {gpus:g}"
        )


#: What an HTTP/2 client sends first (RFC 9113, section 3.4): the preface, then an empty
#: SETTINGS frame. A gRPC server, as Ray's cluster (GCS) and Ray Client servers are, answers
#: with a frame of its own, its SETTINGS first.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_HTTP2_SETTINGS = 4  # the frame type of SETTINGS


def _first_reply(sock: Any, size: int, got: bytearray) -> None:
    """Read the peer's first reply into ``got`` until it holds ``size`` bytes or the peer
    closes (what came before a timeout or a reset stays in ``got``)."""
    while len(got) < size:
        chunk = sock.recv(size - len(got))
        if not chunk:
            break
        got += chunk


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast, with a clear message, when nothing answers at a ``host:port`` (or
    ``ray://host:port``) address, or when what answers is no Ray cluster: Ray's servers speak
    gRPC, whose first reply to an HTTP/2 preface is a SETTINGS frame, where a web server (Ray's
    dashboard among them) answers in HTTP/1 and ``ray.init`` would wait on it for ever. Any
    cleartext gRPC server passes (another of Ray's own ports among them): the check tells a
    gRPC server from the rest, not which one. ``auto`` is left to Ray; with ``RAY_USE_TLS`` on
    (``1`` or ``true``, as Ray reads it) only the connection is checked. ``timeout`` applies to
    the connection and to each read."""
    import socket

    target = address.removeprefix("ray://")
    if address == "auto" or ":" not in target:
        return
    host, _, port = target.rpartition(":")
    if host.startswith("[") and host.endswith("]"):  # an IPv6 address, [::1]:6379
        host = host[1:-1]
    fix = "start it with `ray start --head` there, or fix rllib.address / RAY_ADDRESS"
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or "timed out"
        raise ValueError(f"cannot reach the Ray cluster at {address!r} ({why}); {fix}") from None
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):  # as Ray reads it
        sock.close()
        return
    got, timed_out = bytearray(), False
    try:
        with sock:
            sock.settimeout(timeout)
            sock.sendall(_HTTP2_PREFACE)
            _first_reply(sock, 9, got)
    except TimeoutError:
        timed_out = True
    except OSError:
        pass  # reset: it closed the connection
    reply = bytes(got)
    if len(reply) == 9 and reply[3] == _HTTP2_SETTINGS:
        return
    if reply.startswith(b"HTTP/"):
        seen = f"a web server answered ({reply.decode('latin-1').split()[0]} ...)"
    elif reply.lstrip().startswith(b"<"):  # an HTTP/0.9 reply: the page alone
        seen = "a web server answered (a page)"
    elif reply[:1] in (b"\x16", b"\x15"):  # a TLS handshake or alert
        seen = "it answered in TLS (set RAY_USE_TLS=1 for a cluster that uses it)"
    elif timed_out:
        seen = "its reply stopped short" if reply else f"no reply within {timeout:g} s"
    else:
        seen = "it answered in another protocol" if reply else "it closed the connection"
    raise ValueError(
        f"{address!r} is not a Ray cluster's address: {seen}, where Ray's cluster answers in "
        "gRPC. Give the address `ray start --head` prints (host:6379 by default; "
        "ray://host:10001 for Ray Client), not the dashboard's (port 8265)"
    )


@contextlib.contextmanager
def _own_sigterm() -> Any:
    """Keep this process's SIGTERM handler through ``ray.init``, which installs Ray's own (a
    bare ``sys.exit(15)``, which the run's agents would report as their failure): a SIGTERM
    stops the run as the command's handler does it (the resume line, exit code 143)."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)


def start_ray(settings: RllibSettings) -> tuple[Any, bool]:
    """Join the configured cluster or start a local Ray (after checking that the settings fit
    it); ``(ray, started_here)``."""
    ray = require_ray()
    if settings.num_cpus is not None and os.environ.get("RAY_ADDRESS"):
        raise ValueError(
            "rllib.num_cpus sizes the local Ray a run starts, and this run would join the "
            f"cluster at {os.environ['RAY_ADDRESS']!r} (RAY_ADDRESS), whose own CPUs count: "
            "drop num_cpus or unset RAY_ADDRESS"
        )
    if ray.is_initialized():
        check_resources(settings, ray.cluster_resources())
        return ray, False
    address = settings.address or os.environ.get("RAY_ADDRESS") or None
    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": False,
    }
    if address is None:
        from rummyzoo.envs.workers import usable_cpus

        kwargs["num_cpus"] = settings.num_cpus or usable_cpus()
        import torch

        # before starting anything; a local Ray finds this machine's GPUs as torch does
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        check_resources(settings, {"CPU": kwargs["num_cpus"], "GPU": gpus})
    else:
        check_reachable(address)
    try:
        with _own_sigterm():
            ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ValueError(
            f"cannot reach the Ray cluster at {address!r} ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else 'no answer'}); start it with "
            "`ray start --head` there, or fix rllib.address / RAY_ADDRESS"
        ) from None
    if address is not None:
        try:
            check_resources(settings, ray.cluster_resources())
        except ValueError:
            ray.shutdown()
            raise
    return ray, address is None


def algorithm_config(config: RunConfig, slot_steps: dict[str, int], seed: int | None = None) -> Any:
    """The RLlib ``PPOConfig`` of a run config (``seed``: the run's unless given; a resumed
    run's is of its step, so that it does not play the deals of its start again)."""
    seed = config.seed if seed is None else seed
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    settings = config.rllib or RllibSettings()
    hp = config.hyperparams
    learner_cls, agent_cls = module_classes()
    run_config = config.model_dump(mode="json")
    specs = {
        LEARNER: RLModuleSpec(module_class=learner_cls, model_config={"run_config": run_config})
    }
    for slot in slot_ids(config):
        specs[slot] = RLModuleSpec(
            module_class=learner_cls, model_config={"run_config": run_config}
        )
    for opponent in config.opponents:
        if opponent.name != "self":
            specs[module_id(opponent.name)] = RLModuleSpec(
                module_class=agent_cls,
                model_config={
                    "agent": opponent.name,
                    "variant": config.variant,
                    "num_players": config.num_players,
                    "env_options": dict(config.env_options),
                },
            )
    n = config.num_players
    mapping = functools.partial(
        map_agent, num_players=n, league=league_entries(config, slot_steps), seed=seed
    )
    per_learner, minibatch = learner_batches(config)
    return (
        PPOConfig()
        # (RLlib's env check steps random, illegal actions; the env refuses those)
        .environment(
            match_env_class(), env_config=env_config_of(config, seed), disable_env_checking=True
        )
        .env_runners(
            num_env_runners=settings.num_env_runners,
            num_envs_per_env_runner=settings.num_envs_per_env_runner,
            num_cpus_per_env_runner=settings.num_cpus_per_env_runner,
            rollout_fragment_length=settings.rollout_fragment_length,
        )
        .learners(
            num_learners=settings.num_learners,
            num_cpus_per_learner=settings.num_cpus_per_learner,
            num_gpus_per_learner=settings.num_gpus_per_learner,
        )
        .training(
            lr=hp.learning_rate,
            gamma=hp.gamma,
            lambda_=hp.gae_lambda,
            clip_param=hp.clip_range,
            entropy_coeff=hp.ent_coef,
            vf_loss_coeff=hp.vf_coef,
            grad_clip=hp.max_grad_norm,
            num_epochs=hp.n_epochs,
            minibatch_size=minibatch,
            train_batch_size_per_learner=per_learner,
            use_kl_loss=False,
            vf_clip_param=float("inf"),
        )
        .multi_agent(policies=list(specs), policy_mapping_fn=mapping, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .callbacks(game_facts_callback())
        .debugging(seed=rllib_seed(seed))
    )


def learner_batches(config: RunConfig) -> tuple[int, int]:
    """(train batch per learner, minibatch per learner) in env steps: the training batch,
    ``n_steps x n_envs x num_players``, and ``batch_size`` shared by the learners, which
    average their gradients, so that more learners split the same batch and minibatches
    (RLlib samples ``num_learners`` times its batch per learner)."""
    settings = config.rllib or RllibSettings()
    learners = max(1, settings.num_learners)
    batch = config.hyperparams.n_steps * config.n_envs * config.num_players
    return -(-batch // learners), -(-config.hyperparams.batch_size // learners)


def reported_games(runners: dict[str, Any]) -> list[dict[str, Any]]:
    """The finished games an iteration's env runners reported (``rummyzoo_games``): RLlib
    gives a series of one item as that item itself, a dict, whose keys were taken for games
    (a run died where an iteration ended one game)."""
    games = runners.get("rummyzoo_games") or []
    return [games] if isinstance(games, dict) else list(games)


@functools.cache
def game_facts_callback() -> type:
    """An RLlib callback that reports every finished game from the learner's seat."""
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class _GameFacts(RLlibCallback):
        def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kw: Any) -> None:
            try:
                self._report(episode, metrics_logger)
            finally:
                _SEATED.pop(str(episode.id_), None)  # its seats are mapped, and stay in it

        def on_env_runners_recreated(
            self,
            *,
            env_runner_group: Any,
            env_runner_indices: list[int],
            is_evaluation: bool = False,
            **kw: Any,
        ) -> None:
            # RLlib brings a restarted runner's modules back (their weights, the snapshots'
            # included), not what this process set in it: the league its episodes draw from
            # (evaluation runners, not configured, get no league from push_league either)
            entries = _LEAGUE
            if entries is None or is_evaluation:
                return
            env_runner_group.foreach_env_runner(
                lambda runner: set_league(entries),
                remote_worker_ids=list(env_runner_indices),
                local_env_runner=False,
            )

        def _report(self, episode: Any, metrics_logger: Any) -> None:
            infos = episode.get_infos(indices=-1)
            learner = next((a for a in infos if episode.module_for(a) == LEARNER), None)
            if learner is None or metrics_logger is None:
                return
            facts = dict(infos[learner].get("rummyzoo", {}))
            if facts.get("truncated"):
                return
            others = [a for a in infos if a != learner]
            facts["opponents"] = [episode.module_for(a) for a in others]
            # each opponent's side's points, and whether it plays against the learner
            theirs = [infos[a].get("rummyzoo", {}) for a in others]
            facts["opponent_points"] = [float(f.get("points", 0.0)) for f in theirs]
            facts["rivals"] = [f.get("side") != facts.get("side") for f in theirs]
            metrics_logger.log_value("rummyzoo_games", facts, reduce="item_series")

    _GameFacts.__name__ = _GameFacts.__qualname__ = "GameFacts"
    return _GameFacts


class _Shim:
    """What the run callback needs of a model: the network, and the learner's step count."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.num_timesteps = 0


def learner_state(algo: Any) -> dict[str, Any]:
    """The learner module's weights (numpy), from the learner group."""
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE

    state = algo.learner_group.get_state(
        components=f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}/{LEARNER}"
    )
    return state[COMPONENT_LEARNER][COMPONENT_RL_MODULE][LEARNER]


def set_module_weights(algo: Any, module_id: str, state: dict[str, Any]) -> None:
    """Give a module these weights on the learner group and on every EnvRunner."""
    algo.set_state(
        {"learner_group": {"learner": {"rl_module": {module_id: state}}}}
    )  # fmt: skip

    def put(runner: Any) -> None:
        if module_id in runner.module:
            runner.module[module_id].set_state(state)

    algo.env_runner_group.foreach_env_runner(put, local_env_runner=True)


def push_league(algo: Any, entries: list[tuple[str, float]]) -> None:
    set_league(entries)
    algo.env_runner_group.foreach_env_runner(
        lambda runner: set_league(entries), local_env_runner=True
    )


def _load_torch_state(policy: Any, state: dict[str, Any]) -> None:
    import torch as th

    weights = {k.removeprefix("policy."): th.as_tensor(np.asarray(v)) for k, v in state.items()}
    policy.load_state_dict(weights, strict=True)


def _policy_state(policy: Any) -> dict[str, Any]:
    return {f"policy.{k}": v.detach().cpu().numpy() for k, v in policy.state_dict().items()}


def train_rllib(
    config: RunConfig,
    run_dir: Path,
    argv: list[str] | None = None,
    resume: bool = False,
    progress: str = "auto",
    progress_every: float = 30.0,
) -> dict[str, Any]:
    """Train (or resume) a run on Ray RLlib; the summary has the SB3 backend's keys."""
    import sys

    import torch
    from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat

    from rummyzoo.agents.checkpoints import read_meta, save_checkpoint
    from rummyzoo.training.progress import Progress
    from rummyzoo.training.run_folder import (
        WARM_START,
        checked_state,
        checkpoint_meta,
        drop_temp_files,
        finished_run,
        note_resume,
        rewind_run,
        start_over,
        write_run_files,
        write_summary,
    )
    from rummyzoo.training.run_state import commit_staged
    from rummyzoo.training.train import _warn_rollout_misfits, resume_checkpoint

    torch.set_num_threads(config.torch_threads)
    settings = config.rllib or RllibSettings()
    run_dir = Path(run_dir)
    rllib_dir = resume_checkpoint(run_dir, "rllib")
    if resume:
        commit_staged(run_dir)  # a checkpoint set left half moved into place
        drop_temp_files(run_dir)  # and the temporary files of writes a kill cut short
    started_over = resume and not rllib_dir.is_dir()
    if started_over:
        start_over(run_dir, rllib_dir)
        resume = False
    state: dict[str, Any] = {}
    if resume:
        saved = int(read_meta(run_dir / "checkpoints" / "last.rz")["steps"])
        state = checked_state(run_dir, saved, "last.rz")
    steps_done = int(state.get("steps", 0))
    if resume and steps_done >= config.n_timesteps:
        extra = {"backend": "rllib", "env_steps_per_s": None}
        return finished_run(run_dir, steps_done, config.n_timesteps, config, state, argv, **extra)
    _warn_rollout_misfits(config)
    ray, started_here = start_ray(settings)
    started = time.perf_counter()
    phases: dict[str, float] = {}
    algo = None
    try:
        slot_steps: dict[str, int] = dict(state.get("rllib_slots", {}))
        slots = slot_ids(config)
        if slots and not slot_steps:
            slot_steps = {s: 0 for s in slots}  # every slot starts as the untrained learner
        seed = config.resume_seed(steps_done) if resume else config.seed
        # RLlib and the network accept the config before the run folder is written, so a
        # refused one leaves no folder behind (as on the SB3 backend)
        algo = algorithm_config(config, slot_steps, seed).build_algo()
        shim = _Shim(build_network(config))
        if not resume:
            write_run_files(run_dir, config, argv or sys.argv, started_over)
        if resume:
            _restore(algo, rllib_dir, run_dir / "checkpoints" / "last.rz")
            print(  # as the SB3 backend says it
                f"resuming {run_dir} from its checkpoint at step {steps_done:,}",
                file=sys.stderr,
                flush=True,
            )
            # the run folder changes only once its checkpoint is back
            note_resume(run_dir, config, argv)
            rewind_run(run_dir, steps_done)
        elif config.pretrain is not None:
            begun = time.perf_counter()
            state["pretrain"] = _warm_start(config, run_dir, shim, progress, progress_every)
            phases["warm_start_seconds"] = time.perf_counter() - begun
            state["warm_start_seconds"] = phases["warm_start_seconds"]
            save_checkpoint(shim, run_dir / "checkpoints" / WARM_START, checkpoint_meta(config, 0))
        if not resume:
            weights = (
                _policy_state(shim.policy) if config.pretrain is not None else learner_state(algo)
            )
            set_module_weights(algo, LEARNER, weights)
            for slot in slots:
                set_module_weights(algo, slot, weights)
        _load_torch_state(shim.policy, learner_state(algo))
        shim.policy.set_training_mode(False)
        shim.num_timesteps = steps_done
        if resume:  # the snapshot slots come back from the pool as the checkpoint had it
            by_steps = {int(p["steps"]): p["path"] for p in state.get("pool", [])}
            for slot, steps in slot_steps.items():
                if steps in by_steps:  # its file is there: checked_state made sure
                    set_module_weights(algo, slot, _rz_state(by_steps[steps]))
        push_league(algo, league_entries(config, slot_steps))
        logger = Logger(
            folder=None, output_formats=[TensorBoardOutputFormat(str(run_dir / "tb" / "run_1"))]
        )
        bar = Progress(
            f"train (rllib {config.algo})",
            # RLlib trains until a batch ends at or past n_timesteps (its batches about n_steps
            # x n_envs learner decisions, not exactly): a run shorter than a batch trains one
            max(config.n_timesteps, steps_done + config.hyperparams.n_steps * config.n_envs),
            start=steps_done,
            mode=progress,
            every=progress_every,
        )
        callback = _RllibRunCallback(
            config,
            run_dir,
            state,
            bar,
            algo,
            shim,
            logger,
            slot_steps,
            started=started,
            resumed=resume,
        )
        try:
            callback.start()
            begun = time.perf_counter()
            while shim.num_timesteps < config.n_timesteps:
                callback.before_iteration()
                result = algo.train()
                callback.after_iteration(result)
            rl_seconds = time.perf_counter() - begun
            callback.finish(shim)
        finally:
            bar.close()
            logger.close()
        phases["rl_seconds"] = rl_seconds
    finally:
        clear_league()  # a later run or benchmark in this process maps by its own league
        if algo is not None:  # its env runners and learners, on success or failure alike
            algo.stop()
        if started_here:
            ray.shutdown()
    return write_summary(
        config, run_dir, callback, int(shim.num_timesteps), steps_done, started, phases,
        backend="rllib", env_steps_per_s=callback.env_steps_per_s(),
    )  # fmt: skip


def _restore(algo: Any, rllib_dir: Path, last: Path) -> None:
    """RLlib's checkpoint of a run back into ``algo``, or one line naming what is wrong with
    it: RLlib raises on a damaged file, and leaves a missing part (the learner's network) as
    it was built, untrained, without a word. The learner must come back with the weights of
    ``last.rz``, which the run saved with that checkpoint."""
    try:
        # RLlib reads a path as a URI: a relative one has no scheme
        algo.restore_from_path(str(rllib_dir.resolve()))
    except Exception as exc:
        raise ValueError(
            f"cannot resume: RLlib's checkpoint {rllib_dir} is damaged ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else 'no detail'}); start the run over in a "
            "new folder"
        ) from None
    got, want = learner_state(algo), _rz_state(last)
    same = set(got) == set(want) and all(
        np.array_equal(np.asarray(got[k]), np.asarray(want[k])) for k in want
    )
    if not same:
        raise ValueError(
            f"cannot resume: RLlib's checkpoint {rllib_dir} does not give back the learner of "
            f"{last.name}, saved with it (a part of it is missing or from another run); start "
            "the run over in a new folder"
        )


def _rz_state(path: str | Path) -> dict[str, Any]:
    """A shareable checkpoint's weights as a learner module state."""
    from rummyzoo.agents.safe import load_checkpoint

    network, _meta = load_checkpoint(path)
    return _policy_state(network.policy)


def _warm_start(
    config: RunConfig, run_dir: Path, shim: _Shim, progress: str, every: float
) -> dict[str, Any]:
    """The SB3 backend's warm start, on the same network, into ``shim.policy``."""
    from rummyzoo.training.train import build_model, build_vec_env, run_pretrain

    env = build_vec_env(config)
    try:
        model = build_model(config, env, None)
        result = run_pretrain(model, config, run_dir, progress, every)
    finally:
        env.close()
    shim.policy.load_state_dict(model.policy.state_dict())
    return result


class _RllibRunCallback:
    """The SB3 backend's run callback, driven by RLlib's iterations (built lazily: it
    subclasses :class:`~rummyzoo.training.callbacks.RunCallback`)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return _callback_class()(*args, **kwargs)


@functools.cache
def _callback_class() -> type:
    from rummyzoo.agents.checkpoints import save_checkpoint
    from rummyzoo.training.callbacks import RunCallback

    class RllibRunCallback(RunCallback):
        """Evaluations, checkpoints, snapshots, TensorBoard: :class:`RunCallback`'s, with
        RLlib's checkpoint for resuming and snapshot slots for the league."""

        def __init__(
            self,
            config: RunConfig,
            run_dir: Path,
            state: dict[str, Any],
            progress: Any,
            algo: Any,
            shim: Any,
            logger: Any,
            slot_steps: dict[str, int],
            started: float | None = None,
            resumed: bool = False,
        ) -> None:
            super().__init__(
                config, run_dir, state=state, progress=progress, started=started, resumed=resumed
            )
            self.algo = algo
            self.model = shim
            self._logger = logger
            self.slot_steps = slot_steps
            self.next_slot = int(state.get("rllib_next_slot", 0))
            self._env_steps: list[tuple[float, float]] = []
            self.locals: dict[str, Any] = {"infos": []}

        @property
        def logger(self) -> Any:  # BaseCallback's reads the SB3 model's
            return self._logger

        @property
        def training_env(self) -> Any:  # no SB3 env: the league lives on the EnvRunners
            return None

        def start(self) -> None:
            self._init_callback()

        def before_iteration(self) -> None:
            self._on_rollout_start()

        def after_iteration(self, result: dict[str, Any]) -> None:
            from ray.rllib.utils.metrics import (
                ENV_RUNNER_RESULTS,
                NUM_ENV_STEPS_SAMPLED_LIFETIME,
                NUM_MODULE_STEPS_SAMPLED_LIFETIME,
            )

            runners = result.get(ENV_RUNNER_RESULTS, {})
            module_steps = runners.get(NUM_MODULE_STEPS_SAMPLED_LIFETIME, {})
            learned = int(module_steps.get(LEARNER, 0))
            self.model.num_timesteps = self.num_timesteps = self._base_steps + learned
            env_steps = float(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0))
            self._env_steps.append((time.perf_counter(), env_steps))
            _load_torch_state(self.model.policy, learner_state(self.algo))
            games = []
            for facts in reported_games(runners):
                labels = [self._label(m) for m in facts.get("opponents", [])]
                games.append({**facts, "opponents": labels})
            self.locals = {"infos": [{"game": g} for g in games]}
            self._on_step()
            if self._since_log:  # the charts at every iteration (its games, however few)
                self._log_games()
            learner = result.get("learners", {}).get(LEARNER, {})
            # (no mean_kl_loss: the KL term is off, so RLlib reports 0 for it)
            for key in ("policy_loss", "vf_loss", "entropy", "vf_explained_var"):
                if key in learner:
                    self.logger.record(f"train/{key}", float(learner[key]))
            rate = self.env_steps_per_s()
            if rate is not None:  # a session's first iteration has no rate yet, not a rate of 0
                self.logger.record("time/env_steps_per_s", rate)
            self.logger.dump(self.num_timesteps)

        def _init_callback(self) -> None:
            from ray.rllib.utils.metrics import (
                ENV_RUNNER_RESULTS,
                NUM_MODULE_STEPS_SAMPLED_LIFETIME,
            )

            # RLlib's lifetime count comes back with its checkpoint; the run's count is the
            # state's, so only what RLlib adds from here on is added to it.
            restored = self.algo.metrics.peek(
                (ENV_RUNNER_RESULTS, NUM_MODULE_STEPS_SAMPLED_LIFETIME, LEARNER), default=0
            )
            self._base_steps = int(self.model.num_timesteps) - int(restored or 0)
            super()._init_callback()

        def env_steps_per_s(self) -> float | None:
            if len(self._env_steps) < 2:
                return None
            (t0, s0), (t1, s1) = self._env_steps[0], self._env_steps[-1]
            return (s1 - s0) / (t1 - t0) if t1 > t0 else None

        def _label(self, module: str) -> str:
            if module in self.slot_steps:
                return f"self@{self.slot_steps[module]}"
            names = {module_id(o.name): o.name for o in self.config.opponents}
            return names.get(module, module)

        def _snapshot(self) -> None:
            steps = int(self.num_timesteps)
            path = self.pool_dir / f"snapshot_{steps:09d}.rz"
            save_checkpoint(self.model, path, self._meta())
            self.pool.append({"path": str(path), "steps": steps, "rating": self.rating})
            self._snapshot_ratings[steps] = float(self.rating)
            self.pool = self.pool[-self.config.self_play.pool_size :]
            slots = slot_ids(self.config)
            if not slots or steps == 0:
                return  # the slots already hold the learner as it starts
            slot = slots[self.next_slot % len(slots)]
            self.next_slot += 1
            set_module_weights(self.algo, slot, _policy_state(self.model.policy))
            self.slot_steps[slot] = steps
            push_league(self.algo, league_entries(self.config, self.slot_steps))

        def _save_files(self, staging: Path) -> None:
            self.algo.save_to_path(str((staging / "rllib").resolve()))
            save_checkpoint(self.model, staging / "last.rz", self._meta())

        def _state(self) -> dict[str, Any]:
            return {
                **super()._state(),
                "rllib_slots": self.slot_steps,
                "rllib_next_slot": self.next_slot,
            }

    return RllibRunCallback


# ---------------------------------------------------------------------------- benchmark
def bench_rllib(
    config: RunConfig, env_runners: list[int], iterations: int, repeat: int = 1
) -> dict[str, Any]:
    """Env steps/s of ``config`` on RLlib with each number of env runners: PPO iterations
    (sampling and updates, no evaluation, warm start or checkpoints), the settings run one
    after another in ``repeat`` rounds. Env steps count every seat's decisions.

    :returns: per setting the env steps/s of each round (end to end: sampling plus update),
        their median, and the ratio of each median to the first setting's.
    """
    require_ray()  # without the extra: the message naming it, before RLlib's own imports
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    if iterations < 1 or repeat < 1 or not env_runners or min(env_runners) < 0:
        raise ValueError(
            "iterations and repeat must be positive, env_runners a non-empty list of counts >= 0"
        )
    settings = config.rllib or RllibSettings()
    ray, started_here = start_ray(settings.model_copy(update={"num_env_runners": max(env_runners)}))
    rounds: dict[int, list[float]] = {k: [] for k in env_runners}
    try:
        for _ in range(repeat):
            for k in env_runners:
                cfg = config.model_copy(
                    update={"rllib": settings.model_copy(update={"num_env_runners": k})}
                )
                slots = {s: 0 for s in slot_ids(cfg)}
                algo = algorithm_config(cfg, slots).build_algo()
                try:
                    push_league(algo, league_entries(cfg, slots))  # not a former run's
                    algo.train()  # warm-up: the runners' first episodes and the first update
                    first = algo.train()[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME]
                    began = time.perf_counter()
                    for _ in range(iterations):
                        result = algo.train()
                    seconds = time.perf_counter() - began
                    last = result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME]
                    rounds[k].append((last - first) / seconds)
                finally:
                    algo.stop()
    finally:
        clear_league()
        if started_here:
            ray.shutdown()
    medians = {k: float(np.median(v)) for k, v in rounds.items()}
    base = medians[env_runners[0]]
    return {
        "variant": config.variant,
        "num_players": config.num_players,
        "iterations": iterations,
        "repeat": repeat,
        "train_batch_env_steps": learner_batches(config)[0] * max(1, settings.num_learners),
        "num_envs_per_env_runner": settings.num_envs_per_env_runner,
        "settings": [
            {
                "num_env_runners": k,
                "env_steps_per_s": rounds[k],
                "median_env_steps_per_s": medians[k],
                "ratio_to_first": medians[k] / base if base else None,
            }
            for k in env_runners
        ],
    }


# ---------------------------------------------------------------------------- export
def is_rllib_checkpoint(path: str | Path) -> bool:
    return (Path(path) / "rllib_checkpoint.json").is_file()


def export_rllib(path: str | Path, out: str | Path | None = None) -> dict[str, Any]:
    """Write the learner module of an RLlib checkpoint of a run (``RUN/checkpoints/rllib``) as
    a shareable ``.rz`` checkpoint, with the run's variant, options and layout metadata.

    Reading an RLlib checkpoint unpickles it: only for checkpoints you trust.

    :returns: ``{"path", "steps", "variant"}`` of the written checkpoint, and ``"replaced"``:
        whether a file was there before.
    :raises ValueError: not an RLlib checkpoint inside a run folder.
    """
    import yaml

    from rummyzoo.agents.checkpoints import save_checkpoint
    from rummyzoo.training.config import validate_config
    from rummyzoo.training.run_folder import checkpoint_meta
    from rummyzoo.training.run_state import read_state

    path = Path(path)
    if not is_rllib_checkpoint(path):
        raise ValueError(f"{path} is not an RLlib checkpoint (no rllib_checkpoint.json)")
    run_dir = path.parent.parent
    if not (run_dir / "config.yaml").is_file():
        raise ValueError(f"{path} is not in a run folder (no {run_dir / 'config.yaml'})")
    require_ray()
    from ray.rllib.core.rl_module.rl_module import RLModule

    # the network alone is read: the agents the run named need not load
    data = yaml.safe_load((run_dir / "config.yaml").read_text())
    config = validate_config(data, str(run_dir), skip_agents={"all"})
    module_dir = path / "learner_group" / "learner" / "rl_module" / LEARNER
    module = RLModule.from_checkpoint(str(module_dir.resolve()))
    shim = _Shim(build_network(config))
    _load_torch_state(shim.policy, module.get_state())
    steps = int(read_state(run_dir).get("steps", 0))
    target = Path(out) if out is not None else run_dir / "checkpoints" / "rllib_export.rz"
    replaced = target.exists()
    save_checkpoint(shim, target, checkpoint_meta(config, steps))
    return {"path": str(target), "steps": steps, "variant": config.variant, "replaced": replaced}
