"""Finding and reading loopc's configuration, and ``loopc config``
(docs/ci.md "Configuration").

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


def find_config(start: str | None = None) -> tuple[str | None, dict[str, Any], list[str]]:
    """``(path, table, problems)`` of the configuration that applies in
    ``start`` (default: the current directory); ``(None, {}, [])`` when
    there is none.  An unreadable or invalid TOML file is a problem."""
    d = os.path.abspath(start or os.getcwd())
    while True:
        dot = os.path.join(d, ".loopc.toml")
        pyproject = os.path.join(d, "pyproject.toml")
        if os.path.isfile(dot):
            table, problems = _read(dot)
            return dot, table, problems
        if os.path.isfile(pyproject):
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


def _read(path: str) -> tuple[dict[str, Any], list[str]]:
    try:
        with open(path, "rb") as fh:
            return _toml().load(fh), []
    except OSError as exc:
        return {}, [f"{path}: {exc.strerror or exc}"]
    except Exception as exc:  # noqa: BLE001 - tomllib.TOMLDecodeError
        return {}, [f"{path}: invalid TOML: {exc}"]


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
        for p in problems:
            click.echo(f"loopc: {p}", err=True)
        sys.exit(2)
    return cfg


@click.command("config")
def config_command() -> None:
    """Print the effective configuration (TOML) and where it came from."""
    cfg = load_or_exit()
    click.echo(cfg.to_toml(), nl=False)


def register(cli: click.Group) -> None:
    cli.add_command(config_command)
