"""``loopc durable protocol`` (docs/durable.md#protocol): the conformance
kit drives the durable runtime through the real ``loopc conform`` path;
``crash`` events and the ``afterEffectSubmit`` crash variants SIGKILL the
executor process and a new one recovers the Run from the database.
Skipped without DBOS."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="the durable extra is not installed (pip install 'loopc[durable]')")

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "LOOPC_DURABLE_POLL": "0.05"}


def _conform(db: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    runtime = f"{sys.executable} -m loopc durable protocol --db {db}"
    return subprocess.run([sys.executable, "-m", "loopc", "conform", "--runtime", runtime, "--timeout", "120", *args],
                          capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=timeout)


def _kit() -> tuple[int, int, int]:
    """The golden kit: (scenarios, ``crash`` events, deliveries in the
    reference journals: each is one death with ``afterEffectSubmit``)."""
    from loopc.conformance import SCENARIO_DIR, scenarios
    from loopc.interpreter.runner import Prepared, prepare_file, run_prepared

    paths = scenarios(SCENARIO_DIR)
    crashes = effects = 0
    for path in paths:
        prep = prepare_file(path)
        assert isinstance(prep, Prepared), path
        crashes += sum(1 for ev in prep.scenario.events if ev.kind == "crash")
        effects += sum(1 for r in run_prepared(prep).journal if r.get("kind") in ("effect.delivered", "effect.failed"))
    return len(paths), crashes, effects


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_whole_kit_conforms_with_crash_variants_and_verifier(tmp_path: Path) -> None:
    """All golden scenarios, each also with the ``afterEffectSubmit`` crash
    point, and the verifier cases, in one session (``loopc conform``'s
    defaults)."""
    db = f"sqlite:///{tmp_path / 'kit.sqlite'}"
    r = _conform(db)
    n, crashes, effects = _kit()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert f"{n} conforming, 0 diverging; verifier: 3 of 3 corrupt artifacts refused" in r.stdout
    # every Run the kit loaded (both variants) is a DBOS workflow that ended,
    # and every crash was a recovery from the database: DBOS counts one
    # attempt per start of a workflow, the first and one per recovery
    import sqlalchemy as sa

    eng = sa.create_engine(db)
    with eng.connect() as c:
        rows = c.execute(sa.text("select status, recovery_attempts, workflow_uuid from workflow_status "
                                 "where name = 'loopc.durable.protocol_run' order by created_at")).all()
        runs = c.execute(sa.text("select count(*) from loopc_runs")).scalar_one()
        queues = c.execute(sa.text("select count(*) from queues")).scalar_one()
    eng.dispose()
    assert len(rows) == runs == 2 * n
    assert {status for status, _, _ in rows} == {"SUCCESS"}, [(i, r) for i, r in enumerate(rows) if r[0] != "SUCCESS"]
    recoveries = sum(attempts for _, attempts, _ in rows) - len(rows)
    assert recoveries == 2 * crashes + effects, (recoveries, crashes, effects)
    assert queues == 0  # the session's queue is gone with the session


def test_protocol_bad_db_is_one_line() -> None:
    r = subprocess.run([sys.executable, "-m", "loopc", "durable", "protocol", "--db", "mysql://x/y"],
                       capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=60, input="")
    assert r.returncode == 2
    assert "unsupported database URL" in r.stderr and "Traceback" not in r.stderr


def test_protocol_bad_request_answers(tmp_path: Path) -> None:
    """The quick smoke test: the supervisor answers every request, and a
    refused artifact starts no executor."""
    db = f"sqlite:///{tmp_path / 'p.sqlite'}"
    lines = ['{"op": "nope"}', "not json", '{"op": "report"}', '{"op": "event", "index": 0, "event": {"crash": {}}}',
             '{"op": "load", "protocol": 2, "artifact": "{}"}', '{"op": "quit"}']
    r = subprocess.run([sys.executable, "-m", "loopc", "durable", "protocol", "--db", db], capture_output=True,
                       text=True, env=ENV, cwd=ROOT, timeout=60, input="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert "unknown op" in got[0]["error"]
    assert "error" in got[1]
    assert got[2] == {"status": None}
    assert got[3] == {"applied": False, "reason": "no Run loaded"}
    assert got[4]["ok"] is False and "artifact refused" in got[4]["error"]
    assert got[5] == {"ok": True}
