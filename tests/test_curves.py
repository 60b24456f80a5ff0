"""``rummyzoo curves``: a run's evaluations over training steps, as a PNG."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rummyzoo.cli.main import main
from rummyzoo.training.curves import curve_figure, run_evaluations

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("curves") / "run"
    argv = ["train", str(CONFIGS / "smoke_ppo.yaml"), "--run-dir", str(run), "--quiet"]
    for setting in ("evaluation.opponents=[random, knock.greedy]", "pretrain.teacher=knock.greedy"):
        argv += ["--set", setting]
    argv += ["--set", "pretrain.decisions=100"]
    assert main(argv) == 0
    return run


def test_curves_plot_every_evaluation(run, tmp_path, capsys):
    config, history = run_evaluations(run)
    assert config["variant"] == "knock_rummy"
    summary = json.loads((run / "summary.json").read_text())
    assert [e["steps"] for e in history] == [e["steps"] for e in summary["evaluations"]]
    assert history[0]["steps"] == 0 and len(history) >= 2
    out = tmp_path / "deep" / "curve.png"
    assert main(["curves", str(run), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert f"{len(history)} evaluations, steps 0 to {history[-1]['steps']:,}" in printed
    ax = curve_figure(run).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["vs random", "vs knock.greedy"]
    # one line per opponent through its evaluations' win rates
    line = ax.get_lines()[1]
    assert list(line.get_ydata()) == [e["results"]["knock.greedy"]["win_rate"] for e in history]


def _with_config(run: Path, tmp_path: Path, **changes) -> Path:
    """A copy of ``run``'s evaluations under its config with ``changes``."""
    import yaml

    other = tmp_path / "other"
    other.mkdir()
    config = yaml.safe_load((run / "config.yaml").read_text())
    config.update(changes)
    (other / "config.yaml").write_text(yaml.safe_dump(config))
    (other / "summary.json").write_text((run / "summary.json").read_text())
    return other


@pytest.mark.parametrize(
    "players, options, even",
    [(2, {}, 0.5), (4, {}, 0.25), (4, {"teams": True}, 0.5), (3, {"target_score": None}, 1 / 3)],
)
def test_the_even_line_is_one_share_per_side(run, tmp_path, players, options, even):
    ax = curve_figure(_with_config(run, tmp_path, num_players=players, env_options=options))
    ax = ax.axes[0]
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert [list(line.get_ydata()) for line in dashed] == [[even, even]]
    assert any(t.get_text() == f"even share ({even:.2g})" for t in ax.texts)


@pytest.mark.parametrize(
    "variant, options, episode",
    [
        ("knock_rummy", {}, "one hand"),  # Knock Rummy's default: one hand
        ("knock_rummy", {"target_score": 100}, "a match"),
        ("ditch_rummy", {}, "a match"),  # Ditch Rummy's and 500 Rum's: a match to 500
        ("rummy500", {"target_score": None}, "one hand"),
    ],
)
def test_the_axis_says_what_an_evaluation_game_was(run, tmp_path, variant, options, episode):
    other = _with_config(run, tmp_path, variant=variant, env_options=options)
    label = curve_figure(other).axes[0].get_ylabel()
    assert label.endswith(f"duplicate deals, {episode} each)")


def test_curves_keep_opponents_an_evaluation_later_dropped(run, tmp_path):
    """A run resumed with other evaluation opponents: every opponent keeps its line through
    the evaluations it was in (only the last evaluation's opponents were drawn)."""
    changed = tmp_path / "changed"
    changed.mkdir()
    (changed / "config.yaml").write_text((run / "config.yaml").read_text())
    summary = json.loads((run / "summary.json").read_text())
    last = summary["evaluations"][-1]
    last["results"] = {"knock.smart": last["results"]["knock.greedy"]}
    (changed / "summary.json").write_text(json.dumps(summary))
    ax = curve_figure(changed).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["vs random", "vs knock.greedy", "vs knock.smart"]
    lines = {line.get_label(): len(line.get_xdata()) for line in ax.get_lines()}
    count = len(summary["evaluations"])
    assert [lines["vs random"], lines["vs knock.greedy"], lines["vs knock.smart"]] == [
        count - 1,
        count - 1,
        1,
    ]


