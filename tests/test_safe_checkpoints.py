"""Shareable checkpoints: crafted files run no code, bad files are refused naming what is
wrong, and a converted checkpoint is the network of its stable-baselines3 zip bit for bit,
evaluating deal for deal as it did."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import pickle
import re
import shutil
import struct
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch as th
from run_helpers import untrained_checkpoint
from safetensors.torch import save

from rummyzoo.agents.arena import run_arena, summarize
from rummyzoo.agents.checkpoints import (
    CheckpointError,
    CheckpointPolicy,
    load_model,
    load_policy,
    read_meta,
    read_trusted_meta,
    save_resume_checkpoint,
)
from rummyzoo.agents.registry import make_agent
from rummyzoo.agents.safe import FORMAT_VERSION, played_tensors
from rummyzoo.cli.main import main
from rummyzoo.training.config import load_config
from rummyzoo.training.seat_env import SeatEnv
from rummyzoo.training.train import build_model, build_vec_env, checkpoint_meta

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
CARDS = ["features=knock_deadwood", "policy_kwargs.network=cards"]


class _Payload:
    """Unpickled, this creates ``marker``: what a crafted file's code would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _pickled(marker: Path) -> bytes:
    return pickle.dumps(_Payload(marker))


def _torch_file(marker: Path) -> bytes:
    buffer = io.BytesIO()
    th.save({"weight": th.zeros(2), "payload": _Payload(marker)}, buffer)
    return buffer.getvalue()


