"""IR commands of the ``loopc`` CLI (issue 4 "CLI (contract — keep it exactly)").

* ``loopc compile FILE [-o OUT] [--pretty]`` — the canonical artifact bytes
  (RFC 8785, no trailing newline) or, with ``--pretty``, sorted-key JSON with
  indent 2, on stdout or in OUT; on errors text diagnostics on stderr and
  exit 1.
* ``loopc digest FILE`` — one line ``sha256:<64 hex>``; exit 1 on errors.
* ``loopc verify ARTIFACT.json`` — the verifier (:mod:`loopc.ir.verifier`):
  strict decode, digest, graph/scope/disposition/instruction/bind/budget
  rules; exit 0 when it verifies, 1 with one precise line per violation
  when not; reads regular files (or stdin) up to 64 MiB, never a FIFO or
  device.

Unreadable input files (and an unwritable OUT) exit 2.  ``FILE`` may be
``-`` for stdin.  Warnings go to stderr and do not change the exit code.
"""
from __future__ import annotations

import sys
from typing import Any

import click


def _read(path: str, limit: int | None = None) -> bytes:
    """Read ``path`` (``-`` = stdin) as bytes; exit 2 when unreadable.  With
    ``limit``, at most ``limit + 1`` bytes and only a regular file (never
    blocking on a FIFO or device: :func:`loopc.boundedio.read_bounded`)."""
    from loopc.boundedio import read_bounded, read_stream_bounded
    from loopc.cli.textsafe import escape_text

    try:
        if path == "-":
            stream = sys.stdin.buffer
            return read_stream_bounded(stream, limit) if limit is not None else stream.read()
        if limit is not None:
            return read_bounded(path, limit)
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        click.echo(f"loopc: {escape_text(path)}: {reason}", err=True)
        sys.exit(2)


def _compile(path: str) -> Any:
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES
    from loopc.ir.api import compile_source

    data = _read(path, MAX_SOURCE_BYTES)
    return compile_source(data, path=None if path == "-" else path)


def _report(path: str, res: Any) -> None:
    from loopc.cli.formats.text import source_lines, write_text

    if not res.diagnostics:
        return
    doc = getattr(res.check, "document", None)
    lines = source_lines(doc.text) if doc is not None else None
    sys.stdout.flush()
    write_text(sys.stderr, path, res.diagnostics, lines)
    sys.stderr.flush()


@click.command("compile")
@click.argument("file")
@click.option("-o", "--output", "out", metavar="OUT", help="Write the artifact to OUT instead of stdout.")
@click.option("--pretty", is_flag=True, help="Sorted keys, indent 2 (review form; not canonical bytes).")
def compile_cmd(file: str, out: str | None, pretty: bool) -> None:
    """Compile FILE to its canonical artifact (loop.plan.artifact/vN)."""
    res = _compile(file)
    _report(file, res)
    if not res.ok:
        sys.exit(1)
    payload = res.artifact.pretty().encode("utf-8") if pretty else res.bytes
    if out is not None and out != "-":
        try:
            with open(out, "wb") as fh:
                fh.write(payload)
        except OSError as exc:
            click.echo(f"loopc: {out}: {exc.strerror or exc}", err=True)
            sys.exit(2)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(payload)
        sys.stdout.buffer.flush()
    sys.exit(0)


@click.command("digest")
@click.argument("file")
def digest_cmd(file: str) -> None:
    """Print the semantic digest of FILE (sha256:<64 hex>)."""
    res = _compile(file)
    _report(file, res)
    if not res.ok:
        sys.exit(1)
    click.echo(res.digest)
    sys.exit(0)


def _read_artifact(path: str, cap: int) -> bytes:
    """Read an artifact file (``-`` = stdin) up to ``cap`` + 1 bytes without
    ever blocking on a FIFO or reading a device: only regular files (and
    stdin) are read.  Exit 2 when unreadable or not a regular file."""
    import os
    import stat

    if path == "-":
        return _read(path, cap)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                    else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                    else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            click.echo(f"loopc: {_shown(path)}: is {kind}; an artifact must be a regular file", err=True)
            sys.exit(2)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped after the stat
                click.echo(f"loopc: {_shown(path)}: not a regular file", err=True)
                sys.exit(2)
            return fh.read(cap + 1)
    except OSError as exc:
        click.echo(f"loopc: {_shown(path)}: {exc.strerror or exc}", err=True)
        sys.exit(2)


def _shown(path: str) -> str:
    """A file name safe to print on one line (control characters escaped)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


@click.command("verify")
@click.argument("artifact")
def verify_cmd(artifact: str) -> None:
    """Strictly decode ARTIFACT.json and verify it (graph, scopes,
    dispositions, instruction types, binds, budgets, digest).

    Reads at most 64 MiB (the 8 MiB artifact budget applies to the
    canonical bytes).  Exit 0 ok, 1 invalid (one line per violation on
    stderr: pointer, message, [code]), 2 unreadable."""
    from loopc.ir.verifier import MAX_ARTIFACT_FILE_BYTES, verify

    data = _read_artifact(artifact, MAX_ARTIFACT_FILE_BYTES)
    name = _shown(artifact)
    if len(data) > MAX_ARTIFACT_FILE_BYTES:
        click.echo(f"loopc: {name}: artifact file is larger than {MAX_ARTIFACT_FILE_BYTES} bytes "
                   "(the verifier's read cap)", err=True)
        sys.exit(1)
    res = verify(data)
    if not res.ok:
        click.echo(f"loopc: {name}: {res.message}", err=True)
        if len(res.violations) > 1:
            for v in res.violations:
                click.echo(f"  {v.pointer or '/'}: {v.message} [{v.code}]", err=True)
        sys.exit(1)
    click.echo(f"{name}: {res.message}")
    sys.exit(0)


def register(group: click.Group) -> None:
    """Add ``compile``, ``digest`` and ``verify`` to the ``loopc`` group."""
    group.add_command(compile_cmd)
    group.add_command(digest_cmd)
    group.add_command(verify_cmd)
