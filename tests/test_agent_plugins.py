"""Agents from outside the package: ``package.module:ClassName`` names, ``rummyzoo.agents`` entry
points, their errors, and the README example run for real."""

from __future__ import annotations

import importlib.metadata
import json
import re
import shlex
import sys
import textwrap
import time
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest

from rummyzoo.agents import registry
from rummyzoo.agents.arena import run_arena
from rummyzoo.agents.random_agent import RandomPolicy
from rummyzoo.agents.registry import agent_names, make_agent
from rummyzoo.cli import main as cli

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

README = Path(__file__).resolve().parents[1] / "README.md"

PLUGIN_SOURCE = """
import numpy as np

from rummyzoo.agents.base import BasePolicy


class CountingAgent:
    '''Plays the lowest legal action and records what it was given.'''

    name = "counting"
    variants = ("knock_rummy", "ditch_rummy")
    built = []
    resets = []
    calls = 0

    def __init__(self, variant, num_players, options):
        CountingAgent.built.append((variant, num_players, options))

    def reset(self, seat=None):
        CountingAgent.resets.append(seat)

    def act(self, observation, action_mask, rng):
        assert isinstance(rng, np.random.Generator)
        CountingAgent.calls += 1
        return int(np.flatnonzero(action_mask)[0])


class NoArguments(BasePolicy):
    name = "no-arguments"

    def __init__(self):
        self.made = True

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[0])


class OnlyVariant(NoArguments):
    def __init__(self, variant):
        self.variant = variant


class KwargsOnly(NoArguments):
    def __init__(self, **kwargs):
        self.kwargs = kwargs


class NeedsDepth(NoArguments):
    def __init__(self, depth, variant="knock_rummy"):
        self.depth = depth


class DitchOnly(NoArguments):
    variants = ("ditch_rummy",)


class NoAct:
    name = "no-act"

    def reset(self, seat=None):
        pass


class NoName:
    def act(self, observation, action_mask, rng):
        return 0

    def reset(self, seat=None):
        pass


class ActNotCallable:
    name = "bad"
    act = 3

    def reset(self, seat=None):
        pass


def not_a_class():
    return None
"""


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A folder on ``sys.path``; ``write(name, source)`` adds a module, removed again after."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: list[str] = []

    def write(name: str, source: str) -> str:
        path = tmp_path.joinpath(*name.split("."))
        for parent in path.relative_to(tmp_path).parents:
            if parent != Path("."):
                tmp_path.joinpath(parent).mkdir(exist_ok=True)
                tmp_path.joinpath(parent, "__init__.py").touch()
        path.with_suffix(".py").write_text(textwrap.dedent(source))
        written.append(name)
        importlib.invalidate_caches()
        return name

    yield write
    tops = {name.split(".")[0] for name in written}
    for name in [m for m in sys.modules if m.split(".")[0] in tops]:
        del sys.modules[name]


@pytest.fixture
def plugin(plugin_dir) -> str:
    """The module name of :data:`PLUGIN_SOURCE` (imported afresh in each test)."""
    return plugin_dir("rz_test_plugins", PLUGIN_SOURCE)


def fake_entry_points(monkeypatch, *points: tuple[str, str]) -> None:
    """Make the registry see these ``(name, "module:Class")`` entry points of the group."""
    eps = [
        importlib.metadata.EntryPoint(name=name, value=value, group="rummyzoo.agents")
        for name, value in points
    ]

    def entry_points(**selection):
        assert selection == {"group": "rummyzoo.agents"}
        return importlib.metadata.EntryPoints(eps)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def readme_section() -> str:
    text = README.read_text()
    start = text.index("### Your own agents")
    end = text.index("\n##", start + 1)
    return text[start:end]


