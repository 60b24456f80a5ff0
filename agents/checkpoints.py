"""Checkpoints: atomic saves with metadata, validated loads, and playing a checkpoint as a Policy.

Two kinds of files, both recording in a ``rummyzoo.json`` the variant, player count, rules
options, observation layout, action count, algorithm, whether the mask is part of the
observation, and the training step:

* a **checkpoint** (``.rz``, :mod:`rummyzoo.agents.safe`): data only, the network's weights as
  safetensors and its specification as validated JSON. This is what plays (``make_agent``,
  ``rummyzoo evaluate``, ``arena``, ``play``, the self-play pool) and what can be shared: loading
  one runs no code from the file;
* a **resume file** (the stable-baselines3 ``.zip`` of the model with its optimizer state, a
  run's ``checkpoints/last.zip``): loading it unpickles Python objects, which can run any code,
  so only a run's own folder is read this way (``--resume``), and ``rummyzoo export --trust``
  converts one the user trusts into a checkpoint. Given where a checkpoint is expected, it is
  refused with a message that says so.

Loading into an env whose variant, player count, observation layout or rules options differ
fails with a clear message (only ``EVAL_SAFE_OPTIONS``, which change neither the observation
layout nor the rules of a hand, may differ). Files are written to a temporary name and moved
into place, so a crash never leaves a half-written checkpoint.
"""

from __future__ import annotations

import itertools
import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from rummyzoo.agents.base import BasePolicy
from rummyzoo.agents.features import learner_input, learner_inputs, make_features
from rummyzoo.envs.files import atomic_write_bytes
from rummyzoo.envs.match import MATCH_OPTION_NAMES, REPORT_OPTION_NAMES
from rummyzoo.envs.native import resolve_kernels
from rummyzoo.envs.registry import check_players, game_of_options, make_game

META_NAME = "rummyzoo.json"
FORMAT_VERSION = 1
#: Options that may differ between training and evaluation: every shared match option (match
#: length, turn cap, first dealer, rewards, rendering), none of the variant's rules.
EVAL_SAFE_OPTIONS = frozenset(MATCH_OPTION_NAMES)
#: Match options a checkpoint does not record (how the env reports, not which game it plays).
ENV_ONLY_OPTIONS = frozenset(REPORT_OPTION_NAMES)


_WARNED: set[tuple[str, str]] = set()


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt or does not match the env it is loaded into."""


def torch_input(array: np.ndarray, dtype: Any = None) -> Any:
    """A tensor of ``array`` for the network, copied where numpy marks the memory read-only
    (the rows the play loop and the vector engine hand out): torch shares writeable memory
    but warns on, and could write through, memory that is not."""
    import torch as th

    if array.flags.writeable:
        return th.as_tensor(array, dtype=dtype)
    return th.tensor(array, dtype=dtype)


def file_head(path: Path, example: str) -> bytes:
    """The first 4 bytes of a checkpoint file (a zip starts ``PK\\x03\\x04``).

    :param example: the file a run folder holds, named in the error for a directory.
    :raises CheckpointError: ``path`` is a directory or does not exist.
    """
    if path.is_dir():
        # the run folder itself, its checkpoints/ folder, or RLlib's checkpoints/rllib/ in it
        if path.name == "rllib" and path.parent.name == "checkpoints":
            inside = path.parent / example
        elif path.name == "checkpoints":
            inside = path / example
        else:
            inside = path / "checkpoints" / example
        raise CheckpointError(
            f"checkpoint {path} is a directory, not a checkpoint file (a run folder keeps its "
            f"checkpoints in RUN_DIR/checkpoints/, e.g. {inside})"
        )
    if not path.is_file():
        if path.is_symlink() and not path.exists():
            where = "is a link to nothing (or to a loop of links)"
        elif path.exists():
            where = "is not a file (a pipe or a device): give the checkpoint's file"
        else:
            where = "does not exist"
        raise CheckpointError(f"checkpoint {path} {where}")
    try:
        with path.open("rb") as fh:
            return fh.read(4)
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {path}: {exc.strerror}") from None


def env_signature(variant: str, num_players: int, options: dict[str, Any]) -> dict[str, Any]:
    """What a checkpoint must agree on with an env: built from the env itself."""
    rules_options = {k: v for k, v in options.items() if k not in ENV_ONLY_OPTIONS}
    game = game_of_options(variant, num_players, rules_options)
    return {
        "variant": variant,
        "num_players": num_players,
        "options": rules_options,
        "obs_size": game.obs_size,
        "num_actions": game.num_actions,
        "observation_layout": {k: list(v) for k, v in game.observation_layout.items()},
    }


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rummyzoo")
    except PackageNotFoundError:
        return "unknown"


def model_meta(
    variant: str,
    num_players: int,
    options: dict[str, Any] | None = None,
    *,
    algo: str = "ppo",
    features: str | None = None,
    mask_in_obs: bool = False,
    steps: int = 0,
    reward: str | None = None,
    reward_scale: float | None = None,
) -> dict[str, Any]:
    """What :func:`save_checkpoint` records of a model besides its network: the env it plays
    (:func:`env_signature`), how its input is built (``features``, ``mask_in_obs``: the mask
    appended, as the masked DQN takes it), its algorithm (``ppo`` or ``dqn``) and training
    step. For a model trained with your own code on the project's envs."""
    return {
        **env_signature(variant, num_players, dict(options or {})),
        "algo": algo,
        "mask_in_obs": bool(mask_in_obs),
        "features": features,
        "steps": int(steps),
        "rummyzoo_version": package_version(),
        "reward": reward,
        "reward_scale": reward_scale,
    }


