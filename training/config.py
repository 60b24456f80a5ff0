"""Run configs: YAML files validated by pydantic models (unknown keys and bad values rejected).

A config names the variant, its options and player count, the algorithm and its SB3-style
hyperparameters, the opponents (a weighted mixture of heuristics, random play and self-play
snapshots), self-play, evaluation and checkpoint settings. ``load_config(path, overrides)``
reads a file, applies ``--set key.sub=value`` overrides and validates the result.

Every problem is found before a run starts, and all of them at once: an empty file, a key
given twice, unknown keys (with a "did you mean" for near misses), bad values, agent names
that do not build for the variant, a device this machine does not have. Each error names its
key path and where it comes from: the file's line, or the ``--set`` override that set it.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import os
import re
import sys
import typing
import warnings
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from rummyzoo.agents.limits import MAX_LAYERS, MAX_WIDTH
from rummyzoo.envs.core import int_shown, short_repr
from rummyzoo.envs.match import MIN_REWARD_SCALE, REPORT_OPTION_NAMES, REWARD_MODES, MatchOptions
from rummyzoo.envs.registry import VARIANTS


def _takes_bool(annotation: Any) -> bool:
    """Whether a field of this type may hold true/false (a bool, or a union or list with one)."""
    if annotation is bool or annotation is Any:
        return True
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return any(isinstance(a, bool) for a in typing.get_args(annotation))
    if origin is Annotated:
        return _takes_bool(typing.get_args(annotation)[0])
    return any(_takes_bool(a) for a in typing.get_args(annotation))


class Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, allow_inf_nan=False, use_attribute_docstrings=True
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic reads true/false as 1/0 where a number is wanted: YAML's yes/no/true/false
        # must not become a seed, a count or a seat
        if isinstance(value, bool) and info.field_name is not None:
            field = cls.model_fields[info.field_name]
            if not _takes_bool(field.annotation):
                raise ValueError(f"expected a number or a name here, got {value} (a boolean)")
        return value


#: Hidden layer sizes: each 1 to MAX_WIDTH units, at most MAX_LAYERS layers (what a checkpoint
#: may hold: a network past them could not be saved)
Layers = Annotated[list[Annotated[int, Field(gt=0, le=MAX_WIDTH)]], Field(max_length=MAX_LAYERS)]


class NetArch(Strict):
    """Separate layer sizes for the policy and value networks (PPO)."""

    pi: Layers = [256, 256]
    """Hidden layer sizes of the policy network (of the context network with ``network:
    cards`` or ``actions``)."""
    vf: Layers = [256, 256]
    """Hidden layer sizes of the value network."""


class PolicyKwargs(Strict):
    """Structured ``policy_kwargs`` (never an ``eval``-ed string)."""

    net_arch: Annotated[
        Annotated[Layers, Tag("shared")] | Annotated[NetArch, Tag("per_head")],
        Discriminator(lambda value: "per_head" if isinstance(value, (dict, NetArch)) else "shared"),
    ] = [256, 256]
    """Hidden layer sizes: one list shared by all heads, or ``{pi: [...], vf: [...]}`` (PPO;
    DQN's one network takes a list)."""
    activation_fn: Literal["relu", "tanh", "elu", "leaky_relu"] = "relu"
    """Activation between hidden layers."""
    ortho_init: bool = True
    """Orthogonal initialisation (PPO only: a DQN config refuses false, which it could not
    follow)."""
    network: Literal["mlp", "cards", "actions"] = "mlp"
    """``mlp``: plain MLPs. ``cards``: one scorer shared by the 52 cards scores the card
    actions, with ``net_arch`` (``pi`` for PPO) as the context network read by every card
    (Knock Rummy). ``actions``: one scorer shared by every action scores each action from its
    description (``features: ditch_actions``, ``ditch_plans`` or ``rummy500_actions_v1``) and the same context
    network (see :mod:`rummyzoo.agents.networks`)."""


#: The largest float a setting used in float32 tensors takes (torch refuses to convert more).
FLOAT32_MAX = 3.4028234663852886e38
#: The largest count of an array's rows a setting takes (numpy's dimensions stop near 2**63;
#: a buffer anywhere near this is refused for the machine's memory when it is built).
MAX_ROWS = 2**31 - 1


class PPOHyperparams(Strict):
    """MaskablePPO hyperparameters (names as in stable-baselines3)."""

    learning_rate: float = Field(3e-4, gt=0)
    """Adam's step size."""
    n_steps: int = Field(512, gt=0, le=MAX_ROWS)
    """Steps each game plays per rollout: a rollout is ``n_steps x n_envs`` learner steps."""
    batch_size: int = Field(256, ge=2, le=MAX_ROWS)
    """Minibatch size of the updates; at least 2: the advantages are normalised over each
    minibatch (one sample has no spread, and its NaN would reach the weights)."""
    n_epochs: int = Field(5, gt=0)
    """Passes over each rollout, in minibatches of ``batch_size``."""
    gamma: float = Field(0.995, gt=0, le=1)
    """Discount factor."""
    gae_lambda: float = Field(0.95, gt=0, le=1)
    """Lambda of the generalized advantage estimate (1: the whole discounted return)."""
    clip_range: float = Field(0.2, gt=0, le=FLOAT32_MAX)
    """How far the probability ratio of an action may move before PPO's objective is clipped."""
    ent_coef: float = Field(0.01, ge=0)
    """Weight of the entropy bonus (over the legal actions)."""
    vf_coef: float = Field(0.5, ge=0)
    """Weight of the value loss."""
    max_grad_norm: float = Field(0.5, gt=0)
    """Gradients are clipped to this global norm."""
    target_kl: float | None = Field(None, gt=0)
    """An update stops its epochs early once the approximate KL divergence from the rollout's
    policy passes 1.5 times this; None: never."""


class DQNHyperparams(Strict):
    """Masked DQN hyperparameters (names as in stable-baselines3)."""

    learning_rate: float = Field(1e-4, gt=0)
    """Adam's step size."""
    buffer_size: int = Field(100_000, gt=0, le=MAX_ROWS)
    """Transitions the replay buffer holds (the oldest leave first)."""
    learning_starts: int = Field(5_000, ge=0)
    """Steps played (random legal actions) before the first update."""
    batch_size: int = Field(128, gt=0, le=MAX_ROWS)
    """Transitions per gradient step."""
    tau: float = Field(1.0, gt=0, le=1)
    """How much of the network the target network takes at each of its updates (1: a copy)."""
    gamma: float = Field(0.99, gt=0, le=1)
    """Discount factor."""
    train_freq: int = Field(4, gt=0)
    """Steps of every game between updates: an update every ``train_freq x n_envs`` learner
    steps."""
    gradient_steps: int = Field(1, gt=0)
    """Gradient steps per update."""
    target_update_interval: int = Field(5_000, gt=0)
    """Steps between updates of the target network."""
    exploration_fraction: float = Field(0.3, gt=0, le=1)
    """Share of ``n_timesteps`` over which epsilon falls from its initial to its final value."""
    exploration_initial_eps: float = Field(1.0, ge=0, le=1)
    """Epsilon at the start: the chance that a step plays a random legal action."""
    exploration_final_eps: float = Field(0.05, ge=0, le=1)
    """Epsilon once it has fallen, to the end of the run."""
    max_grad_norm: float = Field(10.0, gt=0)
    """Gradients are clipped to this global norm."""


class OpponentSpec(Strict):
    """One entry of the opponent mixture: an agent name (``random``, ``knock.greedy``, a
    checkpoint path) or ``self`` for the self-play snapshot pool, with a sampling weight. A
    checkpoint's relative path, here and wherever a config names an agent, is read from the
    folder the command runs in. A run resumed where an opponent's path no longer reaches it
    takes the path anew with ``--set`` (the stable-baselines3 backend's opponents and
    evaluation opponents; the league and the charts then know it by its new name); the warm
    start's teacher need not load once the run has a checkpoint."""

    name: str = Field(min_length=1)
    """The agent (``random``, a heuristic such as ``knock.greedy``, a checkpoint), or
    ``self``."""
    weight: float = Field(1.0, gt=0)
    """Its share of the draws, relative to the other entries' weights."""


class SelfPlay(Strict):
    """Self-play: snapshots of the learner join an opponent pool."""

    snapshot_interval: int = Field(20_000, gt=0)
    """Environment steps between snapshots."""
    pool_size: int = Field(5, gt=0)
    """Snapshots kept (oldest dropped first)."""
    sampling: Literal["uniform", "latest", "recent"] = "recent"
    """How a snapshot is picked: uniformly, always the newest, or weighted towards newer ones."""


class League(Strict):
    """How the opponents are drawn: by their weights alone, or prioritized by the learner's
    recent results (prioritized fictitious self-play, PFSP)."""

    sampling: Literal["weights", "pfsp"] = "weights"
    """``weights``: each entry by its weight (``self``: a snapshot by ``self_play.sampling``).
    ``pfsp``: every entry and every snapshot also by ``(1 - win rate) ** exponent``, the
    learner's win rate against it over its last ``window`` games: the opponents it does worst
    against come most often."""
    exponent: float = Field(2.0, gt=0)
    """PFSP: how sharply the weakest results are preferred (1: in proportion to the losses)."""
    window: int = Field(200, gt=0)
    """PFSP: results per opponent that its win rate is measured over (one per game, or one per
    seat where it holds several seats of a game)."""
    score: Literal["winner", "head_to_head"] = "winner"
    """PFSP: what a game counts against each opponent. ``winner``: whether the learner won the
    game, the same for every opponent at the table (a tie for the win counts as a win).
    ``head_to_head``: against each rival, 1 where the learner's side scored more points over
    the game than the rival's side, 0.5 for as many, else 0 (the comparisons a round robin's
    ratings count; a partner counts nothing). The two agree with two players but in ties."""

    @model_validator(mode="after")
    def _priorities_stay_above_zero(self) -> League:
        # the best win rate over the window (with its one-win, one-loss prior) is
        # (window + 1) / (window + 2): its priority (1 / (window + 2)) ** exponent must not
        # round to 0, or every entry's may, and the draw has no weights left
        if self.sampling == "pfsp" and self.exponent * math.log10(self.window + 2) > 300:
            raise ValueError(
                f"league exponent {self.exponent:g} with window {self.window}: the priority "
                f"(1 - win rate) ** exponent of an opponent beaten in every game rounds to 0; "
                f"keep exponent x log10(window + 2) at most 300 (here exponent at most "
                f"{300 / math.log10(self.window + 2):.0f})"
            )
        return self

    @model_validator(mode="after")
    def _score_is_pfsps(self) -> League:
        if self.score != "winner" and self.sampling != "pfsp":
            raise ValueError(
                f"league score: {self.score} is what PFSP counts; it needs sampling: pfsp "
                f"(this league's sampling is {self.sampling!r})"
            )
        return self

    tables: Literal["independent", "distinct"] = "independent"
    """How the opponents of one game are drawn. ``independent``: each seat on its own, so a
    table may seat one entry twice. ``distinct``: without replacement among the entries (by
    their weights, PFSP priorities included): no entry sits twice at a table until every
    entry is seated, so with 4 players and 3 entries every game seats each entry once, as a
    4-seat round robin does (``self`` is one entry: one snapshot a table)."""


class Evaluation(Strict):
    """Periodic evaluation against fixed baselines (duplicate deals, seat rotation)."""

    opponents: list[str] = ["random"]
    """The baselines each evaluation plays (agent names or checkpoints), each once."""
    deals: int = Field(100, gt=0)
    """Duplicate deals per opponent (each played once per seat rotation)."""

    @field_validator("opponents")
    @classmethod
    def _each_opponent_once(cls, value: list[str]) -> list[str]:
        twice = sorted({name for name in value if value.count(name) > 1})
        if twice:
            raise ValueError(f"each evaluation opponent once: {', '.join(twice)} is named twice")
        return value

    interval: int = Field(20_000, gt=0)
    """Environment steps between evaluations."""
    sample_game_interval: int = Field(50_000, gt=0)
    """Environment steps between rendered sample games in TensorBoard's TEXT tab (and in
    ``games/``), besides the one every evaluation plays with the weights it scores."""
    best_metric: Literal["win_rate", "mean_points"] = "win_rate"
    """Mean over the evaluation opponents of this metric picks the best checkpoint."""
    options: dict[str, Any] = {}
    """Env options overriding the training ones during evaluation (e.g. a match target)."""
    at_start: bool = True
    """Also evaluate the network before any RL (after the warm start, if any): the learning
    curve's first point, and the baseline that RL must improve on."""
    cross_table_deals: int = Field(20, ge=0)
    """Duplicate deals (single hands, under the evaluation's rules) of the round robin at every
    evaluation between the learner, its newest pool snapshots and every baseline (ratings
    anchored at random play, and the cross table's heatmap in TensorBoard); 0: none."""
    cross_table_snapshots: int = Field(3, ge=0)
    """Newest pool snapshots in that round robin."""
    strategy_games: int = Field(20, ge=0)
    """Hands against the first evaluation opponent at every evaluation whose play is summed up
    in ``strategy/`` statistics (see :mod:`rummyzoo.training.strategy`); 0: none."""


class Checkpoints(Strict):
    """Checkpoint settings (every file is written atomically)."""

    interval: int = Field(20_000, gt=0)
    """Environment steps between checkpoints (the most a resumed run can lose)."""
    keep: int = Field(3, gt=0)
    """Periodic checkpoints kept besides ``last`` and ``best``."""
    save_replay_buffer: bool = False
    """DQN: also save the replay buffer with each checkpoint (large)."""


class Pretrain(Strict):
    """Warm start by behaviour cloning a teacher before RL (PPO: the policy and value nets;
    DQN: the Q-network, with a large margin for the teacher's actions; see
    :mod:`rummyzoo.training.pretrain`)."""

    teacher: str
    """Agent whose play is imitated (a heuristic such as ``knock.smart``, or a checkpoint)."""
    decisions: int = Field(50_000, gt=0)
    """Teacher decisions recorded in the learner's seat (the last game is played out)."""
    epochs: int = Field(5, gt=0)
    """Passes over the recorded decisions."""
    batch_size: int = Field(256, gt=0, le=MAX_ROWS)
    """Decisions per gradient step."""
    learning_rate: float = Field(1e-3, gt=0)
    """Adam's step size for the warm start."""
    margin: float = Field(0.05, gt=0, le=FLOAT32_MAX)
    """DQN: how far (in reward units, after ``reward_scale``) the fit puts Q of the teacher's
    action above every other legal action's."""
    margin_coef: float = Field(1.0, ge=0)
    """DQN: weight of that large-margin term beside the fit of Q to the returns."""
    demo_coef: float = Field(0.0, ge=0)
    """DQN: weight of the same large-margin term on a batch of the teacher's recorded decisions
    at every Q-learning update, as in deep Q-learning from demonstrations, so that Q-learning
    departs from the teacher only where its returns say so; 0 drops the recorded decisions
    after the warm start."""
    demo_batch_size: int = Field(32, gt=0, le=MAX_ROWS)
    """DQN with ``demo_coef``: recorded decisions drawn for each update's margin term."""
    anchor_coef: float = Field(0.0, ge=0)
    """PPO: weight of the KL divergence from the warm start's policy (frozen, read back from
    ``checkpoints/warm_start.rz``) to the learner's, on every update's minibatch of states,
    added to PPO's loss (as in kickstarting): PPO then departs from the warm start only where
    its advantages keep saying so, instead of drifting with the noise of the returns; 0: none
    (PPO's loss as is)."""


#: The warm start's settings that only a DQN run reads.
DQN_PRETRAIN_KEYS = ("margin", "margin_coef", "demo_coef", "demo_batch_size")

#: The warm start's settings that only a PPO run reads.
PPO_PRETRAIN_KEYS = ("anchor_coef",)

#: algo -> its hyperparameter model.
HYPERPARAMS: dict[str, type[BaseModel]] = {"ppo": PPOHyperparams, "dqn": DQNHyperparams}

#: The forms ``device`` accepts.
DEVICE_FORMS = ("cpu", "cuda", "cuda:0", "auto", "mps")


# ---------------------------------------------------------------------------- problems
@dataclasses.dataclass
class Issue:
    """One problem of a config, at a key path (``loc``: keys and list indices)."""

    loc: tuple[str | int, ...]
    msg: str = ""
    valid: tuple[str, ...] | None = None
    """For an unknown key (the last of ``loc``): the keys valid at its level."""
    hint: str = ""
    """For an unknown key: said instead of a "did you mean"."""
    names_key: bool = False
    """The message names its key itself (no ``path:`` in front)."""
    locate: bool = True
    """Point at the line of ``loc`` in the file (``FILE, line N:``)."""
    line: int | None = None
    """The line the issue is about when it is not that of ``loc`` (orders the report)."""

    def text(self) -> str:
        if self.valid is None:
            return self.msg
        key, parent = str(self.loc[-1]), self.loc[:-1]
        out = f"unknown key {key!r}" + (f" in {key_path(parent)}" if parent else "")
        if self.hint:
            return f"{out}; {self.hint}"
        close = difflib.get_close_matches(key, self.valid, n=1)
        if close:
            return f"{out}; did you mean {close[0]!r}?"
        return f"{out}; valid keys: {', '.join(self.valid)}"


class _Issues(ValueError):
    """Raised by a validator that found problems below its field (paths relative to it)."""

    def __init__(self, issues: list[Issue]) -> None:
        super().__init__("; ".join(issue.text() for issue in issues))
        self.issues = issues


def key_path(loc: tuple[str | int, ...] | list[str | int]) -> str:
    """``("evaluation", "opponents", 0)`` -> ``evaluation.opponents[0]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _models_in(annotation: Any) -> tuple[type[BaseModel], ...]:
    """The pydantic models a field's type holds (through lists, unions and ``Annotated``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return (annotation,)
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += [m for m in _models_in(arg) if m not in found]
    return tuple(found)


def _got(value: Any) -> str:
    if value is None or isinstance(value, (str, int, float, bool)):
        shown = int_shown(value)  # (an int too long for a str says so)
        if len(shown) <= 60:
            return f", got {shown}"
    return ""


def _issues_from(exc: ValidationError, root: type[BaseModel]) -> list[Issue]:
    """pydantic's errors as issues, with clean key paths (union branch tags dropped)."""
    issues: list[Issue] = []
    for err in exc.errors():
        raw, loc = err["loc"], []
        models: tuple[type[BaseModel], ...] = (root,)
        valid: tuple[str, ...] = ()
        for i, part in enumerate(raw):
            if isinstance(part, int):
                loc.append(part)
                continue
            fields = {name: f for m in models for name, f in m.model_fields.items()}
            if part in fields:
                loc.append(part)
                models = _models_in(fields[part].annotation)
            elif any(m.__name__ == part for m in models):
                models = tuple(m for m in models if m.__name__ == part)
            elif err["type"] == "extra_forbidden" and i == len(raw) - 1:
                valid = tuple(fields)
                loc.append(part)
            # anything else is a union branch's tag: not a key
        error = err.get("ctx", {}).get("error")
        if isinstance(error, _Issues):
            issues += [dataclasses.replace(s, loc=(*loc, *s.loc)) for s in error.issues]
        elif err["type"] == "extra_forbidden":
            issues.append(Issue(tuple(loc), valid=valid))
        elif err["type"] == "missing":
            issues.append(Issue(tuple(loc), "required, but missing"))
        elif err["type"] == "value_error":
            issues.append(Issue(tuple(loc), err["msg"].removeprefix("Value error, ")))
        else:
            issues.append(Issue(tuple(loc), err["msg"] + _got(err.get("input"))))
    return issues


# ---------------------------------------------------------------------------- checks
def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def device_problem(device: str) -> str | None:
    """What is wrong with a torch device string on this machine (None: nothing)."""
    if device in ("cpu", "auto"):
        return None
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        parsed = None
    if parsed is None or parsed.type not in ("cpu", "cuda", "mps"):
        forms = ", ".join(repr(form) for form in DEVICE_FORMS)
        return f"{device!r} is not a device; use one of {forms} (cuda:N picks GPU number N)"
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            return (
                f"{device!r} needs CUDA, but this machine has no CUDA device (torch "
                f"{torch.__version__}); use 'cpu', or 'auto' to take CUDA where there is one"
            )
        count = torch.cuda.device_count()
        if parsed.index is not None and parsed.index >= count:
            return (
                f"{device!r}: this machine has {count} CUDA device{'s' if count != 1 else ''} "
                f"(cuda:0 to cuda:{count - 1})"
            )
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        return (
            f"{device!r} needs Apple's Metal (MPS) backend, which this machine does not have; "
            "use 'cpu' or 'auto'"
        )
    return None


def _report_option_problem(options: dict[str, Any]) -> str | None:
    """Why options that say how an env reports (its reward, its rendering) are no rules
    options of a run's games (None: there are none)."""
    reported = [key for key in options if key in REPORT_OPTION_NAMES]
    if not reported:
        return None
    return (
        f"{', '.join(reported)} is not a rules option: a run's reward is its top-level reward "
        "and reward_scale, and the evaluations score raw points (render options are for "
        "viewing games, not for training)"
    )


def _layout(variant: str, num_players: int, options: dict[str, Any]) -> tuple[int, int]:
    """The observation size and number of actions of the variant's game with ``options``."""
    from rummyzoo.envs.registry import make_game

    game = make_game(variant, num_players, **options)
    return game.obs_size, game.num_actions


def _env_problem(variant: str, num_players: int, options: dict[str, Any]) -> str | None:
    """Why the variant's env does not build with these options (None: it builds)."""
    from rummyzoo.envs.registry import make_env, rules_options

    try:
        # an unknown name is refused listing the options a run takes (not the report options)
        rules_options(options, "a run", variant)
        make_env(variant, num_players, wrapped=False, **options)
    except (ValueError, TypeError) as exc:
        return str(exc)
    return None


def _arena_size_issues(
    evaluation: Evaluation, variant: str, num_players: int, options: dict[str, Any]
) -> list[Issue]:
    """The evaluation's arena runs that would play more games than an arena run plays
    (deals x seatings a deal): refused when the config loads, not at the first evaluation."""
    from rummyzoo.agents.arena import MAX_GAMES, seatings
    from rummyzoo.agents.arena.evaluate import baseline_names
    from rummyzoo.envs.registry import make_game

    groups = list(make_game(variant, num_players, **options).score_groups)
    # against an opponent: the learner and copies of the opponent, seated by rotations
    kinds = [0] + [1] * (num_players - 1)

    def against() -> int:
        return len(seatings(num_players, num_players, groups, "rotations", kinds))

    def cross() -> int:  # the round robin: every baseline, the newest snapshots and the learner
        entries = len(baseline_names(variant)) + evaluation.cross_table_snapshots + 1
        return len(seatings(entries, num_players, groups))

    issues = []
    for field, deals, count in (
        ("deals", evaluation.deals, against),
        ("cross_table_deals", evaluation.cross_table_deals, cross),
    ):
        per_deal = count() if deals else 0  # (none played: no seatings to count)
        if deals * per_deal > MAX_GAMES:
            issues.append(
                Issue(
                    (field,),
                    f"{deals:,} deals x {per_deal} seatings = {deals * per_deal:,} games, more "
                    f"than an arena run plays ({MAX_GAMES:,}): at most {MAX_GAMES // per_deal:,}",
                )
            )
    return issues


def agent_problem(
    name: str,
    variant: str,
    num_players: int,
    options: dict[str, Any],
    cache: dict[Any, str | None] | None = None,
) -> str | None:
    """Why ``name`` does not build as an agent of the variant (None: it builds)."""
    key = (name, variant, num_players, repr(sorted(options.items())))
    if cache is not None and key in cache:
        return cache[key]
    from rummyzoo.agents.registry import agent_names, make_agent

    problem = None
    if name == "self":
        problem = "'self' (the self-play pool) can only be a training opponent; name an agent"
    else:
        try:
            make_agent(name, variant, num_players, options)
        except ValueError as exc:
            problem = str(exc)
            if problem.startswith("unknown agent"):
                base = name.split("(", 1)[0].strip()  # a name's parameters do not count
                close = difflib.get_close_matches(base, agent_names(variant), n=1, cutoff=0.8)
                if close:
                    problem += f"; did you mean {close[0]!r}?"
        except Exception as exc:  # a plugin agent's own failure
            problem = f"agent {name!r} cannot be built: {type(exc).__name__}: {exc}"
    if cache is not None:
        cache[key] = problem
    return problem


def _game(info: ValidationInfo) -> tuple[str, int, dict[str, Any]] | None:
    """(variant, num_players, env_options) when all three are valid, else None (their own
    errors are reported; checks that need them are skipped)."""
    if all(key in info.data for key in ("variant", "num_players", "env_options")):
        return info.data["variant"], info.data["num_players"], info.data["env_options"]
    return None


def _agent_cache(info: ValidationInfo) -> dict[Any, str | None] | None:
    return info.context.setdefault("agents", {}) if isinstance(info.context, dict) else None


def _checks_agents(info: ValidationInfo, role: str) -> bool:
    """Whether the agents of ``role`` (``opponents``, ``evaluation``, ``teacher``,
    ``baseline``) are built to check them: all but those the validation's context leaves out
    (``skip_agents``: roles, or ``all``; see :func:`validate_config`)."""
    skip = info.context.get("skip_agents", ()) if isinstance(info.context, dict) else ()
    return role not in skip and "all" not in skip


class RllibSettings(Strict):
    """Settings of the Ray RLlib backend (``backend: rllib``; see :mod:`rummyzoo.training.rllib`).

    The same config runs on a laptop (a local Ray started by the run) or on a cluster (``address``
    or ``RAY_ADDRESS``): scale ``num_env_runners`` (sampling processes) and
    ``num_envs_per_env_runner`` first, ``num_learners`` (training processes, with
    ``num_gpus_per_learner``) when updates dominate.
    """

    num_env_runners: int = Field(0, ge=0)
    """Sampling processes (0: sample in the driver process)."""
    num_envs_per_env_runner: int = Field(1, ge=1)
    """Games each sampling process plays at once."""
    num_cpus_per_env_runner: float = Field(1, gt=0)
    """CPUs Ray sets aside for each sampling process."""
    num_learners: int = Field(0, ge=0)
    """Training processes (0: update in the driver process)."""
    num_cpus_per_learner: float = Field(1, gt=0)
    """CPUs Ray sets aside for each training process."""
    num_gpus_per_learner: float = Field(0, ge=0)
    """GPUs (or a share of one) for each training process."""
    address: str | None = None
    """Ray cluster to join (``auto``, ``ray://host:10001`` or ``host:6379``); None: the
    ``RAY_ADDRESS`` environment variable if set, else a local Ray started for the run."""
    num_cpus: int | None = Field(None, gt=0)
    """CPUs of the local Ray the run starts (None: all of the machine's); not with ``address``."""
    rollout_fragment_length: Annotated[int, Field(ge=1)] | Literal["auto"] = "auto"
    """Steps each sampling env collects per round (``auto``: from the train batch). A number
    must make whole rounds of every env runner's envs that overshoot the train batch by a
    tenth at most, as RLlib requires (checked when the config loads)."""

    @field_validator("rollout_fragment_length", mode="before")
    @classmethod
    def _fragment(cls, value: Any) -> Any:
        # one message for both forms (pydantic's would name each member of the union)
        if value == "auto" and isinstance(value, str):
            return value
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not whole or value < 1:
            raise ValueError(f"must be 'auto' or a positive int, got {short_repr(value)}")
        return value

    @model_validator(mode="after")
    def _local_cpus(self) -> RllibSettings:
        if self.address is not None and self.num_cpus is not None:
            raise ValueError(
                "num_cpus sizes the local Ray a run starts; with address the cluster's own CPUs "
                "count: drop one of them"
            )
        return self


class RunConfig(Strict):
    """A training run."""

    variant: str = "knock_rummy"
    """The game: ``knock_rummy``, ``ditch_rummy`` or ``rummy500``."""
    num_players: int = Field(2, ge=2, le=8)
    """Players at the table (within the variant's own limits)."""
    env_options: dict[str, Any] = {}
    """Rules options of the variant (see its docs page)."""
    reward: Literal[REWARD_MODES] = "scaled"  # the env's modes, one list
    """Reward the learner sees (raw points are always logged)."""
    reward_scale: float = Field(
        MatchOptions.__dataclass_fields__["reward_scale"].default, ge=MIN_REWARD_SCALE
    )
    """Divisor for ``reward: scaled``, ``margin`` and ``lead`` (the env's default unless set)."""
    learner_seat: Literal["random", "rotate"] | int = "rotate"
    """Seat of the learner: a fixed seat, rotating game by game, or random."""
    features: str | None = None
    """Engineered features appended to the observation (``knock_deadwood``), or the action
    descriptions of the action-scoring networks (``ditch_actions``, ``ditch_plans``,
    ``rummy500_actions_v1``; ``rummy500_actions`` for networks trained with it), or none (see :mod:`rummyzoo.agents.features`)."""
    shaping: str | None = None
    """Potential-based reward shaping (``knock_deadwood``, ``ditch_hand_margin``,
    ``ditch_hand_points``), or none
    (see the seat env and :mod:`rummyzoo.agents.features`)."""
    algo: Literal["ppo", "dqn"] = "ppo"
    """``ppo``: MaskablePPO; ``dqn``: DQN over the legal actions."""
    backend: Literal["sb3", "rllib"] = "sb3"
    """``sb3``: stable-baselines3 in this process (the batched engine); ``rllib``: Ray RLlib's
    multi-agent PPO on its current API stack, from one machine to a cluster (``rllib:``
    settings; PPO only)."""
    rllib: RllibSettings | None = None
    """Settings of the ``rllib`` backend (defaults when omitted)."""
    n_timesteps: int = Field(200_000, gt=0)
    """Learner environment steps (decisions) to train for."""
    seed: int = Field(0, ge=0, le=2**32 - 1)
    """Seed of the run: its deals, networks and draws (a seeded run on CPU is the same run;
    runs of different seeds play different games)."""
    n_envs: int = Field(4, gt=0)
    """Games played at once (with ``vec_env: batched``, the games of the vector engine)."""
    vec_env: Literal["batched", "dummy", "subproc"] = "batched"
    """``batched``: the vector engine, with the learner and every network opponent acting in
    all games with one call (:mod:`rummyzoo.training.vec_env`); ``dummy``/``subproc``: one
    gymnasium env per game in stable-baselines3's ``DummyVecEnv``/``SubprocVecEnv``."""
    workers: int = Field(1, ge=1)
    """Processes that play the batched env's games: 1 (this one), or this one and
    ``workers - 1`` helper processes, each playing its share of the games with its own
    opponents (:mod:`rummyzoo.training.split_env`)."""
    duplicate_baseline: str | None = None
    """An agent (a heuristic's name or a checkpoint) that sets each hand's baseline: when a
    deal starts it plays the learner's seat of that same deal to the end against the same
    opponents, and the learner's reward for the hand is its own less that agent's. Between
    players of similar strength most of a hand's margin is the deal's, and this cancels it; the
    baseline does not depend on the learner's actions, so the policy gradient stays unbiased.
    Single hands (``env_options.target_score: null``) on the batched engine (``vec_env:
    batched``, ``backend: sb3``); none by default."""
    device: str = "cpu"
    """Torch device: ``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto`` (CUDA if there is one)."""
    torch_threads: int = Field(1, ge=1, le=1024)
    """Torch intra-op threads. Small networks on few cores run fastest single-threaded; more
    threads only fight the env processes for the cores."""
    update_threads: int | None = Field(None, ge=1, le=1024)
    """Torch intra-op threads of PPO's updates. None: ``torch_threads``, or ``workers`` when
    that is more (with PPO the helper processes wait while the learner updates the network,
    so their cores are free for it)."""
    hyperparams: PPOHyperparams | DQNHyperparams | None = Field(None, validate_default=True)
    """Algorithm hyperparameters; defaults of the chosen algorithm when omitted."""
    policy_kwargs: PolicyKwargs = PolicyKwargs()
    """The networks (PPO's policy and value, DQN's Q)."""
    opponents: list[OpponentSpec] = [OpponentSpec(name="random")]
    """The weighted mixture that the learner's opponents are drawn from, a seat at a time."""
    self_play: SelfPlay = SelfPlay()
    """The snapshot pool that ``self`` entries draw from."""
    league: League = League()
    """How the opponents are drawn from the mixture."""
    evaluation: Evaluation = Evaluation()
    """The evaluations during training."""
    checkpoints: Checkpoints = Checkpoints()
    """The checkpoints during training."""
    pretrain: Pretrain | None = None
    """Behaviour-cloning warm start, or none."""
    log_interval: int = Field(1, gt=0)
    """Rollouts (PPO) or episodes (DQN) between SB3's console/TensorBoard logs."""

    # Each check is a field validator that reads the fields before it (``info.data``), so
    # that pydantic reports every problem of a config in one go.
    @field_validator("backend")
    @classmethod
    def _backend_algo(cls, value: str, info: ValidationInfo) -> str:
        if value == "rllib" and info.data.get("algo") == "dqn":
            raise ValueError(
                "the rllib backend trains algo: ppo (multi-agent PPO with masked actions); "
                "train dqn on backend: sb3"
            )
        if value == "rllib" and info.data.get("shaping") is not None:
            raise ValueError(
                f"shaping ({info.data['shaping']}) runs on backend: sb3; the rllib backend "
                "trains on the reward alone: drop it"
            )
        seat = info.data.get("learner_seat")
        if value == "rllib" and isinstance(seat, int):
            raise ValueError(
                f"learner_seat {seat}: on the rllib backend the learner takes a random seat "
                "each episode; a fixed seat runs on backend: sb3"
            )
        return value

    @field_validator("rllib")
    @classmethod
    def _rllib_for_rllib(
        cls, value: RllibSettings | None, info: ValidationInfo
    ) -> RllibSettings | None:
        if "backend" not in info.data:
            return value  # the backend itself was refused: that error says what is wrong
        if value is not None and info.data["backend"] != "rllib":
            raise ValueError(
                f"rllib settings are for backend: rllib (this config's backend is "
                f"{info.data['backend']!r}); set backend: rllib or drop them"
            )
        return value

    @field_validator("league")
    @classmethod
    def _league_backend(cls, value: League, info: ValidationInfo) -> League:
        if value.sampling == "pfsp" and info.data.get("backend") == "rllib":
            raise ValueError(
                "league sampling pfsp runs on backend: sb3; on the rllib backend the opponents "
                "are drawn by their weights (sampling: weights)"
            )
        if value.tables == "distinct" and info.data.get("backend") == "rllib":
            raise ValueError(
                "league tables: distinct runs on backend: sb3; on the rllib backend each seat "
                "draws its opponent on its own (tables: independent)"
            )
        return value

    @field_validator("variant")
    @classmethod
    def _known_variant(cls, value: str) -> str:
        if value not in VARIANTS:
            raise ValueError(f"unknown variant {value!r}; known: {', '.join(VARIANTS)}")
        return value

    @field_validator("num_players")
    @classmethod
    def _players_of_variant(cls, value: int, info: ValidationInfo) -> int:
        variant = info.data.get("variant")
        if variant is not None and value not in VARIANTS[variant][1]:
            counts = VARIANTS[variant][1]
            raise ValueError(f"{variant} supports {counts[0]}-{counts[-1]} players, got {value}")
        return value

    @field_validator("env_options")
    @classmethod
    def _env_builds(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        problem = _report_option_problem(value)
        if problem is not None:
            raise ValueError(problem)
        if "variant" in info.data and "num_players" in info.data:
            problem = _env_problem(info.data["variant"], info.data["num_players"], value)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("learner_seat", mode="before")
    @classmethod
    def _seat_form(cls, value: Any) -> Any:
        if isinstance(value, str) and value not in ("random", "rotate"):
            raise ValueError(f"must be 'random', 'rotate' or a seat number, got {value!r}")
        return value

    @field_validator("learner_seat")
    @classmethod
    def _seat_in_range(cls, value: Any, info: ValidationInfo) -> Any:
        n = info.data.get("num_players")
        if isinstance(value, int) and n is not None and not 0 <= value < n:
            raise ValueError(f"must be 0..{n - 1}, got {int_shown(value)}")
        return value

    @field_validator("features")
    @classmethod
    def _known_features(cls, value: str | None, info: ValidationInfo) -> str | None:
        variant = info.data.get("variant")
        if value is not None and variant is not None:
            from rummyzoo.agents.features import FEATURES

            if value not in FEATURES:
                raise ValueError(f"unknown {value!r}; known: {', '.join(FEATURES)}")
            if FEATURES[value].variant != variant:
                raise ValueError(f"{value!r} are for {FEATURES[value].variant}")
            game = _game(info)
            if game is not None:  # built once: one that does not fit the game says why
                from rummyzoo.agents.features import make_features

                make_features(value, *game)
        return value

    @field_validator("shaping")
    @classmethod
    def _known_shaping(cls, value: str | None, info: ValidationInfo) -> str | None:
        variant = info.data.get("variant")
        if value is not None and variant is not None:
            from rummyzoo.agents.features import POTENTIALS

            if value not in POTENTIALS or POTENTIALS[value].variant != variant:
                raise ValueError(f"{value!r} is not a shaping for {variant}")
        return value

    @field_validator("n_envs")
    @classmethod
    def _games_within_the_steps(cls, value: int, info: ValidationInfo) -> int:
        steps = info.data.get("n_timesteps")
        # (on the rllib backend n_envs sizes the train batch: no games to count)
        if steps is not None and value > steps and info.data.get("backend") != "rllib":
            raise ValueError(
                f"{int_shown(value)} games for a run of {steps} steps (n_timesteps): some games would never "
                "get a step; play at most as many games as the run has steps"
            )
        return value

    @field_validator("workers")
    @classmethod
    def _workers_of_batched(cls, value: int, info: ValidationInfo) -> int:
        if value > 1:
            if info.data.get("vec_env", "batched") != "batched":
                raise ValueError(
                    f"workers={int_shown(value)} splits the batched env's games; it needs vec_env: batched "
                    f"(vec_env: subproc runs one process per game instead)"
                )
            n_envs = info.data.get("n_envs")
            if n_envs is not None and value > n_envs:
                shown = int_shown(value)
                raise ValueError(f"{shown} workers need at least {shown} games (n_envs: {n_envs})")
        return value

    @field_validator("checkpoints")
    @classmethod
    def _replay_buffer_of_dqn(cls, value: Checkpoints, info: ValidationInfo) -> Checkpoints:
        if value.save_replay_buffer and info.data.get("algo", "ppo") != "dqn":
            raise ValueError(
                "save_replay_buffer saves DQN's replay buffer (algo: dqn); PPO keeps none: drop it "
                "(a run that has it: --resume RUN --set checkpoints.save_replay_buffer=false)"
            )
        return value

    @field_validator("update_threads")
    @classmethod
    def _update_threads_of_ppo(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and (
            info.data.get("algo") == "dqn" or info.data.get("backend") == "rllib"
        ):
            raise ValueError(
                "update_threads sets the threads of the sb3 backend's PPO updates (algo: ppo, "
                "backend: sb3); drop it (torch_threads sets every thread)"
            )
        return value

    @field_validator("duplicate_baseline")
    @classmethod
    def _duplicate_baseline(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        if info.data.get("backend") == "rllib":
            raise ValueError("duplicate_baseline is a setting of the sb3 backend's batched env")
        if info.data.get("vec_env", "batched") != "batched":
            raise ValueError(
                "duplicate_baseline plays each deal again beside the batched engine: it needs "
                "vec_env: batched"
            )
        game = _game(info)
        if game is not None:
            from rummyzoo.envs.registry import make_game

            try:
                target = make_game(game[0], game[1], **game[2]).match.target_score
            except (ValueError, TypeError):
                return value  # env_options reports its own problem
            if target is not None:
                raise ValueError(
                    "duplicate_baseline compares single hands: set env_options.target_score: "
                    f"null (this config plays matches to {target})"
                )
            problem = (
                agent_problem(value, *game, _agent_cache(info))
                if _checks_agents(info, "baseline")
                else None
            )
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("device")
    @classmethod
    def _known_device(cls, value: str, info: ValidationInfo) -> str:
        problem = device_problem(value)
        if problem is not None:
            raise ValueError(problem)
        rllib = info.data.get("rllib")
        if (
            info.data.get("backend") == "rllib"
            and value != "cpu"
            and (rllib is None or rllib.num_gpus_per_learner == 0)
            and (value != "auto" or _cuda_available())  # SB3's "auto": CUDA where there is one
        ):
            raise ValueError(
                f"device {value!r} would serve only the warm start: the rllib backend's learner "
                "updates where rllib.num_gpus_per_learner puts it (0: the CPU); set that too, "
                "or drop device"
            )
        return value

    @field_validator("log_interval")
    @classmethod
    def _log_interval_on_sb3(cls, value: int, info: ValidationInfo) -> int:
        if info.data.get("backend") == "rllib" and value != 1:
            raise ValueError(
                f"log_interval {value} spaces stable-baselines3's logs; the rllib backend logs "
                "every training iteration: drop it"
            )
        return value

    @field_validator("hyperparams", mode="before")
    @classmethod
    def _hyperparams_for_algo(cls, value: Any, info: ValidationInfo) -> Any:
        algo = info.data.get("algo")
        if algo is None:
            return None  # the algo's own error is reported
        model = HYPERPARAMS[algo]
        if isinstance(value, model):
            return value
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise ValueError(f"must be a mapping of {algo} hyperparameters to values{_got(value)}")
        if info.data.get("backend") == "rllib" and value.get("target_kl") is not None:
            raise ValueError(
                "target_kl stops the sb3 backend's PPO epochs early; the rllib backend has no "
                "such stop: drop it"
            )
        try:
            validated = model.model_validate(value)
        except ValidationError as exc:
            issues = _issues_from(exc, model)
            for issue in issues:
                key = issue.loc[-1] if issue.valid is not None else None
                for other, other_model in HYPERPARAMS.items():
                    if other != algo and key in other_model.model_fields:
                        issue.hint = (
                            f"{key} is a hyperparameter of algo {other!r}, and this run's algo "
                            f"is {algo!r}"
                        )
            raise _Issues(issues) from None
        n_envs = info.data.get("n_envs")
        players = info.data.get("num_players")
        if info.data.get("backend") == "rllib" and isinstance(n_envs, int) and players:
            # RLlib's train batch per learner: every seat's steps (RLlib refuses a larger
            # minibatch only once Ray has started and the run folder is made)
            batch = validated.n_steps * n_envs * players
            if validated.batch_size > batch:
                raise ValueError(
                    f"batch_size {validated.batch_size} is larger than the rllib backend's "
                    f"train batch, n_steps x n_envs x num_players = {validated.n_steps} x "
                    f"{n_envs} x {players} = {batch}: lower batch_size or raise the others"
                )
            rllib = info.data.get("rllib") or RllibSettings()
            fragment = rllib.rollout_fragment_length
            if fragment != "auto":
                # RLlib samples whole rounds (every env runner's envs a fragment each) until it
                # has the train batch of all learners, and takes no more than a tenth over it:
                # it refuses otherwise, once Ray has started
                envs = max(1, rllib.num_env_runners) * rllib.num_envs_per_env_runner
                round_ = fragment * envs
                learners = max(1, rllib.num_learners)  # (each takes its share, rounded up)
                total = -(-batch // learners) * learners
                over = -(-total // round_) * round_ - total
                if over > 0.1 * total:
                    fits = -(-total // envs)  # one round of it overshoots by under a round
                    fits_too = fits * envs - total <= 0.1 * total
                    learned = f", x {learners} learners, rounded up" if learners > 1 else ""
                    raise ValueError(
                        f"rllib.rollout_fragment_length {int_shown(fragment)} x {envs} sampling "
                        "env(s) (num_env_runners, at least 1, x num_envs_per_env_runner) = "
                        f"{int_shown(round_)} steps a round: whole rounds overshoot the train "
                        f"batch of {total} steps (n_steps x n_envs x num_players = "
                        f"{validated.n_steps} x {n_envs} x {players}{learned}) by more than the "
                        "tenth RLlib takes: set rollout_fragment_length to 'auto'"
                        + (f" or {fits}" if fits_too else "")
                    )
        if algo == "ppo" and isinstance(n_envs, int) and info.data.get("backend") != "rllib":
            rollout = validated.n_steps * n_envs
            if rollout % validated.batch_size == 1:  # 1 % b for a rollout of 1 too
                raise ValueError(
                    f"a rollout of n_steps x n_envs = {rollout} steps in minibatches of "
                    f"batch_size {validated.batch_size} leaves one of a single step, whose "
                    "normalised advantage is NaN: change n_steps, n_envs or batch_size"
                )
        return validated

    @field_validator("policy_kwargs")
    @classmethod
    def _network_fits(cls, value: PolicyKwargs, info: ValidationInfo) -> PolicyKwargs:
        game = _game(info)
        arch = value.net_arch
        stored = isinstance(info.context, dict) and info.context.get("stored", False)
        # PPO's settings, which DQN's one network lacks (a run that trained with them goes on)
        if info.data.get("algo") == "dqn" and not stored:
            dqn_issues = []
            if isinstance(arch, NetArch):
                dqn_issues.append(
                    Issue(
                        ("net_arch",),
                        "DQN has one network (its Q-network): give net_arch as one list of "
                        "layer sizes, not pi and vf",
                    )
                )
            # (true, the default, as a run's stored config writes it, changes nothing)
            if value.ortho_init is False:
                dqn_issues.append(
                    Issue(
                        ("ortho_init",), "ortho_init is PPO's: DQN's network takes no such setting"
                    )
                )
            if dqn_issues:
                raise _Issues(dqn_issues)
        value_layers = arch.vf if isinstance(arch, NetArch) else arch
        if value.network != "mlp" and info.data.get("algo") == "ppo" and not value_layers:
            raise _Issues(
                [
                    Issue(
                        ("net_arch",),
                        f"a ppo {value.network!r} network needs at least one value layer "
                        "(net_arch.vf, or the shared list)",
                    )
                ]
            )
        if value.network == "actions" and game is not None:
            from rummyzoo.agents.networks import action_layout

            try:
                action_layout(game[0], game[1], game[2], info.data.get("features"), False)
            except ValueError as exc:
                raise _Issues([Issue(("network",), str(exc))]) from None
        if value.network == "cards" and game is not None:
            from rummyzoo.envs.registry import make_env

            raw = make_env(game[0], game[1], wrapped=False, **game[2])
            if getattr(raw.game, "action_segments", None) is None:
                raise _Issues(
                    [
                        Issue(
                            ("network",),
                            f"'cards' needs actions laid out per card, which {game[0]} does "
                            "not have; use 'mlp'",
                        )
                    ]
                )
        return value

    @model_validator(mode="after")
    def _rllib_modules_apart(self) -> RunConfig:
        """On RLlib each opponent is a module whose id is its name with what ids may not hold
        replaced: two names of one id (``a/x.rz`` and ``a_x.rz``) would be one module, the
        first never playing."""
        if self.backend != "rllib":
            return self
        from rummyzoo.training.rllib import module_id

        seen: dict[str, str] = {}
        for opponent in self.opponents:
            first = seen.setdefault(module_id(opponent.name), opponent.name)
            if first != opponent.name:
                raise ValueError(
                    f"opponents {first!r} and {opponent.name!r} are one RLlib module "
                    f"({module_id(opponent.name)!r}: an id holds no / or : ...): rename or move "
                    "one of the files"
                )
        return self

    # The agent checks read the raw value, so that they run (and report) even when another
    # key of the same section is wrong.
    @field_validator("opponents", mode="wrap")
    @classmethod
    def _opponents_build(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        result, issues = _validated(handler, value, OpponentSpec)
        raw = _raw(value)
        if isinstance(raw, list) and not raw:
            issues.append(Issue((), "at least one opponent is needed"))
        if result is not None and not math.isfinite(sum(spec.weight for spec in result)):
            issues.append(Issue((), "the opponents' weights must add up to a finite number"))
        game = _game(info)
        if game is not None and isinstance(raw, list) and _checks_agents(info, "opponents"):
            cache = _agent_cache(info)
            for i, spec in enumerate(raw):
                name = spec.get("name") if isinstance(spec, dict) else None
                if isinstance(name, str) and name not in ("self", ""):  # "": refused above
                    problem = agent_problem(name, *game, cache)
                    if problem is not None:
                        issues.append(Issue((i, "name"), problem))
        if issues:
            raise _Issues(sorted(issues, key=lambda issue: issue.loc[:1]))
        return result

    @field_validator("evaluation", mode="wrap")
    @classmethod
    def _evaluation_builds(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        result, issues = _validated(handler, value, Evaluation)
        raw = _raw(value)
        raw = raw if isinstance(raw, dict) else {}
        names, options = raw.get("opponents", ["random"]), raw.get("options", {})
        if isinstance(names, list) and not names:
            issues.append(Issue(("opponents",), "at least one evaluation opponent is needed"))
        game = _game(info)
        if game is not None and isinstance(names, list) and isinstance(options, dict):
            variant, n, train_options = game
            merged = {**train_options, **options}
            problem = _report_option_problem(options) or (
                _env_problem(variant, n, merged) if options else None
            )
            if (
                problem is None
                and options
                and _layout(variant, n, merged) != _layout(variant, n, train_options)
            ):
                problem = (
                    "these options change the observation or the actions of the game the "
                    "network trains on, so it could not play the evaluations: evaluation "
                    "options may change the match (target_score, max_turns...), not its layout"
                )
            if problem is not None:
                issues.append(Issue(("options",), problem))
            elif _checks_agents(info, "evaluation"):
                cache = _agent_cache(info)
                for i, name in enumerate(names):
                    if isinstance(name, str):
                        problem = agent_problem(name, variant, n, merged, cache)
                        if problem is not None:
                            issues.append(Issue(("opponents", i), problem))
            if problem is None and not issues and _checks_agents(info, "evaluation"):
                # (as the agents: once, where the config is loaded, not in every process that
                # rebuilds it)
                issues += _arena_size_issues(result, variant, n, merged)
        if issues:
            raise _Issues(issues)
        return result

    @field_validator("pretrain", mode="wrap")
    @classmethod
    def _teacher_builds(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        result, issues = _validated(handler, value, Pretrain)
        raw = _raw(value)
        if raw is None:
            return result
        teacher = raw.get("teacher") if isinstance(raw, dict) else None
        if isinstance(raw, dict):
            dqn = info.data.get("algo", "ppo") == "dqn"
            foreign = PPO_PRETRAIN_KEYS if dqn else DQN_PRETRAIN_KEYS
            for key in foreign:
                # a config written back in full carries the defaults: only a changed one counts
                if key in raw and raw[key] != Pretrain.model_fields[key].default:
                    why = (
                        "a setting of PPO's warm start (algo: ppo); DQN keeps its teacher "
                        "with demo_coef"
                        if dqn
                        else "a setting of the DQN warm start (algo: dqn); PPO's warm start "
                        "fits its policy by cross-entropy"
                    )
                    issues.append(Issue((key,), f"{key} is {why}: drop it"))
            anchor = raw.get("anchor_coef", 0.0)
            if not dqn and anchor != 0.0 and info.data.get("backend") == "rllib":
                issues.append(
                    Issue(
                        ("anchor_coef",),
                        "anchor_coef is a setting of the sb3 backend's PPO (backend: sb3); "
                        "the rllib backend's warm start has no anchor: drop it",
                    )
                )
        game = _game(info)
        if game is not None and isinstance(teacher, str) and _checks_agents(info, "teacher"):
            problem = agent_problem(teacher, *game, _agent_cache(info))
            if problem is not None:
                issues.append(Issue(("teacher",), problem))
        if issues:
            raise _Issues(issues)
        return result

    # -- seeds
    def game_seed(self, index: int, resumed_at: int = 0) -> int:
        """The seed training game ``index`` (0 .. n_envs - 1) is built with: ``seed * 1000 +
        index``, or with 1,000 games or more a stride past them, so that none shares its seed
        with another game of the run, of a run of another seed or the warm start's teacher
        games. (stable-baselines3 seeds the env of a model it makes again, game ``i`` with ``seed
        + i``: the run's env, :class:`~rummyzoo.training.vec_env.RunMonitor`, turns that into
        this seed.) A run resumed at step ``resumed_at``
        plays from seeds of its own (from the run's seed and that step), so it does not play
        the deals of the run's start again."""
        base = self.seed if not resumed_at else self.resume_seed(resumed_at)
        return base * self.seed_stride() + index

    def resume_seed(self, resumed_at: int) -> int:
        """A 32-bit seed of the run resumed at step ``resumed_at`` (its games' block, and its
        learner's random draws)."""
        import numpy as np

        return int(np.random.SeedSequence([self.seed, resumed_at]).generate_state(1)[0])

    def teacher_seed(self) -> int:
        """The seed of the warm start's teacher games: the last of the run's seed block."""
        return self.seed * self.seed_stride() + self.seed_stride() - 1

    def seed_stride(self) -> int:
        """How far apart the game seeds of runs one seed apart lie (more than the run's games
        and the teacher's)."""
        return max(1000, self.n_envs + 1)


def _raw(value: Any) -> Any:
    """A section's raw value (a model given as such: its fields)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [_raw(item) for item in value]
    return value


def _validated(handler: Any, value: Any, model: type[BaseModel]) -> tuple[Any, list[Issue]]:
    """A wrap validator's own validation: (its result or None, its issues)."""
    try:
        return handler(value), []
    except ValidationError as exc:
        return None, _issues_from(exc, model)


# ---------------------------------------------------------------------------- reading
class ConfigLoadError(ValueError):
    """A config file that cannot be read or does not validate (message names the key path)."""


class ConfigData(dict):
    """A raw config mapping that remembers where its keys come from: the line of each key in
    the YAML file, and the ``--set`` override that set (or created) each key."""

    def __init__(
        self,
        data: Any = (),
        lines: dict[tuple[str | int, ...], int] | None = None,
        overrides: list[tuple[tuple[str | int, ...], str]] | None = None,
        created: dict[tuple[str | int, ...], str] | None = None,
    ) -> None:
        super().__init__(data)
        self.lines = dict(lines or {})
        """Key path -> its line in the file."""
        self.overrides = list(overrides or [])
        """(key path, override text), in the order they were applied."""
        self.created = dict(created or {})
        """Key path absent from the file -> the override that created it."""


class ValueLoader(yaml.SafeLoader):
    """A SafeLoader that refuses the numbers YAML 1.1 reads otherwise than a config means: an
    integer with a leading zero (``010``, an octal 8 where a config means ten, or a label), and
    one with colons (``1:00``, a base-60 60, or ``1:30`` a 90, where a config means a time or a
    label)."""

    def _refuse_base_60(self, node: yaml.ScalarNode, value: Any) -> None:
        if ":" in str(node.value):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{_cut(str(node.value))} is a base-60 number in YAML ({int_shown(value)}): "
                "write the number it means, or quote it to mean text",
                node.start_mark,
            )

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = str(node.value).replace("_", "")
        if re.fullmatch(r"[-+]?0[0-7]+", text):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{_cut(str(node.value))} is an octal number in YAML "
                f"({int_shown(super().construct_yaml_int(node))}): write it without the leading "
                "0, or quote it to mean text",
                node.start_mark,
            )
        try:
            value = super().construct_yaml_int(node)
        except ValueError:  # more digits than Python turns into an int (4,300 unless set)
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"a number of {len(text)} characters, more than Python reads as an int "
                f"({sys.get_int_max_str_digits()} digits)",
                node.start_mark,
            ) from None
        self._refuse_base_60(node, value)
        return value

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        self._refuse_base_60(node, value)
        return value


ValueLoader.add_constructor("tag:yaml.org,2002:int", ValueLoader.construct_yaml_int)
ValueLoader.add_constructor("tag:yaml.org,2002:float", ValueLoader.construct_yaml_float)


class ConfigLoader(ValueLoader):
    """A SafeLoader that refuses a key given twice in one mapping (plain YAML loading keeps
    the last one silently) and remembers the line of every key and list entry."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.lines: dict[tuple[str | int, ...], int] = {}
        self.duplicates: list[Issue] = []

    def construct_document(self, node: yaml.Node) -> Any:
        self._survey(node, (), set())
        return super().construct_document(node)

    def _survey(
        self,
        node: yaml.Node,
        path: tuple[str | int, ...],
        seen: set[int],
        merged: bool = False,
    ) -> None:
        """Record the lines of ``node``'s keys under ``path`` and its keys given twice;
        ``merged``: a mapping merged in (``<<``), whose keys the mapping's own override (their
        lines are kept where the mapping gives them too)."""
        if id(node) in seen:  # an alias of a node already surveyed
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            marks: dict[tuple[str, str], list[yaml.Mark]] = {}
            merges: list[yaml.Node] = []
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                if key_node.tag.endswith(":merge"):
                    merges.append(value_node)
                    continue
                ident = (key_node.tag, key_node.value)
                if ident in marks:
                    marks[ident].append(key_node.start_mark)
                    continue
                marks[ident] = [key_node.start_mark]
                line = key_node.start_mark.line + 1
                if merged:
                    self.lines.setdefault((*path, key_node.value), line)
                else:
                    self.lines[(*path, key_node.value)] = line
                self._survey(value_node, (*path, key_node.value), seen, merged)
            for (_, key), found in marks.items():
                if len(found) > 1:
                    self.duplicates.append(_duplicate((*path, key), found))
            # what is merged in: a mapping, or a list of them (each checked on its own)
            for merge in merges:
                items = merge.value if isinstance(merge, yaml.SequenceNode) else [merge]
                for item in items:
                    self._survey(item, path, seen, merged=True)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                if merged:
                    self.lines.setdefault((*path, i), item.start_mark.line + 1)
                else:
                    self.lines[(*path, i)] = item.start_mark.line + 1
                self._survey(item, (*path, i), seen, merged)


def _duplicate(loc: tuple[str | int, ...], marks: list[yaml.Mark]) -> Issue:
    lines = [m.line + 1 for m in marks]
    if len(set(lines)) == len(lines):
        where = "lines " + ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"
    else:
        where = ", ".join(f"line {m.line + 1} column {m.column + 1}" for m in marks)
    times = "twice" if len(marks) == 2 else f"{len(marks)} times"
    return Issue(
        loc,
        f"key {key_path(loc)!r} is given {times}, on {where} (YAML would silently keep the "
        "last); keep one",
        names_key=True,
        locate=False,
        line=lines[0],
    )


def _kind(value: Any) -> str:
    for types, name in (
        (bool, "boolean"),
        ((int, float), "number"),
        (str, "string"),
        (list, "list"),
    ):
        if isinstance(value, types):
            return f"a {name}"
    return f"a {type(value).__name__}"


def _yaml_error(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        text = f"{exc.context}: {exc.problem}" if exc.context else exc.problem
        mark = exc.problem_mark
        return f"{text} (line {mark.line + 1}, column {mark.column + 1})" if mark else text
    return str(exc)


def _cut(text: str, limit: int = 100) -> str:
    """A user's text for a message: as given, or its first characters and ``...``."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_override(text: str) -> tuple[list[str], Any]:
    """``key.sub=value`` -> (["key", "sub"], value parsed as YAML: numbers, bools, lists...)."""
    if "=" not in text:
        raise ConfigLoadError(
            f"--set {text}: an override must look like key.sub=value "
            "(e.g. --set hyperparams.learning_rate=1e-3)"
        )
    key, raw = text.split("=", 1)
    if not key.strip():
        raise ConfigLoadError(f"--set {text}: the key before '=' is empty")
    path = [p.strip() for p in key.strip().split(".")]
    if not all(path):
        raise ConfigLoadError(f"--set {text}: key {key.strip()!r} has an empty part")
    try:
        value = yaml.load(raw, Loader=ValueLoader) if raw.strip() else ""  # a SafeLoader
    except yaml.YAMLError as exc:
        raise ConfigLoadError(
            f"--set {_cut(text)}: the value is not valid YAML ({_yaml_error(exc)})"
        ) from None
    return path, value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> ConfigData:
    """Apply ``--set`` overrides to the raw config mapping (creating nested mappings; a
    number indexes a list: ``opponents.1.weight=2``). The result remembers which key each
    override set, so that errors name the override."""
    if not isinstance(data, dict):
        raise ConfigLoadError(f"a config must be a mapping of keys to values, not {_kind(data)}")
    base = data if isinstance(data, ConfigData) else ConfigData(data)
    out = ConfigData(copy.deepcopy(dict(base)), base.lines, base.overrides, base.created)
    for text in overrides:
        parts, value = parse_override(text)
        node: Any = out
        walked: list[str | int] = []
        for i, part in enumerate(parts):
            key: str | int = part
            if isinstance(node, list):
                here = key_path(walked)
                if not re.fullmatch(r"\d+", part):
                    raise ConfigLoadError(
                        f"--set {text}: {here} is a list: give an entry's number "
                        f"({here}.0...) or set the whole list"
                    )
                # (a number past 18 digits is past any list, and past int()'s digit limit)
                key = int(part) if len(part) <= 18 else len(node)
                if key >= len(node):
                    raise ConfigLoadError(
                        f"--set {text}: {here} has {len(node)} entries (0 to {len(node) - 1}), "
                        f"so no entry {part if len(part) <= 18 else part[:12] + '...'}"
                    )
            present = isinstance(node, list) or key in node
            walked.append(key)
            if i == len(parts) - 1:
                old = node[key] if present else None
                if isinstance(old, dict) and isinstance(value, dict):
                    dropped = sorted(str(k) for k in old if k not in value)
                    if dropped:  # a whole mapping replaced: say what it no longer sets
                        here = key_path(walked)
                        dotted = ".".join(str(p) for p in walked)  # the form --set takes
                        warnings.warn(
                            f"--set {text} replaces the whole of {here}: "
                            f"{', '.join(dropped)} no longer set by the config (their defaults "
                            f"apply); to change one key, --set {dotted}.KEY=VALUE",
                            stacklevel=2,
                        )
                node[key] = value
            else:
                child = node[key] if present else None
                if child is None and re.fullmatch(r"\d+", parts[i + 1]):
                    here = key_path(walked)
                    raise ConfigLoadError(
                        f"--set {text}: {here} is not in the config, so it has no entry "
                        f"{parts[i + 1]}; set the whole list (--set '{here}=[...]')"
                    )
                if child is None:
                    child = node[key] = {}
                    present = False
                if not isinstance(child, (dict, list)):
                    raise ConfigLoadError(
                        f"--set {text}: {key_path(walked)} is {child!r}, not a mapping"
                    )
                node = child
            if not present:
                out.created.setdefault(tuple(walked), text)
        out.overrides.append((tuple(walked), text))
    return out


def _origin(issue: Issue, data: Any) -> tuple[str | None, bool]:
    """(the override an issue comes from or None for the file, whether to show its path)."""
    if not isinstance(data, ConfigData):
        return None, True
    loc = issue.loc
    best: tuple[tuple[str | int, ...], str] | None = None
    for path, text in data.overrides:  # the override that set this key or one above it
        if loc[: len(path)] == path and (best is None or len(path) >= len(best[0])):
            best = (path, text)
    if best is not None:
        return best[1], best[0] != loc
    below = [(p, t) for p, t in data.overrides if len(p) > len(loc) and p[: len(loc)] == loc]
    if below:  # overrides inside the key: theirs if the key is theirs, or they are named
        created = any(loc[:k] in data.created for k in range(1, len(loc) + 1))
        for path, text in reversed(below):
            named = re.search(rf"\b{re.escape(str(path[len(loc)]))}\b", issue.text())
            if created or named:
                return text, True
    for k in range(len(loc) - 1, 0, -1):  # a section an override made, beside the key
        if loc[:k] in data.created:
            for path, text in reversed(data.overrides):
                if path[:k] == loc[:k]:
                    return text, True
    return None, True


def _line(issue: Issue, data: Any) -> int | None:
    """The line of the deepest key of the issue's path that the file has."""
    lines = data.lines if isinstance(data, ConfigData) else {}
    for k in range(len(issue.loc), 0, -1):
        if issue.loc[:k] in lines:
            return lines[issue.loc[:k]]
    return None


def format_issues(issues: list[Issue], source: str, data: Any = None) -> str:
    """One line for one issue (``FILE, line N: key.path: message`` or ``--set KEY=VALUE:
    message``); for several, a header and a line each, in the file's order, then the
    overrides' issues."""
    entries = []
    for issue in issues:
        override, show_path = _origin(issue, data)
        body = issue.text()
        if show_path and issue.loc and not issue.names_key and issue.valid is None:
            body = f"{key_path(issue.loc)}: {body}"
        line = None if override is not None else (issue.line or _line(issue, data))
        entries.append((override, line if issue.locate else None, line, body))
    if len(entries) == 1:
        override, shown, _, body = entries[0]
        if override is not None:
            return f"--set {_cut(override)}: {body}"
        return f"{source}, line {shown}: {body}" if shown else f"{source}: {body}"
    entries.sort(key=lambda entry: (entry[0] is not None, entry[2] or 0))
    out = [f"{len(entries)} errors in config {source}:"]
    for override, shown, _, body in entries:
        where = f"--set {_cut(override)}: " if override is not None else ""
        out.append(f"  {where}{f'line {shown}: ' if shown else ''}{body}")
    return "\n".join(out)


#: the roles of the agents a config names (``validate_config``'s ``skip_agents``)
AGENT_ROLES = frozenset({"opponents", "evaluation", "teacher", "baseline", "all"})


def rebuilt_config(data: dict[str, Any]) -> RunConfig:
    """A config checked in full before, rebuilt from its data in another process (a share of
    the games, an RLlib module): its agents are not built again (the run's process built those
    it needs, and a resumed run's teacher need not load)."""
    context = {"agents": {}, "skip_agents": AGENT_ROLES, "stored": True}
    return RunConfig.model_validate(data, context=context)


def validate_config(
    data: dict[str, Any],
    source: str = "<config>",
    skip_agents: Collection[str] = (),
    stored: bool = False,
) -> RunConfig:
    """Validate a raw config mapping (checking that every agent it names builds).

    :param skip_agents: roles whose agents are not built to check them (``opponents``,
        ``evaluation``, ``teacher``, ``baseline``, or ``all``): a resumed run reads its stored
        config so before ``--set`` replaces an agent that no longer loads, and leaves out the
        teacher of a warm start it does not play again.
    :param stored: the config of a run that has trained (a resume): settings that a new run
        is refused for but that change nothing of what it trained (PPO's network settings in a
        DQN config) are taken, as they were when it started.
    :raises ConfigLoadError: naming every problem, each with its key path and origin.
    """
    unknown = set(skip_agents) - AGENT_ROLES
    if unknown:
        raise ValueError(
            f"skip_agents: unknown roles {sorted(unknown)} (roles: {sorted(AGENT_ROLES)})"
        )
    try:
        context = {"agents": {}, "skip_agents": frozenset(skip_agents), "stored": stored}
        return RunConfig.model_validate(data, context=context)
    except ValidationError as exc:
        issues = _issues_from(exc, RunConfig)
    for issue in issues:
        key = issue.loc[0] if issue.valid is not None and len(issue.loc) == 1 else None
        if any(key in model.model_fields for model in HYPERPARAMS.values()):
            issue.hint = f"{key} is a hyperparameter: set it under hyperparams (hyperparams.{key})"
    raise ConfigLoadError(format_issues(issues, source, data))


def shipped_configs() -> dict[str, Path]:
    """The run configs that come with the package (the source tree's ``configs/``), by name:
    ``knock_ppo`` is ``configs/knock_ppo.yaml``."""
    from importlib.util import find_spec

    # a folder of data (no __init__.py): its spec's locations, less an editable install's
    # import hook, which importlib.resources cannot read
    spec = find_spec("rummyzoo.configs")
    found: dict[str, Path] = {}
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if Path(folder).is_dir():
            for entry in Path(folder).glob("*.yaml"):
                found.setdefault(entry.stem, entry)
    return dict(sorted(found.items()))


def config_file(path: str | Path) -> Path:
    """The file a config argument names: the path as given or, where there is no such file
    and the argument is a bare name (``knock_ppo`` or ``knock_ppo.yaml``), the shipped config
    of that name (:func:`shipped_configs`), so that the shipped configs run from any folder."""
    text = os.fspath(path)
    given = Path(text)
    named_a_folder = os.sep in text or (os.altsep is not None and os.altsep in text)
    if given.exists() or named_a_folder or not given.name:  # (./knock_ppo names a file)
        return given
    return shipped_configs().get(given.name.removesuffix(".yaml"), given)


def load_config(path: str | Path, overrides: list[str] | None = None) -> RunConfig:
    """Read, override and validate a YAML run config: a file, or a shipped config's name
    (:func:`config_file`).

    :raises ConfigLoadError: unreadable file, bad YAML, an empty file or one that is not a
        mapping, a key given twice, a malformed override, unknown keys or bad values (each
        message names the key path and the line or override it comes from).
    """
    path = config_file(path)
    try:
        text = path.read_text()
    except OSError as exc:
        shipped = ""
        if isinstance(exc, FileNotFoundError):
            shipped = f" (the shipped configs, by name: {', '.join(shipped_configs())})"
        raise ConfigLoadError(f"cannot read config {path}: {exc.strerror}{shipped}") from None
    except UnicodeDecodeError:
        hint = " (it looks like a checkpoint)" if path.suffix in (".rz", ".zip") else ""
        raise ConfigLoadError(f"config {path} is not a YAML text file{hint}") from None
    loader = ConfigLoader(text)
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise ConfigLoadError(f"config {path} is not valid YAML: {_yaml_error(exc)}") from None
    finally:
        loader.dispose()
    if loader.duplicates:
        raise ConfigLoadError(format_issues(loader.duplicates, str(path)))
    if data is None or data == {}:
        raise ConfigLoadError(
            f"config {path} is empty: a config needs at least one key, e.g. "
            "'variant: knock_rummy' (the others have defaults; configs/*.yaml are examples)"
        )
    if not isinstance(data, dict):
        raise ConfigLoadError(
            f"config {path} must be a mapping of keys to values ('key: value' lines) at the "
            f"top level, but it is {_kind(data)}"
        )
    data = apply_overrides(ConfigData(data, lines=loader.lines), overrides or [])
    return validate_config(data, str(path))


def config_to_yaml(config: RunConfig) -> str:
    """The resolved config (defaults filled in) as YAML."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)


#: the config fields a resume cannot change (the checkpoint fixes them: its network, and its
#: optimizer's state, learning rate included; the metric its best.rz was chosen by; its warm
#: start, which a resumed run does not do again), and what each is
RESUME_FIXED = (
    "variant", "num_players", "env_options", "features", "algo", "backend", "policy_kwargs",
    "hyperparams", "evaluation.best_metric", "evaluation.options", "pretrain",
)  # fmt: skip
#: with stable-baselines3, whose checkpoint also holds the env count
RESUME_FIXED_SB3 = ("n_envs",)
#: with RLlib, whose checkpoint holds a module for every opponent and self-play slot
RESUME_FIXED_RLLIB = ("opponents", "self_play")
#: the warm start's own settings (``anchor_coef`` and DQN's ``demo_coef`` and
#: ``demo_batch_size`` act on every update after it, so a resume may change them)
WARM_START_FIELDS = (
    "teacher", "decisions", "epochs", "batch_size", "learning_rate", "margin", "margin_coef"
)  # fmt: skip
RESUME_WHAT = {
    "variant": "variant",
    "num_players": "number of players",
    "env_options": "game (env_options: its rules and match, which its checkpoints record)",
    "features": "observation features",
    "algo": "algorithm",
    "backend": "backend",
    "policy_kwargs": "network",
    "hyperparams": "hyperparameters",
    "evaluation.best_metric": "metric best.rz was chosen by",
    "evaluation.options": "evaluations' game (evaluation.options, best.rz chosen in it)",
    "pretrain": (
        f"warm start (pretrain's {', '.join(WARM_START_FIELDS)}, or none; anchor_coef, "
        "demo_coef and demo_batch_size may change)"
    ),
    "n_envs": "number of games (n_envs)",
    "opponents": "opponents (on RLlib, a module each)",
    "self_play": "self-play pool (on RLlib, a module per slot)",
}


def fixed_fields(config: RunConfig) -> dict[str, Any]:
    """The fields of ``config`` that its checkpoints fix (a resume cannot change them), as
    JSON values: what ``state.json`` records of them (a dotted name is a field inside a
    section; ``pretrain``, the warm start's own settings)."""
    names = RESUME_FIXED + (RESUME_FIXED_SB3 if config.backend == "sb3" else RESUME_FIXED_RLLIB)
    dumped = config.model_dump(mode="json")
    fixed: dict[str, Any] = {}
    for name in names:
        value: Any = dumped
        for part in name.split("."):
            value = value[part]
        if name == "pretrain" and value is not None:
            value = {key: value[key] for key in WARM_START_FIELDS}
        fixed[name] = value
    return fixed
