"""Config errors are clear and early: every mistake in a run config (or a ``--set`` override)
is a one-line error naming its key, found before any run folder exists, through
``train_from_file``, ``resume_run`` and ``rummyzoo train`` alike."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from rummyzoo.cli.main import main
from rummyzoo.training.config import (
    ConfigLoadError,
    RunConfig,
    apply_overrides,
    config_to_yaml,
    load_config,
    validate_config,
)
from rummyzoo.training.train import resume_run, train_from_file

REPO = Path(__file__).resolve().parent.parent

CONFIGS = Path(__file__).resolve().parent.parent / "configs"

#: A small valid config (cheap to train, should a broken check let it through).
BASE = """\
variant: knock_rummy
num_players: 2
n_timesteps: 64
n_envs: 1
hyperparams:
  n_steps: 32
  batch_size: 32
opponents:
  - {name: random}
  - {name: self}
evaluation:
  opponents: [random]
  deals: 1
"""


def _write(tmp_path: Path, text: str, name: str = "run.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _refused(tmp_path, monkeypatch, capsys, config, overrides, pattern, lines=1) -> str:
    """``config`` with ``overrides`` is refused with a message matching ``pattern`` (and of
    ``lines`` lines) by ``train_from_file`` (into a given run folder and the default one) and
    by ``rummyzoo train`` (exit code 2, the message on stderr); no run folder appears.

    :returns: the message.
    """
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    monkeypatch.chdir(work)  # the default run folder would be work/runs/...
    run = tmp_path / "the_run"
    with pytest.raises(ConfigLoadError, match=pattern) as caught:
        train_from_file(str(config), overrides, str(run), ["test"], progress="off")
    with pytest.raises(ConfigLoadError, match=pattern):
        train_from_file(str(config), overrides, None, ["test"], progress="off")
    message = str(caught.value)
    assert len(message.splitlines()) == lines, message
    sets = [arg for text in overrides for arg in ("--set", text)]
    capsys.readouterr()
    assert main(["train", str(config), "--run-dir", str(run), "--quiet", *sets]) == 2
    assert main(["train", str(config), "--quiet", *sets]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"rummyzoo train: error: {message}\n" * 2
    assert not run.exists()
    assert list(work.iterdir()) == []
    return message


# ------------------------------------------------------------------ 1. agent names
@pytest.mark.parametrize(
    "replace, pattern",
    [
        (
            ("opponents: [random]", "opponents: [random, knock.genius]"),
            r", line 12: evaluation\.opponents\[1\]: unknown agent 'knock\.genius'; known agents "
            r"for knock_rummy: random, knock\.greedy, knock\.smart ",
        ),
        (
            ("opponents: [random]", "opponents: [ditch.smart]"),
            r", line 12: evaluation\.opponents\[0\]: agent 'ditch\.smart' plays ditch_rummy, not "
            r"knock_rummy",
        ),
        (
            ("opponents: [random]", "opponents: [self]"),
            r"evaluation\.opponents\[0\]: 'self' \(the self-play pool\) can only be a training",
        ),
        (
            ("- {name: self}", "- {name: knock.smrt, weight: 2}"),
            r", line 10: opponents\[1\]\.name: unknown agent 'knock\.smrt'; known agents for "
            r"knock_rummy: .*; did you mean 'knock\.smart'\?$",
        ),
        (
            ("- {name: self}", "- {name: 'knock.smrt(samples=4)'}"),
            r"opponents\[1\]\.name: unknown agent 'knock\.smrt'; known agents for "
            r"knock_rummy: .*; did you mean 'knock\.smart'\?$",
        ),
        (
            ("- {name: self}", "- {name: 'knock.smart(samples=0)'}"),
            r", line 10: opponents\[1\]\.name: agent 'knock\.smart\(samples=0\)': knock\.smart: "
            r"samples must be an integer >= 1, got 0$",
        ),
        (
            ("opponents: [random]", "opponents: ['knock.greedy(knock_treshold=5)']"),
            r"evaluation\.opponents\[0\]: agent 'knock\.greedy\(knock_treshold=5\)' takes no "
            r"parameter 'knock_treshold'; its parameters \(with defaults\): knock_threshold=10$",
        ),
        (
            ("- {name: self}", "- {name: missing/ckpt.zip}"),
            r"opponents\[1\]\.name: checkpoint 'missing/ckpt\.zip' does not exist \(a relative "
            r"path is read from the folder the command runs in, .+\)$",
        ),
        (
            ("n_envs: 1", "n_envs: 1\npretrain: {teacher: knock.genius}"),
            r", line 5: pretrain\.teacher: unknown agent 'knock\.genius'; known agents for "
            r"knock_rummy",
        ),
    ],
)
def test_agent_names_are_checked_before_training(tmp_path, monkeypatch, capsys, replace, pattern):
    config = _write(tmp_path, BASE.replace(*replace))
    assert config.read_text() != BASE
    message = _refused(tmp_path, monkeypatch, capsys, config, [], pattern)
    assert message.startswith(f"{config}, line ")


def test_agents_are_built_for_the_config_variant_and_players():
    """Heuristics of the config's variant pass, and are built for its player count."""
    ditch = {"variant": "ditch_rummy", "opponents": [{"name": "ditch.smart"}]}
    assert validate_config({**ditch, "evaluation": {"opponents": ["ditch.greedy"]}})
    with pytest.raises(ConfigLoadError, match=r"opponents\[0\]\.name: agent 'ditch\.smart' plays"):
        validate_config({**ditch, "variant": "knock_rummy"})
    assert validate_config({"pretrain": {"teacher": "knock.smart"}, "num_players": 3})


