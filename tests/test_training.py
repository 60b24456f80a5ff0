"""Training: configs, the seat env, masked DQN, smoke runs, checkpoints, resume, TensorBoard."""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch as th

from rummyzoo.agents.arena import run_arena
from rummyzoo.agents.base import BasePolicy
from rummyzoo.agents.checkpoints import CheckpointError, load_policy, read_meta
from rummyzoo.agents.registry import make_agent
from rummyzoo.envs.core import IllegalActionError
from rummyzoo.envs.registry import VARIANTS
from rummyzoo.training.config import ConfigLoadError, load_config, validate_config
from rummyzoo.training.dqn import MaskedDQN, masked_max
from rummyzoo.training.run_state import read_state
from rummyzoo.training.seat_env import SeatEnv
from rummyzoo.training.train import resume_run, train_from_file

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


# ------------------------------------------------------------------ configs
def test_shipped_configs_validate():
    names = sorted(p.name for p in CONFIGS.glob("*.yaml"))
    for variant in ("knock", "ditch", "rummy500"):
        for algo in ("ppo", "dqn"):
            assert f"{variant}_{algo}.yaml" in names
    for path in CONFIGS.glob("*.yaml"):
        load_config(path)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"bogus": 1}, r"unknown key 'bogus'; valid keys: variant, num_players"),
        ({"evaluation": {"dealz": 3}}, r"unknown key 'dealz' in evaluation; did you mean 'deals'"),
        ({"n_timesteps": "lots"}, r"n_timesteps: Input should be a valid integer"),
        ({"variant": "gin_rummy"}, r"variant: unknown variant 'gin_rummy'"),
        ({"num_players": 7}, r"num_players: knock_rummy supports 2-6 players, got 7"),
        ({"algo": "a2c"}, r"algo: Input should be 'ppo' or 'dqn'"),
        ({"algo": "dqn", "hyperparams": {"n_steps": 8}}, r"'n_steps' in hyperparams; n_steps is a"),
        (
            {"hyperparams": {"learning_rate": -1}},
            r"hyperparams\.learning_rate: Input should be greater than 0",
        ),
        ({"env_options": {"rummy_bonus": "lots"}}, r"env_options: .*rummy_bonus must be int"),
        ({"opponents": [{"name": "random", "weight": 0}]}, r"opponents\[0\]\.weight"),
        ({"policy_kwargs": {"activation_fn": "swish"}}, r"policy_kwargs\.activation_fn"),
    ],
)
def test_config_errors_name_the_key(data, message):
    with pytest.raises(ConfigLoadError, match=message):
        validate_config(data)


def test_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("variant: knock_rummy\nn_timesteps: 100\n")
    cfg = load_config(
        path,
        [
            "n_timesteps=500",
            "hyperparams.n_steps=32",
            "env_options.rummy_bonus=10",
            "policy_kwargs.net_arch=[16, 16]",
        ],
    )
    assert cfg.n_timesteps == 500 and cfg.hyperparams.n_steps == 32
    assert cfg.env_options == {"rummy_bonus": 10} and cfg.policy_kwargs.net_arch == [16, 16]
    with pytest.raises(ConfigLoadError, match=r"key\.sub=value"):
        load_config(path, ["n_timesteps"])
    with pytest.raises(ConfigLoadError, match="cannot read config"):
        load_config(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("variant: [unclosed\n")
    with pytest.raises(ConfigLoadError, match="not valid YAML"):
        load_config(tmp_path / "bad.yaml")


# ------------------------------------------------------------------ seat env
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_seat_env_passes_gymnasium_checker(variant):
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SeatEnv(variant, 2, opponents=["random"]), skip_render_check=True)
        check_env(
            SeatEnv(variant, 3, opponents=["random"], mask_in_obs=True), skip_render_check=True
        )


class ScriptedPolicy(BasePolicy):
    """Plays the first legal action whose name starts with one of ``prefixes``."""

    name = "scripted"

    def __init__(self, env, prefixes):
        self.env = env
        self.prefixes = prefixes

    def act(self, observation, action_mask, rng):
        for prefix in self.prefixes:
            for a in np.flatnonzero(action_mask):
                if self.env.action_name(int(a)).startswith(prefix):
                    return int(a)
        return int(np.flatnonzero(action_mask)[0])


def test_seat_env_final_reward_when_opponent_ends_the_game():
    env = SeatEnv("knock_rummy", 2, opponents=["random"], learner_seat=0, reward="points")
    obs, info = env.reset(seed=3)
    knocker = ScriptedPolicy(env.match.game, ["draw stock", "knock"])
    env.opponents._fixed["random"] = knocker  # the opponent knocks at its first turn
    env._policies[1] = knocker
    assert info["seat"] == 0
    obs, reward, term, trunc, info = env.step(env.match.game.action_index("draw stock"))
    assert reward == 0 and not term
    legal = np.flatnonzero(env.action_masks())
    obs, reward, term, trunc, info = env.step(int(legal[0]))  # a discard; then the knock
    assert term and not trunc
    points = info["game"]["points"]
    assert reward == pytest.approx(points) and points != 0
    assert not env.action_masks().any()
    # The observation is the learner's own: its hand plane matches its cards.
    start, stop = env.match.game.observation_layout["hand"]
    assert np.array_equal(np.flatnonzero(obs[start:stop]), env.match.state.hand_cards(0))


def test_seat_env_rotates_seats_and_penalises_or_raises_illegal():
    env = SeatEnv("knock_rummy", 3, opponents=["random"])
    seen = []
    for k in range(9):
        seat = (env.reset(seed=1) if k == 0 else env.reset())[1]["seat"]
        seen.append((seat, env._games))
    # the seat rotates with every game dealt, a game that ended before the learner acted
    # (skipped) too, as the batched env's does
    assert all(seat == (dealt - 1) % 3 for seat, dealt in seen), seen
    assert env.skipped_games > 0 and seen[-1][1] == 9 + env.skipped_games
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _obs, reward, term, _trunc, info = env.step(illegal)
    assert reward == -1.0 and info["illegal_action"] == illegal and not term
    strict = SeatEnv("knock_rummy", 2, opponents=["random"], illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="illegal action"):
        strict.step(int(np.flatnonzero(~strict.action_masks())[0]))


