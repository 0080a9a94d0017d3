"""``loopc check`` for CI and pre-commit (issue 13): walking, configuration,
suppressions, parallel and cached runs, shards, stdin, exit options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import loopc
from loopc.cli.main import cli
from loopc.codes import lint as L
from loopc.lint import LintConfig, apply_lint, from_mapping

from conftest import HEADER as H
from conftest import MINIMAL as GOOD
BAD = H + "input: {}\ninput: {}\n" + GOOD.split("\n", 3)[3]
WARN = L._plan("")  # one LP4603 warning at 15:23
SUPPRESSED = L._plan(L._REASON)


def run(*args: str, input: bytes | str | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, input=input)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def checked(r) -> list[str]:
    return [f["path"] for f in json.loads(r.stdout)["files"]]


# -- directory walking --------------------------------------------------------


def test_walk_cases_hidden_gitignore_and_non_plans(repo: Path) -> None:
    (repo / "a.YAML").write_text(GOOD)
    (repo / "b.Yml").write_text(GOOD)
    (repo / "c.txt").write_text(GOOD)
    (repo / ".hidden.yaml").write_text(BAD)
    (repo / ".hid").mkdir()
    (repo / ".hid" / "x.yaml").write_text(BAD)
    (repo / "build").mkdir()
    (repo / "build" / "gen.yaml").write_text(BAD)
    (repo / "sub").mkdir()
    (repo / "sub" / "keep.yaml").write_text(GOOD)
    (repo / "sub" / "skip.yaml").write_text(BAD)
    (repo / "sub" / ".gitignore").write_text("skip.yaml\n")
    (repo / ".gitignore").write_text("build/\n")
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    (repo / "workflow.yml").write_text("on: push\njobs: {}\n")
    r = run("check", "--format", "json", ".")
    assert r.exit_code == 0, r.output
    assert checked(r) == ["./a.YAML", "./b.Yml", "./sub/keep.yaml"]
    assert "note: skipped ./workflow.yml: not a loop.plan/v1 plan" in r.stderr
    # named explicitly, a YAML file with no sign of a plan gets one warning
    # (tests/test_plan_detection.py); one that looks like a plan is checked strictly
    r = run("check", "workflow.yml")
    assert r.exit_code == 0 and "LP1014" in r.output and "LP2" not in r.output
    r = run("check", "sub/skip.yaml")
    assert r.exit_code == 1 and "LP1005" in r.output


def test_exclude_and_include(repo: Path) -> None:
    (repo / "plans").mkdir()
    (repo / "plans" / "a.yaml").write_text(GOOD)
    (repo / "plans" / "legacy").mkdir()
    (repo / "plans" / "legacy" / "old.yaml").write_text(BAD)
    (repo / "plans" / "c.plan").write_text(GOOD)
    assert run("check", "plans").exit_code == 1
    r = run("check", "--format", "json", "--exclude", "legacy/", "plans")
    assert r.exit_code == 0 and checked(r) == ["plans/a.yaml"]
    r = run("check", "--format", "json", "--include", "*.plan", "plans")
    assert checked(r) == ["plans/c.plan"]
    # excludes apply to named files too (pre-commit names them)
    r = run("check", "--format", "json", "--exclude", "plans/legacy/**", "plans/legacy/old.yaml")
    assert r.exit_code == 0 and checked(r) == []


# -- configuration ------------------------------------------------------------


def test_config_disable_raise_and_precedence(repo: Path) -> None:
    (repo / "w.yaml").write_text(WARN)
    r = run("check", "w.yaml")
    assert r.exit_code == 0 and "warning[LP4603]" in r.output
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.loopc]\nerror = ["LP4603"]\n')
    r = run("check", "w.yaml")
    assert r.exit_code == 1 and "error[LP4603]" in r.output
    (repo / ".loopc.toml").write_text('disable = ["wait.condition_static"]\n')
    r = run("check", "w.yaml")
    assert r.exit_code == 0 and "LP4603" not in r.output  # .loopc.toml wins
    r = run("config")
    assert r.exit_code == 0
    assert 'disable = ["LP4603"]' in r.output and ".loopc.toml" in r.output


def test_config_cannot_disable_errors(repo: Path) -> None:
    (repo / ".loopc.toml").write_text('disable = ["LP1005"]\nwarnings_as_errors = true\n')
    (repo / "b.yaml").write_text(BAD)
    r = run("check", "b.yaml")
    assert r.exit_code == 2
    assert "errors cannot be disabled" in r.stderr
    assert "did you mean 'warnings-as-errors'" in r.stderr
    (repo / ".loopc.toml").write_text("disable = [")
    assert run("config").exit_code == 2


def test_warnings_as_errors_and_exit_zero(repo: Path) -> None:
    (repo / "w.yaml").write_text(WARN)
    (repo / "b.yaml").write_text(BAD)
    assert run("check", "--warnings-as-errors", "w.yaml").exit_code == 1
    assert run("check", "--exit-zero", "b.yaml").exit_code == 0
    # 2 still wins
    assert run("check", "--exit-zero", "b.yaml", "missing.yaml").exit_code == 2


def test_from_mapping_problems() -> None:
    cfg, problems = from_mapping({"error": ["LP2007"], "disable": "LP4603", "bogus": 1})
    assert cfg.error == ()  # an error code raised is a no-op
    assert any("must be a list" in p for p in problems)
    assert any("unknown key 'bogus'" in p for p in problems)
    cfg, problems = from_mapping({"disable": ["LP0000"]})
    assert problems and "unknown diagnostic code" in problems[0]


# -- suppressions ---------------------------------------------------------------


def test_suppression_node_key_and_stacking() -> None:
    assert [d.code for d in loopc.check_source(WARN).diagnostics] == ["LP4603"]
    assert loopc.check_source(SUPPRESSED).diagnostics == ()
    # stacked comments before the same node: both apply, the unused one is reported
    stacked = L._plan("  # loopc: disable=LP4701 -- stale\n" + L._REASON)
    assert [(d.code, d.span.line) for d in loopc.check_source(stacked).diagnostics] == [("LP1901", 12)]
    # compile ignores suppressions: the warning is still in its diagnostics
    from loopc.pipeline import compile_source

    assert "LP4603" in {d.code for d in compile_source(SUPPRESSED).diagnostics}


def test_apply_lint_never_drops_or_downgrades_errors() -> None:
    res = loopc.check_source(BAD, lint=False)
    cfg = LintConfig(disable=("LP1005",))
    assert apply_lint(res.diagnostics, res.document, cfg) == res.diagnostics
    w = loopc.check_source(WARN, lint=False)
    raised = apply_lint(w.diagnostics, w.document, LintConfig(warnings_as_errors=True))
    assert [d.severity.value for d in raised] == ["error"]


def test_suppression_in_check_cli(repo: Path) -> None:
    (repo / "s.yaml").write_text(SUPPRESSED)
    r = run("check", "s.yaml")
    assert r.exit_code == 0 and "0 warning(s)" in r.stderr


# -- parallel, cache, shard -----------------------------------------------------


def _tree(repo: Path, n: int = 12) -> None:
    for i in range(n):
        (repo / f"p{i:02}.yaml").write_text([GOOD, BAD, WARN][i % 3])


def test_jobs_output_is_deterministic(repo: Path) -> None:
    _tree(repo)
    one = run("check", "--no-cache", "-j", "1", "--format", "json", ".")
    two = run("check", "--no-cache", "-j", "2", "--format", "json", ".")
    assert one.exit_code == two.exit_code == 1
    assert one.stdout == two.stdout
    assert run("check", "-j", "0", ".").exit_code == 2


def test_cache_hits_and_corruption(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    _tree(repo, 6)
    cache = tmp_path_factory.mktemp("cache")
    first = run("check", "--cache-dir", str(cache), "--format", "json", ".")
    entries = [p for p in cache.rglob("*.json")]
    assert len(entries) == 6
    second = run("check", "--cache-dir", str(cache), "--format", "json", ".")
    assert first.stdout == second.stdout
    # a corrupt entry is a miss, rewritten
    entries[0].write_bytes(b"not an entry")
    third = run("check", "--cache-dir", str(cache), "--format", "json", ".")
    assert third.stdout == first.stdout
    # configuration is part of the key
    (repo / ".loopc.toml").write_text("warnings-as-errors = true\n")
    fourth = run("check", "--cache-dir", str(cache), "--format", "json", ".")
    assert json.loads(fourth.stdout)["summary"]["warnings"] == 0
    assert len(list(cache.rglob("*.json"))) == 12


def test_shards_partition_the_tree(repo: Path) -> None:
    _tree(repo, 10)
    everything = checked(run("check", "--format", "json", "."))
    parts = [checked(run("check", "--format", "json", "--shard", f"{k}/3", ".")) for k in (1, 2, 3)]
    assert sorted(sum(parts, [])) == sorted(everything)
    assert [len(p) for p in parts] == [4, 3, 3]
    assert run("check", "--shard", "4/3", ".").exit_code == 2
    assert run("check", "--shard", "x", ".").exit_code == 2


# -- stdin, missing paths, explain --------------------------------------------


def test_stdin_with_filename(repo: Path) -> None:
    r = run("check", "--stdin-filename", "plans/x.yaml", "-", input=BAD.encode())
    assert r.exit_code == 1 and "plans/x.yaml:4:1: error[LP1005]" in r.output
    r = run("check", "-", input=GOOD)
    assert r.exit_code == 0


def test_missing_path_is_a_file_entry_in_json(repo: Path) -> None:
    (repo / "g.yaml").write_text(GOOD)
    r = run("check", "--format", "json", "g.yaml", "nope.yaml")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert doc["files"][1] == {"path": "nope.yaml", "diagnostics": [], "error": "no such file or directory"}
    assert doc["summary"] == {"files": 1, "errors": 0, "warnings": 0}


def test_explain_list() -> None:
    r = run("explain", "--list")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert len(lines) == len(loopc.codes.all_codes()) if hasattr(loopc, "codes") else lines
    assert any(l.startswith("LP1901  warning  suppression.unused") for l in lines)
    assert run("explain").exit_code == 2


def test_no_pool_or_rich_on_the_single_file_path(repo: Path) -> None:
    import subprocess
    import sys

    (repo / "g.yaml").write_text(GOOD)
    code = (
        "import sys; from loopc.cli.main import main; sys.argv=['loopc','check','--no-cache','g.yaml'];\n"
        "try:\n main()\nexcept SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich','concurrent','pathspec','platformdirs','multiprocessing')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_apply_fixes_safe_only_and_overlaps(monkeypatch: pytest.MonkeyPatch) -> None:

    from loopc.diagnostics import Diagnostic, Fix, Severity, Span, TextEdit
    from loopc.lint import fixes

    text = "a: colour\nb: x\r\nc: y\n"
    applicability = getattr(loopc.diagnostics, "Applicability", None)
    if applicability is None:  # before fixes carried their applicability
        monkeypatch.setattr(fixes, "is_safe", lambda d: d.fix.message == "safe")

    def diag(line: int, col: int, end: int, new: str, safe: bool) -> Diagnostic:
        fix = Fix("safe" if safe else "guess", (TextEdit(Span(line, col, line, end), new),))
        if applicability is not None:
            fix = fix.evolve(applicability=applicability.SAFE if safe else applicability.UNSAFE)
        return Diagnostic("LP2007", "schema.unknown_key", Severity.ERROR, "m", Span(line, col, line, end), fix=fix)

    ds = [diag(1, 4, 10, "color", True), diag(2, 4, 5, "z", True), diag(2, 4, 5, "w", True), diag(3, 4, 5, "q", False)]
    assert fixes.apply_fixes(text, ds) == ("a: color\nb: z\r\nc: y\n", 2)  # overlap waits, unsafe skipped
    assert fixes.apply_fixes(text, ds, unsafe=True)[0] == "a: color\nb: z\r\nc: q\n"


def test_fix_and_diff_apply_safe_fixes(repo: Path) -> None:
    src = (
        GOOD.replace("  - id: done\n", "  - id: hi\n    type: wait\n    wait: {duration: PT1M}\n  - id: done\n")
        .replace("entry: done", "entry: hi")
        .replace("edges: []", "edges:\n  - {id: e1, from: {node: hi, port: completed}, to: done}")
    )
    p = repo / "p.yaml"
    p.write_text(src)
    r = run("check", "--no-cache", "p.yaml")
    assert r.exit_code == 1 and "LP2011" in r.output
    r = run("check", "--no-cache", "--diff", "p.yaml")
    assert r.exit_code == 1 and "+  - {id: e1, from: {node: hi, port: completed}, to: {node: done}}" in r.stdout
    assert p.read_text() == src  # --diff writes nothing
    r = run("check", "--no-cache", "--fix", "p.yaml")
    assert r.exit_code == 0 and "fixed 1 issue(s) in 1 file(s)" in r.stderr
    assert "to: {node: done}}" in p.read_text()
    assert run("check", "--no-cache", "--diff", "p.yaml").exit_code == 0
