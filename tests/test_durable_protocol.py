"""``loopc durable protocol`` (docs/durable.md#protocol): the conformance
kit drives the durable runtime; ``crash`` events and the
``afterEffectSubmit`` crash variants SIGKILL the executor child and a new
one recovers the Run from the database.  Skipped without DBOS."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="the durable extra is not installed (pip install 'loopc[durable]')")

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "src" / "loopc" / "conformance" / "scenarios"
#: a crash event scenario, a timer with a retry, an approval, a callback fan-out
PICKED = ["crash_between_events", "callback_retry_after_failure", "approval_approved", "all_match_subset"]
ENV = {**os.environ, "LOOPC_DURABLE_POLL": "0.05"}


def _conform(db: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    runtime = f"{sys.executable} -m loopc durable protocol --db {db}"
    return subprocess.run([sys.executable, "-m", "loopc", "conform", "--runtime", runtime, "--timeout", "120", *args], capture_output=True, text=True, env=ENV, cwd=ROOT,
                          timeout=timeout)


@pytest.mark.slow
def test_conform_durable_protocol_with_crashes(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'kit.sqlite'}"
    r = _conform(db, *[str(SCENARIOS / f"{name}.yaml") for name in PICKED])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert f"{len(PICKED)} conforming, 0 diverging" in r.stdout
    # every Run the kit loaded is a workflow in the database, the crash variants included
    from loopc.durable.store import Store

    st = Store(db)
    with st.engine.connect() as c:
        import sqlalchemy as sa

        n = c.execute(sa.text("select count(*) from loopc_runs")).scalar_one()
    assert n >= 2 * len(PICKED)


def test_protocol_bad_db_is_one_line() -> None:
    r = subprocess.run([sys.executable, "-m", "loopc", "durable", "protocol", "--db", "mysql://x/y"],
                       capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=60, input="")
    assert r.returncode == 2
    assert "unsupported database URL" in r.stderr and "Traceback" not in r.stderr


def test_protocol_bad_request_answers(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.sqlite'}"
    lines = ['{"op": "nope"}', "not json", '{"op": "report"}',
             '{"op": "load", "protocol": 2, "artifact": "{}"}', '{"op": "quit"}']
    r = subprocess.run([sys.executable, "-m", "loopc", "durable", "protocol", "--db", db], capture_output=True,
                       text=True, env=ENV, cwd=ROOT, timeout=60, input="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert "unknown op" in got[0]["error"]
    assert "error" in got[1]
    assert got[2] == {"status": None}
    assert got[3]["ok"] is False and "artifact refused" in got[3]["error"]
    assert got[4] == {"ok": True}
