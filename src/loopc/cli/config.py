"""Finding and reading loopc's configuration, and ``loopc config``
(docs/ci.md#configuration).

The configuration is the ``[tool.loopc]`` table of ``pyproject.toml`` or the
top level of ``.loopc.toml``, found in the current directory or the nearest
parent holding either (the search stops at the repository root, the first
folder with ``.git``).  When one folder holds both, ``.loopc.toml`` wins and
``pyproject.toml`` is not read.  A ``pyproject.toml`` without a
``[tool.loopc]`` table does not count.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Callable

from loopc import lazyre


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def _present(path: str) -> bool:
    """A configuration file is there: anything but a directory, so that a
    FIFO, a device or a symbolic-link loop is reported (precisely, by
    :func:`loopc.boundedio.read_bounded`) instead of skipped silently."""
    return os.path.lexists(path) and not os.path.isdir(path)


def find_config(start: str | None = None) -> tuple[str | None, dict[str, Any], list[str]]:
    """``(path, table, problems)`` of the configuration that applies in
    ``start`` (default: the current directory); ``(None, {}, [])`` when
    there is none.  An unreadable or invalid TOML file is a problem."""
    path, table, problems, _data = _find(start)
    return path, table, problems


def _find(start: str | None) -> tuple[str | None, dict[str, Any], list[str], bytes]:
    """:func:`find_config` and the bytes of the file it read (``b""``
    without one), so that locating the entries does not read it again."""
    d = os.path.abspath(start or os.getcwd())
    while True:
        dot = os.path.join(d, ".loopc.toml")
        pyproject = os.path.join(d, "pyproject.toml")
        if _present(dot):
            table, problems, data = _read(dot)
            return dot, table, problems, data
        if _present(pyproject):
            table, problems, data = _read(pyproject, only_if_loopc=True)
            sub = table.get("tool", {}).get("loopc") if isinstance(table.get("tool"), dict) else None
            if sub is not None:
                if not isinstance(sub, dict):
                    return pyproject, {}, [f"{_relative(pyproject)}: [tool.loopc] must be a table"], data
                return pyproject, sub, problems, data
            if problems:
                return pyproject, {}, problems, data
        if os.path.exists(os.path.join(d, ".git")):
            return None, {}, [], b""
        parent = os.path.dirname(d)
        if parent == d:
            return None, {}, [], b""
        d = parent


#: Byte budget of a configuration file (``.loopc.toml``, ``pyproject.toml``).
MAX_CONFIG_BYTES = 1024 * 1024


#: A key spelled ``loopc`` (bare or quoted) that a table header, a dotted
#: key or an assignment could use: ``[tool.loopc]``, ``loopc.x = ..``,
#: ``loopc = {..}``, and a header broken after it (``[tool.loopc`` at the end
#: of a line: parsed, so the broken file is reported).  A quoted key may also
#: spell it with escapes (``\\u``).
_LOOPC_KEY = lazyre.compile(rb"""(?:\A|[\s.\[{,])["']?loopc["']?[ \t]*(?:[=.\]#]|\r?$)|\\[uU]""", re.M)


def may_name_loopc(data: bytes) -> bool:
    """Whether TOML text ``data`` may have a ``loopc`` table: false only
    when no key can be ``loopc`` (:data:`_LOOPC_KEY`), so a ``pyproject.toml``
    that never configures loopc is not parsed (tomllib and datetime cost
    the one-file check ~15 ms of start-up, issue 26), and one that another
    tool left unreadable is not loopc's configuration problem."""
    return _LOOPC_KEY.search(data) is not None


def _relative(path: str) -> str:
    """``path`` as the configuration's other problems name it: relative to
    the current directory (absolute where it cannot be, another drive)."""
    try:
        return os.path.relpath(path)
    except ValueError:  # pragma: no cover - Windows, another drive
        return path


def _read(path: str, only_if_loopc: bool = False) -> tuple[dict[str, Any], list[str], bytes]:
    """``(table, problems, bytes read)`` of TOML file ``path``; with
    ``only_if_loopc`` (a ``pyproject.toml``), no table and no problem for
    text that names no ``loopc`` key (:func:`may_name_loopc`), which is not
    parsed."""
    from loopc.boundedio import read_bounded
    from loopc.cli.textsafe import escape_text

    shown = escape_text(_relative(path))
    data = b""
    try:
        data = read_bounded(path, MAX_CONFIG_BYTES)  # never blocks on a FIFO or device
        if len(data) > MAX_CONFIG_BYTES:
            return {}, [f"{shown}: larger than {MAX_CONFIG_BYTES:,} bytes"], data
        if only_if_loopc and not may_name_loopc(data):
            return {}, [], data
        return _toml().loads(data.decode("utf-8")), [], data
    except OSError as exc:
        return {}, [f"{shown}: {getattr(exc, 'reason', None) or exc.strerror or exc}"], data
    except UnicodeDecodeError:
        return {}, [f"{shown}: invalid TOML: not UTF-8 text"], data
    except Exception as exc:  # noqa: BLE001 - tomllib.TOMLDecodeError
        return {}, [f"{shown}: invalid TOML: {escape_text(str(exc))}"], data


_HEADER_RE = lazyre.compile(r"""\s*\[\[?\s*([A-Za-z0-9_.\-"' ]+?)\s*\]\]?\s*(?:#.*)?\Z""")


def _locator(text: str, in_pyproject: bool) -> Callable[[str, "int | None"], "str | None"]:
    """``locate(key, index)`` for :func:`loopc.lint.config.from_mapping`:
    ``"line:column"`` (1-based, code points) of ``key`` in the loopc table
    of ``text`` (the top level of ``.loopc.toml``, ``[tool.loopc]`` of
    ``pyproject.toml``), or of the ``index``-th string of its array value;
    ``None`` when it is not written in a form this scanner follows (one
    ``key = [...]`` line, possibly continued, of basic or literal strings)."""
    lines = text.split("\n")
    inside = not in_pyproject
    region: list[int] = []
    for n, line in enumerate(lines):
        m = _HEADER_RE.match(line)
        if m is not None:
            inside = in_pyproject and m.group(1).replace(" ", "") in ("tool.loopc", '"tool"."loopc"')
            continue
        if inside:
            region.append(n)

    def locate(key: str, index: int | None) -> str | None:
        kre = re.compile(r"\s*(?:" + re.escape(key) + "|\"" + re.escape(key) + "\"|'" + re.escape(key) + r"')\s*=\s*")
        for n in region:
            m = kre.match(lines[n])
            if m is None:
                continue
            if index is None:
                return f"{n + 1}:{len(lines[n]) - len(lines[n].lstrip()) + 1}"
            return _nth_string(lines, n, m.end(), index)
        return None

    return locate


def _nth_string(lines: list[str], n: int, col: int, index: int) -> str | None:
    """``"line:column"`` of the ``index``-th string of the array starting
    at ``lines[n][col]``, or ``None``."""
    depth = 0
    count = 0
    while n < len(lines):
        line = lines[n]
        while col < len(line):
            ch = line[col]
            if ch == "#":
                break
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth <= 0:
                    return None
            elif ch in "\"'":
                if depth == 0:
                    return None
                if count == index:
                    return f"{n + 1}:{col + 1}"
                count += 1
                end = col + 1
                while end < len(line) and line[end] != ch:
                    end += 2 if ch == '"' and line[end] == "\\" else 1
                if end >= len(line):
                    return None  # a multi-line string: not followed
                col = end
            elif depth == 0 and not ch.isspace():
                return None
            col += 1
        n += 1
        col = 0
    return None


def load_config(start: str | None = None) -> tuple[Any, list[str]]:
    """The effective :class:`loopc.lint.LintConfig` and its problems
    (messages; the CLI exits 2 when there are any), each located at its
    entry (``.loopc.toml:2:12: 'exclude' pattern '!': ...``) when the file
    writes it on a ``key = [...]`` line."""
    from loopc.lint.config import LintConfig, from_mapping

    path, table, problems, data = _find(start)
    if path is None:
        return LintConfig(), problems
    # located in the bytes the search read (b"" when it could not: then nothing is located)
    text = data[:MAX_CONFIG_BYTES].decode("utf-8", "replace")
    locate = _locator(text, os.path.basename(path) == "pyproject.toml")
    cfg, more = from_mapping(table, _relative(path), locate)
    return cfg, problems + more


def config_or_exit(
    *, exclude: tuple[str, ...] = (), include: tuple[str, ...] = (), warnings_as_errors: bool | None = None
) -> Any:
    """:func:`load_or_exit` with the command line's ``--exclude``,
    ``--include`` and ``--warnings-as-errors`` layered on top; a pattern
    that is not gitignore syntax is a one-line usage error, exit 2
    (``loopc: --exclude '!': a lone '!' negates nothing ...``)."""
    from loopc.cli.textsafe import echo, escape_text
    from loopc.lint.config import pattern_problem

    bad = [(opt, p, why) for opt, pats in (("--exclude", exclude), ("--include", include))
           for p in pats for why in (pattern_problem(p),) if why is not None]
    for opt, p, why in bad:
        echo(f"loopc: {opt} '{escape_text(p, inline=True)}': {escape_text(why, inline=True)}", err=True)
    if bad:
        sys.exit(2)
    return load_or_exit().with_overrides(warnings_as_errors=warnings_as_errors, exclude=exclude, include=include)


def load_or_exit() -> Any:
    """:func:`load_config`, printing its problems and exiting 2 if any."""
    cfg, problems = load_config()
    if problems:
        from loopc.cli.textsafe import echo, escape_text

        for p in problems:  # problems quote keys and codes of the file: escaped, one line each
            echo(f"loopc: {escape_text(p, inline=True)}", err=True)
        sys.exit(2)
    return cfg


def register(cli: Any) -> None:
    """Add ``loopc config`` to the click group ``cli`` (click is imported
    here, not with the module: ``loopc check`` reads the configuration
    without click)."""
    import click

    @click.command("config")
    def config_command() -> None:
        """Print the effective configuration (TOML) and where it came from."""
        cfg = load_or_exit()
        click.echo(cfg.to_toml(), nl=False)

    cli.add_command(config_command)
