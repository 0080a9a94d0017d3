"""``loopc check --fix``/``--diff``/``--unsafe-fixes`` (issue 22, docs/ci.md#fixes):
``--diff`` shows what ``--fix`` would write and what would remain and fails
on either; ``--unsafe-fixes`` applies the guesses too; headers are relative."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from loopc.cli.main import cli

EXAMPLE = (ROOT / "examples" / "all_match_switch.yaml").read_text(encoding="utf-8")
#: a did-you-mean on an edge target: an unsafe fix
MISSPELT = EXAMPLE.replace("to: {node: api_review}", "to: {node: api_reviw}", 1)
#: a bare edge target: a safe fix (`{node: done}`); with the misspelling, both kinds
BARE = EXAMPLE.replace("to: {node: docs_review}", "to: docs_review", 1)


def run(*args: str):
    return CliRunner().invoke(cli, ["check", "--no-cache", *args], catch_exceptions=False)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_diff_on_a_broken_plan_without_fixes_reports_and_fails(repo: Path) -> None:
    bad = EXAMPLE.replace("{{ input.", "{{ inputz.", 1)
    assert bad != EXAMPLE
    (repo / "p.yaml").write_text(bad)
    r = run("--diff", "p.yaml")
    assert r.exit_code == 1, r.output
    assert r.stdout == ""  # no patch
    assert "p.yaml:" in r.stderr and "error[" in r.stderr
    assert "0 file(s) would be changed by safe fixes" in r.stderr
    assert run("--diff", "--exit-zero", "p.yaml").exit_code == 0


def test_diff_is_a_patch_relative_to_the_working_directory(repo: Path) -> None:
    (repo / "plans").mkdir()
    p = repo / "plans" / "p.yaml"
    p.write_text(BARE)
    for name in (str(p), "plans/p.yaml", "./plans/p.yaml"):
        r = run("--diff", name)
        assert r.exit_code == 1, r.output
        lines = r.stdout.splitlines()
        assert lines[:2] == ["--- a/plans/p.yaml", "+++ b/plans/p.yaml"], r.stdout
        assert "+    to: {node: docs_review}" in lines
    assert p.read_text() == BARE  # --diff writes nothing
    # the report on stderr, in the chosen format: stdout stays a patch
    r = run("--diff", "--format", "json", "plans/p.yaml")
    assert r.stdout.startswith("--- a/plans/p.yaml\n")
    report = r.stderr[: r.stderr.rindex("}") + 1]
    assert json.loads(report)["files"][0]["diagnostics"] == []
    # a clean plan: no patch, exit 0
    (repo / "ok.yaml").write_text(EXAMPLE)
    r = run("--diff", "ok.yaml")
    assert (r.exit_code, r.stdout) == (0, "")


def test_unsafe_fixes_apply_the_guesses_too(repo: Path) -> None:
    p = repo / "p.yaml"
    p.write_text(MISSPELT)
    r = run("--fix", "p.yaml")
    assert r.exit_code == 1 and "fixed 0 issue(s) in 0 file(s)" in r.stderr
    assert p.read_text() == MISSPELT  # a guess is not applied unattended
    r = run("--diff", "p.yaml")
    assert r.exit_code == 1 and r.stdout == "" and "LP4002" in r.stderr
    r = run("--diff", "--unsafe-fixes", "p.yaml")
    assert r.exit_code == 1 and "+    to: {node: api_review}" in r.stdout
    assert "LP4002" not in r.stderr and "1 file(s) would be changed by fixes" in r.stderr
    assert p.read_text() == MISSPELT
    r = run("--fix", "--unsafe-fixes", "p.yaml")
    assert r.exit_code == 0, r.output
    assert p.read_text() == EXAMPLE


def test_diff_with_safe_and_unsafe_fixes(repo: Path) -> None:
    p = repo / "p.yaml"
    p.write_text(BARE.replace("to: {node: api_review}", "to: {node: api_reviw}", 1))
    r = run("--diff", "p.yaml")  # the safe one is in the patch, the guess remains
    assert r.exit_code == 1
    assert "+    to: {node: docs_review}" in r.stdout and "api_review}" not in r.stdout
    assert "LP4002" in r.stderr
    r = run("--diff", "--unsafe-fixes", "p.yaml")
    assert "+    to: {node: docs_review}" in r.stdout and "+    to: {node: api_review}" in r.stdout


def test_diff_unreadable_path_is_2(repo: Path) -> None:
    (repo / "ok.yaml").write_text(BARE)
    assert run("--diff", "ok.yaml", "missing.yaml").exit_code == 2
    assert run("--diff", "--exit-zero", "missing.yaml").exit_code == 2


def test_fix_without_unsafe_fixes_says_what_they_would_apply(repo: Path) -> None:
    """"0 file(s) changed" with only a guess left does not read as "nothing
    can be fixed": --fix and --diff name how many fixes --unsafe-fixes
    would apply (trial finding); with --unsafe-fixes, no such line."""
    (repo / "p.yaml").write_text(MISSPELT)
    for flags in (("--fix",), ("--diff",)):
        r = run(*flags, "p.yaml")
        assert "1 more fix(es) available with --unsafe-fixes" in r.stderr, r.stderr
    r = run("--fix", "--unsafe-fixes", "p.yaml")
    assert "available with --unsafe-fixes" not in r.stderr
    (repo / "q.yaml").write_text(EXAMPLE)
    assert "available with --unsafe-fixes" not in run("--fix", "q.yaml").stderr