def test_a_replay_buffer_is_dqns_and_a_dqn_run_without_updates_is_warned_of(tmp_path):
    """PPO refuses ``save_replay_buffer`` (it was accepted and did nothing); a DQN run whose
    ``learning_starts`` is not below its steps is warned that it makes no update."""
    from rummyzoo.training.train import train

    buffer = {"checkpoints": {"save_replay_buffer": True}}
    assert validate_config({"algo": "dqn", **buffer})
    with pytest.raises(ConfigLoadError, match=r"save_replay_buffer saves DQN's replay buffer"):
        validate_config(buffer)
    config = load_config(str(CONFIGS / "smoke_dqn.yaml"), ["hyperparams.learning_starts=256"])
    with pytest.warns(UserWarning, match=r"learning_starts \(256\) is not below n_timesteps "
                      r"\(256\): DQN updates its network only after learning_starts steps"):  # fmt: skip
        train(config, tmp_path / "run", progress="off")


def test_ppo_is_warned_where_its_rollout_and_its_minibatches_or_steps_do_not_fit():
    """A rollout is ``n_steps x n_envs`` steps: minibatches larger than it, or that leave a
    remainder, and a step count it overshoots by more than 1% were accepted without a word."""
    from rummyzoo.training.train import _warn_rollout_misfits

    def warned(*overrides):
        config = load_config(str(CONFIGS / "smoke_ppo.yaml"), list(overrides))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _warn_rollout_misfits(config)
        return [str(w.message) for w in caught]

    assert warned() == []  # rollouts of 128, batches of 64, 256 steps
    assert warned("n_envs=3", "hyperparams.batch_size=100") == [
        "hyperparams.batch_size (100) does not divide a rollout (n_steps x n_envs = 192 steps): "
        "each epoch ends with a minibatch of 92",
        "n_timesteps (256) is not a whole number of rollouts (n_steps x n_envs = 192 steps): the "
        "run trains 384 steps",
    ]
    (big,) = warned("hyperparams.batch_size=512")
    assert big.startswith("hyperparams.batch_size (512) is larger than a rollout (n_steps x "
                          "n_envs = 128 steps): every update takes the whole rollout")  # fmt: skip
    assert warned("n_timesteps=100000", "n_envs=1") == []  # 100,032 steps: within 1%
    # DQN collects whole rounds of train_freq steps in every game: it overshot without a word
    dqn = load_config(str(CONFIGS / "smoke_dqn.yaml"), ["n_timesteps=131"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _warn_rollout_misfits(dqn)
    unit = dqn.hyperparams.train_freq * dqn.n_envs
    whole = -(-131 // unit) * unit
    assert whole - 131 > 1.31  # (the setup the check is for)
    assert [str(w.message) for w in caught] == [
        f"n_timesteps (131) is not a whole number of rounds (train_freq x n_envs = {unit} "
        f"steps): the run trains {whole} steps"
    ]
    shipped = ("knock_ppo", "ditch_ppo", "rummy500_ppo", "knock_4p_ppo", "knock_dqn", "ditch_dqn")
    for name in (*shipped, "rummy500_dqn"):  # shipped: quiet
        config = load_config(str(CONFIGS / f"{name}.yaml"), [])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _warn_rollout_misfits(config)


def test_update_threads_is_a_setting_of_ppo_on_sb3():
    assert validate_config({"workers": 1, "update_threads": 2})
    for other in ({"algo": "dqn"}, {"backend": "rllib"}):
        with pytest.raises(ConfigLoadError, match=r"update_threads sets the threads of the sb3"):
            validate_config({**other, "update_threads": 2})
    with pytest.raises(ConfigLoadError, match=r"update_threads"):
        validate_config({"update_threads": 0})


# ------------------------------------------------------------------ 2. device
def test_unknown_device_is_refused(tmp_path, monkeypatch, capsys):
    config = _write(tmp_path, BASE + "device: banana\n")
    message = _refused(
        tmp_path,
        monkeypatch,
        capsys,
        config,
        [],
        r", line 14: device: 'banana' is not a device",
    )
    assert "use one of 'cpu', 'cuda', 'cuda:0', 'auto', 'mps'" in message


def test_cuda_without_cuda_is_refused(tmp_path, monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    config = _write(tmp_path, BASE + "device: cuda\n")
    message = _refused(
        tmp_path,
        monkeypatch,
        capsys,
        config,
        [],
        r"device: 'cuda' needs CUDA, but this machine has no CUDA device",
    )
    assert "use 'cpu', or 'auto'" in message
    with pytest.raises(ConfigLoadError, match=r"device: 'cuda:0' needs CUDA"):
        validate_config({"device": "cuda:0"})


def test_accepted_devices(monkeypatch):
    import torch

    for device in ("cpu", "auto"):
        assert validate_config({"device": device}).device == device
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    for device in ("cuda", "cuda:0"):
        assert validate_config({"device": device}).device == device
    with pytest.raises(ConfigLoadError, match=r"device: 'cuda:1': this machine has 1 CUDA device"):
        validate_config({"device": "cuda:1"})
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    with pytest.raises(ConfigLoadError, match=r"device: 'mps' needs Apple's Metal"):
        validate_config({"device": "mps"})
    for bad in ("CPU", "cuda:x", "meta", ""):
        with pytest.raises(ConfigLoadError, match=rf"device: {re.escape(repr(bad))} is not a"):
            validate_config({"device": bad})


# ------------------------------------------------------------------ 3. file shape
@pytest.mark.parametrize("text", ["", "\n\n", "# nothing but a comment\n", "null\n", "~\n", "{}\n"])
def test_empty_config_is_refused(tmp_path, monkeypatch, capsys, text):
    config = _write(tmp_path, text)
    message = _refused(
        tmp_path,
        monkeypatch,
        capsys,
        config,
        ["n_timesteps=64"],
        rf"^config {re.escape(str(config))} is empty: a config needs at least one key",
    )
    assert "variant: knock_rummy" in message


@pytest.mark.parametrize(
    "text, kind", [("- variant: knock_rummy\n", "a list"), ("knock_rummy\n", "a string")]
)
def test_config_that_is_not_a_mapping_is_refused(tmp_path, monkeypatch, capsys, text, kind):
    config = _write(tmp_path, text)
    _refused(
        tmp_path,
        monkeypatch,
        capsys,
        config,
        [],
        rf"^config {re.escape(str(config))} must be a mapping of keys to values .* but it is "
        rf"{kind}$",
    )


@pytest.mark.parametrize(
    "replace, message",
    [
        (
            ("n_envs: 1\n", "n_envs: 1\nn_timesteps: 128\n"),
            "key 'n_timesteps' is given twice, on lines 3 and 5",
        ),
        (
            ("  batch_size: 32\n", "  batch_size: 32\n  n_steps: 64\n"),
            "key 'hyperparams.n_steps' is given twice, on lines 6 and 8",
        ),
        (
            ("- {name: random}", "- {name: random, name: knock.greedy}"),
            "key 'opponents[0].name' is given twice, on line 9 column 6, line 9 column 20",
        ),
    ],
)
def test_duplicated_key_is_refused(tmp_path, monkeypatch, capsys, replace, message):
    config = _write(tmp_path, BASE.replace(*replace))
    assert config.read_text() != BASE
    got = _refused(tmp_path, monkeypatch, capsys, config, [], re.escape(message))
    assert got.startswith(f"{config}: key ") and got.endswith("; keep one")


def test_every_duplicated_key_is_reported(tmp_path):
    text = BASE.replace("n_envs: 1\n", "n_envs: 1\nn_envs: 2\n") + "evaluation: {deals: 2}\n"
    with pytest.raises(ConfigLoadError) as caught:
        load_config(_write(tmp_path, text))
    lines = str(caught.value).splitlines()
    assert lines[0] == f"2 errors in config {tmp_path / 'run.yaml'}:"
    assert lines[1].startswith("  key 'n_envs' is given twice, on lines 4 and 5")
    assert lines[2].startswith("  key 'evaluation' is given twice, on lines 12 and 15")


# ------------------------------------------------------------------ 4. all errors at once
def test_all_errors_are_reported_at_once(tmp_path, monkeypatch, capsys):
    text = (
        BASE.replace("n_timesteps: 64", "n_timesteps: lots")
        .replace("  batch_size: 32", "  batch_size: 32\n  learning_rat: 0.001")
        .replace("  deals: 1", "  dealz: 1")
        .replace("opponents: [random]", "opponents: [knock.genius]")
        + "devise: cpu\n"
    )
    config = _write(tmp_path, text)
    message = _refused(
        tmp_path,
        monkeypatch,
        capsys,
        config,
        ["seed=-1"],
        rf"^6 errors in config {re.escape(str(config))}:\n",
        lines=7,
    )
    body = message.splitlines()[1:]
    assert body[0].startswith("  line 3: n_timesteps: Input should be a valid integer")
    assert (
        body[1]
        == "  line 8: unknown key 'learning_rat' in hyperparams; did you mean 'learning_rate'?"
    )
    assert body[2].startswith("  line 13: evaluation.opponents[0]: unknown agent 'knock.genius'")
    assert body[3] == "  line 14: unknown key 'dealz' in evaluation; did you mean 'deals'?"
    assert body[4] == "  line 15: unknown key 'devise'; did you mean 'device'?"
    assert body[5] == "  --set seed=-1: Input should be greater than or equal to 0, got -1"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"n_timestep": 10}, "unknown key 'n_timestep'; did you mean 'n_timesteps'?"),
        ({"self_play": {"pool": 3}}, "unknown key 'pool' in self_play; did you mean 'pool_size'?"),
        (
            {"policy_kwargs": {"net_arch": {"pi": [8], "vff": [8]}}},
            "unknown key 'vff' in policy_kwargs.net_arch; did you mean 'vf'?",
        ),
        (
            {"opponents": [{"name": "random", "wieght": 2}]},
            "unknown key 'wieght' in opponents[0]; did you mean 'weight'?",
        ),
        ({"target_kl": 0.1}, "target_kl is a hyperparameter: set it under hyperparams"),
        (
            {"algo": "dqn", "hyperparams": {"n_epochs": 3}},
            "unknown key 'n_epochs' in hyperparams; n_epochs is a hyperparameter of algo 'ppo', "
            "and this run's algo is 'dqn'",
        ),
        (
            {"checkpoints": {"zzz": 1}},
            "unknown key 'zzz' in checkpoints; valid keys: interval, keep",
        ),
    ],
)
def test_unknown_keys_suggest_near_misses(data, message):
    with pytest.raises(ConfigLoadError, match=re.escape(message)):
        validate_config(data)


