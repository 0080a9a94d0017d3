"""loopc's own tables next to DBOS's (docs/durable.md#storage): artifacts
by digest, one row per Run (its pinned artifact digest, input, handler
bindings and latest status) and one row per journal record.  SQLAlchemy
Core (a DBOS dependency); SQLite by default, Postgres by URL.  Nothing
here imports DBOS, so ``status`` and ``journal`` read without starting it.
"""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Iterator

import sqlalchemy as sa

__all__ = ["Store", "StoreError", "first_line", "normalize_url"]

_meta = sa.MetaData()
artifacts = sa.Table("loopc_artifacts", _meta,
                     sa.Column("digest", sa.String(100), primary_key=True),
                     sa.Column("artifact", sa.Text, nullable=False))
runs = sa.Table("loopc_runs", _meta,
                sa.Column("run", sa.String(64), primary_key=True),
                sa.Column("digest", sa.String(100), nullable=False),
                sa.Column("input", sa.Text, nullable=False),
                sa.Column("started_at", sa.String(64), nullable=False),
                sa.Column("bindings", sa.Text, nullable=False),
                sa.Column("status", sa.String(32), nullable=False),
                sa.Column("output", sa.Text),
                sa.Column("error", sa.Text),
                sa.Column("state", sa.Text),
                sa.Column("records", sa.Integer, nullable=False, default=0),
                sa.Column("waiting", sa.Text))
journal = sa.Table("loopc_journal", _meta,
                   sa.Column("run", sa.String(64), primary_key=True),
                   sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
                   sa.Column("step", sa.Integer, nullable=False),
                   sa.Column("record", sa.Text, nullable=False))


class StoreError(Exception):
    """The database URL is not usable or the database cannot be reached."""


def normalize_url(url: str) -> str:
    """``sqlite:///path`` or a Postgres URL (``postgresql://…``,
    ``postgresql+psycopg://…``) → the SQLAlchemy URL; raises
    :class:`StoreError` for any other scheme and for ``sqlite:///`` with an
    empty path (docs/durable.md#commands)."""
    if url.startswith("sqlite:///"):
        if not url[len("sqlite:///"):]:
            raise StoreError("the database URL sqlite:/// has no path: use sqlite:///PATH")
        return url
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://", "postgresql+psycopg2://")):
        if url.startswith("postgres://"):
            url = "postgresql://" + url[len("postgres://"):]
        return url
    raise StoreError(f"unsupported database URL {url!r}: use sqlite:///PATH or postgresql://USER@HOST/DB")


def first_line(exc: BaseException) -> str:
    """The first non-empty line of the error's cause: for a SQLAlchemy error
    the driver's message (``exc.orig``), without SQLAlchemy's SQL echo and
    its sqlalche.me link; else ``str(exc)`` (or the class name)."""
    cause = getattr(exc, "orig", None) or exc
    for line in str(cause).splitlines():
        if line.strip():
            return line.strip()
    return type(cause).__name__