def save_checkpoint(model: Any, path: str | Path, meta: dict[str, Any]) -> Path:
    """Save a shareable checkpoint (``.rz``: weights and validated JSON, see
    :mod:`rummyzoo.agents.safe`) of an SB3 model, atomically. Returns the final path.

    :raises CheckpointError: metadata outside the checkpoint schema, or metadata that
        disagrees with the env the model holds (its variant, players, rules, match options
        such as ``target_score``, features or mask input), which would label the checkpoint
        with another game.
    """
    from rummyzoo.agents.safe import write_checkpoint

    check_meta_against_env(model, meta)
    return write_checkpoint(model, path, meta)


def _trained_env(model: Any) -> Any:
    """The project's training env under ``model``'s vector env and wrappers (None: another)."""
    env = model.get_env() if hasattr(model, "get_env") else None
    for _ in range(16):  # VecMonitor / VecEnvWrapper -> venv, DummyVecEnv -> envs[0], Monitor
        if env is None or all(hasattr(env, a) for a in ("variant", "num_players", "env_options")):
            return env
        if hasattr(env, "venv"):
            env = env.venv
        elif getattr(env, "envs", None):
            env = env.envs[0]
        elif hasattr(env, "env"):
            env = env.env
        else:
            return None
    return None


def _played_match(match: Any) -> tuple[Any, ...]:
    """The match options a checkpoint records (which match is played), in order."""
    return tuple(
        getattr(match, name) for name in MATCH_OPTION_NAMES if name not in ENV_ONLY_OPTIONS
    )


def check_meta_against_env(model: Any, meta: dict[str, Any]) -> None:
    """Refuse metadata that says another game than the env ``model`` trained on (where the
    model holds one of the project's training envs).

    :raises CheckpointError: naming each field that differs, the metadata's and the env's.
    """
    from rummyzoo.agents.features import FEATURES

    env = _trained_env(model)
    if env is None:
        return
    env_options = {k: v for k, v in env.env_options.items() if k not in ENV_ONLY_OPTIONS}
    names = {cls: name for name, cls in FEATURES.items()}
    features = getattr(env, "features", None)
    actual = {
        "variant": env.variant,
        "num_players": env.num_players,
        "features": None if features is None else names.get(type(features), "?"),
        "mask_in_obs": bool(getattr(env, "mask_in_obs", False)),
    }
    problems = [
        f"{key} {meta.get(key)!r} (the env's: {value!r})"
        for key, value in actual.items()
        if meta.get(key) != value
    ]
    if not problems:
        options = meta.get("options") or {}
        try:
            games = (
                make_game(env.variant, env.num_players, **env_options),
                game_of_options(env.variant, env.num_players, options),
            )
            # the rules and the match (target score, caps), not how the env reports it
            same = games[0].rules == games[1].rules and _played_match(
                games[0].match
            ) == _played_match(games[1].match)
        except (TypeError, ValueError):
            same = False
        if not same:
            problems.append(f"options {options!r} (the env's: {env_options!r})")
    if problems:
        raise CheckpointError(
            "the checkpoint's metadata disagrees with the env the model trained on: "
            + "; ".join(problems)
            + " (give model_meta the env's variant, players, options, features and mask_in_obs)"
        )


def save_resume_checkpoint(model: Any, path: str | Path, meta: dict[str, Any]) -> Path:
    """Save the stable-baselines3 zip of a model (optimizer state included) with rummyzoo
    metadata, atomically: a run's resume file. Loading it unpickles, so it is trusted-only.
    Returns the final path."""
    import io

    path = Path(path)
    buffer = io.BytesIO()
    model.save(buffer)
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr(META_NAME, json.dumps({"format": FORMAT_VERSION, **meta}, indent=2))
    atomic_write_bytes(path, buffer.getvalue())
    return path


def read_meta(path: str | Path) -> dict[str, Any]:
    """The validated metadata of a shareable checkpoint (``.rz``); nothing is unpickled.

    :raises CheckpointError: missing file, not a checkpoint (a stable-baselines3 zip or a torch
        file is refused, saying why and how to convert it), damaged, or metadata that does not
        validate (naming what is wrong).
    """
    from rummyzoo.agents.safe import read_safe_meta

    return read_safe_meta(path)


