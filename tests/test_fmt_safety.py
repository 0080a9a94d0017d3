"""``loopc fmt`` never drops a comment or changes a scalar (issue 21, finding
12), and its summary tells the truth (issue 22): the safety net compares the
parsed values (types included) and the comments (text and order) of input
and output, not only the diagnostic codes; when it refuses, the file is left
unchanged with a message and counted as not formatted (docs/ci.md#formatting)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopc.format as fmt
from loopc.cli.main import cli
from loopc.format import FormatError, format_source

from conftest import ROOT

EXAMPLE = (ROOT / "examples" / "set_variable_timer.yaml").read_text("utf-8")
#: a Run-state field written in block style, its plain default ending in a NBSP
NBSP_FIELD = "reminded_about:\n    type: string\n    default: none\u00a0"


def _with_error(text: str) -> str:
    """``text`` with an unrelated error (an entry naming no node): the plan
    no longer compiles, so the old net compared only diagnostic codes."""
    return text.replace("entry: remind", "entry: remindx", 1)


def _flow_comment(text: str) -> str:
    """A comment inside a multi-line flow mapping (ruamel.yaml drops it)."""
    return text.replace("  owner: {type: member, required: true}\n  room:",
                        "  owner: {type: member, # who\n    required: true}\n  room:", 1)


def test_fmt_refuses_to_drop_a_comment_in_a_flow_mapping(tmp_path: Path) -> None:
    path = tmp_path / "flow.yaml"
    src = _flow_comment(EXAMPLE)
    path.write_text(src, "utf-8")
    r = CliRunner().invoke(cli, ["fmt", str(path)])
    assert r.exit_code == 2, r.output
    assert path.read_text("utf-8") == src  # left unchanged
    assert "comment on line 10" in r.stderr and "flow collection" in r.stderr
    assert "0 file(s) reformatted, 0 unchanged, 1 not formatted (1 refused by the safety net" in r.stderr


@pytest.mark.parametrize("broken", [False, True], ids=["clean", "with-unrelated-error"])
def test_fmt_keeps_a_trailing_nbsp_of_a_plain_scalar(broken: bool) -> None:
    src = EXAMPLE.replace('reminded_about: {type: string, default: ""}', NBSP_FIELD, 1)
    src = src.replace("entry: remind", "entry:   remind", 1)  # something to reformat
    if broken:
        src = _with_error(src)
    out = format_source(src)
    assert "default: none\u00a0\n" in out
    assert "entry: remind" in out


def test_fmt_keeps_trailing_spaces_of_a_literal_block_line() -> None:
    src = _with_error(EXAMPLE.replace('      text: "Reminder for',
                                      '      text: |\n        keep   \n        this\n      x: "Reminder for', 1))
    out = format_source(src.replace("entry: ", "entry:    ", 1))
    assert "        keep   \n" in out


def _layout_changing(old: str, new: str) -> Any:
    real = fmt._layout

    def layout(body: str, tree: Any = None, strip: bool = True) -> str:
        return real(body, tree, strip).replace(old, new, 1)

    return layout


def test_net_compares_values_not_only_codes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A formatter that changes a value in a plan with an unrelated error
    (same diagnostic codes) is refused; the file is left as it was."""
    src = _with_error(EXAMPLE.replace('reminded_about: {type: string, default: ""}', NBSP_FIELD, 1))
    monkeypatch.setattr(fmt, "_layout", _layout_changing("default: none\u00a0", "default: nonf"))
    with pytest.raises(FormatError, match=r"change the value at line 20 \('none\\xa0' would read 'nonf'\)") as exc:
        format_source(src)
    assert exc.value.reason == "refused by the safety net"
    path = tmp_path / "p.yaml"
    path.write_text(src, "utf-8")
    r = CliRunner().invoke(cli, ["fmt", str(path)])
    assert r.exit_code == 2 and path.read_text("utf-8") == src
    # a type change is a change: 30 (an integer) is not "30"
    monkeypatch.setattr(fmt, "_layout", _layout_changing("PT30M", "'30'"))
    with pytest.raises(FormatError, match="change the value"):
        format_source(_with_error(EXAMPLE))


def test_net_compares_comments(monkeypatch: pytest.MonkeyPatch) -> None:
    comment = "  # A node without an `input` key has an empty input contract: no bind needed.\n"
    assert comment in EXAMPLE
    monkeypatch.setattr(fmt, "_layout", _layout_changing(comment, ""))
    with pytest.raises(FormatError, match="comment on line 85"):
        format_source(EXAMPLE)
    monkeypatch.setattr(fmt, "_layout", _layout_changing("# Reminder with", "# Reminder without"))
    with pytest.raises(FormatError, match="comment on line 3"):
        format_source(_with_error(EXAMPLE))


def test_comments_found_outside_scalars_only() -> None:
    from loopc.compiler.report import Reporter
    from loopc.compiler.yamlload import load

    text = ("apiVersion: loop.plan/v1\nkind: PlanVersion\n# top\na: |+ # head\n  line # content\n\n"
            "  # content too\n# after\nb: 'q # no'  # c\nc: {x: 1, # in flow\n  y: 2}\nd: a#b\n")
    found = [c for _, c in fmt.comments(text, load(text, Reporter()).root)]
    assert found == ["# top", "# head", "# after", "# c", "# in flow"]


