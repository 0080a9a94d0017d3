"""Fuzz target for the scenario runner (issue 21): ``loopc run --format json``
on mutants of a corpus of scenarios (tests/fuzz/scenario_corpus/: the hostile
classes of issue 21 — numbers outside I-JSON, run-time failures on edges
after outside inputs, budgets, sub-microsecond instants, crashes around
every input, misspelt keys and values, CI-command text — plus the golden
scenarios of the kit).  Each mutant must end with exit 0, 1 or 2, no
traceback, stdout that is one valid JSON document (no NaN/Infinity), no
stderr line a CI runner reads as a command, and — when it ran — the same
journal with a crash (checkpoint restore) after every event;
every Run is bounded by a small budget and the whole target by
hypothesis' example count (about 15-25 s on two shared cores) and
pytest-timeout.

Mutations are structure-aware: swap a scalar for a hostile one, repeat or
drop an event line, insert crash/advance/cancel events, or edit characters.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopc.cli.main import cli
from loopc.conformance import SCENARIO_DIR
from loopc.conformance import scenarios as golden_scenarios

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "fuzz" / "scenario_corpus"

HOSTILE = ["1e400", "-1e400", ".nan", ".inf", "-.inf", "1e-400", "9007199254740993", "-9007199254740992",
           "0.1234567890123456789012345678901", "1" * 70, "0e-400", "-0.0", "5e-324", "PT0.0000001S",
           "PT0.000000001S", "P3650D", "P3651D", "PT1.0000000001S", "'x\\n::error::forged'", "\"\\u2028\"",
           "null", "[]", "{}", "true", "succeded", "agt_", "{kind: chanel, scopeId: chn_x}", "~", "'{{'"]
EVENTS = ["  - crash: {}", "  - advance: PT1M", "  - advance: P1D", "  - cancel: {}", "  - expectStatus: waiting",
          "  - callback: {node: ask, output: {answer: a, tone: calm}}", "  - callback: {node: ask, attempt: 2}",
          "  - approve: {node: signoff}", "  - advance: PT0.0000001S"]
SCALAR = re.compile(r"(?<=[:\[,{] )[^\s,{}\[\]:#]+(?=[,}\]\n])")


def _absolute_plan(text: str, base: Path) -> str:
    return re.sub(r"(?m)^plan: (.+)$", lambda m: f"plan: {(base / m.group(1).strip()).resolve()}", text)


def _seeds() -> list[str]:
    out = [_absolute_plan(p.read_text(encoding="utf-8"), p.parent) for p in sorted(CORPUS.glob("*.yaml"))]
    for p in golden_scenarios(SCENARIO_DIR):
        out.append(_absolute_plan(Path(p).read_text(encoding="utf-8"), Path(p).parent))
    return out


SEEDS = _seeds()


@st.composite
def mutants(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["scalar", "event", "dup", "drop", "char"]))
        lines = text.split("\n")
        if op == "scalar":
            spots = [m.span() for m in SCALAR.finditer(text)]
            if spots:
                a, b = draw(st.sampled_from(spots))
                text = text[:a] + draw(st.sampled_from(HOSTILE)) + text[b:]
        elif op == "event" and "events:" in lines:
            i = lines.index("events:") + 1 + draw(st.integers(0, 3))
            lines.insert(min(i, len(lines)), draw(st.sampled_from(EVENTS)))
            text = "\n".join(lines)
        elif op in ("dup", "drop") and len(lines) > 2:
            i = draw(st.integers(1, len(lines) - 1))
            if op == "dup":
                lines.insert(i, lines[i])
            else:
                del lines[i]
            text = "\n".join(lines)
        elif op == "char" and text:
            i = draw(st.integers(0, len(text) - 1))
            text = text[:i] + draw(st.sampled_from(["", " ", "\n", "{", "}", ":", "-", "'", "\t", "é"])) + text[i + 1:]
    return text


def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def check_one(tmp: Path, text: str, *extra: str) -> None:
    sc = tmp / "fuzz.yaml"
    sc.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(cli, ["run", "--format", "json", "--max-activations", "3000",
                                   "--max-journal-records", "20000", *extra, str(sc)])
    assert res.exception is None or isinstance(res.exception, SystemExit), (text, res.exception)
    assert res.exit_code in (0, 1, 2), (text, res.exit_code, res.output)
    doc = json.loads(res.stdout, parse_constant=_no_constants)
    assert isinstance(doc, dict) and "expectationsMet" in doc, text
    for line in res.stderr.splitlines():
        assert not line.startswith("::"), line
    if res.exit_code != 2:  # it ran: a crash after every event changes nothing but the markers
        from loopc.interpreter.engine import Budget
        from loopc.interpreter.runner import run_file

        budget = Budget(activations=3000, records=20000)
        plain, crashed = run_file(str(sc), budget=budget), run_file(str(sc), budget=budget, crash_after_every=True)
        assert not isinstance(plain, list) and not isinstance(crashed, list)
        assert crashed.steps == plain.steps, text
        assert (crashed.status, crashed.output, crashed.error) == (plain.status, plain.output, plain.error)


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.yaml")), ids=lambda p: p.stem)
def test_corpus_seed(path: Path, tmp_path: Path) -> None:
    check_one(tmp_path, _absolute_plan(path.read_text(encoding="utf-8"), path.parent))


@pytest.mark.timeout(120)
@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(text=mutants())
def test_runner_mutants(text: str, tmp_path: Path) -> None:
    check_one(tmp_path, text)