def read_trusted_meta(path: str | Path) -> dict[str, Any]:
    """The metadata of a stable-baselines3 zip written by rummyzoo (reads JSON only).

    :raises CheckpointError: missing file, not a zip, no or unreadable metadata.
    """
    from rummyzoo.agents.safe import MAX_META_BYTES, check_whole, read_member

    path = Path(path)
    head = file_head(path, "last.zip")
    if head != b"PK\x03\x04":
        raise CheckpointError(
            f"checkpoint {path} is not a zip archive (a checkpoint is the .zip that training "
            f"writes; this file starts with {head!r})"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            check_whole(archive)
            names = archive.namelist()
            if META_NAME not in names:
                raise CheckpointError(
                    f"{path} is not a rummyzoo checkpoint (no {META_NAME} inside)"
                )
            meta = json.loads(read_member(archive, META_NAME, MAX_META_BYTES, path))
    except CheckpointError:
        raise
    except RecursionError:
        raise CheckpointError(
            f"checkpoint {path} has unreadable metadata (JSON nested too deeply)"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"checkpoint {path} has unreadable metadata ({exc})") from None
    except Exception as exc:  # zipfile raises many kinds on a damaged archive (zlib, CRC, EOF)
        size = path.stat().st_size
        raise CheckpointError(
            f"checkpoint {path} is truncated or damaged: a zip archive of {size:,} bytes that "
            f"cannot be read ({type(exc).__name__}: {exc}); copy it again or use another "
            "checkpoint"
        ) from None
    if not isinstance(meta, dict):
        raise CheckpointError(
            f"checkpoint {path} has unreadable metadata (a JSON {type(meta).__name__}, not an "
            "object)"
        )
    for key in ("variant", "num_players", "options", "obs_size", "num_actions", "algo"):
        if key not in meta:
            raise CheckpointError(f"checkpoint {path} metadata lacks {key!r}")
    return meta


def _rules_of(
    variant: str, num_players: int, options: dict[str, Any], whose: str
) -> dict[str, Any]:
    """The game's rules that ``options`` give, every field filled in (match and report options
    left out: a checkpoint plays any match length).

    :raises CheckpointError: options the game refuses (``whose`` names their source)."""
    import dataclasses

    rules = {
        k: v for k, v in options.items() if k not in EVAL_SAFE_OPTIONS and k not in ENV_ONLY_OPTIONS
    }
    try:
        game = game_of_options(variant, num_players, rules)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{whose} has rules options the game refuses: {exc}") from None
    return dataclasses.asdict(game.rules)


def check_recorded_options(meta: dict[str, Any], source: str) -> None:
    """Refuse a checkpoint whose recorded options its game refuses (a foreign or edited file):
    its rules, and the match options an evaluation plays it under (its target score, turn cap),
    naming the checkpoint, before anything plays under them.

    :raises CheckpointError: naming the checkpoint and the options."""
    whose = f"checkpoint {source}"
    _rules_of(meta["variant"], meta["num_players"], meta["options"], whose)
    played = recorded_game_options(meta)
    try:
        game_of_options(meta["variant"], meta["num_players"], played)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{whose} has match options the game refuses: {exc}") from None


def recorded_game_options(meta: dict[str, Any]) -> dict[str, Any]:
    """The options of a checkpoint's game that an evaluation plays it under: its recorded
    options less how its training reported and showed the games (reward, rendering), which
    the arena sets itself."""
    return {k: v for k, v in meta["options"].items() if k not in ENV_ONLY_OPTIONS}


#: The caps on a match's length that an evaluation takes from a checkpoint at most (the env's
#: defaults): a file's own (none, or a larger one) could make one match last for ever.
MATCH_CAPS = ("max_hands", "max_turns")


def capped_match_options(options: dict[str, Any], source: str, variant: str) -> dict[str, Any]:
    """``options`` (a checkpoint's recorded game options) with each cap of
    :data:`MATCH_CAPS` that is missing (None) or past the variant's env default lowered to
    that default, with a warning naming the checkpoint (``source``) and how to play its own.
    (The variant's defaults: Ditch Rummy's hands run to 500 turns, not the 300 of the others,
    and a Ditch checkpoint's own 301 to 500 was lowered to 300.)"""
    import dataclasses
    import warnings

    from rummyzoo.envs.match import MatchOptions
    from rummyzoo.envs.registry import game_class

    defaults = {f.name: f.default for f in dataclasses.fields(MatchOptions)}
    defaults.update(game_class(variant).match_defaults)
    capped = dict(options)
    for name in MATCH_CAPS:
        if name not in options:
            continue
        value, default = options[name], defaults[name]
        if value is None or (isinstance(value, int) and value > default):
            capped[name] = default
            warnings.warn(
                f"checkpoint {source} records matches with {name}: "
                f"{'null' if value is None else value}; evaluated with the "
                f"default cap, {name}={default} (--option {name}=... plays its own)",
                stacklevel=2,
            )
    return capped


def trained_rules(path: str | Path, variant: str, num_players: int) -> dict[str, Any]:
    """The rules options the checkpoint at ``path`` was trained with, for a game of its own
    variant and player count; not its match options (which match to play is the player's
    choice). Empty where it is of another game or cannot be read: loading it says why.

    :raises CheckpointError: rules its game refuses (a foreign or edited file), naming it."""
    try:
        meta = read_meta(path)
    except (OSError, ValueError):
        return {}
    options = meta.get("options")
    if meta.get("variant") != variant or meta.get("num_players") != num_players:
        return {}
    if not isinstance(options, dict):
        return {}
    skip = EVAL_SAFE_OPTIONS | ENV_ONLY_OPTIONS
    rules = {k: v for k, v in options.items() if k not in skip}
    _rules_of(variant, num_players, rules, f"checkpoint {path}")  # refused naming the file
    return rules


def learnt_rules_said(message: str, adopted: dict[str, Any], source: str) -> str:
    """``message`` (a game's refusal) with the options of it that came from the rules a
    checkpoint learnt (``adopted``: taken where the player gave none) said to come from there:
    an option the player never set is otherwise named as if they had."""
    import re

    named = [k for k in adopted if re.search(rf"\b{re.escape(k)}\b", message)]
    if not named:
        return message
    shown = ", ".join(f"{k}={adopted[k]!r}" for k in named)
    return f"{message} ({shown}: the rules {source} learnt, taken where none was given)"


def trained_players(path: str | Path, variant: str) -> int | None:
    """The player count the checkpoint at ``path`` was trained for, where it is one of
    ``variant`` (None otherwise, or where it cannot be read)."""
    try:
        meta = read_meta(path)
    except (OSError, ValueError):
        return None
    players = meta.get("num_players")
    if meta.get("variant") != variant or isinstance(players, bool) or not isinstance(players, int):
        return None
    return players


def check_compatible(
    meta: dict[str, Any], variant: str, num_players: int, options: dict[str, Any], source: str
) -> None:
    """Refuse a checkpoint that cannot play this env; warn when it plays other rules.

    The variant, the player count and the observation and action layout must be the
    checkpoint's. Rules options may differ where they leave the layout as it is (e.g.
    ``knock_max_deadwood``): the checkpoint then plays, with a warning naming the options
    it was not trained under.

    :raises CheckpointError: naming every field where the checkpoint and the env disagree.
    """
    problems = []
    if meta["variant"] != variant:
        problems.append(f"variant: checkpoint {meta['variant']!r}, env {variant!r}")
    if meta["num_players"] != num_players:
        problems.append(f"num_players: checkpoint {meta['num_players']}, env {num_players}")
    if not problems:
        want = env_signature(variant, num_players, options)
        if meta["obs_size"] != want["obs_size"]:
            problems.append(
                f"observation size: checkpoint {meta['obs_size']}, env {want['obs_size']}"
            )
        if meta["num_actions"] != want["num_actions"]:
            problems.append(f"actions: checkpoint {meta['num_actions']}, env {want['num_actions']}")
        layout = meta.get("observation_layout")
        if layout is not None and layout != want["observation_layout"]:
            changed = sorted(
                k
                for k in set(layout) | set(want["observation_layout"])
                if layout.get(k) != want["observation_layout"].get(k)
            )
            problems.append(f"observation layout: {', '.join(changed)} differ")
        # the rules each set of options gives, defaults filled in: a default spelled out is
        # the same rules as one left out
        trained = _rules_of(variant, num_players, meta["options"], f"checkpoint {source}")
        current = _rules_of(variant, num_players, options, "this env")
        changed = ", ".join(
            f"{k}: checkpoint {trained.get(k)!r}, env {current.get(k)!r}"
            for k in sorted(set(trained) | set(current))
            if trained.get(k) != current.get(k)
        )
        if problems and trained != current:
            problems.append(f"(rules options: {changed})")
        elif trained != current and (source, repr(current)) not in _WARNED:
            _WARNED.add((source, repr(current)))  # once per checkpoint and rules in a process
            warnings.warn(
                f"checkpoint {source} was trained under other rules ({changed}); the layout is "
                "the same, so it plays, but under rules it did not learn",
                stacklevel=2,
            )
    if problems:
        raise CheckpointError(
            f"checkpoint {source} does not match this env: " + "; ".join(problems)
        )


def load_model(
    path: str | Path, device: str = "cpu", classes: dict[str, Any] | None = None
) -> tuple[Any, dict[str, Any]]:
    """Load (model, metadata) from a stable-baselines3 zip: TRUSTED FILES ONLY, loading
    unpickles (a run's own resume file, or a file ``rummyzoo export --trust`` converts).

    :param classes: algo name -> the class to load it as, where it is not the one that plays
        (:func:`algo_class`); a resumed run loads its DQN as the masked trainer.
    :raises CheckpointError: see :func:`read_trusted_meta`.
    """
    meta = read_trusted_meta(path)
    cls = (classes or {}).get(meta["algo"]) or algo_class(meta["algo"])
    try:
        model = cls.load(str(path), device=device)
    except Exception as exc:  # SB3 raises many kinds on a damaged archive
        raise CheckpointError(
            f"checkpoint {path} could not be loaded, it is damaged ({_load_failure(exc)})"
        ) from None
    return model, meta


def _load_failure(exc: Exception) -> str:
    """One line of why torch or SB3 could not load a file: where torch refused a damaged
    weights file, the cause it names after its advice about ``weights_only`` (which does not
    fit a damaged file), else the message's first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for k, line in enumerate(lines):
        if "WeightsUnpickler error" in line:
            cause = line.split("WeightsUnpickler error:", 1)[-1].strip()
            return cause or (lines[k + 1] if k + 1 < len(lines) else line)
    return lines[0][:200] if lines else type(exc).__name__


def algo_class(name: str) -> Any:
    if name == "ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if name == "dqn":
        # Playing needs the Q-network only: stable-baselines3's DQN loads it (the checkpoint
        # names its masked policy class, rummyzoo.agents.networks.MaskedDQNPolicy).
        from stable_baselines3 import DQN

        return DQN
    raise CheckpointError(f"unknown algorithm {name!r} in checkpoint")


def mlp_actor_layers(policy: Any) -> list[Any] | None:
    """What each layer of a plain MaskablePPO MLP policy computes, from its input to its logits
    (its policy net's linear layers and activations, then the action net), as functions of the
    layer's input; None for any other network (the card and action scorers, a non-flat
    extractor)."""
    import torch
    import torch.nn as nn
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor

    if type(policy) is not MaskableActorCriticPolicy:
        return None
    if not isinstance(policy.pi_features_extractor, FlattenExtractor):
        return None
    net = policy.mlp_extractor.policy_net
    simple = (nn.Linear, nn.ReLU, nn.Tanh, nn.ELU, nn.LeakyReLU)
    if type(net) is not nn.Sequential or not all(type(m) in simple for m in net):
        return None
    if type(policy.action_net) is not nn.Linear:
        return None
    from functools import partial

    from torch.nn import functional as F

    # a linear layer's forward is F.linear of its own weight and bias (bound here once); ReLU
    # and Tanh (not in place) are torch.relu and torch.tanh, called without the module's forward
    plain = {nn.ReLU: torch.relu, nn.Tanh: torch.tanh}

    def forward(m: Any) -> Any:
        if type(m) is nn.Linear:
            return partial(F.linear, weight=m.weight, bias=m.bias)
        if type(m) in plain and not getattr(m, "inplace", False):
            return plain[type(m)]
        return m.forward

    return [forward(m) for m in [*net, policy.action_net]]


class CheckpointPolicy(BasePolicy):
    """A trained model playing as a :class:`~rummyzoo.agents.base.Policy`.

    :param model: an SB3 model, or the network of a checkpoint
        (:class:`~rummyzoo.agents.safe.LoadedNetwork`): what has ``policy`` (PPO) or
        ``q_net`` (DQN).
    :param deterministic: greedy (default) or sampled actions (PPO; DQN is always greedy).
    """

    def __init__(
        self, model: Any, meta: dict[str, Any], name: str, deterministic: bool = True
    ) -> None:
        self.model = model
        self.meta = meta
        self.name = name
        self.deterministic = deterministic
        self.mask_in_obs = bool(meta.get("mask_in_obs", False))
        self.algo = meta["algo"]
        self.features = make_features(
            meta.get("features"), meta["variant"], meta["num_players"], meta["options"]
        )
        self._actor_layers: tuple[Any, ...] | None = None  # built at the first batch
        self._game_key = json.dumps(
            [meta["variant"], meta["num_players"], meta["options"], meta.get("features")],
            sort_keys=True,
        )

    def _check_inputs(self, observations: Any, masks: np.ndarray, rows: tuple[int, ...]) -> None:
        """:raises ValueError: observations or masks (``rows`` of them, or one where ``rows``
        is empty) of another shape than this checkpoint's game, or an all-zero mask."""
        meta = self.meta
        game = f"this checkpoint's game ({meta['variant']}, {meta['num_players']} players)"
        for what, shape, size in (
            ("observation", np.shape(observations), meta["obs_size"]),
            ("action mask", masks.shape, meta["num_actions"]),
        ):
            if shape != (*rows, size):
                raise ValueError(
                    f"{what}s of shape {shape} where {game} has {(*rows, size)}: are they "
                    "from another game, player count or options?"
                )
        empty = ~masks.any(axis=-1)
        if empty.any():
            where = f" (row {int(np.flatnonzero(empty)[0])})" if rows else ""
            raise ValueError(f"{self.name}: act called with an all-zero action mask{where}")

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        import torch as th

        mask = np.asarray(action_mask, dtype=bool)
        self._check_inputs(observation, mask, ())
        obs = learner_input(observation, mask, self.features, self.mask_in_obs)
        with th.no_grad():
            tensor = torch_input(obs, th.float32).unsqueeze(0)
            if self.algo == "dqn":
                q = self.model.q_net(tensor)[0]
                self._check_scores(q[None], mask[None])
                q[~torch_input(mask)] = -th.inf
                action = int(q.argmax())
            else:
                policy = self.model.policy
                try:
                    dist = policy.get_distribution(tensor, action_masks=mask[None])
                except ValueError:  # torch's check of nan logits: said as the checkpoint's
                    self._check_scores(self._logits(tensor))
                    raise
                # (normalised, an overflowing logit makes every legal one nan or inf)
                self._check_scores(dist.distribution.logits[:, mask])
                if self.deterministic:
                    action = int(dist.mode()[0])
                else:
                    probs = dist.distribution.probs[0].numpy().astype(np.float64)
                    probs = probs / probs.sum()
                    action = int(rng.choice(len(probs), p=probs))
        if not mask[action]:  # cannot happen with masking; kept as a guard
            legal = np.flatnonzero(mask)
            action = int(legal[0])
        return action

    @property
    def uses_rng(self) -> bool:
        """Whether its actions are drawn (sampled PPO actions) rather than greedy."""
        return self.algo != "dqn" and not self.deterministic

    def _logits(self, tensor: Any) -> Any:
        """The PPO policy's logits for a batch of inputs. A plain MLP policy runs its layers'
        own ``forward`` one after the other (:func:`mlp_actor_layers`): the same operations
        as calling the modules, without the module-call machinery that costs more than these
        small layers."""
        layers = self._actor_layers
        if layers is None:
            layers = self._actor_layers = mlp_actor_layers(self.model.policy) or ()
        if layers:
            x = tensor.flatten(1)  # the flatten extractor of a float32 batch
            for forward in layers:
                x = forward(x)
            return x
        policy = self.model.policy
        features = policy.extract_features(tensor, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features))

    @property
    def inputs_key(self) -> tuple[Any, ...]:
        """What checkpoints must share to decide rows together (:func:`act_groups`): the
        algorithm, greedy or sampled, and the network input (the game, its features, the mask
        appended or not)."""
        return (self.algo, self.deterministic, self.mask_in_obs, self._game_key)

    def _scores(self, tensor: Any) -> Any:
        """The network's output for a batch of inputs: Q-values (DQN) or logits (PPO)."""
        return self.model.q_net(tensor) if self.algo == "dqn" else self._logits(tensor)

    def _check_scores(self, scores: Any, masks: np.ndarray | None = None) -> None:
        """Refuse outputs of legal actions (``masks``; None: all) that are not finite:
        weights that are finite yet so large that the network overflows (nan logits failed
        deep in torch, or made every choice the first legal action without a word)."""
        import torch as th

        finite = th.isfinite(scores)
        if masks is not None:
            finite |= ~torch_input(masks)
        if not bool(finite.all()):
            rows = int((~finite).any(dim=1).sum())
            raise CheckpointError(
                f"checkpoint {self.name}: its network's outputs are not finite (nan or inf) for "
                f"{rows} of {len(scores)} positions: its weights overflow, and it cannot choose "
                "an action"
            )

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """Actions for rows of observations and masks, with one network call.

        Greedy actions are those of :meth:`act` row by row; sampled ones are drawn from the
        same distributions (one uniform draw per row, inverse CDF).
        """
        rows = np.shape(action_masks)[:1] or (0,)
        return act_groups([self], [rows[0]], observations, action_masks, rng)