@pytest.mark.parametrize(
    "net_arch, message",
    [
        ([4097], r"policy_kwargs.net_arch\[0\]: Input should be less than or equal to 4096"),
        ([8] * 9, r"policy_kwargs.net_arch: List should have at most 8 items"),
        ({"pi": [8], "vf": [5000]}, r"policy_kwargs.net_arch.vf\[0\]: Input should be less"),
        ({"pi": [8] * 9, "vf": [8]}, r"policy_kwargs.net_arch.pi: List should have at most 8"),
    ],
)
def test_a_network_no_checkpoint_can_hold_is_refused_by_the_config(net_arch, message):
    """The bounds the checkpoint format puts on a network's layers are the config's, so that a
    run is refused before it starts, not at its first save."""
    from rummyzoo.agents.limits import MAX_LAYERS, MAX_WIDTH
    from rummyzoo.agents.safe import NetworkSpec

    with pytest.raises(ConfigLoadError, match=message):
        validate_config({"policy_kwargs": {"net_arch": net_arch}})
    # the largest network the config takes is one a checkpoint can hold
    widest = [MAX_WIDTH] * MAX_LAYERS
    validate_config({"policy_kwargs": {"net_arch": widest}})
    NetworkSpec.model_validate({"type": "mlp", "activation": "relu", "pi": widest, "vf": widest})


