"""``--color auto|always|never`` for diagnostics text (docs/ci.md#colour):
NO_COLOR and FORCE_COLOR honoured, explicit choices win, and the text
without colour is byte-identical to the plain renderer's."""

from __future__ import annotations

import io
import re

import pytest
from click.testing import CliRunner

import loopc
from loopc.cli.color import use_color
from loopc.cli.formats.text import source_lines, write_text
from loopc.cli.main import cli

from conftest import REPOSITORY_PLANS

SGR = re.compile("\x1b\\[[0-9;]*m")
BAD = "apiVersion: loop.plan/v1\nkind: PlanVersion\ninput: {}\ninput: {}\n"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "env", "tty", "want"),
    [
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # empty means unset (no-color.org)
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False, False),  # NO_COLOR wins
        ("auto", {"TERM": "dumb"}, True, False),
    ],
)
def test_use_color(choice: str, env: dict[str, str], tty: bool, want: bool) -> None:
    assert use_color(choice, _Tty() if tty else io.StringIO(), env) is want


def test_closed_or_odd_streams_are_not_terminals() -> None:
    closed = io.StringIO()
    closed.close()
    assert use_color("auto", closed, {}) is False
    assert use_color("auto", object(), {}) is False


@pytest.mark.slow
def test_colour_only_adds_escape_codes() -> None:
    """On every repository plan (and a broken one): the coloured text minus
    its SGR codes is the plain text, and the plain text has none."""
    sources = [p.read_bytes().decode("utf-8", "replace") for p in REPOSITORY_PLANS] + [BAD]
    coloured_any = 0
    for src in sources:
        res = loopc.check_source(src, path="p.yaml")
        if not res.diagnostics:
            continue
        plain, coloured = io.StringIO(), io.StringIO()
        write_text(plain, "p.yaml", res.diagnostics, source_lines(src))
        write_text(coloured, "p.yaml", res.diagnostics, source_lines(src), color=True)
        assert "\x1b" not in plain.getvalue()
        assert SGR.sub("", coloured.getvalue()) == plain.getvalue()
        coloured_any += coloured.getvalue() != plain.getvalue()
    assert coloured_any > 10


def _check(*args: str, env: dict[str, str] | None = None) -> str:
    r = CliRunner(env={"NO_COLOR": None, "FORCE_COLOR": None, **(env or {})}).invoke(
        cli, ["check", "--no-cache", *args]
    )
    assert r.exit_code == 1, r.output
    return r.stdout


def test_check_color_choices(tmp_path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    plain = _check(str(f))
    assert "\x1b" not in plain  # auto, not a terminal
    assert _check("--color", "never", str(f)) == plain
    assert _check("--color", "never", str(f), env={"FORCE_COLOR": "1"}) == plain
    always = _check("--color", "always", str(f), env={"NO_COLOR": "1"})
    assert "\x1b[1;31merror[LP1005]\x1b[0m" in always and SGR.sub("", always) == plain
    assert _check(str(f), env={"FORCE_COLOR": "1"}) == always
    assert _check(str(f), env={"FORCE_COLOR": "1", "NO_COLOR": "1"}) == plain
    # machine formats are never coloured
    assert "\x1b" not in _check("--color", "always", "--format", "json", str(f))


@pytest.mark.parametrize("command", ["compile", "digest", "plan"])
def test_other_commands_colour_their_diagnostics(command: str, tmp_path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    r = CliRunner().invoke(cli, [command, "--color", "always", str(f)])
    assert r.exit_code == 1 and "\x1b[1;31merror[" in r.stderr, r.output
    r = CliRunner().invoke(cli, [command, "--color", "never", str(f)])
    assert r.exit_code == 1 and "\x1b" not in r.stderr and "error[LP1005]" in r.stderr
