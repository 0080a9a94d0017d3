"""Hostile paths and streams for every ``loopc`` command (docs/language.md
"Command-line output"):

* every command that reads a file reads at most its budget + 1 byte, only
  from a regular file, never blocks on a FIFO or device, and names special
  files precisely (exit 2, one line, no traceback);
* every command whose standard output is a full device or a closed pipe ends
  with one short line on standard error and exit 2 — the language server
  included;
* file names that are not UTF-8 or hold control characters are escaped in
  text and valid UTF-8 (U+FFFD plus ``pathBytes``) in JSON, for every
  command that prints names;
* an over-budget editor document gets one diagnostic and no analysis.
"""
from __future__ import annotations

import base64
import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import loopc
from loopc.cli.main import cli
from loopc.compiler.yamlload import MAX_SOURCE_BYTES

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "src" / "loopc" / "conformance" / "scenarios"
EXAMPLE = ROOT / "examples" / "fork_all_join.yaml"
SCENARIO = KIT / "agent_capacity_fifo.yaml"
SCENARIO_PLAN = KIT / "plans" / "fork_all.yaml"


def _invoke(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return r.exit_code, r.output + (r.stderr if r.stderr_bytes is not None else "")


# --- every reading command ---------------------------------------------------------

#: (command line with {} for the path under test); each reads that path.
READERS = [
    ("check", "{}"), ("check", "--format", "json", "{}"), ("compile", "{}"), ("digest", "{}"),
    ("verify", "{}"), ("plan", "{}"), ("plan", "--catalog", "{}", str(EXAMPLE)),
    ("inventory", "--catalog", "{}", str(ROOT / "examples")), ("graph", "{}"), ("fmt", "--check", "{}"),
    ("run", "{}"),
]


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """name -> (path, the precise reason every command must print)."""
    fifo = tmp_path / "plan.yaml"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.yaml"
    loop.symlink_to("loop.yaml")
    dangling = tmp_path / "dangling.yaml"
    dangling.symlink_to("nowhere.yaml")
    return {
        "fifo": (str(fifo), "is a FIFO (named pipe)"),
        "dev_null": ("/dev/null", "is a character device"),
        "dev_zero": ("/dev/zero", "is a character device"),
        "symlink_loop": (str(loop), "is a symbolic link loop"),
        "dangling": (str(dangling), "is a dangling symbolic link"),
        "directory": (str(tmp_path), "is a directory"),
        "missing": (str(tmp_path / "missing.yaml"), "no such file or directory"),
        "not_a_directory": (str(EXAMPLE / "x.yaml"), "a component of the path is not a directory"),
    }


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cmd", READERS, ids=[" ".join(c) for c in READERS])
def test_special_files_refused_precisely_by_every_reader(cmd: tuple[str, ...], specials) -> None:
    for name, (path, reason) in specials.items():
        if name == "directory" and cmd[0] in ("check", "run", "fmt"):
            continue  # these walk directories
        code, out = _invoke(*[path if a == "{}" else a for a in cmd])
        assert code == 2, (name, code, out)
        if "json" in cmd:
            (entry,) = json.loads(out[out.index("{"):])["files"]
            assert entry["path"] == path and entry["error"].startswith(reason), (name, entry)
        else:
            assert (f"{path}: {reason}" in out
                    or f"{path}:1:1: error[scenario.unreadable]: cannot read: {reason}" in out), (name, out)
        assert "Traceback" not in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
@pytest.mark.parametrize("cmd", READERS, ids=[" ".join(c) for c in READERS])
def test_permission_denied_by_every_reader(cmd: tuple[str, ...], tmp_path: Path) -> None:
    p = tmp_path / "secret.yaml"
    p.write_bytes(EXAMPLE.read_bytes())
    p.chmod(0)
    code, out = _invoke(*[str(p) if a == "{}" else a for a in cmd])
    assert code == 2 and f"{p}: permission denied" in out or "cannot read: permission denied" in out, out


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


@pytest.mark.timeout(60)
def test_over_budget_files_read_to_budget_plus_one(tmp_path: Path, monkeypatch) -> None:
    """A sparse 512 MiB file is refused by every reader after budget + 1
    bytes (reading it all would take seconds and half a gigabyte)."""
    import loopc.boundedio as bio

    reads: list[int] = []
    real = bio.read_bounded

    def spy(path, limit):
        out = real(path, limit)
        if os.path.basename(path).startswith("big"):
            reads.append(len(out))
        return out

    monkeypatch.setattr(bio, "read_bounded", spy)
    big = _sparse(tmp_path / "big.yaml", 512 * 1024 * 1024)
    for cmd in (("check", "{}"), ("compile", "{}"), ("digest", "{}"), ("plan", "{}"), ("graph", "{}")):
        reads.clear()
        code, out = _invoke(*[str(big) if a == "{}" else a for a in cmd])
        assert code in (1, 2) and "LP1010" in out, (cmd, out)
        assert reads == [MAX_SOURCE_BYTES + 1], (cmd, reads)
    reads.clear()
    code, out = _invoke("fmt", str(big))
    assert code == 2 and "larger than the 1,048,576-byte source budget (LP1010)" in out
    assert reads == [MAX_SOURCE_BYTES + 1]
    from loopc.plan.catalog import MAX_CATALOG_BYTES

    reads.clear()
    code, out = _invoke("plan", "--catalog", str(big), str(EXAMPLE))
    assert code == 1 and "LP1010" in out and reads[0] == MAX_CATALOG_BYTES + 1
    from loopc.ir.verifier import MAX_ARTIFACT_FILE_BYTES

    reads.clear()
    code, out = _invoke("verify", str(big))
    assert code == 1 and f"larger than {MAX_ARTIFACT_FILE_BYTES} bytes" in out
    assert reads == [MAX_ARTIFACT_FILE_BYTES + 1]
    reads.clear()
    scen = tmp_path / "big_scenario.yaml"
    _sparse(scen, 512 * 1024 * 1024)
    code, out = _invoke("run", str(scen))
    assert code == 2 and "larger than 1 MiB" in out and reads == [1024 * 1024 + 1]


@pytest.mark.timeout(60)
def test_scenario_whose_plan_is_special(tmp_path: Path) -> None:
    """The plan a scenario names is read like any source: a FIFO is named,
    not waited on."""
    sc = tmp_path / "s.yaml"
    sc.write_text(SCENARIO.read_text(encoding="utf-8").replace("plans/fork_all.yaml", "plan.yaml"), encoding="utf-8")
    os.mkfifo(tmp_path / "plan.yaml")
    code, out = _invoke("run", str(sc))
    assert code == 2 and "cannot read plan 'plan.yaml': is a FIFO (named pipe)" in out


@pytest.mark.timeout(60)
def test_directories_with_special_files(tmp_path: Path) -> None:
    """Walking commands (run, inventory) name a FIFO or a symbolic-link loop
    in a directory instead of blocking or skipping it silently."""
    (tmp_path / "plans").mkdir()
    shutil.copy(SCENARIO, tmp_path / "ok.yaml")
    shutil.copy(SCENARIO_PLAN, tmp_path / "plans" / "fork_all.yaml")
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    code, out = _invoke("run", str(tmp_path))
    assert code == 2
    assert "fifo.yaml:1:1: error[scenario.unreadable]: cannot read: is a FIFO" in out
    assert "loop.yaml:1:1: error[scenario.unreadable]: cannot read: is a symbolic link loop" in out
    assert "1 passed, 0 failed, 2 malformed" in out
    code, out = _invoke("inventory", str(tmp_path))
    assert code == 2 and "fifo.yaml: is a FIFO" in out and "loop.yaml: is a symbolic link loop" in out


@pytest.mark.timeout(60)
def test_special_configuration_and_gitignore_never_block(tmp_path: Path) -> None:
    """A FIFO as .loopc.toml or .gitignore is reported or ignored, never
    waited on (check walks the directory; config reads the file)."""
    shutil.copy(EXAMPLE, tmp_path / "p.yaml")
    os.mkfifo(tmp_path / ".gitignore")
    os.mkfifo(tmp_path / ".loopc.toml")
    r = subprocess.run([sys.executable, "-m", "loopc", "check", "."], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and ".loopc.toml: is a FIFO (named pipe)" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "loopc", "config"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and ".loopc.toml: is a FIFO (named pipe)" in r.stderr
    from loopc.lsp.project import config_for

    _cfg, problems = config_for(str(tmp_path / "p.yaml"))
    assert any("is a FIFO" in p for p in problems), problems


def test_library_file_helpers_raise_read_errors(tmp_path: Path) -> None:
    """plan_file / load_catalog_file / check_file / compile_file read bounded
    and raise ReadError (an OSError) with the precise reason."""
    from loopc.boundedio import ReadError
    from loopc.plan.api import plan_file
    from loopc.plan.catalog import load_catalog_file

    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    for fn in (plan_file, load_catalog_file, loopc.check_file, loopc.compile_file):
        with pytest.raises(ReadError) as info:
            fn(str(fifo))
        assert "FIFO" in info.value.reason


# --- output failures for every command ----------------------------------------------

def _cmds(tmp: Path) -> list[list[str]]:
    bad = tmp / "bad.yaml"
    bad.write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\n" + "".join(f"x{i}: 1\n" for i in range(300)))
    ugly = tmp / "ugly.yaml"
    ugly.write_text(EXAMPLE.read_text(encoding="utf-8").replace("input:", "input:  ", 1), encoding="utf-8")
    art = tmp / "a.json"
    art.write_bytes(loopc.compile_source(EXAMPLE.read_bytes()).bytes)
    ex, sc = str(EXAMPLE), str(SCENARIO)
    return [
        ["--help"], ["--version"], ["check", "--help"],
        ["explain", "--list"], ["explain", "LP1005"],
        *(["check", "--no-cache", "--format", f, str(bad)] for f in ("text", "json", "sarif", "github", "gitlab",
                                                                      "junit")),
        ["compile", ex], ["compile", "--pretty", ex], ["digest", ex], ["verify", str(art)],
        ["plan", ex], ["plan", "--format", "json", ex], ["catalog"],
        ["inventory", str(ROOT / "examples")], ["inventory", "--format", "json", str(ROOT / "examples")],
        ["graph", ex], ["graph", "--format", "dot", ex],
        ["fmt", "--check", str(ugly)],
        ["run", sc], ["run", "--format", "json", sc], ["run", "--trace", sc],
        ["run", str(KIT / "plans" / ".." )],
        ["config"],
    ]


def _lsp_input() -> bytes:
    msg = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    return f"Content-Length: {len(msg)}\r\n\r\n{msg}".encode()


def _run_to(args: list[str], target: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "loopc", *args]
    if target == "full":
        with open("/dev/full", "wb") as full:
            return subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, input=stdin, timeout=120)
    rfd, wfd = os.pipe()
    os.close(rfd)  # the reader is gone before the first write: EPIPE
    try:
        return subprocess.run(argv, stdout=wfd, stderr=subprocess.PIPE, input=stdin, timeout=120)
    finally:
        os.close(wfd)


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_every_command_with_full_or_closed_stdout(tmp_path: Path) -> None:
    cmds = _cmds(tmp_path)
    failures = []
    for args in [*cmds, ["lsp"]]:
        for target, reason in (("full", "No space left on device"), ("pipe", "Broken pipe")):
            r = _run_to(args, target, _lsp_input() if args == ["lsp"] else None)
            err = r.stderr.decode("utf-8", "replace")
            ok = (r.returncode == 2 and f"loopc: cannot write to standard output: {reason}" in err
                  and "Traceback" not in err and "Exception ignored" not in err)
            if not ok:
                failures.append((args, target, r.returncode, err[-300:]))
    assert not failures, failures


def test_head_of_a_long_listing_is_quiet() -> None:
    """``loopc explain --list | head -1``: the reader goes away after one
    line; loopc says so in one line and exits 2, nothing else."""
    p = subprocess.Popen([sys.executable, "-m", "loopc", "explain", "--list"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) in (0, 2)  # 0 when everything fit in the pipe before the reader left
    assert first.startswith(b"LP")
    assert "Traceback" not in err and "Exception ignored" not in err
    assert err in ("", "loopc: cannot write to standard output: Broken pipe\n")


# --- file names in every command's output ---------------------------------------------

@pytest.mark.skipif(sys.platform != "linux", reason="needs byte file names")
@pytest.mark.timeout(300)
@pytest.mark.slow
def test_hostile_file_names_in_every_command(tmp_path: Path) -> None:
    base = os.fsencode(str(tmp_path)) + b"/bad\xff\x1b[31m\n"
    plan = base + b".yaml"
    shutil.copy(EXAMPLE, plan)
    (tmp_path / "plans").mkdir()
    shutil.copy(SCENARIO_PLAN, tmp_path / "plans" / "fork_all.yaml")
    scen = base + b"scenario.yaml"
    shutil.copy(SCENARIO, scen)
    art = base + b".json"
    with open(art, "wb") as fh:
        fh.write(loopc.compile_source(EXAMPLE.read_bytes()).bytes)
    missing = base + b".missing"
    d = os.fsencode(str(tmp_path))
    text_cmds = [["compile", missing], ["digest", missing], ["verify", art], ["verify", missing],
                 ["plan", plan], ["plan", "--catalog", missing, plan], ["graph", missing], ["fmt", "--check", missing],
                 ["inventory", d], ["run", scen], ["run", d], ["run", missing], ["check", missing]]
    for args in text_cmds:
        r = subprocess.run([sys.executable, "-m", "loopc", *args], capture_output=True, timeout=120)
        for stream in (r.stdout, r.stderr):
            text = stream.decode("utf-8")  # valid UTF-8
            assert "\x1b" not in text and "Traceback" not in text, (args, text)
        both = (r.stdout + r.stderr).decode()
        assert "bad\\xff\\x1b[31m\\x0a" in both, (args, both)
    raw_ok = base64.b64encode(plan).decode()
    for args, key in ((["inventory", "--format", "json", d], "plans"), (["run", "--format", "json", d], "scenarios"),
                      (["check", "--format", "json", plan], "files")):
        r = subprocess.run([sys.executable, "-m", "loopc", *args], capture_output=True, timeout=120)
        doc = json.loads(r.stdout.decode("utf-8"))
        entries = doc[key]
        named = [e for e in entries if "bad\ufffd\x1b[31m\n" in (e.get("path") or e.get("scenario") or "")]
        assert named, (args, entries)
        for e in named:
            k = "pathBytes" if "path" in e else "scenarioBytes"
            raw = base64.b64decode(e[k])
            assert raw.startswith(base) and os.path.exists(raw), e
        if key != "scenarios":
            assert any(e.get("pathBytes") == raw_ok for e in entries)


def test_utf8_json_repairs_every_string() -> None:
    from loopc.cli.formats.json import utf8_json

    name = os.fsdecode(b"x\xff.yaml")
    doc = utf8_json({"path": name, "scenario": name, "list": [name, "\ud800ok"], "n": 1, name: "v"})
    text = json.dumps(doc, ensure_ascii=False)
    text.encode("utf-8")
    assert doc["path"] == doc["scenario"] == "x\ufffd.yaml"
    assert base64.b64decode(doc["pathBytes"]) == base64.b64decode(doc["scenarioBytes"]) == b"x\xff.yaml"
    assert doc["list"] == ["x\ufffd.yaml", "\ufffdok"] and doc["x\ufffd.yaml"] == "v"


# --- the language server's over-budget document -------------------------------------

def test_lsp_over_budget_document_gets_one_diagnostic_and_no_analysis(monkeypatch) -> None:
    from loopc.lsp import analysis as A

    called: list[int] = []
    import loopc.pipeline as drv

    real = drv.check_source
    monkeypatch.setattr(drv, "check_source", lambda *a, **k: called.append(1) or real(*a, **k))
    head = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"
    for text in (head + "x: " + "a" * MAX_SOURCE_BYTES + "\n",  # over by characters
                 head + "x: " + "漢" * (MAX_SOURCE_BYTES // 3) + "\n"):  # under by characters, over in UTF-8
        a = A.analyse("file:///big.yaml", text, 1, "utf-16")
        assert a.over_budget and a.result is None and a.plan is None and called == []
        (d,) = a.diagnostics
        assert d.code == "LP1010" and "not analysed" in d.message
        assert (d.range.start.line, d.range.start.character) == (0, 0)
    small = head + "x: " + "漢" * 1000 + "\n"
    assert not A.source_over_budget(small) and not A.analyse("file:///s.yaml", small, 1, "utf-16").over_budget
    assert called == [1]


# --- output hygiene in every check format ------------------------------------------------

@pytest.mark.skipif(sys.platform != "linux", reason="needs byte file names")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "gitlab", "junit"])
def test_every_format_escapes_names_and_stays_utf8(tmp_path: Path, fmt: str) -> None:
    """A name with a non-UTF-8 byte, ESC and a newline, and a source line
    holding U+2028 and NEL: every format is valid UTF-8 (valid JSON / XML
    where it is one), never carries a raw ESC, and keeps one record per line
    where it is line-based; JSON formats carry the raw name as pathBytes."""
    import xml.etree.ElementTree as ET

    raw = os.fsencode(str(tmp_path)) + b"/bad\xff\x1b[31m\n.yaml"
    with open(raw, "w", encoding="utf-8") as fh:
        fh.write("apiVersion: loop.plan/v1\nkind: PlanVersion\nx1: 'a\u2028b\x85c'\nx2: 1\n")
    r = subprocess.run([sys.executable, "-m", "loopc", "check", "--no-cache", "--format", fmt, os.fsdecode(raw)],
                       capture_output=True, timeout=60)
    assert r.returncode == 1, r.stderr
    out = r.stdout.decode("utf-8")
    assert "\x1b" not in out
    b64 = base64.b64encode(raw).decode()
    if fmt == "text":
        heads = [ln for ln in out.split("\n") if "error[" in ln]
        assert len(heads) == 4 and all(ln.startswith(f"{tmp_path}/bad\\xff\\x1b[31m\\x0a.yaml:") for ln in heads)
        (shown,) = [ln for ln in out.split("\n") if "x1:" in ln]
        assert "<U+2028>" in shown and "<U+0085>" in shown and "\u2028" not in out and "\x85" not in out
    elif fmt == "json":
        (f,) = json.loads(out)["files"]
        assert f["pathBytes"] == b64 and f["path"].endswith("bad\ufffd\x1b[31m\n.yaml")
    elif fmt == "gitlab":
        issues = json.loads(out)
        assert len(issues) == 4 and all(i["location"]["pathBytes"] == b64 for i in issues)
        assert all("\ufffd" in i["location"]["path"] for i in issues)
    elif fmt == "sarif":
        doc = json.loads(out)
        uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
                for res in doc["runs"][0]["results"] for loc in res["locations"]}
        assert uris == {"file://" + str(tmp_path) + "/bad%FF%1B%5B31m%0A.yaml"}, uris
    elif fmt == "github":
        lines = out.splitlines()
        assert len(lines) == 4 and all(ln.startswith("::error file=") for ln in lines)
        assert all("bad\\xff\\x1b[31m%0A.yaml," in ln for ln in lines)
    else:
        root = ET.fromstring(r.stdout)
        (case,) = root.iter("testcase")
        failure = case.find("failure")
        assert failure is not None and failure.text is not None
        assert len(failure.text.split("\n")) == 4 and "bad\\xff\\x1b[31m\\x0a.yaml:3:1" in failure.text


# --- fresh cases of each kind (session 3) -------------------------------------------------

def test_scenario_plan_name_with_nul(tmp_path: Path) -> None:
    sc = tmp_path / "s.yaml"
    sc.write_text(SCENARIO.read_text(encoding="utf-8").replace("plans/fork_all.yaml", '"pl\\0an.yaml"'),
                  encoding="utf-8")
    code, out = _invoke("run", str(sc))
    assert code == 2 and "cannot read plan 'pl\\x00an.yaml': file name contains a NUL character" in out
    from loopc.boundedio import ReadError, read_bounded

    with pytest.raises(ReadError) as info:
        read_bounded("a\0b", 10)
    assert info.value.reason == "file name contains a NUL character"


@pytest.mark.timeout(60)
def test_output_files_never_block_and_fail_cleanly(tmp_path: Path) -> None:
    """-o to a FIFO without a reader is refused at once (not waited on); an
    unwritable -o names the file, not standard output."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    for cmd in ("compile", "graph"):
        code, out = _invoke(cmd, "-o", str(fifo), str(EXAMPLE))
        assert code == 2 and f"{fifo}: cannot write: is a FIFO (named pipe) with no reader" in out, out
        code, out = _invoke(cmd, "-o", "/dev/full", str(EXAMPLE))
        assert code == 2 and "/dev/full: cannot write: no space left on device" in out, out
        code, out = _invoke(cmd, "-o", str(tmp_path / "no" / "x"), str(EXAMPLE))
        assert code == 2 and "cannot write: no such file or directory" in out and "standard output" not in out
        code, out = _invoke(cmd, "-o", "/dev/null", str(EXAMPLE))
        assert code == 0, out
    target = tmp_path / "a.json"
    assert _invoke("compile", "-o", str(target), str(EXAMPLE))[0] == 0
    assert target.read_bytes() == loopc.compile_source(EXAMPLE.read_bytes()).bytes


def test_explain_escapes_and_shortens_the_unknown_code() -> None:
    code, out = _invoke("explain", "LP\x1b[31m")
    assert code == 2 and "unknown diagnostic code LP\\x1b[31m" in out and "\x1b" not in out
    code, out = _invoke("explain", "L" * 100_000)
    assert code == 2 and "(100,000 characters)" in out and len(out) < 300


@pytest.mark.timeout(60)
def test_dense_artifact_over_the_canonical_budget_is_refused_before_parsing() -> None:
    """A 64 MiB artifact of ``[0,0,...]`` fits the file cap but can never be
    within the 8 MiB canonical budget: refused from its structural
    characters, without building 32 million values."""
    from loopc.ir.verifier import MAX_ARTIFACT_BYTES, MAX_ARTIFACT_FILE_BYTES, canonical_floor

    n = (MAX_ARTIFACT_FILE_BYTES - 16) // 2
    data = b'{"a": [' + b"0," * n + b"0]}"
    assert len(data) <= MAX_ARTIFACT_FILE_BYTES
    res = loopc.ir.verify(data)
    assert not res.ok and res.violations[0].code == "budget" and "at least" in res.message
    good = loopc.compile_source(EXAMPLE.read_bytes()).bytes
    assert canonical_floor(good) <= len(good) and loopc.ir.verify(good).ok
    pretty = json.dumps(json.loads(good), indent=8).encode()
    assert canonical_floor(pretty) == canonical_floor(good) < MAX_ARTIFACT_BYTES


def _lsp_run(data: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "loopc", "lsp"], input=data, capture_output=True, timeout=60)


def _frame(obj: dict) -> bytes:
    b = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(b) + b


@pytest.mark.timeout(120)
def test_lsp_hostile_framing() -> None:
    """A Content-Length of 100 GB is neither allocated nor waited for: one
    line, exit 2; a 10 MB header line is read in bounded pieces and the
    session goes on."""
    init = _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    bye = _frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}) + _frame({"jsonrpc": "2.0", "method": "exit"})
    r = _lsp_run(init + b"Content-Length: 100000000000\r\n\r\n{}")
    err = r.stderr.decode()
    assert r.returncode == 2 and "message of 100000000000 bytes is over the limit" in err and "Traceback" not in err
    r = _lsp_run(init + b"X-Junk: " + b"a" * 10_000_000 + b"\r\n" + bye)
    assert r.returncode == 0 and b'"id": 9' in r.stdout.replace(b'"id":9', b'"id": 9'), r.stderr[-500:]


def _lsp_messages(stdout: bytes) -> list[dict]:
    """The JSON bodies of the server's framed messages, in order."""
    out, rest = [], stdout
    while rest:
        head, _, rest = rest.partition(b"\r\n\r\n")
        n = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
        out.append(json.loads(rest[:n]))
        rest = rest[n:]
    return out


@pytest.mark.timeout(120)
def test_lsp_malformed_messages_one_line_each() -> None:
    """Invalid JSON, invalid UTF-8 and JSON nested past the parser's limit
    each get the JSON-RPC 2.0 Parse error response (-32700, id null) and one
    line on standard error (no traceback); the session goes on
    (docs/editors.md#malformed-messages)."""
    init = _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    bye = _frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}) + _frame({"jsonrpc": "2.0", "method": "exit"})
    deep = b'{"jsonrpc":"2.0","id":3,"method":"x","params":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    r = _lsp_run(init + b"Content-Length: 5\r\n\r\n{{{{{" + b"Content-Length: %d\r\n\r\n" % len(deep) + deep
                 + b'Content-Length: 3\r\n\r\n"\xff"' + bye)
    err = r.stderr.decode()
    assert r.returncode == 0 and "Traceback" not in err, err[-1000:]
    assert err.count("loopc: ignored a malformed protocol message") == 3, err
    msgs = _lsp_messages(r.stdout)
    assert [m.get("id") for m in msgs] == [1, None, None, None, 9]
    errors = [m["error"] for m in msgs[1:4]]
    assert [e["code"] for e in errors] == [-32700] * 3 and all("id" in m and m["id"] is None for m in msgs[1:4])
    assert errors[0]["message"].startswith("Parse error: Expecting property name")
    assert errors[1]["message"] == "Parse error: nested too deeply"
    assert "utf-8" in errors[2]["message"]
    assert not any(m.get("method") == "window/showMessage" for m in msgs)


