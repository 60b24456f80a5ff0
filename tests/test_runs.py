"""Run management as a user meets it: `rummyzoo train` with its default progress, a killed run
resumed (no step evaluated or logged twice, the pool as it was), a finished run left alone,
and checkpoints whose evaluations are the weights they hold."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from run_helpers import tb_steps, untrained_checkpoint

from rummyzoo.cli.main import main
from rummyzoo.training import callbacks
from rummyzoo.training.config import load_config
from rummyzoo.training.run_folder import format_summary
from rummyzoo.training.train import resume_run, train_from_file

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

ROOT = Path(__file__).resolve().parent.parent
SMOKE = str(ROOT / "configs" / "smoke_ppo.yaml")
DEFAULT_CONFIG = ROOT / "configs" / "knock_ppo.yaml"  # what make demo trains
#: A run long enough to have a checkpoint, evaluations and snapshots after it (PPO rollouts
#: of 128 steps: 2 envs x 64).
LONGER = [
    "n_timesteps=512",
    "checkpoints.interval=256",
    "evaluation.interval=128",
    "evaluation.sample_game_interval=128",
    "self_play.snapshot_interval=128",
    "self_play.pool_size=2",
    "env_options.target_score=null",
]


def _digest(run: Path) -> dict[str, str]:
    return {
        str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run.rglob("*"))
        if p.is_file()
    }


def test_train_command_with_default_progress(tmp_path, capsys) -> None:
    """The README's command form, default progress settings (not a terminal here: lines)."""
    run = tmp_path / "run"
    code = main(["train", SMOKE, "--run-dir", str(run), "--set", "env_options.target_score=null"])
    assert code == 0
    out, err = capsys.readouterr()
    assert "train (ppo): 256/256 steps (100%)" in err  # the closing progress line
    assert "trained ppo on knock_rummy (2 players): 256 steps" in out
    assert "vs random" in out and f"run folder:  {run}" in out
    assert "tensorboard --logdir" in out and "rummyzoo replay" in out
    assert not out.lstrip().startswith("{")  # a summary for people, not a JSON blob
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] == 256 and summary["evaluations"][0]["steps"] == 0
    umask = os.umask(0o022)
    os.umask(umask)
    files = [*run.glob("checkpoints/*.rz"), *run.glob("checkpoints/*.zip"), *run.glob("pool/*")]
    assert len(files) >= 4
    for path in [*files, run / "state.json"]:
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path  # as a plain open() makes