def _rewrite(src: Path, dst: Path, replace: dict[str, bytes], add: dict[str, bytes] | None = None):
    """A copy of the zip ``src`` with some members replaced and others added."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w") as new:
        for name in old.namelist():
            new.writestr(name, replace.get(name, old.read(name)))
        for name, data in (add or {}).items():
            new.writestr(name, data)
    return dst


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory) -> Path:
    """A stable-baselines3 zip as rummyzoo wrote checkpoints before (untrained PPO)."""
    config = load_config(str(CONFIGS / "smoke_ppo.yaml"), ["n_envs=1"])
    env = build_vec_env(config)
    model = build_model(config, env, None)
    env.close()
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    return save_resume_checkpoint(model, path, checkpoint_meta(config, 0))


@pytest.fixture(scope="module")
def safe_file(sb3_zip) -> Path:
    out = sb3_zip.with_name("model.rz")
    assert main(["export", str(sb3_zip), str(out), "--trust"]) == 0
    return out


def _with_data_payload(sb3_zip: Path, dst: Path, marker: Path, entry: str) -> Path:
    data = json.loads(zipfile.ZipFile(sb3_zip).read("data"))
    assert ":serialized:" in data[entry]
    data[entry][":serialized:"] = base64.b64encode(_pickled(marker)).decode()
    return _rewrite(sb3_zip, dst, {"data": json.dumps(data).encode()})


def _crafted(kind: str, sb3_zip: Path, safe_file: Path, tmp_path: Path, marker: Path) -> Path:
    """A file carrying a payload that creates ``marker`` where ``kind`` says."""
    if kind.startswith("data:"):
        return _with_data_payload(sb3_zip, tmp_path / "crafted.zip", marker, kind[5:])
    if kind.endswith(".pth"):
        return _rewrite(sb3_zip, tmp_path / "crafted.zip", {kind: _torch_file(marker)})
    if kind == "sb3 zip named .rz":
        return _with_data_payload(sb3_zip, tmp_path / "crafted.rz", marker, "policy_class")
    if kind == "torch file":
        path = tmp_path / "crafted.pt"
        path.write_bytes(_torch_file(marker))
        return path
    if kind == "pickle file":
        path = tmp_path / "crafted.pt"
        path.write_bytes(_pickled(marker))
        return path
    if kind == "rz with data.pkl":
        return _rewrite(safe_file, tmp_path / "crafted.rz", {}, {"data.pkl": _pickled(marker)})
    if kind == "rz with a torch file":
        return _rewrite(safe_file, tmp_path / "crafted.rz", {}, {"extra.pt": _torch_file(marker)})
    if kind == "safetensors metadata":
        tensors = _weights(safe_file)
        junk = {"payload": base64.b64encode(_pickled(marker)).decode()}
        weights = save(tensors, metadata=junk)
        return _rewrite(safe_file, tmp_path / "crafted.rz", {"model.safetensors": weights})
    if kind == "json key":
        meta = json.loads(zipfile.ZipFile(safe_file).read("rummyzoo.json"))
        meta["policy_class"] = {":serialized:": base64.b64encode(_pickled(marker)).decode()}
        return _rewrite(safe_file, tmp_path / "crafted.rz", {"rummyzoo.json": json.dumps(meta)})
    raise AssertionError(kind)


CRAFTED = {
    "data:policy_class": "is a stable-baselines3 zip, not a shareable checkpoint",
    "data:lr_schedule": "is a stable-baselines3 zip, not a shareable checkpoint",
    "policy.pth": "is a stable-baselines3 zip, not a shareable checkpoint",
    "policy.optimizer.pth": "is a stable-baselines3 zip, not a shareable checkpoint",
    "pytorch_variables.pth": "is a stable-baselines3 zip, not a shareable checkpoint",
    "sb3 zip named .rz": "is a stable-baselines3 zip, not a shareable checkpoint",
    "torch file": "is a torch file (torch.save), not a shareable checkpoint",
    "pickle file": "is a pickle (such as an old torch.save file), not a shareable checkpoint",
    "rz with data.pkl": "is a torch file (torch.save), not a shareable checkpoint",
    "rz with a torch file": "holds unexpected member(s) extra.pt",
    "safetensors metadata": "model.safetensors carries metadata",
    "json key": "policy_class: unexpected key",
}


def test_the_payloads_are_live(sb3_zip, tmp_path) -> None:
    """What the crafted files carry does run when loaded the unsafe way."""
    from sb3_contrib import MaskablePPO

    marker = tmp_path / "ran"
    crafted = _with_data_payload(sb3_zip, tmp_path / "crafted.zip", marker, "policy_class")
    with contextlib.suppress(Exception):  # the payload is no class: loading fails after it ran
        MaskablePPO.load(crafted)
    assert marker.exists()
    marker.unlink()
    th.load(io.BytesIO(_torch_file(marker)), weights_only=False)
    assert marker.exists()


@pytest.mark.parametrize("kind", sorted(CRAFTED))
def test_a_crafted_file_is_refused_and_runs_nothing(kind, sb3_zip, safe_file, tmp_path, capsys):
    marker = tmp_path / "ran"
    crafted = _crafted(kind, sb3_zip, safe_file, tmp_path, marker)
    with pytest.raises(CheckpointError, match=re.escape(CRAFTED[kind])):
        make_agent(str(crafted), "knock_rummy", 2)
    assert not marker.exists()
    assert main(["evaluate", str(crafted), "--deals", "1", "--workers", "1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rummyzoo evaluate: error:") and len(err.splitlines()) == 1
    assert not marker.exists()


def test_an_sb3_zip_saved_without_rummyzoo_metadata_is_refused_pointing_at_save_checkpoint(
    sb3_zip, tmp_path, capsys
) -> None:
    """A zip that stable-baselines3 saved alone (``model.save``) holds no metadata to say
    which env it plays: ``rummyzoo export`` cannot convert it, so neither the refusal to play
    it nor export's own refusal sends the user there; both name ``save_checkpoint``."""
    plain = tmp_path / "best.zip"
    with zipfile.ZipFile(sb3_zip) as old, zipfile.ZipFile(plain, "w") as new:
        for name in old.namelist():
            if name != "rummyzoo.json":
                new.writestr(name, old.read(name))
    with pytest.raises(CheckpointError) as info:
        make_agent(str(plain), "knock_rummy", 2)
    message = str(info.value)
    assert message.startswith(f"{plain} is a stable-baselines3 zip, not a shareable checkpoint")
    assert "holds no rummyzoo metadata" in message and "save_checkpoint(" in message
    assert "rummyzoo export" in message and "--trust" not in message
    assert main(["evaluate", str(plain), "--deals", "1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rummyzoo evaluate: error:") and "save_checkpoint(" in err
    assert main(["export", str(plain), "--trust"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"rummyzoo export: error: {plain} is not a rummyzoo checkpoint (no rummyzoo.json "
        "inside): a stable-baselines3 zip saved without it, which export cannot convert (it "
        "does not say which env the network plays); if you trust it, load it in your own code "
        "and save it with rummyzoo.agents.checkpoints.save_checkpoint(model, PATH, "
        "model_meta(...)) (README: Sharing agents)"
    )
    assert not plain.with_suffix(".rz").exists()
    # once saved with save_checkpoint beside it, the refusal says where that checkpoint is
    shutil.copyfile(untrained_checkpoint(tmp_path / "net.rz"), plain.with_suffix(".rz"))
    with pytest.raises(CheckpointError, match=r"; the checkpoint written with it is .*best\.rz$"):
        make_agent(str(plain), "knock_rummy", 2)
    # a run's resume file without metadata is not sent to save_checkpoint (--resume reads it)
    with pytest.raises(CheckpointError) as info:
        read_trusted_meta(plain)
    assert str(info.value) == f"{plain} is not a rummyzoo checkpoint (no rummyzoo.json inside)"


def test_an_sb3_zip_is_refused_saying_why_and_how_to_convert(sb3_zip, tmp_path, capsys) -> None:
    # a copy of its own: the module's zip gets a shareable checkpoint beside it (safe_file)
    sb3_zip = Path(shutil.copy(sb3_zip, tmp_path / "model.zip"))
    expected = (
        f"{sb3_zip} is a stable-baselines3 zip, not a shareable checkpoint: loading one unpickles "
        "the Python objects stored in it, which can run any code, so rummyzoo does not load it. "
        "If you trust the file (you trained it yourself), convert it once: rummyzoo export "
        f"{sb3_zip} --trust (it writes {sb3_zip.with_suffix('.rz')})"
    )
    with pytest.raises(CheckpointError) as info:
        make_agent(str(sb3_zip), "knock_rummy", 2)
    assert str(info.value) == expected
    for argv in (
        ["arena", "knock_rummy", "--agents", str(sb3_zip), "random", "--deals", "1"],
        ["play", "knock_rummy", "--opponents", str(sb3_zip)],
    ):
        assert main(argv) == 2
        assert expected in capsys.readouterr().err
    # The seat env's opponents and its self-play pool load checkpoints the same way.
    with pytest.raises(CheckpointError, match="is a stable-baselines3 zip"):
        SeatEnv("knock_rummy", 2, opponents=[str(sb3_zip)])
    from rummyzoo.training.train import make_seat_env

    env = make_seat_env(load_config(str(CONFIGS / "smoke_ppo.yaml"), []), 0)()
    env.add_snapshot(str(sb3_zip), 0)
    with pytest.raises(CheckpointError, match="is a stable-baselines3 zip"):
        for seed in range(50):  # until the pool is drawn
            env.reset(seed=seed)
    # a file named as its checkpoint beside it that is none: the advice to export stays
    beside = sb3_zip.with_suffix(".rz")
    beside.write_bytes(b"")
    with pytest.raises(CheckpointError) as info:
        make_agent(str(sb3_zip), "knock_rummy", 2)
    assert str(info.value) == expected
    # the shareable checkpoint beside it (a run's last.zip): that one, once
    assert main(["export", str(sb3_zip), "--trust"]) == 0
    capsys.readouterr()
    with pytest.raises(CheckpointError) as info:
        make_agent(str(sb3_zip), "knock_rummy", 2)
    assert str(info.value) == (
        f"{expected.split(' If you trust')[0]} The shareable checkpoint beside it is {beside}: "
        "use that one"
    )
    # so says the arena, which plays a private copy of the file (nothing beside the copy)
    assert main(["arena", "knock_rummy", "--agents", str(sb3_zip), "random", "--deals", "1"]) == 2
    assert f"The shareable checkpoint beside it is {beside}: use that one" in (
        capsys.readouterr().err
    )


def test_export_needs_trust(sb3_zip, safe_file, tmp_path, capsys) -> None:
    out = tmp_path / "out.rz"
    assert main(["export", str(sb3_zip), str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"rummyzoo export: error: converting {sb3_zip} must unpickle it (a stable-baselines3 zip "
        "stores Python objects, and loading them can run any code), so convert only files you "
        f"trust: rummyzoo export {sb3_zip} {out} --trust"  # the command again, as given
    )
    assert not out.exists()
    assert main(["export", str(safe_file), "--trust"]) == 2
    assert "is a shareable checkpoint already" in capsys.readouterr().err
    assert main(["export", str(sb3_zip), str(out), "--trust"]) == 0
    printed = capsys.readouterr().out
    assert "loaded back and identical" in printed and "replaced" not in printed
    assert out.read_bytes() == safe_file.read_bytes()  # the same file every time
    assert main(["export", str(sb3_zip), str(out), "--trust"]) == 0  # again: says it replaced it
    assert f"wrote {out} (it replaced the file that was there): " in capsys.readouterr().out


def test_a_damaged_zip_or_an_unreadable_checkpoint_is_refused_in_one_line(
    sb3_zip, safe_file, tmp_path, capsys, monkeypatch
) -> None:
    """Garbage weights in a zip are called damaged, with torch's cause (not its advice to load
    with ``weights_only=False``, which torch's message gave over several lines); a checkpoint
    that cannot be read says so (a bare errno message before)."""
    damaged = _rewrite(sb3_zip, tmp_path / "damaged.zip", {"policy.pth": b"\x80\x02garbage" * 8})
    assert main(["export", str(damaged), str(tmp_path / "out.rz"), "--trust"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rummyzoo export: error: checkpoint {damaged} could not be loaded, it "
                          "is damaged ("), err  # fmt: skip
    assert err.count("\n") == 1 and "weights_only" not in err, err
    real_open = Path.open

    def unreadable(self, *args, **kwargs):  # as root cannot make a file unreadable
        if self == safe_file:
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", unreadable)
    assert main(["evaluate", str(safe_file), "--deals", "1", "--workers", "1"]) == 2
    assert capsys.readouterr().err == (
        f"rummyzoo evaluate: error: cannot read checkpoint {safe_file}: Permission denied\n"
    )


# ------------------------------------------------------------------ bad weights and metadata
def _weights(safe_file: Path) -> dict[str, th.Tensor]:
    from safetensors.torch import load

    return load(zipfile.ZipFile(safe_file).read("model.safetensors"))


def _with_weights(safe_file: Path, dst: Path, tensors: dict[str, th.Tensor]) -> Path:
    return _rewrite(safe_file, dst, {"model.safetensors": save(tensors)})


def test_weights_that_do_not_fit_are_refused_naming_them(safe_file, tmp_path) -> None:
    good = _weights(safe_file)
    name = "action_net.weight"
    cases = {
        "extra": ({**good, "stowaway": th.zeros(3)}, "unexpected tensors: stowaway"),
        "missing": (
            {k: v for k, v in good.items() if k != name},
            f"missing tensors: {name}$",
        ),
        "misshapen": (
            {**good, name: th.zeros(good[name].shape[0], good[name].shape[1] + 1)},
            rf"misshapen tensors: {name} \[106, 33\] \(network \[106, 32\]\)",
        ),
        "dtype": (
            {**good, name: good[name].double()},
            rf"tensors of the wrong dtype: {name} F64 \(network F32\)",
        ),
    }
    for case, (tensors, message) in cases.items():
        path = _with_weights(safe_file, tmp_path / f"{case}.rz", tensors)
        read_meta(path)  # the metadata is fine ...
        with pytest.raises(CheckpointError, match="its weights do not fit the network") as info:
            make_agent(str(path), "knock_rummy", 2)
        assert re.search(message, str(info.value)), (case, str(info.value))


def test_weights_that_are_not_finite_or_a_spec_bigger_than_its_file_are_refused(
    safe_file, tmp_path
) -> None:
    good = _weights(safe_file)
    name = "action_net.weight"
    for value in (float("nan"), float("inf")):
        bad = good[name].clone()
        bad[3, 5] = value
        path = _with_weights(safe_file, tmp_path / "nan.rz", {**good, name: bad})
        with pytest.raises(
            CheckpointError, match=f"tensor {name} holds values that are not finite"
        ):
            make_agent(str(path), "knock_rummy", 2)
    huge = _with_meta(safe_file, tmp_path / "huge.rz", lambda m: m["network"].update(pi=[4096] * 8))
    # 312 inputs x 4,096 + 7 x 4,096 x 4,096 + 4,096 x 106 actions, and the value MLP's 312 x
    # 32 + 32 x 32 + 32 x 1
    with pytest.raises(CheckpointError, match=r"layers need 119,163,680 weights, but its weights"):
        make_agent(str(huge), "knock_rummy", 2)
    # one wide layer: no hidden-to-hidden weights, but inputs x width and width x outputs
    wide = _with_meta(
        safe_file, tmp_path / "wide.rz", lambda m: m["network"].update(pi=[4096], vf=[4096])
    )
    with pytest.raises(CheckpointError, match=r"layers need 2,994,176 weights, but its weights"):
        make_agent(str(wide), "knock_rummy", 2)


@pytest.mark.parametrize("batch", [1, 8])
def test_weights_so_large_that_the_network_overflows_are_refused_when_it_plays(
    safe_file, tmp_path, capsys, batch
) -> None:
    """Finite weights pass the load's checks; at 3e38 the logits overflow to nan, which failed
    deep in torch with a traceback and pages of nan (one game at a time), or played the first
    legal action every time without a word (many at once)."""
    huge = {k: th.full_like(v, 3e38) for k, v in _weights(safe_file).items()}
    path = _with_weights(safe_file, tmp_path / "huge.rz", huge)
    make_agent(str(path), "knock_rummy", 2)  # (it loads)
    with pytest.raises(CheckpointError, match=r"huge.rz: its network's outputs are not finite"):
        run_arena("knock_rummy", 2, [str(path), "random"], deals=2, seed=0, workers=1, batch=batch)
    args = ["arena", "knock_rummy", "--agents", str(path), "random", "--deals", "2", "--quiet"]
    assert main([*args, "--workers", "1", "--batch", str(batch)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert "error: an agent failed: checkpoint huge.rz: its network's outputs are not finite" in err


@pytest.mark.parametrize("network", ["mlp", "cards", "actions"])
@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_the_weights_a_specification_needs_are_at_most_those_of_its_network(
    algo, network, tmp_path
):
    """The size check counts each layer's inputs times its outputs, from the network's inputs
    to its outputs: never more than the network built from the specification holds, or a
    sound file would be refused."""
    from rummyzoo.agents.checkpoints import save_checkpoint
    from rummyzoo.agents.safe import _weights_needed, load_checkpoint, open_checkpoint

    overrides = {
        "mlp": ["policy_kwargs.net_arch=[48, 40]"],
        "cards": [*CARDS, "policy_kwargs.net_arch=[48, 40]"],
        "actions": [
            "variant=ditch_rummy",
            "features=ditch_actions",
            "policy_kwargs.network=actions",
        ],
    }[network]
    config = load_config(str(ROOT / "configs" / f"smoke_{algo}.yaml"), ["n_envs=2", *overrides])
    env = build_vec_env(config)
    try:
        path = save_checkpoint(
            build_model(config, env, None), tmp_path / "x.rz", checkpoint_meta(config, 0)
        )
    finally:
        env.close()
    meta, _data = open_checkpoint(path)
    network, _ = load_checkpoint(path)
    assert network.policy is not None
    held = sum(
        t.numel() for t in played_tensors(network.policy, algo).values() if t.is_floating_point()
    )
    needed = _weights_needed(meta, str(path))
    assert 0.5 * held < needed <= held, (needed, held)


def test_metadata_nested_too_deep_is_refused(safe_file, tmp_path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    path = _rewrite(safe_file, tmp_path / "deep.rz", {"rummyzoo.json": deep})
    with pytest.raises(CheckpointError, match="has unreadable metadata"):
        read_meta(path)


def _fresh_checkpoint(config_name: str, overrides: list[str], path: Path) -> Path:
    """An untrained network of a config, saved as a checkpoint."""
    from rummyzoo.agents.checkpoints import save_checkpoint

    config = load_config(str(CONFIGS / config_name), overrides)
    env = build_vec_env(config)
    model = build_model(config, env, None)
    env.close()
    return save_checkpoint(model, path, checkpoint_meta(config, 0))


def test_index_tables_are_the_ones_the_layout_builds(tmp_path) -> None:
    good = _fresh_checkpoint("smoke_ppo.yaml", ["n_envs=1", *CARDS], tmp_path / "cards.rz")
    tensors = _weights(good)
    tables = [k for k, v in tensors.items() if not v.is_floating_point()]
    assert tables  # the cards network saves its index tables with its weights
    for value in (10**9, 0):  # out of range (a crash mid-game), or quietly rewired
        name = tables[0]
        path = _with_weights(
            good, tmp_path / "rewired.rz", {**tensors, name: th.full_like(tensors[name], value)}
        )
        with pytest.raises(CheckpointError, match=f"tensor {name} is not the table its network"):
            make_agent(str(path), "knock_rummy", 2)
    assert make_agent(str(good), "knock_rummy", 2) is not None


def _with_meta(safe_file: Path, dst: Path, change) -> Path:
    meta = json.loads(zipfile.ZipFile(safe_file).read("rummyzoo.json"))
    change(meta)
    return _rewrite(safe_file, dst, {"rummyzoo.json": json.dumps(meta).encode()})


@pytest.mark.parametrize(
    ("case", "change", "message"),
    [
        (
            "unknown network",
            lambda m: m["network"].update(type="transformer"),
            "network.type: Input should be 'mlp', 'cards' or 'actions', got 'transformer'",
        ),
        (
            "unexpected keys",
            lambda m: m.update(comment="hi", run_me="x"),
            r"comment: unexpected key \(not part of format version 1\); run_me: unexpected key",
        ),
        (
            "unexpected network key",
            lambda m: m["network"].update(policy_class="MyPolicy"),
            "network.policy_class: unexpected key",
        ),
        ("wrong type", lambda m: m.update(num_players="2"), "num_players: Input should be"),
        ("missing", lambda m: m.pop("network"), "network: missing"),
        (
            "future version",
            lambda m: m.update(format_version=FORMAT_VERSION + 1, rummyzoo_version="9.0", new=1),
            rf"has format version {FORMAT_VERSION + 1}, written by rummyzoo 9.0; this rummyzoo "
            rf"\(.+\) reads format version {FORMAT_VERSION} at most: upgrade rummyzoo to load it",
        ),
        (
            "dqn layers in a ppo network",
            lambda m: m["network"].update(q=[32]),
            "network: a ppo network has pi and vf layer sizes",
        ),
        (
            "a huge layer",
            lambda m: m["network"].update(pi=[10**9]),
            r"network.pi.0: Input should be less than or equal to 4096",
        ),
        ("unknown variant", lambda m: m.update(variant="gin"), "variant 'gin' is unknown"),
        (
            "a player count the variant has not",
            lambda m: m.update(num_players=7),
            r"bad\.rz has metadata that does not validate .*knock_rummy supports 2-6 players, "
            "got 7",
        ),
        (
            "version 0",
            lambda m: m.update(format_version=0),
            "format_version: Input should be greater than or equal to 1",
        ),
        (
            "a reward scale that is no number",
            lambda m: m.update(reward_scale=float("nan")),
            "reward_scale: Input should be a finite number",
        ),
        (
            "a step count of thousands of digits",
            lambda m: m.update(steps=10**4000),
            "steps: Input should be less than or equal to",
        ),
    ],
)
def test_metadata_that_does_not_validate_is_refused_naming_it(
    case, change, message, safe_file, tmp_path
) -> None:
    path = _with_meta(safe_file, tmp_path / "bad.rz", change)
    with pytest.raises(CheckpointError, match=message):
        read_meta(path)
    with pytest.raises(CheckpointError, match=message):
        make_agent(str(path), "knock_rummy", 2)


def test_a_cards_layout_that_does_not_fit_is_refused(tmp_path) -> None:
    good = _fresh_checkpoint("smoke_dqn.yaml", ["n_envs=1", *CARDS], tmp_path / "cards.rz")
    assert type(load_policy(good, "knock_rummy", 2).model.policy).__name__ == "CardDQNPolicy"

    def shift(meta):
        meta["network"]["card_layout"]["card_blocks"][0] = 10_000

    bad = _with_meta(good, tmp_path / "bad.rz", shift)
    with pytest.raises(CheckpointError, match=r"network.card_layout: card_blocks \[10000\]"):
        make_agent(str(bad), "knock_rummy", 2)

    # a layout inside the input that is not the game's: it loaded, and scored the actions of
    # one card as another's, or read the wrong inputs as a card's channels
    def swap(meta):
        segments = meta["network"]["card_layout"]["action_segments"]
        segments.reverse()

    def move(meta):
        blocks = meta["network"]["card_layout"]["card_blocks"]
        blocks[0], blocks[1] = blocks[1], blocks[0]

    for change, message in [(swap, "action_segments"), (move, "card_blocks")]:
        bad = _with_meta(good, tmp_path / "bad.rz", change)
        with pytest.raises(
            CheckpointError, match=f"network.card_layout: {message} .*, but its game and features"
        ):
            make_agent(str(bad), "knock_rummy", 2)
    mlp = _with_meta(good, tmp_path / "mlp.rz", lambda m: m["network"].update(type="mlp"))
    with pytest.raises(CheckpointError, match="an 'mlp' network has no card_layout"):
        make_agent(str(mlp), "knock_rummy", 2)


def test_an_actions_layout_that_does_not_fit_is_refused(tmp_path) -> None:
    overrides = [
        "n_envs=1",
        "variant=ditch_rummy",
        "features=ditch_actions",
        "policy_kwargs.network=actions",
    ]
    good = _fresh_checkpoint("smoke_ppo.yaml", overrides, tmp_path / "actions.rz")
    policy = load_policy(good, "ditch_rummy", 2)
    assert type(policy.model.policy).__name__ == "ActionActorCriticPolicy"

    def widen(meta):
        meta["network"]["action_layout"]["action_width"] = 7

    bad = _with_meta(good, tmp_path / "bad.rz", widen)
    with pytest.raises(
        CheckpointError, match=r"network.action_layout: action_width 7, but its features give 23"
    ):
        make_agent(str(bad), "ditch_rummy", 2)
    mlp = _with_meta(good, tmp_path / "mlp.rz", lambda m: m["network"].update(type="mlp"))
    with pytest.raises(CheckpointError, match="an 'mlp' network has no action_layout"):
        make_agent(str(mlp), "ditch_rummy", 2)
    bare = _with_meta(good, tmp_path / "bare.rz", lambda m: m.update(features=None))
    with pytest.raises(CheckpointError, match="no features are given; use features: ditch_actions"):
        make_agent(str(bare), "ditch_rummy", 2)


# ------------------------------------------------------------------ before and after export
def _positions(variant: str, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, mask) of the learner's decisions in random games."""
    env = SeatEnv(variant, 2, opponents=["random"], learner_seat=0)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    found = []
    while len(found) < count:
        mask = env.action_masks().copy()
        found.append((env.match.observe(env.seat), mask))
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            env.reset()
    return found


def _evaluation(agent, opponent: str, deals: int, options: dict) -> dict:
    result = run_arena(
        "knock_rummy", 2, [agent, opponent], deals=deals, seed=3, options=options, workers=1
    )
    entry = summarize(result)["agents"][result.labels[0]]
    return {k: v for k, v in entry.items() if k != "name"}


@pytest.mark.parametrize(
    ("algo", "network"), [("ppo", "mlp"), ("ppo", "cards"), ("dqn", "mlp"), ("dqn", "cards")]
)
def test_export_keeps_the_network_and_its_evaluations(algo, network, tmp_path, capsys) -> None:
    run = tmp_path / "run"
    overrides = ["n_timesteps=128", "env_options.target_score=null", "evaluation.deals=2"]
    if network == "cards":
        overrides += CARDS
    argv = ["train", str(CONFIGS / f"smoke_{algo}.yaml"), "--run-dir", str(run), "--quiet"]
    assert main([*argv, *[a for o in overrides for a in ("--set", o)]]) == 0
    old = run / "checkpoints" / "last.zip"  # an SB3 zip, as checkpoints were before
    out = tmp_path / "exported.rz"
    assert main(["export", str(old), str(out), "--trust"]) == 0
    capsys.readouterr()

    model, meta = load_model(old)  # the trusted way
    trusted = CheckpointPolicy(model, meta, name="exported.rz")
    safe = load_policy(out, "knock_rummy", 2)
    assert safe.features is not None if network == "cards" else safe.features is None
    # The network, bit for bit: every tensor, with its name and dtype.
    before = played_tensors(model.policy, algo)
    for policy in (safe, load_policy(run / "checkpoints" / "last.rz", "knock_rummy", 2)):
        after = played_tensors(policy.model.policy, algo)
        assert list(after) == list(before)
        for name, tensor in before.items():
            assert after[name].dtype == tensor.dtype and th.equal(after[name], tensor), name
    assert type(safe.model.policy) is type(model.policy)
    if algo == "dqn":
        assert played_tensors(safe.model.policy, "dqn").keys() == before.keys()
        for name, tensor in safe.model.policy.q_net_target.state_dict().items():
            assert th.equal(tensor, model.policy.q_net.state_dict()[name])

    # The same decisions: greedy, and PPO's sampled actions with their probabilities.
    sampling = [CheckpointPolicy(model, meta, "t", deterministic=False)]
    sampling.append(load_policy(out, "knock_rummy", 2, deterministic=False))
    for k, (obs, mask) in enumerate(_positions("knock_rummy", 40, seed=5)):
        assert trusted.act(obs, mask, np.random.default_rng(k)) == safe.act(
            obs, mask, np.random.default_rng(k)
        )
        a, b = (p.act(obs, mask, np.random.default_rng(k)) for p in sampling)
        assert a == b
    # The same evaluations, deal for deal: the trusted model, then the exported file through
    # rummyzoo evaluate.
    deals = 3
    report = tmp_path / "report.json"
    argv = ["evaluate", str(out), "--deals", str(deals), "--seed", "3", "--workers", "1"]
    assert (
        main([*argv, "--opponents", "random", "knock.greedy", "--quiet", "--json", str(report)])
        == 0
    )
    shown = json.loads(report.read_text())
    assert shown["options"] == meta["options"] == {"target_score": None}
    for opponent in ("random", "knock.greedy"):
        expected = _evaluation(trusted, opponent, deals, meta["options"])
        got = {k: v for k, v in shown["results"][opponent].items() if k != "name"}
        assert got == expected, opponent
        assert _evaluation(str(out), opponent, deals, meta["options"]) == expected


def test_ppo_sampling_probabilities_are_identical(sb3_zip, safe_file) -> None:
    model, _ = load_model(sb3_zip)
    safe = load_policy(safe_file, "knock_rummy", 2)
    from rummyzoo.agents.features import learner_input

    for obs, mask in _positions("knock_rummy", 20, seed=1):
        x = th.as_tensor(learner_input(obs, mask, None, False)).unsqueeze(0)
        with th.no_grad():
            p = model.policy.get_distribution(x, action_masks=mask[None]).distribution.probs
            q = safe.model.policy.get_distribution(x, action_masks=mask[None]).distribution.probs
        assert th.equal(p, q)


def test_loading_leaves_the_torch_random_stream_alone(safe_file) -> None:
    th.manual_seed(0)
    expected = th.rand(3)
    th.manual_seed(0)
    load_policy(safe_file, "knock_rummy", 2)
    assert th.equal(th.rand(3), expected)


def test_a_run_from_before_resumes_with_its_pool_converted(tmp_path) -> None:
    """A run whose self-play snapshots are stable-baselines3 zips (its own, so trusted) resumes:
    they are converted into checkpoints, and the zips go with the next checkpoint."""
    from rummyzoo.training.train import resume_run, train_from_file

    run = tmp_path / "run"
    overrides = ["n_timesteps=128", "env_options.target_score=null", "evaluation.deals=2"]
    train_from_file(str(CONFIGS / "smoke_ppo.yaml"), overrides, str(run), ["t"], progress="off")
    state = json.loads((run / "state.json").read_text())
    model, meta = load_model(run / "checkpoints" / "last.zip")
    assert state["pool"]
    for snap in state["pool"]:  # such runs named their files from the working directory
        (run / snap["path"]).unlink()
        snap["path"] = str(
            save_resume_checkpoint(model, (run / snap["path"]).with_suffix(".zip"), meta)
        )
    (run / "state.json").write_text(json.dumps(state))
    summary = resume_run(str(run), ["n_timesteps=256"], ["t"], progress="off")
    assert summary["steps"] == 256
    pool = json.loads((run / "state.json").read_text())["pool"]
    # the converted ones, and the snapshot due at 128 where the run had finished
    assert [p["steps"] for p in pool] == [*(s["steps"] for s in state["pool"]), 128]
    assert all(p["path"].endswith(".rz") for p in pool)
    assert sorted(p.name for p in (run / "pool").iterdir()) == sorted(
        Path(p["path"]).name for p in pool
    )


def test_a_loaded_checkpoint_plays_as_an_object_anywhere_and_leaves_torch_alone(tmp_path) -> None:
    """Loading changes no setting of the caller's torch; the object plays in worker processes
    and in several seats, and is refused by an arena of another game."""
    from rummyzoo.agents.arena import run_arena
    from rummyzoo.agents.checkpoints import load_policy

    path = _fresh_checkpoint("smoke_ppo.yaml", ["n_envs=1"], tmp_path / "knock.rz")
    threads = th.get_num_threads()
    th.set_num_threads(2)
    try:
        policy = load_policy(path, "knock_rummy", 2)
        assert th.get_num_threads() == 2
        by_name = run_arena("knock_rummy", 2, [str(path), "random"], deals=3, seed=1)
        for workers in (1, 2):
            got = run_arena("knock_rummy", 2, [policy, "random"], deals=3, seed=1, workers=workers)
            assert np.array_equal(got.points, by_name.points), workers
        assert th.get_num_threads() == 2  # the arena played on one thread, then gave it back
    finally:
        th.set_num_threads(threads)
    with pytest.raises(ValueError, match="variant: checkpoint 'knock_rummy', env 'ditch_rummy'"):
        run_arena("ditch_rummy", 2, [policy, "random"], deals=1)


def _header_only(entries: dict, pad: int = 0) -> bytes:
    """A weights file of a header and no data (``pad`` spaces in the header)."""
    header = json.dumps(entries).encode() + b" " * pad
    return len(header).to_bytes(8, "little") + header


def test_a_header_that_lies_cannot_make_the_loader_build_or_compute_much(
    safe_file, tmp_path, monkeypatch
) -> None:
    """Crafted weights files of a few hundred bytes to a few KiB: a declared tensor the data
    does not hold (the largest network the schema allows asked for), sizes of thousands of
    digits, negative sizes, a header of more than a MiB, thousands of tensors. Each is refused
    by name before any network is built (so none takes the memory or time it asks for)."""
    import rummyzoo.agents.safe as safe

    def no_build(*args, **kwargs):
        raise AssertionError("a network was built for a file that cannot hold it")

    monkeypatch.setattr(safe, "build_policy", no_build)
    big = "9" * 4299
    cases = {
        "declared, not held": (
            _header_only(
                {"x": {"dtype": "F32", "shape": [1 << 30, 1 << 30], "data_offsets": [0, 0]}}
            ),
            lambda m: m["network"].update(pi=[4096] * 8, vf=[4096] * 8),
            r"layers need 237,875,200 weights, but its weights hold 0 numbers",
        ),
        "sizes of thousands of digits": (
            b"".join(
                [
                    (
                        len(
                            h := (
                                '{"x":{"dtype":"F32","shape":[' + ",".join([big] * 200) + "],"
                                '"data_offsets":[0,0]}}'
                            ).encode()
                        )
                    ).to_bytes(8, "little"),
                    h,
                ]
            ),
            None,
            r"tensor 'x' has a malformed header entry",
        ),
        "negative sizes": (
            _header_only(
                {"x": {"dtype": "F32", "shape": [-(10**30), 10**30], "data_offsets": [0, 0]}}
            ),
            None,
            r"tensor 'x' has a malformed header entry",
        ),
        "a header of more than a MiB": (
            _header_only({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, 1 << 20),
            None,
            r"a header of 1,048,6\d\d bytes, where a network's takes a few thousand",
        ),
        "thousands of tensors": (
            _header_only(
                {
                    f"t{i}": {"dtype": "F32", "shape": [1], "data_offsets": [0, 0]}
                    for i in range(1001)
                }
            ),
            None,
            r"it declares 1,001 tensors",
        ),
    }
    for weights, edit, message in cases.values():
        path = _rewrite(safe_file, tmp_path / "lying.rz", {"model.safetensors": weights})
        if edit is not None:
            path = _with_meta(path, tmp_path / "lying_meta.rz", edit)
        with pytest.raises(CheckpointError, match=message):
            make_agent(str(path), "knock_rummy", 2)


def test_many_members_or_long_lists_of_names_are_refused_in_short_messages(
    safe_file, tmp_path
) -> None:
    members = {f"m{i}": b"" for i in range(5000)}
    many = _rewrite(safe_file, tmp_path / "many.rz", {}, members)
    with pytest.raises(CheckpointError, match=r"holds 5,002 members; a checkpoint holds"):
        read_meta(many)
    good = _weights(safe_file)
    stowaways = {**good, **{f"stowaway{i}": th.zeros(1) for i in range(500)}}
    path = _with_weights(safe_file, tmp_path / "stowaways.rz", stowaways)
    with pytest.raises(CheckpointError) as info:
        make_agent(str(path), "knock_rummy", 2)
    text = str(info.value)
    assert re.search(r"unexpected tensors: stowaway\d+(, stowaway\d+){9} and 490 more", text)
    assert len(text) < 1000


def test_the_metadata_of_an_sb3_zip_is_read_within_the_same_bounds(sb3_zip, tmp_path) -> None:
    """``rummyzoo export`` without ``--trust`` reads a zip's metadata only: a JSON that is not
    an object, nested too deep or larger than a MiB is refused as unreadable."""
    from rummyzoo.agents.checkpoints import read_trusted_meta

    cases = {
        b"5": "a JSON int, not an object",
        b"null": "a JSON NoneType, not an object",
        b"[" * 100_000: "nested too deeply|unreadable metadata",
        b" " * ((1 << 20) + 1) + b"{}": r"rummyzoo.json is 1,048,579 bytes, more than",
    }
    for data, message in cases.items():
        path = _rewrite(sb3_zip, tmp_path / "meta.zip", {"rummyzoo.json": data})
        with pytest.raises(CheckpointError, match=message):
            read_trusted_meta(path)
        assert main(["export", str(path)]) == 2


def test_export_checks_its_output_before_it_loads_the_file(sb3_zip, tmp_path, capsys) -> None:
    """The default OUT (CHECKPOINT as .rz) went unchecked until after the unpickling, and any
    name was taken for OUT: now both are checked first, and OUT is a .rz."""
    source = tmp_path / "ck.zip"
    source.write_bytes(sb3_zip.read_bytes())
    (tmp_path / "ck.rz").mkdir()  # where the default output would go
    assert main(["export", str(source), "--trust"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"rummyzoo export: error: the default OUT {tmp_path / 'ck.rz'} is a folder: give the "
        "name of a file to write"
    )
    assert main(["export", str(source), str(tmp_path / "out.zip"), "--trust"]) == 2
    assert "the file must end in .rz" in capsys.readouterr().err
    assert main(["export", str(source), str(tmp_path / "plain"), "--trust"]) == 0
    assert (tmp_path / "plain.rz").is_file()  # a name without a suffix gets .rz


def test_a_checkpoints_recorded_options_are_checked_and_its_reporting_ones_left_out(
    safe_file, tmp_path, capsys
) -> None:
    """An evaluation plays a checkpoint under its recorded options: match options its game
    refuses are the file's fault, named so (they were blamed on the user's --option, or not
    checked), and how its training reported the games (reward, rendering) is not played."""
    bad = _with_meta(safe_file, tmp_path / "ts.rz", lambda m: m["options"].update(target_score="x"))
    assert (
        main(["evaluate", str(bad), "--opponents", "random", "--deals", "1", "--workers", "1"]) == 2
    )
    assert f"checkpoint {bad} has match options the game refuses: " in capsys.readouterr().err
    shown = _with_meta(
        safe_file, tmp_path / "render.rz", lambda m: m["options"].update(render_mode="ansi")
    )
    assert (
        main(["evaluate", str(shown), "--opponents", "random", "--deals", "1", "--workers", "1"])
        == 0
    )
    assert "random" in capsys.readouterr().out
    features = _with_meta(
        safe_file, tmp_path / "feat.rz", lambda m: m.update(features="ditch_actions")
    )
    with pytest.raises(
        CheckpointError,
        match=rf"checkpoint {re.escape(str(features))} has features 'ditch_actions' that do not build",
    ):
        make_agent(str(features), "knock_rummy", 2)


def test_an_evaluation_takes_a_checkpoints_match_caps_up_to_the_defaults(
    safe_file, tmp_path, capsys
) -> None:
    """A file recording matches to 2**31 - 1 points with no hand cap made ``evaluate`` play
    one match for ever, its memory growing: the caps a file records are taken up to the env's
    defaults (a warning names the file), and --option gives any."""
    endless = _with_meta(
        safe_file,
        tmp_path / "endless.rz",
        lambda m: m["options"].update(target_score=2**31 - 1, max_hands=None, max_turns=10**9),
    )
    args = ["evaluate", str(endless), "--opponents", "random", "--deals", "1", "--workers", "1"]
    with pytest.warns(UserWarning) as caught:
        assert main([*args, "--json", str(tmp_path / "e.json")]) == 0
    assert sorted(str(w.message) for w in caught) == [
        f"checkpoint {endless} records matches with max_hands: null; evaluated with the default "
        "cap, max_hands=1000 (--option max_hands=... plays its own)",
        f"checkpoint {endless} records matches with max_turns: 1000000000; evaluated with the "
        "default cap, max_turns=300 (--option max_turns=... plays its own)",
    ]
    played = json.loads((tmp_path / "e.json").read_text())["options"]
    assert played["max_hands"] == 1000 and played["max_turns"] == 300
    assert played["target_score"] == 2**31 - 1
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # given: no word
        argv = [*args, "--option", "max_hands=3", "--option", "max_turns=50"]
        assert main([*argv, "--json", str(tmp_path / "f.json")]) == 0
    played = json.loads((tmp_path / "f.json").read_text())["options"]
    assert played["max_hands"] == 3 and played["max_turns"] == 50
    # the defaults are the variant's: Ditch Rummy's hands run to 500 turns (its own 301 to
    # 500 was lowered to the 300 of the others, and the games changed)
    from rummyzoo.agents.checkpoints import capped_match_options

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for turns in (300, 450, 500):
            assert capped_match_options({"max_turns": turns}, "d.rz", "ditch_rummy") == {
                "max_turns": turns
            }
    with pytest.warns(
        UserWarning, match="max_turns: 501; evaluated with the default cap, max_turns=500"
    ):
        assert capped_match_options({"max_turns": 501}, "d.rz", "ditch_rummy") == {"max_turns": 500}
    with pytest.warns(UserWarning, match="default cap, max_turns=300"):
        assert capped_match_options({"max_turns": 450}, "k.rz", "knock_rummy") == {"max_turns": 300}


def test_what_a_file_says_reaches_the_terminal_escaped_and_cut_short(
    safe_file, tmp_path, capsys
) -> None:
    """A checkpoint's fields in an error (its rummyzoo version, a tensor's name, a layout's
    key) went to the terminal as they were: escape sequences that clear the screen, set the
    window's title or write "all good"; and a value of a megabyte gave a megabyte of error."""
    trap = "\x1b[2J\x1b]0;PWNED\x07all good\x9b\nrummyzoo evaluate: all good\n"
    newer = _with_meta(
        safe_file,
        tmp_path / "newer.rz",
        lambda m: m.update(format_version=2, rummyzoo_version=trap + "x" * 100_000),
    )
    args = ["evaluate", str(newer), "--opponents", "random", "--deals", "1", "--workers", "1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\x9b" not in err
    assert "written by rummyzoo \\x1b[2J\\x1b]0;PWNED\\x07all good\\x9b\n  rummyzoo" in err
    assert not any(line.startswith("rummyzoo evaluate: all good") for line in err.splitlines())
    assert len(err) < 4200 and err.rstrip().endswith("more characters)")


def test_a_checkpoint_name_that_is_no_file_says_what_it_is(tmp_path) -> None:
    """A pipe, a device or a dangling link named as a checkpoint was said not to exist."""
    import os

    os.mkfifo(tmp_path / "pipe.rz")
    (tmp_path / "gone.rz").symlink_to(tmp_path / "nowhere.rz")
    (tmp_path / "zero.rz").symlink_to("/dev/zero")
    for name, what in (
        ("pipe.rz", "is not a file (a pipe or a device)"),
        ("zero.rz", "is not a file (a pipe or a device)"),
        ("gone.rz", "is a link to nothing"),
        ("absent.rz", "does not exist"),
    ):
        with pytest.raises(ValueError, match=re.escape(name) + "'? " + re.escape(what)):
            make_agent(str(tmp_path / name), "knock_rummy", 2)
        with pytest.raises(CheckpointError, match=re.escape(f"{name} {what}")):
            load_policy(tmp_path / name, "knock_rummy", 2)


def test_a_damaged_zip_of_any_kind_is_refused_in_one_line(sb3_zip, tmp_path, capsys) -> None:
    """A member whose compressed data is damaged (zlib's error): one line naming the file (a
    traceback before)."""
    deflated = tmp_path / "deflated.zip"
    with (
        zipfile.ZipFile(sb3_zip) as old,
        zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as new,
    ):
        for name in old.namelist():
            new.writestr(name, old.read(name))
    data = bytearray(deflated.read_bytes())
    with zipfile.ZipFile(deflated) as archive:
        info = archive.getinfo("rummyzoo.json")  # the metadata, read before the rest
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start : start + 8] = b"\xff" * 8  # the deflate stream's first blocks
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(bytes(data))
    assert main(["export", str(damaged), str(tmp_path / "o.rz"), "--trust"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rummyzoo export: error: checkpoint {damaged} is truncated or damaged")
    assert err.count("\n") == 1 and not (tmp_path / "o.rz").exists()


def test_saving_refuses_metadata_that_its_own_game_contradicts(safe_file, tmp_path) -> None:
    """A model that holds no env of the project's (loaded from a file) is saved with the
    metadata it is given: metadata naming another player count, or options its game refuses,
    is refused before anything is written (it was written, and the loader refused it)."""
    from stable_baselines3.common.save_util import load_from_zip_file  # noqa: F401

    from rummyzoo.agents.checkpoints import save_checkpoint
    from rummyzoo.agents.safe import load_checkpoint

    network, meta = load_checkpoint(safe_file)
    model = type("Loaded", (), {"policy": network.policy, "get_env": lambda self: None})()
    out = tmp_path / "out.rz"
    good = {
        k: v for k, v in meta.items() if k not in ("format_version", "rummyzoo_version", "network")
    }
    save_checkpoint(model, out, good)  # as it is: saved, and it loads
    before = out.read_bytes()
    for change in ({"num_players": 3}, {"options": {**good["options"], "knock_max_deadwood": [1]}}):
        with pytest.raises((CheckpointError, ValueError)):
            save_checkpoint(model, out, {**good, **change})
        assert out.read_bytes() == before  # the good file is left as it was


def test_a_member_that_unpacks_to_many_times_its_size_is_refused_before_it_is_read(
    safe_file, tmp_path
) -> None:
    """A small file whose weights member unpacks to hundreds of MiB (zeros, packed 1000 to 1)
    is refused from its zip entry, before anything is unpacked: it was unpacked up to 1 GiB,
    then refused."""
    bomb = tmp_path / "bomb.rz"
    with zipfile.ZipFile(safe_file) as old, zipfile.ZipFile(bomb, "w") as new:
        new.writestr("rummyzoo.json", old.read("rummyzoo.json"))
        packed = zipfile.ZipInfo("model.safetensors")
        packed.compress_type = zipfile.ZIP_DEFLATED
        with new.open(packed, "w", force_zip64=True) as w:
            for _ in range(200):
                w.write(bytes(1 << 20))
    assert bomb.stat().st_size < (1 << 20)
    with zipfile.ZipFile(bomb) as archive:
        assert archive.getinfo("model.safetensors").file_size == 200 << 20
    with pytest.raises(CheckpointError, match=r"model\.safetensors unpacks to 209,715,200 bytes"):
        make_agent(str(bomb), "knock_rummy", 2)
    # the same file whose directory claims a packed size of a 16th of the unpacked one (one
    # byte more): that claim passed the check, and the member was unpacked
    data = bytearray(bomb.read_bytes())
    at = data.rfind(b"PK\x01\x02")  # the directory's entry of the last member, the weights
    assert data[at + 46 : at + 46 + 17] == b"model.safetensors"
    struct.pack_into("<I", data, at + 20, (200 << 20) // 16 + 1)
    bomb.write_bytes(bytes(data))
    with zipfile.ZipFile(bomb) as archive:
        assert archive.getinfo("model.safetensors").compress_size == (200 << 20) // 16 + 1
    with pytest.raises(CheckpointError, match=r"unpacks to 209,715,200 bytes from [0-9]{3},"):
        make_agent(str(bomb), "knock_rummy", 2)