def test_one_evaluation_is_drawn_with_its_interval_about_its_step(run, tmp_path):
    """A run of one evaluation: its interval as a bar (a band of one step draws nothing) and
    the axis about its step (the autoscale gave -0.04 to 0.04 about step 0)."""
    one = tmp_path / "one"
    one.mkdir()
    (one / "config.yaml").write_text((run / "config.yaml").read_text())
    summary = json.loads((run / "summary.json").read_text())
    summary["evaluations"] = summary["evaluations"][:1]
    (one / "summary.json").write_text(json.dumps(summary))
    ax = curve_figure(one).axes[0]
    low, high = summary["evaluations"][0]["results"]["random"]["win_rate_ci"]
    (container,) = [c for c in ax.containers if type(c).__name__ == "ErrorbarContainer"][:1]
    (segment,) = container.lines[2][0].get_segments()
    assert sorted(segment[:, 1]) == pytest.approx([low, high])
    left, right = ax.get_xlim()
    assert left <= -1 and right >= 1
    assert ax.get_ylim()[0] < 0 and ax.get_ylim()[1] > 1  # a curve at 0 or 1 off the frame


def test_the_axis_names_each_deal_count_of_a_resumed_run(run, tmp_path):
    """A run resumed with other evaluation deals: the axis names each count (it named the
    last config's for every point)."""
    changed = tmp_path / "changed"
    changed.mkdir()
    (changed / "config.yaml").write_text((run / "config.yaml").read_text())
    summary = json.loads((run / "summary.json").read_text())
    for e in summary["evaluations"][-1:]:  # the last evaluation on a quarter of the deals
        for result in e["results"].values():
            result["games"] //= 4
    (changed / "summary.json").write_text(json.dumps(summary))
    import yaml

    config = yaml.safe_load((changed / "config.yaml").read_text())
    deals = config["evaluation"]["deals"]
    config["evaluation"]["deals"] = deals // 4
    (changed / "config.yaml").write_text(yaml.safe_dump(config))
    label = curve_figure(changed).axes[0].get_ylabel()
    assert label.startswith(f"win rate ({deals:,}, then {deals // 4:,} duplicate deals"), label
    assert curve_figure(run).axes[0].get_ylabel().startswith(f"win rate ({deals} duplicate")


@pytest.mark.parametrize("name", ["/dev/stdout", "-"])
def test_a_picture_to_the_commands_output_is_the_output(run, tmp_path, name):
    """``--out /dev/stdout > f.png``: the file is the PNG alone (the line saying what was
    written came after it, in the picture's file); ``--out -`` is the same (it wrote a file
    named ``-.png``)."""
    import subprocess
    import sys

    out = tmp_path / "f.png"
    with out.open("wb") as fh:
        done = subprocess.run(
            [sys.executable, "-m", "rummyzoo.cli.main", "curves", str(run), "--out", name],
            stdout=fh, stderr=subprocess.PIPE, timeout=120, check=True, cwd=tmp_path,
        )  # fmt: skip
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data.endswith(b"IEND\xaeB`\x82")
    assert b"wrote /dev/stdout" in done.stderr
    assert not (tmp_path / "-.png").exists()


def test_curves_of_a_run_still_training(run, tmp_path):
    # before summary.json exists, the evaluations come from state.json
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "config.yaml").write_text((run / "config.yaml").read_text())
    state = json.loads((run / "state.json").read_text())
    (partial / "state.json").write_text(json.dumps(state))
    _, history = run_evaluations(partial)
    assert [e["steps"] for e in history] == [e["steps"] for e in state["eval_history"]]