def _on_a_terminal(command: list[str]) -> tuple[subprocess.CompletedProcess, str]:
    """Run ``command`` with its stderr on a pseudo-terminal 120 columns wide; (the finished
    process with its stdout, what the terminal showed)."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    chunks: list[bytes] = []

    def read() -> None:  # drain the terminal while the command writes to it
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc = subprocess.run(command, stderr=slave, stdout=subprocess.PIPE, timeout=600)
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    return proc, b"".join(chunks).decode(errors="replace")


def test_the_default_config_draws_its_bars_on_a_terminal(tmp_path) -> None:
    """On a terminal the default is tqdm's live bars (what crashed when SB3's bar lacked rich):
    the default config's warm start and training on its batched engine, with self-play and
    evaluations (only its lengths shortened: one rollout of 64 games x 32 steps), then
    ``evaluate`` of its checkpoint as ``make demo`` runs it (no ``--opponents``: the variant's
    baselines)."""
    config = load_config(DEFAULT_CONFIG)
    assert config.vec_env == "batched" and config.n_envs == 64 and config.pretrain is not None
    run = tmp_path / "run"
    command = [sys.executable, "-m", "rummyzoo.cli.main", "train", str(DEFAULT_CONFIG)]
    command += ["--run-dir", str(run)]
    for key, value in (
        ("n_timesteps", 2048), ("pretrain.decisions", 300), ("evaluation.deals", 2),
        ("evaluation.cross_table_deals", 2), ("evaluation.strategy_games", 2),
    ):  # fmt: skip
        command += ["--set", f"{key}={value}"]
    proc, shown = _on_a_terminal(command)
    assert proc.returncode == 0, shown
    assert "warm start (knock.smart)" in shown and "train (ppo)" in shown
    assert "2048/2048" in shown and "\r" in shown  # redrawn bars
    assert b"trained ppo on knock_rummy (2 players): 2,048 steps" in proc.stdout
    # self-play: the network at step 0 starts the pool (scheduled work waits for a rollout's
    # start, and the one rollout starts at step 0)
    assert [p.name for p in (run / "pool").glob("snapshot_*.rz")] == ["snapshot_000000000.rz"]
    assert (run / "checkpoints" / "best.rz").exists()
    command = [sys.executable, "-m", "rummyzoo.cli.main", "evaluate"]
    command += [str(run / "checkpoints" / "best.rz"), "--deals", "2"]
    proc, shown = _on_a_terminal(command)
    assert proc.returncode == 0, shown
    out = proc.stdout.decode()
    for baseline in ("random", "knock.greedy", "knock.smart"):
        assert baseline in out, out
    assert "\r" in shown and "4/4" in shown, shown  # the arena's bar: 2 deals, both seats
    assert "best.rz vs knock.smart" in shown, shown


def test_progress_lines_every_n_seconds(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    argv = ["train", SMOKE, "--run-dir", str(run), "--no-progress", "--progress-every", "0.001"]
    assert main([*argv, "--set", "env_options.target_score=null"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("train (ppo): ")]
    assert len(lines) >= 3  # several steps reported along the way, not only at the end
    assert any("eval @" in line and "win rate vs random" in line for line in lines)
    assert all("steps/s" in line and "left" in line for line in lines)


class _Killed(Exception):
    pass


def _stop_after(steps: int):
    original = callbacks.RunCallback._on_step

    def killed(self):  # the process dies mid-rollout, past the checkpoint
        if self.model.num_timesteps >= steps:
            raise _Killed
        return original(self)

    return killed


def _killed_run(tmp_path, monkeypatch) -> Path:
    """A run killed at step 420: its checkpoint is of step 256, events and games run past it."""
    run = tmp_path / "run"
    monkeypatch.setattr(callbacks.RunCallback, "_on_step", _stop_after(420))
    with pytest.raises(_Killed):
        train_from_file(SMOKE, LONGER, str(run), ["test"], progress="off")
    monkeypatch.undo()
    return run


def test_a_killed_run_resumes_where_its_checkpoint_was(tmp_path, monkeypatch) -> None:
    run = _killed_run(tmp_path, monkeypatch)
    state = json.loads((run / "state.json").read_text())
    assert state["steps"] == 256
    from rummyzoo.training.curves import saved_evaluations

    # curves and serve see every evaluation so far, past the checkpoint too
    assert [e["steps"] for e in saved_evaluations(run)] == [0, 128, 256, 384]
    before_resume = tb_steps(run)
    assert any(max(s) > 256 for s in before_resume.values())  # logged past the checkpoint
    for snap in state["pool"]:  # the checkpoint's pool is still on disk, named in the run
        assert snap["path"].startswith("pool/snapshot_") and (run / snap["path"]).exists()

    summary = resume_run(str(run), [], ["test"], progress="off")
    assert summary["steps"] == 512
    evals = [e["steps"] for e in summary["evaluations"]]
    assert evals == sorted(set(evals)) == [0, 128, 256, 384, 512]
    for tag, steps in tb_steps(run).items():
        counts = Counter(steps)
        assert all(n == 1 for n in counts.values()), (tag, counts)
    ckpts = sorted(p.name for p in (run / "checkpoints").glob("ckpt_*"))
    # no extra checkpoint from a restarted schedule; the run ends on a checkpoint's step
    assert ckpts == ["ckpt_000000256.rz", "ckpt_000000512.rz"]
    final = json.loads((run / "state.json").read_text())
    on_disk = sorted(p.name for p in (run / "pool").glob("*"))
    assert on_disk == sorted(Path(p["path"]).name for p in final["pool"])


def _killed_at(monkeypatch, steps: int, name: str) -> None:
    """Make the process 'die' when it saves ``name`` of the checkpoint at ``steps``."""
    original = callbacks.save_checkpoint

    def save(model, path, meta):
        if Path(path).name == name and meta["steps"] == steps:
            raise _Killed
        return original(model, path, meta)

    monkeypatch.setattr(callbacks, "save_checkpoint", save)


def test_a_run_killed_while_saving_keeps_its_previous_checkpoint(tmp_path, monkeypatch) -> None:
    run = tmp_path / "run"
    _killed_at(monkeypatch, 512, "last.rz")  # last.zip of step 512 is written, then it dies
    with pytest.raises(_Killed):
        train_from_file(SMOKE, LONGER, str(run), ["test"], progress="off")
    monkeypatch.undo()
    from rummyzoo.agents.checkpoints import read_meta, read_trusted_meta

    state = json.loads((run / "state.json").read_text())
    assert state["steps"] == 256  # the whole set of step 256 stands
    assert read_trusted_meta(run / "checkpoints" / "last.zip")["steps"] == 256
    assert read_meta(run / "checkpoints" / "last.rz")["steps"] == 256
    summary = resume_run(str(run), [], ["test"], progress="off")
    evals = [e["steps"] for e in summary["evaluations"]]
    assert evals == [0, 128, 256, 384, 512]
    assert not (run / "checkpoints" / ".staging").exists()


def test_a_complete_staged_checkpoint_is_moved_into_place_on_resume(tmp_path) -> None:
    from rummyzoo.agents.checkpoints import read_trusted_meta
    from rummyzoo.training.run_state import commit_staged

    run = tmp_path / "run"
    train_from_file(SMOKE, [*LONGER[1:], "n_timesteps=256"], str(run), ["t"], progress="off")
    staging = run / "checkpoints" / ".staging"
    staging.mkdir()
    for name in ("last.zip", "last.rz"):  # a set whose state.json was staged, half moved
        (staging / name).write_bytes((run / "checkpoints" / name).read_bytes())
    (staging / "state.json").write_bytes((run / "state.json").read_bytes())
    (run / "checkpoints" / "last.zip").unlink()
    assert commit_staged(run) and not staging.exists()
    assert read_trusted_meta(run / "checkpoints" / "last.zip")["steps"] == 256
    staging.mkdir()
    (staging / "last.zip").write_bytes(b"half")  # no state.json: never completed, dropped
    assert not commit_staged(run) and not staging.exists()
    assert read_trusted_meta(run / "checkpoints" / "last.zip")["steps"] == 256


def test_a_stop_between_staging_and_commit_names_the_step_the_resume_goes_on_from(
    tmp_path, monkeypatch, capsys
) -> None:
    """Ctrl-C after a checkpoint set was staged whole and before it was moved into place: the
    resume moves it into place and goes on from its step, so the stop's message names that
    step, not the one of ``state.json`` still in place."""
    staged = []

    def interrupted(run_dir):
        staged.append(json.loads((run_dir / "checkpoints" / ".staging" / "state.json").read_text()))
        if staged[-1]["steps"] >= 256:  # the signal lands before the set is moved
            raise KeyboardInterrupt
        return commit(run_dir)

    commit = callbacks.commit_staged
    monkeypatch.setattr(callbacks, "commit_staged", interrupted)
    run = tmp_path / "r"
    args = ["train", SMOKE, "--run-dir", str(run), "--quiet"]
    assert main([*args, *(f"--set={o}" for o in LONGER[1:]), "--set=n_timesteps=1024"]) == 130
    assert json.loads((run / "state.json").read_text())["steps"] < 256  # the set in place
    err = capsys.readouterr().err
    assert f"(it goes on from its last checkpoint, at step {staged[-1]['steps']:,})" in err, err
    monkeypatch.undo()
    assert main(["train", "--resume", str(run), "--quiet", "--set", "n_timesteps=512"]) == 0
    assert f"from its checkpoint at step {staged[-1]['steps']:,}" in capsys.readouterr().err


def test_a_resume_keeps_only_the_periodic_checkpoints_its_checkpoint_names(
    tmp_path, monkeypatch, capsys
) -> None:
    """Ctrl-C after a checkpoint set was moved into place and before the periodic checkpoint
    it drops was deleted: that file stayed for good (three with keep 2); and one saved after
    the checkpoint a run resumes from (training done again) stayed beside the new ones."""
    commit = callbacks.commit_staged

    def interrupted(run_dir):
        moved = commit(run_dir)
        if json.loads((run_dir / "state.json").read_text())["steps"] == 768:
            raise KeyboardInterrupt  # the set is in place; ckpt_000000256.rz not deleted yet
        return moved

    monkeypatch.setattr(callbacks, "commit_staged", interrupted)
    run = tmp_path / "r"
    args = ["train", SMOKE, "--run-dir", str(run), "--quiet"]
    assert main([*args, *(f"--set={o}" for o in LONGER[1:]), "--set=n_timesteps=1024"]) == 130
    ckpts = run / "checkpoints"
    assert sorted(p.name for p in ckpts.glob("ckpt_*")) == [
        "ckpt_000000256.rz", "ckpt_000000512.rz", "ckpt_000000768.rz"
    ]  # fmt: skip
    (ckpts / "ckpt_000000999.rz").write_bytes((ckpts / "ckpt_000000768.rz").read_bytes())
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    assert sorted(p.name for p in ckpts.glob("ckpt_*")) == [
        "ckpt_000000768.rz", "ckpt_000001024.rz"
    ]  # fmt: skip
    state = json.loads((run / "state.json").read_text())
    assert state["periodic"] == ["checkpoints/ckpt_000000768.rz", "checkpoints/ckpt_000001024.rz"]


def test_a_finished_run_stopped_before_its_last_cleanup_keeps_only_what_it_names(
    tmp_path, monkeypatch, capsys
) -> None:
    """Ctrl-C after the last checkpoint's set was moved into place and before the periodic
    checkpoint and pool snapshot it drops were deleted: the resume found the run finished,
    wrote its summary and left both files for good."""
    commit = callbacks.commit_staged

    def interrupted(run_dir):
        moved = commit(run_dir)
        if json.loads((run_dir / "state.json").read_text())["steps"] == 512:
            raise KeyboardInterrupt  # the set is in place; nothing it drops deleted yet
        return moved

    monkeypatch.setattr(callbacks, "commit_staged", interrupted)
    run = tmp_path / "r"
    args = ["train", SMOKE, "--run-dir", str(run), "--quiet"]
    assert main([*args, *(f"--set={o}" for o in LONGER), "--set=checkpoints.keep=1"]) == 130
    assert sorted(p.name for p in (run / "checkpoints").glob("ckpt_*")) == [
        "ckpt_000000256.rz", "ckpt_000000512.rz"
    ]  # fmt: skip
    assert len(list((run / "pool").glob("snapshot_*"))) == 3  # pool_size 2
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    assert "trained all its steps" in capsys.readouterr().err
    assert (run / "summary.json").exists()
    state = json.loads((run / "state.json").read_text())
    assert state["periodic"] == ["checkpoints/ckpt_000000512.rz"]
    assert sorted(p.name for p in (run / "checkpoints").glob("ckpt_*")) == ["ckpt_000000512.rz"]
    named = sorted(Path(p["path"]).name for p in state["pool"])
    assert len(named) == 2
    assert sorted(p.name for p in (run / "pool").glob("snapshot_*")) == named


def test_a_run_whose_helper_process_died_says_how_to_go_on(tmp_path, monkeypatch, capsys):
    """A helper process killed under a run (``workers: 2``, ``kill -9``) ended it with one
    line that said so, but not how to continue it, as a full disk or SIGTERM do."""
    from rummyzoo.envs.workers import ProcessDied

    commit = callbacks.commit_staged

    def dies(run_dir):
        moved = commit(run_dir)
        if json.loads((run_dir / "state.json").read_text())["steps"] == 256:
            raise ProcessDied("helper process 1 died (exit code -9)")
        return moved

    monkeypatch.setattr(callbacks, "commit_staged", dies)
    run = tmp_path / "my run"
    args = ["train", SMOKE, "--run-dir", str(run), "--quiet"]
    assert main([*args, *(f"--set={o}" for o in LONGER)]) == 1
    err = capsys.readouterr().err
    assert err == (
        "rummyzoo train: error: helper process 1 died (exit code -9) (continue the run with: "
        f"rummyzoo train --resume '{run}' (it goes on from its last checkpoint, at step 256))\n"
    )
    monkeypatch.undo()
    assert main(["train", "--resume", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out  # the summary's commands, as a shell reads them
    assert f"tensorboard --logdir '{run / 'tb'}'" in out
    assert f"sample game: rummyzoo replay '{run / 'games'}/sample_" in out


def test_a_device_error_in_a_thread_of_the_run_is_one_line(tmp_path, monkeypatch, capsys):
    """A full disk also failed TensorBoard's writer thread, whose traceback was printed in the
    middle of the run's one-line error; another exception in a thread goes to the hook as
    before, which is the one after the run again."""
    import threading

    commit = callbacks.commit_staged
    errors = [OSError(28, "No space left on device"), ZeroDivisionError("a bug")]

    def with_a_failing_thread(run_dir):
        moved = commit(run_dir)
        if errors:
            error = errors.pop(0)

            def fails():
                raise error

            thread = threading.Thread(target=fails, name="the writer")
            thread.start()
            thread.join()
        return moved

    monkeypatch.setattr(callbacks, "commit_staged", with_a_failing_thread)
    seen = []
    monkeypatch.setattr(threading, "excepthook", lambda failure: seen.append(failure.exc_value))
    before = threading.excepthook
    run = tmp_path / "r"
    assert (
        main(["train", SMOKE, "--run-dir", str(run), "--quiet", *(f"--set={o}" for o in LONGER)])
        == 0
    )
    err = capsys.readouterr().err
    assert (
        "rummyzoo train: warning: a thread of the run (the writer) stopped: [Errno 28] No space left on "
        "device\n"
    ) in err
    assert [type(e) for e in seen] == [ZeroDivisionError]  # the hook before the run's
    assert threading.excepthook is before


def test_a_stopped_run_missing_its_checkpoint_or_state_is_not_said_to_go_on(
    tmp_path, monkeypatch, capsys
) -> None:
    """A stopped run whose checkpoint (or state.json) was deleted was still said to go on with
    ``--resume`` (``rummyzoo serve``'s listing, the run's status), which refuses it."""
    import shutil

    from rummyzoo.training.run_folder import run_progress

    commit = callbacks.commit_staged

    def interrupted(run_dir):
        moved = commit(run_dir)
        if json.loads((run_dir / "state.json").read_text())["steps"] == 256:
            raise KeyboardInterrupt
        return moved

    monkeypatch.setattr(callbacks, "commit_staged", interrupted)
    run = tmp_path / "r"
    args = ["train", SMOKE, "--run-dir", str(run), "--quiet"]
    assert main([*args, *(f"--set={o}" for o in LONGER)]) == 130
    monkeypatch.undo()
    assert run_progress(run)["text"] == (
        f"stopped at step 256 of 512: rummyzoo train --resume {run} goes on"
    )
    zipped, state = run / "checkpoints" / "last.zip", run / "state.json"
    shutil.move(zipped, tmp_path / "last.zip")
    assert run_progress(run)["text"] == (
        "stopped at step 256 of 512, but its checkpoint (checkpoints/last.zip) is missing: "
        "restore it to resume the run, or train a new one"
    )
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 2
    assert "checkpoints/last.zip is missing" in capsys.readouterr().err
    shutil.move(tmp_path / "last.zip", zipped)
    shutil.move(state, tmp_path / "state.json")
    assert run_progress(run)["text"] == (
        "stopped, but state.json is missing beside its checkpoint (checkpoints/last.zip): the "
        "run cannot be resumed without it"
    )
    assert main(["train", "--resume", str(run), "--quiet"]) == 2
    assert "state.json" in capsys.readouterr().err
    shutil.move(tmp_path / "state.json", state)
    assert main(["train", "--resume", str(run), "--quiet"]) == 0


def test_a_periodic_checkpoint_removed_by_hand_is_no_longer_named(tmp_path, capsys) -> None:
    """A resume after a periodic checkpoint was deleted (disk space: it is not what a run
    resumes from) goes on, and its state names only the files that are there (it went on
    naming the deleted one)."""
    run = tmp_path / "r"
    args = ["train", SMOKE, "--run-dir", str(run), "--quiet"]
    assert main([*args, *(f"--set={o}" for o in LONGER[1:]), "--set=n_timesteps=768",
                 "--set=checkpoints.keep=4"]) == 0  # fmt: skip
    ckpts = run / "checkpoints"
    (ckpts / "ckpt_000000256.rz").unlink()
    assert main(["train", "--resume", str(run), "--quiet", "--set=n_timesteps=1024"]) == 0
    state = json.loads((run / "state.json").read_text())
    assert state["periodic"] == [
        "checkpoints/ckpt_000000512.rz", "checkpoints/ckpt_000000768.rz",
        "checkpoints/ckpt_000001024.rz",
    ]  # fmt: skip
    assert all((run / p).is_file() for p in state["periodic"])


def test_a_run_stopped_before_its_first_checkpoint_resumes_with_other_settings(
    tmp_path, capsys
) -> None:
    """No checkpoint fixes anything yet (the run starts over): a resume that changes what a
    checkpoint would fix (the warm start's size on a smaller machine, the games at once, the
    learning rate) was refused, citing a checkpoint that did not exist."""
    import yaml

    from rummyzoo.training.config import config_to_yaml

    run = tmp_path / "r"
    run.mkdir()
    (run / "config.yaml").write_text(config_to_yaml(load_config(SMOKE, ["n_timesteps=256"])))
    (run / "command.txt").write_text("rummyzoo train first\n")
    changes = ["n_envs=4", "hyperparams.learning_rate=0.001"]
    summary = resume_run(str(run), changes, ["t", "--resume"], progress="off")
    assert "has no checkpoint yet: starting the run from the beginning" in capsys.readouterr().err
    assert summary["steps"] >= 256
    stored = yaml.safe_load((run / "config.yaml").read_text())
    assert stored["n_envs"] == 4 and stored["hyperparams"]["learning_rate"] == 0.001
    with pytest.raises(ValueError, match="with n_envs changed"):  # now a checkpoint fixes them
        resume_run(str(run), ["n_envs=2", "n_timesteps=512"], ["t"], progress="off")


def test_a_full_disk_stops_a_run_in_one_line_that_says_how_to_go_on(
    tmp_path, monkeypatch, capsys
) -> None:
    """An OSError of the machine's (no space left) ended the run in a Python traceback, with
    no word of how to go on; the folder is sound, and the run goes on once there is room."""
    import errno

    save = callbacks.save_resume_checkpoint

    def full(model, path, meta):
        if meta["steps"] >= 512:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return save(model, path, meta)

    monkeypatch.setattr(callbacks, "save_resume_checkpoint", full)
    run = tmp_path / "r"
    args = ["train", SMOKE, "--run-dir", str(run), "--quiet"]
    assert main([*args, *(f"--set={o}" for o in LONGER[1:]), "--set=n_timesteps=1024"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "rummyzoo train: error: [Errno 28] No space left on device: " in err
    assert (
        f"(continue the run with: rummyzoo train --resume {run} (it goes on from its last "
        "checkpoint, at step 256))"
    ) in err
    monkeypatch.undo()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    assert json.loads((run / "state.json").read_text())["steps"] == 1024


def test_a_copied_run_resumes_anywhere_and_leaves_the_original_alone(tmp_path, monkeypatch) -> None:
    import shutil

    monkeypatch.chdir(tmp_path)
    original = Path("runs") / "r1"
    monkeypatch.setattr(callbacks.RunCallback, "_on_step", _stop_after(420))
    with pytest.raises(_Killed):
        train_from_file(SMOKE, LONGER, str(original), ["test"], progress="off")
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    state = json.loads((original / "state.json").read_text())
    assert all(
        not Path(p).is_absolute() and p.startswith("checkpoints/") for p in state["periodic"]
    )
    shutil.copytree(original, tmp_path / "copy")
    before = _digest(original)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # resumed from another working directory
    summary = resume_run("../copy", ["n_timesteps=1024"], ["test"], progress="off")
    assert summary["steps"] == 1024
    monkeypatch.chdir(tmp_path)
    assert _digest(original) == before  # the original run folder is untouched
    ckpts = sorted(p.name for p in (tmp_path / "copy" / "checkpoints").glob("ckpt_*"))
    assert ckpts == ["ckpt_000000768.rz", "ckpt_000001024.rz"]  # keep: 2, the copy's own


def test_resume_refuses_a_config_edited_by_hand_or_a_broken_state(tmp_path) -> None:
    run = tmp_path / "run"
    train_from_file(SMOKE, [*LONGER[1:], "n_timesteps=256"], str(run), ["t"], progress="off")
    config = (run / "config.yaml").read_text()
    (run / "config.yaml").write_text(config.replace("learning_rate: 0.0003", "learning_rate: 0.5"))
    assert "learning_rate: 0.5" in (run / "config.yaml").read_text()
    with pytest.raises(
        ValueError, match=r"hyperparams \(learning_rate\) changed: .*config.yaml was edited"
    ):
        resume_run(str(run), ["n_timesteps=384"], ["t"], progress="off")
    (run / "config.yaml").write_text(config)
    state = (run / "state.json").read_text()
    for broken, why in [
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({**json.loads(state), "rating": "high"}), "rating must be a number"),
        ('{"steps": 256, "pool": "abc"}', "pool must be a list"),
        (
            '{"steps": 256, "eval_history": [{"steps": 0, "results": [1]}]}',
            r"eval_history\[0\].results must map opponents",
        ),
    ]:
        (run / "state.json").write_text(broken)
        with pytest.raises(ValueError, match=f"state.json is corrupt \\({why}"):
            resume_run(str(run), ["n_timesteps=384"], ["t"], progress="off")
        assert (run / "config.yaml").read_text() == config  # nothing rewritten
    (run / "state.json").unlink()
    with pytest.raises(ValueError, match=r"state.json .* is missing"):
        resume_run(str(run), ["n_timesteps=384"], ["t"], progress="off")
    assert (run / "config.yaml").read_text() == config


def test_a_run_stopped_before_its_summary_gets_it_when_resumed(tmp_path, capsys) -> None:
    """A run stopped after its last checkpoint but before it wrote ``summary.json`` (a kill as
    the summary was written): the resume writes the summary from the checkpoint's state, and
    the run is finished from then on."""
    run = tmp_path / "run"
    train_from_file(SMOKE, ["env_options.target_score=null"], str(run), ["t"], progress="off")
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").unlink()
    assert main(["train", "--resume", str(run)]) == 0
    assert "its summary, which its last session did not write, is written now" in (
        capsys.readouterr().err
    )
    written = json.loads((run / "summary.json").read_text())
    for key in ("steps", "evaluations", "best", "best_eval", "last", "warm_start_seconds"):
        assert written.get(key) == summary.get(key), key
    assert written["seconds"] == pytest.approx(summary["seconds"], abs=2.0)  # to the checkpoint
    assert written["steps_this_session"] == 0 and written["resumed"]
    assert main(["train", "--resume", str(run)]) == 0
    assert "is finished: 256 of 256 steps done" in capsys.readouterr().err


def test_a_stopped_run_given_a_target_below_its_steps_is_refused(tmp_path, capsys) -> None:
    """A run stopped at step 256 (no summary written) resumed with ``n_timesteps`` 128 by
    mistake: refused, unchanged, saying how to go on (it was recorded as finished at 256)."""
    run = tmp_path / "run"
    train_from_file(SMOKE, ["env_options.target_score=null"], str(run), ["t"], progress="off")
    # as a run of 1,024 steps stopped after its checkpoint at 256
    (run / "summary.json").unlink()
    config = run / "config.yaml"
    config.write_text(config.read_text().replace("n_timesteps: 256", "n_timesteps: 1024"))
    before = sorted((p.relative_to(run), p.stat().st_size) for p in run.rglob("*") if p.is_file())
    assert main(["train", "--resume", str(run), "--set", "n_timesteps=128"]) == 2
    err = capsys.readouterr().err
    assert (
        f"{run} stopped at step 256 of its 1,024, past n_timesteps 128: leave n_timesteps out "
        "to go on to 1,024"
    ) in err, err
    assert not (run / "summary.json").exists()
    after = sorted((p.relative_to(run), p.stat().st_size) for p in run.rglob("*") if p.is_file())
    assert after == before
    # given 256, it is recorded as finished there, for good: a later plain resume trained on
    # to 1,024 (the folder's config and commands still the first session's)
    assert main(["train", "--resume", str(run), "--set", "n_timesteps=256"]) == 0
    assert "n_timesteps: 256" in config.read_text()
    assert (
        (run / "command.txt")
        .read_text()
        .splitlines()[-1]
        .endswith("--resume " + str(run) + " --set n_timesteps=256")
    )
    capsys.readouterr()
    assert main(["train", "--resume", str(run)]) == 0
    assert "is finished: 256 of 256 steps done" in capsys.readouterr().err
    assert json.loads((run / "state.json").read_text())["steps"] == 256


def test_a_finished_run_is_left_alone(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    first = train_from_file(
        SMOKE, ["env_options.target_score=null"], str(run), ["t"], progress="off"
    )
    ckpt_dir = run / "checkpoints"

    def periodic():
        return sorted(p.name for p in ckpt_dir.glob("ckpt_*"))

    # the run ends on a checkpoint's step (interval 128): that periodic checkpoint is written
    assert periodic() == ["ckpt_000000128.rz", "ckpt_000000256.rz"]
    state = json.loads((run / "state.json").read_text())
    assert [Path(p).name for p in state["periodic"]] == periodic()
    at_256 = (ckpt_dir / "ckpt_000000256.rz").read_bytes()
    before = _digest(run)
    assert main(["train", "--resume", str(run)]) == 0
    assert "is finished: 256 of 256 steps done" in capsys.readouterr().err
    assert main(["train", "--resume", str(run), "--set", "n_timesteps=200"]) == 0
    assert (
        "is finished: it trained 256 steps, more than n_timesteps (200); nothing to train "
        "(raise n_timesteps above 256 with --set to continue it)"
    ) in capsys.readouterr().err
    assert main(["train", "--resume", str(run), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)  # stdout is the JSON alone
    assert again["finished_before"] and again["steps"] == 256 and again["resumed"]
    assert again["steps_this_session"] == 0 and again["seconds_this_session"] == 0  # this one's
    assert again["rl_seconds"] is None and again["rl_steps_per_s"] is None
    assert _digest(run) == before
    # A larger target continues from the real step count.
    more = resume_run(str(run), ["n_timesteps=384"], ["t"], progress="off")
    assert more["steps"] == 384 and more["steps_this_session"] == 128
    # its wall time is the whole run's: the first session's (to its last checkpoint) and this one
    assert more["seconds"] > first["seconds"] * 0.9 + more["seconds_this_session"]
    assert more.get("warm_start_seconds") == first.get("warm_start_seconds")
    assert f"({more['seconds_this_session']:.0f}s in this session)" in format_summary(more)
    from rummyzoo.agents.checkpoints import read_meta

    assert read_meta(run / "checkpoints" / "last.rz")["steps"] == 384
    assert "n_timesteps: 384" in (run / "config.yaml").read_text()
    # extended, it does not write step 256's checkpoint again (keep: 2)
    assert periodic() == ["ckpt_000000256.rz", "ckpt_000000384.rz"]
    assert (ckpt_dir / "ckpt_000000256.rz").read_bytes() == at_256


def test_a_checkpoint_scores_what_it_holds(tmp_path) -> None:
    """The evaluation logged at a checkpoint's step is the evaluation of that checkpoint's
    weights, and the final weights are always evaluated."""
    from rummyzoo.agents.arena.evaluate import evaluate_policy
    from rummyzoo.agents.checkpoints import load_policy

    run = tmp_path / "run"
    summary = train_from_file(SMOKE, LONGER, str(run), ["test"], progress="off")
    history = {e["steps"]: e["results"] for e in summary["evaluations"]}
    assert max(history) == summary["steps"] == 512
    for steps, path in ((256, "checkpoints/ckpt_000000256.rz"), (512, "checkpoints/last.rz")):
        policy = load_policy(run / path, "knock_rummy", 2, {"target_score": None})
        again = evaluate_policy(policy, "random", "knock_rummy", 2, {"target_score": None}, 4, 0)
        logged = history[steps]["random"]
        assert {k: v for k, v in again.items() if k != "name"} == {
            k: v for k, v in logged.items() if k != "name"
        }, steps


def test_a_run_killed_before_its_first_checkpoint_resumes_after_its_warm_start(
    tmp_path, monkeypatch
) -> None:
    """The run saves its resume set once its warm start and first evaluation are done: a run
    stopped before its first periodic checkpoint went back to the beginning, imitation
    included (minutes of a shipped config's teacher)."""
    run = tmp_path / "run"
    original = callbacks.RunCallback._on_step

    def killed(self):  # past the first rollout (its records written), before step 256
        if self.model.num_timesteps >= 200:
            raise _Killed
        return original(self)

    monkeypatch.setattr(callbacks.RunCallback, "_on_step", killed)
    warm = [
        "env_options.target_score=null",
        "pretrain={teacher: knock.greedy, decisions: 300}",
        "checkpoints.interval=1024",
    ]
    with pytest.raises(_Killed):
        first = ["train", "configs/smoke_ppo.yaml", "--set", "env_options.target_score=null"]
        train_from_file(SMOKE, warm, str(run), first, progress="off")
    monkeypatch.setattr(callbacks.RunCallback, "_on_step", original)
    from rummyzoo.training.run_state import read_state

    assert read_state(run)["steps"] == 0 and (run / "checkpoints" / "last.zip").exists()
    assert read_state(run)["eval_history"][0]["steps"] == 0  # the first evaluation kept
    warm_start = (run / "checkpoints" / "warm_start.rz").read_bytes()
    with pytest.raises(ValueError, match="already holds a run; use --resume"):
        train_from_file(SMOKE, [], str(run), ["t"], progress="off")
    import rummyzoo.training.train as train_module

    def no_second_warm_start(*args, **kwargs):
        raise AssertionError("the warm start ran again")

    monkeypatch.setattr(train_module, "run_pretrain", no_second_warm_start)
    summary = resume_run(str(run), [], ["train", "--resume", str(run)], progress="off")
    assert summary["steps"] == 256
    # resumed at step 0 (all its steps in this session), it is still a resumed run
    assert summary["resumed"] and summary["steps_this_session"] == 256
    shown = format_summary(summary)
    assert f"({summary['seconds_this_session']:.0f}s in this session)" in shown
    assert "RL in this session:" in shown
    assert (run / "checkpoints" / "warm_start.rz").read_bytes() == warm_start
    # the command that started the run is kept (its --set above all), the resume's added
    commands = (run / "command.txt").read_text().splitlines()
    assert commands == [" ".join(first), f"train --resume {run}"]
    evals = [e["steps"] for e in summary["evaluations"]]
    assert evals == sorted(set(evals)) and evals[0] == 0
    # the hyperparameters once, from the session that started the run (not again at step 0)
    assert _tags_written(run, "_hparams_/") == {
        "_hparams_/experiment": 1,
        "_hparams_/session_start_info": 1,
        "_hparams_/session_end_info": 1,
    }


def test_resume_refuses_another_best_metric_or_warm_start(tmp_path) -> None:
    """best.rz was chosen by the run's metric (a win rate and points per hand do not compare)
    in the evaluations' game, the checkpoints record the run's game, and a resumed run does
    not imitate again: a resume that changes any of them is refused by name, with nothing
    written; what acts on every update (the anchor to the warm start) may change."""
    run = tmp_path / "run"
    warm = "pretrain={teacher: knock.greedy, decisions: 300}"
    train_from_file(SMOKE, [*LONGER[1:], "n_timesteps=256", warm], str(run), ["t"], progress="off")
    before = _digest(run)
    for override, named in [
        (
            "evaluation.best_metric=mean_points",
            r"evaluation\.best_metric changed: .*metric best\.rz",
        ),
        (
            "pretrain.decisions=5000",
            r"pretrain \(decisions\) changed: .*warm start \(pretrain's teacher, decisions",
        ),
        ("pretrain.teacher=knock.smart", r"pretrain \(teacher\) changed"),
        ("pretrain=null", r"pretrain changed"),
        # the game: its checkpoints record it, and best.rz was chosen in the evaluations' (a
        # rules change that keeps the network's inputs went on, its checkpoints under two games)
        (
            "env_options.knock_max_deadwood=10",
            r"env_options \(knock_max_deadwood\) changed: .*game \(env_options: its rules",
        ),
        ("env_options.target_score=100", r"env_options \(target_score\) changed"),
        ("evaluation.options={target_score: 100}", r"evaluation\.options \(target_score\) changed"),
    ]:
        with pytest.raises(ValueError, match=named):
            resume_run(str(run), ["n_timesteps=384", override], ["t"], progress="off")
        assert _digest(run) == before  # config.yaml not rewritten, nothing else either
    summary = resume_run(
        str(run), ["n_timesteps=384", "pretrain.anchor_coef=0.5"], ["t"], progress="off"
    )
    assert summary["steps"] == 384


def test_resume_set_replaces_an_agent_that_no_longer_loads(tmp_path) -> None:
    """A run whose opponent checkpoint moved resumes with --set naming it where it is now: the
    stored config's agents are not built before the overrides replace them, and the teacher of
    the warm start, which a run going on from its checkpoint does not play again, is not built
    at all. Without the --set the resume is refused by name, with nothing written."""
    opp = untrained_checkpoint(tmp_path / "opp.rz")
    teacher = untrained_checkpoint(tmp_path / "teacher.rz")
    run = tmp_path / "run"
    first = [
        "n_timesteps=256",
        f"opponents=[{{name: '{opp}'}}]",
        f"evaluation.opponents=['{opp}']",
        f"pretrain={{teacher: '{teacher}', decisions: 200}}",
    ]
    train_from_file(SMOKE, first, str(run), ["t"], progress="off")
    moved = opp.rename(tmp_path / "moved.rz")
    teacher.unlink()
    before = _digest(run)
    with pytest.raises(ValueError, match=r"opponents\[0\]\.name: checkpoint .*opp\.rz"):
        resume_run(str(run), ["n_timesteps=384"], ["t"], progress="off")
    assert _digest(run) == before
    summary = resume_run(
        str(run),
        [
            "n_timesteps=384",
            f"opponents=[{{name: '{moved}'}}]",
            f"evaluation.opponents=['{moved}']",
        ],
        ["t"],
        progress="off",
    )
    assert summary["steps"] == 384


def test_a_resume_over_two_processes_does_not_need_the_teacher_either(tmp_path) -> None:
    """The helper process rebuilds the config from its data: it built every agent again, the
    teacher of a warm start that is not played again among them, and failed there."""
    teacher = untrained_checkpoint(tmp_path / "teacher.rz")
    run = tmp_path / "run"
    first = ["n_timesteps=256", "workers=2", f"pretrain={{teacher: '{teacher}', decisions: 200}}"]
    train_from_file(SMOKE, first, str(run), ["t"], progress="off")
    teacher.unlink()
    summary = resume_run(str(run), ["n_timesteps=384"], ["t"], progress="off")
    assert summary["steps"] == 384


def test_resume_names_the_options_that_change_the_observation(tmp_path) -> None:
    run = tmp_path / "run"
    options = "env_options={draw_rule: up_to_3, max_hand: 6, target_score: null}"
    first = ["variant=ditch_rummy", options, "n_timesteps=128"]
    train_from_file(SMOKE, first, str(run), ["t"], progress="off")
    with pytest.raises(ValueError, match=r"with env_options \(max_hand\) changed: .*game"):
        resume_run(str(run), ["n_timesteps=256", "env_options.max_hand=8"], ["t"], progress="off")


def _tags_written(run: Path, prefix: str) -> Counter:
    """How often each tag that starts with ``prefix`` was written in the run's event files."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    seen: Counter = Counter()
    for path in sorted((run / "tb").rglob("events.out.tfevents.*")):
        for event in EventFileLoader(str(path)).Load():
            for value in event.summary.value:
                if value.tag.startswith(prefix):
                    seen[value.tag] += 1
    return seen


def test_a_run_killed_before_it_saved_anything_starts_over(tmp_path, monkeypatch) -> None:
    run = tmp_path / "run"
    original = callbacks.RunCallback._save_last

    def killed(self):
        raise _Killed  # while saving the resume set after the first evaluation

    monkeypatch.setattr(callbacks.RunCallback, "_save_last", killed)
    with pytest.raises(_Killed):
        first = ["train", "configs/smoke_ppo.yaml", "--set", "env_options.target_score=null"]
        train_from_file(SMOKE, ["env_options.target_score=null"], str(run), first, progress="off")
    monkeypatch.setattr(callbacks.RunCallback, "_save_last", original)
    assert (run / "config.yaml").exists() and not (run / "checkpoints" / "last.zip").exists()
    assert (run / "evaluations.json").exists()  # the step-0 evaluation of the killed start
    with pytest.raises(ValueError, match="already holds a run; use --resume"):
        train_from_file(SMOKE, [], str(run), ["t"], progress="off")
    summary = resume_run(str(run), [], ["train", "--resume", str(run)], progress="off")
    assert summary["steps"] == 256
    commands = (run / "command.txt").read_text().splitlines()
    assert commands == [" ".join(first), f"train --resume {run}"]
    evals = [e["steps"] for e in summary["evaluations"]]
    assert evals == sorted(set(evals))


def test_every_scalar_is_written_once_a_step_and_the_updates_at_their_own_steps(tmp_path) -> None:
    """An evaluation writes its own scalars only: the last update's ``train/*`` wait for the
    algorithm's own write (they were written at the evaluation's step, a second time, and were
    missing at the next rollout's). A DQN whose games end together in one step of the vector
    env writes that step once. Hyperparameters are logged once a run, a resume included."""
    ppo = tmp_path / "ppo"
    overrides = ["n_timesteps=512", "evaluation.interval=256", "env_options.target_score=null"]
    train_from_file(SMOKE, overrides, str(ppo), ["t"], progress="off")
    steps = tb_steps(ppo)
    for tag, logged in steps.items():
        assert len(logged) == len(set(logged)), (tag, logged)
    assert steps["run_1/train/loss"] == [256, 384, 512]  # the updates after rollouts 1, 2, 3
    assert steps["run_1/eval/score"] == [0, 256, 512]
    dqn = tmp_path / "dqn"
    config = str(ROOT / "configs" / "smoke_dqn.yaml")
    train_from_file(config, ["n_envs=8", "env_options.target_score=null"], str(dqn), ["t"])
    for tag, logged in tb_steps(dqn).items():
        assert len(logged) == len(set(logged)), (tag, logged)
    resume_run(
        str(ppo), ["n_timesteps=640", "evaluation.opponents=[knock.greedy]"], ["t"], progress="off"
    )
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.plugins.custom_scalar import layout_pb2

    tags = Counter(
        value.tag
        for path in (ppo / "tb" / "run_1").glob("events.out.tfevents.*")
        for raw in RawEventFileLoader(str(path)).Load()
        for value in Event.FromString(raw).summary.value
    )
    assert tags["_hparams_/session_start_info"] == 1
    # the CUSTOM SCALARS layout once a session: the resume's (which TensorBoard reads, the
    # run's last) has a chart for the opponent the resume added, and keeps the earlier one's
    assert tags["custom_scalars__config__"] == 2
    logs = EventAccumulator(str(ppo / "tb" / "run_1"), size_guidance={"tensors": 0})
    logs.Reload()
    layout = layout_pb2.Layout()
    layout.ParseFromString(logs.Tensors("custom_scalars__config__")[-1].tensor_proto.string_val[0])
    charts = [c.title for category in layout.category for c in category.chart]
    assert "win rate vs random (95% CI)" in charts and "win rate vs knock.greedy (95% CI)" in charts


def test_a_resumed_run_writes_the_update_its_checkpoint_had_not_written_yet(tmp_path) -> None:
    """The last update's train/* are written with the next rollout's logs; a run stopped at a
    checkpoint lost them (one update's scalars missing at every resume)."""
    single = ["env_options.target_score=null", "evaluation.interval=256"]
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    train_from_file(SMOKE, [*single, "n_timesteps=512"], str(straight), ["t"], progress="off")
    train_from_file(SMOKE, [*single, "n_timesteps=256"], str(resumed), ["t"], progress="off")
    resume_run(str(resumed), ["n_timesteps=512"], ["t"], progress="off")
    want = tb_steps(straight)
    got = tb_steps(resumed)
    for tag in ("run_1/train/loss", "run_1/train/approx_kl", "run_1/train/entropy_loss"):
        assert want[tag] == got[tag] == [256, 384, 512], tag


def test_sample_games_reach_tensorboard_at_their_own_steps(tmp_path) -> None:
    """Games sampled between evaluations were written with the next rollout's logs, under the
    next step (two at each evaluation step, "step 128" and "step 256" both at 256)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = tmp_path / "run"
    overrides = [
        "n_timesteps=512", "evaluation.interval=256", "evaluation.sample_game_interval=128",
        "env_options.target_score=null",
    ]  # fmt: skip
    train_from_file(SMOKE, overrides, str(run), ["t"], progress="off")
    acc = EventAccumulator(str(run / "tb" / "run_1"), size_guidance={"tensors": 0})
    acc.Reload()
    texts = acc.Tensors("text/sample_game/text_summary")
    steps = [t.step for t in texts]
    assert steps == [0, 128, 256, 384, 512]
    for event in texts:
        text = event.tensor_proto.string_val[0].decode()
        assert f"sample game at step {event.step:,}:" in text


def test_a_network_that_cannot_be_built_leaves_no_run_folder(tmp_path, monkeypatch, capsys):
    """The run's files were written before the network was built: a failure there left a
    folder that a new run was then refused and a resume restarted into the same failure."""
    from rummyzoo.training import train as train_module

    def broken(*args, **kwargs):
        raise ValueError("no network today")

    monkeypatch.setattr(train_module, "build_model", broken)
    run = tmp_path / "run"
    assert main(["train", SMOKE, "--run-dir", str(run), "--quiet"]) == 2
    assert "no network today" in capsys.readouterr().err
    assert not run.exists()


def test_a_dqn_resume_without_its_replay_buffer_refills_it_before_it_learns(
    tmp_path, monkeypatch
) -> None:
    """A DQN checkpoint saved without its replay buffer resumes with an empty one: it plays
    learning_starts (64) steps before its next update (it updated at once before, on the
    handful of transitions of the first steps), and says so. A buffer left from before the
    setting was turned off is removed with the next checkpoint, not loaded with a later one."""
    from rummyzoo.training.dqn import MaskedDQN

    updates: list[int] = []
    target = MaskedDQN.td_target

    def spy(self, *args, **kwargs):
        updates.append(self.num_timesteps)
        return target(self, *args, **kwargs)

    monkeypatch.setattr(MaskedDQN, "td_target", spy)
    config = str(ROOT / "configs" / "smoke_dqn.yaml")
    run = tmp_path / "dqn"
    buffer = run / "checkpoints" / "last_replay_buffer.pkl"
    single = ["env_options.target_score=null", "evaluation.interval=1024"]
    train_from_file(config, [*single, "n_timesteps=256"], str(run), ["t"], progress="off")
    assert buffer.exists() and updates and max(updates) <= 256
    off = ["checkpoints.save_replay_buffer=false"]
    updates.clear()
    resume_run(str(run), ["n_timesteps=384", *off], ["t"], progress="off")  # loads it
    assert min(updates) <= 256 + 8  # learning on at once, with the buffer it loaded
    assert not buffer.exists()  # the checkpoint at 384 has none: the old one is gone
    updates.clear()
    with pytest.warns(UserWarning, match=r"has no replay buffer .*learning_starts \(64\) steps"):
        # stopped while it refills: the checkpoint at 416 saves a buffer of 32 transitions
        on = ["checkpoints.save_replay_buffer=true"]
        resume_run(str(run), ["n_timesteps=416", *on], ["t"], progress="off")
    assert not updates and buffer.exists()
    resume_run(str(run), ["n_timesteps=512"], ["t"], progress="off")  # which goes on refilling
    assert updates and min(updates) > 384 + 64 and max(updates) <= 512


def test_a_finished_run_extended_and_stopped_keeps_no_summary_of_its_first_end(
    tmp_path, monkeypatch, capsys
) -> None:
    """The summary of a finished run described it at its first end once an extension of it
    was stopped, and ``evaluate`` recalled that run (256 steps) for a checkpoint of 384."""
    run = tmp_path / "run"
    train_from_file(SMOKE, ["env_options.target_score=null"], str(run), ["t"], progress="off")
    assert json.loads((run / "summary.json").read_text())["steps"] == 256
    on_step = callbacks.RunCallback._on_step

    def stopped_past_384(self):
        if self.num_timesteps > 400:
            raise KeyboardInterrupt
        return on_step(self)

    monkeypatch.setattr(callbacks.RunCallback, "_on_step", stopped_past_384)
    with pytest.raises(KeyboardInterrupt):
        resume_run(str(run), ["n_timesteps=640"], ["t"], progress="off")
    assert json.loads((run / "state.json").read_text())["steps"] == 384
    assert not (run / "summary.json").exists()
    last = run / "checkpoints" / "last.rz"
    capsys.readouterr()
    assert main(["evaluate", str(last), "--deals", "2", "--workers", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "trained 384 steps" in out and "256 steps" not in out, out


def test_a_finished_run_extended_takes_the_snapshot_and_checkpoint_due_where_it_ended(
    tmp_path,
) -> None:
    keep = ["self_play.pool_size=10", "checkpoints.keep=10", "env_options.target_score=null"]
    straight, extended = tmp_path / "straight", tmp_path / "extended"
    train_from_file(SMOKE, [*keep, "n_timesteps=512"], str(straight), ["t"], progress="off")
    train_from_file(SMOKE, [*keep, "n_timesteps=256"], str(extended), ["t"], progress="off")
    resume_run(str(extended), ["n_timesteps=512"], ["t"], progress="off")
    for folder in ("pool", "checkpoints"):
        names = [
            sorted(p.name for p in (run / folder).glob("*_0*.rz")) for run in (straight, extended)
        ]
        assert names[0] == names[1] and any("256" in n for n in names[0]), folder
    evals = [
        [e["steps"] for e in json.loads((r / "summary.json").read_text())["evaluations"]]
        for r in (straight, extended)
    ]
    assert evals[0] == evals[1] == [0, 128, 256, 384, 512]


def test_a_run_folder_that_is_a_file_is_one_line(tmp_path, capsys) -> None:
    taken = tmp_path / "afile"
    taken.write_text("mine")
    assert main(["train", SMOKE, "--run-dir", str(taken), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"rummyzoo train: error: the run folder {taken} is a file: name a folder (new or empty)"
    ]
    assert taken.read_text() == "mine"
    # a run folder below a file cannot be made: one line naming it, the file left alone
    below = taken / "run"
    assert main(["train", SMOKE, "--run-dir", str(below), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"rummyzoo train: error: cannot make the run folder {below}: Not a directory"]
    assert taken.read_text() == "mine"


def test_checkpoint_opponents_get_tensorboard_tags_without_the_machines_folders() -> None:
    from rummyzoo.training.dashboard import tag_name

    assert tag_name("knock.smart") == "knock.smart"
    assert tag_name("/home/me/runs/ppo1/checkpoints/best.rz") == "ppo1.best.rz"
    assert tag_name("runs/ppo1/pool/snapshot_000000128.rz") == "ppo1.snapshot_000000128.rz"
    assert tag_name("best.rz") == "best.rz"


def test_two_checkpoint_opponents_of_one_short_name_get_tags_of_their_own() -> None:
    """Two runs' ``r1/checkpoints/best.rz`` in other folders made one tag: the second's
    figures were logged over the first's, under the first's chart too."""
    from rummyzoo.training.dashboard import custom_layout, eval_tags, tag_names

    first, second = "a/r1/checkpoints/best.rz", "b/r1/checkpoints/best.rz"
    tags = tag_names([first, "knock.smart", second])
    assert tags[first] == "r1.best.rz" and tags["knock.smart"] == "knock.smart"
    assert tags[second].startswith("r1.best.rz-") and len(set(tags.values())) == 3
    # the first keeps its own, whatever comes after it (a resumed run's earlier opponent)
    assert tag_names([first, "b/x/r1/checkpoints/best.rz"])[first] == "r1.best.rz"
    config = load_config(str(ROOT / "configs" / "smoke_ppo.yaml"))
    config.evaluation.opponents = ["random", second]
    layout = custom_layout(config, earlier=[first])["evaluation"]
    charts = {title: tags for title, (_, tags) in layout.items() if "win rate" in title}
    assert charts[f"win rate vs {first} (95% CI)"][0] == "eval/r1.best.rz/win_rate"
    assert charts[f"win rate vs {second} (95% CI)"][0] == f"eval/{tags[second]}/win_rate"
    assert eval_tags(config, [first])[second] == tags[second]


def test_a_moved_run_names_its_own_folder(tmp_path, monkeypatch) -> None:
    """summary.json names the folder as the run was trained; read elsewhere, it is the folder
    where the run is now."""
    import shutil

    from rummyzoo.cli.evaluate import recall_run

    monkeypatch.chdir(tmp_path)
    train_from_file(SMOKE, ["env_options.target_score=null"], "run", ["t"], progress="off")
    shutil.copytree(tmp_path / "run", tmp_path / "copy")
    summary = resume_run(str(tmp_path / "copy"), [], ["t"], progress="off")
    assert summary["finished_before"] and summary["run_dir"] == str(tmp_path / "copy")
    assert summary["last"] == str(tmp_path / "copy" / "checkpoints" / "last.rz")
    assert format_summary(summary) == f"nothing trained: {tmp_path / 'copy'} was already finished"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    shown = recall_run(tmp_path / "copy" / "summary.json")
    assert f"tensorboard --logdir {tmp_path / 'copy' / 'tb'}" in shown
    assert "logdir run/" not in shown


def test_a_resume_puts_back_the_best_of_its_checkpoint(tmp_path, monkeypatch) -> None:
    """best.rz is written at each evaluation that beats it, past the checkpoint too: a resume
    from the checkpoint takes back the one the checkpoint had (that later network is trained
    again), and drops one where the checkpoint had none."""
    from rummyzoo.agents.checkpoints import read_meta
    from rummyzoo.training.run_state import rewind_best

    run = tmp_path / "run"
    monkeypatch.setattr(callbacks.RunCallback, "_on_step", _stop_after(420))
    with pytest.raises(_Killed):
        train_from_file(SMOKE, LONGER, str(run), ["test"], progress="off")
    monkeypatch.undo()
    folder = run / "checkpoints"
    kept = folder / "best_at_checkpoint.rz"
    assert read_meta(kept)["steps"] <= 256  # saved with the checkpoint at 256
    later = run / "pool" / "snapshot_000000384.rz"
    assert read_meta(later)["steps"] == 384
    (folder / "best.rz").write_bytes(later.read_bytes())  # as an evaluation at 384 would
    rewind_best(run, 256)
    assert (folder / "best.rz").read_bytes() == kept.read_bytes()
    rewind_best(run, 256)  # the checkpoint's own best stays
    assert (folder / "best.rz").read_bytes() == kept.read_bytes()
    summary = resume_run(str(run), [], ["test"], progress="off")  # and the run goes on
    assert summary["steps"] == 512 and (folder / "best.rz").exists()
    kept.unlink()  # a checkpoint before any best: a later best.rz goes
    (folder / "best.rz").write_bytes(later.read_bytes())
    rewind_best(run, 256)
    assert not (folder / "best.rz").exists()


def test_a_step_of_per_process_games_cut_short_still_closes() -> None:
    """A signal to the learner's process alone (SIGTERM, ``kill -INT``) while it read the games'
    replies to a step: closing the env ends the games' processes instead of waiting for ever
    for the replies it had read already."""
    import threading

    import numpy as np

    from rummyzoo.training.train import build_vec_env

    config = load_config(SMOKE, ["vec_env=subproc", "n_envs=2", "pretrain=null"])
    vec = build_vec_env(config)
    processes = list(vec.venv.processes)
    try:
        vec.reset()
        masks = np.asarray(vec.env_method("action_masks"))
        vec.step_async(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        vec.venv.remotes[0].recv()  # one game's reply read, then the step is cut short
        closing = threading.Thread(target=vec.close, daemon=True)
        closing.start()
        closing.join(timeout=60)
        assert not closing.is_alive(), "close() waits for replies already read"
        assert not any(p.is_alive() for p in processes)
    finally:
        for p in processes:
            if p.is_alive():
                p.kill()


@pytest.mark.parametrize("vec_env", ["batched", "dummy", "subproc"])
def test_a_resume_keeps_the_league_it_drew_its_opponents_by(tmp_path, monkeypatch, vec_env) -> None:
    """Prioritized fictitious self-play weighs opponents by recent results: a resume starts
    from the checkpoint's results, not from none (which drew every opponent alike again);
    with per-game envs too, whose games share one league (each game's results join it)."""
    run = tmp_path / "run"
    league = [
        "league.sampling=pfsp",
        "opponents=[{name: random}, {name: knock.greedy}, {name: self}]",
        "env_options.target_score=null",
        "n_timesteps=256",
        f"vec_env={vec_env}",
    ]
    train_from_file(SMOKE, league, str(run), ["t"], progress="off")
    saved = json.loads((run / "state.json").read_text())
    assert sum(len(v) for v in saved["league_results"].values()) > 20
    assert saved["pool_results"] and all(len(r) == 2 for r in saved["pool_results"])
    seen = []
    original = callbacks.RunCallback._on_rollout_start

    def first_rollout(self):
        if not seen:
            seen.append((self._league().results(), [list(r) for r in self._pool_results]))
        return original(self)

    monkeypatch.setattr(callbacks.RunCallback, "_on_rollout_start", first_rollout)
    resume_run(str(run), ["n_timesteps=384"], ["t"], progress="off")
    assert seen == [(saved["league_results"], saved["pool_results"])]
    # the league is logged (every game's)
    assert {"run_1/league/probability/random", "run_1/league/win_rate/knock.greedy"} <= set(
        tb_steps(run)
    )


def test_a_run_in_training_cannot_be_trained_again_at_once(tmp_path, monkeypatch) -> None:
    from rummyzoo.training.run_folder import run_lock

    run = _killed_run(tmp_path, monkeypatch)
    before = _digest(run)
    held = pytest.raises(ValueError, match=r"is being trained by another process \(pid \d+\)")
    with run_lock(run), held:  # as a run still training holds it
        resume_run(str(run), [], ["test"], progress="off")
    assert _digest(run) == before
    # a new run into it is told so too (it was told to resume, which is refused)
    with run_lock(run), held:
        train_from_file(SMOKE, [], str(run), ["test"], progress="off")
    assert _digest(run) == before
    assert resume_run(str(run), [], ["test"], progress="off")["steps"] == 512  # once it is free


def test_a_new_run_folder_where_folders_cannot_be_locked(tmp_path, monkeypatch) -> None:
    """Without POSIX locks (Windows) the run's checks met a folder not made yet."""
    monkeypatch.setitem(sys.modules, "fcntl", None)  # (its import fails)
    run = tmp_path / "new" / "run"
    done = train_from_file(SMOKE, ["n_timesteps=128"], str(run), ["t"], progress="off")
    assert done["steps"] == 128 and (run / "config.yaml").exists()


def test_a_run_whose_checkpoint_is_gone_is_refused_not_restarted(tmp_path, monkeypatch) -> None:
    run = _killed_run(tmp_path, monkeypatch)
    (run / "checkpoints" / "last.zip").unlink()
    before = _digest(run)
    with pytest.raises(ValueError, match=r"state\.json says the run saved a checkpoint, but "):
        resume_run(str(run), [], ["test"], progress="off")
    assert _digest(run) == before  # nothing deleted


def test_a_run_starts_where_a_kill_cut_the_writing_of_its_config_short(tmp_path) -> None:
    """A folder that holds only the temporary file of a config.yaml being written when the run
    was killed (and its lock) is no run: the same command starts the run there."""
    run = tmp_path / "run"
    run.mkdir()
    (run / ".lock").write_text("")
    (run / ".config.yaml.k3x9q.tmp").write_text("variant: knock")
    done = train_from_file(SMOKE, ["n_timesteps=128"], str(run), ["t"], progress="off")
    assert done["steps"] == 128 and (run / "config.yaml").exists()
    assert not list(run.glob(".*.tmp"))
    # any other file still makes the folder someone else's
    other = tmp_path / "other"
    other.mkdir()
    (other / ".config.yaml.k3x9q.tmp").write_text("")
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="is not empty: name a folder"):
        train_from_file(SMOKE, [], str(other), ["test"], progress="off")
    assert (other / ".config.yaml.k3x9q.tmp").exists()
    # and a hidden file of the user's own is no leftover of a run
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / ".my_notes.tmp").write_text("mine")
    with pytest.raises(ValueError, match="is not empty: name a folder"):
        train_from_file(SMOKE, [], str(mine), ["test"], progress="off")
    assert (mine / ".my_notes.tmp").read_text() == "mine"


def test_a_run_starts_only_in_a_new_or_empty_folder(tmp_path) -> None:
    folder = tmp_path / "mine"
    (folder / "games").mkdir(parents=True)
    (folder / "games" / "my_game.json").write_text("{}")
    with pytest.raises(ValueError, match="is not empty: name a folder"):
        train_from_file(SMOKE, [], str(folder), ["test"], progress="off")
    assert sorted(p.name for p in folder.rglob("*")) == ["games", "my_game.json"]
    # a run stopped before it wrote a file leaves its folder as it found it: an empty folder
    # empty (no lock file to make it "not empty"), a folder it made gone
    from rummyzoo.training import train as train_module

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    empty, made = tmp_path / "empty", tmp_path / "made"
    deep = tmp_path / "kept" / "new" / "deeper" / "run"  # the folders above it made too
    empty.mkdir()
    (tmp_path / "kept").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(train_module, "build_vec_env", stopped)
        for folder in (empty, made, deep):
            with pytest.raises(KeyboardInterrupt):
                train_from_file(SMOKE, [], str(folder), ["t"], progress="off")
    assert empty.is_dir() and not list(empty.iterdir()) and not made.exists()
    assert (tmp_path / "kept").is_dir() and not list((tmp_path / "kept").iterdir())


def test_a_resume_killed_while_rewinding_tensorboard_leaves_each_file_whole(
    tmp_path, monkeypatch
) -> None:
    from rummyzoo.training import run_folder

    run = _killed_run(tmp_path, monkeypatch)
    (run / "checkpoints" / ".best.rz.x1y2.tmp").write_bytes(b"half a file")  # a cut-short save
    before = tb_steps(run)

    def killed(src, dst):
        raise _Killed  # dies after writing the rewound file, before it replaces the original

    monkeypatch.setattr(run_folder.os, "replace", killed)
    with pytest.raises(_Killed):
        resume_run(str(run), [], ["test"], progress="off")
    monkeypatch.undo()
    assert tb_steps(run) == before  # the originals, no second copy of any step
    summary = resume_run(str(run), [], ["test"], progress="off")
    assert summary["steps"] == 512
    for tag, steps in tb_steps(run).items():
        assert all(n == 1 for n in Counter(steps).values()), tag
    assert not list(run.rglob(".*.tmp")) and not (run / run_folder.TB_SCRATCH).exists()


def test_a_resume_reads_its_snapshots_and_config_before_it_changes_anything(
    tmp_path, monkeypatch
) -> None:
    from rummyzoo.training.run_state import read_state

    run = _killed_run(tmp_path, monkeypatch)
    snapshot = Path(read_state(run)["pool"][0]["path"])
    snapshot.write_bytes(snapshot.read_bytes()[:200])  # cut short
    before = _digest(run)
    with pytest.raises(ValueError, match=r"cannot resume .*: pool snapshot .*snapshot_"):
        resume_run(str(run), [], ["test"], progress="off")
    assert _digest(run) == before
    (run / "config.yaml").write_text("variant: [knock_rummy\nalgo: ppo\n")
    with pytest.raises(ValueError) as refused:
        resume_run(str(run), [], ["test"], progress="off")
    assert "is not valid YAML" in str(refused.value) and "\n" not in str(refused.value)


def test_a_resumed_run_plays_new_deals_not_the_start_of_the_run_again(
    tmp_path, monkeypatch
) -> None:
    import numpy as np

    from rummyzoo.training import train as train_module
    from rummyzoo.training.config import load_config

    run = _killed_run(tmp_path, monkeypatch)
    built = []
    original = train_module.build_vec_env

    def watched(config, resumed_at=0):
        env = original(config, resumed_at)
        built.append((resumed_at, env.reset().copy()))
        return env

    monkeypatch.setattr(train_module, "build_vec_env", watched)
    assert resume_run(str(run), [], ["test"], progress="off")["steps"] == 512
    ((resumed_at, first_obs),) = built
    assert resumed_at == 256  # the checkpoint's step
    config = load_config(SMOKE, LONGER)
    start = original(config).reset()
    assert not np.array_equal(first_obs, start)  # not the deals of step 0 again
    again = original(config, 256).reset()
    assert np.array_equal(first_obs, again)  # the same seeds for the same step: repeatable
    assert config.game_seed(0, 256) != config.game_seed(0) and config.resume_seed(256) < 2**32


def test_a_resumed_dqn_explores_from_the_new_seed(tmp_path) -> None:
    """Loading a DQN sets its exploration and demonstration draws from the run's seed again;
    the resume's new seed must reach them too, or every resume replays the run's first coin
    flips and random moves."""
    import numpy as np

    from rummyzoo.training.config import load_config
    from rummyzoo.training.dqn import MaskedDQN
    from rummyzoo.training.train import build_model, build_vec_env

    config = load_config(ROOT / "configs" / "smoke_dqn.yaml", [])
    env = build_vec_env(config)
    model = build_model(config, env, None)
    fresh = np.random.default_rng(config.seed).random(4)
    assert np.array_equal(model._explore_rng.random(4), fresh)  # a fresh run: the run's seed
    model.save(tmp_path / "last.zip")
    loaded = MaskedDQN.load(tmp_path / "last.zip", env=env)
    loaded.set_random_seed(config.resume_seed(256))
    expected = np.random.default_rng(config.resume_seed(256))
    assert np.array_equal(loaded._explore_rng.random(4), expected.random(4))
    assert not np.array_equal(
        loaded._demo_rng.random(4), np.random.default_rng(config.seed + 7).random(4)
    )


def test_a_run_without_run_dir_gets_a_new_folder_under_runs(tmp_path, monkeypatch, capsys):
    """``rummyzoo train CONFIG`` as the README gives it: the run goes to runs/<config>_<time>,
    and a second run started in the same second gets a folder of its own."""
    from rummyzoo.training import run_folder

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_folder.time, "strftime", lambda fmt, *a: "20261204-120000")
    argv = ["train", SMOKE, "--no-progress", "--set", "n_timesteps=128"]
    argv += ["--set", "env_options.target_score=null"]
    assert main(argv) == 0
    assert main(argv) == 0
    out = capsys.readouterr().out
    first = Path("runs") / "smoke_ppo_20261204-120000"
    second = Path("runs") / "smoke_ppo_20261204-120000_2"
    for run in (first, second):
        assert (run / "checkpoints" / "best.rz").exists()
        assert str(run) in out
    assert sorted(p.name for p in Path("runs").iterdir()) == [first.name, second.name]


