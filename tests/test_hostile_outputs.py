"""The hostile corpus, output class (issue 21, findings 2 and 3): hostile
file names, plan keys, ports, scenario values, artifact fields,
configuration keys and runtime replies rendered through every command and
every format.  A CI runner reads a workflow command from a line starting
(after whitespace) with ``::`` and a legacy one from ``##[`` anywhere in a
line; so no line loopc prints may hold either, nor a raw control
character, except ``--format github``'s own annotations
(docs/language.md#command-line-output).  The structured formats stay valid
and keep the values exactly; Mermaid and DOT labels stay text."""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import loopc
from loopc.cli import formats, textsafe
from loopc.cli.main import cli

from conftest import HEADER as H
from conftest import MINIMAL as GOOD
from conftest import ROOT

#: The issue's forged annotation, a mask, a legacy command, an escape
#: sequence, a carriage return and a bidi override in one string.
EVIL = "x\n::error title=FORGED::pwned ##[add-mask]s3cret \x1b[31m\r::warning::cr \u202e \u3000::notice::ws"
HTML = '<img src=x onerror=alert(1)>`md`|&#quot;"q\''

NAMES = ["::add-mask::x.yaml", "##[add-mask]y.yaml", "a\n::error title=N::n.yaml", " \u3000::debug::z.yaml",
         ":", "c\r::warning::r.yaml"]


def _plan(evil: str = EVIL) -> str:
    """A plan with a hostile unknown key and hostile edge ports (errors
    after the graph exists, so ``graph`` still draws it)."""
    q = json.dumps(evil)
    return (H + f"{q}: 1\ninput: {{}}\noutput: {{}}\nentry: done\nnodes:\n"
            "  - {id: done, type: end, end: {status: succeeded}}\n"
            f"edges:\n  - {{id: e1, from: {{node: done, port: {json.dumps('p' + evil + HTML)}}}, "
            f"to: {{node: done, port: {q}}}}}\n")


_OWN_GITHUB = re.compile(r"::(error|warning|notice) file=[^:,\n]*(,line=\d+,col=\d+,endLine=\d+,endColumn=\d+)?"
                         r",title=[^:,\n]*::[^\n]*\Z")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _assert_inert(cmd: list[str], text: str, github: bool = False) -> None:
    for line in _lines(text):
        if github and _OWN_GITHUB.match(line) and "##[" not in line:
            continue
        assert textsafe.is_inert_line(line), (cmd, line)


def _invoke(*args: str, env: dict[str, str] | None = None):
    env = {"NO_COLOR": "1", **(env or {})}  # colour is loopc's own escape codes: tested apart
    r = CliRunner().invoke(cli, list(args), env=env)
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception))
    return r


@pytest.fixture()
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    for n in NAMES:
        (tmp_path / n).write_text(_plan())
        (tmp_path / "d" / n).write_text(_plan())
    (tmp_path / "good.yaml").write_text(GOOD)
    return tmp_path


# --- the escaping primitive --------------------------------------------------------

@pytest.mark.parametrize("s", [EVIL, "::add-mask::x", "  ::x", "\u3000::x", ":", "##[a]", "#", "a##[b", HTML])
def test_escape_text_is_one_inert_line(s: str) -> None:
    out = textsafe.escape_text(s)
    assert "\n" not in out and textsafe.is_inert_line(out)
    # concatenation cannot forge one either: a user text after a colon, a '#' before one
    assert textsafe.is_inert_line(textsafe.escape_text(":") + textsafe.escape_text(s))
    assert textsafe.is_inert_line("#" + textsafe.escape_text(s, inline=True)) or not s.startswith("#[")


def test_escape_text_keeps_safe_text() -> None:
    assert textsafe.escape_text("plan.yaml: a: b ## [x] 漢字") == "plan.yaml: a: b ## [x] 漢字"
    assert textsafe.escape_text("::add-mask::x.yaml") == "\\x3a:add-mask::x.yaml"
    assert textsafe.escape_text("a ##[add-mask]b") == "a #\\x23[add-mask]b"
    assert textsafe.escape_text(":x", inline=True) == ":x"


def test_json_and_xml_text_keep_the_value() -> None:
    doc = {"m": EVIL, "k": ["##[", "\\##[", "###["]}
    out = textsafe.json_text(json.dumps(doc, ensure_ascii=False))
    assert "##[" not in out and json.loads(out) == doc
    evil = EVIL.replace("\x1b", "")  # XML 1.0 cannot hold ESC (junit replaces it)
    el = ET.Element("a", m=evil)
    el.text = "##[x] ###[y]"
    xml = textsafe.xml_text(ET.tostring(el, encoding="unicode"))
    back = ET.fromstring(xml)
    assert "##[" not in xml and back.get("m") == evil and back.text == "##[x] ###[y]"


