"""The VS Code extension in editors/vscode (docs/editors.md#vs-code).

What can be checked without VS Code: the manifest and its agreement with the
server's settings, the committed lock file, the ``.vsix`` that
``@vscode/vsce`` builds (CI builds it in ``.ci/run``; otherwise a slow test
builds it when npm is there), the executable lookup of ``findServer.js``
under Node (setting > virtual environment > PATH), and a session with the
real server started the way the extension starts it.  What needs VS Code
itself is listed in editors/vscode/README.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from loopc.lsp import settings as server_settings

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "editors" / "vscode"
NODE = shutil.which("node")
NPM = shutil.which("npm")
#: The files the .vsix is built from; a built .vsix older than any is stale.
SOURCES = [
    "package.json",
    "package-lock.json",
    "extension.js",
    "findServer.js",
    "README.md",
    "LICENSE",
    ".vscodeignore",
]
RUNTIME_MODULES = [
    "vscode-languageclient",
    "vscode-languageserver-protocol",
    "vscode-jsonrpc",
    "vscode-languageserver-types",
    "semver",
    "which",
    "isexe",
]

needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")
needs_modules = pytest.mark.skipif(
    not (EXT / "node_modules" / "which").is_dir(),
    reason="editors/vscode/node_modules is missing: run `npm ci` there (.ci/run does when npm exists)",
)


def manifest() -> dict[str, Any]:
    return json.loads((EXT / "package.json").read_text(encoding="utf-8"))


def test_manifest_fields() -> None:
    m = manifest()
    for key in ("name", "displayName", "description", "version", "publisher", "license", "main"):
        assert isinstance(m.get(key), str) and m[key], key
    assert re.fullmatch(r"\^1\.\d+\.\d+", m["engines"]["vscode"])
    assert m["activationEvents"] == ["onLanguage:yaml"]
    assert (EXT / m["main"]).is_file()
    assert m["license"] == "MIT" and (EXT / "LICENSE").is_file()
    assert (EXT / "README.md").is_file()
    assert m["dependencies"]["vscode-languageclient"].startswith("^9.")
    assert "@vscode/vsce" in m["devDependencies"]
    assert "@vscode/vsce" not in m["dependencies"]
    props = m["contributes"]["configuration"]["properties"]
    assert props["loopc.path"]["type"] == "string" and props["loopc.path"]["default"] == ""
    assert props["loopc.trace.server"]["enum"] == ["off", "messages", "compact", "verbose"]
    assert props["loopc.trace.server"]["default"] == "off"
    # A workspace may not pick the executable in Restricted Mode.
    trust = m["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited" and trust["restrictedConfigurations"] == ["loopc.path"]
    commands = {c["command"] for c in m["contributes"]["commands"]}
    assert {"loopc.restartServer", "loopc.showOutput"} <= commands
    src = (EXT / "extension.js").read_text(encoding="utf-8")
    for c in commands:
        assert f"'{c}'" in src, c


def test_engine_admits_the_language_client() -> None:
    """engines.vscode is no older than what the locked vscode-languageclient needs."""
    lock = json.loads((EXT / "package-lock.json").read_text(encoding="utf-8"))
    client = lock["packages"]["node_modules/vscode-languageclient"]
    assert client["version"].startswith("9.")
    need = tuple(int(x) for x in client["engines"]["vscode"].lstrip("^").split("."))
    ours = tuple(int(x) for x in manifest()["engines"]["vscode"].lstrip("^").split("."))
    assert ours >= need


def test_settings_match_the_server() -> None:
    """Every setting the server reads is contributed, with the server's own values."""
    props = manifest()["contributes"]["configuration"]["properties"]
    # positionEncoding is for clients that negotiate no encoding (Vim's ALE,
    # vim-lsp); VS Code's client always offers UTF-16, so it is not contributed
    not_for_vscode = {"positionEncoding"}
    for key in server_settings.Settings().to_json():
        if key in not_for_vscode:
            assert f"loopc.{key}" not in props, key
            continue
        assert f"loopc.{key}" in props, key
    levels = props["loopc.severity"]["additionalProperties"]["enum"]
    assert set(levels) <= server_settings._LEVELS
    assert {"error", "warning", "info", "hint", "off"} <= set(levels)
    deb = props["loopc.debounce"]
    assert deb["default"] is None and deb["minimum"] == 0
    assert deb["maximum"] == server_settings.MAX_DEBOUNCE_MS