def test_summary_counts_what_could_not_be_formatted(tmp_path: Path) -> None:
    tab = tmp_path / "tab.yaml"
    tab.write_text(EXAMPLE.replace("  owner: {type", "\towner: {type", 1), "utf-8")
    r = CliRunner().invoke(cli, ["fmt", str(tab)])
    assert r.exit_code == 2
    assert "LP1001" in r.stderr
    assert r.stderr.rstrip().endswith(
        "0 file(s) reformatted, 0 unchanged, 1 not formatted (1 YAML does not load; left unchanged)")
    ok = tmp_path / "ok.yaml"
    ok.write_text(EXAMPLE, "utf-8")
    r = CliRunner().invoke(cli, ["fmt", "--check", str(tab), str(ok), str(tmp_path / "missing.yaml")])
    assert r.exit_code == 2
    assert "0 file(s) would be reformatted, 1 unchanged, 2 not formatted (1 unreadable, 1 YAML does not load;" in r.stderr


# --- the property: for any formatted file, values and comments are preserved

EXAMPLES = sorted(ROOT.glob("examples/*.yaml"))
SPACES = [" ", "\t", "\u00a0", "\u2003", "\u3000", "  "]
MARK = re.compile(r"# m\d+")


def _data(text: str) -> Any:
    """The document as an independent loader (ruamel.yaml's safe loader on
    libyaml, which accepts what loopc's parser accepts) reads it, every
    scalar tagged with its type (1, 1.0, True, "1" differ)."""
    from ruamel.yaml import YAML

    def tag(v: Any) -> Any:
        if isinstance(v, dict):
            return [("key", tag(k), tag(x)) for k, x in v.items()]
        if isinstance(v, list):
            return [tag(x) for x in v]
        return (type(v).__name__, repr(v))

    return tag(YAML(typ="safe").load(text))


@st.composite
def mutated_plans(draw: Any) -> str:
    """An example plan with comments added at line ends, on lines of their
    own and inside flow mappings, trailing (Unicode) white space, extra
    spacing after ``:``, and maybe an unrelated error."""
    lines = Path(draw(st.sampled_from(EXAMPLES))).read_text("utf-8").split("\n")
    n = 0
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(2, len(lines) - 1))
        kind = draw(st.sampled_from(["eol", "line", "space", "flow", "colon"]))
        line = lines[i]
        n += 1
        if kind == "eol":
            lines[i] = f"{line}  # m{n}"
        elif kind == "line":
            indent = len(line) - len(line.lstrip(" "))
            lines.insert(i, " " * indent + f"# m{n}")
        elif kind == "space":
            lines[i] = line + draw(st.sampled_from(SPACES))
        elif kind == "flow" and ", " in line and "{" in line:
            indent = len(line) - len(line.lstrip(" "))
            lines[i] = line.replace(", ", f", # m{n}\n{' ' * (indent + 4)}", 1)
        elif kind == "colon" and ": " in line:
            lines[i] = line.replace(": ", ":" + " " * draw(st.integers(2, 4)), 1)
    text = "\n".join(lines)
    return _with_error(text) if draw(st.booleans()) else text


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_plans())
def test_property_fmt_preserves_values_and_comments(text: str) -> None:
    try:
        out = format_source(text)
    except FormatError:
        return  # left unchanged: nothing lost
    assert _data(out) == _data(text)
    assert MARK.findall(out) == MARK.findall(text)
    assert format_source(out) == out


def test_trailing_tab_after_a_key_is_formatted_away() -> None:
    """libyaml and loopc accept a tab after ``key:``; ruamel.yaml's scanner
    does not: the formatter retries without trailing white space (the net
    still compares with the source as written)."""
    src = EXAMPLE.replace("    sendMessage:\n", "    sendMessage:\t\n", 1)
    assert format_source(src) == EXAMPLE


def test_refusal_is_one_line() -> None:
    """A round-trip failure is one line with the position (CLI and editor
    show it as is)."""
    src = EXAMPLE.replace('      text: "Reminder for',
                          '      text: |\n        keep\t\n        this\n      x: "Reminder for', 1)
    src = src.replace("    sendMessage:\n", "    sendMessage:\t\n", 1)
    with pytest.raises(FormatError) as exc:
        format_source(src)
    assert "\n" not in str(exc.value) and "(line 28, column 17)" in str(exc.value)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_property_range_formatting_preserves_and_converges(data: Any) -> None:
    """For any range: ``format_range`` keeps values and comments, refuses
    exactly when ``format_source`` does, and formatting its result gives
    ``format_source``'s (the re-emitted pieces are the formatter's own)."""
    from loopc.format import format_range
    from test_fmt import misformat

    text = data.draw(mutated_plans())
    if data.draw(st.booleans()):
        try:
            text = misformat(text)
        except Exception:  # noqa: BLE001 - ruamel cannot load it: keep the mutated text
            pass
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 400)))
    try:
        full = format_source(text)
    except FormatError:
        with pytest.raises(FormatError):
            format_range(text, start, end)
        return
    got = format_range(text, start, end)
    assert _data(got) == _data(text)
    assert MARK.findall(got) == MARK.findall(text)
    assert format_source(got) == full
