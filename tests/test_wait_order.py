"""The wait rule for Run-state races (docs/language.md "Concurrency"): a
read or write that runs only after a condition wait which can pass only
once the single concurrent write happened is ordered after it.  Each
variant of the writer/waiter fork is judged twice — by the analyzer and by
the explorer, which runs the state values and the waits — and the two
must agree: the near-misses are accepted, every real race is reported."""
from __future__ import annotations

from pathlib import Path

import pytest

from explorer import explore, front

BASE = (Path(__file__).parent / "fixtures" / "analysis" / "state_race_wait_ok.yaml").read_text()


def _node(text: str) -> str:
    return "nodes:\n" + text


def _edges(text: str) -> str:
    return "edges:\n" + text


VARIANTS: dict[str, tuple[str, bool]] = {
    # name: (source, races)
    "issue_example": (BASE, False),
    "condition_true_at_default": (BASE.replace("decision != 'pending'", "decision == 'pending'"), True),
    "default_satisfies_condition": (BASE.replace("default: pending", "default: approved"), True),
    "second_write_on_the_path": (BASE.replace(
        "{id: e_a_done, from: {node: set_approved, port: completed}, to: {node: joined}}",
        "{id: e_a_done, from: {node: set_approved, port: completed}, to: {node: set_rejected}}"), True),
    "timeout_route_merges": (BASE.replace("edges:\n", _edges(
        "  - {id: e_to, from: {node: await_decision, port: timed_out}, to: {node: announce}}\n")), True),
    "write_before_the_fork": (BASE.replace("entry: split", "entry: init").replace("nodes:\n", _node(
        "  - id: init\n    type: set_variable\n    setVariable: {assign: {decision: approved}}\n")).replace(
        "edges:\n", _edges("  - {id: e_init, from: {node: init, port: completed}, to: {node: split}}\n")), True),
    # a write before the fork of a value at which the condition is false
    # (here the default itself) keeps the wait ordering what follows it
    "reset_to_default_before_the_fork": (BASE.replace("entry: split", "entry: init").replace("nodes:\n", _node(
        "  - id: init\n    type: set_variable\n    setVariable: {assign: {decision: pending}}\n")).replace(
        "edges:\n", _edges("  - {id: e_init, from: {node: init, port: completed}, to: {node: split}}\n")), False),
    "write_before_the_wait": (BASE.replace(
        "{id: e_watch, from: {node: split, port: watch}, to: {node: await_decision}}",
        "{id: e_watch, from: {node: split, port: watch}, to: {node: pre}}\n"
        "  - {id: e_pre, from: {node: pre, port: completed}, to: {node: await_decision}}").replace(
        "nodes:\n", _node("  - id: pre\n    type: set_variable\n    setVariable: {assign: {decision: x}}\n")), True),
    "write_after_the_wait": (BASE.replace(
        "{id: e_announced, from: {node: announce, port: completed}, to: {node: joined}}",
        "{id: e_announced, from: {node: announce, port: completed}, to: {node: post}}\n"
        "  - {id: e_post, from: {node: post, port: completed}, to: {node: joined}}").replace(
        "nodes:\n", _node("  - id: post\n    type: set_variable\n    setVariable: {assign: {decision: done}}\n")),
        False),
    "third_branch_writes": (BASE.replace("branches: [watch, decide]", "branches: [watch, decide, audit]").replace(
        "nodes:\n", _node("  - id: audit\n    type: set_variable\n    setVariable: {assign: {decision: audited}}\n")
    ).replace("edges:\n", _edges(
        "  - {id: e_audit, from: {node: split, port: audit}, to: {node: audit}}\n"
        "  - {id: e_audited, from: {node: audit, port: completed}, to: {node: joined}}\n")), True),
    "wait_watches_another_field": (BASE.replace(
        "  decision: {type: string, default: pending}\n",
        "  decision: {type: string, default: pending}\n  ready: {type: boolean, default: false}\n").replace(
        "decision != 'pending'", "ready == true").replace(
        "{id: e_decide, from: {node: split, port: decide}, to: {node: ask}}",
        "{id: e_decide, from: {node: split, port: decide}, to: {node: prep}}\n"
        "  - {id: e_prep, from: {node: prep, port: completed}, to: {node: ask}}").replace(
        "nodes:\n", _node("  - id: prep\n    type: set_variable\n    setVariable: {assign: {ready: true}}\n")), True),
    "fork_inside_a_loop": (BASE.replace("entry: split", "entry: again").replace("nodes:\n", _node(
        "  - id: again\n    type: loop\n    loop: {mode: counted, iterations: 2}\n")).replace(
        "{id: e_done, from: {node: joined, port: completed}, to: {node: done}}",
        "{id: e_next, from: {node: joined, port: completed}, to: {node: again, port: continue}}\n"
        "  - {id: e_body, from: {node: again, port: body}, to: {node: split}}\n"
        "  - {id: e_done, from: {node: again, port: done}, to: {node: done}}"), True),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_analyzer_and_explorer_agree(name: str) -> None:
    src, races = VARIANTS[name]
    f = front(src)
    assert f.plan is not None and f.graph_ok, f.codes
    assert [c for c in f.errors if c != "LP4601"] == [], f.codes
    assert ("LP4601" in f.errors) is races, [d.message for d in f.diagnostics]
    res = explore(f.plan, max_states=20000)
    assert res.verdict != "inconclusive"
    assert ("race" in res.kinds) is races, res.bad


#: For each race variant, the condition of the wait rule its LP4601 names
#: (a related note of the race: docs/language.md "A wait orders what follows it").
REASONS: dict[str, str | None] = {
    "condition_true_at_default": "because its condition already holds while `run.state.decision` has its default",
    "default_satisfies_condition": "because its condition already holds while `run.state.decision` has its default",
    "second_write_on_the_path": "the concurrent writers are not mutually exclusive: set_variable `set_rejected` "
                                "can run after set_variable `set_approved`",
    "timeout_route_merges": "`announce` can also be reached without passing the wait's `completed` port",
    "write_before_the_fork": "set_variable `init` can write `run.state.decision` before fork `split` opens",
    # the write before the wait races with the decision's writes on its own
    # (write against write): the race sits at that write, and says why
    "write_before_the_wait": "set_variable `pre` writes `run.state.decision` in the waiting branch without "
                             "first passing the wait",
    "wait_watches_another_field": "its condition reads `run.state.ready`, not `run.state.decision`",
    "third_branch_writes": "the concurrent writers are not mutually exclusive: set_variables",
    "fork_inside_a_loop": "before fork `split` opens",
}


def test_every_race_variant_names_its_reason() -> None:
    assert set(REASONS) == {n for n, (_, races) in VARIANTS.items() if races}


@pytest.mark.parametrize("name", sorted(REASONS))
def test_race_beside_a_wait_says_which_condition_fails(name: str) -> None:
    f = front(VARIANTS[name][0])
    notes = [r.message for d in f.diagnostics if d.code == "LP4601" for r in d.related]
    want = REASONS[name]
    if want is None:
        assert not any("does not order" in n for n in notes), notes
    else:
        assert any(want in n and n.startswith("wait `await_decision` does not order") for n in notes), notes
    # the race says it: no second diagnostic (LP4604) about the same condition
    assert "LP4604" not in f.codes, f.codes


def test_a_write_before_the_wait_is_reported_at_that_write() -> None:
    """Of two racing writers, the one in the waiting branch that runs before
    the wait breaks the rule: the race sits on it."""
    f = front(VARIANTS["write_before_the_wait"][0])
    (d,) = [d for d in f.diagnostics if d.code == "LP4601"]
    assert d.node == "pre" and d.message.startswith("set_variable `pre` writes"), d.message


def test_a_race_without_a_wait_has_no_wait_note() -> None:
    src = BASE.replace("decision != 'pending'", "true").replace(
        "wait: {condition: \"run.state.decision != 'pending'\", timeout: P1D}", "wait: {duration: PT1M}")
    f = front(src)
    assert "LP4601" in f.errors
    assert not any("does not order" in r.message for d in f.diagnostics for r in d.related)