def test_seat_env_takes_the_action_a_models_predict_gives():
    """``model.predict(obs)`` on one observation gives a 0-d array: it is that action."""
    plain, arrays = (SeatEnv("ditch_rummy", 2, opponents=["random"]) for _ in range(2))
    plain.reset(seed=4)
    arrays.reset(seed=4)
    for _ in range(30):
        action = int(np.flatnonzero(plain.action_masks())[-1])
        a = plain.step(action)
        b = arrays.step(np.array(action))
        assert np.array_equal(a[0], b[0]) and a[1:4] == b[1:4] and "illegal_action" not in b[4]
        if a[2] or a[3]:
            break
    _obs, reward, *_rest, info = arrays.step(np.array(0.0))  # a float is still no action id
    assert reward == -1.0 and "illegal_action" in info


# ------------------------------------------------------------------ masked DQN
def test_dqn_full_exploration_never_takes_an_illegal_action(tmp_path, monkeypatch):
    from stable_baselines3.common.vec_env import DummyVecEnv

    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))  # the log folder of learn(), not the temp dir's

    def factory():
        return SeatEnv(
            "knock_rummy", 2, opponents=["random"], mask_in_obs=True, illegal_action="raise"
        )

    vec = DummyVecEnv([factory, factory])
    model = MaskedDQN(
        "MlpPolicy",
        vec,
        learning_starts=50,
        buffer_size=2000,
        batch_size=16,
        train_freq=4,
        exploration_initial_eps=1.0,
        exploration_final_eps=1.0,
        policy_kwargs={"net_arch": [16]},
        seed=0,
    )
    model.learn(total_timesteps=1500)  # any illegal action would raise IllegalActionError
    assert model.num_timesteps >= 1500
    # Greedy and exploring predictions are legal too.
    obs = vec.reset()
    for deterministic in (True, False):
        actions, _ = model.predict(obs, deterministic=deterministic)
        masks = obs[:, -106:] > 0.5
        assert all(masks[i, a] for i, a in enumerate(actions))


def test_dqn_target_ignores_illegal_actions():
    q = th.tensor([[5.0, 100.0, 2.0], [1.0, 2.0, 3.0], [7.0, 8.0, 9.0]])
    mask = th.tensor([[True, False, True], [True, True, True], [False, False, False]])
    assert masked_max(q, mask).tolist() == [5.0, 3.0, 0.0]

    env = SeatEnv("knock_rummy", 2, opponents=["random"], mask_in_obs=True)
    model = MaskedDQN("MlpPolicy", env, policy_kwargs={"net_arch": [8]}, seed=0, gamma=0.5)
    n = env.num_actions
    next_obs = th.zeros((2, env.observation_space.shape[0]))
    next_obs[0, -n + 3] = 1.0  # only action 3 legal in the first next state
    next_obs[1, -n + 7] = 1.0
    with th.no_grad():  # make the illegal action 1 look far better than anything legal
        model.q_net_target.q_net[-1].bias[1] = 1000.0
        q_next = model.q_net_target(next_obs)
    assert q_next[0].argmax().item() == 1
    target = model.td_target(th.tensor([[1.0], [2.0]]), next_obs, th.tensor([[0.0], [1.0]]))
    assert target[0, 0].item() == pytest.approx(1.0 + 0.5 * q_next[0, 3].item())
    assert target[1, 0].item() == pytest.approx(2.0)  # done: no bootstrap
    assert target[0, 0].item() < 100
    # a game the turn cap cut (not done, but its last observation has no legal action): its
    # reward alone, as the module says
    cut = model.td_target(th.tensor([[1.5]]), th.zeros_like(next_obs[:1]), th.tensor([[0.0]]))
    assert cut[0, 0].item() == pytest.approx(1.5)


# ------------------------------------------------------------------ smoke runs
def _smoke(tmp_path, algo, variant, more=()):
    run = tmp_path / f"{variant}_{algo}"
    overrides = [f"variant={variant}", "env_options.target_score=null", *more]  # single hands
    summary = train_from_file(str(CONFIGS / f"smoke_{algo}.yaml"), overrides, str(run), ["test"])
    return run, summary


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_smoke_train_checkpoint_plays_and_resumes(tmp_path, algo, variant):
    run, summary = _smoke(tmp_path, algo, variant)
    assert summary["steps"] >= 256
    for name in ("config.yaml", "command.txt", "version.json", "state.json", "summary.json"):
        assert (run / name).exists(), name
    last = run / "checkpoints" / "last.rz"
    meta = read_meta(last)
    assert meta["variant"] == variant and meta["algo"] == algo and meta["steps"] == summary["steps"]
    assert (run / "checkpoints" / "best.rz").exists() and list((run / "pool").glob("*.rz"))
    assert (run / "checkpoints" / "last.zip").exists()  # the resume file
    from rummyzoo.envs.replay import load_replay, verify_replay

    games = sorted((run / "games").glob("*.json"))
    assert games, "no sample game saved"
    verify_replay(load_replay(games[0]))
    # The checkpoint plays legal games in the arena (an illegal move would raise).
    result = run_arena(variant, 2, [str(last), "random"], deals=3, seed=1, workers=1)
    assert result.games == 6
    # Resume continues the step count.
    resumed = resume_run(str(run), ["n_timesteps=384"], ["test"])
    assert resumed["steps"] >= 384 and read_meta(last)["steps"] == resumed["steps"]


def test_resume_refuses_a_run_whose_pool_snapshot_is_gone_and_changes_nothing(tmp_path):
    run, _ = _smoke(tmp_path, "ppo", "knock_rummy")
    state = read_state(run)  # its paths in the run folder
    assert state["pool"], "the smoke run keeps self-play snapshots"
    Path(state["pool"][0]["path"]).unlink()
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match="pool snapshot\\(s\\) of the checkpoint are missing"):
        resume_run(str(run), ["n_timesteps=384"], ["test"])
    after = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert after == before  # refused before anything was rewound or written


