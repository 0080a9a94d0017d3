"""``loopc fmt FILE... [--check]``: canonical, comment-preserving formatting
(docs/ci.md#formatting).

The source is loaded with ruamel.yaml's round-trip loader and dumped with
loopc's layout: two-space mappings, sequences indented two with the dash at
the parent's indentation plus two (``nodes:\\n  - id: x``), one space after
``:`` and ``,``, no trailing spaces, one final newline, long lines never
wrapped; comments, key order, quoting, flow-or-block style of each
collection and block scalars are kept.  The result is checked before it is
written: it must compile to the same semantic digest (or, for a plan with
errors, give the same diagnostic codes); a source whose YAML does not load
is left alone with a message.  Formatting is idempotent.

Exit status: 0 (all formatted, or with ``--check`` nothing to change),
1 with ``--check`` when a file would change, 2 when a file could not be read,
parsed or safely formatted.
"""

from __future__ import annotations

import io
from collections import Counter
import sys
from typing import Any

import click

from loopc.cli.textsafe import escape_text


class FormatError(Exception):
    """The source cannot be formatted safely (message says why)."""


class _Null(str):
    """A null as the source spelt it (``null``, ``~``, ``NULL``, ...): ruamel
    loads every null as ``None`` and writes ``None`` as an empty value in a
    block (``workScope:``, which reads as missing), so each explicit null is
    swapped for its spelling before the dump and written back as it was."""


def _represent_null(representer: Any, data: _Null) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", str(data))


def _yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.representer.add_representer(_Null, _represent_null)
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 4096
    y.preserve_quotes = True
    y.allow_duplicate_keys = False
    return y


def _meaning(res: Any) -> tuple[str, Any]:
    """What formatting must not change, from a compile result: the semantic
    digest when the plan compiles, else the sorted diagnostic codes."""
    if res.ok and res.digest:
        return ("digest", res.digest)
    return ("codes", tuple(sorted(d.code for d in res.diagnostics)))


def _keep_nulls(data: Any, node: Any) -> Any:
    """``data`` (ruamel's round-trip tree) with every explicitly spelt null
    scalar of loopc's tree ``node`` replaced by its spelling (:class:`_Null`),
    walking both trees together; returns the replacement for ``data``
    itself.  Iterative (nesting is bounded, but no recursion is needed)."""
    from loopc.compiler.yamlnodes import YMap, YScalar, YSeq

    def spelt(n: Any) -> Any:
        if isinstance(n, YScalar) and n.value is None and n.style == "" and n.raw:
            return _Null(n.raw)
        return None

    top = spelt(node)
    if top is not None:
        return top
    work = [(data, node)]
    while work:
        d, n = work.pop()
        if isinstance(n, YMap) and isinstance(d, dict):
            for _key, kn, vn in n.pairs():
                k = kn.value
                if isinstance(k, (dict, list)) or k not in d:
                    continue
                rep = spelt(vn)
                if rep is not None and d[k] is None:
                    d[k] = rep
                else:
                    work.append((d[k], vn))
        elif isinstance(n, YSeq) and isinstance(d, list) and len(d) == len(n.items):
            for i, vn in enumerate(n.items):
                rep = spelt(vn)
                if rep is not None and d[i] is None:
                    d[i] = rep
                else:
                    work.append((d[i], vn))
    return data


def _layout(body: str, tree: Any = None) -> str:
    """The ruamel round trip with loopc's layout (no checks; may raise);
    ``tree`` is loopc's YAML tree of ``body``, whose explicit nulls are kept
    as spelt."""
    y = _yaml()
    data = y.load(body)
    if tree is not None:
        data = _keep_nulls(data, tree)
    buf = io.StringIO()
    y.dump(data, buf)
    out = "\n".join(line.rstrip() for line in buf.getvalue().splitlines())
    return out.rstrip("\n") + "\n"


def format_source(text: str) -> str:
    """The canonical formatting of ``text`` (a plan's decoded source).

    Raises :class:`FormatError` when the YAML does not load (loopc reports
    an LP1xxx error) or the formatted text would mean something else."""
    from loopc.pipeline import compile_source

    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    pre = compile_source(body)
    yaml_errors = [d for d in pre.diagnostics if d.code.startswith("LP1") and d.is_error]
    doc = pre.check.document if pre.check is not None else None
    if yaml_errors or doc is None or doc.root is None:
        first = yaml_errors[0] if yaml_errors else None
        why = f": {first.code} {first.message}" if first is not None else ""
        raise FormatError(f"the YAML does not load{why}; fix it first (loopc check)")
    try:
        out = _layout(body, doc.root)
    except Exception as exc:  # noqa: BLE001 - any ruamel failure means: leave the file alone
        raise FormatError(f"cannot round-trip this YAML: {type(exc).__name__}: {exc}") from None
    if out != body and _meaning(compile_source(out)) != _meaning(pre):
        raise FormatError("formatting would change the plan's meaning; left unchanged (please report this)")
    return ("\ufeff" if bom else "") + out