def readme_block(language: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", readme_section(), flags=re.S)
    assert len(blocks) == 1, f"expected one {language} block in 'Your own agents'"
    return blocks[0]


# ------------------------------------------------------------------ module:Class
def test_module_class_plays_arena_deals_against_random(plugin) -> None:
    result = run_arena("knock_rummy", 2, [f"{plugin}:CountingAgent", "random"], deals=3, seed=5)
    agent = sys.modules[plugin].CountingAgent
    assert result.names == [f"{plugin}:CountingAgent", "random"]
    assert result.games == 6  # 3 deals x 2 seatings
    assert agent.built == [("knock_rummy", 2, {})]  # one instance, built with the keywords
    assert sorted(set(agent.resets)) == [0, 1]  # it sat in both seats
    assert len(agent.resets) == result.games
    assert 0 < agent.calls < int(result.decisions.sum())  # the random agent made the rest
    assert (result.seat_agents == 0).sum() == result.games
    assert np.isfinite(result.points).all() and result.hands.min() >= 1


def test_module_class_plays_in_worker_processes(plugin) -> None:
    name = f"{plugin}:CountingAgent"
    serial = run_arena("knock_rummy", 2, [name, "random"], deals=2, seed=3, workers=1)
    parallel = run_arena("knock_rummy", 2, [name, "random"], deals=2, seed=3, workers=2)
    assert np.array_equal(serial.points, parallel.points)
    assert np.array_equal(serial.decisions, parallel.decisions)


FAILING_SOURCE = """
import os

import numpy as np

from rummyzoo.agents.base import BasePolicy


class Failing(BasePolicy):
    name = "failing"

    def act(self, observation, action_mask, rng):
        raise ValueError("my bug")


class FailingRuntime(Failing):
    def act(self, observation, action_mask, rng):
        raise RuntimeError("my bug")


class Exiting(Failing):
    def act(self, observation, action_mask, rng):
        import sys

        sys.exit(3)


class FailingBatch(Failing):
    # decides for many games at once, and fails there
    uses_rng = False

    def act_batch(self, observations, masks, rng):
        raise KeyError("batch bug")


class FailingLater(FailingBatch):
    # decides for many games at once, in both seats, and fails at its call number fail_at
    calls = 0
    fail_at = 1

    def act_batch(self, observations, masks, rng):
        type(self).calls += 1
        if type(self).calls == type(self).fail_at:
            raise KeyError("later bug")
        choose = np.random.default_rng(type(self).calls).choice
        return np.asarray([choose(np.flatnonzero(m)) for m in masks])


class Exits(Failing):
    def act(self, observation, action_mask, rng):
        raise SystemExit(0)


class Dies(Failing):
    def act(self, observation, action_mask, rng):
        os._exit(3)


class FailsToStart(BasePolicy):
    name = "fails-to-start"

    def reset(self, seat=None):
        raise LookupError("reset bug")

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[0])
"""


UNPICKLABLE_SOURCE = """

class BadError(Exception):
    def __init__(self, code, text):  # pickling rebuilds it from its message alone
        super().__init__(text)


class Unpicklable(Failing):
    def act(self, observation, action_mask, rng):
        raise BadError(1, "cannot cross")


class CodedError(ValueError):
    def __init__(self, code):  # pickling rebuilds it from its message, which it words again
        super().__init__(f"failed with code {code}")


class Coded(Failing):
    def act(self, observation, action_mask, rng):
        raise CodedError(7)


class SecondGameFails(BasePolicy):
    games = 0

    def reset(self, seat=None):  # reset 1: the game's build, 2: the env's reset()
        type(self).games += 1
        if type(self).games == 3:
            raise RuntimeError("its second game")

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[0])
"""


@pytest.mark.parametrize("workers, batch", [(1, 1), (1, 64), (2, 1)])
def test_an_agent_that_raises_is_named_in_its_error(plugin_dir, workers, batch) -> None:
    """An error of the agent's own keeps its type and message (and traceback), with a note
    naming the agent and its seat, in this process or a worker, one game at a time or many."""
    module = plugin_dir("rz_failing", FAILING_SOURCE)
    with pytest.raises(ValueError) as raised:
        run_arena(
            "knock_rummy", 2, ["random", f"{module}:Failing"], deals=2, workers=workers,
            batch=batch,
        )  # fmt: skip
    assert str(raised.value) == "my bug"
    (note,) = raised.value.__notes__  # its seat in the first game that asked it
    assert re.fullmatch(
        rf"raised by agent '{module}:Failing' \(seat [01]\) while choosing its action", note
    ), note


@pytest.mark.parametrize("workers, batch", [(1, 1), (1, 64), (2, 1)])
def test_an_agent_whose_reset_raises_is_named(plugin_dir, workers, batch) -> None:
    """An error of the agent's ``reset`` at a game's start names the agent and its seat, as
    one of its ``act`` does (it came without a word of which agent raised it)."""
    module = plugin_dir("rz_failing", FAILING_SOURCE)
    with pytest.raises(LookupError, match="reset bug") as raised:
        run_arena(
            "knock_rummy", 2, ["random", f"{module}:FailsToStart"], deals=2, workers=workers,
            batch=batch,
        )  # fmt: skip
    (note,) = raised.value.__notes__
    assert re.fullmatch(
        rf"raised by agent '{module}:FailsToStart' \(seat [01]\) while starting a game", note
    ), note


def test_a_training_opponent_whose_reset_raises_is_named(plugin_dir, tmp_path) -> None:
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import train

    module = plugin_dir("rz_failing", FAILING_SOURCE)
    for vec_env in ("batched", "dummy"):
        config = load_config(
            Path(__file__).resolve().parent.parent / "configs" / "smoke_ppo.yaml",
            [f"vec_env={vec_env}", f"opponents=[{{name: '{module}:FailsToStart', weight: 1}}]",
             "pretrain=null"],
        )  # fmt: skip
        with pytest.raises(LookupError, match="reset bug") as raised:
            train(config, tmp_path / vec_env, progress="off")
        assert any(
            f"agent '{module}:FailsToStart' (the learner's opponent at seat" in note
            and note.endswith("while starting a game")
            for note in raised.value.__notes__
        ), raised.value.__notes__


def test_an_agent_deciding_for_many_games_that_raises_is_named(plugin_dir) -> None:
    module = plugin_dir("rz_failing", FAILING_SOURCE)
    with pytest.raises(KeyError, match="batch bug") as raised:
        run_arena("knock_rummy", 2, [f"{module}:FailingBatch", "random"], deals=3, batch=64)
    # every game's first step: the agent sits first in the first seating of each deal
    assert raised.value.__notes__ == [
        f"raised by agent '{module}:FailingBatch' (seat 0, deciding for 3 games at once) "
        "while choosing its action"
    ]


def test_an_agent_failing_in_games_where_it_sits_in_several_seats_is_named(plugin_dir) -> None:
    """Its note names it (not whoever sits in the lowest of its seats in its first game)."""
    module = plugin_dir("rz_failing", FAILING_SOURCE)
    agents = ["random", f"{module}:FailingLater"]
    notes = []
    for fail_at in range(1, 7):  # its later calls decide in both seats at once
        agent = importlib.import_module(module).FailingLater
        agent.calls, agent.fail_at = 0, fail_at
        with pytest.raises(KeyError, match="later bug") as raised:
            run_arena("ditch_rummy", 2, agents, deals=4, batch=64, options={"target_score": None})
        notes += raised.value.__notes__
    assert any("seats 0, 1" in note for note in notes), notes
    for note in notes:
        assert note.startswith(f"raised by agent '{module}:FailingLater' (seat"), note


def test_arena_workers_start_again_after_a_worker_died_and_refuse_use_once_closed(
    plugin_dir,
) -> None:
    from rummyzoo.agents.arena import ArenaWorkers
    from rummyzoo.envs.workers import ProcessDied

    module = plugin_dir("rz_failing", FAILING_SOURCE)
    with ArenaWorkers(2) as pool:
        with pytest.raises(ProcessDied, match="a worker process of the arena ended under it"):
            run_arena("knock_rummy", 2, ["random", f"{module}:Dies"], deals=4, pool=pool)
        # the next run gets new processes and plays as one process does
        result = run_arena("knock_rummy", 2, ["random", "knock.greedy"], deals=4, pool=pool)
    alone = run_arena("knock_rummy", 2, ["random", "knock.greedy"], deals=4, workers=1)
    assert np.array_equal(result.points, alone.points)
    with pytest.raises(ValueError, match="these arena worker processes were closed"):
        run_arena("knock_rummy", 2, ["random", "knock.greedy"], deals=4, pool=pool)


OPPONENT_NOTE = (
    r"raised by agent '{}:Failing' \(the learner's opponent at seat [01]\) while choosing its "
    r"action"
)


@pytest.mark.parametrize("learner_seat", [0, 1])  # 1: it fails as the games are built
@pytest.mark.parametrize("vec_env", ["batched", "dummy", "subproc"])
def test_an_opponent_that_raises_in_training_is_named(plugin_dir, vec_env, learner_seat) -> None:
    """Every training env names an opponent whose own code failed, as the config names it (its
    error kept); one game a process (``subproc``) raises it in the learner's process, saying
    which game, with the game's own traceback as its cause, where it used to end the game's
    process and leave a bare ``EOFError``."""
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env

    module = plugin_dir("rz_failing", FAILING_SOURCE)
    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "knock_bench.yaml",
        [f"vec_env={vec_env}", "n_envs=2", f"learner_seat={learner_seat}",
         f"opponents=[{{name: '{module}:Failing', weight: 1}}]"],
    )  # fmt: skip
    env = None
    try:
        with pytest.raises(ValueError) as raised:
            env = build_vec_env(config)  # builds and resets each game
            env.reset()
            for _ in range(3):
                masks = env.env_method("action_masks")
                env.step(np.asarray([int(np.flatnonzero(m)[0]) for m in masks]))
    finally:
        if env is not None:
            env.close()
    assert str(raised.value) == "my bug"
    note, *where = raised.value.__notes__
    assert re.fullmatch(OPPONENT_NOTE.format(module), note), note
    if vec_env == "subproc":
        assert_from_a_game_process(raised.value, 'raise ValueError("my bug")', where)
    else:
        assert where == []