def test_two_runs_started_at_once_without_run_dir_take_a_folder_each(tmp_path, monkeypatch, capsys):
    """Two ``rummyzoo train CONFIG`` started in the same second chose the same folder, and
    the one that lost the race for it was refused ("is being trained by another process"):
    here the other process makes the folder right after this one chose its name."""
    from rummyzoo.training import run_folder
    from rummyzoo.training import train as train_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_folder.time, "strftime", lambda fmt, *a: "20261204-120000")
    chosen = []

    def raced(config, config_path):
        name = run_folder.new_run_dir(config, config_path)
        if not chosen:  # the other process makes the folder, and trains in it
            name.mkdir(parents=True)
            (name / "other.txt").write_text("the other run's")
        chosen.append(name)
        return name

    monkeypatch.setattr(train_module, "new_run_dir", raced)
    argv = ["train", SMOKE, "--no-progress", "--set", "n_timesteps=128"]
    assert main([*argv, "--set", "env_options.target_score=null"]) == 0
    first = Path("runs") / "smoke_ppo_20261204-120000"
    second = Path("runs") / "smoke_ppo_20261204-120000_2"
    assert chosen == [first, second]
    assert sorted(p.name for p in first.iterdir()) == ["other.txt"]  # left as it was
    assert (second / "checkpoints" / "best.rz").exists()
    assert str(second) in capsys.readouterr().out