def test_resume_refuses_a_run_folder_it_cannot_write_in_and_changes_nothing(tmp_path, monkeypatch):
    """A resume whose checkpoints folder cannot be written in is refused before anything
    changes (it used to rewrite config.yaml, train to its first checkpoint and fail there)."""
    import tempfile

    run, _ = _smoke(tmp_path, "ppo", "knock_rummy")
    real = tempfile.TemporaryFile

    def refusing(*args, dir=None, **kwargs):  # a read-only folder, as root cannot make one
        if dir is not None and Path(dir) == run / "checkpoints":
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "TemporaryFile", refusing)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    message = f"cannot resume {run}: cannot write in {run / 'checkpoints'} \\(Permission denied\\)"
    with pytest.raises(ValueError, match=message):
        resume_run(str(run), ["n_timesteps=384"], ["test"])
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_tensorboard_has_the_promised_tags(tmp_path, algo):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    # the round robin's ratings have intervals from 10 deals on
    run, _ = _smoke(tmp_path, algo, "knock_rummy", ["evaluation.cross_table_deals=10"])
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    scalars, histograms, tensors = set(), set(), set()
    plugins = set()
    for folder in (run / "tb").iterdir():
        acc = EventAccumulator(
            str(folder), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0}
        )
        acc.Reload()
        tags = acc.Tags()
        scalars |= set(tags["scalars"])
        histograms |= set(tags["histograms"])
        tensors |= set(tags["tensors"])
        for events in folder.glob("events.out.tfevents.*"):
            for event in EventFileLoader(str(events)).Load():
                for value in event.summary.value:
                    plugins.add(value.metadata.plugin_data.plugin_name)
    sb3_own = ["rollout/ep_rew_mean", "train/value_loss"] if algo == "ppo" else []
    for tag in [
        *sb3_own,
        "charts/game_length",
        "charts/points_per_hand",
        "charts/train_win_rate",
        "eval/random/win_rate",
        "eval/random/win_rate_low",
        "eval/random/win_rate_high",
        "eval/random/mean_points",
        "eval/score",
        "selfplay/pool_size",
        "selfplay/rating",
        # the dashboard: ratings against the anchors, the strategy, the points per hand band
        "eval/random/points_per_hand",
        "eval/random/points_per_hand_low",
        "eval/random/points_per_hand_high",
        "rating/learner",
        "rating/learner_low",
        "rating/learner_high",
        "rating/random",
        "rating/knock.smart",
        "strategy/take_discard_rate",
        "strategy/knock_rate",
    ]:
        assert tag in scalars, tag
    assert "charts/score_margin" in histograms
    assert any(t.startswith("strategy/") and t.endswith("_hist") for t in histograms)
    assert any(t.startswith("text/sample_game") for t in tensors)
    assert "custom_scalars__config__" in tensors, "no CUSTOM SCALARS layout"
    assert {"hparams", "custom_scalars", "images"} <= plugins


