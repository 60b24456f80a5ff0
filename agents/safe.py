"""Shareable checkpoints: data only, so loading one cannot run code.

A stable-baselines3 ``.zip`` stores Python objects as pickles (the ``data`` member's
``policy_class`` and friends, the torch files beside it); loading one unpickles them, and a
crafted file runs whatever code it likes. A shareable checkpoint (``.rz``) holds data only:

``model.safetensors``
    the network's tensors in the safetensors format (a JSON header naming each tensor's dtype,
    shape and offsets, then the raw numbers; no metadata);
``rummyzoo.json``
    the metadata (variant, players, rules options, observation and action layout, features,
    algorithm, training step, format and rummyzoo versions) and the network's specification
    (``mlp`` or ``cards``, the layer sizes, the activation, the card layout of a ``cards``
    network), validated against a strict schema (:class:`CheckpointMeta`).

The two are the only members of a zip archive. Loading validates the JSON (an unexpected key,
a wrong type, an unknown network type or a format version from a newer rummyzoo is refused,
naming it), rebuilds the network from the specification with the policy classes of
stable-baselines3 and :mod:`rummyzoo.agents.networks` (nothing is unpickled, ``torch.load``
is never called), checks every tensor's name, dtype and shape against the rebuilt network and
only then copies the weights in. What plays is the very network training saved: PPO's whole
policy (actor and critic) or DQN's Q-network.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import shlex
import zipfile
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import torch as th
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

from rummyzoo.agents.checkpoints import (
    META_NAME,
    CheckpointError,
    file_head,
    package_version,
)
from rummyzoo.agents.limits import MAX_LAYERS, MAX_WEIGHTS_BYTES, MAX_WIDTH
from rummyzoo.envs.files import atomic_write_bytes

SUFFIX = ".rz"
WEIGHTS_NAME = "model.safetensors"
MEMBERS = (META_NAME, WEIGHTS_NAME)
FORMAT_NAME = "rummyzoo-checkpoint"
#: The version of the format this rummyzoo writes and the newest it reads.
FORMAT_VERSION = 1
MAX_META_BYTES = 1 << 20
#: A member may unpack to this many times the bytes it takes in the file, beyond the first
#: ``MAX_PACKED_FREE`` bytes (a network's weights pack to nearly their own size).
MAX_PACKING = 16
MAX_PACKED_FREE = 64 << 20
#: Bounds on the weights file's header (a network's is a few KiB: a few dozen tensors of one
#: or two dimensions), checked before anything it declares is believed.
MAX_HEADER_BYTES = 1 << 20
MAX_TENSORS = 1_000
MAX_RANK = 8
MAX_DIM = 1 << 31
#: More members than a checkpoint's are refused before they are looked at one by one.
MAX_MEMBERS = 16
#: Bounds on a specification, so that a crafted one cannot make the loader build a huge network
#: (the layers' bounds are the training config's too: :mod:`rummyzoo.agents.limits`).
MAX_INPUT = 20_000

#: safetensors dtype names of the torch dtypes a network may hold.
DTYPES = {
    th.float32: "F32",
    th.float64: "F64",
    th.float16: "F16",
    th.bfloat16: "BF16",
    th.int64: "I64",
    th.int32: "I32",
    th.int16: "I16",
    th.int8: "I8",
    th.uint8: "U8",
    th.bool: "BOOL",
}

Width = Annotated[int, Field(gt=0, le=MAX_WIDTH)]
Layers = Annotated[list[Width], Field(max_length=MAX_LAYERS)]
Size = Annotated[int, Field(gt=0, le=MAX_INPUT)]
Index = Annotated[int, Field(ge=0, le=MAX_INPUT)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class CardLayoutSpec(_Strict):
    """Where a ``cards`` network reads each card's channels (see :func:`card_layout`)."""

    input_size: Size
    card_blocks: Annotated[list[Index], Field(min_length=1, max_length=64)]
    action_segments: Annotated[
        list[tuple[Literal["card", "global"], Annotated[int, Field(gt=0, le=MAX_INPUT)]]],
        Field(min_length=1, max_length=16),
    ]
    num_actions: Size


class ActionLayoutSpec(_Strict):
    """Where an ``actions`` network reads the action descriptions (see :func:`action_layout`)."""

    input_size: Size
    action_start: Index
    action_width: Annotated[int, Field(gt=0, le=256)]
    num_actions: Size


