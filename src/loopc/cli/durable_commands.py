"""``loopc durable`` (docs/durable.md#commands): run plans on DBOS with the
reference engine as the scheduler.  Needs the optional extra
(``pip install 'loopc[durable]'``); without it every subcommand exits 2
with one line saying so.

* ``start PLAN --input FILE --db URL [--catalog F] [--sink F] [--format json]``
  — exit 0 with ``{"run", "status"}`` once the Run first waits or ends;
* ``callback RUN --node N [--item K] (--output JSON | --fail JSON) --db URL``,
  ``approve|reject RUN --node N --by MEMBER [--comment T] --db URL``,
  ``cancel RUN --db URL`` — post the event and wait until the Run waits
  again; print ``{"run", "applied", "reason", "status"}``; exit 0 when
  applied (and for cancelling a cancelled Run: reason "already cancelled"),
  1 when the engine refused it (a Run that ended: also one line on stderr),
  3 when no executor answered within ``--wait`` seconds (≥ 0; the event
  stays queued for the Run);
* ``status RUN --db URL [--format json]`` — ``{"status", "output", "error",
  "state"}``; ``journal RUN --db URL`` — one JSON line per record;
* ``worker --db URL [--executor-id ID]`` — recover the open Runs no other
  worker executes and keep executing them (timers, events) until
  interrupted;
* ``protocol --db URL`` — serve the conformance protocol (docs/durable.md#protocol).

Exit 2: usage errors, an unreadable file, an unknown Run, a bad database URL
(``sqlite:///`` without a path), a SQLite file that does not exist for a
command that only reads (status, journal, the events), a database that
cannot be opened (one line: the cause's first line).
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, NoReturn

import click

MAX_PLAN_BYTES = 16 * 1024 * 1024
MAX_INPUT_BYTES = 1024 * 1024
TERMINAL = ("succeeded", "failed", "cancelled")
#: How often a worker looks for Runs left by commands that died (seconds).
SWEEP_SECONDS = 5.0


def _fail(msg: str, code: int = 2) -> NoReturn:
    from loopc.cli.textsafe import escape_text

    click.echo(f"loopc durable: {escape_text(msg)}", err=True)
    sys.exit(code)


def _need_dbos() -> None:
    try:
        import dbos  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError:
        _fail("the durable runtime needs DBOS: pip install 'loopc[durable]'")


def _store(db: str, read_only: bool = False) -> Any:
    """The loopc tables of ``db``; exit 2 (one line) for a bad URL or a
    database that cannot be opened, and, when ``read_only``, for a SQLite
    file that does not exist (a mistyped path must not create a database);
    exit 2 with the install hint without the ``durable`` extra."""
    try:
        import sqlalchemy  # noqa: F401 - the store's one dependency, part of the extra
    except ImportError:
        _fail("the durable runtime needs DBOS: pip install 'loopc[durable]'")
    from loopc.durable.store import Store, StoreError, normalize_url

    try:
        url = normalize_url(db)
    except StoreError as exc:
        _fail(str(exc))
    if read_only and url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):].split("?", 1)[0]
        if path != ":memory:" and not os.path.isfile(path):
            _fail(f"no database at {path} (sqlite:///PATH must name an existing file for this command)")
    try:
        return Store(db)
    except StoreError as exc:
        _fail(str(exc))


_launched: dict[str, str] = {}


def _log_to_stderr() -> None:
    """loopc's own log lines (a failed delivery, ...) as ``loopc durable:
    MESSAGE`` on stderr, like its other diagnostics."""
    import logging

    log = logging.getLogger("loopc.durable")
    if not log.handlers:
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("loopc durable: %(message)s"))
        log.addHandler(h)
        log.setLevel(logging.INFO)
        log.propagate = False


def _launch(db: str, executor: str, role: str = "command") -> Any:
    _need_dbos()
    _log_to_stderr()
    from loopc.durable import runtime
    from loopc.durable.store import StoreError, first_line

    try:
        runtime.launch(db, executor, role=role)
        _launched["executor"] = executor
        _launched["role"] = role
    except StoreError as exc:
        _fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - DBOS cannot start: one line, no traceback
        _fail(f"cannot start DBOS on {db}: {type(exc).__name__}: {first_line(exc)}")
    return runtime


def _exit(code: int) -> NoReturn:
    """Leave without waiting for the Run's workflow thread (it is blocked in
    a durable wait; everything it did is in the database), after handing
    the open Runs this process executes to the workers' queue
    (docs/durable.md#commands)."""
    from loopc.durable import runtime

    executor = _launched.get("executor")
    try:
        if _launched.get("role") == "worker":  # first: its queue thread must not dequeue what release hands over
            runtime.quiesce()
        else:  # a command dequeues no queue of loopc's; its Run's workflow may still be running
            runtime.silence()
    except Exception:  # noqa: BLE001,S110 - best effort
        pass
    if executor is not None:
        try:
            runtime.release(executor)
        except Exception as exc:  # noqa: BLE001 - the next command or worker still finds the Run
            click.echo(f"loopc durable: could not hand the Run to the workers' queue: {exc}", err=True)
    try:
        runtime.shutdown()
    except Exception:  # noqa: BLE001,S110 - shutting down after the answer was printed
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _json_arg(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        _fail(f"{what} is not JSON: {exc}")


def _artifact(path: str) -> bytes:
    """Artifact bytes from a compiled artifact (JSON) or a plan (YAML, compiled here)."""
    from loopc.cli.inputs import read_input
    from loopc.interpreter.host import program_from_artifact

    data = read_input(path, MAX_PLAN_BYTES)
    if len(data) > MAX_PLAN_BYTES:
        _fail(f"{path}: over {MAX_PLAN_BYTES:,} bytes")
    if data.lstrip()[:1] == b"{":
        prog, why = program_from_artifact(data)
        if prog is None:
            _fail(f"{path}: artifact refused: {why}", 1)
        return data
    from loopc.pipeline import compile_source

    res = compile_source(data, path=path)
    if not res.ok or res.bytes is None:
        for d in res.errors:
            line = f"{d.span.line}:{d.span.column}: " if d.span else ""
            click.echo(f"{path}:{line}error[{d.code}] {d.message}", err=True)
        _fail(f"{path}: the plan does not compile", 1)
    return res.bytes


def describe_wait(w: dict[str, Any]) -> str:
    """One wait of ``status``'s ``waiting`` list as text: ``callback on
    NODE [item K] (act_N attempt A)``, ``approval on NODE (…)``, ``timer
    KIND on NODE due INSTANT``."""
    if w.get("kind") == "timer":
        return f"timer {w.get('timer')} on {w.get('node')} due {w.get('due')} ({w.get('act')})"
    item = f" item {w['item']}" if w.get("item") is not None else ""
    return f"{w.get('kind')} on {w.get('node')}{item} ({w.get('act')} attempt {w.get('attempt')})"


def _emit(obj: Any, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(obj, sort_keys=True, ensure_ascii=False))
    else:
        for k in ("run", "status", "output", "error", "state"):
            if k in obj:
                v = obj[k] if k in ("run", "status") and isinstance(obj[k], str) else \
                    json.dumps(obj[k], sort_keys=True, ensure_ascii=False)
                click.echo(f"{k}: {v}")
        if "waiting" in obj:
            waits = obj["waiting"]
            click.echo("waiting: " + ("; ".join(describe_wait(w) for w in waits) if waits else "nothing"))


DB = click.option("--db", required=True, help="Database URL: sqlite:///PATH or postgresql://USER@HOST/DB.")
FMT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
HANDLERS_OPT = click.option(
    "--handlers", "handler_specs", multiple=True, metavar="MODULE:ATTR",
    help="Register the handler table ATTR of MODULE (a mapping of handler names to factories) before running; "
         "repeatable. Give it to every command that executes the Run (start, the events, worker).")


def _load_handlers(specs: tuple[str, ...]) -> None:
    """Register ``--handlers`` tables; exit 2 with one line for a bad one."""
    from loopc.durable.handlers import BindingError, load_handlers

    for spec in specs:
        try:
            load_handlers(spec)
        except BindingError as exc:
            _fail(str(exc))


WAIT = click.option("--wait", type=click.FloatRange(min=0), default=60.0, show_default=True,
                    help="Seconds to wait for the Run to take the event.")


@click.group("durable")
def durable() -> None:
    """Run plans durably on DBOS (SQLite or Postgres); needs loopc[durable]."""


@durable.command("start")
@click.argument("plan")
@click.option("--input", "input_path", required=True, help="The Plan input: a JSON file ('-' = stdin).")
@DB
@click.option("--catalog", "catalog_path", help="Catalog file whose handler bindings serve the effects.")
@click.option("--sink", help="File the built-in file-sink handler appends effects to "
                             "(default: next to a SQLite database, PATH.effects.jsonl).")
@click.option("--webhook", "webhook", metavar="URL",
              help="Where the built-in webhook handler (loopc.durable/webhook) POSTs effects.")
@click.option("--webhook-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              help="Seconds the webhook waits to connect and for each read of the answer.")
@HANDLERS_OPT
@FMT
def start_cmd(plan: str, input_path: str, db: str, catalog_path: str | None, sink: str | None, webhook: str | None,
              webhook_timeout: float, handler_specs: tuple[str, ...], fmt: str) -> None:
    """Start a Run of PLAN (a plan or a compiled artifact) and run it until it waits or ends."""
    from loopc.cli.inputs import read_input

    _need_dbos()
    _load_handlers(handler_specs)
    options: dict[str, Any] = {}
    if webhook is not None:
        from loopc.durable.handlers import webhook_url_problem

        why = webhook_url_problem(webhook)
        if why is not None:
            _fail(why)
        options["webhook"] = {"url": webhook, "timeout": webhook_timeout}
    artifact = _artifact(plan)
    raw = read_input(input_path, MAX_INPUT_BYTES)
    inp = _json_arg(raw.decode("utf-8", "replace"), "--input")
    if not isinstance(inp, dict):
        _fail("--input must hold a JSON object (the Plan input)")
    catalog = None
    if catalog_path is not None:
        from loopc.cli.plan_commands import _catalog

        catalog = _catalog(catalog_path)
    if catalog is None:
        from loopc.plan import builtin_catalog

        catalog = builtin_catalog()
    if webhook is not None:
        _check_webhook_bound(artifact, catalog)
    if sink is None:
        sink = db[len("sqlite:///"):] + ".effects.jsonl" if db.startswith("sqlite:///") else "loopc-effects.jsonl"
    from loopc.durable import runtime as rt

    run = rt.new_run_id()
    _launch(db, run)
    try:
        got = rt.start_run(artifact, inp, run=run, catalog=catalog, options={"sink": os.path.abspath(sink), **options})
    except Exception as exc:  # noqa: BLE001 - a refused artifact or binding, a database error: one line
        click.echo(f"loopc durable: {exc}", err=True)
        _exit(1)
    _emit(got, fmt)
    _exit(0)


def _check_webhook_bound(artifact: bytes, catalog: Any) -> None:
    """Exit 2 (one line, before any database is touched) when ``--webhook``
    is given but no effect action of the plan is bound to the webhook
    handler in the catalog: the URL would be ignored."""
    from loopc.durable.handlers import EFFECT_ACTIONS, WEBHOOK
    from loopc.interpreter.host import program_from_artifact
    from loopc.plan.builtin import action_type

    prog, _ = program_from_artifact(artifact)
    if prog is None:
        return
    actions = {action_type(n.op, n.config) for n in prog.nodes.values()} & set(EFFECT_ACTIONS)
    bound = [a for a in sorted(actions) if (e := catalog.entry(a)) is not None and e.handler == WEBHOOK]
    if not bound:
        _fail(f"--webhook is given, but the catalog binds none of the plan's effect actions "
              f"({', '.join(sorted(actions)) or 'none'}) to {WEBHOOK}: set that handler in --catalog's bindings")


def _ended(run: str, event: dict[str, Any], status: str, *, leave: Any = sys.exit) -> NoReturn:
    """An event for a Run that already ended: print ``{"run", "applied":
    false, "reason", "status"}``; cancelling a cancelled Run is idempotent
    (exit 0, reason "already cancelled"), anything else is refused (exit 1,
    also one line on stderr)."""
    if event["kind"] == "cancel" and status == "cancelled":
        reason, code = "already cancelled", 0
    else:
        reason, code = f"the Run is {status}", 1
        click.echo(f"loopc durable: refused: {reason}", err=True)
    click.echo(json.dumps({"run": run, "applied": False, "reason": reason, "status": status},
                          sort_keys=True, ensure_ascii=False))
    leave(code)
    raise SystemExit(code)


def _check_run_handlers(row: dict[str, Any]) -> None:
    """Exit 2 (one line, nothing posted) when a handler the Run's bindings
    name is not loadable in this process: the Run's next effect could not
    be performed (docs/durable.md#handlers)."""
    from loopc.durable.handlers import BindingError, handler_factory

    handlers = (row.get("bindings") or {}).get("handlers") or {}
    for name in sorted(set(handlers.values())):
        try:
            handler_factory(str(name))
        except BindingError as exc:
            _fail(f"nothing posted: {exc}; the Run's bindings need it: give this command the same --handlers as "
                  "start (or install the handler's entry point)")


def _post(run: str, db: str, event: dict[str, Any], wait: float) -> NoReturn:
    st = _store(db, read_only=True)
    row = st.run(run)
    if row is None:
        _fail(f"no Run {run} in {db}")
    if row["status"] in TERMINAL:
        _ended(run, event, row["status"])
    st.dispose()
    if event["kind"] != "cancel":
        _check_run_handlers(row)
    rt = _launch(db, run)
    try:
        mid = rt.post(run, event)
        rt.take(run)
        got = rt.wait_outcome(run, mid, wait)
    except Exception as exc:  # noqa: BLE001 - the Run's workflow failed, a database error: one line
        click.echo(f"loopc durable: {exc}", err=True)
        _exit(1)
    if got is None:
        row = _store(db).run(run) or {}
        if row.get("status") in TERMINAL:
            _ended(run, event, row["status"], leave=_exit)
        hint = "start `loopc durable worker`"
        try:
            ws = rt.DBOS.get_workflow_status(run)
            owner = (ws.executor_id or "") if ws is not None and ws.status == "PENDING" else ""
        except Exception:  # noqa: BLE001 - the generic hint then
            owner = ""
        if owner and not owner.startswith("run_") and owner != run:
            hint = f"the Run belongs to executor '{owner}': start `loopc durable worker --executor-id {owner}`"
        click.echo(f"loopc durable: the event is queued for {run}, but no executor took it within {wait:g} s "
                   f"({hint})", err=True)
        _exit(3)
    click.echo(json.dumps({"run": run, "applied": got["applied"], "reason": got["reason"], "status": got["status"]},
                          sort_keys=True, ensure_ascii=False))
    _exit(0 if got["applied"] else 1)


@durable.command("callback")
@click.argument("run")
@click.option("--node", required=True)
@click.option("--item", help="The WorkItem key (fan_out).")
@click.option("--output", "output", help="The callback output (a JSON object).")
@click.option("--fail", "fail", help='A failed callback: {"code", "detail"} (JSON).')
@DB
@WAIT
@HANDLERS_OPT
def callback_cmd(run: str, node: str, item: str | None, output: str | None, fail: str | None, db: str,
                 wait: float, handler_specs: tuple[str, ...]) -> None:
    """Post a callback result (or failure) to the Run's open activation of NODE."""
    _load_handlers(handler_specs)
    if (output is None) == (fail is None):
        _fail("give exactly one of --output and --fail")
    ev: dict[str, Any] = {"kind": "callback", "node": node, "item": item}
    if output is not None:
        ev["output"] = _json_arg(output, "--output")
    else:
        ev["fail"] = _json_arg(fail or "", "--fail")
    _need_dbos()
    _post(run, db, ev, wait)


def _decision(kind: str) -> Any:
    @click.argument("run")
    @click.option("--node", required=True)
    @click.option("--by", required=True, help="The deciding member.")
    @click.option("--comment")
    @DB
    @WAIT
    @HANDLERS_OPT
    def cmd(run: str, node: str, by: str, comment: str | None, db: str, wait: float,
            handler_specs: tuple[str, ...]) -> None:
        from loopc.interpreter.host import is_member_id

        _need_dbos()
        _load_handlers(handler_specs)
        if not is_member_id(by):
            _fail(f"--by {by!r} is not a member id (e.g. usr_ana: a lower-case prefix, '_', then letters, digits, "
                  "'_' or '-'); nothing posted")
        _post(run, db, {"kind": kind, "node": node, "by": by, "comment": comment}, wait)

    cmd.__doc__ = f"{kind.capitalize()} the Run's open approval request of NODE."
    return durable.command(kind)(cmd)


_decision("approve")
_decision("reject")


@durable.command("cancel")
@click.argument("run")
@DB
@WAIT
@HANDLERS_OPT
def cancel_cmd(run: str, db: str, wait: float, handler_specs: tuple[str, ...]) -> None:
    """Cancel the Run (idempotent: cancelling a cancelled Run exits 0 with applied false)."""
    _need_dbos()
    _load_handlers(handler_specs)
    _post(run, db, {"kind": "cancel"}, wait)


@durable.command("status")
@click.argument("run")
@DB
@FMT
def status_cmd(run: str, db: str, fmt: str) -> None:
    """The Run's status, output, error and state (read without starting DBOS)."""
    row = _store(db, read_only=True).run(run)
    if row is None:
        _fail(f"no Run {run} in {db}")
    st = "running" if row["status"] == "starting" else row["status"]
    _emit({"status": st, "output": row["output"], "error": row["error"], "state": row["state"],
           "waiting": row["waiting"] if st not in TERMINAL else []}, fmt)


def _started(text: str) -> str:
    """A Run row's start as RFC 3339 (production rows store seconds since
    the Run epoch; kit rows already hold an instant)."""
    from decimal import Decimal, InvalidOperation

    from loopc.interpreter.host import format_instant

    try:
        return format_instant(Decimal(text))
    except (InvalidOperation, ValueError, OverflowError):
        return text


@durable.command("list")
@DB
@click.option("--status", "status", type=click.Choice(["running", "waiting", "succeeded", "failed", "cancelled"]),
              help="Only the Runs with this status.")
@FMT
def list_cmd(db: str, status: str | None, fmt: str) -> None:
    """The database's Runs, oldest first: id, status, start, artifact digest, what each waits for
    (read without starting DBOS)."""
    rows = _store(db, read_only=True).runs()
    out = []
    for row in rows:
        st = "running" if row["status"] == "starting" else row["status"]
        if status is not None and st != status:
            continue
        out.append({"run": row["run"], "status": st, "startedAt": _started(row["startedAt"]),
                    "digest": row["digest"], "waiting": row["waiting"] if st not in TERMINAL else []})
    if fmt == "json":
        click.echo(json.dumps(out, sort_keys=True, ensure_ascii=False))
        return
    for r in out:
        waits = "; ".join(describe_wait(w) for w in r["waiting"])
        click.echo(f"{r['run']}  {r['status']:<9}  {r['startedAt']}" + (f"  waiting: {waits}" if waits else ""))


@durable.command("journal")
@click.argument("run")
@DB
def journal_cmd(run: str, db: str) -> None:
    """The Run's journal records, one JSON line each, in sequence order."""
    st = _store(db, read_only=True)
    if st.run(run) is None:
        _fail(f"no Run {run} in {db}")
    for rec in st.journal(run):
        click.echo(json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


@durable.command("worker")
@DB
@click.option("--executor-id", default="loopc-worker", show_default=True,
              help="This worker's DBOS executor id: give each of several workers on one database its own, and a "
                   "restarted worker the one it had.")
@HANDLERS_OPT
def worker_cmd(db: str, executor_id: str, handler_specs: tuple[str, ...]) -> None:
    """Recover open Runs, pick up Runs started later, and keep executing them (timers, events) until interrupted."""
    import signal
    import threading

    _need_dbos()
    _load_handlers(handler_specs)
    if not executor_id or executor_id.startswith("run_"):
        _fail("--executor-id must be non-empty and must not look like a Run id")
    rt = _launch(db, executor_id, role="worker")
    n = len(_store(db).open_runs())
    rt.sweep()
    click.echo(f"loopc durable worker: recovering {n} open Run(s); Ctrl-C stops", err=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(SWEEP_SECONDS):
            try:
                rt.sweep(SWEEP_SECONDS)
            except Exception as exc:  # noqa: BLE001 - a database hiccup: try again at the next sweep
                click.echo(f"loopc durable worker: sweep failed: {exc}", err=True)
    except KeyboardInterrupt:
        pass
    _exit(0)


@durable.command("protocol")
@DB
def protocol_cmd(db: str) -> None:
    """Serve the conformance protocol on stdin/stdout with the durable runtime behind it
    (loopc conform --runtime "loopc durable protocol --db URL")."""
    _need_dbos()
    _store(db).dispose()
    from loopc.durable.protocol import serve

    code = serve(sys.stdin, sys.stdout, db)
    sys.stdout.flush()
    os._exit(code)


def register(cli: click.Group) -> None:
    cli.add_command(durable)
