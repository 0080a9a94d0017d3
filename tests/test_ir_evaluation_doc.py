"""docs/ir.md#evaluation cannot drift: every example row of its tables
(header ``| instruction | result |``) is evaluated by the reference
evaluator in the environment the page gives (the JSON block after
``<!-- evaluation-env -->``), and every error message the rows show matches
one documented message format of the "Evaluation errors" table."""
from __future__ import annotations

import json
import re
from typing import Any

import pytest

from loopc.ir.evaluator import EvaluationError, evaluate
from loopc.limits import MAX_SAFE_INTEGER

from conftest import ROOT

DOC = (ROOT / "docs" / "ir.md").read_text(encoding="utf-8")
SECTION = DOC[DOC.index("\n## Evaluation\n"):]
SECTION = SECTION[:SECTION.index("\n## ", 10)]


def _json(text: str) -> Any:
    """JSON as the artifact decoder reads it: an integer beyond ±(2^53−1) is a double."""
    return json.loads(text, parse_int=lambda t: int(t) if abs(int(t)) <= MAX_SAFE_INTEGER else float(t))


def _env() -> dict[str, Any]:
    m = re.search(r"<!-- evaluation-env -->\n```json\n(.*?)```", SECTION, re.S)
    assert m, "docs/ir.md#the-environment has no environment block"
    return _json(m.group(1))


def _rows() -> list[tuple[int, str, str]]:
    rows = []
    in_table = False
    for n, line in enumerate(SECTION.splitlines(), 1):
        if line.startswith("| instruction | result |"):
            in_table = True
            continue
        if in_table and line.startswith("|---"):
            continue
        if in_table and line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            assert len(cells) == 2, line
            rows.append((n, cells[0], cells[1]))
            continue
        in_table = False
    return rows


def _message_formats() -> list[re.Pattern[str]]:
    part = SECTION[SECTION.index("### Evaluation errors"):]
    pats = []
    for line in part.splitlines():
        m = re.match(r"\| `(.+?)` \| ", line)
        if m and m.group(1) != "message":
            rx = re.sub(r"<[a-z]+>", "\x00", m.group(1))
            rx = re.escape(rx).replace("\x00", ".+")
            pats.append(re.compile(rx + r"\Z"))
    return pats


ENV = _env()
ROWS = _rows()
FORMATS = _message_formats()


def _unquote(cell: str) -> str:
    assert cell.startswith("`") and cell.endswith("`"), cell
    return cell[1:-1]


def test_the_tables_have_many_examples() -> None:
    assert len(ROWS) >= 100
    assert sum(1 for *_, r in ROWS if r.startswith("error:")) >= 15
    assert len(FORMATS) >= 12


@pytest.mark.parametrize("line,instr,result", ROWS, ids=[str(r[0]) for r in ROWS])
def test_documented_example_holds(line: int, instr: str, result: str) -> None:
    tree = _json(_unquote(instr))
    if result.startswith("error: "):
        want = _unquote(result[len("error: "):])
        with pytest.raises(EvaluationError) as exc:
            evaluate(tree, ENV)
        assert str(exc.value) == want
        assert any(p.match(want) for p in FORMATS), f"{want!r} matches no documented message format"
    else:
        got = evaluate(tree, ENV)
        want_v = _json(_unquote(result))
        assert json.dumps(got, sort_keys=True) == json.dumps(want_v, sort_keys=True) or got == want_v
        assert type(got) is type(want_v) or (isinstance(got, (int, float)) and isinstance(want_v, (int, float))
                                             and not isinstance(got, bool))


def test_every_documented_message_has_an_example() -> None:
    """Each row of "Evaluation errors" is shown by at least one example (the
    render failure needs a number outside the double range, which no JSON
    example can hold)."""
    shown = [_unquote(r[len("error: "):]) for *_, r in ROWS if r.startswith("error:")]
    missing = [p.pattern for p in FORMATS
               if not p.pattern.startswith("cannot\\ render") and not any(p.match(m) for m in shown)]
    assert not missing, f"documented messages without an example row: {missing}"