def assert_from_a_game_process(exc: BaseException, line: str, notes: list[str]) -> None:
    """``exc`` came from a game of a subproc env: its note names the game, its cause is the
    traceback of that game's process, which shows ``line``."""
    (game_note,) = notes
    assert re.fullmatch(
        r"in training game [01], which vec_env: subproc plays in its own process", game_note
    ), game_note
    cause = exc.__cause__
    assert type(cause).__name__ == "ChildTraceback" and line in str(cause), cause


def test_a_subproc_training_env_trains_and_carries_an_error_that_does_not_pickle(
    plugin_dir, tmp_path
) -> None:
    """One game a process trains as the one-process env does; an exception whose type cannot
    cross the processes comes back as a RuntimeError with its type, text and notes."""
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env, train

    module = plugin_dir("rz_failing", FAILING_SOURCE + UNPICKLABLE_SOURCE)
    configs = Path(__file__).resolve().parent.parent / "configs"
    base = ["vec_env=subproc", "n_envs=2", "learner_seat=1"]
    # with self-play: its snapshots reach every game's process, which plays games against them
    summary = train(load_config(configs / "smoke_ppo.yaml", base), tmp_path / "run", progress="off")
    assert summary["steps"] >= 256
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["pool"] and state["pool_results"]  # games of the learner against a snapshot
    for agent, kind, line in [
        ("Unpicklable", RuntimeError, 'raise BadError(1, "cannot cross")'),
        ("Coded", ValueError, "raise CodedError(7)"),
    ]:
        config = load_config(
            configs / "knock_bench.yaml",
            [*base, f"opponents=[{{name: '{module}:{agent}', weight: 1}}]"],
        )
        with pytest.raises(kind) as raised:
            build_vec_env(config)
        assert type(raised.value) is kind  # its nearest built-in type
        assert str(raised.value) == (
            "BadError: cannot cross" if agent == "Unpicklable" else "CodedError: failed with code 7"
        )
        note, *where = raised.value.__notes__
        assert note.startswith(f"raised by agent '{module}:{agent}'"), note
        assert_from_a_game_process(raised.value, line, where)


