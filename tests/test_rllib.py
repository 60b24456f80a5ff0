"""The Ray RLlib backend on a real local Ray (2 CPUs, no dashboard): every variant trains,
resumes, exports shareable checkpoints that the arena plays; the masked module never picks an
illegal action; the errors a user meets are clear. Ray is the ``rllib`` extra: ``make test``
installs it and requires these tests (``RUMMYZOO_REQUIRE_RLLIB=1``); elsewhere they are skipped
when Ray is missing."""

from __future__ import annotations

import contextlib
import http.server
import itertools
import json
import os
import re
import socket
import sys
import threading
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from run_helpers import tb_steps

from rummyzoo.envs.registry import VARIANTS

try:
    import ray
except ImportError:  # pragma: no cover - the extra is not installed
    ray = None

if ray is None and os.environ.get("RUMMYZOO_REQUIRE_RLLIB") != "1":
    pytest.skip("Ray RLlib is not installed (pip install -e '.[rllib]')", allow_module_level=True)

from rummyzoo.agents.arena import run_arena
from rummyzoo.agents.checkpoints import CheckpointError, load_policy, read_meta
from rummyzoo.envs.core import IllegalActionError
from rummyzoo.training import rllib
from rummyzoo.training.config import RllibSettings, load_config
from rummyzoo.training.train import resume_run, train_from_file

pytestmark = pytest.mark.rllib  # make test runs these once, with the compiled kernels

ROOT = Path(__file__).resolve().parent.parent
SMOKE = str(ROOT / "configs" / "smoke_ppo.yaml")
SHORT = ["backend=rllib", "env_options.target_score=null"]


@pytest.fixture(scope="module")
def local_ray():
    assert ray is not None, (
        "Ray RLlib must be installed for these tests (pip install -e '.[rllib]')"
    )
    # the test process's own SIGTERM handler kept (ray.init puts Ray's over it, which a later
    # test's SIGTERM would meet: it exits the process)
    with rllib._own_sigterm():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


# ---------------------------------------------------------------------------- the env
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_match_env_is_turn_based_and_its_margin_zero_sum(variant):
    env = rllib.MatchEnv(
        {
            "variant": variant, "num_players": 2, "env_options": {"target_score": None},
            "reward": "margin", "reward_scale": 1.0, "features": None, "seed": 3,
        }
    )  # fmt: skip
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=5)
    totals = dict.fromkeys(env.agents, 0.0)
    steps = 0
    while True:
        assert len(obs) == 1  # one seat acts at a time
        ((agent, o),) = obs.items()
        assert set(o) == {"observations", "raw", "action_mask"} and o["action_mask"].any()
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terminated, truncated, infos = env.step({agent: action})
        assert set(rewards) == set(env.agents)  # a reward with every observation
        for a, r in rewards.items():
            totals[a] += r
        steps += 1
        if terminated["__all__"] or truncated["__all__"]:
            break
    assert set(obs) == set(env.agents) and set(infos) == set(env.agents)
    facts = [infos[a]["rummyzoo"] for a in env.agents]
    # The margin reward is zero-sum: each seat's points minus the other's.
    margin = facts[0]["points"] - facts[1]["points"]
    assert [totals[a] for a in env.agents] == pytest.approx([margin, -margin])
    assert sum(f["decisions"] for f in facts) == steps
    with pytest.raises(ValueError, match="no action for"):
        env.reset(seed=1)
        env.step({"nobody": 0})


def test_match_env_refuses_what_is_no_action_id():
    """A float or a bool is refused, as the AEC env refuses it, and nothing is played (it was
    cut to an int and played: 0.9 as action 0, True as 1); a numpy integer is taken."""
    from rummyzoo.envs.core import IllegalActionError

    config = {
        "variant": "knock_rummy", "num_players": 2, "env_options": {}, "reward": "points",
        "reward_scale": 100.0, "features": None, "seed": 0,
    }  # fmt: skip
    env = rllib.MatchEnv(config)
    obs, _ = env.reset(seed=1)
    ((agent, o),) = obs.items()
    legal = int(np.flatnonzero(o["action_mask"])[0])
    for bad in (0.9, float(legal), True, np.float32(legal), np.bool_(True), "0"):
        with pytest.raises(IllegalActionError, match="is not an action id"):
            env.step({agent: bad})
        assert env.match.decisions == 0
    env.step({agent: np.int64(legal)})
    assert env.match.decisions == 1


def test_match_env_margins_are_against_the_other_side():
    """In team play a hand's margin is against the best seat of the other side, as the other
    training envs measure it (the partner was counted as a rival)."""
    config = {
        "variant": "ditch_rummy", "num_players": 4,
        "env_options": {"teams": True, "target_score": None}, "reward": "points",
        "reward_scale": 100.0, "features": None, "seed": 0,
    }  # fmt: skip
    env = rllib.MatchEnv(config)
    groups = env.match.game.score_groups
    partner_on_top = 0
    for seed in range(60):
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while True:
            ((agent, o),) = obs.items()
            action = int(rng.choice(np.flatnonzero(o["action_mask"])))
            obs, _, terminated, truncated, infos = env.step({agent: action})
            if terminated["__all__"] or truncated["__all__"]:
                break
        points = list(env.match.state.points)
        for s, a in enumerate(env.agents):
            rivals = [p for i, p in enumerate(points) if groups[i] != groups[s]]
            assert infos[a]["rummyzoo"]["margins"] == [points[s] - max(rivals)]
        partner = next(i for i in range(4) if i != 0 and groups[i] == groups[0])
        partner_on_top += points[partner] > max(points[i] for i in range(4) if i != partner)
    assert partner_on_top  # (the case where counting the partner differs was played)


