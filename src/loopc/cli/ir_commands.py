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
The diagnostics shown are those ``loopc check`` shows, minus its gate:
inline ``# loopc: disable=CODE -- reason`` suppressions and the
configuration's ``disable`` drop warnings (with the LP19xx findings about
the suppressions themselves), while ``error = [...]`` and
``warnings-as-errors`` stay ``check``'s (:func:`_shown_diagnostics`); the
artifact and digest never depend on either (docs/ci.md#suppressing-a-warning).
"""
from __future__ import annotations

import sys
from typing import Any

import click

from loopc.cli.color import color_option


def _read(path: str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``path`` (``-`` = stdin); exit 2 when
    unreadable (:func:`loopc.cli.inputs.read_input`)."""
    from loopc.cli.inputs import read_input

    return read_input(path, limit)


def _compile(path: str) -> Any:
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES
    from loopc.pipeline import compile_source

    data = _read(path, MAX_SOURCE_BYTES)
    return compile_source(data, path=None if path == "-" else path)


def _shown_diagnostics(path: str, res: Any) -> tuple[Any, ...]:
    """The compile's diagnostics after the lint layer with the working
    directory's configuration (exit 2 when it is invalid), its
    severity-raising left out: suppressed and disabled warnings dropped,
    errors kept."""
    from loopc.cli.config import load_or_exit
    from loopc.diagnostics import Diagnostic
    from loopc.pipeline.check import linted

    if res.check is None or not res.diagnostics:
        return tuple(res.diagnostics)
    config = load_or_exit().evolve(error=(), warnings_as_errors=False)
    kept = linted(res.check, config, None if path == "-" else path).diagnostics
    # the lowering's own findings (budgets: not in the check) are kept as they are
    later = [d for d in res.diagnostics if d not in res.check.diagnostics]
    return tuple(sorted([*kept, *later], key=Diagnostic.sort_key))


def _report(path: str, res: Any, color: str = "never") -> None:
    from loopc.cli.color import use_color
    from loopc.cli.formats.text import source_lines, write_text

    diags = _shown_diagnostics(path, res)
    if not diags:
        return
    doc = getattr(res.check, "document", None)
    lines = source_lines(doc.text) if doc is not None else None
    sys.stdout.flush()
    write_text(sys.stderr, path, diags, lines, color=use_color(color, sys.stderr))
    sys.stderr.flush()


@click.command("compile")
@click.argument("file")
@click.option("-o", "--output", "out", metavar="OUT", help="Write the artifact to OUT instead of stdout.")
@click.option("--pretty", is_flag=True, help="Sorted keys, indent 2 (review form; not canonical bytes).")
@color_option
def compile_cmd(file: str, out: str | None, pretty: bool, color: str) -> None:
    """Compile FILE to its canonical artifact (loop.plan.artifact/vN)."""
    res = _compile(file)
    _report(file, res, color)
    if not res.ok:
        sys.exit(1)
    payload = res.artifact.pretty().encode("utf-8") if pretty else res.bytes
    if out is not None and out != "-":
        from loopc.cli.inputs import write_output

        write_output(out, payload)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(payload)
        sys.stdout.buffer.flush()
    sys.exit(0)


@click.command("digest")
@click.argument("file")
@color_option
def digest_cmd(file: str, color: str) -> None:
    """Print the semantic digest of FILE (sha256:<64 hex>)."""
    res = _compile(file)
    _report(file, res, color)
    if not res.ok:
        sys.exit(1)
    click.echo(res.digest)
    sys.exit(0)


def _read_artifact(path: str, cap: int) -> bytes:
    """Read an artifact file (``-`` = stdin) up to ``cap`` + 1 bytes, only
    from a regular file, never blocking on a FIFO or device; exit 2 with the
    precise reason when unreadable."""
    return _read(path, cap)


def _shown(path: str) -> str:
    """A file name safe to print on one line (:func:`loopc.cli.textsafe.escape_text`)."""
    from loopc.cli.textsafe import escape_text

    return escape_text(path)


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
    from loopc.cli.textsafe import escape_text

    res = verify(data)
    if not res.ok:  # messages and pointers quote the artifact: escaped, one line each
        click.echo(f"loopc: {name}: {escape_text(res.message, inline=True)}", err=True)
        if len(res.violations) > 1:
            for v in res.violations:
                click.echo(f"  {escape_text(v.pointer or '/')}: {escape_text(v.message, inline=True)} [{v.code}]",
                           err=True)
        sys.exit(1)
    click.echo(f"{name}: {escape_text(res.message, inline=True)}")
    sys.exit(0)


def register(group: click.Group) -> None:
    """Add ``compile``, ``digest`` and ``verify`` to the ``loopc`` group."""
    group.add_command(compile_cmd)
    group.add_command(digest_cmd)
    group.add_command(verify_cmd)