@pytest.mark.timeout(120)
def test_lsp_json_that_is_not_a_message_is_an_invalid_request() -> None:
    """A number, an array or an object without ``jsonrpc``: -32600 Invalid
    Request (with the object's id when it has one), one line on standard
    error, no traceback; a well-formed request afterwards is answered."""
    init = _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    bye = _frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}) + _frame({"jsonrpc": "2.0", "method": "exit"})
    r = _lsp_run(init + b"Content-Length: 3\r\n\r\n[1]" + b"Content-Length: 1\r\n\r\n5"
                 + _frame({"id": 4, "method": "shutdown"}) + _frame({"id": True, "method": "x"}) + bye)
    err = r.stderr.decode()
    assert r.returncode == 0 and "Traceback" not in err, err[-1000:]
    msgs = _lsp_messages(r.stdout)
    assert [m.get("id") for m in msgs] == [1, None, None, 4, None, 9]
    assert [m["error"]["code"] for m in msgs[1:5]] == [-32600] * 4
    assert "a JSON array" in msgs[1]["error"]["message"] and "a JSON number" in msgs[2]["error"]["message"]
    assert err.count("not a JSON-RPC 2.0 message") == 4, err
    assert msgs[5] == {"id": 9, "jsonrpc": "2.0", "result": None}