def test_learner_module_never_samples_an_illegal_action(local_ray):
    import torch as th
    from ray.rllib.core.columns import Columns

    config = load_config(SMOKE, SHORT)
    env = rllib.MatchEnv(rllib.env_config_of(config))
    learner_cls, _ = rllib.module_classes()
    module = learner_cls(
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"run_config": config.model_dump(mode="json")},
    )
    masks = np.zeros((64, env.match.game.num_actions), dtype=np.float32)
    rng = np.random.default_rng(1)
    for row in masks:
        row[rng.choice(len(row), size=3, replace=False)] = 1.0
    obs = {
        "observations": th.as_tensor(rng.normal(size=(64, env.observation_spaces["player_0"]["observations"].shape[0])), dtype=th.float32),
        "action_mask": th.as_tensor(masks),
    }  # fmt: skip
    for forward in (module.forward_exploration, module.forward_inference):
        logits = forward({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
        dist = module.get_exploration_action_dist_cls().from_logits(logits)
        for _ in range(20):
            actions = dist.sample().numpy()
            assert masks[np.arange(64), actions].all()


BAD_AGENTS = """
import numpy as np


class Illegal:
    name = "illegal"

    def reset(self, seat=None):
        pass

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(~action_mask)[0])


class Raising(Illegal):
    name = "raising"

    def act(self, observation, action_mask, rng):
        raise ValueError("my bug")
"""


def test_an_opponent_module_names_the_agent_that_fails(tmp_path, monkeypatch):
    """A heuristic or plugin opponent on RLlib that chooses an illegal action, or whose own code
    raises, is named in the error (the env would refuse the action without saying whose)."""
    import torch as th
    from ray.rllib.core.columns import Columns

    (tmp_path / "rz_bad_agents.py").write_text(BAD_AGENTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    config = load_config(SMOKE, SHORT)
    env = rllib.MatchEnv(rllib.env_config_of(config))
    obs, _ = env.reset(seed=0)
    (seat_obs,) = obs.values()
    batch = {Columns.OBS: {k: th.as_tensor(v[None]) for k, v in seat_obs.items()}}
    _, agent_cls = rllib.module_classes()

    def module(name):
        return agent_cls(
            observation_space=env.observation_spaces["player_0"],
            action_space=env.action_spaces["player_0"],
            model_config={
                "agent": name, "variant": config.variant, "num_players": config.num_players,
                "env_options": dict(config.env_options),
            },
        )  # fmt: skip

    # its draws follow the process's seeded state (an env runner seeds it from the run's seed
    # and its index), which they leave as it was; they used to follow the process id
    draws, saved = [], np.random.get_state()
    for seed in (5, 5, 6):
        np.random.seed(seed)
        state = np.random.get_state()[1].copy()
        draws.append(module("random").rng.integers(2**62, size=4).tolist())
        assert (np.random.get_state()[1] == state).all()
    assert draws[0] == draws[1] != draws[2]
    np.random.seed(5)
    assert module("knock.greedy").rng.integers(2**62, size=4).tolist() != draws[0]
    np.random.set_state(saved)

    legal = module("random").forward_inference(batch)[Columns.ACTIONS]
    assert seat_obs["action_mask"][int(legal[0])] == 1
    with pytest.raises(IllegalActionError, match=r"agent 'rz_bad_agents:Illegal' \(an opponent "
                       r"of the learner on RLlib\) chose an illegal action: action \d+ is not "
                       r"legal now"):  # fmt: skip
        module("rz_bad_agents:Illegal").forward_inference(batch)
    with pytest.raises(ValueError) as raised:
        module("rz_bad_agents:Raising").forward_inference(batch)
    assert str(raised.value) == "my bug"
    assert raised.value.__notes__ == [
        "raised by agent 'rz_bad_agents:Raising' (an opponent of the learner on RLlib) while "
        "choosing its action"
    ]


# ---------------------------------------------------------------------------- training
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_rllib_trains_resumes_and_exports_every_variant(
    tmp_path, local_ray, variant, monkeypatch, capsys
):
    from rummyzoo.agents.safe import load_checkpoint
    from rummyzoo.cli.main import main

    run = tmp_path / "run"
    first = train_from_file(SMOKE, [*SHORT, f"variant={variant}"], str(run), ["t"], progress="off")
    assert first["backend"] == "rllib" and first["steps"] >= 256
    for name in ("config.yaml", "command.txt", "version.json", "state.json", "summary.json"):
        assert (run / name).exists(), name
    assert (run / "checkpoints" / "rllib").is_dir()
    tags = set(tb_steps(run))
    for tag in (
        "eval/random/win_rate", "eval/random/win_rate_low", "charts/points_per_hand",
        "charts/train_win_rate", "selfplay/pool_size", "rating/learner", "train/policy_loss",
    ):  # fmt: skip
        assert f"run_1/{tag}" in tags, tag
    if variant == "knock_rummy":  # short hands: games against the snapshots for sure
        assert "run_1/selfplay/rating" in tags
    assert list((run / "games").glob("sample_*.json"))
    if variant == "knock_rummy":
        # RLlib's checkpoint damaged, or its learner's part gone: refused by name, the folder
        # left as it was (RLlib itself raises on the first, and ignores the second)
        import shutil

        for damage, message in (
            ("truncated", r"checkpoints/rllib is damaged \(EOFError"),
            ("missing", r"does not give back the learner of last.rz"),
        ):
            copy = tmp_path / damage
            shutil.copytree(run, copy)
            saved = copy / "checkpoints" / "rllib"
            if damage == "truncated":
                (saved / "algorithm_state.pkl").write_bytes(b"")
            else:
                shutil.rmtree(saved / "learner_group" / "learner" / "rl_module" / "learner")
            files = sorted(p.relative_to(copy) for p in copy.rglob("*"))
            with pytest.raises(ValueError, match=message):
                longer = [f"n_timesteps={first['steps'] + 300}"]
                resume_run(str(copy), longer, ["t", "--resume"], progress="off")
            assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == files
    # Resume: it continues from RLlib's checkpoint, nothing evaluated or logged twice.
    before = json.loads((run / "state.json").read_text())
    target = first["steps"] + 300
    monkeypatch.chdir(tmp_path)  # resumed by a relative path, as a user types it
    capsys.readouterr()
    summary = resume_run("run", [f"n_timesteps={target}"], ["t", "--resume"], progress="off")
    assert f"resuming run from its checkpoint at step {first['steps']:,}" in capsys.readouterr().err
    state = json.loads((run / "state.json").read_text())
    assert summary["steps"] >= target
    assert summary["steps_this_session"] == summary["steps"] - first["steps"]
    evals = [e["steps"] for e in state["eval_history"]]
    assert evals[: len(before["eval_history"])] == [e["steps"] for e in before["eval_history"]]
    assert evals == sorted(set(evals)) and evals[-1] == summary["steps"]
    assert all((run / p["path"]).exists() for p in state["pool"])
    for tag, steps in tb_steps(run).items():
        assert steps == sorted(set(steps)), f"{tag} logged a step twice: {steps}"
    assert len((run / "command.txt").read_text().splitlines()) == 2
    # Stopped after its last checkpoint but before its summary: the next resume writes it.
    (run / "summary.json").unlink()
    again = resume_run("run", [f"n_timesteps={target}"], ["t", "--resume"], progress="off")
    written = json.loads((run / "summary.json").read_text())
    assert written == again and written["backend"] == "rllib"
    for key in ("steps", "evaluations", "best", "best_eval", "last"):
        assert written[key] == summary[key], key
    # Export: the learner of RLlib's checkpoint, the weights of last.rz (saved with it).
    rllib_dir = run / "checkpoints" / "rllib"
    out = tmp_path / "export.rz"
    assert main(["export", str(rllib_dir), str(out)]) == 2  # --trust is needed
    assert main(["export", str(rllib_dir), str(out), "--trust"]) == 0
    if variant == "knock_rummy":  # its default file, beside the run's checkpoints, twice
        capsys.readouterr()
        for again in (False, True):
            assert main(["export", str(rllib_dir), "--trust"]) == 0
            printed = capsys.readouterr().out
            assert printed.startswith(f"wrote {run / 'checkpoints' / 'rllib_export.rz'}")
            assert ("(it replaced the file that was there)" in printed) == again
    exported, meta = load_checkpoint(out)
    last, _ = load_checkpoint(run / "checkpoints" / "last.rz")
    assert meta["steps"] == summary["steps"] and meta["variant"] == variant
    assert meta["algo"] == "ppo" and read_meta(out)["variant"] == variant
    for (name, a), (_, b) in zip(
        exported.policy.state_dict().items(), last.policy.state_dict().items(), strict=True
    ):
        assert (a == b).all(), name
    # The export plays in the arena; another variant refuses it, by name.
    assert load_policy(out, variant, 2).name == "export.rz"
    result = run_arena(variant, 2, [str(out), "random"], deals=2, seed=3, workers=1)
    assert result.games == 4
    other = next(v for v in sorted(VARIANTS) if v != variant)
    with pytest.raises(CheckpointError, match="variant"):
        load_policy(out, other, 2)


def test_starting_ray_keeps_this_process_sigterm_handler():
    """``ray.init`` installs Ray's own SIGTERM handler (a bare exit, which a run's agents would
    report as their failure); starting Ray for a run keeps the command's."""
    import subprocess
    import sys

    script = (
        "import signal\n"
        "from rummyzoo.training import rllib\n"
        "from rummyzoo.training.config import RllibSettings\n"
        "def mine(signum, frame): pass\n"
        "signal.signal(signal.SIGTERM, mine)\n"
        "ray, started = rllib.start_ray(RllibSettings(num_cpus=1))\n"
        "print('kept' if signal.getsignal(signal.SIGTERM) is mine else 'replaced', started)\n"
        "ray.shutdown()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=180, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["kept", "True"], done.stdout + done.stderr[-2000:]


# ---------------------------------------------------------------------------- errors
def test_rllib_errors_are_clear(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ValueError, match=r"pip install 'rummyzoo\[rllib\]'"):
        rllib.require_ray()
    # the benchmark too, before RLlib's own imports (a traceback of them before)
    config = load_config(Path(__file__).parents[1] / "configs" / "knock_rllib.yaml")
    with pytest.raises(ValueError, match=r"pip install 'rummyzoo\[rllib\]'"):
        rllib.bench_rllib(config, [0], iterations=1)
    monkeypatch.undo()
    with pytest.raises(ValueError, match=r"cannot reach the Ray cluster at '127\.0\.0\.1:9'"):
        rllib.check_reachable("127.0.0.1:9", timeout=2)
    with pytest.raises(ValueError, match=r"need 5 CPUs .* the Ray cluster has 2"):
        rllib.check_resources(RllibSettings(num_env_runners=5), {"CPU": 2})
    with pytest.raises(ValueError, match="need 1 GPU"):
        rllib.check_resources(RllibSettings(num_gpus_per_learner=1), {"CPU": 2})
    rllib.check_resources(RllibSettings(num_env_runners=2), {"CPU": 2})  # fits


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["backend=rllib", "algo=dqn", "hyperparams=null"], "the rllib backend trains algo: ppo"),
        (["rllib.num_env_runners=2"], "rllib settings are for backend: rllib"),
        (["backend=rllib", "league.sampling=pfsp"], "league sampling pfsp runs on backend: sb3"),
        (["backend=rllib", "league.tables=distinct"], "league tables: distinct runs on backend"),
        (["backend=rllib", "rllib.bogus=1"], "unknown key 'bogus' in rllib"),
        (["backend=rllib", "rllib.num_env_runners=-1"], "num_env_runners"),
        (["backend=rllib", "rllib.address=auto", "rllib.num_cpus=2"], "drop one of them"),
        (["backend=rllib", "shaping=knock_deadwood"], "shaping .* runs on backend: sb3"),
        (["backend=rllib", "learner_seat=0"], "learner_seat 0: on the rllib backend"),
        (["backend=rllib", "hyperparams.target_kl=0.02"], "target_kl stops the sb3 backend"),
        # accepted and ignored before: the learner stayed on the CPU, the logs every iteration
        (["backend=rllib", "log_interval=4"], "log_interval 4 spaces stable-baselines3's logs"),
        # RLlib refused it only once Ray had started, the run folder made
        (
            ["backend=rllib", "n_envs=4", "hyperparams.n_steps=4", "hyperparams.batch_size=64"],
            r"batch_size 64 is larger than the rllib backend's train batch, n_steps x n_envs x "
            r"num_players = 4 x 4 x 2 = 32",
        ),
    ],
)
def test_rllib_config_errors(overrides, message):
    with pytest.raises(ValueError, match=message):
        load_config(SMOKE, overrides)


def test_two_opponents_of_one_module_id_are_refused(tmp_path):
    """``a/x.rz`` and ``a_x.rz`` made one RLlib module: the first never played, the second
    took both weights."""
    from run_helpers import untrained_checkpoint

    (tmp_path / "a").mkdir()
    first = untrained_checkpoint(tmp_path / "a" / "x.rz")
    second = untrained_checkpoint(tmp_path / "a_x.rz")
    opponents = f"opponents=[{{name: {first}, weight: 1}}, {{name: {second}, weight: 1}}]"
    with pytest.raises(ValueError, match="are one RLlib module"):
        load_config(SMOKE, ["backend=rllib", opponents])
    load_config(SMOKE, [opponents])  # (stable-baselines3 plays them apart)


def test_a_rollout_fragment_length_is_refused_at_load_where_rllib_refuses_it():
    """A fragment whose whole rounds overshoot the train batch by more than a tenth validated,
    and RLlib refused it once Ray had started, in the words of its Python API. The config's
    check gives RLlib's own verdict over a grid of settings (RLlib's check itself, asked on
    the same numbers)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    with pytest.raises(ValueError, match=r"rllib.rollout_fragment_length 100 x 1 sampling env"):
        load_config(SMOKE, ["backend=rllib", "rllib.rollout_fragment_length=100"])
    agreed = refused = 0
    for fragment, runners, per_runner, learners in itertools.product(
        (8, 60, 64, 100, 128, 200, 256), (0, 1, 3), (1, 2), (0, 2, 3)
    ):
        overrides = [
            "backend=rllib",
            f"rllib={{rollout_fragment_length: {fragment}, num_env_runners: {runners}, "
            f"num_envs_per_env_runner: {per_runner}, num_learners: {learners}}}",
        ]
        try:
            config = load_config(SMOKE, overrides)
        except ValueError as exc:
            assert "rollout_fragment_length" in str(exc), str(exc)
            ours = False
            # a fragment it suggests fits (rounded down, the suggestion needed a second round)
            suggested = re.search(r"'auto' or (\d+)$", str(exc))
            if suggested:
                fixed = overrides[1].replace(f"length: {fragment},", f"length: {suggested[1]},")
                load_config(SMOKE, [overrides[0], fixed])
        else:
            ours = True
        per_learner, _ = rllib.learner_batches(config) if ours else (None, None)
        if per_learner is None:  # the batch per learner as the run would set it
            players, n_envs, n_steps = 2, 2, 64  # configs/smoke_ppo.yaml
            per_learner = -(-(n_steps * n_envs * players) // max(1, learners))
        theirs = PPOConfig().env_runners(
            num_env_runners=runners,
            num_envs_per_env_runner=per_runner,
            rollout_fragment_length=fragment,
        )
        theirs = theirs.learners(num_learners=learners).training(
            train_batch_size_per_learner=per_learner
        )
        try:
            theirs.validate_train_batch_size_vs_rollout_fragment_length()
        except ValueError:
            accepted = False
        else:
            accepted = True
        assert ours == accepted, (fragment, runners, per_runner, learners)
        agreed += 1
        refused += not ours
    assert agreed == 126 and 0 < refused < agreed


@pytest.mark.parametrize("value", ["1.5", "0", "[1]", "x", ".inf"])
def test_a_bad_rollout_fragment_length_is_one_error(value):
    """Refused in one message for both forms ('auto' or an int), whatever the value (1.5 gave
    pydantic's two, one per form)."""
    with pytest.raises(ValueError) as caught:
        load_config(SMOKE, ["backend=rllib", f"rllib.rollout_fragment_length={value}"])
    message = str(caught.value)
    assert "must be 'auto' or a positive int" in message and "2 errors" not in message


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("shaping=knock_deadwood", "shaping .* runs on backend: sb3"),
        ("learner_seat=0", "learner_seat 0: on the rllib backend"),
        ("algo=dqn", "the rllib backend trains algo: ppo"),
    ],
)
def test_a_refused_backend_setting_adds_no_error_about_the_backend(override, message):
    """The config has rllib settings: a refusal of the backend must not add an error saying
    that the backend is sb3."""
    with pytest.raises(ValueError, match=message) as err:
        load_config(Path("configs/knock_rllib.yaml"), [override])
    assert "rllib settings are for backend" not in str(err.value)