# ------------------------------------------------------------------ 5. overrides
@pytest.mark.parametrize(
    "override, message",
    [
        (
            "hyperparams.learning_rat=1e-3",
            "--set hyperparams.learning_rat=1e-3: unknown key 'learning_rat' in hyperparams; "
            "did you mean 'learning_rate'?",
        ),
        (
            "n_timesteps=abc",
            "--set n_timesteps=abc: Input should be a valid integer, unable to parse string as "
            "an integer, got 'abc'",
        ),
        # YAML's true/yes are no numbers: refused, not read as 1
        ("seed=true", "--set seed=true: expected a number or a name here, got True (a boolean)"),
        ("checkpoints.keep=yes", "--set checkpoints.keep=yes: expected a number or a name here"),
        ("learner_seat=false", "--set learner_seat=false: expected a number or a name here"),
        ("reward_scale=true", "--set reward_scale=true: expected a number or a name here"),
        ("n_timestep=100", "--set n_timestep=100: unknown key 'n_timestep'; did you mean "),
        ("device=banana", "--set device=banana: 'banana' is not a device; use one of 'cpu'"),
        (
            "evaluation.opponents=[random, knock.genius]",
            "--set evaluation.opponents=[random, knock.genius]: evaluation.opponents[1]: unknown "
            "agent 'knock.genius'",
        ),
        (
            "evaluation.opponents.0=knock.genius",
            "--set evaluation.opponents.0=knock.genius: unknown agent 'knock.genius'",
        ),
        (
            "pretrain.teacher=knock.smrt",
            "--set pretrain.teacher=knock.smrt: unknown agent 'knock.smrt'",
        ),
        (
            "env_options.rummy_bonus=lots",
            "--set env_options.rummy_bonus=lots: env_options: knock_rummy option rummy_bonus must "
            "be int",
        ),
        ("n_timesteps", "--set n_timesteps: an override must look like key.sub=value"),
        ("=5", "--set =5: the key before '=' is empty"),
        ("hyperparams..gamma=0.9", "--set hyperparams..gamma=0.9: key 'hyperparams..gamma' has"),
        ("seed=[1", "--set seed=[1: the value is not valid YAML"),
        ("n_envs.x=2", "--set n_envs.x=2: n_envs is 1, not a mapping"),
        ("opponents.5.weight=2", "--set opponents.5.weight=2: opponents has 2 entries (0 to 1)"),
        # a minibatch of one step makes NaN advantages (then NaN weights)
        (
            "hyperparams.batch_size=1",
            "--set hyperparams.batch_size=1: Input should be greater than or equal to 2",
        ),
        (
            "hyperparams.n_steps=33",
            "--set hyperparams.n_steps=33: hyperparams: a rollout of n_steps x n_envs = 33 steps "
            "in minibatches of batch_size 32 leaves one of a single step",
        ),
        ("opponents.0.name=", "--set opponents.0.name=: String should have at least 1 character"),
        (
            "evaluation.opponents=[random, random]",
            "--set evaluation.opponents=[random, random]: each evaluation opponent once: random "
            "is named twice",
        ),
    ],
)
def test_override_errors_name_the_override(tmp_path, monkeypatch, capsys, override, message):
    config = _write(tmp_path, BASE)
    got = _refused(tmp_path, monkeypatch, capsys, config, [override], "^" + re.escape(message))
    assert str(config) not in got