@pytest.mark.parametrize("runs", ["a file", "a dangling link"])
def test_a_run_without_run_dir_where_runs_is_no_folder_is_refused(
    runs, tmp_path, monkeypatch, capsys
):
    """``runs`` a file or a link to nothing: the folder the run names could not be made, which
    was taken for another process's, and the next name tried, for ever."""
    monkeypatch.chdir(tmp_path)
    if runs == "a file":
        Path("runs").write_text("")
    else:
        Path("runs").symlink_to(tmp_path / "gone")
    argv = ["train", SMOKE, "--no-progress", "--set", "n_timesteps=128"]
    assert main(argv) == 2
    assert "rummyzoo train: error: cannot make the run folder runs/smoke_ppo_" in (
        capsys.readouterr().err
    )


def test_the_summary_times_the_scheduled_work_within_the_rl_phase(tmp_path) -> None:
    """The RL phase's time holds the evaluations (the one at step 0 too); the summary times
    them apart, so that a long evaluation does not pass for slow training unsaid."""
    slow = ["env_options.target_score=null", "evaluation.deals=400", "evaluation.interval=64"]
    summary = train_from_file(SMOKE, slow, str(tmp_path / "run"), ["t"], progress="off")
    scheduled = summary["scheduled_seconds"]
    assert 0 < scheduled < summary["rl_seconds"]
    assert summary["rl_steps_per_s"] == pytest.approx(256 / summary["rl_seconds"])
    shown = format_summary(summary)
    assert (
        f"of which {scheduled:.0f}s evaluations, snapshots, sample games and checkpoints" in shown
    )
    # the final evaluation (400 deals) and checkpoint after the RL phase: timed and said too
    assert summary["final_seconds"] > 0
    assert f"then {summary['final_seconds']:.0f}s for the final evaluation and checkpoint" in shown
    # five evaluations of 400 deals against random play take a visible share of the phase
    quick = train_from_file(
        SMOKE,
        ["env_options.target_score=null", "evaluation.deals=2", "evaluation.interval=100000"],
        str(tmp_path / "quick"),
        ["t"],
        progress="off",
    )
    assert quick["scheduled_seconds"] < scheduled


