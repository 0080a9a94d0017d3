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


def _conform_sessions(db: str, parts: list[list[str]], timeout: float = 900) -> list[tuple[int, str, str]]:
    """``loopc conform`` over each list of scenarios, the sessions side by
    side on one database: ``[(exit code, stdout, stderr)]``."""
    runtime = f"{sys.executable} -m loopc durable protocol --db {db}"
    procs = [subprocess.Popen([sys.executable, "-m", "loopc", "conform", "--runtime", runtime, "--timeout", "120",
                               *paths], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
             for paths in parts]
    out = []
    for p in procs:
        so, se = p.communicate(timeout=timeout)
        out.append((p.returncode, so, se))
    return out


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
    point, and the verifier cases (``loopc conform``'s defaults), in two
    sessions side by side on one database (every other scenario each: the
    sessions mostly wait on each other's processes, so two share two cores
    well)."""
    from loopc.conformance import SCENARIO_DIR, scenarios

    db = f"sqlite:///{tmp_path / 'kit.sqlite'}"
    paths = scenarios(SCENARIO_DIR)
    parts = [paths[0::2], paths[1::2]]
    results = _conform_sessions(db, parts)
    n, crashes, effects = _kit()
    assert n == len(paths)
    for part, (code, out, err) in zip(parts, results):
        assert code == 0, out[-3000:] + err[-2000:]
        assert "Traceback" not in err
        assert f"{len(part)} conforming, 0 diverging; verifier: 3 of 3 corrupt artifacts refused" in out
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
    assert queues == 0  # each session's queue is gone with the session


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