def test_lock_file_matches_the_manifest() -> None:
    m = manifest()
    lock = json.loads((EXT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["lockfileVersion"] >= 2
    root = lock["packages"][""]
    assert root["name"] == m["name"] and root["version"] == m["version"]
    assert root.get("dependencies") == m["dependencies"]
    assert root.get("devDependencies") == m["devDependencies"]
    for name in m["dependencies"]:
        assert f"node_modules/{name}" in lock["packages"], name


def test_server_finding_module_has_no_vscode_import() -> None:
    src = (EXT / "findServer.js").read_text(encoding="utf-8")
    assert not re.search(r"""require\(\s*['"]vscode['"]\s*\)""", src)
    ext = (EXT / "extension.js").read_text(encoding="utf-8")
    assert "require('./findServer')" in ext
    # Every YAML file on disk, and `loopc lsp` over stdio (no --stdio argument needed).
    assert "documentSelector: [{ scheme: 'file', language: 'yaml' }]" in ext
    assert "args: ['lsp']" in ext


def test_gitignore_keeps_build_output_out() -> None:
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    for pattern in ("node_modules/", "*.vsix", "out/"):
        assert pattern in lines


# -- findServer.js under Node ------------------------------------------------


def _exe(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(mode)
    return path


def _find(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run findLoopc for each options object in one node process."""
    script = (
        "const { findLoopc } = require(process.argv[1]);"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(cases.map((c) => findLoopc(c))));"
    )
    out = subprocess.run(
        [NODE, "-e", script, str(EXT / "findServer.js")],  # type: ignore[list-item]
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


@needs_node
@needs_modules
@pytest.mark.skipif(os.name == "nt", reason="POSIX executables and bin/ layout")
def test_find_server_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    ws2 = tmp_path / "ws2"
    onpath = _exe(tmp_path / "pathdir" / "loopc")
    _exe(tmp_path / "pathdir" / "loopc-dev")
    dotvenv = _exe(ws / ".venv" / "bin" / "loopc")
    _exe(ws / "venv" / "bin" / "loopc")  # .venv comes first
    onlyvenv = _exe(tmp_path / "only-venv" / "venv" / "bin" / "loopc")
    second = _exe(ws2 / "venv" / "bin" / "loopc")
    explicit = _exe(tmp_path / "elsewhere" / "loopc")
    rel = _exe(ws / "tools" / "loopc")
    tilde = _exe(home / "bin" / "loopc")
    noexec = _exe(tmp_path / "noexec" / ".venv" / "bin" / "loopc", 0o644)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": str(onpath.parent)}
    base: dict[str, Any] = {"env": env, "home": str(home), "platform": "linux"}
    cases: list[dict[str, Any]] = [
        # 1. the setting wins over the virtual environment and PATH
        {**base, "setting": str(explicit), "workspaceFolders": [str(ws)]},
        # 2. no setting: the workspace's .venv, before venv and PATH
        {**base, "setting": "", "workspaceFolders": [str(ws)]},
        # 3. venv when there is no .venv
        {**base, "workspaceFolders": [str(tmp_path / "only-venv")]},
        # 4. the first folder without an environment, the second with one
        {**base, "workspaceFolders": [str(empty), str(ws2)]},
        # 5. no environment: PATH
        {**base, "workspaceFolders": [str(empty)]},
        # 6. an untrusted workspace's environment is never run
        {**base, "workspaceFolders": [str(ws)], "trusted": False},
        # 7. a file that is not executable is passed over
        {**base, "workspaceFolders": [str(noexec.parents[2])]},
        # 8. relative, ~ and ${workspaceFolder} settings
        {**base, "setting": "tools/loopc", "workspaceFolders": [str(ws)]},
        {**base, "setting": "~/bin/loopc", "workspaceFolders": [str(ws)]},
        {**base, "setting": "${workspaceFolder}/tools/loopc", "workspaceFolders": [str(ws)]},
        # 9. a bare name is looked up on PATH
        {**base, "setting": "loopc-dev", "workspaceFolders": [str(ws)]},
        # 10. a setting naming nothing is an error, with no fall-back
        {**base, "setting": str(tmp_path / "missing" / "loopc"), "workspaceFolders": [str(ws)]},
        {**base, "setting": "not-a-loopc", "workspaceFolders": [str(ws)]},
        {**base, "setting": "tools/loopc", "workspaceFolders": []},
        # 11. nothing anywhere
        {**base, "env": {"PATH": str(empty)}, "workspaceFolders": [str(empty)]},
        # 12. garbage options never throw
        {"setting": 7, "workspaceFolders": "nope", "env": {}},
    ]
    r = _find(cases)
    got = [(x["command"], x["source"]) for x in r]
    assert got[0] == (str(explicit), "setting")
    assert got[1] == (str(dotvenv), "venv")
    assert got[2] == (str(onlyvenv), "venv")
    assert got[3] == (str(second), "venv")
    assert r[3]["tried"][:2] == [str(empty / ".venv" / "bin" / "loopc"), str(empty / "venv" / "bin" / "loopc")]
    assert got[4] == (str(onpath), "path")
    assert got[5] == (str(onpath), "path") and r[5]["tried"] == ["loopc on PATH"]
    assert got[6] == (str(onpath), "path")
    assert got[7] == (str(rel), "setting")
    assert got[8] == (str(tilde), "setting")
    assert got[9] == (str(rel), "setting")
    assert got[10] == (str(onpath.parent / "loopc-dev"), "setting")
    for i in (11, 12, 13):
        assert got[i] == (None, None), i
        assert "loopc.path" in r[i]["error"]
    assert "not an executable file" in r[11]["error"]
    assert "no folder is open" in r[13]["error"]
    assert got[14] == (None, None) and "pip install -e ." in r[14]["error"]
    assert got[15][0] in (None, shutil.which("loopc", path=""))  # no PATH: nothing, and no exception


@needs_node
@needs_modules
def test_venv_layout_per_platform() -> None:
    script = (
        "const { venvExecutable } = require(process.argv[1]);"
        "process.stdout.write(JSON.stringify([venvExecutable('C:\\\\w\\\\.venv', 'win32'),"
        " venvExecutable('/w/.venv', 'linux'), venvExecutable('/w/.venv', 'darwin')]));"
    )
    out = subprocess.run(
        [NODE, "-e", script, str(EXT / "findServer.js")],  # type: ignore[list-item]
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout) == ["C:\\w\\.venv\\Scripts\\loopc.exe", "/w/.venv/bin/loopc", "/w/.venv/bin/loopc"]


# -- extension.js with stand-ins for vscode and LanguageClient ----------------


@needs_node
@needs_modules
@pytest.mark.skipif(os.name == "nt", reason="POSIX executables and bin/ layout")
def test_activation_wiring_with_stand_ins(tmp_path: Path) -> None:
    """activate/deactivate against a stand-in `vscode` API and a recording
    LanguageClient (editors/vscode/test/activateHarness.js): the client gets
    the found executable with ``["lsp"]``, YAML on disk, section ``loopc``;
    a loopc.path change restarts it, another setting does not; nothing found
    or a failed start is told to the user; trusting the workspace switches to
    its virtual environment; deactivation stops the client."""
    ws = tmp_path / "ws"
    venv = _exe(ws / ".venv" / "bin" / "loopc")
    onpath = _exe(tmp_path / "p" / "loopc")
    explicit = _exe(tmp_path / "x" / "loopc")
    args = {"folders": [str(ws)], "path": str(onpath.parent), "explicit": str(explicit)}
    out = subprocess.run(
        [NODE, str(EXT / "test" / "activateHarness.js"), json.dumps(args)],  # type: ignore[list-item]
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    sc = json.loads(out.stdout)["scenarios"]

    def runs(summary: dict[str, Any]) -> list[tuple[str, bool, bool]]:
        return [(c["command"], c["started"], c["stopped"]) for c in summary["clients"]]

    first = sc["venvThenSetting"]["afterActivate"]
    assert runs(first) == [(str(venv), True, False)]
    client = first["clients"][0]
    assert client["id"] == "loopc"  # so VS Code's loopc.trace.server applies to it
    assert client["args"] == ["lsp"] and client["cwd"] == str(ws)
    assert client["documentSelector"] == [{"scheme": "file", "language": "yaml"}]
    assert client["configurationSection"] == "loopc" and client["outputChannel"] is True
    assert first["commands"] == ["loopc.restartServer", "loopc.showOutput"]
    assert first["messages"] == []
    assert f"starting {venv} lsp (found by venv)" in first["output"]
    assert runs(sc["venvThenSetting"]["afterPathChange"]) == [(str(venv), True, True), (str(explicit), True, False)]
    assert runs(sc["venvThenSetting"]["afterOtherChange"]) == runs(sc["venvThenSetting"]["afterPathChange"])
    assert runs(sc["venvThenSetting"]["afterDeactivate"]) == [(str(venv), True, True), (str(explicit), True, True)]

    nf = sc["notFound"]
    assert nf["clients"] == []
    assert [m["items"] for m in nf["messages"]] == [["Open Settings", "Show Output"]]
    assert "loopc was not found" in nf["messages"][0]["message"]

    assert runs(sc["trust"]["untrusted"]) == [(str(onpath), True, False)]
    assert runs(sc["trust"]["trusted"]) == [(str(onpath), True, True), (str(venv), True, False)]

    failed = sc["startFails"]["failed"]
    assert runs(failed) == [(str(venv), False, False)]
    assert failed["messages"][0]["message"].startswith(f"loopc lsp ({venv}) did not start")
    assert runs(sc["startFails"]["restarted"])[-1] == (str(venv), True, False)


# -- the real server, started as the extension starts it ----------------------

#: An error (an entry naming no node) and two layout slips for "Format Document".
BAD_PLAN_EDITS = (("entry: deploy", "entry:    deplyo"), ("    type: fork", "    type:   fork"))


@needs_node
@needs_modules
@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt", reason="POSIX virtual-environment layout")
def test_session_with_the_server_found_in_the_workspace_venv(tmp_path: Path) -> None:
    """findServer.js finds ``.venv/bin/loopc`` in the workspace (a link to
    this test run's loopc); the server runs over stdio as ``loopc lsp``, is
    sent the capabilities the locked vscode-languageclient computes, pulls
    settings with workspace/configuration, answers pulled diagnostics equal
    to ``loopc check``'s and "Format Document" equal to ``loopc fmt``'s for
    a plan, and nothing for another YAML file."""
    real = Path(sys.executable).parent / "loopc"
    if not real.is_file():
        pytest.skip("this Python environment has no loopc script")
    ws = tmp_path / "ws"
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "bin" / "loopc").symlink_to(real)
    text = (ROOT / "examples" / "wait_timeout.yaml").read_text(encoding="utf-8")
    for before, after in BAD_PLAN_EDITS:
        assert before in text
        text = text.replace(before, after, 1)
    plan = ws / "plan.yaml"
    plan.write_text(text, encoding="utf-8")
    other = ws / "deploy.yaml"
    other.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n", encoding="utf-8")
    check = subprocess.run(
        [str(real), "check", "--format", "json", "--no-cache", "--exit-zero", str(plan)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    expected = [
        (d["code"], d["line"] - 1, d["column"] - 1) for d in json.loads(check.stdout)["files"][0]["diagnostics"]
    ]
    assert expected, "the edited plan must have a diagnostic"
    fmt = subprocess.run([str(real), "fmt", "-"], input=text, capture_output=True, text=True, timeout=120, check=True)
    assert fmt.stdout != text
    code = expected[0][0]
    # The settings are awaited before the documents open: a check that starts
    # while the server is still reading them can be served with the old ones.
    for settings, severity in (({}, 1), ({"severity": {code: "warning"}}, 2)):
        args = {
            "find": {"workspaceFolders": [str(ws)], "env": {"PATH": "/nonexistent"}},
            "files": [str(plan), str(other)],
            "settings": settings,
            "awaitSettings": True,
        }
        out = subprocess.run(
            [NODE, str(EXT / "test" / "lspSmoke.js"), json.dumps(args)],  # type: ignore[list-item]
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert out.returncode == 0, out.stderr
        r = json.loads(out.stdout)
        assert r["found"]["source"] == "venv"
        assert r["found"]["command"] == str(ws / ".venv" / "bin" / "loopc")
        assert r["serverInfo"]["name"] == "loopc"
        assert r["pull"] is True
        assert r["debugInfo"]["positionEncoding"] == "utf-16"
        assert r["debugInfo"]["settings"]["severity"] == settings.get("severity", {})
        assert r["configurationRequests"] >= 1
        got = [
            (d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"])
            for d in r["diagnostics"][str(plan)]
        ]
        assert got == expected
        assert [d["severity"] for d in r["diagnostics"][str(plan)]][:1] == [severity]
        assert r["diagnostics"][str(other)] == []
        assert r["formatted"] == {str(plan): fmt.stdout, str(other): other.read_text(encoding="utf-8")}
        # the capabilities vscode-languageclient itself computed were sent
        caps = r["capabilities"]
        assert caps["general"]["positionEncodings"] == ["utf-16"]
        assert caps["textDocument"]["diagnostic"] and caps["workspace"]["configuration"] is True
        assert r["exitCode"] == 0 and r["stderr"] == ""


# -- the .vsix -----------------------------------------------------------------


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The .vsix: CI's build (editors/vscode/loopc.vsix) when it is newer than
    every source file; else built here with vsce (after `npm ci` in a copy
    of the extension when node_modules is missing)."""
    built = EXT / "loopc.vsix"
    newest = max((EXT / s).stat().st_mtime for s in SOURCES)
    if built.is_file() and built.stat().st_mtime >= newest:
        return built
    if NPM is None or NODE is None:
        pytest.skip("npm is not on PATH: the .vsix cannot be built here")
    out = tmp_path_factory.mktemp("vsix")
    src = EXT
    if not (EXT / "node_modules" / "@vscode" / "vsce").is_dir():
        src = out / "vscode"
        shutil.copytree(EXT, src, ignore=shutil.ignore_patterns("node_modules", "*.vsix"))
        subprocess.run(
            [NPM, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=src,
            check=True,
            timeout=300,
            capture_output=True,
        )
    target = out / "loopc.vsix"
    subprocess.run(
        ["npx", "--no-install", "vsce", "package", "--allow-missing-repository", "-o", str(target)],
        cwd=src,
        check=True,
        timeout=300,
        capture_output=True,
    )
    return target


@pytest.mark.slow
def test_vsix_contents(vsix: Path) -> None:
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        packaged = json.loads(z.read("extension/package.json"))
        vsixmanifest = z.read("extension.vsixmanifest").decode("utf-8")
    for f in (
        "extension.vsixmanifest",
        "[Content_Types].xml",
        "extension/package.json",
        "extension/extension.js",
        "extension/findServer.js",
        "extension/readme.md",
        "extension/LICENSE.txt",
    ):
        assert f in names, f
    for mod in RUNTIME_MODULES:
        assert any(n.startswith(f"extension/node_modules/{mod}/") for n in names), mod
    assert not any(
        n.startswith(("extension/node_modules/@vscode/", "extension/node_modules/@azure/", "extension/test/"))
        for n in names
    )
    assert not any(n.endswith((".vsix", ".d.ts", ".map")) for n in names)
    assert packaged["version"] == manifest()["version"]
    assert packaged["activationEvents"] == ["onLanguage:yaml"]
    assert 'Id="loopc"' in vsixmanifest and f'Version="{packaged["version"]}"' in vsixmanifest


LOAD_PACKAGED = (
    "require(process.argv[1]).install('1.82.0');"
    "const ext = require(process.argv[2] + '/extension/extension.js');"
    "const f = require(process.argv[2] + '/extension/findServer.js').findLoopc({env: {PATH: ''}, workspaceFolders: []});"
    "process.stdout.write(JSON.stringify({exports: Object.keys(ext).sort(), found: f.command}));"
)


@needs_node
@pytest.mark.slow
def test_vsix_loads_from_its_own_files(vsix: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(vsix) as z:
        z.extractall(tmp_path / "x")
    out = subprocess.run(
        [NODE, "-e", LOAD_PACKAGED, str(EXT / "test" / "vscodeStub.js"), str(tmp_path / "x")],  # type: ignore[list-item]
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NODE_PATH": ""},
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"exports": ["activate", "deactivate"], "found": None}
