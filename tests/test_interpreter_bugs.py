"""Planted bugs: every deliberate mistake turns at least one check red, and
the conformance kit catches a broken runtime behind the protocol."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from planted_bugs import BUGS  # noqa: E402

from loopc.cli.main import cli  # noqa: E402
from loopc.interpreter.engine import JournalDivergence  # noqa: E402
from loopc.conformance import journal_path, scenarios as golden_scenarios  # noqa: E402
from loopc.interpreter.monitor import InvariantViolation, Monitor  # noqa: E402
from loopc.interpreter.runner import dump_journal, prepare_file, run_prepared  # noqa: E402

from conftest import KIT, ROOT
GOLDEN = KIT
SCENARIOS = golden_scenarios(str(GOLDEN))
PREPARED = {}


def _prep(path: str):
    if path not in PREPARED:
        PREPARED[path] = prepare_file(path)
    return PREPARED[path]


def caught_by(engine_cls) -> list[str]:
    """Scenario names where the buggy engine is caught, and by what."""
    out = []
    for path in SCENARIOS:
        name = Path(path).stem
        try:
            rep = run_prepared(_prep(path), engine_cls=engine_cls, on_step=Monitor())
        except InvariantViolation as exc:
            out.append(f"{name}: monitor: {exc}")
            continue
        except JournalDivergence as exc:  # pragma: no cover - only with crash events
            out.append(f"{name}: resume: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - a crash is also a red test
            out.append(f"{name}: crash: {type(exc).__name__}: {exc}")
            continue
        if not rep.ok:
            out.append(f"{name}: expectations: {rep.differences[0]}")
        else:
            with open(journal_path(path), encoding="utf-8") as fh:
                if dump_journal(rep.steps) != fh.read():
                    out.append(f"{name}: journal pin")
    return out


def test_reference_engine_is_caught_nowhere() -> None:
    from loopc.interpreter.engine import Engine

    assert caught_by(Engine) == []


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_planted_bug_turns_a_check_red(bug: str) -> None:
    caught = caught_by(BUGS[bug])
    # The hand-written expectations or the monitor must catch it, not only the pins.
    assert any(": journal pin" not in c for c in caught), caught


def test_at_least_six_planted_bugs() -> None:
    assert len(BUGS) >= 6


@pytest.mark.slow
def test_conform_reference_runtime_passes(tmp_path, monkeypatch) -> None:
    """No path: the kit's scenarios (package data), from any directory."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["conform", "--runtime", f"{sys.executable} -m loopc.interpreter.protocol"])
    assert res.exit_code == 0, res.output
    assert f"{len(SCENARIOS)} conforming, 0 diverging" in res.output


def test_conform_catches_a_broken_runtime() -> None:
    tool = ROOT / "tests" / "tools" / "broken_runtime.py"
    # the engine keeps no finished activation but each node's latest: a late callback reaches one only
    # while the Run still waits elsewhere (callback_duplicate_while_waiting, event 1)
    sc = [str(GOLDEN / "callback_duplicate_while_waiting.yaml"), str(GOLDEN / "timer_due.yaml")]
    res = CliRunner().invoke(cli, ["conform", "--runtime", f"{sys.executable} {tool} late_callback_accepted",
                                   "--format", "json", *sc])
    assert res.exit_code == 1, res.output
    import json

    obj = json.loads(res.output)
    assert obj["diverging"] == 1
    first, second = obj["scenarios"]
    assert first["conforms"] is False and "event 1 (callback)" in first["divergence"], first
    assert second["conforms"] is True


def test_conform_reports_journal_divergence() -> None:
    tool = ROOT / "tests" / "tools" / "broken_runtime.py"
    res = CliRunner().invoke(cli, ["conform", "--runtime", f"{sys.executable} {tool} effect_reissued_on_transport_retry",
                                   str(GOLDEN / "sent_transport_retry.yaml")])
    assert res.exit_code == 1
    assert "journal record" in res.output and "eff_2" in res.output


def test_conform_runtime_that_cannot_start_exits_2() -> None:
    res = CliRunner().invoke(cli, ["conform", "--runtime", "/nonexistent/runtime", str(GOLDEN / "timer_due.yaml")])
    assert res.exit_code == 2


def test_protocol_answers_bad_requests() -> None:
    p = subprocess.run([sys.executable, "-m", "loopc.interpreter.protocol"], input='{"op": "nope"}\nnot json\n'
                       '{"op": "load", "artifact": "{}"}\n{"op": "quit"}\n', capture_output=True, text=True,
                       timeout=60, check=False)
    lines = p.stdout.splitlines()
    assert p.returncode == 0 and len(lines) == 4
    assert "unknown op" in lines[0] and "error" in lines[1] and '"ok": false' in lines[2]


def test_protocol_refuses_an_advance_that_moves_the_clock_backwards() -> None:
    """A driver's ``to`` instant is checked against the Run's clock: an
    advance that would start before it, or a malformed one, is not applied
    and says why (docs/conformance.md#protocol)."""
    import loopc
    from loopc.interpreter.protocol import Session

    art = loopc.compile_source((ROOT / "examples" / "all_match_switch.yaml").read_bytes())
    s = Session()
    assert s.load({"protocol": 2, "artifact": art.bytes.decode(), "input": {}}) == {"ok": True, "protocol": 2}
    ok = s.event({"index": 0, "event": {"advance": "PT1H"}, "to": "2026-01-01T01:00:00Z"})
    assert ok == {"applied": True, "reason": None}
    assert s.eng is not None
    before = s.eng.now
    back = s.event({"index": 1, "event": {"advance": "PT1H"}, "to": "2026-01-01T00:30:00Z"})
    assert back["applied"] is False and "backwards" in back["reason"] and "01:00:00Z" in back["reason"]
    assert s.eng.now == before
    for bad in ({"index": 2, "event": {"advance": "PT1H"}},
                {"index": 3, "event": {"advance": "PT1H"}, "to": "garbage"},
                {"index": 4, "event": {"advance": "soon"}, "to": "2026-01-01T05:00:00Z"}):
        out = s.event(bad)
        assert out["applied"] is False and "advance needs" in out["reason"]
    assert s.eng.now == before
