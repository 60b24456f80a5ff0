"""Agent names with constructor parameters: ``knock.smart(samples=48)`` wherever an agent name
is taken (arena, evaluation, training opponents), the parser, and the errors for bad ones."""

from __future__ import annotations

import numpy as np
import pytest
from test_agent_plugins import plugin, plugin_dir  # noqa: F401 (fixtures)

from rummyzoo.agents import check_parameter
from rummyzoo.agents.arena import run_arena
from rummyzoo.agents.ditch import SmartDitch
from rummyzoo.agents.knock import GreedyKnock, SmartKnock
from rummyzoo.agents.registry import agent_parameters, make_agent, split_agent_name
from rummyzoo.agents.rummy500 import SmartRummy500
from rummyzoo.cli import main as cli
from rummyzoo.training.train import train_from_file


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    "name, base, params",
    [
        ("knock.smart", "knock.smart", {}),
        ("knock.smart()", "knock.smart", {}),
        ("knock.smart(samples=48,)", "knock.smart", {"samples": 48}),  # a trailing comma
        # numbers as written in ASCII without underscores; other text stays text
        ("x(a=1_0, b=\u0661, c=+7)", "x", {"a": "1_0", "b": "\u0661", "c": 7}),
        (" knock.smart ( samples = 48 ) ", "knock.smart", {"samples": 48}),
        (
            "x.y:Z(a=1, b=-2.5, c=1e-3, d=true, e=False, f=null, g='t, u', h=text)",
            "x.y:Z",
            {"a": 1, "b": -2.5, "c": 0.001, "d": True, "e": False, "f": None, "g": "t, u"}
            | {"h": "text"},
        ),
    ],
)
def test_names_split_into_the_agent_and_its_parameters(name, base, params) -> None:
    got_base, got = split_agent_name(name)
    assert got_base == base
    assert got == params
    assert [type(v) for v in got.values()] == [type(v) for v in params.values()]


@pytest.mark.parametrize(
    "name, message",
    [
        ("knock.smart(samples=1", "parameters go in one pair of parentheses"),
        ("knock.smart)", "parameters go in one pair of parentheses"),
        ("knock.smart(a=(1))", "parameters go in one pair of parentheses"),
        ("(samples=1)", "parameters go in one pair of parentheses"),
        ("knock.smart(samples)", "'samples' is not key=value"),
        ("knock.smart(samples=)", "'samples=' is not key=value"),
        ("knock.smart(1x=2)", "'1x=2' is not key=value"),
        ("knock.smart(samples=1,,)", "'' is not key=value"),
        ("knock.smart(samples=1, samples=2)", "parameter 'samples' is given twice"),
    ],
)
def test_malformed_parameters_are_refused(name, message) -> None:
    with pytest.raises(ValueError) as caught:
        make_agent(name, "knock_rummy", 2)
    assert str(caught.value).startswith(f"agent {name!r}: ")
    assert message in str(caught.value)


# ------------------------------------------------------------------ building
def test_heuristics_are_built_with_their_parameters_and_named_by_the_whole_name() -> None:
    smart = make_agent("knock.smart(samples=48, knock_margin=-2)", "knock_rummy", 2)
    assert isinstance(smart, SmartKnock)
    assert (smart.samples, smart.knock_margin, smart.danger_weight) == (48, -2, 2.0)
    assert smart.name == "knock.smart(samples=48, knock_margin=-2)"
    assert SmartKnock.name == "knock.smart"  # the class keeps its own name
    assert make_agent("knock.smart", "knock_rummy", 2).name == "knock.smart"
    assert make_agent("knock.greedy(knock_threshold=5)", "knock_rummy", 3).knock_threshold == 5
    ditch = make_agent("ditch.smart(end_risk=0.1, draw_weight=-0.5)", "ditch_rummy", 2)
    assert (ditch.end_risk, ditch.draw_weight) == (0.1, -0.5)
    r500 = make_agent("rummy500.smart(hold_melds=false, pile_danger=5)", "rummy500", 2)
    assert (r500.hold_melds, r500.pile_danger, r500.keep_weight) == (False, 5, 8.0)


def test_the_parameters_of_each_heuristic_are_listed_with_their_defaults() -> None:
    assert agent_parameters(GreedyKnock) == {"knock_threshold": 10}
    assert agent_parameters(SmartKnock) == {
        "samples": 24,
        "knock_margin": 1.0,
        "knock_limit": 25,
        "danger_weight": 2.0,
        "potential_weight": 0.75,
    }
    assert agent_parameters(SmartDitch) == {"end_risk": 0.02, "draw_weight": 0.0}
    assert set(agent_parameters(SmartRummy500)) == {
        "stock_value",
        "hold_melds",
        "danger_weight",
        "pile_danger",
        "keep_weight",
        "meld_weight",
    }