def test_every_chart_of_the_layout_has_its_tags_at_the_same_steps(tmp_path):
    """TensorBoard draws a margin chart only where the value and both band tags are at every
    step: with too few deals for an interval (the smoke config's round robin of 2 deals) the
    bands were left out and the charts stayed empty. A run without self-play has no self-play
    chart (it logs no rating)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.custom_scalar import layout_pb2, metadata

    run, _ = _smoke(tmp_path, "ppo", "knock_rummy", ["opponents=[{name: random, weight: 1}]"])
    (folder,) = (run / "tb").iterdir()
    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    steps = {tag: [e.step for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
    (event,) = acc.Tensors(metadata.CONFIG_SUMMARY_TAG)[-1:]
    layout = layout_pb2.Layout.FromString(event.tensor_proto.string_val[0])
    titles = [chart.title for category in layout.category for chart in category.chart]
    assert "self-play rating" not in titles and not any(t.startswith("selfplay/") for t in steps)
    margins = [
        chart.margin.series[0]
        for category in layout.category
        for chart in category.chart
        if chart.HasField("margin")
    ]
    assert any(s.value == "rating/learner" for s in margins)
    for series in margins:
        value, lower, upper = series.value, series.lower, series.upper
        assert steps.get(value), value
        assert steps[value] == steps[lower] == steps[upper], value
        rows = zip(acc.Scalars(value), acc.Scalars(lower), acc.Scalars(upper), strict=True)
        for v, lo, hi in rows:
            assert lo.value <= v.value <= hi.value, (value, lo.value, v.value, hi.value)


def test_a_game_against_a_snapshot_that_left_the_pool_counts_that_snapshots_rating(
    tmp_path, monkeypatch
):
    """selfplay/rating compares the learner with each snapshot it played at the rating that
    snapshot was taken with; a game drawn against one that left the pool before the game
    ended was counted at 0.0."""
    from rummyzoo.training import callbacks

    taken: dict[int, float] = {}
    looked_up: list[tuple[int, float, bool]] = []
    snapshot, lookup = callbacks.RunCallback._snapshot, callbacks.RunCallback._snapshot_rating

    def remember(self):
        taken[int(self.num_timesteps)] = float(self.rating)
        snapshot(self)

    def record(self, steps):
        rating = lookup(self, steps)
        looked_up.append((int(steps), rating, any(p["steps"] == steps for p in self.pool)))
        return rating

    monkeypatch.setattr(callbacks.RunCallback, "_snapshot", remember)
    monkeypatch.setattr(callbacks.RunCallback, "_snapshot_rating", record)
    more = ["opponents=[{name: self, weight: 1}]", "self_play.pool_size=1"]
    more += ["self_play.snapshot_interval=32", "n_timesteps=1024"]
    _smoke(tmp_path, "ppo", "knock_rummy", more)
    gone = [(steps, rating) for steps, rating, in_pool in looked_up if not in_pool]
    assert any(taken[steps] != 0.0 for steps, _ in gone), (taken, gone)  # the case
    assert all(rating == taken[steps] for steps, rating, _ in looked_up)


# ------------------------------------------------------------------ checkpoints
def test_checkpoint_errors_are_clear(tmp_path, capsys):
    run, _ = _smoke(tmp_path, "dqn", "knock_rummy")
    last = run / "checkpoints" / "last.rz"
    with pytest.raises(CheckpointError, match="does not match this env: variant"):
        load_policy(last, "rummy500", 2)
    with pytest.raises(CheckpointError, match="num_players: checkpoint 2, env 3"):
        load_policy(last, "knock_rummy", 3)
    # Other rules with the same layout play, with a warning naming them.
    with pytest.warns(UserWarning, match=r"other rules \(rummy_bonus: checkpoint 25, env 0\)"):
        assert load_policy(last, "knock_rummy", 2, {"rummy_bonus": 0}).name == "last.rz"
    assert load_policy(last, "knock_rummy", 2, {"target_score": 100}).name == "last.rz"
    with warnings.catch_warnings():  # the rules' own defaults, spelled out: the same rules
        warnings.simplefilter("error")
        spelled = {"hand_size": 10, "stock_exhaustion": "void", "rummy_bonus": 25}
        assert load_policy(last, "knock_rummy", 2, spelled).name == "last.rz"
    # rules options that the game refuses, recorded in a checkpoint, are named as its
    # (``kernels``, an argument of the function that builds a game, passed every check and
    # failed later, unnamed, as an option the user never typed)
    from rummyzoo.cli.main import main

    for recorded in ({"foo": 1}, {"kernels": False}):
        foreign = tmp_path / "foreign.rz"
        with zipfile.ZipFile(last) as src, zipfile.ZipFile(foreign, "w") as dst:
            for item in src.namelist():
                data = src.read(item)
                if item == "rummyzoo.json":
                    data = json.dumps({**json.loads(data), "options": recorded}).encode()
                dst.writestr(item, data)
        with pytest.raises(CheckpointError, match=r"checkpoint .*foreign.rz has rules options the"):
            load_policy(foreign, "knock_rummy", 2)
        for command in (["evaluate", str(foreign), "--deals", "1", "--opponents", "random"],
                        ["arena", "knock_rummy", "--agents", str(foreign), "random", "--deals",
                         "1", "--workers", "1"]):  # fmt: skip
            assert main(command) != 0
            err = capsys.readouterr().err
            assert "foreign.rz has rules options the game refuses: unknown" in err, err
    # A layout change is refused, naming what changed.
    relaid = tmp_path / "relaid.rz"
    with zipfile.ZipFile(last) as src, zipfile.ZipFile(relaid, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == "rummyzoo.json":
                meta = json.loads(data)
                meta["obs_size"] += 52
                meta["observation_layout"]["hand"] = [0, 104]
                data = json.dumps(meta).encode()
            dst.writestr(item, data)
    with pytest.raises(CheckpointError, match=r"observation size: checkpoint \d+, env \d+; "):
        load_policy(relaid, "knock_rummy", 2)
    with pytest.raises(CheckpointError, match="observation layout: hand differ"):
        load_policy(relaid, "knock_rummy", 2)
    with pytest.raises(ValueError, match=r"does not match this env"):
        make_agent(str(last), "rummy500", 2)
    corrupt = tmp_path / "corrupt.rz"
    corrupt.write_bytes(last.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="truncated or damaged: a zip archive of 200 bytes"):
        read_meta(corrupt)
    with pytest.raises(CheckpointError, match="is a directory, not a checkpoint file"):
        read_meta(tmp_path)
    # a resume file cut right after a torch file stored in it (itself a zip) read as that zip,
    # and was called no rummyzoo checkpoint
    from rummyzoo.agents.checkpoints import read_trusted_meta

    whole = run / "checkpoints" / "last.zip"
    with zipfile.ZipFile(whole) as archive:
        inner = archive.getinfo("policy.pth")
    assert inner.compress_type == zipfile.ZIP_STORED
    data = whole.read_bytes()
    at = inner.header_offset
    start = at + 30 + int.from_bytes(data[at + 26 : at + 28], "little")
    start += int.from_bytes(data[at + 28 : at + 30], "little")
    cut = tmp_path / "cut.zip"
    cut.write_bytes(data[: start + inner.compress_size])
    with zipfile.ZipFile(cut) as misread:  # (the setup the check is for)
        assert "rummyzoo.json" not in misread.namelist()
    with pytest.raises(CheckpointError, match=r"cut.zip is truncated or damaged: .*cut short"):
        read_trusted_meta(cut)
    assert read_trusted_meta(whole)["algo"] == "dqn"
    # the run's checkpoints/ folder itself: the file inside it is suggested
    folder = last.parent
    with pytest.raises(CheckpointError) as err:
        read_meta(folder)
    assert f"e.g. {folder / 'best.rz'})" in str(err.value) or f"e.g. {folder / 'last.zip'})" in str(
        err.value
    )
    assert "checkpoints/checkpoints" not in str(err.value)
    text = tmp_path / "notes.rz"
    text.write_text("hello")
    with pytest.raises(CheckpointError, match="is not a zip archive"):
        read_meta(text)
    plain = tmp_path / "plain.rz"
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("notes.txt", "{}")
    with pytest.raises(CheckpointError, match="not a rummyzoo checkpoint"):
        read_meta(plain)
    with pytest.raises(CheckpointError, match="does not exist"):
        read_meta(tmp_path / "nope.rz")
    tampered = tmp_path / "tampered.rz"
    with zipfile.ZipFile(last) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == "rummyzoo.json":
                data = b"{not json"
            dst.writestr(item, data)
    with pytest.raises(CheckpointError, match="unreadable metadata"):
        read_meta(tampered)
    state = json.loads((run / "state.json").read_text())
    assert state["steps"] >= 256


def test_features_train_record_and_play(tmp_path):
    run = tmp_path / "features"
    summary = train_from_file(
        str(CONFIGS / "smoke_ppo.yaml"),
        ["features=knock_deadwood"],
        str(run),
        ["test"],
    )
    last = run / "checkpoints" / "last.rz"
    assert read_meta(last)["features"] == "knock_deadwood" and summary["steps"] >= 256
    policy = load_policy(last, "knock_rummy", 2)
    assert policy.features is not None and policy.features.size == 106
    result = run_arena("knock_rummy", 2, [str(last), "random"], deals=2, seed=0, workers=1)
    assert result.games == 4


def test_knock_features_values():
    from rummyzoo.agents.features import make_features
    from rummyzoo.envs.cards import parse_card

    env = SeatEnv("knock_rummy", 2, opponents=["random"], learner_seat=0, features="knock_deadwood")
    env.reset(seed=0)
    obs = env.match.observe(0)
    feats = env.features(obs)
    hand = env.match.state.hand_cards(0)
    from rummyzoo.envs.melds import optimal_deadwood

    assert feats[0] == pytest.approx(optimal_deadwood(hand)[0] / 100)
    card = hand[0]
    rest = [c for c in hand if c != card]
    assert feats[1 + card] == pytest.approx(optimal_deadwood(rest)[0] / 100)
    assert feats[1 + parse_card("Ks")] == 0 or parse_card("Ks") in hand
    with pytest.raises(ValueError, match="are for knock_rummy"):
        make_features("knock_deadwood", "rummy500", 2, {})
    with pytest.raises(ConfigLoadError, match="features"):
        validate_config({"variant": "ditch_rummy", "features": "knock_deadwood"})


# ------------------------------------------------------------------ knock_deadwood oracle
# Every column of the ``knock_deadwood`` features rebuilt from the hand as card strings, the
# discard pile and the rule on the taken card, with a brute-force deadwood of its own.
_RANKS = "A23456789TJQK"


def _pips(card: str) -> int:
    """Knock Rummy value of a card string: A=1, 2-9 their pips, T/J/Q/K=10."""
    return min(_RANKS.index(card[0]) + 1, 10)


def _melds_among(cards: frozenset[str]) -> list[frozenset[str]]:
    """Every set (3 or 4 of a rank) and run (3+ consecutive ranks of a suit, ace low) in cards."""
    import itertools

    melds = []
    for rank in _RANKS:
        same = sorted(c for c in cards if c[0] == rank)
        for size in (3, 4):
            melds += [frozenset(m) for m in itertools.combinations(same, size)]
    for suit in "cdhs":
        for low in range(len(_RANKS)):
            run: list[str] = []
            for rank in _RANKS[low:]:
                if rank + suit not in cards:
                    break
                run.append(rank + suit)
                if len(run) >= 3:
                    melds.append(frozenset(run))
    return melds


_BRUTE_MEMO: dict[frozenset[str], int] = {}


def _brute_deadwood(cards: frozenset[str]) -> int:
    """Optimal deadwood by exhaustive search: any one card is deadwood or in one of its melds."""
    found = _BRUTE_MEMO.get(cards)
    if found is None:
        if not cards:
            return 0
        card = min(cards)
        found = _pips(card) + _brute_deadwood(cards - {card})
        for meld in _melds_among(cards):
            if card in meld:
                found = min(found, _brute_deadwood(cards - meld))
        _BRUTE_MEMO[cards] = found
    return found


def _knock_feature_columns(
    hand: list[str], pile: list[str], allow_taken: bool
) -> dict[int, tuple[str, float]]:
    """Column -> (its name, its value) of the knock_deadwood features of a hand and a discard
    pile (bottom first), with the hand's optimal melds checked against the brute force."""
    from rummyzoo.envs.cards import parse_card, parse_cards
    from rummyzoo.envs.melds import optimal_deadwood

    held = frozenset(hand)
    best = _brute_deadwood(held)
    # the melds: the solver's own choice among equal ones, checked to be optimal melds
    melded = frozenset(_card_name(c) for m in optimal_deadwood(parse_cards(hand))[1] for c in m)
    assert melded <= held, f"melds of cards not held: {sorted(melded - held)}"
    assert _brute_deadwood(melded) == 0, f"not all melds: {sorted(melded)}"
    assert sum(_pips(c) for c in held - melded) == best, f"melds {sorted(melded)}"
    columns = {0: ("deadwood", best / 100)}
    for name in (rank + suit for suit in "cdhs" for rank in _RANKS):
        after = _brute_deadwood(held - {name}) / 100 if name in held else 0.0
        columns[1 + parse_card(name)] = (f"after_discard {name}", after)
        columns[53 + parse_card(name)] = (f"melded {name}", float(name in melded))
    take = 0.0
    if pile:
        top = pile[-1]
        with_top = held | {top}
        take = (
            min(_brute_deadwood(with_top - {d}) for d in with_top if allow_taken or d != top) / 100
        )
    columns[105] = (f"take_discard (top {pile[-1] if pile else None})", take)
    assert sorted(columns) == list(range(106))
    return columns