def _dumps(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _start_order(row: dict[str, Any]) -> tuple[Any, ...]:
    """Sort key: production Runs by start instant (seconds, a decimal);
    kit Runs (an RFC 3339 start) after them, by text; then by id."""
    try:
        return (0, Decimal(row["startedAt"]), row["run"])
    except ArithmeticError:
        return (1, str(row["startedAt"]), row["run"])


class Store:
    """The loopc tables of one database; creates them on first use."""

    def __init__(self, url: str) -> None:
        self.url = normalize_url(url)
        kw: dict[str, Any] = {}
        if self.url.startswith("sqlite"):
            kw["connect_args"] = {"timeout": 30}
        try:
            self.engine = sa.create_engine(self.url, **kw)
            for attempt in range(5):
                try:
                    _meta.create_all(self.engine)
                    break
                except sa.exc.OperationalError:  # another process created a table between the check and the create
                    if attempt == 4:
                        raise
            self._add_missing_columns()
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"cannot open the database {url}: {first_line(exc)}") from None
        except ImportError as exc:  # a Postgres URL without a driver
            raise StoreError(f"cannot open the database {url}: {first_line(exc)}") from None

    def _add_missing_columns(self) -> None:
        """A database made by an older loopc lacks ``loopc_runs.waiting``:
        add it (nullable; such Runs show no waits until they settle again)."""
        def has() -> bool:
            return "waiting" in {c["name"] for c in sa.inspect(self.engine).get_columns("loopc_runs")}

        if has():
            return
        try:
            with self.engine.begin() as c:
                c.execute(sa.text("ALTER TABLE loopc_runs ADD COLUMN waiting TEXT"))
        except sa.exc.SQLAlchemyError:
            if not has():  # another process may have added it first
                raise

    def dispose(self) -> None:
        self.engine.dispose()

    # ---------------------------------------------------------------- writes
    def put_artifact(self, digest: str, text: str) -> None:
        try:
            with self.engine.begin() as c:
                if c.execute(sa.select(artifacts.c.digest).where(artifacts.c.digest == digest)).first() is None:
                    c.execute(artifacts.insert().values(digest=digest, artifact=text))
        except sa.exc.IntegrityError:  # another process stored it first (content-addressed: the same text)
            pass

    def create_run(self, run: str, digest: str, inp: Any, started_at: str, bindings: Any) -> None:
        with self.engine.begin() as c:
            c.execute(runs.insert().values(run=run, digest=digest, input=_dumps(inp), started_at=started_at,
                                           bindings=_dumps(bindings), status="starting", records=0))

    def append(self, run: str, records: list[dict[str, Any]]) -> None:
        """Insert journal records; a record already stored (same Run and
        ``seq``: a re-executed step after a crash) is skipped, so the
        write is idempotent."""
        if not records:
            return
        with self.engine.begin() as c:
            have = {r[0] for r in c.execute(sa.select(journal.c.seq).where(
                journal.c.run == run, journal.c.seq.in_([r["seq"] for r in records])))}
            rows = [{"run": run, "seq": r["seq"], "step": r["step"], "record": _dumps(r)}
                    for r in records if r["seq"] not in have]
            if rows:
                c.execute(journal.insert(), rows)

    def settle(self, run: str, status: str, output: Any, error: Any, state: Any, records: int,
               waiting: list[dict[str, Any]] | None = None) -> None:
        """The Run's latest status, output, error, state, journal length and
        what it waits for (:func:`loopc.interpreter.host.waiting_for`)."""
        with self.engine.begin() as c:
            c.execute(runs.update().where(runs.c.run == run).values(
                status=status, output=_dumps(output), error=_dumps(error), state=_dumps(state), records=records,
                waiting=_dumps(waiting or [])))

    # ---------------------------------------------------------------- reads
    def artifact(self, digest: str) -> str | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(artifacts.c.artifact).where(artifacts.c.digest == digest)).first()
        return None if row is None else str(row[0])

    def run(self, run: str) -> dict[str, Any] | None:
        """The Run's row: ``{"run", "digest", "input", "startedAt",
        "bindings", "status", "output", "error", "state", "records",
        "waiting"}``."""
        with self.engine.connect() as c:
            row = c.execute(sa.select(runs).where(runs.c.run == run)).first()
        return None if row is None else self._row(row)

    @staticmethod
    def _row(row: Any) -> dict[str, Any]:
        m = row._mapping
        return {"run": m["run"], "digest": m["digest"], "input": json.loads(m["input"]),
                "startedAt": m["started_at"], "bindings": json.loads(m["bindings"]), "status": m["status"],
                "output": json.loads(m["output"]) if m["output"] else None,
                "error": json.loads(m["error"]) if m["error"] else None,
                "state": json.loads(m["state"]) if m["state"] else {}, "records": m["records"],
                "waiting": json.loads(m["waiting"]) if m["waiting"] else []}

    def runs(self, status: str | None = None) -> list[dict[str, Any]]:
        """Every Run's row (:meth:`run`), oldest start first (then by id);
        with ``status``, only the Runs whose stored status is that."""
        q = sa.select(runs)
        if status is not None:
            q = q.where(runs.c.status == status)
        with self.engine.connect() as c:
            rows = [self._row(r) for r in c.execute(q)]
        return sorted(rows, key=_start_order)

    def open_runs(self) -> list[str]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(runs.c.run).where(runs.c.status.not_in(("succeeded", "failed", "cancelled"))))
            return [str(r[0]) for r in rows]

    def journal(self, run: str) -> Iterator[dict[str, Any]]:
        """The Run's journal records in ``seq`` order."""
        with self.engine.connect() as c:
            for row in c.execute(sa.select(journal.c.record).where(journal.c.run == run).order_by(journal.c.seq)):
                yield json.loads(row[0])

    def count(self, run: str) -> int:
        with self.engine.connect() as c:
            return int(c.execute(sa.select(sa.func.count()).select_from(journal).where(journal.c.run == run)).scalar_one())