@pytest.mark.parametrize(
    "name, variant, message",
    [
        (
            "knock.smart(foo=1)",
            "knock_rummy",
            "takes no parameter 'foo'; its parameters (with defaults): samples=24, "
            "knock_margin=1.0, knock_limit=25, danger_weight=2.0, potential_weight=0.75",
        ),
        ("knock.smart(knock_limit=-1)", "knock_rummy", "knock_limit must be an integer >= 0"),
        ("random(seed=1)", "knock_rummy", "takes no parameter 'seed'; its parameters"),
        # the constructor's own first argument: "got multiple values" before
        ("knock.greedy(self=1)", "knock_rummy", "takes no parameter 'self'; its parameters"),
        ("knock.smart(samples=0)", "knock_rummy", "samples must be an integer >= 1, got 0"),
        ("knock.smart(samples=2.5)", "knock_rummy", "samples must be an integer, got 2.5"),
        ("knock.smart(samples=true)", "knock_rummy", "samples must be an integer, got True"),
        ("knock.smart(knock_margin=nan)", "knock_rummy", "must be a finite number, got nan"),
        ("knock.smart(danger_weight=inf)", "knock_rummy", "must be a finite number, got inf"),
        # an int no float holds failed in numpy without naming the parameter
        ("knock.smart(danger_weight=" + "9" * 400 + ")", "knock_rummy", "danger_weight must be a"),
        # too many digits for Python to read as an int: was read as a float (inf)
        ("knock.smart(samples=" + "9" * 5000 + ")", "knock_rummy", "(5002 characters)"),
        ("knock.smart(potential_weight=x)", "knock_rummy", "must be a finite number, got 'x'"),
        ("knock.greedy(knock_threshold=-1)", "knock_rummy", "an integer >= 0, got -1"),
        ("ditch.smart(end_risk=1.5)", "ditch_rummy", "end_risk must be a finite number <= 1"),
        ("ditch.smart(end_risk=-0.1)", "ditch_rummy", "end_risk must be a finite number >= 0"),
        ("ditch.smart(draw_weight=null)", "ditch_rummy", "draw_weight must be a finite number"),
        ("rummy500.smart(hold_melds=1)", "rummy500", "hold_melds must be true or false, got 1"),
        ("rummy500.smart(keep_weight=no)", "rummy500", "keep_weight must be a finite number"),
        ("knock.smart(variant=ditch_rummy)", "knock_rummy", "variant cannot be a parameter"),
        ("knock.smart(options=x)", "knock_rummy", "options cannot be a parameter"),
        ("knock.smrt(samples=1)", "knock_rummy", "unknown agent 'knock.smrt'"),
    ],
)
def test_bad_parameters_name_the_agent_and_the_parameter(name, variant, message) -> None:
    with pytest.raises(ValueError) as caught:
        make_agent(name, variant, 2)
    assert message in str(caught.value)
    assert len(str(caught.value)) < 400  # a huge name is not repeated whole
    if "unknown agent" not in message:
        assert str(caught.value).startswith(f"agent {repr(name)[:20]}")


def test_a_checkpoint_takes_no_parameters(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"a checkpoint takes no parameters"):
        make_agent(f"{tmp_path}/best.rz(samples=2)", "knock_rummy", 2)


def test_a_file_whose_name_holds_parentheses_is_still_a_checkpoint(tmp_path) -> None:
    path = tmp_path / "run (2).rz"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError) as caught:
        make_agent(str(path), "knock_rummy", 2)
    assert "parameters" not in str(caught.value)  # it went to the checkpoint loader


def test_a_missing_checkpoint_with_parentheses_and_an_empty_name_are_said_so(tmp_path) -> None:
    """A checkpoint path that does not exist was read as parameters when it held parentheses
    (``best (2).rz``), and an empty name as the current folder."""
    for name in (str(tmp_path / "best (2).rz"), str(tmp_path / "x(1)" / "best.rz")):
        with pytest.raises(ValueError, match=r"checkpoint .* does not exist$"):
            make_agent(name, "knock_rummy", 2)  # an absolute path: where is in the name
    # a relative one is read from the folder the command runs in (not a config file's)
    with pytest.raises(
        ValueError, match=r"does not exist \(a relative path is read from the folder"
    ):
        make_agent("runs/nosuch/best.rz", "knock_rummy", 2)
    for name in ("", "  "):
        with pytest.raises(ValueError, match="an agent name is empty"):
            make_agent(name, "knock_rummy", 2)


def test_a_name_no_file_can_have_is_still_an_agent_name() -> None:
    long = "knock.greedy(knock_threshold=" + " " * 5000 + "5)"  # too long for a file name
    assert make_agent(long, "knock_rummy", 2).knock_threshold == 5
    with pytest.raises(ValueError, match=r"unknown agent"):
        make_agent("x" * 5000, "knock_rummy", 2)
    with pytest.raises(ValueError, match=r"does not exist"):
        make_agent("x" * 5000 + ".rz", "knock_rummy", 2)