def _card_name(card: int) -> str:
    from rummyzoo.envs.cards import format_card

    return format_card(card)


def _check_knock_columns(got: np.ndarray, columns: dict[int, tuple[str, float]], where: str):
    assert got.shape == (106,), where
    for col in range(106):
        name, value = columns[col]
        assert got[col] == pytest.approx(value, abs=1e-6), (
            f"column {col} ({name}): got {got[col]}, expected {value} ({where})"
        )


def _seat_view(match, seat: int) -> tuple[list[str], list[str]]:
    """A seat's hand and the discard pile (bottom first) as card strings, from the state."""
    state = match.state
    hand = [_card_name(c) for c in state.hand_cards(seat)]
    return hand, [_card_name(c) for c in state.discard]


def _knock_test_move(match, rng: np.random.Generator) -> int:
    """Random draws; mostly the discard that leaves the least deadwood (hands then improve, so
    that the rule on the taken card decides the take_discard column often); knocks rarely."""
    legal = np.flatnonzero(match.legal_mask()).tolist()
    discards = [a for a in legal if 2 <= a < 54]
    if not discards or rng.random() < 0.02:
        return int(rng.choice(legal))
    if rng.random() < 0.3:
        return int(rng.choice(discards))
    hand, _ = _seat_view(match, match.current)
    held = frozenset(hand)
    return min(discards, key=lambda a: _brute_deadwood(held - {_card_name(a - 2)}))


@pytest.mark.parametrize(
    "players, options",
    [
        (2, {}),
        (2, {"allow_discard_of_taken": True}),
        (2, {"knock_max_deadwood": 10, "stock_exhaustion": "reshuffle", "void_threshold": 2}),
        (4, {}),
        (4, {"allow_discard_of_taken": True, "knock_max_deadwood": 0}),
    ],
)
def test_knock_features_match_an_oracle_column_by_column(players, options):
    """Every column of knock_deadwood, for every seat of random states of both phases, equals
    its rebuild from the hand, the discard pile and the taken-card rule (one observation at a
    time and as a batch)."""
    from rummyzoo.agents.features import make_features
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    allow = bool(options.get("allow_discard_of_taken", False))
    features = make_features("knock_deadwood", "knock_rummy", players, options)
    match = Match(make_game("knock_rummy", players, **options))
    rng = np.random.default_rng(players * 10 + len(options))
    seen, rule_matters, phases = [], 0, set()
    for game in range(3):
        match.reset(seed=100 + game)
        while not match.over and len(seen) < 240 * (game + 1):
            for seat in range(players):
                obs = match.observe(seat)
                hand, pile = _seat_view(match, seat)
                columns = _knock_feature_columns(hand, pile, allow)
                where = f"seat {seat}, hand {' '.join(hand)}, pile {' '.join(pile)}"
                _check_knock_columns(features(obs), columns, where)
                seen.append((obs, columns, where))
                if pile:  # would the other rule on the taken card give another value?
                    other = _knock_feature_columns(hand, pile, not allow)[105][1]
                    rule_matters += other != columns[105][1]
            phases.add(int(match.state.phase))
            match.play(_knock_test_move(match, rng))
    assert phases == {0, 1} and len(seen) > 100 and rule_matters > 10, rule_matters
    batch = features.batch(np.stack([obs for obs, _, _ in seen]))
    for row, (_, columns, where) in zip(batch, seen, strict=True):
        _check_knock_columns(row, columns, f"batch, {where}")