def sample_legal(
    logits: np.ndarray, masks: np.ndarray, rng: np.random.Generator, kernels: Any = None
) -> np.ndarray:
    """One action per row drawn from the softmax of ``logits`` over the row's legal actions
    (``masks``, each row with at least one): one uniform draw ``u`` per row (``rng.random``),
    the first legal action whose running sum of ``exp(logit - the legal maximum)``, in float64
    and in action order, passes ``u`` times their total.

    It works on the legal entries only, gathered into a table as wide as the most legal
    actions of a row (rows of a rummy game have a handful of a hundred actions legal): the
    same exponentials and the same running sums (the illegal entries would add exact zeros),
    so the same draws as over whole rows, in a fraction of the time. ``u`` times the total
    is below the total (``u < 1``, the total at least 1), so some legal action passes it. The
    compiled kernels (``kernels`` as in :func:`~rummyzoo.envs.native.resolve_kernels`) gather
    the legal entries and add up the running sums row by row, with numpy's exponentials
    between: the same draws again (where ``rng`` is a ``Generator`` and the arrays are
    float32 and bool, C-contiguous and aligned; other inputs take the numpy route).

    :raises ValueError: logits and masks of different shapes, or a row without a legal action.
    """
    if np.shape(logits) != np.shape(masks) or np.ndim(masks) != 2:
        raise ValueError(
            f"logits and masks must be 2-d arrays of one shape, got {np.shape(logits)} and "
            f"{np.shape(masks)}"
        )
    n, width = masks.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    native = resolve_kernels(kernels)
    if (
        native is not None
        and isinstance(rng, np.random.Generator)
        and logits.dtype == np.float32
        and masks.dtype == np.bool_
        and logits.flags.c_contiguous
        and masks.flags.c_contiguous
        and logits.flags.aligned
        and masks.flags.aligned
    ):
        # the same values, exponentials (numpy's, of the same vector) and running sums
        weights = native.legal_shifted(logits, masks)
        np.exp(weights, out=weights)
        actions = np.empty(n, dtype=np.int64)
        with rng.bit_generator.lock:  # as numpy's own draws take it (another thread's fill)
            native.draw_legal(weights, masks, rng.bit_generator.capsule, actions)
        return actions
    flat = np.flatnonzero(masks)
    rows, cols = np.divmod(flat, width)
    counts = np.bincount(rows, minlength=n)
    if not counts.all():
        raise ValueError(f"row {int(np.argmin(counts))} has no legal entry")
    starts = np.cumsum(counts) - counts
    legal = np.ascontiguousarray(logits).reshape(-1)[flat].astype(np.float64)
    top = np.maximum.reduceat(legal, starts)
    probs = np.zeros((n, int(counts.max())))
    probs[rows, np.arange(flat.size) - starts[rows]] = np.exp(legal - top[rows])
    cdf = np.cumsum(probs, axis=1)  # sequential along each row: the zeros after it add nothing
    u = rng.random(n) * cdf[:, -1]
    passed = (cdf <= u[:, None]).sum(axis=1)
    return cols[starts + np.minimum(passed, counts - 1)]