class NetworkSpec(_Strict):
    """The network: its type, layer sizes and activation (PPO: ``pi`` and ``vf``; DQN: ``q``)."""

    type: Literal["mlp", "cards", "actions"]
    activation: Literal["relu", "tanh", "elu", "leaky_relu"]
    pi: Layers | None = None
    vf: Layers | None = None
    q: Layers | None = None
    card_layout: CardLayoutSpec | None = None
    action_layout: ActionLayoutSpec | None = None

    @model_validator(mode="after")
    def _complete(self) -> NetworkSpec:
        if self.type == "cards" and self.card_layout is None:
            raise ValueError("a 'cards' network needs its card_layout")
        if self.type == "actions" and self.action_layout is None:
            raise ValueError("an 'actions' network needs its action_layout")
        if self.type != "cards" and self.card_layout is not None:
            raise ValueError(f"an {self.type!r} network has no card_layout")
        if self.type != "actions" and self.action_layout is not None:
            raise ValueError(f"an {self.type!r} network has no action_layout")
        return self


class CheckpointMeta(_Strict):
    """The schema of ``rummyzoo.json``."""

    format: Literal["rummyzoo-checkpoint"]
    format_version: Annotated[int, Field(ge=1, le=FORMAT_VERSION)]
    rummyzoo_version: str
    variant: str
    num_players: Annotated[int, Field(ge=2, le=16)]
    options: dict[str, JsonValue]
    obs_size: Size
    num_actions: Size
    observation_layout: dict[str, tuple[Index, Index]]
    features: str | None
    mask_in_obs: bool
    algo: Literal["ppo", "dqn"]
    steps: Annotated[int, Field(ge=0, le=10**15)]
    reward: str | None = None
    reward_scale: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    eval: dict[str, dict[str, JsonValue]] | None = None
    network: NetworkSpec

    @model_validator(mode="after")
    def _consistent(self) -> CheckpointMeta:
        from rummyzoo.agents.features import FEATURES
        from rummyzoo.envs.registry import VARIANTS, check_players

        if self.variant not in VARIANTS:
            raise ValueError(
                f"variant {self.variant!r} is unknown; known variants: {', '.join(VARIANTS)}"
            )
        check_players(self.variant, self.num_players)
        if self.features is not None and self.features not in FEATURES:
            raise ValueError(
                f"features {self.features!r} are unknown; known: {', '.join(FEATURES)}"
            )
        net = self.network
        if self.algo == "ppo" and (net.pi is None or net.vf is None or net.q is not None):
            raise ValueError("network: a ppo network has pi and vf layer sizes (and no q)")
        if self.algo == "dqn" and (net.q is None or net.pi is not None or net.vf is not None):
            raise ValueError("network: a dqn network has q layer sizes (and no pi or vf)")
        if net.type != "mlp" and self.algo == "ppo" and not net.vf:
            raise ValueError(
                f"network.vf: a ppo {net.type!r} network needs at least one value layer"
            )
        return self


# ---------------------------------------------------------------------------- writing
def _activation_name(cls: type) -> str:
    from rummyzoo.agents.networks import ACTIVATIONS

    for name, known in ACTIVATIONS.items():
        if cls is known:
            return name
    raise CheckpointError(
        f"activation {cls.__name__} cannot be written in a shareable checkpoint; known: "
        f"{', '.join(ACTIVATIONS)}"
    )


def network_spec(policy: Any) -> dict[str, Any]:
    """The specification of an SB3 policy that rummyzoo trains (see :class:`NetworkSpec`).

    :raises CheckpointError: a policy the format cannot describe.
    """
    from stable_baselines3.common.torch_layers import FlattenExtractor

    from rummyzoo.agents.networks import network_type

    kind = type(policy)
    try:
        net_type, algo = network_type(policy)
    except KeyError:
        raise CheckpointError(
            f"a {kind.__module__}.{kind.__name__} policy cannot be written in a shareable "
            "checkpoint (known: MaskablePPO's MlpPolicy, the masked DQN policy and their "
            "'cards' and 'actions' versions)"
        ) from None
    activation = _activation_name(policy.activation_fn)
    if algo == "ppo":
        if (
            not policy.share_features_extractor
            or policy.features_extractor_class is not FlattenExtractor
        ):
            raise CheckpointError(
                "only PPO policies with the default (shared, flattening) features extractor "
                "can be written in a shareable checkpoint"
            )
        arch = policy.net_arch
        pi, vf = (
            (arch.get("pi", []), arch.get("vf", [])) if isinstance(arch, dict) else (arch, arch)
        )
        spec: dict[str, Any] = {"activation": activation, "pi": list(pi), "vf": list(vf)}
    else:
        if policy.features_extractor_class is not FlattenExtractor:
            raise CheckpointError(
                "only DQN policies with the default (flattening) features extractor can be "
                "written in a shareable checkpoint"
            )
        spec = {"activation": activation, "q": list(policy.net_arch)}
    spec = {"type": net_type, **spec}
    if net_type == "cards":
        spec["card_layout"] = json.loads(json.dumps(policy.card_layout))
    if net_type == "actions":
        spec["action_layout"] = json.loads(json.dumps(policy.action_layout))
    return spec