def test_overrides_still_apply(tmp_path):
    config = load_config(
        _write(tmp_path, BASE),
        [
            "opponents.1.weight=3",
            "evaluation.opponents.0=knock.smart",
            "hyperparams.learning_rate=1e-3",
            "env_options.target_score=null",
        ],
    )
    assert [(o.name, o.weight) for o in config.opponents] == [("random", 1.0), ("self", 3.0)]
    assert config.evaluation.opponents == ["knock.smart"]
    assert config.hyperparams.learning_rate == pytest.approx(1e-3)
    assert config.env_options == {"target_score": None}
    # The file's keys are untouched by a failed override elsewhere.
    assert apply_overrides({"a": {"b": 1}}, ["a.c=2"]) == {"a": {"b": 1, "c": 2}}


def test_resume_override_errors_name_the_override(tmp_path):
    """A resumed run's overrides are checked like a new run's, before anything is written."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(config_to_yaml(RunConfig()))
    (run / "state.json").write_text('{"steps": 0}')  # as a run that saved a checkpoint
    before = sorted(p.name for p in run.iterdir())
    with pytest.raises(
        ConfigLoadError,
        match=r"^--set hyperparams\.learning_rat=1: unknown key 'learning_rat' in hyperparams; "
        r"did you mean 'learning_rate'\?$",
    ):
        resume_run(str(run), ["hyperparams.learning_rat=1"], ["test"], progress="off")
    with pytest.raises(ConfigLoadError, match=r"^--set evaluation\.opponents=\[nobody\]: "):
        resume_run(str(run), ["evaluation.opponents=[nobody]"], ["test"], progress="off")
    # what the checkpoint fixes cannot change: refused by name, before anything is written
    for override, named in (
        (
            "policy_kwargs.net_arch=[16,16]",
            "policy_kwargs \\(net_arch\\) changed: .* its checkpoint's network",
        ),
        ("n_envs=3", "n_envs changed: .* number of games"),
        (
            "hyperparams.learning_rate=0.001",
            "hyperparams \\(learning_rate\\) changed: .* hyperparameters",
        ),
        ("variant=ditch_rummy", "variant changed"),
        ("algo=dqn", "algo changed: .* its checkpoint's algorithm"),
    ):
        with pytest.raises(ValueError, match=f"^cannot resume .* with {named}"):
            resume_run(str(run), [override, "n_timesteps=300000"], ["test"], progress="off")
    assert sorted(p.name for p in run.iterdir()) == before
    assert (run / "config.yaml").read_text() == config_to_yaml(RunConfig())


def test_train_refuses_a_config_file_given_with_resume(tmp_path, capsys):
    from rummyzoo.cli.main import main

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(config_to_yaml(RunConfig()))
    assert main(["train", str(CONFIGS / "smoke_ppo.yaml"), "--resume", str(run)]) == 2
    assert "give no CONFIG with it" in capsys.readouterr().err
    assert main(["train", "--resume", str(run), "--run-dir", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "--resume continues" in err and "--run-dir" in err
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml"]


# ------------------------------------------------------------------ shipped configs
VARIANT_OF_NAME = {"knock": "knock_rummy", "ditch": "ditch_rummy", "rummy500": "rummy500"}


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_config_validates(path):
    """Every shipped config loads (no duplicated key, every agent and device accepted)."""
    config = load_config(path)
    prefix = path.stem.split("_")[0]
    assert prefix == "smoke" or config.variant == VARIANT_OF_NAME[prefix]
    assert len(list(CONFIGS.glob("*.yaml"))) >= 6


def test_every_env_reward_mode_is_a_run_reward_and_no_other():
    from rummyzoo.envs.match import REWARD_MODES

    for mode in REWARD_MODES:
        assert load_config(CONFIGS / "smoke_ppo.yaml", [f"reward={mode}"]).reward == mode
    with pytest.raises(Exception, match="reward"):
        load_config(CONFIGS / "smoke_ppo.yaml", ["reward=placing"])


def test_replacing_a_whole_mapping_says_what_it_drops(tmp_path):
    config = _write(tmp_path, BASE)
    with pytest.warns(UserWarning, match=r"replaces the whole of hyperparams: batch_size, n_steps"):
        loaded = load_config(config, ["hyperparams={learning_rate: 0.001}"])
    assert loaded.hyperparams.n_steps == 512  # the default, as the warning says
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_config(
            config,
            ["hyperparams.learning_rate=0.001", "evaluation={opponents: [random], deals: 2}"],
        )


def test_training_games_and_the_teacher_never_share_a_seed() -> None:
    """Game ``i`` keeps the seed ``seed * 1000 + i`` it always had below 1,000 games; with more,
    the block grows so that no two games of one run, or of runs with consecutive seeds, or the
    warm start's teacher games share one."""
    from rummyzoo.training.config import RunConfig

    small = RunConfig(seed=3, n_envs=64)
    assert [small.game_seed(i) for i in (0, 63)] == [3000, 3063]
    assert small.teacher_seed() == 3999
    for n_envs in (999, 1000, 4096):
        seeds = []
        for seed in (3, 4):
            config = RunConfig(seed=seed, n_envs=n_envs)
            seeds += [config.game_seed(i) for i in range(n_envs)] + [config.teacher_seed()]
        assert len(set(seeds)) == len(seeds), n_envs


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("pretrain.margin=1e39", r"margin=1e39: Input should be less than or equal"),
        ("pretrain.demo_batch_size=99999999999999999999", r"demo_batch_size=9+: Input should"),
        ("hyperparams.buffer_size=99999999999999999999", r"buffer_size=9+: Input should be less"),
    ],
)
def test_dqn_sizes_and_margins_past_what_torch_takes_are_refused(override, message) -> None:
    """Each was accepted and failed in the warm start or the first update, a run folder made:
    torch converts no float past float32's largest, numpy makes no such array."""
    teacher = ["pretrain.teacher=knock.greedy", "pretrain.decisions=200"]
    with pytest.raises(ConfigLoadError, match=message):
        load_config(str(CONFIGS / "smoke_dqn.yaml"), [*teacher, override])


