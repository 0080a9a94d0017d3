"""The hostile corpus, configuration class (issue 21, finding 10): patterns
:mod:`pathspec` refuses (``!``, a trailing ``\\``) in ``[tool.loopc]``,
``.loopc.toml``, on the command line or in a ``.gitignore``, and codes named
by two conflicting lists.  Each is one positioned problem or one-line usage
error with exit 2 (a ``.gitignore`` line git cannot read is skipped, as git
skips it) — never a traceback, never silently accepted."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from loopc.cli.config import _locator
from loopc.cli.main import cli
from loopc.codes import lint as L
from loopc.lint.config import from_mapping, pattern_problem

from conftest import MINIMAL as GOOD

WARN = L._plan("")  # one LP4603 warning


def run(*args: str):
    r = CliRunner().invoke(cli, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text(GOOD)
    return tmp_path


BAD_PATTERNS = ["!", "\\", "plans/\\", "!   "]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("pattern", BAD_PATTERNS)
@pytest.mark.parametrize("key", ["exclude", "include"])
@pytest.mark.parametrize("where", [".loopc.toml", "pyproject.toml"])
def test_bad_pattern_in_configuration_is_one_positioned_problem(repo: Path, pattern: str, key: str,
                                                                 where: str) -> None:
    lit = "'" + pattern + "'"  # a TOML literal string: no escapes
    table = f'{key} = ["ok/*", {lit}]\n'
    (repo / where).write_text(table if where == ".loopc.toml" else f"[project]\nname = 'x'\n\n[tool.loopc]\n{table}")
    line = 1 if where == ".loopc.toml" else 5
    col = len(f'{key} = ["ok/*", ') + 1
    for cmd in (["check", "--no-cache", "p.yaml"], ["check", "--no-cache", "."], ["inventory", "."], ["config"]):
        r = run(*cmd)
        assert r.exit_code == 2, (cmd, r.output)
        lines = r.stderr.strip().split("\n")
        assert lines == [f"loopc: {where}:{line}:{col}: '{key}' pattern '{pattern}': {pattern_problem(pattern)}"], lines
        assert r.stdout == ""


@pytest.mark.timeout(30)
@pytest.mark.parametrize("pattern", BAD_PATTERNS)
@pytest.mark.parametrize("option", ["--exclude", "--include"])
def test_bad_pattern_on_the_command_line_is_a_one_line_usage_error(repo: Path, pattern: str, option: str) -> None:
    for cmd in (["check", "--no-cache", option, pattern, "."], ["inventory", option, pattern, "."]):
        r = run(*cmd)
        assert r.exit_code == 2, (cmd, r.output)
        assert r.stderr == f"loopc: {option} '{pattern}': {pattern_problem(pattern)}\n"


def test_gitignore_lines_git_cannot_read_are_skipped(repo: Path) -> None:
    (repo / "skip.yaml").write_text(GOOD.replace("entry: done", "entry: nowhere"))
    (repo / ".gitignore").write_text("!\n\\\nskip.yaml\n")
    r = run("check", "--no-cache", "--format", "json", ".")
    assert r.exit_code == 0, r.output
    assert '"./skip.yaml"' not in r.stdout and '"./p.yaml"' in r.stdout


@pytest.mark.timeout(30)
@pytest.mark.parametrize("disable,error", [("LP4603", "LP4603"), ("LP4603", "wait.condition_static"),
                                           ("wait.condition_static", "lp4603")])
def test_a_code_both_disabled_and_raised_is_reported(repo: Path, disable: str, error: str) -> None:
    (repo / "w.yaml").write_text(WARN)
    assert "LP4603" in run("check", "--no-cache", "w.yaml").stdout  # the warning this is about
    (repo / ".loopc.toml").write_text(f'disable = ["LP4701", "{disable}"]\nerror = ["{error}"]\n')
    r = run("check", "--no-cache", "w.yaml")
    assert r.exit_code == 2, r.output
    assert r.stderr.strip().split("\n") == [
        "loopc: .loopc.toml:2:10: 'error' names LP4603 (wait.condition_static), which 'disable' (at "
        ".loopc.toml:1:22) names too: a code is either disabled or raised to an error; remove it from one of them"]


def test_from_mapping_reports_and_drops() -> None:
    cfg, problems = from_mapping({"exclude": ["a/*", "!"], "disable": ["LP4603"], "error": ["LP4603"]}, "c.toml")
    assert cfg.exclude == ("a/*",) and cfg.disable == () and cfg.error == ()
    assert len(problems) == 2 and all(p.startswith("c.toml: ") for p in problems)


def test_locator_follows_arrays_comments_and_escapes() -> None:
    text = ('# c\n[tool.other]\nexclude = ["no"]\n[tool.loopc]\nexclude = [ # x\n  "a\\\\\\"b", \'c\',\n'
            '  "!" ]\n"error" = ["LP1"]\n[tool.z]\n')
    loc = _locator(text, True)
    assert loc("exclude", None) == "5:1" and loc("exclude", 0) == "6:3" and loc("exclude", 1) == "6:13"
    assert loc("exclude", 2) == "7:3" and loc("exclude", 3) is None and loc("error", 0) == "8:12"
    assert loc("disable", 0) is None
    assert _locator('exclude = """\n!\n"""\n', False)("exclude", 0) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=5), st.lists(st.sampled_from(["LP4603", "LP4701", "x"]), max_size=3))
def test_any_configuration_is_problems_or_a_configuration(patterns: list[str], codes: list[str]) -> None:
    import pathspec

    cfg, problems = from_mapping({"exclude": patterns, "include": patterns, "disable": codes, "error": codes})
    pathspec.GitIgnoreSpec.from_lines(list(cfg.exclude))  # what is kept, compiles
    assert len(cfg.exclude) + sum("'exclude' pattern" in p for p in problems) == len(patterns)
    assert not set(cfg.disable) & set(cfg.error)
