"""The hostile corpus (benchmarks/hostile.py) at its small sizes, plus the
read-path, output-failure and file-name cases that need a filesystem or a
subprocess.  Each case asserts its outcome; pytest-timeout turns a hang or a
quadratic blow-up into a failure (speed itself is measured by the
benchmark, not here)."""
from __future__ import annotations

import base64
import errno
import importlib.util
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import loopc
from loopc import limits
from loopc.boundedio import ReadError, read_bounded
from loopc.cli import textsafe
from loopc.cli.formats import FileReport
from loopc.cli.formats import json as json_format
from loopc.cli.formats import text as text_format

from conftest import ROOT
_spec = importlib.util.spec_from_file_location("loopc_bench_hostile", ROOT / "benchmarks" / "hostile.py")
assert _spec is not None and _spec.loader is not None
hostile = importlib.util.module_from_spec(_spec)
sys.modules["loopc_bench_hostile"] = hostile
_spec.loader.exec_module(hostile)

CASES = [(c, n) for c in hostile.CASES for n in c.test_sizes]
EXAMPLE = ROOT / "examples" / "fork_all_join.yaml"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case,size", CASES, ids=[f"{c.name}-{n}" for c, n in CASES])
def test_hostile_source_case(case, size) -> None:
    case.expect(hostile.run_case(case.make(size)))


# --- the diagnostic limit ------------------------------------------------------

def test_diagnostic_limit_lp1013_summary() -> None:
    src = hostile.unknown_keys(250)
    full = loopc.check_source(src, max_diagnostics=None)
    res = loopc.check_source(src)
    total = len(full.diagnostics)
    assert total > 250 and full.suppressed == 0
    assert len(res.diagnostics) == 201 and res.suppressed == total - 200
    assert res.diagnostics[:200] == full.diagnostics[:200]
    last = res.diagnostics[-1]
    assert last.code == "LP1013" and last.name == "resource.diagnostic_limit"
    assert last.severity is loopc.Severity.ERROR
    assert last.span == full.diagnostics[200].span
    assert f"{total - 200} more diagnostics not shown" in last.message
    assert f"({total - 200} errors, 0 warnings)" in last.message
    assert res.error_count == len(full.errors) and not res.ok
    few = loopc.check_source(src, max_diagnostics=3)
    assert [d.code for d in few.diagnostics][-1] == "LP1013" and len(few.diagnostics) == 4
    assert loopc.check_source(src, max_diagnostics=0).diagnostics == full.diagnostics
    assert loopc.compile_source(src, max_diagnostics=10).diagnostics[-1].code == "LP1013"


def test_diagnostic_limit_summary_takes_the_highest_dropped_severity() -> None:

    from loopc.pipeline.check import cap_diagnostics

    d = loopc.check_source(hostile.unknown_keys(4), max_diagnostics=None).diagnostics
    kept, n = cap_diagnostics(d, 2)
    assert n == len(d) - 2 and kept[-1].code == "LP1013" and kept[-1].severity is loopc.Severity.ERROR
    warned = tuple(x.evolve(severity=loopc.Severity.WARNING) for x in d)
    kept, n = cap_diagnostics(warned, 2)
    assert kept[-1].severity is loopc.Severity.WARNING and "0 errors" in kept[-1].message
    assert cap_diagnostics(d, len(d)) == (d, 0)
    assert cap_diagnostics(d, None) == (d, 0)


def test_cli_max_diagnostics_option_in_every_format(tmp_path: Path) -> None:
    p = tmp_path / "many.yaml"
    p.write_text(hostile.unknown_keys(30))
    r = _loopc("check", "--max-diagnostics", "5", str(p))
    assert r.returncode == 1
    assert r.stdout.count("error[") == 6 and "error[LP1013]" in r.stdout
    total = len(loopc.check_source(p.read_text(), max_diagnostics=None).diagnostics)
    assert f"checked 1 file(s): {total} error(s)" in r.stderr
    j = json.loads(_loopc("check", "--format", "json", "--max-diagnostics", "5", str(p)).stdout)
    assert j["files"][0]["suppressed"] == total - 5 and j["summary"]["errors"] == total
    assert j["files"][0]["diagnostics"][-1]["code"] == "LP1013"
    assert _loopc("check", "--max-diagnostics", "0", str(p)).stdout.count("error[") == total
    assert _loopc("check", "--max-diagnostics", "-1", str(p)).returncode == 2


