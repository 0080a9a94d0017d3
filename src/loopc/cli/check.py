"""``loopc check``: check plans — files, directories or stdin — at scale
(docs/ci.md).

Exit status: 0 when no errors (warnings allowed), 1 when any error (after
the configuration's and ``--warnings-as-errors``' raising), 2 for usage
errors, configuration problems or unreadable paths — 2 wins, also over
``--exit-zero`` (which turns 1 into 0).  With ``--diff`` the status is
also 1 when fixes would change a file; stdout is then the patch and the
report of what the fixes leave goes to stderr (docs/ci.md#fixes).

Files are checked in a process pool (``-j/--jobs``, default: all cores);
results are collected and printed in discovery order, whatever the
parallelism.  Unchanged files are answered from the content-addressed cache
(:mod:`loopc.cli.cache`).  Only what a check needs is imported.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

from loopc.value import Value
from loopc.cli.textsafe import echo

#: files below this many cache misses are checked in-process (a pool's
#: start-up costs more than it saves)
_POOL_MIN_FILES = 4

#: What every option of ``loopc check`` is when the command line does not
#: give it: the click command's defaults (:mod:`loopc.cli.check_command`)
#: and the plain form ``loopc check PATH...`` (run without click:
#: :func:`loopc.cli.main`) both read this table.
PLAIN: dict[str, Any] = {
    "fmt": "text",
    "jobs": None,
    "shard": None,
    "no_cache": False,
    "cache_dir": None,
    "fix": False,
    "diff": False,
    "exclude": (),
    "include": (),
    "stdin_filename": None,
    "exit_zero": False,
    "warnings_as_errors": False,
    "max_diagnostics": 200,
    "unsafe_fixes": False,
    "color": "auto",
}


class FileResult(Value, frozen=False):
    """One reported file: its diagnostics, its source text (for snippets)
    or the ``error`` that kept it from being checked."""

    path: str
    diagnostics: tuple = ()
    text: str | None = None
    error: str | None = None
    data: bytes | None = None
    suppressed: int = 0
    errors: int | None = None
    warnings: int | None = None

    def cap(self, limit: int | None) -> None:
        """Apply the per-file diagnostic limit (LP1013 summary), keeping the
        totals of what was found."""
        if not limit or limit < 1 or len(self.diagnostics) <= limit:
            return  # nothing to cap (a cache hit then imports no pass module)
        from loopc.pipeline.check import cap_diagnostics
        from loopc.diagnostics import Severity

        diags = tuple(self.diagnostics)
        kept, n = cap_diagnostics(diags, limit)
        if n:
            self.errors = sum(1 for d in diags if d.severity is Severity.ERROR)
            self.warnings = sum(1 for d in diags if d.severity is Severity.WARNING)
        self.diagnostics, self.suppressed = kept, n


def _decode(data: bytes) -> str | None:
    """The text the YAML layer sees: strict UTF-8 without BOM, ``None`` when
    the bytes do not decode or exceed the source budget (as in the check)."""
    from loopc.limits import MAX_SOURCE_BYTES

    if len(data) > MAX_SOURCE_BYTES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text[1:] if text.startswith("\ufeff") else text


def _parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    k, sep, n = value.partition("/")
    try:
        ki, ni = int(k), int(n)
    except ValueError:
        ki = ni = 0
    if not sep or ni < 1 or not 1 <= ki <= ni:
        import click

        raise click.BadParameter(f"'{value}' is not K/N with 1 <= K <= N (e.g. 2/4)", param_hint="--shard")
    return ki, ni


_worker_config: Any = None


def _init_worker(config: Any) -> None:
    global _worker_config
    _worker_config = config


def _work(item: tuple[str, bytes]) -> tuple:
    from loopc.pipeline import check_source

    path, data = item
    return check_source(data, path=path, config=_worker_config, max_diagnostics=None).diagnostics


def _preload() -> None:
    """Import every pass before forking workers, so no worker imports again."""
    import loopc.analyzer  # noqa: F401
    import loopc.compiler.graph  # noqa: F401
    import loopc.compiler.schema  # noqa: F401
    import loopc.compiler.scopemap  # noqa: F401
    import loopc.compiler.typecheck  # noqa: F401
    import loopc.compiler.yamlload  # noqa: F401
    import loopc.ir.budget  # noqa: F401
    import loopc.lint.suppress  # noqa: F401


def _progress(total: int) -> Any:
    """A rich progress bar on stderr when it is a terminal, else ``None``."""
    if total < 2 or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    prog = Progress(
        TextColumn("checking"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    return prog


def run_checks(items: Sequence[tuple[str, bytes]], config: Any, jobs: int) -> list[tuple]:
    """Diagnostics of each ``(path, data)`` item, in item order."""
    if not items:  # every file answered by the cache: no pass module is imported
        return []
    from loopc.pipeline import check_source

    bar = _progress(len(items))
    results: list[tuple] = []
    if jobs <= 1 or len(items) < _POOL_MIN_FILES:
        task = None
        if bar is not None:
            bar.start()
            task = bar.add_task("check", total=len(items))
        try:
            for path, data in items:
                results.append(check_source(data, path=path, config=config, max_diagnostics=None).diagnostics)
                if bar is not None:
                    bar.advance(task)
        finally:
            if bar is not None:
                bar.stop()
        return results
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _preload()
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    workers = min(jobs, len(items))
    chunk = max(1, min(16, len(items) // (workers * 8) or 1))
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=(config,)) as pool:
        task = None
        if bar is not None:
            bar.start()
            task = bar.add_task("check", total=len(items))
        try:
            for diags in pool.map(_work, items, chunksize=chunk):
                results.append(diags)
                if bar is not None:
                    bar.advance(task)
        finally:
            if bar is not None:
                bar.stop()
    return results


def _read(path: str) -> tuple[bytes | None, str | None]:
    """Budget + 1 byte of a regular file, never blocking on a FIFO or device
    (:func:`loopc.boundedio.read_bounded`); or the precise reason it cannot
    be read."""
    from loopc.boundedio import read_bounded
    from loopc.limits import MAX_SOURCE_BYTES

    try:
        return read_bounded(path, MAX_SOURCE_BYTES), None  # one byte more is enough to diagnose LP1010
    except OSError as exc:
        return None, getattr(exc, "reason", None) or exc.strerror or str(exc)


def collect(
    paths: Sequence[str], config: Any, *, stdin_filename: str | None, shard: tuple[int, int] | None, note: Any
) -> list[FileResult]:
    """Discover and read the files to check (no checking yet)."""
    from loopc.cli.walk import Entry, discover, looks_like_plan, plan_like
    from loopc.limits import MAX_SOURCE_BYTES
    from loopc.cli.walk import shard as take_shard

    entries: list[Entry] = []
    named = [p for p in paths if p != "-"]
    stdin_pos = [i for i, p in enumerate(paths) if p == "-"]
    if len(stdin_pos) > 1:
        import click

        raise click.UsageError("'-' (stdin) can be named only once")
    for e in discover(named, include=config.include, exclude=config.exclude):
        entries.append(e)
    if stdin_pos:
        entries.insert(min(stdin_pos[0], len(entries)), Entry("-"))
    if shard is not None:
        entries = take_shard(entries, *shard)
    out: list[FileResult] = []
    for e in entries:
        if e.path == "-":
            from loopc.boundedio import read_stream_bounded

            stdin_data = read_stream_bounded(sys.stdin.buffer, MAX_SOURCE_BYTES)
            out.append(FileResult(stdin_filename or "<stdin>", data=stdin_data))
            continue
        if e.error is not None:
            out.append(FileResult(e.path, error=e.error))
            continue
        data, err = _read(e.path)
        if err is not None:
            out.append(FileResult(e.path, error=err))
            continue
        if e.walked and not looks_like_plan(data or b""):
            note(
                f"loopc: note: skipped {e.path}: not a loop.plan/v1 plan "
                "(its first line is not 'apiVersion: loop.plan/v1'); name it explicitly to check it"
            )
            continue
        if not e.walked and len(data or b"") <= MAX_SOURCE_BYTES and not plan_like(data or b""):
            out.append(not_a_plan(e.path, data or b"", config))
            continue
        out.append(FileResult(e.path, data=data))
    return out


def not_a_plan(path: str, data: bytes, config: Any) -> FileResult:
    """The report of a named file that is not a plan (:func:`loopc.cli.walk.plan_like`):
    one LP1014 warning at 1:1 (after the configuration: ``disable`` drops it,
    ``--warnings-as-errors`` raises it), nothing checked, nothing to fix."""
    from loopc import codes
    from loopc.diagnostics import Diagnostic, Span
    from loopc.lint import apply_lint

    entry = codes.get("LP1014")
    name = diff_name(path) if path != "-" else path
    d = Diagnostic(
        code=entry.code,
        name=entry.name,
        severity=entry.severity,
        message=(
            "not a loop.plan/v1 plan (no 'apiVersion: loop.plan/v1' header, no plan keys); nothing checked. "
            f"Stop naming it: --exclude '{name}', exclude = ['{name}'] under [tool.loopc], "
            "or narrow pre-commit's files: pattern"
        ),
        span=Span(1, 1, 1, 1),
    )
    return FileResult(path, diagnostics=apply_lint([d], None, config), text=_decode(data))


def _unsafe_hint(files: Sequence[FileResult], unsafe_fixes: bool) -> None:
    """After ``--fix``/``--diff`` without ``--unsafe-fixes``: say how many of
    the remaining diagnostics carry a fix that only ``--unsafe-fixes``
    applies (docs/ci.md#fixes), so "0 file(s) changed" does not read as
    "nothing can be fixed"."""
    if unsafe_fixes:
        return
    from loopc.diagnostics import Applicability

    n = sum(1 for f in files for d in f.diagnostics
            if d.fix is not None and d.fix.edits and d.fix.applicability is not Applicability.SAFE)
    if n:
        echo(f"{n} more fix(es) available with --unsafe-fixes (guesses: review what they change)", err=True)


def _summary(files: Sequence[FileResult]) -> dict[str, int]:
    from loopc.diagnostics import Severity

    errors = warnings = unreadable = 0
    for f in files:
        if f.error is not None:
            unreadable += 1
        if f.errors is not None and f.warnings is not None:  # totals past the diagnostic limit
            errors += f.errors
            warnings += f.warnings
            continue
        for d in f.diagnostics:
            if d.severity is Severity.ERROR:
                errors += 1
            elif d.severity is Severity.WARNING:
                warnings += 1
    return {"files": len(files), "errors": errors, "warnings": warnings, "unreadable": unreadable}


def render(fmt: str, files: Sequence[FileResult]) -> tuple[str, str]:
    """``(stdout, stderr)`` documents of the report in format ``fmt``
    (:mod:`loopc.cli.formats`)."""
    from loopc.cli import formats

    reports = _reports(files)
    impl = formats.get(fmt)
    out = impl.render(reports)
    err = impl.render_stderr(reports) if impl.render_stderr is not None else ""
    return out, err


def _reports(files: Sequence[FileResult]) -> list[Any]:
    from loopc.cli import formats

    return [formats.FileReport(f.path, tuple(f.diagnostics), f.text, f.error, suppressed=f.suppressed,
                               errors=f.errors, warnings=f.warnings) for f in files]


def _emit(fmt: str, files: Sequence[FileResult], stream: Any = None, color: str = "never") -> None:
    """Write the report to ``stream`` (default stdout): streamed file by
    file when the format can (``Format.write``), else as one document; then
    the stderr notes.  ``color``: ``--color`` (formats for people only)."""
    from loopc.cli import formats
    from loopc.cli.color import use_color

    impl = formats.get(fmt)
    reports = _reports(files)
    out_stream = stream if stream is not None else sys.stdout
    if impl.write is not None and impl.color and use_color(color, out_stream):
        impl.write(iter(reports), out_stream, color=True)  # type: ignore[call-arg]
    elif impl.write is not None:
        impl.write(iter(reports), out_stream)
    else:
        out = impl.render(reports)
        if out:
            out_stream.write(out)
    out_stream.flush()
    err = impl.render_stderr(reports) if impl.render_stderr is not None else ""
    if err:
        echo(err, nl=False, err=True)


def _format_names() -> list[str]:
    from loopc.cli import formats

    return formats.names()


def _fix_file(f: FileResult, config: Any, unsafe: bool = False) -> tuple[str, str, int]:
    """``(original_text, fixed_text, fixes_applied)`` after rounds of safe
    (with ``unsafe``, all) fixes and re-checks; ``f.diagnostics`` becomes
    what remains."""
    from loopc.pipeline import check_source
    from loopc.lint.fixes import apply_fixes

    original = f.text or ""
    text = original
    total = 0
    for _ in range(10):
        new, n = apply_fixes(text, f.diagnostics, unsafe=unsafe)
        if n == 0 or new == text:
            break
        total += n
        text = new
        f.diagnostics = check_source(text, path=f.path, config=config, max_diagnostics=None).diagnostics
    return original, text, total


def diff_name(path: str) -> str:
    """``path`` as a diff header names it: relative to the working
    directory, ``/``-separated (``a/plans/p.yaml``, never ``a//abs/p.yaml``)."""
    if os.path.isabs(path):
        try:
            path = os.path.relpath(path)
        except ValueError:  # another drive (Windows): keep it, minus the root
            path = os.path.splitdrive(path)[1].lstrip("\\/")
    return os.path.normpath(path).replace(os.sep, "/")


def run(
    *,
    paths: tuple[str, ...],
    fmt: str,
    jobs: int | None,
    shard: str | None,
    no_cache: bool,
    cache_dir: str | None,
    fix: bool,
    diff: bool,
    exclude: tuple[str, ...],
    include: tuple[str, ...],
    stdin_filename: str | None,
    exit_zero: bool,
    warnings_as_errors: bool,
    max_diagnostics: int = 200,
    unsafe_fixes: bool = False,
    color: str = "auto",
) -> None:
    """The body of ``loopc check`` (see the module docstring); exits."""
    from loopc.cli.config import config_or_exit

    shard_kn = _parse_shard(shard)
    if jobs is not None and jobs < 1:
        import click

        raise click.BadParameter("must be at least 1", param_hint="-j/--jobs")
    config = config_or_exit(warnings_as_errors=warnings_as_errors, exclude=exclude, include=include)
    notes: list[str] = []
    files = collect(paths, config, stdin_filename=stdin_filename, shard=shard_kn, note=notes.append)
    for n in notes:
        echo(n, err=True)

    cache = None
    if not no_cache:
        from loopc.cli.cache import Cache, default_dir

        cache = Cache(cache_dir or default_dir(), config.digest())
    todo: list[tuple[int, str, bytes]] = []
    keys: dict[int, str] = {}
    for i, f in enumerate(files):
        if f.data is None:
            continue
        if cache is not None:
            k = cache.key(f.path, f.data)
            hit = cache.get(k, f.path)
            if hit is not None:
                f.diagnostics = hit
                continue
            keys[i] = k
        todo.append((i, f.path, f.data))
    ncpu = os.cpu_count() or 1
    results = run_checks([(p, d) for _, p, d in todo], config, jobs or ncpu)
    for (i, _, _), diags in zip(todo, results):
        files[i].diagnostics = diags
        if cache is not None:
            cache.put(keys[i], diags)
    for f in files:
        if f.data is not None:
            f.text = _decode(f.data)

    changed = 0
    if fix or diff:
        import difflib

        fixed_total = 0
        diffs: list[str] = []
        for f in files:
            if f.data is None or f.text is None or not f.diagnostics:
                continue
            original, new, nfix = _fix_file(f, config, unsafe_fixes)
            if new == original:
                continue
            changed += 1
            fixed_total += nfix
            if diff:
                name = diff_name(f.path)
                diffs.append(
                    "".join(
                        difflib.unified_diff(
                            original.splitlines(keepends=True),
                            new.splitlines(keepends=True),
                            fromfile=f"a/{name}",
                            tofile=f"b/{name}",
                        )
                    )
                )
                f.text = new  # the report below is of the file as --fix would write it
            elif f.path == (stdin_filename or "<stdin>") and "-" in paths:
                sys.stdout.write(new)
                f.text = new
            else:
                bom = b"\xef\xbb\xbf" if (f.data or b"").startswith(b"\xef\xbb\xbf") else b""
                try:
                    with open(f.path, "wb") as fh:
                        fh.write(bom + new.encode("utf-8"))
                except OSError as exc:
                    f.error = f"cannot write the fixed file: {exc.strerror or exc}"
                f.text = new
        kind = "fixes" if unsafe_fixes else "safe fixes"
        if diff:
            # stdout stays a patch (`loopc check --diff . | git apply`); what
            # the fixes leave is reported on stderr, in the chosen format
            if diffs:  # the files' own text: click.echo, as before (it strips escape codes off a terminal)
                import click

                click.echo("".join(diffs), nl=False)
            for f in files:
                f.cap(max_diagnostics or None)
            _emit(fmt, files, sys.stderr, color)
            s = _summary(files)
            echo(f"{changed} file(s) would be changed by {kind}", err=True)
            _unsafe_hint(files, unsafe_fixes)
            if s["unreadable"]:
                sys.exit(2)
            sys.exit(0 if exit_zero or not (changed or s["errors"]) else 1)
        echo(f"fixed {fixed_total} issue(s) in {changed} file(s)", err=True)
        _unsafe_hint(files, unsafe_fixes)

    for f in files:
        f.cap(max_diagnostics or None)
    _emit(fmt, files, color=color)
    s = _summary(files)
    if s["unreadable"]:
        sys.exit(2)
    sys.exit(0 if exit_zero or not s["errors"] else 1)