def test_resume_given_a_runs_file_says_it_takes_the_folder(tmp_path) -> None:
    (tmp_path / "config.yaml").write_text("variant: knock_rummy\n")
    with pytest.raises(ValueError, match=r"config.yaml is a file: --resume takes a run's folder "
                       r"\(the one that holds config.yaml\)"):  # fmt: skip
        resume_run(str(tmp_path / "config.yaml"), [], ["t"], progress="off")
    with pytest.raises(ValueError, match=r"nothing does not exist: --resume takes a run's folder"):
        resume_run(str(tmp_path / "nothing"), [], ["t"], progress="off")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"empty is not a run folder \(no config.yaml\)"):
        resume_run(str(tmp_path / "empty"), [], ["t"], progress="off")


@pytest.mark.parametrize(
    ("config", "asked", "reached"),
    [(SMOKE, 200, 256), (str(ROOT / "configs" / "smoke_dqn.yaml"), 250, 256)],
)
def test_json_is_all_of_stdout_and_the_progress_counts_to_the_step_the_run_reaches(
    tmp_path, capsys, config, asked, reached
) -> None:
    """``--json`` prints the summary alone on stdout (the warm start's line and the progress
    go to stderr), and the progress counts to the step the run stops at: a whole PPO rollout
    (2 games x 64 steps), or DQN's whole rounds (2 games x train_freq 4)."""
    run = tmp_path / "run"
    args = ["train", config, "--run-dir", str(run), "--json", "--no-progress"]
    args += ["--progress-every", "0.01", "--set", "env_options.target_score=null"]
    args += [
        "--set",
        f"n_timesteps={asked}",
        "--set",
        "pretrain={teacher: knock.greedy, decisions: 200}",
    ]
    assert main(args) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["steps"] == reached
    assert (
        "warm start: " in err
        and f"train ({summary['algo']}): {reached}/{reached} steps (100%)" in err
    )
    assert f"/{asked} steps" not in err


