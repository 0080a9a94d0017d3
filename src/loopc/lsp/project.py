"""The project configuration a document is checked with (docs/editors.md#settings;
docs/ci.md#configuration).

So that the editor shows what ``loopc check`` run in the document's folder
would print, the server finds the same configuration the CLI finds: the
nearest ``.loopc.toml`` (top level) or ``pyproject.toml`` with a
``[tool.loopc]`` table, searching from the document's folder upwards and
stopping at the repository root (the first folder holding ``.git``); in one
folder ``.loopc.toml`` wins.  The table is interpreted by
:func:`loopc.lint.config.from_mapping`, exactly as the CLI does; a broken
file gives the defaults (the CLI would exit 2 and print the problem; the
server logs it).  Parsed files are cached by path, modification time, size and inode, so
a keystroke costs a few ``stat`` calls.  Documents without a file path
(untitled buffers) use the defaults.

Live configuration (docs/editors.md#live-configuration): :func:`stamp` is
what a document's configuration depends on (the files the search looks at),
so a cached analysis whose stamp no longer holds is re-checked even when the
client never says a file changed; :func:`forget` drops parsed files when it
does (``workspace/didChangeWatchedFiles``).
"""
from __future__ import annotations

import os
import sys
from typing import Any

_cache: dict[str, tuple[tuple[int, int, int], Any, list[str]]] = {}

#: Byte budget of a configuration file (``.loopc.toml``, ``pyproject.toml``).
MAX_CONFIG_BYTES = 1024 * 1024


def _toml_load(path: str) -> tuple[dict[str, Any], list[str]]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    from loopc.boundedio import read_bounded

    try:
        data = read_bounded(path, MAX_CONFIG_BYTES)  # never blocks on a FIFO or device
        if len(data) > MAX_CONFIG_BYTES:
            return {}, [f"{path}: larger than {MAX_CONFIG_BYTES:,} bytes; ignored"]
        return tomllib.loads(data.decode("utf-8")), []
    except OSError as exc:
        return {}, [f"{path}: {getattr(exc, 'reason', None) or exc.strerror or exc}"]
    except Exception as exc:  # noqa: BLE001 - TOMLDecodeError
        return {}, [f"{path}: invalid TOML: {exc}"]


def _table(path: str, pyproject: bool) -> tuple[Any, list[str]] | None:
    """``(table or None, problems)``; ``None`` when a pyproject.toml has no
    ``[tool.loopc]`` (it does not count)."""
    mtime = _stat(path)  # a dangling link or a link loop: reported by _toml_load
    if mtime is None:
        return None
    hit = _cache.get(path)
    if hit is None or hit[0] != mtime:
        data, problems = _toml_load(path)
        table: Any = data
        if pyproject:
            tool = data.get("tool")
            table = tool.get("loopc") if isinstance(tool, dict) else None
            if table is not None and not isinstance(table, dict):
                problems = problems + [f"{path}: [tool.loopc] must be a table"]
                table = {}
        hit = (mtime, table, problems)
        _cache[path] = hit
    _, table, problems = hit
    if table is None and not problems:
        return None
    return table or {}, problems


#: the file names the search looks for, in the order one folder is searched
CONFIG_FILES = (".loopc.toml", "pyproject.toml")


def forget(paths: list[str] | None = None) -> None:
    """Drop the parsed configuration files ``paths`` (every one when
    ``None``) from the cache: the next check reads them again."""
    if paths is None:
        _cache.clear()
        return
    for p in paths:
        _cache.pop(os.path.abspath(p), None)
        _cache.pop(p, None)


def _stat(path: str) -> tuple[int, int, int] | None:
    """``(mtime_ns, size, inode)`` of the file ``path`` names (through a
    link; of the link itself when it dangles), ``None`` when absent."""
    for stat in (os.stat, os.lstat):
        try:
            st = stat(path)
        except OSError:
            continue
        return (st.st_mtime_ns, st.st_size, st.st_ino)
    return None


def stamp(doc_path: str | None) -> tuple[Any, ...]:
    """What :func:`config_for` of ``doc_path`` depends on: ``(path, stat)``
    of every file the search looks at, up to the first one that exists,
    and the ``.git`` that ends it (``stat`` is ``(mtime_ns, size, inode)``,
    ``None`` for an absent file).  Equal stamps mean the same files with
    the same contents as far as ``stat`` can tell; ``()`` without a path."""
    if not doc_path:
        return ()
    d = os.path.dirname(os.path.abspath(doc_path))
    seen: list[Any] = []
    for _ in range(64):
        for name in CONFIG_FILES:
            p = os.path.join(d, name)
            st = _stat(p)
            seen.append((p, st))
            if st is not None and name == ".loopc.toml":
                return tuple(seen)
        git = os.path.join(d, ".git")
        if os.path.exists(git):
            seen.append((git, True))
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return tuple(seen)


def config_for(doc_path: str | None) -> tuple[Any, list[str]]:
    """``(LintConfig or None, problems)`` for a document at ``doc_path``."""
    if not doc_path:
        return None, []
    d = os.path.dirname(os.path.abspath(doc_path))
    for _ in range(64):
        for name, pyproject in ((".loopc.toml", False), ("pyproject.toml", True)):
            p = os.path.join(d, name)
            if os.path.lexists(p) and not os.path.isdir(p):  # a FIFO or a link loop is reported
                got = _table(p, pyproject)
                if got is not None:
                    table, problems = got
                    from loopc.lint.config import from_mapping

                    cfg, more = from_mapping(table, p)
                    return cfg, problems + more
        if os.path.exists(os.path.join(d, ".git")):
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None, []
