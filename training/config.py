"""Run configs: YAML files validated by pydantic models (unknown keys and bad values rejected).

A config names the variant, its options and player count, the algorithm and its SB3-style
hyperparameters, the opponents (a weighted mixture of heuristics, random play and self-play
snapshots), self-play, evaluation and checkpoint settings. ``load_config(path, overrides)``
reads a file, applies ``--set key.sub=value`` overrides and validates the result; every error
names the offending key path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rummyzoo.envs.match import MatchOptions
from rummyzoo.envs.registry import VARIANTS


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class NetArch(Strict):
    """Separate layer sizes for the policy and value networks (PPO)."""

    pi: list[Annotated[int, Field(gt=0)]] = [256, 256]
    vf: list[Annotated[int, Field(gt=0)]] = [256, 256]


class PolicyKwargs(Strict):
    """Structured ``policy_kwargs`` (never an ``eval``-ed string)."""

    net_arch: list[Annotated[int, Field(gt=0)]] | NetArch = [256, 256]
    """Hidden layer sizes: one list shared by all heads, or ``{pi: [...], vf: [...]}``."""
    activation_fn: Literal["relu", "tanh", "elu", "leaky_relu"] = "relu"
    """Activation between hidden layers."""
    ortho_init: bool = True
    """Orthogonal initialisation (PPO only)."""
    network: Literal["mlp", "cards"] = "mlp"
    """``mlp``: plain MLPs. ``cards``: one scorer shared by the 52 cards scores the card
    actions, with ``net_arch`` (``pi`` for PPO) as the context network read by every card
    (see :mod:`rummyzoo.agents.networks`; Knock Rummy)."""


class PPOHyperparams(Strict):
    """MaskablePPO hyperparameters (names as in stable-baselines3)."""

    learning_rate: float = Field(3e-4, gt=0)
    n_steps: int = Field(512, gt=0)
    batch_size: int = Field(256, gt=0)
    n_epochs: int = Field(5, gt=0)
    gamma: float = Field(0.995, gt=0, le=1)
    gae_lambda: float = Field(0.95, gt=0, le=1)
    clip_range: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    target_kl: float | None = Field(None, gt=0)


class DQNHyperparams(Strict):
    """Masked DQN hyperparameters (names as in stable-baselines3)."""

    learning_rate: float = Field(1e-4, gt=0)
    buffer_size: int = Field(100_000, gt=0)
    learning_starts: int = Field(5_000, ge=0)
    batch_size: int = Field(128, gt=0)
    tau: float = Field(1.0, gt=0, le=1)
    gamma: float = Field(0.99, gt=0, le=1)
    train_freq: int = Field(4, gt=0)
    gradient_steps: int = Field(1, gt=0)
    target_update_interval: int = Field(5_000, gt=0)
    exploration_fraction: float = Field(0.3, gt=0, le=1)
    exploration_initial_eps: float = Field(1.0, ge=0, le=1)
    exploration_final_eps: float = Field(0.05, ge=0, le=1)
    max_grad_norm: float = Field(10.0, gt=0)


class OpponentSpec(Strict):
    """One entry of the opponent mixture: an agent name (``random``, ``knock.greedy``, a
    checkpoint path) or ``self`` for the self-play snapshot pool, with a sampling weight."""

    name: str
    weight: float = Field(1.0, gt=0)


class SelfPlay(Strict):
    """Self-play: snapshots of the learner join an opponent pool."""

    snapshot_interval: int = Field(20_000, gt=0)
    """Environment steps between snapshots."""
    pool_size: int = Field(5, gt=0)
    """Snapshots kept (oldest dropped first)."""
    sampling: Literal["uniform", "latest", "recent"] = "recent"
    """How a snapshot is picked: uniformly, always the newest, or weighted towards newer ones."""


class Evaluation(Strict):
    """Periodic evaluation against fixed baselines (duplicate deals, seat rotation)."""

    opponents: list[str] = ["random"]
    deals: int = Field(100, gt=0)
    """Duplicate deals per opponent (each played once per seat rotation)."""
    interval: int = Field(20_000, gt=0)
    """Environment steps between evaluations."""
    sample_game_interval: int = Field(50_000, gt=0)
    """Environment steps between rendered sample games in TensorBoard's TEXT tab."""
    best_metric: Literal["win_rate", "mean_points"] = "win_rate"
    """Mean over the evaluation opponents of this metric picks the best checkpoint."""
    options: dict[str, Any] = {}
    """Env options overriding the training ones during evaluation (e.g. a match target)."""
    at_start: bool = True
    """Also evaluate the network before any RL (after the warm start, if any): the learning
    curve's first point, and the baseline that RL must improve on."""