def test_curves_errors(tmp_path, capsys):
    out = str(tmp_path / "c.png")
    assert main(["curves", str(tmp_path / "nope"), "--out", out]) == 2
    assert "nope does not exist (give a run's folder" in capsys.readouterr().err
    (tmp_path / "f.txt").write_text("x")
    assert main(["curves", str(tmp_path / "f.txt"), "--out", out]) == 2
    assert "f.txt is a file: give a run's folder" in capsys.readouterr().err
    with pytest.raises(NotADirectoryError, match="is a file"):
        run_evaluations(tmp_path / "f.txt")
    assert main(["curves", str(tmp_path), "--out", out]) == 2
    assert "is not a run folder (no config.yaml in it)" in capsys.readouterr().err
    (tmp_path / "config.yaml").write_text("variant: knock_rummy\n")
    assert main(["curves", str(tmp_path), "--out", str(tmp_path / "c.png")]) == 2
    assert "has no evaluations yet" in capsys.readouterr().err
    assert not (tmp_path / "c.png").exists()
    no_interval = {"eval_history": [{"steps": 0, "results": {"random": {"win_rate": 0.5}}}]}
    for broken, why in [
        ("[1, 2", "is not readable JSON"),
        ('{"eval_history": 3}', "is corrupt"),
        (json.dumps(no_interval), "is corrupt"),  # a KeyError traceback before
    ]:
        (tmp_path / "state.json").write_text(broken)
        assert main(["curves", str(tmp_path), "--out", str(tmp_path / "c.png")]) == 2
        assert f"state.json {why}" in capsys.readouterr().err


def test_a_damaged_evaluations_file_beside_sound_ones_is_passed_over(run, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    bad = {"evaluations": [{"steps": 5, "results": {"random": {"win_rate": "x"}}}]}
    (copy / "evaluations.json").write_text(json.dumps(bad))
    with pytest.warns(UserWarning, match=r"evaluations.json is corrupt: .* left out"):
        _, history = run_evaluations(copy)
    assert history == sorted(
        json.loads((run / "summary.json").read_text())["evaluations"], key=lambda e: e["steps"]
    )


def test_curves_out_gets_its_suffix_and_refuses_a_folder(run, tmp_path, capsys):
    assert main(["curves", str(run), "--out", str(tmp_path / "mycurve")]) == 0
    assert f"wrote {tmp_path / 'mycurve.png'}:" in capsys.readouterr().out
    assert (tmp_path / "mycurve.png").is_file()
    assert main(["curves", str(run), "--out", str(tmp_path)]) == 2
    assert "--out" in capsys.readouterr().err
    # written whole (a new file in its place), and an SVG as an SVG
    inode = (tmp_path / "mycurve.png").stat().st_ino
    assert main(["curves", str(run), "--out", str(tmp_path / "mycurve.png")]) == 0
    assert (tmp_path / "mycurve.png").stat().st_ino != inode
    assert main(["curves", str(run), "--out", str(tmp_path / "c.svg")]) == 0
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"num_players": "x"}, "num_players must be an int of at least 2, got 'x'"),
        ({"env_options": [1]}, r"env_options must be a mapping of keys, got \[1\]"),
        ({"evaluation": 5}, "evaluation must be a mapping of keys, got 5"),
        ({"evaluation": {"options": [2]}}, r"evaluation.options must be a mapping of keys"),
    ],
)
def test_a_hand_edited_config_of_the_wrong_kind_is_named_in_one_line(
    run, tmp_path, capsys, changes, message
):
    other = _with_config(run, tmp_path, **changes)
    assert main(["curves", str(other), "--out", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "config.yaml: " in err, err
    assert re.search(message, err), err


def test_a_damaged_file_is_warned_of_once(run, tmp_path, capsys):
    other = _with_config(run, tmp_path)
    (other / "state.json").write_text("{bad")
    with pytest.warns(UserWarning, match="state.json") as warned:
        assert main(["curves", str(other), "--out", str(tmp_path / "c.png")]) == 0
    assert len([w for w in warned if "state.json" in str(w.message)]) == 1