def test_a_value_of_nested_aliases_is_shown_short(tmp_path) -> None:
    """A few hundred bytes of YAML aliases make lists of the same list nested deep: the error
    shows a few items of it (the whole repr, megabytes here, grows tenfold a level: a file of
    eight levels took a gigabyte and ended in a MemoryError)."""
    lines = ["variant: knock_rummy", "env_options:", "  max_turns:", "    - &a0 [x, x, x, x, x]"]
    lines += [f"    - &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    path = tmp_path / "aliases.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigLoadError, match="max_turns must be int, got") as caught:
        load_config(str(path))
    assert len(str(caught.value)) < 400


def test_ppos_network_settings_are_refused_for_dqn() -> None:
    """DQN has one network: a net_arch per head (its vf unused) and ortho_init false (not
    followed) were taken without a word; a stored config's ortho_init true is taken."""
    smoke = str(CONFIGS / "smoke_dqn.yaml")
    with pytest.raises(ConfigLoadError) as caught:
        load_config(
            smoke, ["policy_kwargs.net_arch={pi: [8], vf: [64]}", "policy_kwargs.ortho_init=false"]
        )
    message = str(caught.value)
    assert "2 errors" in message and "DQN has one network" in message
    assert "ortho_init is PPO's" in message
    assert load_config(smoke, ["policy_kwargs.ortho_init=true"]).policy_kwargs.ortho_init
    # a run that trained with them (before they were refused) goes on: its stored config, as a
    # resume and the run's other processes read it, is taken
    from rummyzoo.training.config import rebuilt_config, validate_config

    data = {"variant": "knock_rummy", "algo": "dqn", "hyperparams": {"buffer_size": 1000},
            "policy_kwargs": {"net_arch": {"pi": [8], "vf": [64]}, "ortho_init": False}}  # fmt: skip
    with pytest.raises(ConfigLoadError, match="DQN has one network"):
        validate_config(data)
    stored = validate_config(data, stored=True, skip_agents={"all"})
    assert rebuilt_config(stored.model_dump(mode="json")).policy_kwargs.ortho_init is False


def test_a_key_twice_inside_a_merged_mapping_is_refused() -> None:
    """``<<: {n_steps: 64, n_steps: 32}`` kept the last silently (the merged mapping was not
    looked into); a key of the mapping's own over a merged one is YAML's override, not twice."""
    from rummyzoo.training.config import ConfigLoader

    def duplicates(text: str) -> list[str]:
        loader = ConfigLoader(text)
        try:
            loader.get_single_data()
        finally:
            loader.dispose()
        return [issue.msg for issue in loader.duplicates]

    found = duplicates("hyperparams:\n  <<: {n_steps: 64, n_steps: 32}\n")
    assert len(found) == 1 and "'hyperparams.n_steps' is given twice" in found[0]
    found = duplicates("hyperparams:\n  <<: [{a: 1}, {b: 2, b: 3}]\n")
    assert len(found) == 1 and "'hyperparams.b' is given twice" in found[0]
    assert duplicates("base: &d {n_steps: 64}\nhyperparams:\n  <<: *d\n  n_steps: 32\n") == []