@pytest.mark.parametrize("allow_taken, take", [(False, 15), (True, 10)])
def test_knock_features_of_a_scripted_deal(allow_taken, take):
    """A worked hand: As-4s and 7h-9h melded, 2c 3d 5c deadwood (10), the Kh turned up. Taking
    the Kh leaves 10 when it may be thrown back, else 15 (throwing the 5c)."""
    from rummyzoo.agents.features import make_features
    from rummyzoo.envs import decks
    from rummyzoo.envs.cards import parse_card, parse_cards
    from rummyzoo.envs.knock_rummy.rules import DISCARD_BASE, TAKE_DISCARD
    from rummyzoo.envs.match import Match
    from rummyzoo.envs.registry import make_game

    options = {"allow_discard_of_taken": allow_taken}
    hands = ["As 2s 3s 4s 7h 8h 9h 2c 3d 5c", "Ad 2d 5d 6d 8d Tc Jc Qh 9s Js"]
    match = Match(make_game("knock_rummy", 2, **options))
    match.reset(seed=0, deck=decks.deck_for(hands, "Kh", "4d 6c"))
    features = make_features("knock_deadwood", "knock_rummy", 2, options)
    got = features(match.observe(0))
    assert got[0] == pytest.approx(0.10)
    after = {"5c": 5, "3d": 7, "2c": 8, "As": 10, "4s": 10, "2s": 18, "3s": 17, "7h": 27}
    after |= {"8h": 26, "9h": 25}
    for name, dw in after.items():
        assert got[1 + parse_card(name)] == pytest.approx(dw / 100), name
    melded = set(parse_cards("As 2s 3s 4s 7h 8h 9h"))
    assert set(np.flatnonzero(got[53:105]).tolist()) == melded
    assert got[105] == pytest.approx(take / 100)
    for seat in (0, 1):
        hand, pile = _seat_view(match, seat)
        _check_knock_columns(
            features(match.observe(seat)), _knock_feature_columns(hand, pile, allow_taken), "deal"
        )
    # seat 0 takes the Kh (the pile is then empty: no take_discard) and throws the 5c
    match.play(TAKE_DISCARD)
    got = features(match.observe(0))
    assert got[105] == 0 and got[1 + parse_card("Kh")] == pytest.approx(0.10)
    match.play(DISCARD_BASE + parse_card("5c"))
    for seat in (0, 1):
        hand, pile = _seat_view(match, seat)
        assert pile == ["5c"]
        _check_knock_columns(
            features(match.observe(seat)),
            _knock_feature_columns(hand, pile, allow_taken),
            f"after the 5c, seat {seat}",
        )


def test_potential_shaping_telescopes():
    """With gamma = 1 the shaping terms of a game sum to -phi(first state): policy-neutral."""
    plain = SeatEnv("knock_rummy", 2, opponents=["knock.greedy"], reward="scaled", reward_scale=50)
    shaped = SeatEnv(
        "knock_rummy",
        2,
        opponents=["knock.greedy"],
        reward="scaled",
        reward_scale=50,
        shaping="knock_deadwood",
        gamma=1.0,
    )
    for seed in range(3):
        plain.reset(seed=seed)
        shaped.reset(seed=seed)
        phi0 = shaped._phi
        assert phi0 < 0  # minus the dealt hand's deadwood
        rng = np.random.default_rng(seed)
        totals = [0.0, 0.0]
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(plain.action_masks())))
            assert np.array_equal(plain.action_masks(), shaped.action_masks())
            _, r_plain, term, trunc, _ = plain.step(action)
            _, r_shaped, term2, trunc2, _ = shaped.step(action)
            assert (term, trunc) == (term2, trunc2)
            totals[0] += r_plain
            totals[1] += r_shaped
            done = term or trunc
        assert totals[1] == pytest.approx(totals[0] - phi0)
    with pytest.raises(ConfigLoadError, match="shaping"):
        validate_config({"variant": "rummy500", "shaping": "knock_deadwood"})


@pytest.mark.parametrize("bootstrap_cuts", [True, False])
def test_shaping_at_a_game_cut_by_the_turn_cap_follows_the_algorithm(bootstrap_cuts):
    """A cut game keeps the potential of where it was cut for PPO, which bootstraps it from
    its value, and ends with the potential 0 for the masked DQN, which scores a cut as an end
    (with gamma = 1: a cut game's shaped rewards sum to its own less phi(first), plus
    phi(cut) for PPO). Both training envs alike, step by step."""
    from rummyzoo.training.vec_env import BatchedSeatEnv

    options = {"target_score": None, "max_turns": 3}
    kw = {"opponents": ["random"], "reward": "scaled", "reward_scale": 50, "gamma": 1.0}
    plain = SeatEnv("knock_rummy", 2, options, **kw)
    kw |= {"shaping": "knock_deadwood", "bootstrap_cuts": bootstrap_cuts}
    shaped = SeatEnv("knock_rummy", 2, options, **kw)
    batched = BatchedSeatEnv("knock_rummy", 2, options, num_envs=1, seed=3, **kw)
    plain.reset(seed=3)
    shaped.reset(seed=3)
    batched.reset()
    rng = np.random.default_rng(0)
    cuts = 0
    games = 0
    while cuts < 4 and games < 400:
        games += 1
        phi0, totals, done = shaped._phi, [0.0, 0.0], False
        while not done:
            action = int(rng.choice(np.flatnonzero(shaped.action_masks())))
            _, r_plain, _, _, _ = plain.step(action)
            _, r_shaped, term, trunc, _ = shaped.step(action)
            _, rewards, _, _ = batched.step(np.array([action]))
            assert float(rewards[0]) == pytest.approx(r_shaped, abs=1e-5)
            totals[0] += r_plain
            totals[1] += r_shaped
            done = term or trunc
        left = shaped._phi if trunc and bootstrap_cuts else 0.0  # the cut state's potential
        assert totals[1] == pytest.approx(totals[0] - phi0 + left)
        if trunc:
            cuts += 1
            assert (left != 0.0) == bootstrap_cuts
        plain.reset()
        shaped.reset()
    assert cuts >= 4, games