def played_tensors(policy: Any, algo: str) -> dict[str, th.Tensor]:
    """The tensors a checkpoint holds, named as in the policy's ``state_dict``: PPO's whole
    policy, DQN's Q-network (``q_net.*``; the target network is a training device)."""
    state = policy.state_dict()
    if algo == "dqn":
        state = {k: v for k, v in state.items() if k.startswith("q_net.")}
    return {k: v.detach().to("cpu").contiguous().clone() for k, v in state.items()}


def _zip_member(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # the same bytes every time
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def checkpoint_bytes(model: Any, meta: dict[str, Any]) -> bytes:
    """A shareable checkpoint of ``model`` (an SB3 MaskablePPO or masked DQN) with ``meta``
    (the training metadata: variant, players, options, layout, algo, steps...).

    :raises CheckpointError: metadata outside the schema, or a policy it cannot describe.
    """
    from safetensors.torch import save

    from rummyzoo.agents.checkpoints import check_compatible  # (it imports this module)

    fields = {k: v for k, v in meta.items() if k != "format"}  # a stable-baselines3 zip's own
    doc = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "rummyzoo_version": package_version(),
        **fields,
        "network": network_spec(model.policy),
    }
    text = json.dumps(doc, indent=2)
    source = "being written"
    spec = parse_meta(text.encode(), source)  # write only what loads: the metadata,
    # the game it names, whose layout it must have (where no env of the project's was at hand
    # to check it against: a model loaded from a file, say)
    check_compatible(doc, spec.variant, spec.num_players, dict(spec.options), source)
    weights = save(played_tensors(model.policy, doc["algo"]))
    declared = _weights_header(weights, source)  # and weights of the network it describes
    _check_size(spec, declared, weights, source)
    check_weights(declared, played_tensors(build_policy(spec, source), spec.algo), source)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(_zip_member(META_NAME), text + "\n")
        archive.writestr(_zip_member(WEIGHTS_NAME), weights)
    return buffer.getvalue()


def write_checkpoint(model: Any, path: str | Path, meta: dict[str, Any]) -> Path:
    """Write :func:`checkpoint_bytes` to ``path`` atomically. Returns the path."""
    path = Path(path)
    atomic_write_bytes(path, checkpoint_bytes(model, meta))
    return path


# ---------------------------------------------------------------------------- reading
def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"key {key!r} appears twice")
        seen[key] = value
    return seen


def _problem(error: dict[str, Any]) -> str:
    where = ".".join(str(p) for p in error["loc"]) or "rummyzoo.json"
    if error["type"] == "extra_forbidden":
        return f"{where}: unexpected key (not part of format version {FORMAT_VERSION})"
    if error["type"] == "missing":
        return f"{where}: missing"
    message = error["msg"].removeprefix("Value error, ")
    shown = repr(error.get("input"))
    if error["type"] != "value_error" and len(shown) <= 60:
        message += f", got {shown}"
    return f"{where}: {message}"


def parse_meta(data: bytes, source: str) -> CheckpointMeta:
    """Validate the bytes of a ``rummyzoo.json``.

    :raises CheckpointError: unreadable JSON, a format version from the future, or anything
        outside the schema (each problem named).
    """
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"checkpoint {source} has unreadable metadata ({exc})") from None
    if not isinstance(doc, dict):
        raise CheckpointError(
            f"checkpoint {source} has unreadable metadata (a JSON {type(doc).__name__}, not an "
            "object)"
        )
    version = doc.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        written = doc.get("rummyzoo_version")
        by = f"rummyzoo {written}" if isinstance(written, str) else "a newer rummyzoo"
        raise CheckpointError(
            f"checkpoint {source} has format version {version}, written by {by}; this rummyzoo "
            f"({package_version()}) reads format version {FORMAT_VERSION} at most: upgrade "
            "rummyzoo to load it"
        )
    try:
        return CheckpointMeta.model_validate_json(data, strict=True)
    except ValidationError as exc:
        problems = "; ".join(_problem(e) for e in exc.errors())
        raise CheckpointError(
            f"checkpoint {source} has metadata that does not validate ({META_NAME}): {problems}"
        ) from None