@pytest.mark.parametrize("section", ["env_options", "evaluation.options"])
def test_an_unknown_option_lists_what_a_run_takes(section: str) -> None:
    """The report options, which a run refuses there, are not offered among the valid ones."""
    with pytest.raises(ConfigLoadError, match="unknown option") as caught:
        load_config(str(CONFIGS / "smoke_ppo.yaml"), [f"{section}.target_scor=100"])
    message = str(caught.value)
    assert "did you mean 'target_score'" in message and "max_hands" in message
    assert "render_mode" not in message and "reward" not in message, message


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("env_options.reward=margin", "env_options: reward is not a rules option"),
        ("env_options.reward_scale=5", "env_options: reward_scale is not a rules option"),
        ("env_options.render_mode=human", "env_options: render_mode is not a rules option"),
        ("evaluation.options.reward=margin", "evaluation.options: reward is not a rules option"),
        ("hyperparams.learning_rate=.inf", r"learning_rate=\.inf: .*a finite number, got inf"),
        ("reward_scale=.inf", r"reward_scale=\.inf: .*a finite number, got inf"),
        ("opponents.0.weight=.inf", r"weight=\.inf: .*a finite number, got inf"),
        # each accepted before, failing at the first update or evaluation, a run folder made
        ("hyperparams.clip_range=1e39", r"clip_range=1e39: Input should be less than or equal"),
        ("hyperparams.n_steps=99999999999999999999", r"n_steps=9+: Input should be less than"),
        ("hyperparams.batch_size=99999999999999999999", r"batch_size=9+: Input should be less"),
        (
            "evaluation.deals=30000000",
            r"30,000,000 deals x 2 seatings = 60,000,000 games, more than an arena run plays "
            r"\(50,000,000\): at most 25,000,000",
        ),
        ("evaluation.cross_table_deals=99999999999", r"x 42 seatings = .*: at most 1,190,476"),
        # each accepted before, failing once the run folder was made
        ("seed=4294967296", r"seed=4294967296: Input should be less than or equal to 4294967295"),
        # the section the --set made, not the file, is named (the file has no pretrain)
        ("pretrain.decisions=2000", r"--set pretrain.decisions=2000: pretrain.teacher: required"),
        ("torch_threads=100000", r"torch_threads=100000: Input should be less than or equal"),
        (
            "n_envs=20000",  # accepted before: 20,000 games built, a rollout of 1.28M steps
            r"n_envs=20000: 20000 games for a run of 256 steps \(n_timesteps\): some games",
        ),
    ],
)
def test_options_that_are_no_rules_and_infinite_numbers_are_refused(
    override, message, tmp_path
) -> None:
    """Each was accepted and failed later: in the env's constructor, at the first evaluation
    (the run folder made), or as a network of infinite weights."""
    with pytest.raises(ConfigLoadError, match=message):
        load_config(str(CONFIGS / "smoke_ppo.yaml"), [override])


def test_a_card_or_action_scorer_needs_a_value_layer() -> None:
    """Accepted before, and the network's construction failed (an IndexError) once the run
    folder was made; a plain MLP builds without one."""
    smoke = str(CONFIGS / "smoke_ppo.yaml")
    for arch in ("{pi: [8], vf: []}", "[]"):
        with pytest.raises(ConfigLoadError, match="a ppo 'cards' network needs at least one"):
            load_config(smoke, ["policy_kwargs.network=cards", f"policy_kwargs.net_arch={arch}"])
        load_config(smoke, [f"policy_kwargs.net_arch={arch}"])


def test_evaluation_options_may_change_the_match_not_the_layout() -> None:
    ditch = ["variant=ditch_rummy"]
    load_config(str(CONFIGS / "smoke_ppo.yaml"), [*ditch, "evaluation.options.target_score=500"])
    with pytest.raises(ConfigLoadError, match="change the observation or the actions"):
        load_config(
            str(CONFIGS / "smoke_ppo.yaml"),
            [*ditch, "evaluation.options.draw_rule=up_to_3", "evaluation.options.max_hand=10"],
        )


def test_the_whole_mapping_warning_names_the_form_set_takes() -> None:
    with pytest.warns(UserWarning, match=r"--set opponents\.1\.KEY=VALUE"):
        load_config(str(CONFIGS / "smoke_ppo.yaml"), ["opponents.1={name: knock.greedy}"])


def test_the_actions_network_error_says_what_to_use() -> None:
    smoke = str(CONFIGS / "smoke_ppo.yaml")
    with pytest.raises(ConfigLoadError, match=r"knock_rummy has none of .*use network: cards"):
        load_config(smoke, ["policy_kwargs.network=actions"])
    with pytest.raises(ConfigLoadError, match="no features are given; use features: ditch_actions"):
        load_config(smoke, ["variant=ditch_rummy", "policy_kwargs.network=actions"])


@pytest.mark.parametrize("features", ["rummy500_actions", "rummy500_actions_v1"])
def test_features_that_do_not_fit_the_player_count_are_refused_at_load(features):
    """500 Rum's action descriptions are for one-deck games: with 5 players (two decks) and
    the default 'mlp' network the config validated, and the run was refused at its start,
    advising the 'mlp' network it had and naming the descriptions' first version."""
    overrides = ["variant=rummy500", "num_players=5", f"features={features}"]
    with pytest.raises(ConfigLoadError, match=rf"--set features={features}: {features} describes one-deck games"
                       r".*\(5 players\) leave features out"):  # fmt: skip
        load_config(CONFIGS / "smoke_ppo.yaml", overrides)
    load_config(CONFIGS / "smoke_ppo.yaml", ["variant=rummy500", "num_players=4",
                                             f"features={features}"])  # fmt: skip


