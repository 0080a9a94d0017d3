"""loopc.durable (docs/durable.md): handlers, the store, the CLI, and Runs
that survive kill -9 (issue 27).  Skipped when DBOS (the ``durable`` extra)
is not installed."""
from __future__ import annotations

import json
import os
import shutil
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
    Store(db).dispose()  # the database exists, the Run does not
    r = loopc("status", "run_nope", "--db", db)
    assert r.returncode == 2 and r.stderr.startswith("loopc durable: no Run run_nope") and "Traceback" not in r.stderr


def test_without_the_extra_the_command_says_how_to_install(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['dbos'] = None; sys.argv = ['loopc', 'durable', 'worker', '--db', "
            f"'sqlite:///{tmp_path / 'x.sqlite'}']\nfrom loopc.cli.main import main; main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "pip install 'loopc[durable]'" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args", [["status", "run_x"], ["list"], ["journal", "run_x"], ["cancel", "run_x"],
                                  ["approve", "run_x", "--node", "n", "--by", "usr_a"]])
def test_without_the_extra_every_subcommand_says_how_to_install(tmp_path: Path, args: list[str]) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    code = ("import sys; sys.modules['dbos'] = None; sys.modules['sqlalchemy'] = None; "
            f"sys.argv = ['loopc', 'durable', *{args!r}, '--db', {url!r}]\nfrom loopc.cli.main import main; main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr == "loopc durable: the durable runtime needs DBOS: " \
                                             "pip install 'loopc[durable]'\n", r.stderr


def test_an_event_is_refused_up_front_when_a_bound_handler_is_missing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    st = Store(url)
    st.create_run("run_0123456789abcdef", "sha256:x", {}, "0",
                  {"handlers": {"send_message.callback": "acme/recorder"}, "options": {}})
    st.settle("run_0123456789abcdef", "waiting", None, None, {}, 0)
    st.dispose()
    r = loopc("callback", "run_0123456789abcdef", "--node", "n", "--output", "{}", "--db", url)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("loopc durable: nothing posted: no handler named 'acme/recorder'"), r.stderr
    assert "--handlers" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("by", ["not a member!", "Usr_a", "usr", ""])
def test_approve_refuses_an_invalid_member_id_at_ingress(tmp_path: Path, by: str) -> None:
    url = _ended_run(tmp_path, "waiting")
    r = loopc("approve", "run_0123456789abcdef", "--node", "n", "--by", by, "--db", url)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"loopc durable: --by {by!r} is not a member id"), r.stderr


def test_a_decision_without_an_open_approval_says_approval() -> None:
    from loopc.durable.runtime import _apply

    class Eng:
        status = "waiting"

        def find_open(self, node, item, attempt, kinds):  # noqa: ANN001, ANN202
            return None, f"no open callback on '{node}' (act_1 is completed)"

    got = _apply(Eng(), {"kind": "approve", "node": "notify", "by": "usr_a"})  # type: ignore[arg-type]
    assert got == {"applied": False, "reason": "no open approval on 'notify' (act_1 is completed)",
                   "status": "waiting"}


def test_a_webhook_url_no_binding_uses_is_refused(db: str, tmp_path: Path) -> None:
    r = loopc("start", str(PLAN), "--input", str(tmp_path / "in.json"), "--db", db, "--webhook", "http://127.0.0.1:9/x")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "--webhook is given, but the catalog binds none" in r.stderr and "loopc.durable/webhook" in r.stderr
    assert not Path(db[len("sqlite:///"):]).exists()


def test_readme_input_file_is_shipped_and_matches_the_plan_input() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    shipped = ROOT / "examples" / "callback_review.input.json"
    assert "--input examples/callback_review.input.json" in readme and "review-input.json --db" not in readme
    assert set(json.loads(shipped.read_text("utf-8"))) == set(INPUT)
    r = subprocess.run([sys.executable, "-m", "loopc", "check", "examples/"], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    n_plans = len(list((ROOT / "examples").glob("*.yaml")))
    assert r.returncode == 0 and f"checked {n_plans} file(s)" in r.stderr, r.stdout + r.stderr  # the .json is no plan


def _ended_run(tmp_path: Path, status: str) -> str:
    url = f"sqlite:///{tmp_path / 'ended.sqlite'}"
    st = Store(url)
    st.create_run("run_0123456789abcdef", "sha256:x", {}, "0", {})
    st.settle("run_0123456789abcdef", status, None, None, {}, 0)
    st.dispose()
    return url


def test_an_event_for_an_ended_run_prints_the_refusal_object(tmp_path: Path) -> None:
    url = _ended_run(tmp_path, "succeeded")
    r = loopc("approve", "run_0123456789abcdef", "--node", "n", "--by", "agt_x", "--db", url)
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout) == {"run": "run_0123456789abcdef", "applied": False,
                                    "reason": "the Run is succeeded", "status": "succeeded"}
    assert r.stderr == "loopc durable: refused: the Run is succeeded\n"


def test_cancelling_a_cancelled_run_is_idempotent(tmp_path: Path) -> None:
    url = _ended_run(tmp_path, "cancelled")
    r = loopc("cancel", "run_0123456789abcdef", "--db", url)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert json.loads(r.stdout) == {"run": "run_0123456789abcdef", "applied": False,
                                    "reason": "already cancelled", "status": "cancelled"}


@pytest.mark.parametrize("cmd", ["status", "journal"])
def test_read_commands_refuse_a_missing_sqlite_file(tmp_path: Path, cmd: str) -> None:
    missing = tmp_path / "typo.sqlite"
    r = loopc(cmd, "run_nope", "--db", f"sqlite:///{missing}")
    assert r.returncode == 2 and r.stderr.startswith(f"loopc durable: no database at {missing}"), r.stderr
    assert len(r.stderr.splitlines()) == 1 and not missing.exists()


@pytest.mark.parametrize("args", [["status", "run_x"], ["journal", "run_x"], ["cancel", "run_x"], ["worker"]])
def test_an_empty_sqlite_path_is_a_usage_error(args: list[str]) -> None:
    r = loopc(*args, "--db", "sqlite:///")
    assert r.returncode == 2 and r.stderr == "loopc durable: the database URL sqlite:/// has no path: " \
                                             "use sqlite:///PATH\n", r.stderr


def test_a_database_error_is_one_clean_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.sqlite'}"
    r = loopc("worker", "--db", url, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"loopc durable: cannot open the database {url}: unable to open database file\n"


def test_wait_must_not_be_negative(tmp_path: Path) -> None:
    r = loopc("cancel", "run_x", "--db", f"sqlite:///{tmp_path / 'x.sqlite'}", "--wait", "-1")
    assert r.returncode == 2 and "--wait" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------- slow: real processes
@pytest.mark.slow
def test_start_callback_finishes(db: str, tmp_path: Path) -> None:
    r = _start(db, tmp_path)
    assert r.returncode == 0, r.stderr
    started = json.loads(r.stdout)
    assert set(started) == {"run", "status"} and started["status"] == "waiting"
    run = started["run"]
    assert _status(db, run) == {"status": "waiting", "output": None, "error": None, "state": {},
                                "waiting": [{"kind": "callback", "node": "ask_review", "act": "act_1", "attempt": 1,
                                             "item": None}]}
    r = loopc("status", run, "--db", db)
    assert r.stdout.splitlines()[-1] == "waiting: callback on ask_review (act_1 attempt 1)", r.stdout
    r = loopc("callback", run, "--node", "ask_review", "--output", '{"verdict": "approve", "summary": "ok"}',
              "--db", db)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "succeeded"
    assert _status(db, run)["output"] == {"verdict": "approve", "summary": "ok"}
    journal = _journal(db, run)
    assert [r["seq"] for r in journal] == list(range(1, len(journal) + 1))
    keys = [r["key"] for r in journal if r["kind"] == "effect.reserved"]
    assert keys == [f"{run}:act_1:1"] and [e["key"] for e in _sink(db)] == keys
    # DBOS stored everything as JSON, never pickle
    import sqlalchemy as sa

    eng = sa.create_engine(db)
    with eng.connect() as c:
        for table in ("workflow_status", "operation_outputs", "notifications", "workflow_events"):
            kinds = {r[0] for r in c.execute(sa.text(f"select distinct serialization from {table}"))}
            assert kinds <= {"portable_json", None}, (table, kinds)
    eng.dispose()
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


@pytest.fixture
def postgres(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A throw-away Postgres server on a Unix socket (no TCP listener), from
    Debian's ``postgresql`` package; run as the ``postgres`` user when the
    tests run as root.  Skipped, with the reason, where it cannot start."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("no Postgres server binaries (initdb, pg_ctl): apt-get install postgresql")
    pre: list[str] = []
    base = Path(f"/tmp/loopc-pg-{os.getpid()}-{tmp_path.name[-12:]}")
    base.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        import pwd

        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
        os.chown(base, pw.pw_uid, pw.pw_gid)
        pre = ["runuser", "-u", "postgres", "--"]
    port = str(40000 + os.getpid() % 20000)
    r = subprocess.run([*pre, initdb, "-D", str(base / "data"), "-A", "trust", "-U", "postgres"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"initdb failed: {r.stderr.strip()[-300:]}")
    r = subprocess.run([*pre, pg_ctl, "-D", str(base / "data"), "-o", f"-c listen_addresses='' -k {base} -p {port}",
                        "-l", str(base / "log"), "-w", "start"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"the Postgres server did not start: {r.stderr.strip()[-300:]}")
    (tmp_path / "in.json").write_text(json.dumps(INPUT))
    try:
        yield f"postgresql+psycopg://postgres@/postgres?host={base}&port={port}"
    finally:
        subprocess.run([*pre, pg_ctl, "-D", str(base / "data"), "-m", "immediate", "stop"], capture_output=True,
                       timeout=120)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
def test_postgres_kill9_worker_restart_callback_finishes(postgres: str, tmp_path: Path) -> None:
    _kill9_flow(postgres, tmp_path, ["--sink", str(tmp_path / "pg.effects.jsonl")], tmp_path / "pg.effects.jsonl")


@pytest.mark.slow
def test_kill9_worker_restart_callback_finishes(db: str, tmp_path: Path) -> None:
    _kill9_flow(db, tmp_path, [], Path(db[len("sqlite:///"):] + ".effects.jsonl"))


def _kill9_flow(db: str, tmp_path: Path, extra: list[str], sink_path: Path) -> None:
    t0 = time.monotonic()
    r = loopc("start", str(PLAN), "--input", str(tmp_path / "in.json"), "--db", db, "--format", "json", *extra)
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)["run"]
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
    sink = [json.loads(line) for line in sink_path.read_text().splitlines()]
    assert {e["key"] for e in sink} == {r["key"] for r in journal if r["kind"] == "effect.reserved"}
    print(f"kill -9 crash test ({db.split(':')[0]}): {time.monotonic() - t0:.1f} s")


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


@pytest.mark.slow
def test_a_worker_fires_timers_on_the_wall_clock(db: str, tmp_path: Path) -> None:
    (tmp_path / "in.json").write_text(json.dumps({"owner": "usr_ana", "room": {"kind": "channel", "scopeId": "chn_r"},
                                                  "task_title": "X", "delay": "PT1S"}))
    run = json.loads(_start(db, tmp_path, plan=ROOT / "examples" / "set_variable_timer.yaml").stdout)["run"]
    assert _status(db, run)["status"] == "waiting"
    w = subprocess.Popen([sys.executable, "-m", "loopc", "durable", "worker", "--db", db], env=ENV, cwd=ROOT,
                         stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if _status(db, run)["status"] != "waiting":
                break
            time.sleep(0.1)
    finally:
        w.terminate()
        w.wait(30)
    got = _status(db, run)
    assert got["status"] == "succeeded" and got["state"]["phase"] == "followed_up"
    kinds = [r["kind"] for r in _journal(db, run)]
    assert "timer.fired" in kinds and kinds.index("timer.scheduled") < kinds.index("timer.fired")


@pytest.mark.slow
def test_approve_reject_and_failed_callbacks(db: str, tmp_path: Path) -> None:
    plan = ROOT / "src" / "loopc" / "conformance" / "scenarios" / "plans" / "approval.yaml"
    (tmp_path / "in.json").write_text(json.dumps({"approver": "usr_boss", "feedback": {"kind": "thread",
                                                                                       "scopeId": "thr_f"}}))
    yes = json.loads(_start(db, tmp_path, plan=plan).stdout)["run"]
    no = json.loads(_start(db, tmp_path, plan=plan).stdout)["run"]
    r = loopc("approve", yes, "--node", "signoff", "--by", "usr_boss", "--comment", "ship", "--db", db)
    assert r.returncode == 0, r.stderr
    assert _status(db, yes) == {"status": "succeeded", "output": {"by": "usr_boss", "comment": "ship"}, "error": None,
                                "state": {}, "waiting": []}
    r = loopc("reject", no, "--node", "signoff", "--by", "usr_boss", "--comment", "not yet", "--db", db)
    assert r.returncode == 0, r.stderr
    assert _status(db, no)["error"]["code"] == "release_rejected"
    approvals = [e for e in _sink(db) if e["action"] == "request_approval"]
    assert {e["run"] for e in approvals} == {yes, no}
    # a callback addressed to an approval is refused with the engine's reason
    (tmp_path / "in.json").write_text(json.dumps(INPUT))
    cb = json.loads(_start(db, tmp_path).stdout)["run"]
    r = loopc("callback", cb, "--node", "ask_review", "--fail", '{"code": "agent.unavailable", "detail": "away"}',
              "--db", db)
    assert r.returncode == 0, r.stderr  # a failed callback is applied: the node retries after its back-off
    kinds = [r["kind"] for r in _journal(db, cb)]
    assert "callback.failed" in kinds and kinds[-1] == "timer.scheduled"


@pytest.mark.slow
def test_start_refuses_an_input_that_breaks_the_contract(db: str, tmp_path: Path) -> None:
    bad = dict(INPUT)
    bad["reviewr"] = bad.pop("reviewer")
    (tmp_path / "in.json").write_text(json.dumps(bad))
    r = _start(db, tmp_path)
    assert r.returncode == 1 and "did you mean 'reviewer'" in r.stderr and "Traceback" not in r.stderr
    assert Store(db).open_runs() == []
    (tmp_path / "in.json").write_text("[1, 2]")
    r = _start(db, tmp_path)
    assert r.returncode == 2 and "JSON object" in r.stderr


@pytest.mark.slow
def test_a_workflow_that_stops_with_an_error_is_reported_not_waited_for(tmp_path: Path) -> None:
    script = f"""
import os, sys
from loopc.pipeline import compile_source
from loopc.plan import builtin_catalog
from loopc.durable import handlers, runtime as rt

st = rt.launch("sqlite:///{tmp_path / 'x.sqlite'}", "t")

def broken(*args, **kwargs):  # the database refuses the Run's first settle
    raise RuntimeError("the database is gone")

st.settle = broken
art = compile_source(open({str(PLAN)!r}, "rb").read(), path="p.yaml").bytes
try:
    rt.start_run(art, {INPUT!r}, run=rt.new_run_id(), catalog=builtin_catalog(), options={{"sink": {str(tmp_path / 's.jsonl')!r}}})
except rt.DurableError as exc:
    print("refused:", exc)
rt.shutdown()
sys.stdout.flush()
os._exit(0)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=120)
    assert "refused: the Run's workflow stopped (ERROR)" in r.stdout, r.stdout + r.stderr
    assert "the database is gone" in r.stdout


def _executor_of(db: str, run: str) -> str:
    import sqlalchemy as sa

    eng = sa.create_engine(db)
    with eng.connect() as c:
        got = c.execute(sa.text("select executor_id from workflow_status where workflow_uuid = :r"), {"r": run}).scalar()
    eng.dispose()
    return str(got)


def _worker(db: str, executor: str) -> subprocess.Popen[str]:
    w = subprocess.Popen([sys.executable, "-m", "loopc", "durable", "worker", "--db", db, "--executor-id", executor],
                         env=ENV, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert "recovering" in (w.stderr.readline() if w.stderr else "")
    return w


@pytest.mark.slow
def test_a_second_worker_leaves_a_live_workers_runs_alone(db: str, tmp_path: Path) -> None:
    run = json.loads(_start(db, tmp_path).stdout)["run"]
    assert _executor_of(db, run) == run
    a = _worker(db, "wa")
    try:
        for _ in range(100):
            if _executor_of(db, run) == "wa":
                break
            time.sleep(0.1)
        assert _executor_of(db, run) == "wa"
        b = _worker(db, "wb")
        time.sleep(1.5)
        assert _executor_of(db, run) == "wa"  # not taken from the live worker
        os.kill(b.pid, signal.SIGKILL)
        b.wait(30)
    finally:
        os.kill(a.pid, signal.SIGKILL)
        a.wait(30)
    ev = ["--node", "ask_review", "--output", '{"verdict": "approve", "summary": "ok"}', "--db", db]
    r = loopc("callback", run, *ev, "--wait", "1")
    assert r.returncode == 3 and "no executor took it" in r.stderr  # its worker is dead: the event waits
    assert "--executor-id wa" in r.stderr, r.stderr
    a = _worker(db, "wa")  # the worker comes back with its id, takes its Run back and applies the queued event
    try:
        for _ in range(300):
            if _status(db, run)["status"] != "waiting":
                break
            time.sleep(0.1)
    finally:
        a.terminate()
        a.wait(30)
    assert _status(db, run)["status"] == "succeeded"
    assert [x["kind"] for x in _journal(db, run)].count("callback.accepted") == 1


@pytest.mark.slow
def test_a_stopped_worker_hands_its_runs_back_quietly(db: str, tmp_path: Path) -> None:
    run = json.loads(_start(db, tmp_path).stdout)["run"]
    w = _worker(db, "wq")
    for _ in range(100):
        if _executor_of(db, run) == "wq":
            break
        time.sleep(0.1)
    w.send_signal(signal.SIGTERM)
    _, err = w.communicate(timeout=60)
    assert w.returncode == 0 and err == "", err  # no DBOS log line (the queue thread stopped before the hand-over)
    import sqlalchemy as sa

    eng = sa.create_engine(db)
    with eng.connect() as c:
        got = c.execute(sa.text("select status, queue_name from workflow_status where workflow_uuid = :r"),
                        {"r": run}).one()
    eng.dispose()
    assert tuple(got) == ("ENQUEUED", "loopc-runs")  # handed to the workers' queue, not re-taken by itself


@pytest.mark.slow
def test_a_running_worker_picks_up_a_run_started_after_it_and_fires_its_timer(db: str, tmp_path: Path) -> None:
    w = _worker(db, "loopc-worker")  # no open Run when it starts
    try:
        (tmp_path / "in.json").write_text(json.dumps({"owner": "usr_ana", "room": {"kind": "channel",
                                                                                   "scopeId": "chn_r"},
                                                      "task_title": "X", "delay": "PT2S"}))
        run = json.loads(_start(db, tmp_path, plan=ROOT / "examples" / "set_variable_timer.yaml").stdout)["run"]
        got = _status(db, run)
        if got["status"] == "waiting":  # (a loaded machine may already have fired it)
            assert [(x["kind"], x["timer"]) for x in got["waiting"]] == [("timer", "wait")], got
        for _ in range(300):
            if _status(db, run)["status"] != "waiting":
                break
            time.sleep(0.1)
    finally:
        w.terminate()
        w.wait(30)
    got = _status(db, run)
    assert got["status"] == "succeeded" and got["waiting"] == [], got
    assert _executor_of(db, run) == "loopc-worker"  # the worker fired it, not a command
    kinds = [r["kind"] for r in _journal(db, run)]
    assert kinds.count("run.started") == 1 and "timer.fired" in kinds


# ---------------------------------------------------------------- the webhook handler (HTTP to 127.0.0.1)
class _Receiver:
    """A webhook receiver on 127.0.0.1 (an ephemeral port): records every
    POST; ``/ok`` answers 204, ``/fail`` 503, ``/moved`` 302 to ``/ok``,
    ``/slow`` sleeps 1 s.  It stops by itself after 120 s."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.got: list[dict] = []
        recv = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                recv.got.append({"path": self.path, "key": self.headers.get("Idempotency-Key"),
                                 "type": self.headers.get("Content-Type"), "body": json.loads(body)})
                if self.path == "/slow":
                    time.sleep(1.0)
                code = {"/ok": 204, "/fail": 503, "/moved": 302}.get(self.path, 200)
                self.send_response(code)
                if code == 302:
                    self.send_header("Location", "/ok")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.timer = threading.Timer(120.0, self.server.shutdown)
        self.timer.daemon = True
        self.timer.start()

    def stop(self) -> None:
        self.timer.cancel()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():  # type: ignore[no-untyped-def]
    r = _Receiver()
    try:
        yield r
    finally:
        r.stop()


_EFFECT = Effect(key="run_1:act_1:1", run="run_1", act="act_1", attempt=1, node="n", action="send_message.sent",
                 effect="eff_1", ordinal=1, request={"text": "hi"})


def test_webhook_posts_the_effect_as_json_with_its_key(receiver: _Receiver) -> None:
    from loopc.durable.handlers import Webhook

    assert Webhook(receiver.url + "/ok").deliver(_EFFECT)
    (got,) = receiver.got
    assert got["key"] == "run_1:act_1:1" and got["type"] == "application/json" and got["body"] == _EFFECT.to_json()


def test_webhook_non_2xx_redirect_timeout_and_refusal_are_not_delivered(receiver: _Receiver) -> None:
    import socket

    from loopc.durable.handlers import Webhook

    assert not Webhook(receiver.url + "/fail").deliver(_EFFECT)
    assert not Webhook(receiver.url + "/moved").deliver(_EFFECT)
    assert not Webhook(receiver.url + "/slow", timeout=0.2).deliver(_EFFECT)
    assert [g["path"] for g in receiver.got] == ["/fail", "/moved", "/slow"]  # the redirect was not followed
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert not Webhook(f"http://127.0.0.1:{port}/").deliver(_EFFECT)
    for bad in ("ftp://x/y", "http:///nohost", "http://h:99999/"):
        with pytest.raises(ValueError, match="webhook URL"):
            Webhook(bad)


# ---------------------------------------------------------------- custom handlers
@pytest.mark.parametrize(("spec", "why"), [
    ("nocolon", "expected MODULE:ATTR"),
    ("no_such_module_x:T", "cannot import no_such_module_x: ModuleNotFoundError"),
    ("json:NOPE", "json has no attribute NOPE"),
    ("json:dumps", "must be a non-empty mapping"),
])
def test_a_bad_handlers_spec_is_one_line(tmp_path: Path, spec: str, why: str) -> None:
    r = loopc("start", str(PLAN), "--input", "-", "--db", f"sqlite:///{tmp_path / 'x.sqlite'}", "--handlers", spec)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and why in r.stderr, r.stderr
    assert not (tmp_path / "x.sqlite").exists()


def test_a_handlers_module_that_exits_on_import_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "quits.py").write_text("raise SystemExit(7)\n")
    r = loopc("start", str(PLAN), "--input", "-", "--db", f"sqlite:///{tmp_path / 'x.sqlite'}", "--handlers",
              "quits:H", env={**ENV, "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 2 and r.stderr == "loopc durable: --handlers 'quits:H': cannot import quits: SystemExit: 7\n"


def test_an_installed_entry_point_handler_is_found(tmp_path: Path) -> None:
    (tmp_path / "acme_hooks.py").write_text("class H:\n    def deliver(self, e):\n        return True\n\n"
                                            "def make(options):\n    return H()\n")
    dist = tmp_path / "acme_hooks-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-hooks\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[loopc.durable.handlers]\nacme/hook = acme_hooks:make\n"
                                           "acme/broken = acme_hooks:missing\n")
    code = ("from loopc.durable.handlers import handler_factory, BindingError\n"
            "print(type(handler_factory('acme/hook')({})).__name__)\n"
            "for n in ('acme/broken', 'acme/none'):\n"
            "    try:\n        handler_factory(n)\n    except BindingError as e:\n        print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**ENV, "PYTHONPATH": str(tmp_path)})
    lines = r.stdout.splitlines()
    assert lines[0] == "H", r.stdout + r.stderr
    assert "'acme/broken' (entry point acme_hooks:missing) cannot be loaded: AttributeError" in lines[1]
    assert "no handler named 'acme/none'" in lines[2] and "acme/hook" in lines[2]


# ---------------------------------------------------------------- list and waiting
def test_list_names_runs_status_and_what_they_wait_for(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    st = Store(url)
    st.create_run("run_b", "sha256:b", {}, "20", {})
    st.create_run("run_a", "sha256:a", {}, "10", {})
    st.settle("run_a", "waiting", None, None, {}, 3,
              [{"kind": "approval", "node": "signoff", "act": "act_2", "attempt": 1, "item": None},
               {"kind": "timer", "timer": "timeout", "node": "signoff", "act": "act_2", "due": "2026-01-01T00:01:10Z"}])
    st.settle("run_b", "succeeded", {"x": 1}, None, {}, 5)
    st.dispose()
    r = loopc("list", "--db", url, "--format", "json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [(x["run"], x["status"], x["startedAt"]) for x in got] == [("run_a", "waiting", "2026-01-01T00:00:10Z"),
                                                                     ("run_b", "succeeded", "2026-01-01T00:00:20Z")]
    assert got[0]["waiting"][0]["kind"] == "approval" and got[1]["waiting"] == []
    r = loopc("list", "--db", url, "--status", "waiting")
    assert r.stdout == ("run_a  waiting    2026-01-01T00:00:10Z  waiting: approval on signoff (act_2 attempt 1); "
                        "timer timeout on signoff due 2026-01-01T00:01:10Z (act_2)\n"), r.stdout
    r = loopc("status", "run_a", "--db", url)
    assert r.stdout.splitlines()[0] == "status: waiting", r.stdout  # text: no JSON quotes
    r = loopc("status", "run_a", "--db", url, "--format", "json")
    assert set(json.loads(r.stdout)) == {"status", "output", "error", "state", "waiting"}
    r = loopc("list", "--db", url, "--status", "bogus")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = loopc("list", "--db", f"sqlite:///{tmp_path / 'missing.sqlite'}")
    assert r.returncode == 2 and r.stderr.startswith("loopc durable: no database at")


def _webhook_catalog(tmp_path: Path) -> Path:
    """The built-in catalog with both send_message actions bound to the webhook."""
    data = builtin_catalog().to_json()
    for b in data["bindings"]:
        if b["action"].startswith("send_message."):
            b["handler"] = "loopc.durable/webhook"
    p = tmp_path / "catalog.json"
    p.write_text(json.dumps(data))
    return p


@pytest.mark.slow
def test_webhook_kill9_during_delivery_redelivers_with_the_same_key(db: str, tmp_path: Path,
                                                                    receiver: _Receiver) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    hook = ["--catalog", str(_webhook_catalog(tmp_path)), "--webhook", receiver.url + "/ok", "--webhook-timeout", "5"]
    r = loopc("start", str(PLAN), "--input", str(tmp_path / "in.json"), "--db", db, "--format", "json", *hook,
              env={**ENV, "LOOPC_DURABLE_DIE_AFTER_EFFECT": str(marks)})
    assert r.returncode == -signal.SIGKILL  # died inside the delivery, after the POST was answered
    (run,) = Store(db).open_runs()
    assert [g["key"] for g in receiver.got] == [f"{run}:act_1:1"]
    r = loopc("callback", run, "--node", "ask_review", "--output",
              '{"verdict": "request_changes", "summary": "fix it"}', "--db", db)
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "succeeded", r.stdout + r.stderr
    keys = [g["key"] for g in receiver.got]
    assert keys[:2] == [f"{run}:act_1:1"] * 2  # redelivered after the crash, with the same key
    assert len(keys) == 3 and keys[2].startswith(f"{run}:act_") and keys[2] != keys[0]  # the change note, once
    assert all(g["body"]["key"] == g["key"] and g["path"] == "/ok" for g in receiver.got)
    journal = _journal(db, run)
    assert [x["kind"] for x in journal].count("effect.delivered") == 2  # each effect recorded once
    assert not _sink(db)  # nothing went to the file sink


@pytest.mark.slow
def test_a_failing_webhook_is_a_failed_delivery_and_custom_handlers_load(db: str, tmp_path: Path,
                                                                       receiver: _Receiver) -> None:
    r = _start_hooked(db, tmp_path, ["--catalog", str(_webhook_catalog(tmp_path)), "--webhook",
                                     receiver.url + "/fail"])
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)["run"]
    # loopc's own one-line format, no DBOS log line
    assert r.stderr == f"loopc durable: webhook {receiver.url}/fail: effect {run}:act_1:1 not delivered: HTTP 503\n"
    run = json.loads(r.stdout)["run"]
    kinds = [x["kind"] for x in _journal(db, run)]
    assert "effect.delivered" not in kinds and kinds[-1] == "timer.scheduled"  # the retry policy's back-off
    assert [w["timer"] for w in _status(db, run)["waiting"]] == ["retry"]
    # a custom handler table given with --handlers serves a catalog binding
    (tmp_path / "my_hooks.py").write_text(
        "import json\nclass Rec:\n    def __init__(self, o):\n        self.path = o['sink'] + '.mine'\n"
        "    def deliver(self, e):\n        open(self.path, 'a').write(e.key + '\\n')\n        return True\n"
        "HANDLERS = {'acme/mine': Rec}\n")
    data = json.loads(_webhook_catalog(tmp_path).read_text().replace("loopc.durable/webhook", "acme/mine"))
    (tmp_path / "mine.json").write_text(json.dumps(data))
    env = {**ENV, "PYTHONPATH": str(tmp_path)}
    r = _start_hooked(db, tmp_path, ["--catalog", str(tmp_path / "mine.json")], env=env)
    assert r.returncode == 1 and "no handler named 'acme/mine'" in r.stderr  # not registered: no Run
    r = _start_hooked(db, tmp_path, ["--catalog", str(tmp_path / "mine.json"), "--handlers", "my_hooks:HANDLERS"],
                      env=env)
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)["run"]
    mine = Path(db[len("sqlite:///"):] + ".effects.jsonl.mine").read_text().split()
    assert mine == [f"{run}:act_1:1"]


@pytest.mark.slow
def test_a_command_without_the_runs_handlers_changes_nothing_and_the_same_command_with_them_finishes(
        db: str, tmp_path: Path) -> None:
    (tmp_path / "rec_hooks.py").write_text(
        "class Rec:\n    def __init__(self, o):\n        self.path = o['sink'] + '.rec'\n"
        "    def deliver(self, e):\n        open(self.path, 'a').write(e.key + '\\n')\n        return True\n"
        "HANDLERS = {'acme/recorder': Rec}\n")
    data = json.loads(_webhook_catalog(tmp_path).read_text().replace("loopc.durable/webhook", "acme/recorder"))
    (tmp_path / "rec.json").write_text(json.dumps(data))
    env = {**ENV, "PYTHONPATH": str(tmp_path)}
    hooks = ["--handlers", "rec_hooks:HANDLERS"]
    r = _start_hooked(db, tmp_path, ["--catalog", str(tmp_path / "rec.json"), *hooks], env=env)
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)["run"]
    before = _journal(db, run)
    out = '{"verdict": "request_changes", "summary": "fix it"}'
    r = loopc("callback", run, "--node", "ask_review", "--output", out, "--db", db, env=env)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "acme/recorder" in r.stderr, r.stderr
    assert _journal(db, run) == before and _status(db, run)["waiting"][0]["node"] == "ask_review"
    r = loopc("callback", run, "--node", "ask_review", "--output", out, "--db", db, *hooks, env=env)
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "succeeded", r.stdout + r.stderr
    assert r.stderr == ""
    assert len(Path(db[len("sqlite:///"):] + ".effects.jsonl.rec").read_text().split()) == 2


def _start_hooked(db: str, tmp: Path, extra: list[str], env: dict[str, str] | None = None
                  ) -> subprocess.CompletedProcess[str]:
    return loopc("start", str(PLAN), "--input", str(tmp / "in.json"), "--db", db, "--format", "json", *extra, env=env)


def test_a_database_of_an_older_loopc_gets_the_waiting_column(tmp_path: Path) -> None:
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    eng = sa.create_engine(url)
    with eng.begin() as c:  # loopc_runs as an older loopc made it (no 'waiting')
        c.execute(sa.text("CREATE TABLE loopc_runs (run VARCHAR(64) PRIMARY KEY, digest VARCHAR(100) NOT NULL, "
                          "input TEXT NOT NULL, started_at VARCHAR(64) NOT NULL, bindings TEXT NOT NULL, "
                          "status VARCHAR(32) NOT NULL, output TEXT, error TEXT, state TEXT, records INTEGER NOT NULL)"))
        c.execute(sa.text("INSERT INTO loopc_runs VALUES ('run_old', 'sha256:x', '{}', '5', '{}', 'waiting', "
                          "NULL, NULL, NULL, 2)"))
    eng.dispose()
    r = loopc("status", "run_old", "--db", url, "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["waiting"] == [], r.stderr
    assert Store(url).run("run_old")["waiting"] == []