class Checkpoints(Strict):
    """Checkpoint settings (every file is written atomically)."""

    interval: int = Field(20_000, gt=0)
    """Environment steps between checkpoints (the most a resumed run can lose)."""
    keep: int = Field(3, gt=0)
    """Periodic checkpoints kept besides ``last`` and ``best``."""
    save_replay_buffer: bool = False
    """DQN: also save the replay buffer with each checkpoint (large)."""


class Pretrain(Strict):
    """Warm start by behaviour cloning a teacher before RL (PPO; see
    :mod:`rummyzoo.training.pretrain`)."""

    teacher: str
    """Agent whose play is imitated (a heuristic such as ``knock.smart``, or a checkpoint)."""
    decisions: int = Field(50_000, gt=0)
    """Teacher decisions recorded in the learner's seat (the last game is played out)."""
    epochs: int = Field(5, gt=0)
    batch_size: int = Field(256, gt=0)
    learning_rate: float = Field(1e-3, gt=0)


class RunConfig(Strict):
    """A training run."""

    variant: str = "knock_rummy"
    num_players: int = Field(2, ge=2, le=8)
    env_options: dict[str, Any] = {}
    """Rules options of the variant (see its docs page)."""
    reward: Literal["points", "scaled", "win_loss"] = "scaled"
    """Reward the learner sees (raw points are always logged)."""
    reward_scale: float = Field(MatchOptions.__dataclass_fields__["reward_scale"].default, gt=0)
    """Divisor for ``reward: scaled`` (the env's default unless set)."""
    learner_seat: Literal["random", "rotate"] | int = "rotate"
    """Seat of the learner: a fixed seat, rotating game by game, or random."""
    features: str | None = None
    """Engineered features appended to the observation (``knock_deadwood``), or none."""
    shaping: str | None = None
    """Potential-based reward shaping (``knock_deadwood``), or none (see the seat env)."""
    algo: Literal["ppo", "dqn"] = "ppo"
    n_timesteps: int = Field(200_000, gt=0)
    """Learner environment steps (decisions) to train for."""
    seed: int = Field(0, ge=0)
    n_envs: int = Field(4, gt=0)
    vec_env: Literal["dummy", "subproc"] = "dummy"
    device: str = "cpu"
    torch_threads: int = Field(1, ge=1)
    """Torch intra-op threads. Small networks on few cores run fastest single-threaded; more
    threads only fight the env processes for the cores."""
    hyperparams: PPOHyperparams | DQNHyperparams | None = None
    """Algorithm hyperparameters; defaults of the chosen algorithm when omitted."""
    policy_kwargs: PolicyKwargs = PolicyKwargs()
    opponents: list[OpponentSpec] = [OpponentSpec(name="random")]
    self_play: SelfPlay = SelfPlay()
    evaluation: Evaluation = Evaluation()
    checkpoints: Checkpoints = Checkpoints()
    pretrain: Pretrain | None = None
    """Behaviour-cloning warm start (PPO only), or none."""
    log_interval: int = Field(1, gt=0)
    """Rollouts (PPO) or episodes (DQN) between SB3's console/TensorBoard logs."""

    @field_validator("variant")
    @classmethod
    def _known_variant(cls, value: str) -> str:
        if value not in VARIANTS:
            raise ValueError(f"unknown variant {value!r}; known: {', '.join(VARIANTS)}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _hyperparams_for_algo(cls, data: Any) -> Any:
        if isinstance(data, dict):
            algo = data.get("algo", "ppo")
            model = {"ppo": PPOHyperparams, "dqn": DQNHyperparams}.get(algo)
            params = data.get("hyperparams")
            if model is not None and (params is None or isinstance(params, dict)):
                data = dict(data)
                try:
                    data["hyperparams"] = model.model_validate(params or {})
                except ValidationError as exc:
                    err = exc.errors()[0]
                    where = ".".join(str(p) for p in err["loc"])
                    raise ValueError(
                        f"hyperparams.{where}: {err['msg']} (for algo {algo!r})"
                    ) from None
        return data

    @model_validator(mode="after")
    def _consistent(self) -> RunConfig:
        counts = VARIANTS[self.variant][1]
        if self.num_players not in counts:
            raise ValueError(
                f"num_players: {self.variant} supports {counts[0]}-{counts[-1]} players, "
                f"got {self.num_players}"
            )
        if isinstance(self.learner_seat, int) and not 0 <= self.learner_seat < self.num_players:
            raise ValueError(
                f"learner_seat: must be 0..{self.num_players - 1}, got {self.learner_seat}"
            )
        if not self.opponents:
            raise ValueError("opponents: at least one opponent is needed")
        if self.pretrain is not None:
            if self.algo != "ppo":
                raise ValueError("pretrain: behaviour cloning is available for algo 'ppo' only")
            from rummyzoo.agents.registry import make_agent

            try:
                make_agent(self.pretrain.teacher, self.variant, self.num_players, self.env_options)
            except (ValueError, KeyError, OSError) as exc:
                raise ValueError(f"pretrain.teacher: {exc}") from None
        if self.features is not None:
            from rummyzoo.agents.features import FEATURES

            if self.features not in FEATURES:
                raise ValueError(
                    f"features: unknown {self.features!r}; known: {', '.join(FEATURES)}"
                )
            if FEATURES[self.features].variant != self.variant:
                raise ValueError(
                    f"features: {self.features!r} are for {FEATURES[self.features].variant}"
                )
        if self.shaping is not None:
            from rummyzoo.agents.features import POTENTIALS

            if self.shaping not in POTENTIALS or POTENTIALS[self.shaping].variant != self.variant:
                raise ValueError(f"shaping: {self.shaping!r} is not a shaping for {self.variant}")
        if self.policy_kwargs.network == "cards":
            from rummyzoo.envs.registry import make_env as _make

            game = _make(self.variant, self.num_players, wrapped=False).game
            if getattr(game, "action_segments", None) is None:
                raise ValueError(
                    f"policy_kwargs.network: 'cards' needs actions laid out per card, which "
                    f"{self.variant} does not have; use 'mlp'"
                )
        # The env options must build a valid env (checked with the env's own validation).
        from rummyzoo.envs.registry import make_env

        try:
            make_env(self.variant, self.num_players, wrapped=False, **self.env_options)
            make_env(
                self.variant,
                self.num_players,
                wrapped=False,
                **{**self.env_options, **self.evaluation.options},
            )
        except ValueError as exc:
            raise ValueError(f"env_options: {exc}") from None
        return self


class ConfigLoadError(ValueError):
    """A config file that cannot be read or does not validate (message names the key path)."""


def _format_errors(exc: ValidationError, source: str) -> str:
    lines = [f"invalid config {source}:"]
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-")) or "(top)"
        msg = err["msg"].removeprefix("Value error, ")
        lines.append(f"  {path}: {msg}")
    return "\n".join(lines)


def parse_override(text: str) -> tuple[list[str], Any]:
    """``key.sub=value`` -> (["key", "sub"], value parsed as YAML: numbers, bools, lists...)."""
    if "=" not in text:
        raise ConfigLoadError(f"override {text!r} must look like key.sub=value")
    key, raw = text.split("=", 1)
    path = [p for p in key.strip().split(".") if p]
    if not path:
        raise ConfigLoadError(f"override {text!r} has an empty key")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigLoadError(f"override {text!r}: value is not valid YAML ({exc})") from None
    return path, value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``--set`` overrides to the raw config mapping (creating nested mappings)."""
    data = json.loads(json.dumps(data))  # deep copy of plain data
    for text in overrides:
        path, value = parse_override(text)
        node = data
        for part in path[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise ConfigLoadError(f"override {text!r}: {part!r} is not a mapping")
            node = child
        node[path[-1]] = value
    return data


def validate_config(data: dict[str, Any], source: str = "<config>") -> RunConfig:
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigLoadError(_format_errors(exc, source)) from None


def load_config(path: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """Read, override and validate a YAML run config.

    :raises ConfigLoadError: unreadable file, bad YAML, unknown keys or bad values (each
        message names the key path).
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigLoadError(f"cannot read config {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigLoadError(f"config {path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigLoadError(f"config {path} must be a mapping of keys to values")
    data = apply_overrides(data, overrides or [])
    return validate_config(data, str(path))


def config_to_yaml(config: RunConfig) -> str:
    """The resolved config (defaults filled in) as YAML."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
