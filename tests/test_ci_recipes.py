"""The CI recipes of docs/ci.md run as written (issue 13): every ``loopc
check`` command of the GitHub Actions and GitLab recipes, with the CI
variables substituted, on a tree of plans; each report parses."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from loopc.cli.main import cli

from conftest import ROOT
DOC = (ROOT / "docs" / "ci.md").read_text("utf-8")
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text("utf-8"))


def _strings(node) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def commands() -> list[str]:
    out = []
    for block in re.findall(r"```yaml\n(.*?)```", DOC, re.S):
        doc = YAML(typ="safe").load(block)
        out += [s for s in _strings(doc) if s.startswith("loopc check")]
    return out


COMMANDS = commands()


def test_both_recipes_have_commands() -> None:
    assert any("--format github" in c for c in COMMANDS) and any("--format sarif" in c for c in COMMANDS)
    assert any("--format gitlab" in c for c in COMMANDS) and any("--format junit" in c for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_recipe_command_runs(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    shutil.copytree(ROOT / "examples", tmp_path / "plans", ignore=shutil.ignore_patterns("*.md"))
    monkeypatch.chdir(tmp_path)
    line = command.replace("${{ matrix.shard }}", "1").replace("${CI_NODE_INDEX}", "1").replace("${CI_NODE_TOTAL}", "2")
    args, _, target = line.partition(" > ")
    argv = shlex.split(args)[1:]
    r = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    out = r.stdout
    if "--format sarif" in line:
        jsonschema.Draft4Validator(SCHEMA).validate(json.loads(out))
    elif "--format gitlab" in line:
        assert isinstance(json.loads(out), list)
    elif "--format junit" in line:
        assert len(ET.fromstring(out).findall("./testsuite/testcase")) == 5  # shard 1 of 2 of 9 examples
    elif "--format github" in line:
        assert all(x.startswith("::") for x in out.splitlines())
    assert target.strip() == "" or target.strip().endswith((".sarif", ".json", ".xml"))
