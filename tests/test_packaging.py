"""What a user installing the package (not running the source tree) gets: the wheel's files,
the shipped configs by name from any folder, the version."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rummyzoo.cli.main import main
from rummyzoo.training.config import ConfigLoadError, load_config, shipped_configs

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

ROOT = Path(__file__).resolve().parent.parent


def _tracked(*args: str) -> list[str]:
    """``git ls-files`` of the source tree (options, then ``--`` and patterns)."""
    options = [a for a in args if a.startswith("--")]
    patterns = [a for a in args if not a.startswith("--")]
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", *options, "--", *patterns],
        capture_output=True, text=True,
    )  # fmt: skip
    if out.returncode != 0:
        pytest.skip("not a git checkout: the source tree's files are not listed")
    return out.stdout.split()


def test_the_wheel_holds_every_module_the_configs_the_pages_and_the_license(tmp_path) -> None:
    """``pip install`` of the project (not editable) gets every module, the shipped configs
    (``rummyzoo train knock_ppo`` reads them), the web pages' scripts and the license text.
    The wheel is built without the compiled kernels (the extension is optional, and a
    compiler that fails makes its build fail at once), which leaves the files to check."""
    # built from a copy of the source tree's files (a build in the tree itself reuses its
    # build/ folder, which may hold files of an earlier build)
    source = tmp_path / "source"
    for path in _tracked("--cached", "--others", "--exclude-standard"):
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, source / path)
    env = {**os.environ, "CC": "false", "PIP_NO_INPUT": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "--no-cache-dir", str(source), "-w", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = tmp_path.glob("rummyzoo-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {
        f"rummyzoo/{path}"
        for path in _tracked("envs/*.py", "agents/*.py", "training/*.py", "cli/*.py")
        + _tracked("cli/static/*", "configs/*.yaml")
    }
    assert wanted and not wanted - names, sorted(wanted - names)
    assert {f"rummyzoo/configs/{name}.yaml" for name in shipped_configs()} <= names
    licenses = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert licenses and "MIT License" in zipfile.ZipFile(wheel).read(licenses[0]).decode()
    # the installed package is a regular one: a checkout named rummyzoo in the working folder
    # (a folder without __init__.py) does not take its place, as it did a namespace package's
    assert "rummyzoo/__init__.py" in names
    assert "rummyzoo/py.typed" in names  # type checkers read the package's annotations
    installed, work = tmp_path / "installed", tmp_path / "work"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
         str(installed), str(wheel)],
        check=True, env=env, timeout=300,
    )  # fmt: skip
    (work / "rummyzoo" / "envs").mkdir(parents=True)
    (work / "rummyzoo" / "envs" / "__init__.py").write_text("")
    found = subprocess.run(
        [sys.executable, "-S", "-c",
         "import importlib.util as u; print(u.find_spec('rummyzoo.envs').origin)"],
        cwd=work, env={**env, "PYTHONPATH": str(installed)}, capture_output=True, text=True,
    )  # fmt: skip
    assert found.stdout.strip() == str(installed / "rummyzoo" / "envs" / "__init__.py"), found


def test_a_shipped_config_runs_by_name_from_any_folder(tmp_path, monkeypatch, capsys) -> None:
    """Outside the source tree ``configs/knock_ppo.yaml`` is no file: the config's name is,
    and a missing file's error lists the names."""
    assert set(shipped_configs()) == {p.stem for p in (ROOT / "configs").glob("*.yaml")}
    monkeypatch.chdir(tmp_path)
    assert load_config("knock_ppo") == load_config(ROOT / "configs" / "knock_ppo.yaml")
    assert load_config("ditch_ppo.yaml").variant == "ditch_rummy"
    with pytest.raises(ConfigLoadError, match=r"configs/knock_ppo\.yaml: No such file.*knock_ppo"):
        load_config("configs/knock_ppo.yaml")
    with pytest.raises(ConfigLoadError, match=r"cannot read config knock_ppo: No such file"):
        load_config("./knock_ppo")  # a path names a file, not a shipped config
    # a file of that name in the folder is the config (a name only stands in for a missing one)
    (tmp_path / "knock_ppo").write_text("variant: ditch_rummy\n")
    assert load_config("knock_ppo").variant == "ditch_rummy"
    run = tmp_path / "run"
    code = main(
        ["train", "smoke_ppo", "--run-dir", str(run), "--quiet", "--set", "n_timesteps=256"]
    )
    assert code == 0 and (run / "checkpoints" / "last.rz").is_file()
    assert (run / "config.yaml").read_text().count("variant: knock_rummy") == 1


def test_the_command_says_its_version(capsys) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"rummyzoo {version('rummyzoo')}"
