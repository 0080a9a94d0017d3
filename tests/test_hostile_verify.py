"""The hostile corpus, artifact bounds class (issue 21, finding 13):
``loopc verify`` applies the compiler's number and duration bounds
(:mod:`loopc.limits`, the one source), so an artifact holding a value no
compiler emits — a 5,000-digit retry backoff, a duration over 3,650 days or
with ten fraction digits, a 30-significant-digit number, a number that
rounds to zero or infinity — is refused with a located message, never
accepted and never a traceback (pytest-timeout guards each case)."""
from __future__ import annotations

import json
import re
from typing import Any

import pytest
from click.testing import CliRunner

import loopc
from loopc import limits
from loopc.cli.main import cli
from loopc.ir.digest import semantic_digest
from loopc.ir.verifier import verify

from conftest import HEADER as H
from conftest import ROOT, seal

RETRY_PLAN = ROOT / "examples" / "all_match_switch.yaml"
NUMBER_PLAN = (H + "input:\n  n: {type: number, default: 1.5}\n  d: {type: duration, default: PT30M}\noutput: {}\n"
               "entry: done\nnodes:\n  - {id: done, type: end, end: {status: succeeded}}\nedges: []\n")


def _artifact(src: str) -> dict[str, Any]:
    res = loopc.compile_source(src)
    assert res.ok
    return json.loads(res.bytes)


BAD_DURATIONS = {
    "5000_digits": "P" + "9" * 5000 + "D",
    "65_chars": "P" + "0" * 62 + "1D",
    "over_3650_days": "P3651D",
    "hours_over": "PT87601H",
    "ten_fraction_digits": "PT1.1234567890S",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", sorted(BAD_DURATIONS))
def test_retry_backoff_out_of_the_compilers_bounds_is_refused(name: str) -> None:
    bad = BAD_DURATIONS[name]
    art = _artifact(RETRY_PLAN.read_text())
    i, node = next((i, n) for i, n in enumerate(art["plan"]["nodes"]) if "retry" in n)
    node["retry"]["backoff"] = bad
    res = verify(seal(art))
    assert not res.ok
    assert [v.pointer for v in res.violations] == [f"/plan/nodes/{i}/retry/backoff"]
    assert limits.duration_problem(bad) in res.message and len(res.message) < 400


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", sorted(BAD_DURATIONS))
def test_duration_default_out_of_bounds_is_refused(name: str) -> None:
    art = _artifact(NUMBER_PLAN)
    art["plan"]["input"]["d"]["default"] = BAD_DURATIONS[name]
    res = verify(seal(art))
    assert not res.ok and [v.pointer for v in res.violations] == ["/plan/input/d/default"], res.message
    assert limits.duration_problem(BAD_DURATIONS[name]) in res.message


def test_the_bounds_themselves_verify() -> None:
    art = _artifact(RETRY_PLAN.read_text())
    node = next(n for n in art["plan"]["nodes"] if "retry" in n)
    for ok in ("P3650D", "PT0.123456789S", "PT87600H"):
        node["retry"]["backoff"] = ok
        assert verify(seal(art)).ok, ok


def _with_number(token: bytes) -> bytes:
    """The number plan's artifact with ``token`` as the default, the digest
    recomputed as a forger would (over the value JSON reads)."""
    base = seal(_artifact(NUMBER_PLAN))
    data = base.replace(b'"default":1.5', b'"default":' + token)
    assert data != base
    try:
        d = json.loads(data)
        d["digest"] = "sha256:" + "0" * 64
        digest = semantic_digest(d)
    except Exception:  # noqa: BLE001 - a value canonical JSON cannot hold: keep the old digest
        return data
    return re.sub(rb'"digest":"sha256:[0-9a-f]{64}"', b'"digest":"' + digest.encode() + b'"', data)


BAD_NUMBERS = {
    "30_significant_digits": b"0.123456789012345678901234567890",
    "19_significant_digits": b"123456789012345678.5",
    "integer_30_digits": b"9" * 30,
    "5000_digits": b"9" * 5000,
    "rounds_to_infinity": b"1e400",
    "rounds_to_zero": b"1e-400",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", sorted(BAD_NUMBERS))
def test_numbers_no_compiler_emits_are_refused_with_a_position(name: str) -> None:
    data = _with_number(BAD_NUMBERS[name])
    res = verify(data)
    assert not res.ok
    col = data.index(BAD_NUMBERS[name]) + 1
    assert f"(at line 1 column {col})" in res.message, res.message
    r = CliRunner().invoke(cli, ["verify", "-"], input=data)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.output


def test_numbers_a_compiler_emits_verify() -> None:
    """The bound is the compiler's: whatever it writes for an accepted
    number (an integral double beyond 2^53 as digits, a subnormal) verifies."""
    for lit in ("1.5e20", "5e-324", "1.7976931348623157e308", "9007199254740991", "-0.0", "1e-7"):
        res = loopc.compile_source(NUMBER_PLAN.replace("default: 1.5", f"default: {lit}"))
        assert res.ok and verify(res.bytes).ok, lit


def test_the_decoder_and_the_compiler_share_the_bounds() -> None:
    """One source: the decoder and the schema pass quote loopc.limits."""
    src = (ROOT / "src" / "loopc" / "ir" / "decoder.py").read_text()
    assert "_limits.number_text_problem" in src and "_limits.MAX_SIGNIFICANT_DIGITS" in src
    spec = (ROOT / "src" / "loopc" / "kinds" / "spec.py").read_text()
    assert "check=_limits.duration_problem" in spec
    assert "_limits.duration_problem" in (ROOT / "src" / "loopc" / "ir" / "verifier.py").read_text()
