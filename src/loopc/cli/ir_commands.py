"""IR commands of the ``loopc`` CLI (issue 4 "CLI (contract — keep it exactly)").

* ``loopc compile FILE [-o OUT] [--pretty]`` — the canonical artifact bytes
  (RFC 8785, no trailing newline) or, with ``--pretty``, sorted-key JSON with
  indent 2, on stdout or in OUT; on errors text diagnostics on stderr and
  exit 1.
* ``loopc digest FILE`` — one line ``sha256:<64 hex>``; exit 1 on errors.
* ``loopc verify ARTIFACT.json`` — strict decode plus digest recomputation;
  exit 0 when well-formed and the digest matches, 1 with a precise message
  when not.

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


@click.command("verify")
@click.argument("artifact")
def verify_cmd(artifact: str) -> None:
    """Strictly decode ARTIFACT.json and recompute its digest."""
    from loopc.ir.decoder import verify

    data = _read(artifact)
    res = verify(data)
    if not res.ok:
        click.echo(f"loopc: {artifact}: {res.message}", err=True)
        sys.exit(1)
    click.echo(f"{artifact}: {res.message}")
    sys.exit(0)


def register(group: click.Group) -> None:
    """Add ``compile``, ``digest`` and ``verify`` to the ``loopc`` group."""
    group.add_command(compile_cmd)
    group.add_command(digest_cmd)
    group.add_command(verify_cmd)