def test_a_number_with_a_leading_zero_is_refused_not_read_as_octal(tmp_path):
    """YAML 1.1 reads 010 as 8: a seed, a count or a label written so is refused by name."""
    with pytest.raises(ConfigLoadError, match=r"010 is an octal number in YAML \(8\)"):
        load_config(CONFIGS / "smoke_ppo.yaml", ["seed=010"])
    path = tmp_path / "octal.yaml"
    path.write_text("variant: knock_rummy\nn_timesteps: 0100\n")
    with pytest.raises(ConfigLoadError, match=r"0100 is an octal number in YAML \(64\).*line 2"):
        load_config(path)
    assert load_config(CONFIGS / "smoke_ppo.yaml", ["seed=10"]).seed == 10
    assert load_config(CONFIGS / "smoke_ppo.yaml", ["seed=0"]).seed == 0


def test_a_number_past_the_digits_python_reads_is_refused_by_line(tmp_path):
    """An int of more digits than Python turns a str into (4,300) ended the command with
    Python's message and no line; a --set echoed all its digits."""
    digits = "9" * 5000
    path = tmp_path / "huge.yaml"
    path.write_text(f"variant: knock_rummy\nn_timesteps: {digits}\n")
    with pytest.raises(ConfigLoadError, match=r"a number of 5000 characters, .*4300.*line 2"):
        load_config(path)
    with pytest.raises(ConfigLoadError, match=r"^--set seed=9{92}\.\.\.: .*5000 characters") as e:
        load_config(CONFIGS / "smoke_ppo.yaml", [f"seed={digits}"])
    assert len(str(e.value)) < 300
    # the same in other spellings, each a message without the number's digits
    for text, message in [
        ("0x" + "F" * 4000, r"seed: Input should be .*, got an int of more than 4300 digits"),
        ("0" + "7" * 5000, r"is an octal number in YAML \(an int of more than 4300 digits\)"),
        ("1" + ":59" * 3000, r"is a base-60 number in YAML \(an int of more than 4300 digits\)"),
    ]:
        path.write_text(f"variant: knock_rummy\nseed: {text}\n")
        with pytest.raises(ConfigLoadError, match=message) as e:
            load_config(path)
        assert len(str(e.value)) < 400
    # and a long --set is cut in every message, not only where its YAML fails
    with pytest.raises(ConfigLoadError, match=r"^--set seed=x{92}\.\.\.: ") as e:
        load_config(CONFIGS / "smoke_ppo.yaml", ["seed=" + "x" * 5000])
    assert len(str(e.value)) < 400
    from rummyzoo.cli.common import parse_options
    from rummyzoo.envs.core import ConfigError

    with pytest.raises(ConfigError, match="--option target_score: a number of 5000 characters"):
        parse_options([f"target_score={digits}"])
    from rummyzoo.envs.core import short_repr

    assert short_repr(10**5000) == "an int of more than 4300 digits"  # its repr raised
    assert short_repr([10**5000]) == "[an int of more than 4300 digits]"


def test_a_number_with_colons_is_refused_not_read_in_base_60(tmp_path):
    """YAML 1.1 reads 1:00 as 60 and 1:30.5 as 90.5: refused by name, like the octal above."""
    with pytest.raises(ConfigLoadError, match=r"1:00 is a base-60 number in YAML \(60\)"):
        load_config(CONFIGS / "smoke_ppo.yaml", ["seed=1:00"])
    path = tmp_path / "base60.yaml"
    path.write_text("variant: knock_rummy\nhyperparams:\n  gamma: 1:30.5\n")
    with pytest.raises(
        ConfigLoadError, match=r"1:30.5 is a base-60 number in YAML \(90.5\).*line 3"
    ):
        load_config(path)
    assert (
        load_config(CONFIGS / "smoke_ppo.yaml", ["hyperparams.gamma=0.9"]).hyperparams.gamma == 0.9
    )


def test_every_config_key_says_what_it_does():
    """The configuration reference is written from the fields' docstrings: a key without one
    would be a row that says nothing."""
    from rummyzoo.training.config_docs import SECTIONS

    missing = [
        f"{key or 'top level'}.{name}"
        for key, _, model in SECTIONS
        for name, field in model.model_fields.items()
        if not (field.description or "").strip()
    ]
    assert not missing


def test_the_configuration_reference_covers_every_section_and_is_current():
    """``docs/config.md`` is what ``python -m rummyzoo.training.config_docs`` writes now, and
    its sections reach every model a config holds."""
    import typing

    from pydantic import BaseModel

    from rummyzoo.training.config import RunConfig
    from rummyzoo.training.config_docs import SECTIONS, reference_markdown

    listed = {model for _, _, model in SECTIONS}
    seen: set[type] = set()

    def walk(model: type[BaseModel]) -> None:
        seen.add(model)
        for field in model.model_fields.values():
            stack = [field.annotation]
            while stack:
                kind = stack.pop()
                if isinstance(kind, type) and issubclass(kind, BaseModel):
                    if kind not in seen:
                        walk(kind)
                else:
                    stack.extend(typing.get_args(kind))

    walk(RunConfig)
    assert seen == listed
    page = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    assert page == reference_markdown(), (
        "docs/config.md is out of date: python -m rummyzoo.training.config_docs > docs/config.md"
    )
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(docs/config.md)" in readme
