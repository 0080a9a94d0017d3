"""``loopc compile`` and ``loopc digest`` show the diagnostics ``loopc
check`` shows: inline suppressions and the configuration's ``disable``
drop warnings; ``error``/``warnings-as-errors`` stay check's gate (a
warning never changes compile's exit code); the artifact and the digest
never depend on either."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import loopc
from loopc.cli.main import cli
from loopc.codes import lint as L

WARN = L._plan("")  # one LP4603 warning
SUPPRESSED = L._plan(L._REASON)


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(*args: str) -> tuple[int, bytes, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout_bytes, r.stderr


@pytest.mark.parametrize("command", ["compile", "digest"])
def test_inline_suppression_is_honoured(command: str, cwd: Path) -> None:
    (cwd / "warn.yaml").write_text(WARN)
    (cwd / "quiet.yaml").write_text(SUPPRESSED)
    code, out_w, err = _run(command, "warn.yaml")
    assert code == 0 and "warning[LP4603]" in err
    code, out_q, err = _run(command, "quiet.yaml")
    assert code == 0 and err == "", err
    check = _run("check", "--no-cache", "quiet.yaml")
    assert "LP4603" not in check[2] and check[0] == 0
    if command == "digest":  # suppression comments never change the digest
        assert out_q == out_w == (loopc.compile_source(WARN).digest + "\n").encode()


def test_stale_suppression_is_reported_like_check(cwd: Path) -> None:
    (cwd / "p.yaml").write_text(L._plan("  # loopc: disable=LP4701 -- stale\n" + L._REASON))
    code, _, err = _run("compile", "p.yaml")
    check = CliRunner().invoke(cli, ["check", "--no-cache", "p.yaml"]).stdout
    assert code == 0 and "LP1901" in err and "LP1901" in check and "LP4603" not in err


def test_configuration_disable_applies_but_not_the_gate(cwd: Path) -> None:
    (cwd / "warn.yaml").write_text(WARN)
    (cwd / ".loopc.toml").write_text('disable = ["LP4603"]\n')
    code, out, err = _run("compile", "warn.yaml")
    assert code == 0 and err == "" and out == loopc.compile_source(WARN).bytes
    (cwd / ".loopc.toml").write_text("warnings-as-errors = true\n")
    code, out, err = _run("digest", "warn.yaml")
    assert code == 0 and "warning[LP4603]" in err and out.startswith(b"sha256:")
    assert _run("check", "--no-cache", "warn.yaml")[0] == 1  # check's gate


def test_errors_are_never_dropped(cwd: Path) -> None:
    (cwd / "bad.yaml").write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\n")
    (cwd / ".loopc.toml").write_text('disable = ["LP4603"]\n')
    code, out, err = _run("compile", "bad.yaml")
    assert code == 1 and "error[LP2006]" in err and out == b""