def test_the_summary_compares_each_opponent_with_its_own_first_evaluation() -> None:
    """A resume may change the evaluation's opponents: each row starts from that opponent's
    first evaluation, and says its step where the rows start at different steps."""

    def result(rate: float) -> dict:
        return {"win_rate": rate, "win_rate_ci": [rate - 0.1, rate + 0.1], "mean_points": 1.0}

    history = [
        {"steps": 0, "results": {"random": result(0.6), "knock.greedy": result(0.3)}},
        {"steps": 4096, "results": {"random": result(0.7), "knock.smart": result(0.2)}},
        {"steps": 8192, "results": {"random": result(0.8), "knock.smart": result(0.4)}},
    ]
    summary = {
        "algo": "ppo",
        "variant": "knock_rummy",
        "num_players": 2,
        "steps": 8192,
        "steps_this_session": 4096,
        "resumed": True,
        "seconds": 10.0,
        "seconds_this_session": 5.0,
        "rl_seconds": 4.0,
        "evaluations": history,
        "run_dir": "RUN",
        "last": "RUN/checkpoints/last.rz",
        "best": None,
        "tensorboard": "tensorboard --logdir RUN/tb",
    }
    lines = format_summary(summary).splitlines()
    assert any("at step 8,192 (from each opponent's first evaluation):" in x for x in lines)
    assert any("vs random" in x and "at step 0: 0.600" in x and "->  0.800" in x for x in lines)
    assert any(
        "vs knock.smart" in x and "at step 4,096: 0.200" in x and "0.400" in x for x in lines
    )
    assert not any("knock.greedy" in x for x in lines)  # no longer evaluated
    history[1]["results"]["knock.smart"] = history[0]["results"]["knock.smart"] = result(0.1)
    del history[0]["results"]["knock.greedy"]
    lines = format_summary(summary).splitlines()
    assert any("at step 0 and at step 8,192:" in x for x in lines)
    assert any("vs knock.smart" in x and "0.100" in x and "at step" not in x for x in lines)


def test_a_run_records_the_commit_of_a_checkout_only_where_git_tracks_the_code(tmp_path) -> None:
    """``version.json``'s ``git_commit``: a copy of the code in a folder of another git
    project that does not track it (an installed package inside a project of your own,
    ``project/.venv/...``) records no commit, where it recorded that project's; the same file
    committed there records that commit."""
    import importlib.util

    import rummyzoo.training.run_folder as run_folder

    project = tmp_path / "project"
    copy = project / "venv" / "run_folder.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(Path(run_folder.__file__).read_text())
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (project / "own.txt").write_text("a project of its own\n")
    subprocess.run([*git, "add", "own.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "own"], check=True)

    def recorded() -> dict:
        spec = importlib.util.spec_from_file_location("run_folder_copy", copy)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.version_info()

    assert "git_commit" not in recorded()
    subprocess.run([*git, "add", "venv/run_folder.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the code"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert recorded()["git_commit"] == head.strip()
    # a checkout's own runs record its commit, as before
    if (Path(run_folder.__file__).resolve().parent.parent / ".git").exists():
        assert len(run_folder.version_info().get("git_commit", "")) == 40