def act_groups(
    policies: list[CheckpointPolicy],
    counts: list[int],
    observations: np.ndarray,
    action_masks: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Actions of several checkpoints of one :attr:`~CheckpointPolicy.inputs_key` for runs of
    rows: ``policies[g]`` decides the next ``counts[g]`` rows. Each network is called on its
    rows; the inputs, the masking and the draws are made once for all rows, with the same
    results as :meth:`~CheckpointPolicy.act_batch` on each run in turn (the same uniform draws,
    in the same order).

    :raises ValueError: checkpoints of different keys, counts that do not add up to the rows,
        or rows a checkpoint refuses (naming it).
    """
    import torch as th

    if not policies:
        raise ValueError("act_groups: no checkpoints")
    first = policies[0]
    key = first.inputs_key
    if len(counts) != len(policies) or any(p.inputs_key != key for p in policies[1:]):
        raise ValueError("act_groups: one count per checkpoint, all of the same inputs_key")
    masks = np.asarray(action_masks, dtype=bool)
    if masks.ndim != 2:  # refused there, with the shapes it expects
        first._check_inputs(observations, masks, masks.shape[:1])
    if sum(counts) != len(masks) or min(counts) < 0:
        raise ValueError(f"act_groups: counts {list(counts)} for {len(masks)} rows")
    bounds = [0, *itertools.accumulate(counts)]
    # the checkpoints share their game (inputs_key), so one check covers every row; where it
    # refuses, each checks its own rows, so that the error names the one refused
    try:
        first._check_inputs(observations, masks, (len(masks),))
    except ValueError:
        for policy, start, stop in zip(policies, bounds, bounds[1:], strict=False):
            policy._check_inputs(observations[start:stop], masks[start:stop], (stop - start,))
        raise
    obs = learner_inputs(observations, masks, first.features, first.mask_in_obs)
    with th.no_grad():
        tensor = torch_input(obs, th.float32)
        if len(policies) == 1:
            scores = first._scores(tensor)
        else:
            scores = th.cat(
                [
                    p._scores(tensor[start:stop])
                    for p, start, stop in zip(policies, bounds, bounds[1:], strict=False)
                ]
            )
        # the legal actions' outputs finite (as one game at a time checks them): one check
        # of every row (numpy's, on the tensor's memory), then, where it fails, each
        # checkpoint's own rows, so that the error names the one whose outputs are not
        values = scores.numpy()
        if not np.isfinite(values).all() and not (np.isfinite(values) | ~masks).all():
            for policy, start, stop in zip(policies, bounds, bounds[1:], strict=False):
                policy._check_scores(scores[start:stop], masks[start:stop])
        if first.algo == "dqn":
            scores[~torch_input(masks)] = -th.inf
            actions = scores.argmax(dim=1).numpy()
        else:
            # the logits of the policy's distribution, masked here (the masked
            # distribution object costs more than the network itself)
            if first.deterministic:
                logits = scores.numpy().astype(np.float64)
                logits[~masks] = -np.inf
                actions = logits.argmax(axis=1)
            else:
                return sample_legal(scores.numpy(), masks, rng)
    actions = np.asarray(actions, dtype=np.int64)
    bad = ~masks[np.arange(len(actions)), actions]
    if bad.any():  # cannot happen with masking; kept as a guard
        actions[bad] = masks[bad].argmax(axis=1)
    return actions


def load_policy(
    path: str | Path,
    variant: str,
    num_players: int,
    options: dict[str, Any] | None = None,
    deterministic: bool = True,
) -> CheckpointPolicy:
    """Load a shareable checkpoint (``.rz``) as a Policy for ``variant`` / ``num_players`` /
    ``options``: the metadata is validated and checked against the env, the network rebuilt
    from its specification and its weights checked and loaded; nothing is unpickled.

    :raises CheckpointError: missing, corrupt, unsafe (a stable-baselines3 zip) or mismatched
        checkpoint (clear message).
    """
    from rummyzoo.agents.safe import load_network, open_checkpoint

    check_players(variant, num_players)  # an unknown variant, a count that is no int

    spec, data = open_checkpoint(path)
    meta = spec.model_dump(mode="json")
    check_compatible(meta, variant, num_players, dict(options or {}), str(path))
    network = load_network(spec, data, str(path))
    return CheckpointPolicy(network, meta, name=Path(path).name, deterministic=deterministic)


#: Metadata of a stable-baselines3 zip that a checkpoint keeps (the schema's fields).
EXPORTED_KEYS = (
    "variant",
    "num_players",
    "options",
    "obs_size",
    "num_actions",
    "observation_layout",
    "features",
    "mask_in_obs",
    "algo",
    "steps",
    "reward",
    "reward_scale",
    "eval",
)


def export_checkpoint(source: str | Path, out: str | Path | None = None) -> dict[str, Any]:
    """Convert a stable-baselines3 zip written by rummyzoo into a shareable checkpoint.

    TRUSTED FILES ONLY: converting loads the zip, which unpickles it. The checkpoint written
    is loaded back (the safe way) and its tensors compared bit for bit with the model's.

    :param out: the ``.rz`` to write (default: ``source`` with the ``.rz`` suffix).
    :returns: ``path``, ``algo``, ``network`` (its type) and ``parameters`` (count).
    :raises CheckpointError: not a rummyzoo stable-baselines3 zip, or a network the format
        cannot describe.
    """
    import torch as th

    from rummyzoo.agents.safe import SUFFIX, load_checkpoint, played_tensors

    source = Path(source)
    target = Path(out) if out is not None else source.with_suffix(SUFFIX)
    if target.resolve() == source.resolve():
        raise CheckpointError(f"export would overwrite {source} itself; name another output")
    check_exportable(source)
    model, old = load_model(source)
    meta = {k: old[k] for k in EXPORTED_KEYS if k in old}
    if "observation_layout" not in meta:  # written before checkpoints recorded it
        sig = env_signature(old["variant"], old["num_players"], old["options"])
        meta["observation_layout"] = sig["observation_layout"]
    meta.setdefault("features", None)
    meta.setdefault("mask_in_obs", False)
    meta.setdefault("steps", int(model.num_timesteps))
    save_checkpoint(model, target, meta)
    network, saved = load_checkpoint(target)
    want = played_tensors(model.policy, meta["algo"])
    got = played_tensors(network.policy, meta["algo"])
    if want.keys() != got.keys() or not all(th.equal(want[k], got[k]) for k in want):
        target.unlink(missing_ok=True)
        raise CheckpointError(f"{target} did not load back as the network of {source}")
    module = network.policy if meta["algo"] == "ppo" else network.q_net
    return {
        "path": target,
        "algo": saved["algo"],
        "network": saved["network"]["type"],
        "parameters": sum(int(p.numel()) for p in module.parameters()),
    }


def check_exportable(path: str | Path) -> None:
    """Refuse, without unpickling anything, a file that is no stable-baselines3 zip of
    rummyzoo (a shareable checkpoint already, another file).

    :raises CheckpointError: naming what the file is.
    """
    from rummyzoo.agents.safe import SAVE_ALONE_HOW, WEIGHTS_NAME, saved_by_sb3_alone

    path = Path(path)
    try:
        read_trusted_meta(path)  # exists, a zip, with rummyzoo metadata
    except CheckpointError as exc:
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        except (OSError, zipfile.BadZipFile):
            raise exc from None
        if saved_by_sb3_alone(names):
            raise CheckpointError(
                f"{exc}: a stable-baselines3 zip saved without it, which export cannot convert "
                f"(it does not say which env the network plays); if you trust it, load it in "
                f"your own code and {SAVE_ALONE_HOW}"
            ) from None
        raise
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    if WEIGHTS_NAME in names:
        raise CheckpointError(
            f"{path} is a shareable checkpoint already (it holds {WEIGHTS_NAME}); nothing to "
            "convert"
        )
    if "data" not in names or "policy.pth" not in names:
        raise CheckpointError(
            f"{path} is not a stable-baselines3 zip (no data and policy.pth inside); "
            "rummyzoo export converts the .zip files rummyzoo's training wrote"
        )