def test_rllib_config_refuses_a_device_that_the_learner_would_not_use(monkeypatch):
    """device served only the warm start on RLlib (accepted, and the learner stayed on the
    CPU): a GPU for it asks for one for the learner as well. (Checked as on a machine with
    CUDA.)"""
    from rummyzoo.training import config as config_module

    monkeypatch.setattr(config_module, "device_problem", lambda device: None)
    monkeypatch.setattr(config_module, "_cuda_available", lambda: True)
    for device in ("cuda", "auto"):
        with pytest.raises(ValueError, match=f"device '{device}' would serve only the warm"):
            load_config(SMOKE, ["backend=rllib", f"device={device}"])
    both = load_config(SMOKE, ["backend=rllib", "device=cuda", "rllib.num_gpus_per_learner=1"])
    assert both.device == "cuda"
    monkeypatch.setattr(config_module, "_cuda_available", lambda: False)
    assert load_config(SMOKE, ["backend=rllib", "device=auto"]).device == "auto"


@contextlib.contextmanager
def _listener(serve, host="127.0.0.1"):
    """A local TCP listener whose each connection ``serve(conn)`` handles (None: it accepts
    nothing and says nothing); its ``host:port`` (an IPv6 host in brackets)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server = socket.create_server((host, 0), family=family)
    server.settimeout(0.1)  # the loop looks for its stop between waits
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(5)  # a client that neither sends nor closes ends it
                with contextlib.suppress(OSError):
                    serve(conn)

    thread = threading.Thread(target=loop, daemon=True) if serve else None
    if thread:
        thread.start()
    try:
        name = f"[{host}]" if family == socket.AF_INET6 else host
        yield f"{name}:{server.getsockname()[1]}"
    finally:
        stop.set()
        if thread:
            thread.join(10)
            assert not thread.is_alive(), "the listener's thread did not stop"
        server.close()


_SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # an empty SETTINGS frame


def _http2_settings(conn):
    conn.recv(64)
    conn.sendall(_SETTINGS)


def _settings_in_two(conn):  # the frame's header in two writes
    conn.recv(64)
    conn.sendall(_SETTINGS[:3])
    time.sleep(0.2)
    conn.sendall(_SETTINGS[3:])


def _stops_short(conn):
    conn.recv(64)
    conn.sendall(_SETTINGS[:3])
    time.sleep(1.5)


def test_rllib_address_that_is_no_ray_cluster_is_refused_at_once(local_ray, monkeypatch):
    """``ray.init`` waits for ever on an address where something other than Ray listens
    (Ray's dashboard, port 8265, is the usual slip): the address is refused, saying what
    answered, within the check's timeout."""
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        address = f"127.0.0.1:{web.server_address[1]}"
        with pytest.raises(
            ValueError,
            match=r"not a Ray cluster's address: a web server answered .*not the dashboard's"
            r" \(port 8265\)",
        ):
            rllib.check_reachable(address, timeout=5)
        # through a run's settings too, before Ray is started
        config = load_config(SMOKE, [*SHORT, f"rllib.address=ray://{address}"])
        monkeypatch.setattr(ray, "is_initialized", lambda: False)
        monkeypatch.setattr(ray, "init", lambda **_: pytest.fail("ray.init was called"))
        with pytest.raises(ValueError, match=r"a web server answered"):
            rllib.start_ray(config.rllib)
        monkeypatch.undo()
    finally:
        web.shutdown()
        web.server_close()
    with (  # an HTTP/1.1 server (Ray's dashboard is one) refusing the preface
        _listener(
            lambda conn: (conn.recv(64), conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n"))
        ) as web11,
        pytest.raises(ValueError, match=r"a web server answered \(HTTP/1\.1 \.\.\.\)"),
    ):
        rllib.check_reachable(web11, timeout=2)
    with _listener(None) as silent:  # connects (the backlog), never answers
        started = time.monotonic()
        with pytest.raises(
            ValueError, match=r"not a Ray cluster's address: no reply within 0\.5 s"
        ):
            rllib.check_reachable(silent, timeout=0.5)
        assert time.monotonic() - started < 5
    with (
        _listener(lambda conn: None) as closing,
        pytest.raises(ValueError, match="it closed the connection"),
    ):
        rllib.check_reachable(closing, timeout=2)
    with (
        _listener(lambda conn: (conn.recv(64), conn.sendall(b"\x00" * 16))) as other,
        pytest.raises(ValueError, match="it answered in another protocol"),
    ):
        rllib.check_reachable(other, timeout=2)
    with (
        _listener(
            lambda conn: (conn.recv(64), conn.sendall(b"\x15\x03\x01\x00\x02\x02\x32"))
        ) as tls,
        pytest.raises(ValueError, match=r"answered in TLS \(set RAY_USE_TLS=1"),
    ):
        rllib.check_reachable(tls, timeout=2)
    with (
        _listener(_stops_short) as short,
        pytest.raises(ValueError, match="its reply stopped short"),
    ):
        rllib.check_reachable(short, timeout=0.5)
    with _listener(_http2_settings) as grpc_like:
        rllib.check_reachable(grpc_like, timeout=2)  # an HTTP/2 server passes
    with _listener(_settings_in_two) as grpc_like:
        rllib.check_reachable(f"ray://{grpc_like}", timeout=2)  # read across two packets
    try:
        ipv6 = _listener(_http2_settings, "::1")
        address = ipv6.__enter__()
    except OSError:  # no IPv6 loopback on this machine
        pass
    else:
        try:
            assert address.startswith("[::1]:")
            rllib.check_reachable(address, timeout=2)
            rllib.check_reachable(f"ray://{address}", timeout=2)
        finally:
            ipv6.__exit__(None, None, None)
    monkeypatch.setenv("RAY_USE_TLS", "1")  # with TLS on, only the connection is checked
    with _listener(None) as silent:
        rllib.check_reachable(silent, timeout=0.5)
    monkeypatch.setenv("RAY_USE_TLS", "no")  # off, as Ray reads it: the reply is checked
    with (
        _listener(None) as silent,
        pytest.raises(ValueError, match="no reply within"),
    ):
        rllib.check_reachable(silent, timeout=0.5)
    monkeypatch.delenv("RAY_USE_TLS")
    # the real cluster's address (its GCS) passes
    rllib.check_reachable(ray.get_runtime_context().gcs_address, timeout=5)


def test_rllib_refuses_num_cpus_when_ray_address_joins_a_cluster(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    config = load_config(SMOKE, [*SHORT, "rllib.num_cpus=2"])
    with pytest.raises(ValueError, match=r"num_cpus sizes the local Ray.*RAY_ADDRESS"):
        rllib.start_ray(config.rllib)


def test_rllib_refuses_a_config_larger_than_the_local_machine(tmp_path):
    with pytest.raises(ValueError, match="the Ray cluster has 2"):
        train_from_file(
            SMOKE, [*SHORT, "rllib.num_env_runners=3", "rllib.num_cpus=2"], str(tmp_path / "r"),
            ["t"], progress="off",
        )  # fmt: skip
    assert not (tmp_path / "r").exists()  # refused before anything was written


def test_every_env_of_every_runner_plays_its_own_games():
    from ray.rllib.env.env_context import EnvContext

    config = rllib.env_config_of(load_config(SMOKE, SHORT))
    first = {}
    for worker, vector in [(0, 0), (1, 0), (1, 1), (2, 0)]:
        env = rllib.MatchEnv(EnvContext(config, worker_index=worker, vector_index=vector))
        (obs,) = env.reset()[0].values()
        first[(worker, vector)] = obs["raw"].tobytes()
    assert len(set(first.values())) == 4  # four different first deals
    again = rllib.MatchEnv(EnvContext(config, worker_index=1, vector_index=1))
    (obs,) = again.reset()[0].values()
    assert obs["raw"].tobytes() == first[(1, 1)]  # the same stream for the same env
    # and as RLlib seeds them at their first reset: env i of runner w gets RLlib's seed + w +
    # i, so env 1 of runner 1 gets the seed of env 0 of runner 2; and RLlib builds every env of
    # a runner from one context, whose vector_index is 0
    seeded = {}
    for run_seed, worker, env_index in itertools.product((0, 1), (1, 2), (0, 1, 2)):
        run = rllib.env_config_of(load_config(SMOKE, SHORT), seed=run_seed)
        env = rllib.MatchEnv(EnvContext(run, worker_index=worker, vector_index=0))
        decks = []
        for k in range(3):
            first_seed = rllib.rllib_seed(run_seed) + worker + env_index
            env.reset(seed=first_seed if k == 0 else None)
            decks.append(env.match.deck.tobytes())
        seeded[(run_seed, worker, env_index)] = tuple(decks)
    assert len(set(seeded.values())) == 12, [
        k for k in seeded if list(seeded.values()).count(seeded[k]) > 1
    ]


def _runner(seed: int, worker: int, envs: int = 3) -> Any:
    """A local env runner of the RLlib smoke config, as RLlib builds one for runner ``worker``
    of a run of ``seed``."""
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    config = load_config(SMOKE, [*SHORT, f"rllib.num_envs_per_env_runner={envs}"])
    slots = {s: 0 for s in rllib.slot_ids(config)}
    algorithm = rllib.algorithm_config(config, slots, seed=seed)
    algorithm.env_runners(rollout_fragment_length=20)
    rllib.set_league(rllib.league_entries(config, slots))
    try:
        return MultiAgentEnvRunner(config=algorithm, worker_index=worker, num_workers=2)
    finally:
        rllib.clear_league()


def test_runs_of_neighbouring_seeds_deal_other_games(monkeypatch):
    # RLlib's real env runners: runs of seeds 7 and 8, runners 1 and 2, three envs each; every
    # env's first matches are its own (env i + 1 of the run of 7 dealt env i's of the run of 8)
    cls = rllib.match_env_class()
    reset = cls.reset
    decks: dict[int, list[bytes]] = {}

    def logged(self, **kw):
        out = reset(self, **kw)
        decks.setdefault(id(self), []).append(self.match.deck.tobytes())
        return out

    monkeypatch.setattr(cls, "reset", logged)
    played = {}
    for seed, worker in itertools.product((7, 8), (1, 2)):
        decks.clear()
        runner = _runner(seed, worker)
        runner.sample(num_timesteps=300, random_actions=False)
        for i, env in enumerate(runner.env.envs):
            played[(seed, worker, i)] = decks[id(env.unwrapped)][0]
        runner.stop()
    assert len(set(played.values())) == 12, [
        k for k in played if list(played.values()).count(played[k]) > 1
    ]


def test_runners_of_runs_of_neighbouring_seeds_seed_rllib_apart():
    # RLlib seeds runner w's numpy, torch and random with its seed + w: given the run's seed,
    # runner w + 1 of a run drew what runner w of the run of the next seed drew
    config = load_config(SMOKE, SHORT)
    firsts = []
    for seed in [*range(2000), 2**32 - 64, 2**32 - 1]:
        given = rllib.algorithm_config(config, {}, seed).seed if seed < 3 else None
        first = rllib.rllib_seed(seed)
        assert given in (None, first)
        assert first >= 0 and first + 64 + 10**6 < 2**32  # runners (and evaluation's) in range
        firsts.append(first)
    firsts.sort()
    assert min(b - a for a, b in itertools.pairwise(firsts)) > 64  # 64 runners each, apart


def test_a_run_of_the_largest_seed_samples_on_its_env_runners():
    # numpy's seed is 32 bits: RLlib seeded runner 1 of a run of seed 2**32 - 1 with 2**32 and
    # the runner failed to start
    runner = _runner(2**32 - 1, 1)
    try:
        episodes = runner.sample(num_timesteps=60, random_actions=False)
    finally:
        runner.stop()
    assert sum(len(e) for e in episodes) >= 60


def test_a_seeded_env_runner_plays_the_same_episodes_again():
    # the seats and opponents of its episodes too (they were drawn from RLlib's episode ids,
    # random ones): the same seed and runner give the same games, another runner others
    def episodes(seed: int, worker: int) -> list[tuple]:
        runner = _runner(seed, worker)
        out = []
        for _ in range(3):
            for episode in runner.sample(num_timesteps=60, random_actions=False):
                for agent, part in sorted(episode.agent_episodes.items()):
                    actions = tuple(int(a) for a in part.get_actions())
                    rewards = tuple(float(r) for r in part.get_rewards())
                    out.append((agent, part.module_id, actions, rewards))
        runner.stop()
        return out

    first = episodes(3, 1)
    assert len({module for _, module, _, _ in first}) > 1  # the learner and opponents
    assert episodes(3, 1) == first
    assert episodes(3, 2) != first


def test_every_episode_seats_one_learner_and_its_seats_are_dropped_at_its_end():
    # (over the chunks of each episode that sampling returns, which hold the seats that moved)
    runner = _runner(5, 1, envs=4)
    before = set(rllib._SEATED)  # the episodes other runners of this process left in flight
    seats: dict[str, dict[str, str]] = {}
    ended = set()
    try:
        for _ in range(4):
            for chunk in runner.sample(num_timesteps=200, random_actions=False):
                mapped = seats.setdefault(chunk.id_, {})
                for agent in chunk.agent_ids:
                    module = chunk.module_for(agent)
                    assert mapped.setdefault(agent, module) == module
                if chunk.is_done:
                    ended.add(chunk.id_)
    finally:
        runner.stop()
    assert len(ended) > 4
    for mapped in seats.values():
        learners = list(mapped.values()).count(rllib.LEARNER)
        assert learners == 1 if len(mapped) == 2 else learners <= 1, mapped
    assert len(set(rllib._SEATED) - before) <= 4  # the episodes in flight, one an env


def test_a_seeded_rllib_run_is_the_same_run_in_another_process(tmp_path):
    # each run in a process of its own, as a user starts them, with another order of Python's
    # sets (PYTHONHASHSEED): the modules were built in the order of a set of their ids, each
    # drawing its first weights from the one torch stream, so two runs of one seed differed
    import subprocess

    networks = []
    for name, hashing in (("a", "1"), ("b", "2")):
        command = [sys.executable, "-m", "rummyzoo.cli.main", "train", SMOKE, "--run-dir"]
        command += [str(tmp_path / name), "--quiet"]
        for override in [*SHORT, "n_timesteps=300", "evaluation.at_start=false"]:
            command += ["--set", override]
        environment = {**os.environ, "PYTHONHASHSEED": hashing}
        subprocess.run(command, check=True, capture_output=True, timeout=300, env=environment)
        with zipfile.ZipFile(tmp_path / name / "checkpoints" / "last.rz") as rz:
            networks.append(rz.read("model.safetensors"))
    assert networks[0] == networks[1]


def test_a_restarted_env_runner_draws_from_the_runs_league(local_ray):
    # RLlib restarts a failed env runner (restart_failed_env_runners, its default) and gives it
    # back its modules' weights, not the league this process set in it: its episodes drew
    # their opponents from the league the run started with
    config = load_config(SMOKE, [*SHORT, "rllib.num_env_runners=1"])
    slots = {s: 0 for s in rllib.slot_ids(config)}
    algorithm = rllib.algorithm_config(config, slots)
    algorithm.env_runners(rollout_fragment_length=20)
    algorithm.training(train_batch_size_per_learner=40, minibatch_size=20, num_epochs=1)
    algo = algorithm.build_algo()
    try:
        league = [(m, 2.0 + i) for i, (m, _) in enumerate(rllib.league_entries(config, slots))]
        rllib.push_league(algo, league)
        group = algo.env_runner_group

        def leagues() -> list[Any]:
            return group.foreach_env_runner(lambda runner: rllib._LEAGUE, local_env_runner=False)

        assert leagues() == [league]
        (actor,) = group._worker_manager.actors().values()
        ray.kill(actor, no_restart=False)  # as a crash: Ray starts the actor again
        for _ in range(6):  # the iteration that finds it dead, then the one that restores it
            algo.train()
            if group.num_healthy_remote_workers() and algo._counters.get(
                "total_num_restored_workers"
            ):
                break
        assert algo._counters["total_num_restored_workers"] == 1
        assert leagues() == [league]
    finally:
        algo.stop()
        rllib.clear_league()


def test_rllib_module_ids_of_checkpoint_opponents():
    from types import SimpleNamespace

    opponent = SimpleNamespace(name="runs/a:b/best.rz", weight=1.0)  # a checkpoint's path
    config = SimpleNamespace(opponents=[opponent])
    assert rllib.module_id("runs/a:b/best.rz") == "runs_a_b_best.rz"
    assert rllib.module_id("knock.smart(samples=48)") == "knock.smart(samples=48)"
    assert rllib.league_entries(config, {}) == [("runs_a_b_best.rz", 1.0)]


@pytest.mark.parametrize(
    ("sampling", "shares"),
    [("recent", [1 / 6, 2 / 6, 3 / 6]), ("uniform", [1 / 3] * 3), ("latest", [0, 0, 1])],
)
def test_rllib_league_weighs_each_snapshot_once_however_many_slots_hold_it(sampling, shares):
    """Five slots, two snapshots taken: three slots still hold the learner at step 0, which
    counts once (as the stable-baselines3 pool counts it), not three times."""
    from types import SimpleNamespace

    config = SimpleNamespace(
        opponents=[
            SimpleNamespace(name="random", weight=1.0),
            SimpleNamespace(name="self", weight=2.0),
        ],
        self_play=SimpleNamespace(sampling=sampling),
    )
    slots = {"self_0": 50_000, "self_1": 100_000, "self_2": 0, "self_3": 0, "self_4": 0}
    entries = rllib.league_entries(config, slots)
    assert entries[0] == ("random", 1.0)
    by_step: dict[int, float] = {}
    for module, weight in entries[1:]:
        by_step[slots[module]] = by_step.get(slots[module], 0.0) + weight
    assert list(by_step) == [0, 50_000, 100_000]
    assert list(by_step.values()) == pytest.approx([2.0 * s for s in shares])
    held = [w for m, w in entries[1:] if slots[m] == 0]
    assert held == pytest.approx([2.0 * shares[0] / 3] * 3)


def test_rllib_run_without_a_checkpoint_starts_over(tmp_path, local_ray, capsys):
    from rummyzoo.training.config import config_to_yaml

    run = tmp_path / "run"
    run.mkdir()  # a run stopped before its first checkpoint: its files, no checkpoint
    (run / "config.yaml").write_text(config_to_yaml(load_config(SMOKE, SHORT)))
    (run / "command.txt").write_text("rummyzoo train first\n")
    (run / "tb").mkdir()
    summary = resume_run(str(run), [], ["t", "--resume"], progress="off")
    assert "has no checkpoint yet: starting the run from the beginning" in capsys.readouterr().err
    assert summary["steps"] >= 256 and (run / "checkpoints" / "rllib").is_dir()
    # the command that started it is kept, the resume's added
    assert (run / "command.txt").read_text().splitlines() == ["rummyzoo train first", "t --resume"]


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("self_play.pool_size=1", "self_play"),  # the config has 2
        ("opponents=[{name: self}]", "opponents"),
    ],
)
def test_an_rllib_resume_refuses_other_opponents_or_pool_slots(tmp_path, override, field):
    """RLlib builds a module for every opponent and pool slot: a smaller pool crashed the
    resumed run (and every later one, its config.yaml changed), an added ``self`` played
    untrained networks. Refused by name, before anything changes; sb3 runs take both."""
    from rummyzoo.training.config import config_to_yaml

    for backend in ("rllib", "sb3"):
        run = tmp_path / backend
        run.mkdir()
        base = [f"backend={backend}", "env_options.target_score=null", "n_timesteps=10"]
        base += ["opponents=[{name: random}, {name: self}]"]
        (run / "config.yaml").write_text(config_to_yaml(load_config(SMOKE, base)))
        (run / "state.json").write_text('{"steps": 0}')  # as a run that saved a checkpoint
        before = (run / "config.yaml").read_text()
        if backend == "rllib":
            with pytest.raises(
                ValueError, match=rf"cannot resume .* with {field}( \(.*\))? changed"
            ):
                resume_run(str(run), [override], ["t"], progress="off")
            assert (run / "config.yaml").read_text() == before
        else:
            from rummyzoo.training.train import _resumed_config

            assert _resumed_config(run, [override]) is not None


def test_a_resumed_rllib_run_plays_new_deals():
    """RLlib seeds every env from the config's seed: a resumed run took the run's seed again
    and played the deals of its start over; it now takes one of the run's seed and its step."""
    config = load_config(SMOKE, SHORT)
    first = rllib.algorithm_config(config, {}, config.seed)
    resumed = rllib.algorithm_config(config, {}, config.resume_seed(4096))
    assert first.env_config["seed"] == config.seed
    assert resumed.env_config["seed"] == config.resume_seed(4096) != config.seed
    assert first.seed == rllib.rllib_seed(config.seed)
    assert resumed.seed == rllib.rllib_seed(config.resume_seed(4096)) != first.seed


def test_the_games_of_an_iteration_are_a_list_however_few():
    """RLlib's metrics give a series of one item as the item itself: an iteration that ended
    one of the learner's games crashed the run (a dict's keys taken for games)."""
    from ray.rllib.utils.metrics.metrics_logger import MetricsLogger

    from rummyzoo.training.rllib import reported_games

    for n in (0, 1, 2):
        logger = MetricsLogger()
        for i in range(n):
            game = {"points": float(i), "opponents": ["random"]}
            logger.log_value("rummyzoo_games", game, reduce="item_series")
        games = reported_games(logger.compile())
        assert [g["points"] for g in games] == [float(i) for i in range(n)], games


def test_an_rllib_run_that_overshoots_its_steps_says_so():
    """RLlib trains whole training batches, as PPO collects whole rollouts: a run of 512 steps
    with batches of 2,048 learner decisions trained about 2,048 without a word, its progress
    showing 2,047/512."""
    from rummyzoo.training.train import _warn_rollout_misfits, steps_at_end

    config = load_config(str(ROOT / "configs" / "knock_rllib.yaml"), ["n_timesteps=512"])
    with pytest.warns(UserWarning) as caught:
        _warn_rollout_misfits(config)
    assert [str(w.message) for w in caught] == [
        "n_timesteps (512) is not a whole number of training batches (n_steps x n_envs = 2,048 "
        "learner decisions): the run trains about 2,048 steps"
    ]
    assert steps_at_end(config) == 2048  # the progress bar's end
    whole = load_config(str(ROOT / "configs" / "knock_rllib.yaml"), ["n_timesteps=4096"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_rollout_misfits(whole)  # (the minibatches are RLlib's: no word of them)


@pytest.mark.parametrize(
    ("learners", "per_learner", "minibatch"), [(0, 4096, 256), (2, 2048, 128), (3, 1366, 86)]
)
def test_rllib_learners_share_one_training_batch(learners, per_learner, minibatch):
    """More learners split the same batch of n_steps x n_envs x num_players env steps (RLlib
    samples num_learners times its batch per learner) and its minibatches."""
    config = load_config(
        SMOKE,
        [
            *SHORT,
            "n_envs=16",
            "hyperparams.n_steps=128",
            "hyperparams.batch_size=256",
            f"rllib.num_learners={learners}",
        ],
    )
    algo_config = rllib.algorithm_config(config, {}, config.seed)
    assert algo_config.train_batch_size_per_learner == per_learner
    assert algo_config.minibatch_size == minibatch
    assert (
        algo_config.total_train_batch_size
        >= 128 * 16 * 2
        > algo_config.total_train_batch_size - max(1, learners)
    )


def test_bench_rllib_times_each_env_runner_count(tmp_path, local_ray, capsys):
    """``rummyzoo bench-rllib`` as the README gives it, shortened: each count of env runners
    trains its iterations, and the JSON has every round's rate and the ratio to the first."""
    from rummyzoo.cli.main import main

    rllib.set_league([("no_such_module", 1.0)])  # a former run's league in this process
    out = tmp_path / "bench.json"
    argv = ["bench-rllib", str(ROOT / "configs" / "knock_rllib.yaml"), "--env-runners", "0", "1"]
    argv += ["--iterations", "1", "--set", "n_envs=8", "--set", "hyperparams.n_steps=16"]
    argv += ["--set", "hyperparams.batch_size=64", "--set", "rllib.num_envs_per_env_runner=4"]
    assert main([*argv, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert "steps/s" in printed, printed
    assert result["train_batch_env_steps"] == 16 * 8 * 2 and result["iterations"] == 1
    first, second = result["settings"]
    assert [first["num_env_runners"], second["num_env_runners"]] == [0, 1]
    for entry in (first, second):
        assert len(entry["env_steps_per_s"]) == result["repeat"] >= 1
        assert entry["median_env_steps_per_s"] > 0
    assert first["ratio_to_first"] == 1.0
    assert second["ratio_to_first"] == pytest.approx(
        second["median_env_steps_per_s"] / first["median_env_steps_per_s"]
    )


@pytest.mark.parametrize("fails", ["build", "after_build"])
def test_a_failed_rllib_run_stops_its_algorithm_and_leaves_no_folder_it_did_not_need(
    tmp_path, monkeypatch, fails
):
    """RLlib refusing the config writes no run folder; a failure after the algorithm is built
    stops it (its env runners and learners would hold their CPUs in a running Ray), and the
    process's league is cleared either way."""
    from types import SimpleNamespace

    stopped = []
    algo = SimpleNamespace(stop=lambda: stopped.append(True))

    def build():
        if fails == "build":
            raise ValueError("RLlib refuses this config")
        return algo

    def no_weights(*args):
        raise RuntimeError("the learner's weights could not be set")

    monkeypatch.setattr(rllib, "start_ray", lambda settings: (None, False))
    monkeypatch.setattr(rllib, "algorithm_config", lambda *a: SimpleNamespace(build_algo=build))
    monkeypatch.setattr(rllib, "set_module_weights", no_weights)
    monkeypatch.setattr(rllib, "learner_state", lambda algo: {})
    rllib.set_league([("stale", 1.0)])
    config = load_config(SMOKE, [*SHORT, "pretrain=null"])
    run = tmp_path / "run"
    with pytest.raises((ValueError, RuntimeError), match=r"refuses|could not be set"):
        rllib.train_rllib(config, run, ["t"], progress="off")
    assert rllib._LEAGUE is None
    if fails == "build":
        assert not stopped and not (run / "config.yaml").exists()
    else:
        assert stopped == [True] and (run / "config.yaml").exists()


def test_an_rllib_snapshot_keeps_its_rating_for_the_games_played_against_it(tmp_path, monkeypatch):
    """The RLlib callback's own snapshot left the rating map of the games' comparisons
    empty: every game against a snapshot counted at rating 0.0 in selfplay/rating."""
    from types import SimpleNamespace

    import rummyzoo.agents.checkpoints as checkpoints

    monkeypatch.setattr(checkpoints, "save_checkpoint", lambda *a, **k: None)
    monkeypatch.setattr(rllib, "slot_ids", lambda config: [])
    rllib._callback_class.cache_clear()  # a class built with the stand-in saver, for this test
    try:
        cls = rllib._callback_class()
    finally:
        rllib._callback_class.cache_clear()  # later tests build theirs with the real one
    callback = cls.__new__(cls)  # only the snapshot's bookkeeping is exercised
    callback.num_timesteps, callback.rating, callback.pool = 4096, 123.0, []
    callback._snapshot_ratings = {}
    callback.pool_dir, callback._meta, callback.model = tmp_path, dict, None
    callback.config = SimpleNamespace(self_play=SimpleNamespace(pool_size=5), opponents=[])
    callback._snapshot()
    assert callback.pool[-1]["rating"] == 123.0
    assert callback._snapshot_rating(4096) == 123.0


def test_rllib_episodes_learn_from_every_hand_of_a_match():
    """Four-player Knock Rummy matches to 100 recorded as RLlib records them (its
    ``MultiAgentEpisode``): the rewards each agent's own episode holds, those the Learner
    trains on, add up to that seat's match points (``scaled``: points / 10), the hands that
    ended before the seat's first decision included. RLlib keeps a reward that comes before
    an agent's first observation out of that agent's episode, so the env pays it with the
    seat's first decision."""
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    env = rllib.MatchEnv(
        {
            "variant": "knock_rummy", "num_players": 4, "env_options": {"target_score": 100},
            "reward": "scaled", "reward_scale": 10.0, "features": None, "seed": 3,
        }
    )  # fmt: skip
    rng = np.random.default_rng(0)
    early = 0
    for seed in range(12):
        obs, infos = env.reset(seed=seed)
        episode = MultiAgentEpisode(
            observation_space=env.observation_spaces, action_space=env.action_spaces
        )
        episode.add_env_reset(observations=obs, infos=infos)
        acted: set[str] = set()
        while True:
            ((agent, o),) = obs.items()
            acted.add(agent)
            action = {agent: int(rng.choice(np.flatnonzero(o["action_mask"])))}
            hands_before = env.match.hand_index
            obs, rewards, terminated, truncated, infos = env.step(action)
            early += env.match.hand_index > hands_before and len(acted) < len(env.agents)
            episode.add_env_step(obs, action, rewards, infos, terminateds=terminated,
                                 truncateds=truncated)  # fmt: skip
            if terminated["__all__"] or truncated["__all__"]:
                break
        for agent in env.agents:
            facts = infos[agent]["rummyzoo"]
            if agent not in episode.agent_episodes:  # a match over before its first decision
                assert facts["decisions"] == 0
                continue
            points = facts["points"]
            learnt = episode.agent_episodes[agent].get_return()
            assert learnt == pytest.approx(points / 10, abs=1e-4), (seed, agent)
    assert early > 0  # some hands did end before a seat's first decision
