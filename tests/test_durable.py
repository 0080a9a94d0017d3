"""loopc.durable (docs/durable.md): handlers, the store, the CLI, and Runs
that survive kill -9 (issue 27).  Skipped when DBOS (the ``durable`` extra)
is not installed."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="the durable extra is not installed (pip install 'loopc[durable]')")

from loopc.durable.handlers import BindingError, Effect, FileSink, bind_handlers  # noqa: E402
from loopc.durable.store import Store, StoreError  # noqa: E402
from loopc.plan import builtin_catalog  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "examples" / "callback_review.yaml"
INPUT = {"topic": "T", "document_url": "https://example.org/d", "reviewer": "agt_rev",
         "room": {"kind": "channel", "scopeId": "chn_r1"}}
ENV = {**os.environ, "LOOPC_DURABLE_POLL": "0.05"}


def loopc(*args: str, env: dict[str, str] | None = None, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "loopc", "durable", *args], capture_output=True, text=True,
                          env=env or ENV, timeout=timeout, cwd=ROOT)


@pytest.fixture
def db(tmp_path: Path) -> str:
    (tmp_path / "in.json").write_text(json.dumps(INPUT))
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


def _start(db: str, tmp: Path, plan: Path = PLAN, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return loopc("start", str(plan), "--input", str(tmp / "in.json"), "--db", db, "--format", "json", env=env)


def _journal(db: str, run: str) -> list[dict]:
    r = loopc("journal", run, "--db", db)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def _status(db: str, run: str) -> dict:
    r = loopc("status", run, "--db", db, "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _sink(db: str) -> list[dict]:
    p = Path(db[len("sqlite:///"):] + ".effects.jsonl")
    return [json.loads(line) for line in p.read_text().splitlines()] if p.exists() else []


# ---------------------------------------------------------------- fast
def test_bindings_come_from_the_catalog() -> None:
    got = bind_handlers(builtin_catalog(), ["send_message.callback", "set_variable"])
    assert got == {"send_message.callback": "loop.reference/send_message.callback"}


def test_contract_only_action_is_refused() -> None:
    class NoHandler:
        def entry(self, action: str) -> None:
            return None

    with pytest.raises(BindingError, match="no handler binding for 'request_approval'"):
        bind_handlers(NoHandler(), ["request_approval"])


def test_file_sink_appends_one_line_per_delivery(tmp_path: Path) -> None:
    sink = FileSink(str(tmp_path / "s.jsonl"))
    e = Effect(key="run_1:act_1:1", run="run_1", act="act_1", attempt=1, node="n", action="send_message.sent",
               effect="eff_1", ordinal=1, request={"text": "hi"})
    assert sink.deliver(e) and sink.deliver(e)
    lines = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert [x["key"] for x in lines] == ["run_1:act_1:1"] * 2


def test_store_append_is_idempotent(tmp_path: Path) -> None:
    st = Store(f"sqlite:///{tmp_path / 'x.sqlite'}")
    st.create_run("run_a", "sha256:x", {}, "0", {})
    recs = [{"kind": "run.started", "seq": 1, "step": 1}, {"kind": "x", "seq": 2, "step": 2}]
    st.append("run_a", recs[:1])
    st.append("run_a", recs)  # a re-executed step after a crash writes its records again
    assert [r["seq"] for r in st.journal("run_a")] == [1, 2]


def test_store_refuses_other_urls() -> None:
    with pytest.raises(StoreError, match="unsupported database URL"):
        Store("mysql://x/y")


def test_status_of_an_unknown_run_is_one_line(db: str) -> None:
    r = loopc("status", "run_nope", "--db", db)
    assert r.returncode == 2 and r.stderr.startswith("loopc durable: no Run run_nope") and "Traceback" not in r.stderr


def test_without_the_extra_the_command_says_how_to_install(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['dbos'] = None; sys.argv = ['loopc', 'durable', 'worker', '--db', "
            f"'sqlite:///{tmp_path / 'x.sqlite'}']\nfrom loopc.cli.main import main; main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "pip install 'loopc[durable]'" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------- slow: real processes
@pytest.mark.slow
def test_start_callback_finishes(db: str, tmp_path: Path) -> None:
    r = _start(db, tmp_path)
    assert r.returncode == 0, r.stderr
    started = json.loads(r.stdout)
    assert set(started) == {"run", "status"} and started["status"] == "waiting"
    run = started["run"]
    assert _status(db, run) == {"status": "waiting", "output": None, "error": None, "state": {}}
    r = loopc("callback", run, "--node", "ask_review", "--output", '{"verdict": "approve", "summary": "ok"}',
              "--db", db)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "succeeded"
    assert _status(db, run)["output"] == {"verdict": "approve", "summary": "ok"}
    journal = _journal(db, run)
    assert [r["seq"] for r in journal] == list(range(1, len(journal) + 1))
    keys = [r["key"] for r in journal if r["kind"] == "effect.reserved"]
    assert keys == [f"{run}:act_1:1"] and [e["key"] for e in _sink(db)] == keys
    # a second callback is refused by the engine's own rules (the Run ended)
    r = loopc("callback", run, "--node", "ask_review", "--output", '{"verdict": "approve", "summary": "x"}',
              "--db", db)
    assert r.returncode == 1 and "the Run is succeeded" in r.stderr


@pytest.mark.slow
def test_refused_callback_and_unique_run_ids(db: str, tmp_path: Path) -> None:
    a = json.loads(_start(db, tmp_path).stdout)["run"]
    b = json.loads(_start(db, tmp_path).stdout)["run"]
    assert a != b  # same plan, same input: production Run ids are unique per start
    r = loopc("callback", a, "--node", "ask_review", "--output", '{"verdict": "maybe", "summary": "x"}', "--db", db)
    assert r.returncode == 1 and json.loads(r.stdout)["applied"] is False
    r = loopc("cancel", b, "--db", db)
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "cancelled"
    assert _status(db, a)["status"] == "waiting"
    assert len({e["key"] for e in _sink(db)}) == 2


@pytest.mark.slow
def test_kill9_worker_restart_callback_finishes(db: str, tmp_path: Path) -> None:
    t0 = time.monotonic()
    run = json.loads(_start(db, tmp_path).stdout)["run"]
    w = subprocess.Popen([sys.executable, "-m", "loopc", "durable", "worker", "--db", db], env=ENV, cwd=ROOT,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert "recovering 1 open Run" in (w.stderr.readline() if w.stderr else "")
        time.sleep(1.0)
    finally:
        os.kill(w.pid, signal.SIGKILL)
        w.wait(30)
    w2 = subprocess.Popen([sys.executable, "-m", "loopc", "durable", "worker", "--db", db], env=ENV, cwd=ROOT,
                          stderr=subprocess.DEVNULL)
    try:
        r = loopc("callback", run, "--node", "ask_review", "--output",
                  '{"verdict": "request_changes", "summary": "fix it"}', "--db", db)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["status"] == "succeeded"
    finally:
        w2.terminate()
        w2.wait(30)
    journal = _journal(db, run)
    assert sum(r["kind"] == "run.started" for r in journal) == 1
    assert [r["seq"] for r in journal] == list(range(1, len(journal) + 1))
    delivered = [r["effect"] for r in journal if r["kind"] == "effect.delivered"]
    assert delivered == ["eff_1", "eff_2"]  # the review request and the change note, each once in the journal
    sink = _sink(db)
    assert {e["key"] for e in sink} == {r["key"] for r in journal if r["kind"] == "effect.reserved"}
    print(f"kill -9 crash test: {time.monotonic() - t0:.1f} s")


@pytest.mark.slow
def test_death_after_the_effect_redelivers_with_the_same_key(db: str, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    r = _start(db, tmp_path, env={**ENV, "LOOPC_DURABLE_DIE_AFTER_EFFECT": str(marks)})
    assert r.returncode == -signal.SIGKILL  # died inside the delivery, after the handler ran
    st = Store(db)
    (run,) = st.open_runs()
    assert len(_sink(db)) == 1
    w = subprocess.Popen([sys.executable, "-m", "loopc", "durable", "worker", "--db", db], env=ENV, cwd=ROOT,
                         stderr=subprocess.DEVNULL)
    try:
        r = loopc("callback", run, "--node", "ask_review", "--output", '{"verdict": "approve", "summary": "ok"}',
                  "--db", db)
        assert r.returncode == 0, r.stderr
    finally:
        w.terminate()
        w.wait(30)
    sink = _sink(db)
    assert len(sink) == 2 and sink[0]["key"] == sink[1]["key"] == f"{run}:act_1:1"  # at-least-once, one key
    journal = _journal(db, run)
    assert [r["kind"] for r in journal].count("effect.delivered") == 1  # the journal records it once
    assert _status(db, run)["status"] == "succeeded"


@pytest.mark.slow
def test_old_runs_continue_on_their_own_artifact(db: str, tmp_path: Path) -> None:
    old = json.loads(_start(db, tmp_path).stdout)["run"]
    v2 = tmp_path / "v2.yaml"
    v2.write_text(PLAN.read_text().replace("and answer with approve", "and please answer with approve"))
    new = json.loads(_start(db, tmp_path, plan=v2).stdout)["run"]
    r = loopc("callback", old, "--node", "ask_review", "--output", '{"verdict": "approve", "summary": "ok"}',
              "--db", db)
    assert r.returncode == 0, r.stderr
    d_old = _journal(db, old)[0]["digest"]
    d_new = _journal(db, new)[0]["digest"]
    assert d_old != d_new
    texts = {e["run"]: e["request"]["text"] for e in _sink(db)}
    assert "please" not in texts[old] and "please" in texts[new]
