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
import sys
from typing import Any

import click


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
    d = os.path.abspath(start or os.getcwd())
    while True:
        dot = os.path.join(d, ".loopc.toml")
        pyproject = os.path.join(d, "pyproject.toml")
        if _present(dot):
            table, problems = _read(dot)
            return dot, table, problems
        if _present(pyproject):
            table, problems = _read(pyproject)
            sub = table.get("tool", {}).get("loopc") if isinstance(table.get("tool"), dict) else None
            if sub is not None:
                if not isinstance(sub, dict):
                    return pyproject, {}, [f"{pyproject}: [tool.loopc] must be a table"]
                return pyproject, sub, problems
            if problems:
                return pyproject, {}, problems
        if os.path.exists(os.path.join(d, ".git")):
            return None, {}, []
        parent = os.path.dirname(d)
        if parent == d:
            return None, {}, []
        d = parent


#: Byte budget of a configuration file (``.loopc.toml``, ``pyproject.toml``).
MAX_CONFIG_BYTES = 1024 * 1024


def _read(path: str) -> tuple[dict[str, Any], list[str]]:
    from loopc.boundedio import read_bounded
    from loopc.cli.textsafe import escape_text

    shown = escape_text(path)
    try:
        data = read_bounded(path, MAX_CONFIG_BYTES)  # never blocks on a FIFO or device
        if len(data) > MAX_CONFIG_BYTES:
            return {}, [f"{shown}: larger than {MAX_CONFIG_BYTES:,} bytes"]
        return _toml().loads(data.decode("utf-8")), []
    except OSError as exc:
        return {}, [f"{shown}: {getattr(exc, 'reason', None) or exc.strerror or exc}"]
    except UnicodeDecodeError:
        return {}, [f"{shown}: invalid TOML: not UTF-8 text"]
    except Exception as exc:  # noqa: BLE001 - tomllib.TOMLDecodeError
        return {}, [f"{shown}: invalid TOML: {escape_text(str(exc))}"]


def load_config(start: str | None = None) -> tuple[Any, list[str]]:
    """The effective :class:`loopc.lint.LintConfig` and its problems
    (messages; the CLI exits 2 when there are any)."""
    from loopc.lint.config import LintConfig, from_mapping

    path, table, problems = find_config(start)
    if path is None:
        return LintConfig(), problems
    cfg, more = from_mapping(table, os.path.relpath(path))
    return cfg, problems + more


def load_or_exit() -> Any:
    """:func:`load_config`, printing its problems and exiting 2 if any."""
    cfg, problems = load_config()
    if problems:
        from loopc.cli.textsafe import escape_text

        for p in problems:  # problems quote keys and codes of the file: escaped, one line each
            click.echo(f"loopc: {escape_text(p, inline=True)}", err=True)
        sys.exit(2)
    return cfg


@click.command("config")
def config_command() -> None:
    """Print the effective configuration (TOML) and where it came from."""
    cfg = load_or_exit()
    click.echo(cfg.to_toml(), nl=False)


def register(cli: click.Group) -> None:
    cli.add_command(config_command)
