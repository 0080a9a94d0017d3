"""Fixes marked safe are those with exactly one possible answer (docs/api.md
"Fix.applicability"): applying them unattended (``loopc check --fix``) gives a
plan that checks clean.  Near-misses: edits that are guesses or name another
language version stay unsafe; a tab gets no fix at all."""

from __future__ import annotations

import pytest
from conftest import ROOT

import loopc
from loopc.lint.fixes import apply_fixes

SOURCE = (ROOT / "examples" / "set_variable_timer.yaml").read_text(encoding="utf-8")
STATE_READ = "{{ run.state.reminded_about }}"


def _mutate(old: str, new: str) -> str:
    assert old in SOURCE
    return SOURCE.replace(old, new, 1)


def _indent_line(ch: str) -> str:
    """The first ``text:`` line indented with ``ch`` instead of its first space."""
    lines = SOURCE.split("\n")
    i = next(n for n, line in enumerate(lines) if line.lstrip().startswith("text:"))
    lines[i] = ch + lines[i][1:]
    return "\n".join(lines)


def _shift_line(prefix: str, delta: int) -> str:
    """The first line starting with ``prefix`` moved ``delta`` columns."""
    lines = SOURCE.split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith(prefix))
    lines[i] = " " * delta + lines[i] if delta > 0 else lines[i][-delta:]
    return "\n".join(lines)


SAFE = {
    "kind": (_mutate("kind: PlanVersion", "kind: Plan"), "LP2004"),
    "legacy-state-root": (_mutate(STATE_READ, "{{ state.reminded_about }}"), "LP3203"),
    # `inputs.owner` in a bind whose source node has no `owner`: only `run.input.owner` types
    # (issue 22: the fix wrote `input.owner`, an LP3204)
    "legacy-inputs-root": (_mutate("owner: {ref: run.input.owner}", "owner: {ref: inputs.owner}"), "LP3203"),
    "no-break-space": (_indent_line("\u00a0"), "LP1001"),
    "en-space": (_indent_line("\u2002"), "LP1001"),
    # a misaligned list item: column 3 is the one re-indentation that parses
    "misaligned-item": (_shift_line("  - id: mark_reminded", 1), "LP1001"),
    # `sendMessage` dedented out of its node: column 5 and column 7 (into the node's `input`,
    # six errors: issue 21 finding 12) both parse; the whole plan proves column 5 the one answer
    "dedented-out-of-its-node": (_shift_line("    sendMessage:", -3), "LP1001"),
    # a mis-indented last key parses in either of two blocks; only one of them is a plan
    "misindented-key": (_shift_line("  delay: {type: duration", 1), "LP1001"),
    # `yes` is true to YAML 1.1 and a string to YAML 1.2: where a boolean is required, one answer.
    "yaml-1.1-boolean": (_mutate("owner: {type: member, required: true}", "owner: {type: member, required: yes}"),
                         "LP2012"),
}


@pytest.mark.parametrize("name", sorted(SAFE))
def test_safe_fix_applies_unattended_and_checks_clean(name: str) -> None:
    text, code = SAFE[name]
    result = loopc.check_source(text)
    assert [d.code for d in result.diagnostics] == [code]
    (d,) = result.diagnostics
    assert d.fix is not None and d.fix.is_safe
    fixed, applied = apply_fixes(text, result.diagnostics)
    assert applied == 1
    assert fixed == SOURCE
    assert loopc.check_source(fixed).diagnostics == ()


UNSAFE = {
    # Another language version: the author may mean it.
    "api-version": (_mutate("apiVersion: loop.plan/v1", "apiVersion: loop.plan/v2"), "LP2002"),
    # A legacy header: the body may be in the legacy language.
    "legacy-kind": (_mutate("kind: PlanVersion", "kind: Workflow"), "LP2005"),
    # `inputs.owner` where both `input.owner` and `run.input.owner` type: which was meant is a guess.
    "legacy-inputs-root-ambiguous": (_mutate("Reminder for {{ input.owner }}", "Reminder for {{ inputs.owner }}"),
                                     "LP3203"),
    # A did-you-mean is a guess.
    "misspelt-field": (_mutate(STATE_READ, "{{ run.state.reminded_abut }}"), "LP3204"),
}


@pytest.mark.parametrize("name", sorted(UNSAFE))
def test_guess_stays_unsafe(name: str) -> None:
    text, code = UNSAFE[name]
    result = loopc.check_source(text)
    assert code in [d.code for d in result.diagnostics]
    d = next(d for d in result.diagnostics if d.code == code)
    assert d.fix is not None and not d.fix.is_safe
    assert apply_fixes(text, result.diagnostics) == (text, 0)


def test_tab_in_indentation_has_no_fix() -> None:
    result = loopc.check_source(_indent_line("\t"))
    (d,) = result.diagnostics
    assert d.code == "LP1001" and "tab" in d.message and d.fix is None