#: what to do with a stable-baselines3 zip saved without rummyzoo's metadata (``model.save``)
SAVE_ALONE_HOW = (
    "save it with rummyzoo.agents.checkpoints.save_checkpoint(model, PATH, model_meta(...)) "
    "(README: Sharing agents)"
)


def saved_by_sb3_alone(names: list[str]) -> bool:
    """A zip's members are those of a stable-baselines3 zip without rummyzoo's metadata
    (``model.save``): no env to say it plays, so ``rummyzoo export`` cannot convert it."""
    return "data" in names and META_NAME not in names


def _refuse_pickles(path: Path, names: list[str]) -> None:
    """Refuse archives that carry pickles: stable-baselines3 zips and torch files."""
    if "data" in names or any(n.endswith(".pth") for n in names):
        beside = path.with_suffix(SUFFIX)
        hint = (
            f"; the checkpoint written with it is {beside}"
            if beside != path and _reads_as_checkpoint(beside)
            else ""
        )
        if saved_by_sb3_alone(names):
            raise CheckpointError(
                f"{path} is a stable-baselines3 zip, not a shareable checkpoint: loading one "
                "unpickles the Python objects stored in it, which can run any code, so "
                "rummyzoo does not load it. It holds no rummyzoo metadata "
                f"({META_NAME}: the env it plays), so rummyzoo export cannot convert it: if "
                f"you trust it, load it in your own code and {SAVE_ALONE_HOW}{hint}"
            )
        if hint:  # a run's last.zip, best.zip...: the shareable one is there already
            what = f"The shareable checkpoint beside it is {beside}: use that one"
        else:
            how = (
                f"rummyzoo export {shlex.quote(str(path))} --trust (it writes {beside})"
                if beside != path
                else f"rummyzoo export {shlex.quote(str(path))} OUT.rz --trust (this SB3 zip is named .rz: give the output another name)"
            )
            what = f"If you trust the file (you trained it yourself), convert it once: {how}"
        raise CheckpointError(
            f"{path} is a stable-baselines3 zip, not a shareable checkpoint: loading one "
            "unpickles the Python objects stored in it, which can run any code, so rummyzoo "
            f"does not load it. {what}"
        )
    if any(n == "data.pkl" or n.endswith("/data.pkl") or n.endswith(".pkl") for n in names):
        raise CheckpointError(
            f"{path} is a torch file (torch.save), not a shareable checkpoint: loading one "
            "unpickles it, which can run any code, so rummyzoo does not load it; a shareable "
            f"checkpoint is a {SUFFIX} file (rummyzoo export converts a stable-baselines3 zip "
            "you trust)"
        )


def _reads_as_checkpoint(path: Path) -> bool:
    """Whether ``path`` is a shareable checkpoint whose metadata reads (nothing unpickled)."""
    try:
        read_safe_meta(path)
    except (CheckpointError, OSError, ValueError):
        return False
    return True


def check_whole(archive: zipfile.ZipFile) -> None:
    """Refuse (``zipfile.BadZipFile``) an archive that does not start where its file does: a
    checkpoint is never preceded by other bytes, but a truncated one whose last bytes end a zip
    stored inside it (the torch files of a stable-baselines3 zip are zips) reads as that inner
    zip, and its members would be taken for the checkpoint's."""
    infos = archive.infolist()
    if infos and min(info.header_offset for info in infos) != 0:
        raise zipfile.BadZipFile(
            "its last bytes end another zip stored inside it (the file is cut short)"
        )