def test_a_subproc_game_that_fails_as_it_starts_its_next_game_raises_at_once(plugin_dir) -> None:
    """A failure in the reset that follows a game's end (inside the game's process, in the same
    step) is raised by that step, not by the next."""
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env

    module = plugin_dir("rz_failing", FAILING_SOURCE + UNPICKLABLE_SOURCE)
    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "knock_bench.yaml",
        ["vec_env=subproc", "n_envs=2", "env_options.target_score=null",
         f"opponents=[{{name: '{module}:SecondGameFails', weight: 1}}]"],
    )  # fmt: skip
    env = build_vec_env(config)
    try:
        env.reset()
        with pytest.raises(RuntimeError, match="its second game") as raised:
            for _ in range(200):  # single hands end within a few decisions
                masks = env.env_method("action_masks")
                _, _, dones, _ = env.step(np.asarray([int(np.flatnonzero(m)[0]) for m in masks]))
                assert not dones.any()  # the step that ends a game raises
    finally:
        env.close()
    note, *where = raised.value.__notes__
    assert re.fullmatch(
        rf"raised by agent '{module}:SecondGameFails' \(the learner's opponent at seat [01]\) "
        "while starting a game",
        note,
    ), note
    assert_from_a_game_process(raised.value, 'raise RuntimeError("its second game")', where)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(
    "agent, message, line",
    [
        ("Failing", "my bug", 'raise ValueError("my bug")'),
        ("FailingRuntime", "my bug", 'raise RuntimeError("my bug")'),
        ("Exiting", r"sys\.exit\(3\) was called", "sys.exit(3)"),
    ],
)
def test_the_cli_names_the_agent_that_raised(plugin_dir, capsys, workers, agent, message, line):
    """An agent's own bug is no error of the command's input: its traceback, down to the
    agent's line, then one line naming the agent; exit 1 (a ValueError was shown as bad input,
    one line and exit 2; an error of another type, or the agent's ``sys.exit()``, as a bare
    traceback without the line)."""
    module = plugin_dir("rz_failing", FAILING_SOURCE)
    argv = ["arena", "knock_rummy", "--agents", "random", f"{module}:{agent}", "--deals", "4"]
    assert cli.main([*argv, "--workers", str(workers), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    last = err.splitlines()[-1]
    assert re.fullmatch(
        rf"rummyzoo arena: error: an agent failed: {message} \(raised by agent "
        rf"'{module}:{agent}' \(seat [01]\) while choosing its action\)",
        last,
    ), last
    assert err.startswith("Traceback (most recent call last):") or workers > 1, err
    assert line in err, err  # the agent's own line, from its process


def test_bad_input_stays_one_line_and_exit_2(capsys) -> None:
    argv = ["arena", "knock_rummy", "--agents", "random", "random", "--deals", "0"]
    assert cli.main([*argv, "--workers", "1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err


def test_constructor_gets_the_keywords_it_takes(plugin) -> None:
    options = {"max_turns": 40}
    counting = make_agent(f"{plugin}:CountingAgent", "knock_rummy", 3, options)
    assert sys.modules[plugin].CountingAgent.built[-1] == ("knock_rummy", 3, options)
    assert counting.name == "counting"
    assert make_agent(f"{plugin}:NoArguments", "rummy500", 2).made is True
    assert make_agent(f"{plugin}:OnlyVariant", "ditch_rummy", 2).variant == "ditch_rummy"
    kwargs = make_agent(f"{plugin}:KwargsOnly", "knock_rummy", 4, options).kwargs
    assert kwargs == {"variant": "knock_rummy", "num_players": 4, "options": options}


def test_constructor_with_other_required_arguments_is_refused(plugin) -> None:
    with pytest.raises(ValueError, match=r"NeedsDepth' cannot be built.*requires depth"):
        make_agent(f"{plugin}:NeedsDepth", "knock_rummy", 2)


def test_declared_variants_are_enforced(plugin) -> None:
    with pytest.raises(ValueError, match=r"plays ditch_rummy, not knock_rummy; agents for"):
        make_agent(f"{plugin}:DitchOnly", "knock_rummy", 2)
    with pytest.raises(ValueError, match=r"plays knock_rummy, ditch_rummy, not rummy500"):
        make_agent(f"{plugin}:CountingAgent", "rummy500", 2)
    assert make_agent(f"{plugin}:DitchOnly", "ditch_rummy", 2).made is True


# ------------------------------------------------------------------ errors
def test_missing_module_names_the_module_and_the_import_error() -> None:
    with pytest.raises(ValueError) as info:
        make_agent("rz_no_such_pkg.strategies:Mine", "knock_rummy", 2)
    message = str(info.value)
    assert "cannot import module 'rz_no_such_pkg.strategies'" in message
    assert "ModuleNotFoundError: No module named 'rz_no_such_pkg'" in message
    assert "PYTHONPATH" in message


def test_missing_dependency_of_the_module_is_told_apart(plugin_dir) -> None:
    module = plugin_dir("rz_needs_dep", "import rz_absent_dependency\n")
    with pytest.raises(ValueError) as info:
        make_agent(f"{module}:Mine", "knock_rummy", 2)
    message = str(info.value)
    assert "cannot import module 'rz_needs_dep': a module it imports is missing" in message
    assert "No module named 'rz_absent_dependency'" in message


def test_module_that_fails_on_import(plugin_dir) -> None:
    module = plugin_dir("rz_broken", "raise RuntimeError('boom at import')\n")
    with pytest.raises(ValueError, match=r"module 'rz_broken'.*RuntimeError: boom at import"):
        make_agent(f"{module}:Mine", "knock_rummy", 2)


def test_missing_class_lists_the_classes_the_module_defines(plugin) -> None:
    with pytest.raises(ValueError) as info:
        make_agent(f"{plugin}:Missing", "knock_rummy", 2)
    message = str(info.value)
    assert f"module '{plugin}' has no class 'Missing'" in message
    defined = message.split("classes defined there: ")[1].split(", ")
    assert "CountingAgent" in defined and "NoAct" in defined
    assert "BasePolicy" not in defined  # imported, not defined there


def test_non_class_is_refused(plugin) -> None:
    with pytest.raises(ValueError, match=r"not_a_class is a function, not a class"):
        make_agent(f"{plugin}:not_a_class", "knock_rummy", 2)


@pytest.mark.parametrize(
    ("cls", "missing"),
    [("NoAct", "lacks act;"), ("NoName", "lacks name;"), ("ActNotCallable", "act (not callable)")],
)
def test_not_a_policy_says_what_is_missing(plugin, cls, missing) -> None:
    with pytest.raises(ValueError) as info:
        make_agent(f"{plugin}:{cls}", "knock_rummy", 2)
    message = str(info.value)
    assert f"agent '{plugin}:{cls}' is not a Policy" in message
    assert missing in message


def test_unknown_name_mentions_module_class() -> None:
    with pytest.raises(ValueError, match=r"unknown agent 'nobody'.*package\.module:ClassName"):
        make_agent("nobody", "knock_rummy", 2)


def test_cli_reports_a_missing_module_in_one_line(capsys) -> None:
    argv = ["arena", "knock_rummy", "--agents", "random", "rz_nowhere:Agent", "--deals", "1"]
    assert cli.main([*argv, "--workers", "1", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rummyzoo arena: error: cannot import module 'rz_nowhere'")
    assert len(err.splitlines()) == 1


# ------------------------------------------------------------------ entry points
def test_entry_point_agent_is_usable_by_name_and_listed(plugin, monkeypatch) -> None:
    fake_entry_points(monkeypatch, ("counting", f"{plugin}:CountingAgent"))
    agent = make_agent("counting", "knock_rummy", 2)
    assert type(agent).__name__ == "CountingAgent"
    assert type(agent).__module__ == plugin
    assert "counting" in agent_names("knock_rummy")
    assert "counting" in agent_names()
    assert "counting" not in agent_names("rummy500")  # its variants leave rummy500 out
    result = run_arena("knock_rummy", 2, ["random", "counting"], deals=2, seed=1)
    assert result.names == ["random", "counting"]
    assert sys.modules[plugin].CountingAgent.calls > 0


def test_entry_point_refuses_other_variants(plugin, monkeypatch) -> None:
    fake_entry_points(monkeypatch, ("ditcher", f"{plugin}:DitchOnly"))
    with pytest.raises(ValueError, match=r"agent 'ditcher' plays ditch_rummy, not knock_rummy"):
        make_agent("ditcher", "knock_rummy", 2)


def test_entry_point_that_fails_to_load(monkeypatch) -> None:
    fake_entry_points(monkeypatch, ("broken", "rz_gone_module:Agent"))
    assert "broken" in agent_names("knock_rummy")  # listed; using it says what is wrong
    with pytest.raises(ValueError) as info:
        make_agent("broken", "knock_rummy", 2)
    message = str(info.value)
    assert "entry point 'broken' = 'rz_gone_module:Agent' (group rummyzoo.agents)" in message
    assert "failed to load: cannot import module 'rz_gone_module'" in message


def test_entry_point_naming_a_missing_class(plugin, monkeypatch) -> None:
    fake_entry_points(monkeypatch, ("ghost", f"{plugin}:Ghost"))
    with pytest.raises(ValueError, match=rf"'ghost'.*failed to load: module '{plugin}' has no"):
        make_agent("ghost", "knock_rummy", 2)


def test_entry_point_without_a_class(monkeypatch) -> None:
    fake_entry_points(monkeypatch, ("modonly", "some_module"))
    with pytest.raises(ValueError, match=r"'modonly'.*its value must be 'module:Class'"):
        make_agent("modonly", "knock_rummy", 2)


def test_entry_point_that_is_not_a_policy(plugin, monkeypatch) -> None:
    fake_entry_points(monkeypatch, ("noact", f"{plugin}:NoAct"))
    with pytest.raises(ValueError, match=r"agent 'noact' \(entry point .*\) is not a Policy"):
        make_agent("noact", "knock_rummy", 2)


def test_entry_point_clashing_with_a_built_in_warns_and_the_built_in_wins(
    plugin, monkeypatch
) -> None:
    fake_entry_points(monkeypatch, ("random", f"{plugin}:CountingAgent"))
    with pytest.warns(UserWarning, match=r"entry point 'random'.*the built-in 'random' is used"):
        agent = make_agent("random", "knock_rummy", 2)
    assert type(agent) is RandomPolicy
    with pytest.warns(UserWarning, match="built-in"):
        names = agent_names("knock_rummy")
    assert names.count("random") == 1
    assert plugin not in sys.modules  # the hidden entry point is never loaded


def test_no_entry_points_leaves_the_built_ins(monkeypatch) -> None:
    fake_entry_points(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert agent_names() == list(registry.AGENTS)


# ------------------------------------------------------------------ the README example
@pytest.fixture
def readme_package(plugin_dir) -> str:
    """``mypkg.mymod`` written from the README's Python block."""
    code = readme_block("python")
    first = code.splitlines()[0]
    assert first == "# mypkg/mymod.py"
    return plugin_dir("mypkg.mymod", code)


def test_readme_example_plays_in_the_arena(readme_package) -> None:
    result = run_arena("knock_rummy", 2, ["random", f"{readme_package}:MyAgent"], deals=3)
    assert result.games == 6
    assert result.labels == ["random", "mypkg.mymod:MyAgent"]
    agent = make_agent(f"{readme_package}:MyAgent", "knock_rummy", 3)
    assert agent.name == "my-agent" and agent.num_players == 3
    with pytest.raises(ValueError, match="plays knock_rummy, not rummy500"):
        make_agent(f"{readme_package}:MyAgent", "rummy500", 2)


def test_readme_arena_command_runs(readme_package, tmp_path, monkeypatch, capsys) -> None:
    command = readme_block("bash").strip()
    env, program, *argv = shlex.split(command)
    assert (env, program) == ("PYTHONPATH=.", "rummyzoo")
    argv[argv.index("--deals") + 1] = "2"
    monkeypatch.chdir(tmp_path)
    assert cli.main([*argv, "--workers", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mypkg.mymod:MyAgent" in out and "4 games" in out


def test_readme_entry_point_table_registers_the_example(readme_package, monkeypatch) -> None:
    table = tomllib.loads(readme_block("toml"))["project"]["entry-points"]["rummyzoo.agents"]
    fake_entry_points(monkeypatch, *table.items())
    (name,) = table
    assert name in agent_names("knock_rummy")
    assert make_agent(name, "knock_rummy", 2).name == "my-agent"


def test_entry_point_registered_twice_keeps_the_first_and_warns(plugin, monkeypatch) -> None:
    fake_entry_points(
        monkeypatch, ("twice", f"{plugin}:NoArguments"), ("twice", f"{plugin}:KwargsOnly")
    )
    with pytest.warns(UserWarning, match=rf"'twice' is registered twice.*{plugin}:KwargsOnly'"):
        agent = make_agent("twice", "knock_rummy", 2)
    assert type(agent).__name__ == "NoArguments"


def test_a_run_that_fails_before_rl_stops_its_game_processes(plugin_dir, tmp_path) -> None:
    """A run whose warm start fails (its teacher raises) closes its training env: the games'
    own processes (``vec_env: subproc``) stop with it, where they used to live on."""
    import multiprocessing

    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import train

    module = plugin_dir("rz_failing", FAILING_SOURCE)
    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "knock_bench.yaml",
        ["vec_env=subproc", "n_envs=2", f"pretrain={{teacher: '{module}:Failing', decisions: 64}}"],
    )
    before = set(multiprocessing.active_children())
    with pytest.raises(ValueError, match="my bug"):
        train(config, tmp_path / "run", progress="off")
    assert set(multiprocessing.active_children()) <= before


def _subproc_env_with_game_1_killed() -> tuple[object, list[object]]:
    """A ``vec_env: subproc`` training env of 2 games whose game 1's process was killed."""
    import os
    import signal

    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env

    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "knock_bench.yaml",
        ["vec_env=subproc", "n_envs=2"],
    )
    env = build_vec_env(config)
    env.reset()
    processes = env.venv.venv.processes  # VecMonitor, RaiseFailures, SubprocVecEnv
    os.kill(processes[1].pid, signal.SIGKILL)
    processes[1].join()
    return env, processes


def test_a_subproc_env_closes_when_a_game_process_has_ended() -> None:
    """Ctrl-C ends the games' processes as well as the learner's, whose clean-up then closes
    the env: that close joins them and raises nothing, where it used to raise a broken pipe
    (or EOFError) in place of the interrupt."""
    env, processes = _subproc_env_with_game_1_killed()
    env.close()
    assert not any(p.is_alive() for p in processes)


@pytest.mark.parametrize("call", ["env_method", "step"])
def test_a_subproc_game_process_killed_under_the_run_is_named(call) -> None:
    """A game's process killed mid-run gave a bare BrokenPipeError, which the command took for
    the reader of stdout gone (exit 141, not a word), or a 49-line traceback naming no game."""
    from rummyzoo.envs.workers import ProcessDied

    env, processes = _subproc_env_with_game_1_killed()
    with pytest.raises(ProcessDied, match=r"the process of training game 1 died \(exit code -9\)"):
        if call == "env_method":
            env.env_method("action_masks")
        else:
            env.step(np.zeros(2, dtype=np.int64))
    assert not any(p.is_alive() for p in processes)


def test_a_subproc_game_process_killed_in_the_middle_of_a_step_is_named_without_a_hang() -> None:
    """Killed after the step was sent to it, while another game had answered: closing the
    env the usual way waited for that answer again, for ever."""
    import os
    import signal

    from rummyzoo.envs.workers import ProcessDied
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env

    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "knock_bench.yaml",
        ["vec_env=subproc", "n_envs=2"],
    )
    env = build_vec_env(config)
    env.reset()
    processes = env.venv.venv.processes
    os.kill(processes[1].pid, signal.SIGSTOP)  # it takes the step and never answers
    env.step_async(np.zeros(2, dtype=np.int64))

    class Hung(Exception):  # not an OSError, which the env's close takes for a dead pipe
        pass

    def hung(signum, frame):
        raise Hung("the step hung")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    began = time.monotonic()
    try:
        os.kill(processes[1].pid, signal.SIGKILL)
        with pytest.raises(ProcessDied, match=r"training game 1 died \(exit code -9\)"):
            env.step_wait()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - began < 10
    assert not any(p.is_alive() for p in processes)
    env.close()  # closed already: nothing to wait for


def test_the_command_says_a_dead_process_in_one_line(monkeypatch, capsys) -> None:
    from rummyzoo.cli import main as cli_main
    from rummyzoo.envs.workers import ProcessDied

    def dies(args):
        raise ProcessDied("helper process 1 died (exit code -9)")

    parser_run = cli_main.main
    monkeypatch.setattr("rummyzoo.cli.demo.run", dies)
    assert parser_run(["demo", "knock_rummy"]) == 1
    err = capsys.readouterr().err
    assert err == "rummyzoo demo: error: helper process 1 died (exit code -9)\n"


@pytest.mark.parametrize("vec_env", ["dummy", "subproc"])
def test_an_opponent_that_calls_sys_exit_is_an_error_naming_it(plugin_dir, vec_env) -> None:
    """An agent's ``sys.exit(0)`` ended a run without a word and with status 0 (in the game's
    own process: with a bare ``EOFError``); it is now an error that names the agent."""
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env

    module = plugin_dir("rz_failing", FAILING_SOURCE)
    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "knock_bench.yaml",
        [f"vec_env={vec_env}", "n_envs=2", "learner_seat=1",
         f"opponents=[{{name: '{module}:Exits', weight: 1}}]"],
    )  # fmt: skip
    with pytest.raises(RuntimeError) as raised:
        build_vec_env(config).close()
    assert str(raised.value) == "sys.exit(0) was called"
    assert raised.value.__notes__[0] == (
        f"raised by agent '{module}:Exits' (the learner's opponent at seat 0) while choosing its "
        "action"
    )


def test_set_attr_reaches_the_game_in_its_own_process() -> None:
    """stable-baselines3's ``set_attr`` sets on the outermost wrapper of a game in its own
    process; the wrapper that carries its errors passes it on to the game, as without it."""
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env

    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "knock_bench.yaml",
        ["vec_env=subproc", "n_envs=2", "learner_seat=1"],
    )
    env = build_vec_env(config)
    try:
        env.set_attr("learner_seat", 0)
        env.reset()
        assert env.get_attr("seat") == [0, 0]  # the games' own seat, drawn at the reset
    finally:
        env.close()


@pytest.mark.parametrize("batch", [1, 64])
def test_an_agent_that_calls_sys_exit_in_the_arena_is_an_error_naming_it(plugin_dir, batch):
    """The arena too: an agent's ``sys.exit(0)`` is an error naming it, where it ended the
    program without a word (one game at a time, and on the vector engine)."""
    module = plugin_dir("rz_failing", FAILING_SOURCE)
    with pytest.raises(RuntimeError) as raised:
        run_arena("knock_rummy", 2, ["random", f"{module}:Exits"], deals=2, batch=batch)
    assert str(raised.value) == "sys.exit(0) was called"
    (note,) = raised.value.__notes__
    assert note.startswith(f"raised by agent '{module}:Exits' (seat "), note


def test_an_exception_that_does_not_pickle_comes_back_from_arena_workers_named(
    plugin_dir,
) -> None:
    """An agent's exception that pickling cannot rebuild broke the arena's whole pool (a
    ``BrokenProcessPool`` naming nobody); it comes back as its nearest built-in type with the
    note naming the agent and its seat, as it does with one process."""
    module = plugin_dir("rz_failing", FAILING_SOURCE + UNPICKLABLE_SOURCE)
    agents = ["random", f"{module}:Unpicklable"]
    with pytest.raises(RuntimeError, match="BadError: cannot cross") as raised:
        run_arena("knock_rummy", 2, agents, deals=4, workers=2)
    assert raised.value.__notes__[0].startswith(f"raised by agent '{module}:Unpicklable' (seat")


def test_an_entry_point_hidden_by_a_built_in_is_warned_of_once(plugin, monkeypatch) -> None:
    """Under Python's default filter a command that names agents in several places (the
    arena's table, its labels, the agents' list) says so once, not once per place."""
    fake_entry_points(
        monkeypatch, ("random", f"{plugin}:CountingAgent"),
        ("twice", f"{plugin}:NoArguments"), ("twice", f"{plugin}:KwargsOnly"),
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        make_agent("random", "knock_rummy", 2)
        make_agent("twice", "knock_rummy", 2)
        agent_names("knock_rummy")
        make_agent("random", "knock_rummy", 4)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2, messages
    assert "the built-in 'random' is used" in messages[0]
    assert "'twice' is registered twice" in messages[1]


STATEFUL_SOURCE = """
import numpy as np

from rummyzoo.agents.base import BasePolicy

EVENTS = []


class Logged(BasePolicy):
    name = "logged"

    def reset(self, seat=None):
        EVENTS.append("reset")

    def act(self, observation, action_mask, rng):
        EVENTS.append("act")
        return int(np.flatnonzero(action_mask)[0])


class BadBaseline(Logged):
    def reset(self, seat=None):
        raise ValueError("baseline reset bug")
"""


def test_opponents_start_the_learners_game_afresh_after_the_duplicate_baseline_plays(
    plugin_dir,
) -> None:
    """The duplicate baseline's game on the same deal is played by the game's own opponents:
    they are reset again before the learner's game (they began it carrying the baseline game's
    state), and an error of the baseline's own names it."""
    from rummyzoo.training.vec_env import BatchedSeatEnv

    module = plugin_dir("rz_stateful", STATEFUL_SOURCE)
    env = BatchedSeatEnv(
        "ditch_rummy", 2, {"target_score": None}, opponents=[f"{module}:Logged"], num_envs=1,
        seed=4, learner_seat=0, duplicate_baseline="ditch.smart",
    )  # fmt: skip
    events = sys.modules[module].EVENTS
    events.clear()
    env.reset()  # the learner acts first: its opponent has not moved in the learner's game
    assert "act" in events and events[-1] == "reset", events  # the baseline's game, then fresh
    env.close()
    env = BatchedSeatEnv(
        "ditch_rummy", 2, {"target_score": None}, opponents=["random"], num_envs=1, seed=4,
        learner_seat=1, duplicate_baseline=f"{module}:BadBaseline",
    )  # fmt: skip
    with pytest.raises(ValueError, match="baseline reset bug") as raised:
        env.reset()
    assert raised.value.__notes__ == [
        f"raised by agent '{module}:BadBaseline' (the duplicate baseline at seat 1) while "
        "starting a game"
    ]


MISBEHAVING_SOURCE = """
import sys

import numpy as np


class MaskWriter:
    '''Marks an illegal action legal in the mask it is given, then plays it.'''

    name = "mask-writer"

    def reset(self, seat=None):
        pass

    def act(self, observation, action_mask, rng):
        illegal = int(np.flatnonzero(action_mask == 0)[0])
        action_mask[illegal] = 1
        return illegal


class MaskUnlocker(MaskWriter):
    '''Sets its mask writeable again first (a plain view of a writeable array allows it).'''

    name = "mask-unlocker"

    def act(self, observation, action_mask, rng):
        action_mask.flags.writeable = True
        return super().act(observation, action_mask, rng)


class ExitsWhenBuilt:
    name = "exits-when-built"

    def __init__(self):
        sys.exit(0)

    def reset(self, seat=None):
        pass

    def act(self, observation, action_mask, rng):
        return 0


class RaisesWhenBuilt(ExitsWhenBuilt):
    def __init__(self):
        raise RuntimeError("my constructor's bug")


class BadVariants:
    name = "bad-variants"
    variants = 5

    def reset(self, seat=None):
        pass

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[0])


class FloatBatch:
    '''Decides for many games at once, its actions floats.'''

    name = "float-batch"
    uses_rng = False

    def reset(self, seat=None):
        pass

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations, action_masks, rng):
        return np.array([np.flatnonzero(m)[0] + 0.7 for m in action_masks])


class NoInit:
    name = "no-init"

    def reset(self, seat=None):
        pass

    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[0])
"""


@pytest.mark.parametrize(
    ("cls", "message"),
    [("MaskWriter", "read-only"), ("MaskUnlocker", "cannot set WRITEABLE flag")],
)
def test_an_agent_cannot_make_an_illegal_action_legal_by_writing_its_mask(plugin_dir, cls, message):
    """The mask an agent gets is the one its action is checked against: written to, an
    illegal action was accepted (500 Rum's first, drawing, decisions: a pass played a thousand
    times). The write is refused now, and so is setting the mask writeable again first; the
    error names the agent."""
    module = plugin_dir("rz_misbehaving", MISBEHAVING_SOURCE)
    with pytest.raises(ValueError, match=message) as raised:
        run_arena("rummy500", 2, ["random", f"{module}:{cls}"], deals=2, workers=1)
    assert any(f"agent '{module}:{cls}'" in n for n in raised.value.__notes__)


@pytest.mark.parametrize(
    ("cls", "error", "message"),
    [("ExitsWhenBuilt", RuntimeError, "sys.exit(0) was called"),
     ("RaisesWhenBuilt", RuntimeError, "my constructor's bug")],
)  # fmt: skip
def test_an_agent_that_fails_as_it_is_built_is_named(plugin_dir, cls, error, message) -> None:
    """Its sys.exit() ended the arena with status 0, nothing played; another error came
    without the agent's name."""
    module = plugin_dir("rz_misbehaving", MISBEHAVING_SOURCE)
    with pytest.raises(error) as raised:
        make_agent(f"{module}:{cls}", "knock_rummy", 2)
    assert str(raised.value) == message
    (note,) = raised.value.__notes__
    assert note == f"raised by agent '{module}:{cls}' (knock_rummy, 2 players) while being built"


def test_a_plugin_whose_variants_are_no_names_breaks_no_other_agent(plugin_dir, monkeypatch):
    """``variants = 5`` in one installed plugin made every lookup fail with a TypeError."""
    module = plugin_dir("rz_misbehaving", MISBEHAVING_SOURCE)
    fake_entry_points(monkeypatch, ("badvariants", f"{module}:BadVariants"))
    assert "knock.greedy" in agent_names("knock_rummy")
    make_agent("knock.greedy", "knock_rummy", 2)
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("knock.gredy", "knock_rummy", 2)
    with pytest.raises(
        ValueError, match=r"variants must be a variant's name or a list of them, got 5"
    ):
        make_agent("badvariants", "knock_rummy", 2)


def test_actions_of_many_games_at_once_must_be_ints(plugin_dir) -> None:
    """A batched agent's floats were cut down (2.7 played as 2) where one game at a time
    refuses them."""
    from rummyzoo.envs.core import IllegalActionError

    module = plugin_dir("rz_misbehaving", MISBEHAVING_SOURCE)
    agents = ["random", f"{module}:FloatBatch"]
    with pytest.raises(IllegalActionError, match=r"act_batch must return \d+ int action ids"):
        run_arena("knock_rummy", 2, agents, deals=2, workers=1, batch=4)


def test_agent_labels_stay_unique_when_a_name_is_a_repeat_label() -> None:
    """An agent named ``random#1`` beside two random agents: its figures were merged into
    the first random's row."""
    from rummyzoo.agents.arena import summarize, unique_labels

    assert unique_labels(["random", "random", "random#1"]) == ["random#2", "random#3", "random#1"]
    greedy = make_agent("knock.greedy", "knock_rummy", 2)
    greedy.name = "random#1"
    result = run_arena("knock_rummy", 2, ["random", "random", greedy], deals=4, workers=1)
    assert len(set(result.labels)) == 3
    assert len(summarize(result)["agents"]) == 3


def test_spaces_around_a_name_and_a_class_without_parameters(plugin_dir) -> None:
    """``' knock.greedy'`` was an unknown agent where ``' knock.greedy(k=5) '`` was taken
    (its label keeping the spaces); a class without an __init__ given a parameter was refused
    in Python's words, not listing its parameters."""
    module = plugin_dir("rz_misbehaving", MISBEHAVING_SOURCE)
    assert make_agent(" knock.greedy ", "knock_rummy", 2).name == "knock.greedy"
    result = run_arena("knock_rummy", 2, ["random", " knock.greedy(knock_threshold=5) "], deals=1)
    assert result.labels[1] == "knock.greedy(knock_threshold=5)"
    with pytest.raises(ValueError, match=r"takes no parameter 'x'; its parameters"):
        make_agent(f"{module}:NoInit(x=1)", "knock_rummy", 2)


def _train_steps(env, steps: int) -> None:
    """Reset the training env and step it, the learner playing its first legal action in
    every game, ``steps`` times; the env closed however it ends."""
    try:
        env.reset()
        for _ in range(steps):
            masks = env.env_method("action_masks")
            env.step(np.asarray([int(np.flatnonzero(m)[0]) for m in masks]))
    finally:
        env.close()


@pytest.mark.parametrize("agent", ["FloatBatch", "MaskWriter"])
def test_a_training_opponent_is_held_to_the_play_loops_rules(plugin_dir, agent) -> None:
    """The batched training env takes a batched opponent's actions as ints only (2.7 was
    played as 2); an illegal action (what a mask written to asks for) is refused naming the
    opponent (the engine's refusal named only the game and the seat)."""
    from rummyzoo.envs.core import IllegalActionError
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env

    module = plugin_dir("rz_misbehaving", MISBEHAVING_SOURCE)
    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "smoke_ppo.yaml",
        ["variant=rummy500", "vec_env=batched", "n_envs=4", "env_options={target_score: null}",
         f"opponents=[{{name: '{module}:{agent}', weight: 1}}]", "evaluation.opponents=[random]",
         "pretrain=null"],
    )  # fmt: skip
    with pytest.raises((ValueError, IllegalActionError)) as raised:
        _train_steps(build_vec_env(config), 50)
    message = " ".join([str(raised.value), *getattr(raised.value, "__notes__", [])])
    expected = "chose an illegal action" if agent == "MaskWriter" else "int action ids"
    assert expected in message and f"'{module}:{agent}'" in message, message


def test_the_duplicate_baseline_gets_a_mask_it_cannot_write(plugin_dir) -> None:
    """The duplicate baseline's twin game handed its movers the match's own mask: one that
    wrote it had an illegal action accepted (Knock Rummy's discard, here, died deep in the
    rules); the write is refused as the play loop refuses it, naming the agent."""
    from rummyzoo.training.config import load_config
    from rummyzoo.training.train import build_vec_env

    module = plugin_dir("rz_misbehaving", MISBEHAVING_SOURCE)
    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "smoke_ppo.yaml",
        ["vec_env=batched", "n_envs=4", "env_options={target_score: null}",
         f"duplicate_baseline={module}:MaskWriter", "pretrain=null"],
    )  # fmt: skip
    with pytest.raises(ValueError, match="read-only") as raised:
        _train_steps(build_vec_env(config), 50)
    assert any(f"'{module}:MaskWriter'" in note for note in raised.value.__notes__)
