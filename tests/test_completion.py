"""Shell completion (docs/ci.md#shell-completion): ``loopc completion
SHELL`` prints click's script, and the script completes loopc's commands
and options when a shell runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopc.cli.main import cli

MARKS = {
    "bash": "complete -o nosort -F _loopc_completion loopc",
    "zsh": "#compdef loopc",
    "fish": "complete --no-files --command loopc",
}


@pytest.mark.parametrize("shell", sorted(MARKS))
def test_completion_prints_a_script(shell: str) -> None:
    r = CliRunner().invoke(cli, ["completion", shell])
    assert r.exit_code == 0, r.output
    assert MARKS[shell] in r.stdout and "_LOOPC_COMPLETE" in r.stdout


def test_unknown_shell_is_a_usage_error() -> None:
    assert CliRunner().invoke(cli, ["completion", "tcsh"]).exit_code == 2


def _loopc_on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has a ``loopc`` running this interpreter's loopc."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "loopc"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m loopc "$@"\n')
    exe.chmod(0o755)
    return dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")


def test_bash_script_completes_commands_and_options(tmp_path: Path) -> None:
    env = _loopc_on_path(tmp_path)
    script = 'eval "$(loopc completion bash)"; COMP_WORDS=(loopc {words}); COMP_CWORD={n}; _loopc_completion loopc; echo "${{COMPREPLY[@]}}"'
    for words, n, want in (("ch", 1, "check"), ("check --col", 2, "--color"), ("completion ", 2, "bash zsh fish")):
        argv = words.split() + ([""] if words.endswith(" ") else [])
        out = subprocess.run(
            ["bash", "-c", script.format(words=" ".join(f"'{w}'" for w in argv), n=n)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert out.split() == want.split(), (words, out)