# --- check: every format ---------------------------------------------------------

#: every registered format: a new one is held to the same rules without an edit here
FORMATS = formats.names()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
def test_check_every_format_is_inert_and_valid(fmt: str, hostile: Path) -> None:
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text("utf-8"))
    for name in NAMES:
        r = _invoke("check", "--no-cache", "--format", fmt, name)
        assert r.exit_code == 1, (name, r.output)
        _assert_inert(["check", fmt, name], r.stdout, github=fmt == "github")
        _assert_inert(["check", fmt, name], r.stderr)
        expected = loopc.check_source(_plan(), path=name).diagnostics
        if fmt == "json":
            got = json.loads(r.stdout)["files"][0]["diagnostics"]
            assert [d["message"] for d in got] == [d.message for d in expected]
        elif fmt == "sarif":
            log = json.loads(r.stdout)
            jsonschema.Draft4Validator(schema).validate(log)
            assert [x["message"]["text"] for x in log["runs"][0]["results"]] == [d.message for d in expected]
        elif fmt == "gitlab":
            assert len(json.loads(r.stdout)) == len(expected)
        elif fmt == "junit":
            root = ET.fromstring(r.stdout)
            failure = root.find("./testsuite/testcase/failure")
            shown = expected[0].message.replace("\x1b", "\ufffd")  # XML 1.0 cannot hold ESC
            assert failure is not None and failure.get("message", "").endswith(shown)
        elif fmt == "github":
            own = [line for line in _lines(r.stdout) if line]
            assert len(own) == len(expected) and all(_OWN_GITHUB.match(line) for line in own)
        elif fmt == "text":
            assert r.stdout.count("error[") == len(expected)


def test_coloured_text_is_inert_without_its_own_codes(hostile: Path) -> None:
    r = _invoke("check", "--no-cache", "--color", "always", "::add-mask::x.yaml")
    assert "\x1b[" in r.stdout
    _assert_inert(["check", "--color"], re.sub("\x1b\\[[0-9;]*m", "", r.stdout))


def test_check_text_shows_a_masking_file_name_inertly(hostile: Path) -> None:
    """The issue's case: a file named ``::add-mask::x.yaml`` checked by name
    (as pre-commit does) must not mask the log."""
    r = _invoke("check", "--no-cache", "::add-mask::x.yaml")
    first = r.stdout.split("\n")[0]
    assert first.startswith("\\x3a:add-mask::x.yaml:3:1: error[LP2007]"), first


# --- every other command -----------------------------------------------------------

def _artifact(tmp: Path) -> Path:
    art = json.loads(loopc.compile_source(GOOD).bytes)
    art[EVIL] = 1
    art["plan"]["nodes"][0]["id"] = EVIL
    p = tmp / "evil.json"
    p.write_text(json.dumps(art))
    return p


def _scenario(tmp: Path) -> list[Path]:
    plans = tmp / "plans"
    plans.mkdir()
    from loopc.conformance import SCENARIO_DIR

    shutil.copy(Path(SCENARIO_DIR) / "plans" / "approval.yaml", plans / "approval.yaml")
    mismatch = tmp / "mismatch.yaml"
    mismatch.write_text(
        "plan: plans/approval.yaml\ninput: {approver: mem_ana, feedback: {kind: thread, scopeId: thr_fb}}\n"
        f"events:\n  - approve: {{node: signoff, by: mem_ana, comment: {json.dumps(EVIL)}}}\n"
        f"expect:\n  status: succeeded\n  output: {{by: mem_ana, comment: {json.dumps(EVIL + '!')}}}\n")
    missing = tmp / "missing_plan.yaml"
    missing.write_text(f"plan: {json.dumps(EVIL + '.yaml')}\nevents: []\nexpect: {{status: succeeded}}\n")
    return [mismatch, missing]


_RUNTIME = '''
import json, sys
EVIL = {evil!r}
for line in sys.stdin:
    req = json.loads(line)
    if req.get("op") == "quit":
        print(json.dumps({{"ok": True}}), flush=True)
        break
    if req.get("op") == "load":
        print(json.dumps({{"ok": False, "error": EVIL}}), flush=True)
    else:
        print(json.dumps({{"applied": True, "reason": EVIL}}), flush=True)
'''


