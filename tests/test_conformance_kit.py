"""The conformance kit ships inside the package (docs/conformance.md#golden-scenarios):
``loopc conform --list`` names the scenarios from any directory, the wheel
carries every scenario, plan and journal pin, and ``loopc conform`` with no
path runs them from a non-editable install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopc.cli.main import cli
from loopc.conformance import SCENARIO_DIR, scenario_name, scenarios

from conftest import KIT, ROOT


def _kit_files() -> list[str]:
    """Every data file of the kit, relative to the package root ``loopc/``."""
    out = []
    for dirpath, dirs, files in os.walk(KIT):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out += [Path(dirpath, f).relative_to(KIT.parents[1]).as_posix() for f in files]
    return sorted(out)


def test_kit_is_the_package_data_directory() -> None:
    assert Path(SCENARIO_DIR).resolve() == KIT.resolve()
    assert len(scenarios()) >= 40
    assert not (ROOT / "golden" / "scenarios").exists() or not scenarios(str(ROOT / "golden" / "scenarios"))


def test_kit_plans_stay_inside_the_kit() -> None:
    """A scenario's ``plan:`` is a path inside the kit (an installed loopc has no examples/)."""
    for sc in scenarios():
        plan = next(line.split(":", 1)[1].strip() for line in Path(sc).read_text(encoding="utf-8").splitlines()
                    if line.startswith("plan:"))
        target = (Path(sc).parent / plan).resolve()
        assert target.is_relative_to(KIT.resolve()) and target.is_file(), (sc, plan)


def test_conform_list_names_the_kit_from_any_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["conform", "--list"])
    assert res.exit_code == 0, res.output
    names = [line.split()[0] for line in res.output.splitlines()]
    assert names == [scenario_name(p) for p in scenarios()]
    assert "fork_all_branch_fails" in names
    res = CliRunner().invoke(cli, ["conform", "--list", "--format", "json"])
    doc = json.loads(res.output)
    assert doc["directory"] == SCENARIO_DIR
    assert [s["path"] for s in doc["scenarios"]] == scenarios()


@pytest.mark.parametrize("args", [["conform"], ["conform", "--list", "--runtime", "x"], ["conform", "--list", "a.yaml"]])
def test_conform_usage_errors_exit_2(args: list[str]) -> None:
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2, res.output


@pytest.mark.slow
def test_wheel_ships_the_kit_and_conform_runs_it(tmp_path: Path) -> None:
    """Build a wheel (``pip wheel --no-deps``), unpack it as a non-editable
    install would, and run ``conform --list`` and ``conform`` with no path
    from an empty directory with only the unpacked wheel on the path."""
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (whl,) = wheels.glob("loopc-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        z.extractall(site)
    missing = [f for f in _kit_files() if f"loopc/{f}" not in names]
    assert not missing, missing
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = str(site)
    py = [sys.executable, "-P", "-c", "import sys; from loopc.cli.main import main; sys.exit(main())"]

    where = subprocess.run([sys.executable, "-P", "-c", "import loopc.conformance as c; print(c.SCENARIO_DIR)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout
    listed = subprocess.run([*py, "conform", "--list"], cwd=work, env=env, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [scenario_name(p) for p in scenarios()]
    runtime = f"{sys.executable} -P -m loopc.interpreter.protocol"
    ran = subprocess.run([*py, "conform", "--runtime", runtime], cwd=work, env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert f"{len(scenarios())} conforming, 0 diverging" in ran.stdout