@pytest.mark.timeout(120)
def test_lsp_params_that_do_not_fit_the_method() -> None:
    """A request whose params do not fit its method is answered with -32602
    Invalid params and its own id (the client is never left waiting); a
    notification with such params gets one window/showMessage; one line on
    standard error each, no traceback; the session goes on
    (docs/editors.md#malformed-messages)."""
    init = _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    bye = _frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}) + _frame({"jsonrpc": "2.0", "method": "exit"})
    r = _lsp_run(init
                 + _frame({"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"textDocument": 7}})
                 + _frame({"jsonrpc": "2.0", "id": "s", "method": "textDocument/definition", "params": []})
                 + _frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 7}})
                 + bye)
    err = r.stderr.decode()
    assert r.returncode == 0 and "Traceback" not in err, err[-1000:]
    msgs = _lsp_messages(r.stdout)
    assert [m.get("id") for m in msgs] == [1, 5, "s", None, 9]
    assert [m["error"]["code"] for m in msgs[1:3]] == [-32602, -32602]
    assert "textDocument/hover" in msgs[1]["error"]["message"]
    assert msgs[3]["method"] == "window/showMessage" and "didOpen" in msgs[3]["params"]["message"]
    assert err.count("loopc: answered request") == 2 and err.count("loopc: ignored a textDocument/didOpen") == 1
    assert msgs[4] == {"id": 9, "jsonrpc": "2.0", "result": None}
