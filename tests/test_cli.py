"""``loopc check`` command-line contract (issue 2): formats and exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from loopc.cli.main import cli

from conftest import HEADER as H
from conftest import MINIMAL as GOOD
BAD = H + "input: {}\ninput: {}\n" + GOOD.split("\n", 3)[3]


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_check_ok_and_error_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "bad.yml").write_text(BAD)
    assert run("check", str(tmp_path / "good.yaml")).exit_code == 0
    r = run("check", str(tmp_path / "bad.yml"))
    assert r.exit_code == 1
    assert "bad.yml:4:1: error[LP1005]" in r.output
    assert "^" in r.output
    # directories recurse; an error anywhere gives 1
    assert run("check", str(tmp_path)).exit_code == 1


def test_unreadable_path_wins_with_2(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD)
    r = run("check", str(tmp_path / "bad.yaml"), str(tmp_path / "missing.yaml"))
    assert r.exit_code == 2


def test_usage_error_is_2() -> None:
    assert run("check").exit_code == 2
    assert run("check", "--format", "xml", "x.yaml").exit_code == 2


def test_json_format_shape(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(BAD)
    r = run("check", "--format", "json", str(p))
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert set(doc) == {"files", "summary"}
    assert doc["summary"] == {"files": 1, "errors": 1, "warnings": 0}
    (f,) = doc["files"]
    assert f["path"] == str(p)
    (d,) = f["diagnostics"]
    assert set(d) == {"code", "name", "severity", "message", "line", "column", "endLine",
                      "endColumn", "pointer", "node", "edge", "related", "fix", "url", "reference"}
    assert d["url"].endswith("/diagnostics.md#lp1005")
    assert d["reference"].endswith("/reference.md#source-file")
    assert (d["code"], d["name"], d["severity"], d["line"], d["column"]) == (
        "LP1005", "yaml.duplicate_key", "error", 4, 1)
    assert d["pointer"] == "/input"
    (rel,) = d["related"]
    assert set(rel) == {"message", "line", "column", "endLine", "endColumn", "pointer"}
    assert rel["line"] == 3


def test_python_dash_m_entry_point(tmp_path: Path) -> None:
    p = tmp_path / "good.yaml"
    p.write_text(GOOD)
    r = subprocess.run([sys.executable, "-m", "loopc", "check", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_c_parser_is_in_use() -> None:
    """ruamel.yaml's C (libyaml) parser must be installed (ruamel.yaml[oldlibyaml]);
    the pure-Python fallback is ~7x slower."""
    from ruamel.yaml import YAML
    from ruamel.yaml.cyaml import CParser  # noqa: F401

    assert YAML(typ="safe").Parser.__name__ == "CParser"


def test_caret_accounts_for_wide_characters() -> None:
    from loopc.cli.formats.text import _caret_line

    line = '      text: "日本語 😀 {{ input.topic + }}"'
    col = line.index("+") + 1
    caret = _caret_line(line, col, col + 1)
    # three CJK characters and one emoji each take two terminal columns
    assert caret.index("^") == col - 1 + 4


def test_explain_by_code_or_slug() -> None:
    assert run("explain", "LP1005").output.startswith("LP1005 yaml.duplicate_key")
    assert run("explain", "lp1005").exit_code == 0
    assert run("explain", "yaml.duplicate_key").output.startswith("LP1005")
    assert run("explain", "nope").exit_code == 2


def test_explain_unknown_code_suggests_the_closest() -> None:
    """A misspelt code or slug gets a did-you-mean; a far miss points at --list."""
    slug = CliRunner().invoke(cli, ["explain", "yaml.sytax"])
    assert slug.exit_code == 2 and "did you mean yaml.syntax?" in slug.output
    code = CliRunner().invoke(cli, ["explain", "LP46O1"])
    assert code.exit_code == 2 and "did you mean LP4601?" in code.output
    far = CliRunner().invoke(cli, ["explain", "zzzzzzzz"])
    assert far.exit_code == 2 and "did you mean" not in far.output and "--list" in far.output


def test_top_level_help_shows_every_command_summary_whole():
    """`loopc --help` lists each command with its whole first paragraph,
    wrapped at the terminal width, never cut at "e.g." or with "..."."""
    from click.testing import CliRunner

    from loopc.cli.main import cli, summary

    out = CliRunner().invoke(cli, ["--help"], terminal_width=80).output
    listing = " ".join(out.split("Commands:")[1].split())
    assert "..." not in listing
    for name, cmd in cli.commands.items():
        text = summary(cmd)
        assert text.endswith((".", ")")), (name, text)
        assert f"{name} {text}" in listing, name