def _commands(tmp: Path) -> list[list[str]]:
    art = str(_artifact(tmp))
    scen = [str(p) for p in _scenario(tmp)]
    runtime = tmp / "evil_runtime.py"
    runtime.write_text(_RUNTIME.format(evil=EVIL))
    cmds: list[list[str]] = []
    for n in NAMES:
        cmds += [["plan", n], ["plan", "--format", "json", n], ["compile", n], ["digest", n], ["verify", n],
                 ["graph", n], ["graph", "--format", "dot", n], ["fmt", "--check", n], ["fmt", "--diff", n]]
    cmds += [["inventory", "d"], ["inventory", "--format", "json", "d"],
             ["verify", art], ["explain", EVIL], ["explain", "::add-mask::LP1001"],
             *(["run", s] for s in scen), *(["run", "--trace", s] for s in scen),
             *(["run", "--format", "json", s] for s in scen), ["run", *scen], ["run", "--format", "json", *scen],
             ["run", EVIL], ["conform", "--runtime", f"{sys.executable} {runtime}", *scen],
             ["conform", "--runtime", f"{sys.executable} {runtime}", "--format", "json", *scen]]
    return cmds


@pytest.mark.timeout(120)
def test_every_command_prints_inert_lines(hostile: Path) -> None:
    for cmd in _commands(hostile):
        r = _invoke(*cmd)
        _assert_inert(cmd, r.stdout)
        _assert_inert(cmd, r.stderr)
        if "--format" in cmd and cmd[cmd.index("--format") + 1] == "json" and r.stdout.strip():
            json.loads(r.stdout)  # still valid
        if cmd[:1] == ["run"] and cmd[-1].endswith("mismatch.yaml"):  # the hostile values were really shown
            assert r.exit_code == 1 and ("FAIL" in r.stdout or '"expectationsMet": false' in r.stdout), r.output
        if cmd[:1] == ["verify"] and cmd[-1].endswith("evil.json"):
            assert r.exit_code == 1 and "x\\x0a::error" in r.stderr, r.stderr


def test_inventory_keeps_a_forged_key_on_its_line(hostile: Path) -> None:
    """The issue's case: a plan key ``"x\\n::error title=FORGED::pwned"``."""
    (hostile / "inv").mkdir()
    (hostile / "inv" / "p.yaml").write_text(_plan("x\n::error title=FORGED::pwned"))
    r = _invoke("inventory", "inv")
    assert not any(line.lstrip().startswith("::") for line in _lines(r.stdout + r.stderr))
    assert "x\\x0a::error title=FORGED::pwned" in r.stdout


@pytest.mark.timeout(60)
def test_configuration_problems_are_inert(hostile: Path) -> None:
    for text in (f"{json.dumps(EVIL)} = 1\n", f"disable = [{json.dumps(EVIL)}]\n",
                 f"[tool.loopc]\nerror = [{json.dumps(EVIL)}]\n"):
        conf = hostile / "conf"
        conf.mkdir(exist_ok=True)
        (conf / ".git").mkdir(exist_ok=True)
        for f in (".loopc.toml", "pyproject.toml"):
            (conf / f).unlink(missing_ok=True)
        (conf / (".loopc.toml" if "[tool" not in text else "pyproject.toml")).write_text(text)
        os.chdir(conf)
        r = _invoke("check", "--no-cache", str(hostile / "good.yaml"))
        assert r.exit_code == 2, r.output
        _assert_inert(["check", text], r.stdout + r.stderr)
        os.chdir(hostile)


# --- graph labels ------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["mermaid", "dot"])
def test_graph_labels_are_text(fmt: str, hostile: Path) -> None:
    r = _invoke("graph", "--format", fmt, "::add-mask::x.yaml")
    assert r.exit_code == 0, r.output
    out = r.stdout
    _assert_inert(["graph", fmt], out)
    edge = next(line for line in _lines(out) if "onerror" in line)
    if fmt == "mermaid":
        label = re.search(r'\|"(.*)"\|', edge)
        assert label is not None, edge
        text = label.group(1)
        assert not set(text) & set('<>"`|&') and "#lt;img src=x onerror=alert(1)#gt;" in text
        assert "#96;md#96;" in text and "#124;" in text and "#quot;q" in text
        # a name holding an entity code stays that text, not the character
        assert "#amp;#35;quot;" in text
    else:
        label = re.search(r'label="((?:[^"\\]|\\.)*)"', edge)
        assert label is not None, edge
        assert "<img src=x onerror=alert(1)>" in label.group(1) and "\\\\x0a" in label.group(1)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not installed")
def test_graph_svg_is_inert(hostile: Path) -> None:
    r = _invoke("graph", "--format", "svg", "::add-mask::x.yaml")
    assert r.exit_code == 0
    _assert_inert(["graph", "svg"], r.stdout)
    assert "onerror" in r.stdout and "<img" not in r.stdout  # the label is text, XML-escaped by Graphviz