def test_ditch_hand_margin_potential_worked_example():
    """The hand's margin if it ended now: points less held cards, an unseen card at the mean
    penalty of the cards the observer has not seen."""
    from rummyzoo.agents.features import make_potential
    from rummyzoo.envs import ditch_rummy_v0
    from rummyzoo.envs.ditch_rummy.scripting import deck_with_top, play

    env = ditch_rummy_v0.raw_env(num_players=2)
    env.reset(options={"deck": deck_with_top("9c 9h Kd 4s 5h As")})
    # player_0 sets 9c 9h (5) and keeps Kd; player_1 runs 4s 5h (25) and keeps As
    play(env, ["draw 3", "meld 0 1", "end turn", "draw 3", "meld 0 1", "end turn"])
    phi = make_potential("ditch_hand_margin", "ditch_rummy", 2, {})
    # player_0: 5 - 2 (Kd) against 25 - one unseen card; 47 unseen, 4 of them aces (10 each)
    assert phi(env.observe("player_0")["observation"]) == pytest.approx(3 - (25 - 126 / 47))
    # player_1: 25 - 10 (As) against 5 - one card; 47 unseen, 3 aces (As is seen)
    assert phi(env.observe("player_1")["observation"]) == pytest.approx(15 - (5 - 118 / 47))
    own = make_potential("ditch_hand_points", "ditch_rummy", 2, {})
    assert own(env.observe("player_0")["observation"]) == 3  # 5 - 2
    assert own(env.observe("player_1")["observation"]) == 15  # 25 - 10
    free = make_potential("ditch_hand_margin", "ditch_rummy", 2, {"hand_penalty": "none"})
    env = ditch_rummy_v0.raw_env(num_players=2, hand_penalty="none")
    env.reset(options={"deck": deck_with_top("9c 9h Kd 4s 5h As")})
    play(env, ["draw 3", "meld 0 1", "end turn", "draw 3", "meld 0 1", "end turn"])
    assert free(env.observe("player_0")["observation"]) == -20


@pytest.mark.parametrize(
    ("players", "options"),
    [(2, {"target_score": None}), (4, {"target_score": None, "teams": True}), (3, {})],
)
@pytest.mark.parametrize(
    ("reward", "shaping"), [("margin", "ditch_hand_margin"), ("scaled", "ditch_hand_points")]
)
def test_ditch_hand_shaping_batched_matches_seat_env(players, options, reward, shaping):
    """The batched env's one call per step gives every game the seat env's shaped rewards, and
    with gamma = 1 the shaping of a game sums to minus its first potential."""
    from rummyzoo.training.vec_env import BatchedSeatEnv

    kw = {
        "env_options": options,
        "opponents": ["ditch.greedy"],
        "reward": reward,
        "reward_scale": 100,
        "gamma": 1.0,
    }
    n = 4
    batched = BatchedSeatEnv("ditch_rummy", players, num_envs=n, seed=5, shaping=shaping, **kw)
    plain = BatchedSeatEnv("ditch_rummy", players, num_envs=n, seed=5, **kw)
    batched.reset()
    plain.reset()
    phi0 = batched._phi.copy()
    assert np.array_equal(phi0, [batched.potential(o) / 100 for o in batched.engine.observations])
    rng = np.random.default_rng(0)
    totals = np.zeros((2, n))
    ended = 0
    while ended < 12:
        masks = batched.action_masks()
        assert np.array_equal(masks, plain.action_masks())
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, r_shaped, done, _ = batched.step(actions)
        _, r_plain, done2, _ = plain.step(actions)
        assert np.array_equal(done, done2)
        totals += [r_shaped, r_plain]
        live = ~done
        assert np.allclose(
            batched._phi[live],
            [batched.potential(o) / 100 for o in batched.engine.observations[live]],
        )
        for i in np.flatnonzero(done):
            assert totals[0, i] == pytest.approx(totals[1, i] - phi0[i], abs=1e-5)
            totals[:, i] = 0
            phi0[i] = batched._phi[i]
            ended += 1
    with pytest.raises(ConfigLoadError, match="shaping"):
        validate_config({"variant": "knock_rummy", "shaping": "ditch_hand_margin"})
    validate_config({"variant": "ditch_rummy", "shaping": "ditch_hand_margin"})


def test_the_pool_rating_stays_finite_and_follows_the_record() -> None:
    """selfplay/rating: one virtual draw against the pool's mean keeps a record of wins only
    finite (its maximum-likelihood rating is infinite: 1 win gave +2,445), and the rating still
    rises with the wins and with the opponents' ratings."""
    from rummyzoo.training.callbacks import pool_rating

    assert pool_rating([]) is None
    one = pool_rating([(0.0, 1.0)])
    twenty = pool_rating([(0.0, 1.0)] * 20)
    assert one == pytest.approx(400 * np.log10(3))  # 1.5 of 2: odds 3 to 1
    assert twenty == pytest.approx(400 * np.log10(41))  # 20.5 of 21
    assert pool_rating([(0.0, 0.5)] * 10) == pytest.approx(0.0)
    assert pool_rating([(0.0, 0.0)] * 5) == pytest.approx(-pool_rating([(0.0, 1.0)] * 5))
    assert pool_rating([(100.0, 0.5), (300.0, 0.5)]) == pytest.approx(200.0, abs=1e-6)
    assert pool_rating([(0.0, 1.0), (0.0, 0.0)] * 50) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_strategy_statistic_is_drawn_in_one_chart_of_its_unit(variant):
    """The dashboard draws the strategy statistics by unit (rates, points, counts, the hands
    counted): each statistic a variant logs is in exactly one of those charts."""
    import re

    from rummyzoo.agents.registry import make_agent
    from rummyzoo.training.config import validate_config
    from rummyzoo.training.dashboard import custom_layout, strategy_stats

    config = validate_config(
        {
            "variant": variant,
            "env_options": {"target_score": None},
            "evaluation": {"opponents": [f"{variant.split('_')[0]}.greedy"], "strategy_games": 60},
        }
    )
    learner = make_agent(f"{variant.split('_')[0]}.greedy", variant, 2, {"target_score": None})
    scalars, _ = strategy_stats(learner, config, seed=3)
    charts = custom_layout(config)["strategy"]
    for name in scalars:
        drawn = [t for t, (_, [regex]) in charts.items() if re.fullmatch(regex, f"strategy/{name}")]
        assert len(drawn) == 1, (name, drawn)
    assert len(scalars) > 5


def test_ditch_rummy_logs_every_way_a_hand_ends_at_every_evaluation():
    """Each of Ditch Rummy's hand ends has its rate at every evaluation, 0 where no hand ended
    so (a rate logged only above 0 left its chart at an old value)."""
    from rummyzoo.agents.registry import make_agent
    from rummyzoo.training.config import validate_config
    from rummyzoo.training.dashboard import strategy_stats

    config = validate_config(
        {
            "variant": "ditch_rummy",
            "env_options": {"target_score": None},
            "evaluation": {"opponents": ["ditch.greedy"], "strategy_games": 4},
        }
    )
    learner = make_agent("ditch.greedy", "ditch_rummy", 2, {"target_score": None})
    scalars, _ = strategy_stats(learner, config, seed=3)
    ends = {k: v for k, v in scalars.items() if k.startswith("end/")}
    assert {"end/blind_run", "end/draw_pile_empty", "end/stall"} <= set(ends)
    assert 0.0 in ends.values()  # (4 hands do not end every way)
    assert sum(ends.values()) == pytest.approx(1.0)