# --- streaming output ------------------------------------------------------------

def test_streamed_json_is_the_whole_document() -> None:
    files = [FileReport("a.yaml", loopc.check_source(hostile.unknown_keys(3)).diagnostics),
             FileReport("b.yaml", ()),
             FileReport("c\udcff.yaml", loopc.check_source(hostile.dup_keys_flow(2)).diagnostics)]
    buf = io.StringIO()
    json_format.write(iter(files), buf)
    doc = {"files": [json_format.file_json(r) for r in files],
           "summary": {"files": 3, "errors": sum(len(r.diagnostics) for r in files), "warnings": 0}}
    assert all(d.severity is loopc.Severity.ERROR for r in files for d in r.diagnostics)
    assert buf.getvalue() == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert json_format.render(files) == buf.getvalue()
    assert json_format.render([]) == json.dumps({"files": [], "summary": {"files": 0, "errors": 0, "warnings": 0}},
                                                indent=2) + "\n"
    json.loads(buf.getvalue().encode("utf-8"))


def test_streamed_text_is_the_rendered_text() -> None:
    res = loopc.check_source(hostile.unknown_keys(3))
    files = [FileReport("a.yaml", res.diagnostics, res.document.text)]
    buf = io.StringIO()
    text_format.write(iter(files), buf)
    assert buf.getvalue() == text_format.render(files)
    assert buf.getvalue().count("error[LP2007]") == 3


# --- excerpts and escaping -----------------------------------------------------------

def test_excerpt_is_linear_and_windowed() -> None:
    line = "x" * 100_000
    shown, caret = text_format.excerpt(line, 50_000, 50_003)
    assert len(shown) <= text_format.EXCERPT_WIDTH + 2 and shown.startswith("…") and shown.endswith("…")
    assert caret.endswith("^~~") and caret.index("^") == 1 + text_format.EXCERPT_LEAD
    assert shown[caret.index("^")] == "x"


def test_excerpt_widths_tabs_and_unsafe_characters() -> None:
    shown, caret = text_format.excerpt("a\tb😀c\u2028d\x1be", 5, 6)
    assert shown == "a\tb😀c<U+2028>d<U+001B>e"
    assert caret == " \t   ^"
    _, caret = text_format.excerpt("漢字 x", 4, 5)
    assert caret == "     ^"
    _, caret = text_format.excerpt("👨‍👩‍👧 x", 7, 8)  # one grapheme cluster, two columns
    assert caret == "   ^"


@pytest.mark.parametrize("line,col,end,caret", [
    ("e\u0301e\u0301 x", 5, 6, "  ^"),          # combining marks add no column
    ("e\u0301e\u0301 x", 2, 3, "^"),            # a column inside a cluster: the whole cluster
    ("👩\u200d💻 x", 3, 4, "^~"),                # inside a ZWJ sequence: the sequence, two columns
    ("🇯🇵🇫🇷 x", 3, 5, "  ^~"),                   # regional-indicator pairs are one flag each
    ("漢字 x", 1, 3, "^~~~"),                    # East Asian wide: two columns each
    ("ก\u0e31 x", 4, 5, "  ^"),                  # a Thai vowel sign joins its consonant
    ("a\u200bb x", 5, 6, "   ^"),                # a zero-width space takes no column
])
def test_excerpt_columns_are_grapheme_clusters(line: str, col: int, end: int, caret: str) -> None:
    shown, got = text_format.excerpt(line, col, end)
    assert shown == line and got == caret


