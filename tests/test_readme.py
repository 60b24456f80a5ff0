"""The README's examples run as a user would run them."""

from __future__ import annotations

import code
import contextlib
import io
import re
from pathlib import Path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def _blocks(section: str, lang: str) -> list[str]:
    start = README.index(section)
    end = README.find("\n## ", start + len(section))
    text = README[start : end if end > 0 else None]
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.DOTALL)


def test_the_first_lines_give_the_two_commands() -> None:
    head = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split("#")[0].strip() for line in head] == ["make demo", "make test"]


def test_quick_start_pastes_into_the_interpreter_and_prints_what_it_says() -> None:
    """Typed line by line into Python's interactive console (where a loop needs a blank line
    after it), the quick start runs and prints the README's output."""
    source = _blocks("## Quick start", "python")[0]
    expected = _blocks("## Quick start", "text")[0]
    console = code.InteractiveConsole()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        more = False
        for line in source.splitlines():
            more = console.push(line)
        assert not more, "the example leaves a statement unfinished"
    shown = out.getvalue()
    assert "Error" not in shown and "Traceback" not in shown, shown
    assert shown.strip() == expected.strip()
    assert "melds" in shown and "deadwood" in shown and "knocker" in shown


def test_saving_a_model_trained_with_your_own_code_runs_as_written(tmp_path, monkeypatch) -> None:
    """The Sharing agents example: a MaskablePPO of the user's own on the batched env, saved
    with model_meta, plays in the arena; a metadata that disagrees with the model is refused."""
    source = _blocks("## Sharing agents", "python")[0]
    monkeypatch.chdir(tmp_path)
    # stable-baselines3 makes a log folder at every learn() of a model without a logger of its
    # own: here, not in the temp dir
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "README: Sharing agents", "exec"), {})
    import pytest
    from sb3_contrib import MaskablePPO

    from rummyzoo.agents.arena import format_report, run_arena, summarize
    from rummyzoo.agents.checkpoints import (
        CheckpointError,
        load_policy,
        model_meta,
        save_checkpoint,
    )
    from rummyzoo.training.vec_env import BatchedSeatEnv

    assert load_policy(tmp_path / "mine.rz", "knock_rummy", 2).meta["steps"] >= 1024
    # it prints the arena's report of the saved checkpoint against random play
    result = run_arena("knock_rummy", 2, [str(tmp_path / "mine.rz"), "random"], deals=10)
    printed = out.getvalue()
    assert "win rate" in printed and "mine.rz" in printed
    assert (
        printed.strip() == format_report(summarize(result)).replace(str(tmp_path) + "/", "").strip()
    )

    env = BatchedSeatEnv("knock_rummy", 2, {}, opponents=["random"], num_envs=2, seed=0)
    small = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0)
    wrong = model_meta("knock_rummy", 2, algo="ppo", features="knock_deadwood")
    with pytest.raises(CheckpointError, match=r"features 'knock_deadwood' \(the env's: None\)"):
        save_checkpoint(small, tmp_path / "wrong.rz", wrong)
    # metadata of other rules, or of another match, than the model's env is refused by name
    # (the network's shapes agree, so nothing else would catch it; with the match to 100 left
    # out, evaluate would play the checkpoint in single hands, whose observation's scores differ)
    for options, name in (
        ({"knock_max_deadwood": 10}, "rules.rz"),
        ({"target_score": 100}, "match.rz"),
    ):
        game = BatchedSeatEnv("knock_rummy", 2, options, opponents=["random"], num_envs=2, seed=0)
        model = MaskablePPO("MlpPolicy", game, n_steps=8, batch_size=16, seed=0)
        with pytest.raises(
            CheckpointError, match=re.escape(f"options {{}} (the env's: {options!r})")
        ):
            save_checkpoint(model, tmp_path / name, model_meta("knock_rummy", 2, algo="ppo"))
        assert not (tmp_path / name).exists()
        save_checkpoint(model, tmp_path / name, model_meta("knock_rummy", 2, options, algo="ppo"))
    with pytest.raises(CheckpointError, match="mask_in_obs True"):
        save_checkpoint(
            small, tmp_path / "mask.rz", {**model_meta("knock_rummy", 2), "mask_in_obs": True}
        )
    assert not (tmp_path / "wrong.rz").exists()


def test_the_demos_training_fits_whole_rollouts_and_the_readme_says_how_long() -> None:
    """``make demo`` trains the default config for ``DEMO_STEPS``: a whole number of its PPO
    rollouts (a run that overshoots its step count warns, and the first command must not), and
    the README names that number of steps."""
    import warnings

    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import _warn_rollout_misfits

    root = Path(__file__).resolve().parent.parent
    makefile = (root / "Makefile").read_text()
    steps = int(re.search(r"^DEMO_STEPS \?= (\d+)$", makefile, flags=re.MULTILINE).group(1))
    train = re.search(r"^\t.*rummyzoo train (\S+) .*n_timesteps=\$\(DEMO_STEPS\)", makefile, re.M)
    config = load_config(root / train.group(1), [f"n_timesteps={steps}"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_rollout_misfits(config)
    assert steps % (config.hyperparams.n_steps * config.n_envs) == 0
    assert f"for {steps:,} PPO steps" in README