@click.command("fmt")
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 when a file would change.")
@click.argument("files", nargs=-1, required=True)
def fmt_command(check_only: bool, files: tuple[str, ...]) -> None:
    """Format plans canonically, keeping comments (idempotent; never changes the digest).

    FILES are plan files or directories (walked like `loopc check`: only
    files whose first line is a plan header, .gitignore respected); `-`
    formats standard input to standard output."""
    from loopc.cli.walk import discover

    if files.count("-") > 1:
        raise click.UsageError("'-' (stdin) can be named only once")
    outcomes: Counter[str] = Counter()
    if "-" in files:
        outcomes[_format_stdin(check_only)] += 1
    for entry in discover([f for f in files if f != "-"]):
        outcomes[_format_file(entry, check_only)] += 1
    verb = "would be reformatted" if check_only else "reformatted"
    click.echo(f"{outcomes['changed']} file(s) {verb}, {outcomes['unchanged']} unchanged", err=True)
    if outcomes["failed"]:
        sys.exit(2)
    sys.exit(1 if check_only and outcomes["changed"] else 0)


def _formatted(data: bytes) -> tuple[str, str | None, str | None]:
    """``(text, new, problem)`` for a plan's bytes: its UTF-8 text, the
    canonical formatting (``None`` when it cannot be formatted) and why not."""
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    if len(data) > MAX_SOURCE_BYTES:
        return "", None, f"larger than the {MAX_SOURCE_BYTES:,}-byte source budget (LP1010); left unchanged"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "", None, "not UTF-8 text (LP1002); fix it first (loopc check)"
    try:
        return text, format_source(text), None
    except FormatError as exc:
        return text, None, str(exc)


def _format_file(entry: Any, check_only: bool) -> str:
    """Format one discovered file (:class:`loopc.cli.walk.Entry`) in place, or
    say it would change; a walked file that is no plan is skipped.  Returns
    ``"changed"``, ``"unchanged"``, ``"failed"`` or ``"skipped"``."""
    from loopc.boundedio import read_bounded
    from loopc.cli.inputs import reason_of
    from loopc.cli.walk import looks_like_plan
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    shown = escape_text(entry.path)
    problem = entry.error
    if problem is None:
        try:
            data = read_bounded(entry.path, MAX_SOURCE_BYTES)
        except OSError as exc:
            problem = reason_of(exc)
    if problem is None:
        if entry.walked and not looks_like_plan(data):
            return "skipped"  # a walked YAML file that is no plan: not ours to format
        text, new, problem = _formatted(data)
    if problem is not None or new is None:
        click.echo(f"loopc: {shown}: {escape_text(problem or '')}", err=True)
        return "failed"
    if new == text:
        return "unchanged"
    if check_only:
        click.echo(f"would reformat {shown}")
        return "changed"
    try:
        with open(entry.path, "wb") as fh:
            fh.write(new.encode("utf-8"))
    except OSError as exc:
        click.echo(f"loopc: {shown}: cannot write: {exc.strerror or exc}", err=True)
        return "failed"
    click.echo(f"reformatted {shown}")
    return "changed"


def _format_stdin(check_only: bool) -> str:
    """Format standard input: the result goes to standard output (the input
    unchanged when it cannot be formatted, so a pipe never loses the plan);
    with ``check_only`` nothing is written.  Returns ``"changed"``,
    ``"unchanged"`` or ``"failed"``."""
    from loopc.boundedio import read_stream_bounded
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    try:
        data = read_stream_bounded(sys.stdin.buffer, MAX_SOURCE_BYTES)
    except OSError as exc:
        click.echo(f"loopc: <stdin>: cannot read: {exc.strerror or exc}", err=True)
        return "failed"
    text, new, problem = _formatted(data)
    if problem is not None or new is None:
        click.echo(f"loopc: <stdin>: {escape_text(problem or '')}", err=True)
        if not check_only:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        return "failed"
    if check_only:
        if new != text:
            click.echo("would reformat <stdin>")
    else:
        sys.stdout.buffer.write(new.encode("utf-8"))
        sys.stdout.flush()
    return "unchanged" if new == text else "changed"


def register(cli: click.Group) -> None:
    cli.add_command(fmt_command)