def test_check_parameter_names_the_agent_and_what_the_value_must_be() -> None:
    check_parameter("mine", "depth", 3, "int", low=1, high=5)
    check_parameter("mine", "weight", np.float32(0.5))
    check_parameter("mine", "eager", False, "bool")
    for value, kind, bounds, wanted in [
        (0, "int", (1, 5), "an integer >= 1, got 0"),
        (6, "int", (1, 5), "an integer <= 5, got 6"),
        (2.0, "int", (None, None), "an integer, got 2.0"),
        (True, "number", (None, None), "a finite number, got True"),
        (float("-inf"), "number", (None, None), "a finite number, got -inf"),
        ("yes", "bool", (None, None), "true or false, got 'yes'"),
    ]:
        with pytest.raises(ValueError) as caught:
            check_parameter("mine", "depth", value, kind, *bounds)
        assert str(caught.value) == f"mine: depth must be {wanted}"


def test_own_classes_take_parameters_too(plugin) -> None:  # noqa: F811 (fixture)
    needs = make_agent(f"{plugin}:NeedsDepth(depth=3)", "knock_rummy", 2)
    assert needs.depth == 3
    assert needs.name == f"{plugin}:NeedsDepth(depth=3)"
    # a constructor that takes **kwargs gets any parameter along with the game's keywords
    kwargs = make_agent(f"{plugin}:KwargsOnly(level=2, style=calm)", "knock_rummy", 2).kwargs
    assert kwargs == {
        "variant": "knock_rummy",
        "num_players": 2,
        "options": {},
        "level": 2,
        "style": "calm",
    }
    with pytest.raises(ValueError, match=r"NoArguments\(depth=3\)' takes no parameter 'depth'"):
        make_agent(f"{plugin}:NoArguments(depth=3)", "knock_rummy", 2)
    with pytest.raises(
        ValueError,
        match=r"requires depth; give it in parentheses after the agent's name \(depth=\.\.\.\)",
    ):
        make_agent(f"{plugin}:NeedsDepth", "knock_rummy", 2)


# ------------------------------------------------------------------ playing
def test_a_parameter_changes_the_play_and_its_default_does_not() -> None:
    """The same deals: ditch.smart with its defaults spelt out plays as ditch.smart does,
    with another draw weight it does not."""

    def points(agent: str) -> np.ndarray:
        result = run_arena(
            "ditch_rummy", 2, [agent, "ditch.greedy"], deals=12, seed=4, options={}, workers=1
        )
        return result.points

    plain = points("ditch.smart")
    assert np.array_equal(points("ditch.smart(end_risk=0.02, draw_weight=0)"), plain)
    assert not np.array_equal(points("ditch.smart(draw_weight=1)"), plain)


def test_two_settings_of_one_heuristic_meet_in_the_arena_on_worker_processes() -> None:
    agents = ["knock.smart", "knock.smart(knock_margin=30)"]
    serial = run_arena("knock_rummy", 2, agents, deals=4, seed=9, workers=1)
    parallel = run_arena("knock_rummy", 2, agents, deals=4, seed=9, workers=2)
    assert serial.labels == agents
    assert np.array_equal(serial.points, parallel.points)
    assert not np.array_equal(serial.points[:, 0], serial.points[:, 1])


def test_cli_arena_takes_parameters_and_refuses_bad_ones_in_one_line(capsys) -> None:
    argv = ["arena", "knock_rummy", "--deals", "2", "--workers", "1", "--agents", "random"]
    assert cli.main([*argv, "knock.greedy(knock_threshold=20)"]) == 0
    assert "knock.greedy(knock_threshold=20)" in capsys.readouterr().out
    assert cli.main([*argv, "knock.greedy(knock_threshold=-3)"]) == 2
    err = capsys.readouterr().err.strip()
    assert "knock_threshold must be an integer >= 0, got -3" in err
    assert len(err.splitlines()) == 1


def test_training_plays_against_a_parameterized_opponent(tmp_path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "variant: knock_rummy\nnum_players: 2\nn_timesteps: 64\nn_envs: 1\n"
        "hyperparams: {n_steps: 32, batch_size: 32}\n"
        "opponents: [{name: 'knock.greedy(knock_threshold=20)'}]\n"
        "evaluation: {opponents: ['knock.smart(samples=4)'], deals: 1}\n"
    )
    run = tmp_path / "run"
    train_from_file(str(config), [], str(run), ["test"], progress="off")
    assert (run / "checkpoints" / "last.rz").is_file()


@pytest.mark.parametrize("name", ["random", "knock.greedy", "knock.smart(samples=8)"])
def test_an_unknown_variant_is_named_whatever_the_agent(name) -> None:
    with pytest.raises(ValueError, match=r"^unknown variant 'bogus'; variants: ditch_rummy, "):
        make_agent(name, "bogus", 2)


def test_a_name_that_yaml_split_at_its_comma_is_told_to_be_quoted() -> None:
    from pathlib import Path

    from rummyzoo.training.config import ConfigLoadError, load_config

    smoke = Path(__file__).resolve().parent.parent / "configs" / "smoke_ppo.yaml"
    flow = "evaluation.opponents=[knock.smart(samples=8, knock_margin=2)]"
    with pytest.raises(ConfigLoadError, match=r"quote a name whose parameters hold a comma"):
        load_config(smoke, [flow])
    quoted = "evaluation.opponents=['knock.smart(samples=8, knock_margin=2)']"
    assert load_config(smoke, [quoted]).evaluation.opponents == [
        "knock.smart(samples=8, knock_margin=2)"
    ]
