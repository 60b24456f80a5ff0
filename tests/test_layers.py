"""The package's layering, read from the source: each layer imports only those below it, and
games are played by one loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"envs": "rummyzoo.envs", "agents": "rummyzoo.agents", "training": "rummyzoo.training"}
PACKAGES["cli"] = "rummyzoo.cli"
#: Modules of ``envs/`` at the AEC layer (the only ones that may import PettingZoo/gymnasium);
#: the registry builds AEC envs on request, so it counts as that layer too.
AEC_LAYER = {"aec.py", "registry.py", "knock_rummy_v0.py", "ditch_rummy_v0.py", "rummy500_v0.py"}


def _modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def _imports(path: Path, package: str | None = None) -> set[str]:
    """Every module named by an import anywhere in the file (also inside functions); relative
    imports are resolved against ``package`` (default: the file's own in the project)."""
    if package is None and ROOT in path.parents:
        package = ".".join(["rummyzoo", *path.relative_to(ROOT).parent.parts])
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom):  # relative: resolved against the file's package
            parts = (package or "").split(".")
            base = ".".join(parts[: len(parts) - (node.level - 1)])
            if node.module:
                names.add(f"{base}.{node.module}")
            else:  # from .. import training
                names.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value))
    return names


def _offenders(folder: str, forbidden: tuple[str, ...], skip: set[str] = frozenset()) -> list[str]:
    found = []
    for path in _modules(folder):
        if path.name in skip:
            continue
        for name in sorted(_imports(path)):
            if name.split(".")[0] in forbidden or name.startswith(forbidden):
                found.append(f"{path.relative_to(ROOT)} imports {name}")
    return found


def test_relative_imports_are_read_as_the_modules_they_name(tmp_path: Path) -> None:
    """A relative import cannot slip a forbidden layer past the checks below."""
    module = tmp_path / "x.py"
    module.write_text(
        "from ..training import train\nfrom . import base\nfrom .arena.stats import t_interval\n"
    )
    assert _imports(module, "rummyzoo.agents") == {
        "rummyzoo.training",
        "rummyzoo.agents.base",
        "rummyzoo.agents.arena.stats",
    }


def test_the_layers_below_the_aec_layer_import_no_pettingzoo_or_gymnasium() -> None:
    assert _offenders("envs", ("pettingzoo", "gymnasium"), AEC_LAYER) == []


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        ("envs", ("rummyzoo.agents", "rummyzoo.training", "rummyzoo.cli")),
        ("agents", ("rummyzoo.training", "rummyzoo.cli")),
        ("training", ("rummyzoo.cli",)),
    ],
)
def test_no_layer_imports_one_above_it(folder: str, forbidden: tuple[str, ...]) -> None:
    assert _offenders(folder, forbidden) == []


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f():\n    from rummyzoo.training.train import x\n    import importlib\n"
        "    importlib.import_module('rummyzoo.cli.main')\n"
    )
    assert _imports(module) >= {"rummyzoo.training.train", "rummyzoo.cli.main"}


def test_only_the_play_loop_iterates_agent_iter() -> None:
    """A whole game through the AEC API is played in one place (``play_aec``)."""
    found = []
    for folder in PACKAGES:
        for path in _modules(folder):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "agent_iter"
                ):
                    found.append(str(path.relative_to(ROOT)))
    assert sorted(set(found)) == ["envs/play.py"]


def test_nothing_outside_envs_touches_private_env_state() -> None:
    """No module outside ``envs/`` reads or writes an underscore attribute of an env, a match
    or a game (``env._x``, ``match._x``, ``game._x``, ``raw._x``)."""
    owners = {"env", "raw", "match", "game", "aec"}
    found = []
    for folder in ("agents", "training", "cli"):
        for path in _modules(folder):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name)
                    and node.value.id in owners
                ):
                    found.append(
                        f"{path.relative_to(ROOT)}:{node.lineno} {node.value.id}.{node.attr}"
                    )
    assert found == []


def test_each_command_keeps_its_own_defaults() -> None:
    """The commands share parent parsers; a default of one must not leak into another."""
    from rummyzoo.cli.main import build_parser

    parser = build_parser()
    arena = parser.parse_args(["arena", "knock_rummy", "--agents", "random", "random"])
    evaluate = parser.parse_args(["evaluate", "x.zip"])
    play = parser.parse_args(["play", "knock_rummy"])
    demo = parser.parse_args(["demo", "ditch_rummy"])
    assert (arena.deals, evaluate.deals) == (100, 500)
    assert (arena.seed, play.seed, demo.seed) == (0, None, 0)
    assert arena.players == 2 and play.players is None  # play's: a checkpoint opponent's, else 2


def test_the_readme_table_of_shared_options_is_match_options() -> None:
    import re

    from rummyzoo.envs.match import MATCH_OPTION_NAMES

    text = (ROOT / "README.md").read_text()
    start = text.index("Options shared by all variants")
    table = text[start : text.index("\n\n", text.index("| option |", start))]
    listed = re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE)
    assert sorted(listed) == sorted(MATCH_OPTION_NAMES)