def test_excerpt_window_never_splits_a_cluster() -> None:
    line = "👩\u200d💻" * 200 + " x"  # three code points, two columns each
    shown, caret = text_format.excerpt(line, 302, 303)  # inside the 101st sequence
    body = shown.strip("…")
    assert body.startswith("👩\u200d💻") and body.endswith("👩\u200d💻")
    # the window opens at a sequence boundary 60 code points back (20 sequences)
    assert caret == " " * (1 + 20 * 2) + "^~"


def test_source_lines_split_where_positions_split() -> None:
    assert text_format.source_lines("a\u2028b\x85c\r\nd\re\nf") == ["a\u2028b\x85c", "d", "e", "f"]


def test_escape_text() -> None:
    assert textsafe.escape_text("plain ✓ 漢字") == "plain ✓ 漢字"
    assert textsafe.escape_text("a\nb\x1b[31m\u202e\udcff") == "a\\x0ab\\x1b[31m\\u202e\\xff"


def test_path_json_keeps_utf8_and_raw_bytes() -> None:
    assert json_format.path_json("ok.yaml") == {"path": "ok.yaml"}
    got = json_format.path_json(os.fsdecode(b"bad\xffname.yaml"))
    assert got["path"] == "bad\ufffdname.yaml"
    assert base64.b64decode(got["pathBytes"]) == b"bad\xffname.yaml"


# --- numbers and durations -------------------------------------------------------------

@pytest.mark.parametrize("text,ok", [
    ("9007199254740991", True), ("1.5", True), ("0.1", True), ("1e300", True),
    ("3.14159265358979323846", False), ("1" * 65, False), ("0." + "0" * 40 + "1", True),
    ("1" * 64, True),
])
def test_number_text_bounds(text: str, ok: bool) -> None:
    assert (limits.number_text_problem(text) is None) is ok


@pytest.mark.parametrize("text,ok", [
    ("PT30S", True), ("P1D", True), ("P3650D", True), ("P3651D", False), ("PT315360000S", True),
    ("PT315360001S", False), ("PT0.123456789S", True), ("PT0.1234567891S", False),
    ("P" + "9" * 5000 + "D", False), ("P", False), ("PT", False), ("P1DT", False), ("P3650DT0.5S", False),
])
def test_duration_bounds(text: str, ok: bool) -> None:
    assert limits.is_duration(text) is ok
    assert (limits.duration_seconds(text) is not None) is ok


def test_zero_padded_one_is_not_infinity() -> None:
    res = loopc.check_source(hostile.zero_padded_one(3001))
    (d,) = [d for d in res.diagnostics if d.code == "LP2017"]
    assert "3,001 characters" in d.message and "infinity" not in d.message


# --- read paths -------------------------------------------------------------------------

def _reason(path: str | Path, limit: int = 1024) -> str:
    with pytest.raises(ReadError) as info:
        read_bounded(str(path), limit)
    assert isinstance(info.value, OSError)
    return info.value.reason


