"""Machine formats of ``loopc check`` for CI (issue 13): SARIF 2.1.0
(validated against the official schema, vendored in tests/data), GitHub
annotations, JUnit XML, GitLab Code Quality."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from loopc.cli.main import cli
from loopc.codes import lint as L

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text("utf-8"))
WARN = L._plan("")
from conftest import HEADER as H
BAD = (
    H
    + "input: {}\ninput: {}\noutput: {}\nentry: done\nnodes:\n  - id: done\n    type: end\n    colour: red\n    end: {status: succeeded}\nedges: []\n"
)


def run(*args: str):
    return CliRunner().invoke(cli, ["check", "--no-cache", *args], catch_exceptions=False)


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(WARN)
    (tmp_path / "b.yaml").write_text(BAD)
    (tmp_path / "empty.yaml").write_text("apiVersion: loop.plan/v1\n")
    return tmp_path


def test_sarif_validates_against_the_official_schema(tree: Path) -> None:
    r = run("--format", "sarif", "w.yaml", "b.yaml", "empty.yaml", "missing.yaml")
    assert r.exit_code == 2
    log = json.loads(r.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run_ = log["runs"][0]
    results = run_["results"]
    assert {x["ruleId"] for x in results} >= {"LP4603", "LP1005", "LP2007"}
    rules = run_["tool"]["driver"]["rules"]
    assert all(rule["helpUri"].endswith("#" + rule["id"].lower()) for rule in rules)
    for x in results:
        assert rules[x["ruleIndex"]]["id"] == x["ruleId"]
    inv = run_["invocations"][0]
    assert inv["executionSuccessful"] is False
    note = inv["toolExecutionNotifications"][0]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "missing.yaml"
    w = next(x for x in results if x["ruleId"] == "LP4603")
    assert w["level"] == "warning"
    assert w["locations"][0]["physicalLocation"]["region"]["startLine"] == 14


def test_sarif_fingerprints_survive_line_moves(tree: Path) -> None:
    def prints() -> list[tuple[str, str, int]]:
        log = json.loads(run("--format", "sarif", "w.yaml", "b.yaml").stdout)
        return [
            (
                x["ruleId"],
                x["partialFingerprints"]["loopc/v1"],
                x["locations"][0]["physicalLocation"]["region"]["startLine"],
            )
            for x in log["runs"][0]["results"]
        ]

    before = prints()
    for name in ("w.yaml", "b.yaml"):
        p = tree / name
        lines = p.read_text().splitlines(keepends=True)
        p.write_text("".join(lines[:2]) + "# a comment\n\n# moved down\n" + "".join(lines[2:]))
    after = prints()
    assert [(c, f) for c, f, _ in before] == [(c, f) for c, f, _ in after]
    assert all(la == lb + 3 for (_, _, lb), (_, _, la) in zip(before, after))
    assert len({f for _, f, _ in before}) == len(before)


def test_github_annotations(tree: Path) -> None:
    r = run("--format", "github", "w.yaml", "b.yaml", "missing.yaml")
    lines = r.stdout.splitlines()
    assert any(
        line.startswith("::error file=b.yaml,line=4,col=1,endLine=4,endColumn=6,title=LP1005 ") for line in lines
    )
    assert any(line.startswith("::warning file=w.yaml,line=14,col=23,") for line in lines)
    assert "::error file=missing.yaml,title=loopc::no such file or directory" in lines
    assert all("\n" not in line for line in lines)


def test_junit_one_case_per_file(tree: Path) -> None:
    r = run("--format", "junit", "w.yaml", "b.yaml", "missing.yaml")
    root = ET.fromstring(r.stdout)
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["w.yaml", "b.yaml", "missing.yaml"]
    assert cases[0].find("failure") is None and "LP4603" in cases[0].find("system-out").text
    assert cases[1].find("failure").get("type") == "LP1005"
    assert cases[2].find("error") is not None
    assert root.get("failures") == "1" and root.get("errors") == "1"


def test_gitlab_code_quality(tree: Path) -> None:
    r = run("--format", "gitlab", "w.yaml", "b.yaml", "missing.yaml")
    issues = json.loads(r.stdout)
    assert {i["check_name"] for i in issues} >= {"LP4603", "LP1005", "loopc.unreadable"}
    for i in issues:
        assert set(i) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert i["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert isinstance(i["location"]["lines"]["begin"], int)
    assert len({i["fingerprint"] for i in issues}) == len(issues)