def _span(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """The bytes from ``info``'s local header to the next member's, or to the central
    directory after the last member: all the room its packed data can take in the file."""
    starts = sorted(
        i.header_offset for i in archive.infolist() if i.header_offset > info.header_offset
    )
    end = starts[0] if starts else getattr(archive, "start_dir", None)
    if end is None:  # (every CPython zipfile sets it; the file's size otherwise)
        end = archive.fp.seek(0, 2) if archive.fp is not None else info.header_offset
    return max(0, end - info.header_offset)


def read_member(archive: zipfile.ZipFile, name: str, limit: int, path: Path) -> bytes:
    """A member's bytes, read up to the size its zip entry gives (``limit`` at most) and only
    where that size is not many times the bytes it takes in the file beyond
    ``MAX_PACKED_FREE``: a small file cannot make the loader unpack a large one (a zip
    bomb)."""
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise CheckpointError(
            f"checkpoint {path}: {name} is {info.file_size:,} bytes, more than a checkpoint "
            f"holds ({limit:,} at most)"
        )
    # the bytes it takes in the file: up to the next member or the directory (the size its
    # entry claims, which nothing else checks, could say more than the file holds)
    packed = min(info.compress_size, _span(archive, info))
    if info.file_size > max(MAX_PACKED_FREE, MAX_PACKING * packed):
        raise CheckpointError(
            f"checkpoint {path}: {name} unpacks to {info.file_size:,} bytes from "
            f"{packed:,} in the file; weights pack to little less than their size "
            f"(rummyzoo stores them unpacked), so this is no checkpoint's (a zip bomb)"
        )
    with archive.open(info) as fh:
        data = fh.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise CheckpointError(f"checkpoint {path}: {name} is larger than its zip entry says")
    return data


def open_checkpoint(path: str | Path, weights: bool = True) -> tuple[CheckpointMeta, bytes]:
    """The validated metadata of a shareable checkpoint and the bytes of its weights file
    (empty unless ``weights``).

    :raises CheckpointError: missing, not a shareable checkpoint (a stable-baselines3 zip or a
        torch file is refused, saying why), damaged, or metadata that does not validate.
    """
    path = Path(path)
    head = file_head(path, "best.rz")
    if head != b"PK\x03\x04":
        if head[:1] == b"\x80":
            raise CheckpointError(
                f"{path} is a pickle (such as an old torch.save file), not a shareable "
                "checkpoint: unpickling can run any code, so rummyzoo does not load it"
            )
        raise CheckpointError(
            f"checkpoint {path} is not a zip archive (a checkpoint is the {SUFFIX} file that "
            f"training or rummyzoo export writes; this file starts with {head!r})"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            check_whole(archive)
            names = archive.namelist()
            _refuse_pickles(path, names)
            if META_NAME not in names:
                raise CheckpointError(
                    f"{path} is not a rummyzoo checkpoint (no {META_NAME} inside)"
                )
            if len(names) > MAX_MEMBERS:
                raise CheckpointError(
                    f"checkpoint {path} holds {len(names):,} members; a checkpoint holds "
                    f"{META_NAME} and {WEIGHTS_NAME} only"
                )
            if len(set(names)) != len(names):
                twice = sorted(n for n, k in Counter(names).items() if k > 1)
                raise CheckpointError(f"checkpoint {path} holds {', '.join(twice)} twice")
            extra = [n for n in names if n not in MEMBERS]
            if extra:
                raise CheckpointError(
                    f"checkpoint {path} holds unexpected member(s) {', '.join(extra)}; a "
                    f"checkpoint holds {META_NAME} and {WEIGHTS_NAME} only"
                )
            if WEIGHTS_NAME not in names:
                raise CheckpointError(f"checkpoint {path} holds no {WEIGHTS_NAME} (no weights)")
            meta_bytes = read_member(archive, META_NAME, MAX_META_BYTES, path)
            data = read_member(archive, WEIGHTS_NAME, MAX_WEIGHTS_BYTES, path) if weights else b""
    except CheckpointError:
        raise
    except Exception as exc:  # zipfile raises many kinds on a damaged archive (zlib, CRC, EOF)
        size = path.stat().st_size
        raise CheckpointError(
            f"checkpoint {path} is truncated or damaged: a zip archive of {size:,} bytes that "
            f"cannot be read ({exc}); copy it again or use another checkpoint"
        ) from None
    return parse_meta(meta_bytes, str(path)), data


def read_safe_meta(path: str | Path) -> dict[str, Any]:
    """The validated metadata of a shareable checkpoint, as a plain dict."""
    meta, _ = open_checkpoint(path, weights=False)
    return meta.model_dump(mode="json")


# ---------------------------------------------------------------------------- rebuilding
class LoadedNetwork:
    """A checkpoint's network, rebuilt: what :class:`~rummyzoo.agents.checkpoints.CheckpointPolicy`
    plays (``policy``: the SB3 policy; ``q_net``: DQN's Q-network)."""

    def __init__(self, policy: Any, algo: str) -> None:
        self.policy = policy
        self.algo = algo

    @property
    def q_net(self) -> Any:
        return self.policy.q_net


def input_size(meta: CheckpointMeta, source: str = "") -> int:
    """The network's input: observation, features, and the legal-action mask (if in it)
    (``source``: the checkpoint's path, which an error names)."""
    from rummyzoo.agents.features import make_features

    try:
        features = make_features(meta.features, meta.variant, meta.num_players, dict(meta.options))
    except ValueError as exc:
        raise CheckpointError(
            f"checkpoint {source}{' ' if source else ''}has features {meta.features!r} that do "
            f"not build: {exc}"
        ) from None
    size = meta.obs_size + (features.size if features is not None else 0)
    return size + (meta.num_actions if meta.mask_in_obs else 0)


def _check_card_layout(meta: CheckpointMeta, source: str) -> None:
    layout = meta.network.card_layout
    assert layout is not None
    problems = []
    want = input_size(meta, source)
    if layout.input_size != want:
        problems.append(f"input_size {layout.input_size}, but the network reads {want} inputs")
    outside = [b for b in layout.card_blocks if b + 52 > layout.input_size]
    if outside:
        problems.append(f"card_blocks {outside} reach past the input")
    actions = sum(c * 52 if kind == "card" else c for kind, c in layout.action_segments)
    if not layout.num_actions == actions == meta.num_actions:
        problems.append(
            f"num_actions {layout.num_actions} and action_segments ({actions} actions) must "
            f"both be the checkpoint's {meta.num_actions}"
        )
    if not problems:  # the layout the checkpoint's game, features and mask give
        from rummyzoo.agents.networks import card_layout

        problems = _differences(meta, source, layout, card_layout, "its game and features")
    if problems:
        raise CheckpointError(
            f"checkpoint {source} has a network specification that does not fit: "
            f"network.card_layout: {'; '.join(problems)}"
        )


def _differences(
    meta: CheckpointMeta, source: str, layout: Any, build: Any, given: str
) -> list[str]:
    """What a network's recorded ``layout`` says otherwise than ``build`` (:func:`card_layout`
    or :func:`action_layout` of :mod:`rummyzoo.agents.networks`) gives for the checkpoint's
    game, features and mask (``given`` names them in the message)."""
    try:
        want = build(
            meta.variant, meta.num_players, dict(meta.options), meta.features, meta.mask_in_obs
        )
    except ValueError as exc:
        raise CheckpointError(
            f"checkpoint {source} has a network specification that does not fit: {exc}"
        ) from None
    got = layout.model_dump(mode="json")
    return [f"{k} {got[k]}, but {given} give {v}" for k, v in want.items() if got[k] != v]


def _check_action_layout(meta: CheckpointMeta, source: str) -> None:
    """The action layout must be the one the checkpoint's features and mask give."""
    from rummyzoo.agents.networks import action_layout

    layout = meta.network.action_layout
    assert layout is not None
    problems = _differences(meta, source, layout, action_layout, "its features")
    if problems:
        raise CheckpointError(
            f"checkpoint {source} has a network specification that does not fit: "
            f"network.action_layout: {'; '.join(problems)}"
        )


def build_policy(meta: CheckpointMeta, source: str) -> Any:
    """The SB3 policy the specification describes, with fresh (untrained) weights.

    Built under a forked torch random state: loading a checkpoint leaves the caller's random
    numbers as they were.
    """
    import gymnasium as gym

    from rummyzoo.agents.networks import ACTIVATIONS, POLICY_CLASSES

    net = meta.network
    if net.type == "cards":
        _check_card_layout(meta, source)
    if net.type == "actions":
        _check_action_layout(meta, source)
    obs_space = gym.spaces.Box(-np.inf, np.inf, (input_size(meta, source),), np.float32)
    action_space = gym.spaces.Discrete(meta.num_actions)
    kwargs: dict[str, Any] = {"activation_fn": ACTIVATIONS[net.activation]}
    if net.card_layout is not None:
        kwargs["card_layout"] = net.card_layout.model_dump(mode="json")
    if net.action_layout is not None:
        kwargs["action_layout"] = net.action_layout.model_dump(mode="json")
    cls = POLICY_CLASSES[net.type, meta.algo]
    if meta.algo == "ppo":
        # Orthogonal initialisation shapes nothing: the weights are the file's.
        kwargs |= {"net_arch": {"pi": list(net.pi or []), "vf": list(net.vf or [])}}
        kwargs["ortho_init"] = False
    else:
        kwargs["net_arch"] = list(net.q or [])
    try:
        with th.random.fork_rng(devices=[]):
            policy = cls(obs_space, action_space, lambda _: 0.0, **kwargs)
    except Exception as exc:
        raise CheckpointError(
            f"checkpoint {source}: its network specification cannot be built "
            f"({type(exc).__name__}: {exc})"
        ) from None
    policy.set_training_mode(False)
    return policy


def _weights_header(data: bytes, source: str) -> dict[str, Any]:
    """The tensors a safetensors file declares: name -> (dtype, shape)."""
    damaged = f"checkpoint {source}: {WEIGHTS_NAME} is damaged"
    if len(data) < 8:
        raise CheckpointError(f"{damaged} ({len(data)} bytes, no header)")
    size = int.from_bytes(data[:8], "little")
    if size > len(data) - 8:
        raise CheckpointError(f"{damaged} (a header of {size:,} bytes in {len(data):,})")
    if size > MAX_HEADER_BYTES:
        raise CheckpointError(
            f"{damaged} (a header of {size:,} bytes, where a network's takes a few thousand; "
            f"{MAX_HEADER_BYTES:,} at most)"
        )
    try:
        header = json.loads(data[8 : 8 + size].decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"{damaged} (its header is not JSON: {exc})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{damaged} (its header is not a JSON object)")
    if "__metadata__" in header:
        raise CheckpointError(
            f"checkpoint {source}: {WEIGHTS_NAME} carries metadata "
            f"({str(header['__metadata__'])[:80]!r}); the weights of a checkpoint carry none "
            f"(its metadata is {META_NAME})"
        )
    if len(header) > MAX_TENSORS:
        raise CheckpointError(
            f"{damaged} (it declares {len(header):,} tensors; a network has a few dozen)"
        )
    declared = {}
    for name, entry in header.items():
        if (
            not isinstance(entry, dict)
            or set(entry) != {"dtype", "shape", "data_offsets"}
            or not isinstance(entry["dtype"], str)
            or not isinstance(entry["shape"], list)
            or len(entry["shape"]) > MAX_RANK
            or not all(
                isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= MAX_DIM
                for d in entry["shape"]
            )
        ):
            raise CheckpointError(
                f"{damaged} (tensor {_shown(name)} has a malformed header entry: a dtype, a "
                f"shape of at most {MAX_RANK} sizes from 0 to {MAX_DIM:,}, and data offsets)"
            )
        declared[name] = (entry["dtype"], tuple(entry["shape"]))
    return declared


#: The longest tensor name a message shows whole.
NAME_LIMIT = 80


def _shown(name: str) -> str:
    """A tensor's name for a message, cut short where a crafted file made it long."""
    return repr(name) if len(name) <= NAME_LIMIT else repr(name[:NAME_LIMIT]) + "..."


def _names(names: list[str], limit: int = 10) -> str:
    """Names for a message: the first ``limit`` of them (bare, unless long), and how many
    more."""
    shown = ", ".join(n if len(n) <= NAME_LIMIT else _shown(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


def check_weights(
    declared: dict[str, tuple[str, tuple[int, ...]]],
    expected: dict[str, th.Tensor],
    source: str,
) -> None:
    """Refuse weights whose names, dtypes or shapes are not the network's, naming each."""
    problems = []
    missing = [k for k in expected if k not in declared]
    extra = [k for k in declared if k not in expected]
    if missing:
        problems.append(f"missing tensors: {_names(missing)}")
    if extra:
        problems.append(f"unexpected tensors: {_names(extra)}")
    shapes = []
    dtypes = []
    for name, tensor in expected.items():
        if name not in declared:
            continue
        dtype, shape = declared[name]
        if shape != tuple(tensor.shape):
            shapes.append(f"{name} {list(shape)} (network {list(tensor.shape)})")
        if dtype != DTYPES.get(tensor.dtype):
            dtypes.append(f"{name} {dtype} (network {DTYPES.get(tensor.dtype)})")
    if shapes:
        problems.append(f"misshapen tensors: {', '.join(shapes)}")
    if dtypes:
        problems.append(f"tensors of the wrong dtype: {', '.join(dtypes)}")
    if problems:
        raise CheckpointError(
            f"checkpoint {source}: its weights do not fit the network its specification "
            f"describes: {'; '.join(problems)}"
        )


def _check_size(
    meta: CheckpointMeta,
    declared: dict[str, tuple[str, tuple[int, ...]]],
    data: bytes,
    source: str,
) -> None:
    """Refuse a specification whose layers need far more numbers than the file holds (so that
    a small file cannot make the loader build a huge network first): the numbers its header
    declares, and the bytes its data holds (4 a weight: a network's are float32), which a
    header cannot overstate (``data``: the weights file, whose header :func:`_weights_header`
    read)."""
    data_bytes = len(data) - 8 - int.from_bytes(data[:8], "little")
    held = min(sum(math.prod(shape) for _, shape in declared.values()), data_bytes // 4)
    needed = _weights_needed(meta, source)
    if needed > held + UNHELD_WEIGHTS:  # (a few missing: built, and named by check_weights)
        raise CheckpointError(
            f"checkpoint {source}: its specification's layers need {needed:,} weights, "
            f"but its weights hold {held:,} numbers"
        )


#: How many more weights than its file holds a specification may ask for: a network that
#: large (4 MiB) is built to name the tensors missing from the file; a larger one is refused
#: before it is built.
UNHELD_WEIGHTS = 1 << 20


def _weights_needed(meta: CheckpointMeta, source: str) -> int:
    """How many weights the network a specification describes has, at least: each layer's
    inputs times its outputs (biases and the scorers' own small layers left out), from the
    network's inputs (an MLP: every input; a scorer's context and value MLPs: those outside
    the action descriptions) through its hidden layers to its outputs."""
    net = meta.network
    if net.type == "cards":
        _check_card_layout(meta, source)
    if net.type == "actions":
        _check_action_layout(meta, source)
    inputs = input_size(meta, source)

    def chain(*sizes: int | list[int] | None) -> int:
        flat = [n for size in sizes for n in (size if isinstance(size, list) else [size]) if n]
        return sum(a * b for a, b in itertools.pairwise(flat))

    if net.type == "mlp":
        if meta.algo == "dqn":
            return chain(inputs, net.q, meta.num_actions)
        return chain(inputs, net.pi, meta.num_actions) + chain(inputs, net.vf, 1)
    if net.action_layout is not None:  # the descriptions feed the one shared scorer
        inputs -= net.action_layout.num_actions * net.action_layout.action_width
    context = chain(inputs, net.q if meta.algo == "dqn" else net.pi, 64)
    return context + (chain(inputs, net.vf) if meta.algo == "ppo" else 0)


def _check_values(
    tensors: dict[str, th.Tensor], expected: dict[str, th.Tensor], buffers: set[str], source: str
) -> None:
    """Refuse weights that are not finite, and index tables that are not the ones the
    specification builds (they are saved with the weights, but the network's layout fixes
    them)."""
    for name, tensor in tensors.items():
        if tensor.is_floating_point() and not bool(th.isfinite(tensor).all()):
            raise CheckpointError(
                f"checkpoint {source}: tensor {name} holds values that are not finite (nan or inf)"
            )
        if name in buffers and not th.equal(tensor, expected[name]):
            raise CheckpointError(
                f"checkpoint {source}: tensor {name} is not the table its network layout builds "
                "(it is fixed by the specification, not learnt)"
            )


def load_network(meta: CheckpointMeta, data: bytes, source: str) -> LoadedNetwork:
    """Rebuild the network of a checkpoint and load its weights (checked first)."""
    from safetensors.torch import load

    declared = _weights_header(data, source)
    _check_size(meta, declared, data, source)  # before building what the specification describes
    policy = build_policy(meta, source)
    expected = played_tensors(policy, meta.algo)
    check_weights(declared, expected, source)
    try:
        tensors = load(data)
    except Exception as exc:  # safetensors' own checks: offsets, sizes
        raise CheckpointError(
            f"checkpoint {source}: {WEIGHTS_NAME} is damaged ({type(exc).__name__}: {exc})"
        ) from None
    _check_values(tensors, expected, {name for name, _ in policy.named_buffers()}, source)
    with th.no_grad():
        if meta.algo == "dqn":
            q_net = {k.removeprefix("q_net."): v for k, v in tensors.items()}
            policy.q_net.load_state_dict(q_net, strict=True)
            policy.q_net_target.load_state_dict(q_net, strict=True)
        else:
            policy.load_state_dict(tensors, strict=True)
    return LoadedNetwork(policy, meta.algo)


def load_checkpoint(path: str | Path) -> tuple[LoadedNetwork, dict[str, Any]]:
    """(network, metadata) of a shareable checkpoint: validated, rebuilt, weights checked."""
    meta, data = open_checkpoint(path)
    return load_network(meta, data, str(path)), meta.model_dump(mode="json")