def test_charts_and_the_pool_rating_of_a_run_with_few_games(tmp_path):
    """A run whose sessions finish fewer than 50 games (matches to 100 here) still records its
    charts, league and self-play rating: the games are recorded at the end of each rollout
    that a snapshot, an evaluation or a checkpoint follows, and at the run's end, so snapshots
    take the learner's rating from them rather than 0."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = tmp_path / "run"
    overrides = [
        "env_options.target_score=100",
        "n_timesteps=1024",
        "self_play.snapshot_interval=256",
    ]
    smoke = str(Path(__file__).resolve().parent.parent / "configs" / "smoke_ppo.yaml")
    summary = train_from_file(smoke, overrides, str(run), ["t"], progress="off")
    assert summary["steps"] == 1024
    acc = EventAccumulator(str(run / "tb" / "run_1"), size_guidance={"scalars": 0})
    acc.Reload()
    assert acc.Scalars("charts/game_length") and acc.Scalars("selfplay/rating")
    state = json.loads((run / "state.json").read_text())
    assert len(state["pool_results"]) < 50  # fewer games than the 50 the charts wait for
    assert state["pool_results"] and state["rating"] != 0.0
    assert any(snap["rating"] != 0.0 for snap in state["pool"])


@pytest.mark.parametrize(
    "smoke, log_interval",
    [("smoke_ppo.yaml", 1), ("smoke_ppo.yaml", 3), ("smoke_dqn.yaml", 1)],
)
def test_charts_record_every_game_of_a_rollout_once(tmp_path, monkeypatch, smoke, log_interval):
    """A rollout that finishes a few hundred games (single hands against random play on 32
    games) records its charts once, over all its games: the logger keeps a key's last record
    until it writes them, so records at every 50 games kept only the last 50 of a rollout."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from rummyzoo.training import callbacks

    recorded: list[tuple[int, int]] = []  # (step, games) of each record of the charts
    log_games = callbacks.RunCallback._log_games

    def counted(self) -> None:
        recorded.append((int(self.model.num_timesteps), len(self._since_log)))
        log_games(self)

    monkeypatch.setattr(callbacks.RunCallback, "_log_games", counted)
    run = tmp_path / "run"
    overrides = [
        "env_options.target_score=null",
        "vec_env=batched",
        "n_envs=32",
        "n_timesteps=4096",
        "opponents=[{name: random, weight: 1}]",
        f"log_interval={log_interval}",
    ]
    if smoke == "smoke_ppo.yaml":
        overrides.append("hyperparams.n_steps=32")  # rollouts of 1,024 steps
    config = str(Path(__file__).resolve().parent.parent / "configs" / smoke)
    train_from_file(config, overrides, str(run), ["t"], progress="off")
    most = max(games for _, games in recorded)
    assert most > (100 * log_interval if smoke == "smoke_ppo.yaml" else 45), recorded
    acc = EventAccumulator(str(run / "tb" / "run_1"), size_guidance={"scalars": 0})
    acc.Reload()
    points = [e.step for e in acc.Scalars("charts/game_length")]
    assert len(points) == len(recorded), (points, recorded)  # none overwritten before written


def test_best_is_compared_over_the_opponents_both_evaluations_share(monkeypatch, tmp_path):
    """A resume that changes the evaluation's opponents: best.rz (1.0 against random, 0.0
    against knock.greedy: 0.5) is not beaten by 0.95 against random alone (it was, by the
    scores' means over different opponents); a first evaluation with no opponent in common
    is the best so far, with a warning."""
    from types import SimpleNamespace

    from rummyzoo.training import callbacks

    best = {"random": {"win_rate": 1.0}, "knock.greedy": {"win_rate": 0.0}}
    monkeypatch.setattr(callbacks, "read_meta", lambda path: {"eval": best})
    cb = object.__new__(callbacks.RunCallback)
    cb.config = SimpleNamespace(evaluation=SimpleNamespace(best_metric="win_rate"))
    cb.ckpt_dir, cb.best_value = tmp_path, 0.5
    assert not cb._beats_best({"random": {"win_rate": 0.95}}, 0.95)
    assert cb._beats_best({"random": {"win_rate": 0.96}, "knock.greedy": {"win_rate": 0.1}}, 0.53)
    assert not cb._beats_best({"random": {"win_rate": 1.0}, "knock.greedy": {"win_rate": 0.0}}, 0.5)
    with pytest.warns(UserWarning, match="share none with best.rz's"):
        assert cb._beats_best({"knock.smart": {"win_rate": 0.1}}, 0.1)


@pytest.mark.parametrize("vec_env", ["batched", "dummy"])
def test_runs_of_different_seeds_play_different_games(vec_env) -> None:
    """stable-baselines3 seeds game ``i`` of a run with ``seed + i``: a run of seed 1 played
    the games of a run of seed 0 one place along, deal for deal, all but one of them. Each
    seed now has games of its own, and seed 0's are those it had (its game ``i`` is seed
    ``i``, as before: the shipped configs' runs are the same runs)."""
    from rummyzoo.training.train import build_model, build_vec_env

    CONFIGS = Path(__file__).resolve().parent.parent / "configs"
    first = {}
    for seed in (0, 1, 2):
        config = load_config(
            CONFIGS / "smoke_ppo.yaml",
            [
                f"seed={seed}",
                "n_envs=4",
                f"vec_env={vec_env}",
                "opponents=[{name: random, weight: 1}]",
            ],
        )
        env = build_vec_env(config)
        try:
            build_model(config, env, None)  # seeds the env, as a run does
            first[seed] = env.reset().copy()
        finally:
            env.close()
    for a, b in ((0, 1), (0, 2), (1, 2)):
        shared = [
            (i, j) for i in range(4) for j in range(4) if np.array_equal(first[a][i], first[b][j])
        ]
        assert not shared, (a, b, shared)
    # seed 0's game i deals from seed i, as an env reset with that seed does
    alone = SeatEnv("knock_rummy", 2, opponents=["random"])
    obs, _ = alone.reset(seed=2)
    assert np.array_equal(first[0][2], obs)