@pytest.mark.timeout(10)
def test_special_files_are_refused_precisely(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.yaml"
    os.mkfifo(fifo)
    assert "FIFO" in _reason(fifo)
    assert "character device" in _reason("/dev/null")
    assert "character device" in _reason("/dev/zero")
    assert "is a directory" in _reason(tmp_path)
    loop = tmp_path / "loop.yaml"
    loop.symlink_to("loop.yaml")
    assert "symbolic link loop" in _reason(loop)
    dangling = tmp_path / "dangling.yaml"
    dangling.symlink_to("nowhere.yaml")
    assert "dangling symbolic link" in _reason(dangling)
    assert _reason(tmp_path / "missing.yaml") == "no such file or directory"
    assert "not a directory" in _reason(EXAMPLE / "x.yaml")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_permission_denied(tmp_path: Path) -> None:
    p = tmp_path / "secret.yaml"
    p.write_text("x: 1\n")
    p.chmod(0)
    assert _reason(p) == "permission denied"


def test_over_budget_file_is_read_to_budget_plus_one(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:
        fh.truncate(64 * 1024 * 1024)  # sparse
    assert len(read_bounded(str(big), 1000)) == 1001
    assert len(read_bounded(str(EXAMPLE), 10**9)) == EXAMPLE.stat().st_size
    assert {d.code for d in loopc.check_file(str(big)).diagnostics} == {"LP1010"}


def _loopc(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "loopc", *args], capture_output=True, text=True,
                          timeout=60, **kw)


@pytest.mark.timeout(60)
def test_checking_a_directory_with_special_files_never_hangs(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_bytes(EXAMPLE.read_bytes())
    os.mkfifo(tmp_path / "plan.yaml")
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    r = _loopc("check", str(tmp_path))
    assert r.returncode == 2
    assert "plan.yaml: is a FIFO (named pipe)" in r.stderr
    assert "loop.yaml: is a symbolic link loop" in r.stderr
    assert "checked 1 file(s): 0 error(s)" in r.stderr
    r = _loopc("check", "/dev/null")
    assert r.returncode == 2 and "/dev/null: is a character device" in r.stderr
    r = _loopc("compile", "/dev/zero")
    assert r.returncode == 2 and "/dev/zero: is a character device" in r.stderr
    assert "Traceback" not in r.stderr


# --- output failures ----------------------------------------------------------------------

_OUTPUT_COMMANDS = [
    ("check", "--format", "json", "BAD"), ("check", "BAD"), ("compile", "OK"), ("compile", "--pretty", "OK"),
    ("digest", "OK"), ("verify", "ART"), ("explain", "LP1005"),
]


def _args(tmp_path: Path, cmd: tuple[str, ...]) -> list[str]:
    bad = tmp_path / "bad.yaml"
    bad.write_text(hostile.unknown_keys(300))
    art = tmp_path / "a.json"
    if not art.exists():
        art.write_bytes(loopc.compile_source(EXAMPLE.read_bytes()).bytes)
    return [{"BAD": str(bad), "OK": str(EXAMPLE), "ART": str(art)}.get(a, a) for a in cmd]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cmd", _OUTPUT_COMMANDS, ids=[" ".join(c) for c in _OUTPUT_COMMANDS])
@pytest.mark.slow
def test_full_device_and_closed_pipe(tmp_path: Path, cmd: tuple[str, ...]) -> None:
    args = [sys.executable, "-m", "loopc", *_args(tmp_path, cmd)]
    with open("/dev/full", "w") as full:
        r = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "loopc: cannot write to standard output: No space left on device" in r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr
    rfd, wfd = os.pipe()
    os.close(rfd)
    try:
        r = subprocess.run(args, stdout=wfd, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(wfd)
    assert r.returncode == 2, r.stderr
    assert "cannot write to standard output" in r.stderr and errno.errorcode[errno.EPIPE]
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr


# --- hostile file names ----------------------------------------------------------------

@pytest.mark.skipif(sys.platform != "linux", reason="needs byte file names")
def test_hostile_file_names(tmp_path: Path) -> None:
    raw = os.fsencode(str(tmp_path)) + b"/bad\xff\x1b[31mname\n.yaml"
    with open(raw, "w") as fh:
        fh.write(hostile.unknown_keys(1))
    r = subprocess.run([sys.executable, "-m", "loopc", "check", "--format", "json", os.fsdecode(raw)],
                       capture_output=True, timeout=60)
    doc = json.loads(r.stdout.decode("utf-8"))  # valid UTF-8
    entry = doc["files"][0]
    assert base64.b64decode(entry["pathBytes"]) == raw
    assert entry["path"].endswith("bad\ufffd\x1b[31mname\n.yaml")
    r = subprocess.run([sys.executable, "-m", "loopc", "check", os.fsdecode(raw)], capture_output=True,
                       timeout=60)
    out = r.stdout.decode("utf-8")
    assert "bad\\xff\\x1b[31mname\\x0a.yaml:3:1: error[LP2007]" in out
    assert "\x1b" not in out
    assert stat.S_ISREG(os.stat(raw).st_mode)
