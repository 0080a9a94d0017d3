"""Which files ``loopc check`` and ``loopc fmt`` look at (docs/ci.md#what-gets-checked).

* A named file is always taken (unless an ``exclude`` pattern matches it) and
  checked strictly, whatever its name or first line — pre-commit names files.
* A named directory is walked: files ending ``.yaml``/``.yml`` in any letter
  case (or, when ``include`` patterns are given, the files matching them);
  hidden files and folders, ``.git``, and whatever a ``.gitignore`` between
  the repository root and the file ignores are skipped, as is whatever an
  ``exclude`` pattern matches.  ``include``/``exclude`` use gitignore
  syntax (via :mod:`pathspec`), relative to the current directory.
* A walked YAML file whose first line is neither ``apiVersion: loop.plan/v1``
  nor the legacy ``apiVersion: loop.workflow/v1`` is not a plan: it is
  skipped with a note (see :func:`looks_like_plan`).
* A named file with no sign of a plan at all (:func:`plan_like`) gets one
  LP1014 warning instead of a cascade of errors at 1:1, so pre-commit with a
  broad ``files:`` pattern passes; a named file that looks like a plan with
  a broken header is checked strictly.

Order is deterministic: named paths in the given order, each directory's
files sorted by path.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Iterator, Sequence

from loopc import lazyre
from loopc.value import Value
from loopc.boundedio import read_bounded

#: A ``.gitignore`` is read up to this many bytes (the rest is ignored).
GITIGNORE_BYTES = 1024 * 1024

_PLAN_HEAD = re.compile(rb"^(?:\xef\xbb\xbf)?apiVersion:[ \t]*([\"']?)loop\.(?:plan|workflow)/v1\1[ \t]*(?:#.*)?\r?$")
# a top-level line (column 0) that only a plan has: a value naming the plan
# format or its kind (after any key, so a misspelt `apiVersoin:` still counts,
# JSON too, or as a list item), or one of the keys that make a plan a graph
_PLAN_SIGN = lazyre.compile(
    rb"^(?:\xef\xbb\xbf)?(?:(?:[^\s#][^\n]*?:|-)[ \t]*[\"']?(?:loop\.(?:plan|workflow)/|PlanVersion\b)"
    rb"|[\"']?(?:entry|nodes|edges)[\"']?[ \t]*:)",
    re.MULTILINE,
)


class Entry(Value):
    """One file to check: ``path`` as reported; ``error`` (a message) when
    the path is missing or not checkable; ``walked`` when found by walking a
    directory (so a non-plan YAML file is skipped, not checked strictly)."""

    path: str
    error: str | None = None
    walked: bool = False


def looks_like_plan(data: bytes) -> bool:
    """Whether the first line of ``data`` is a plan header
    (``apiVersion: loop.plan/v1`` or the legacy ``loop.workflow/v1``)."""
    first = data.split(b"\n", 1)[0]
    return _PLAN_HEAD.match(first) is not None


def plan_like(data: bytes) -> bool:
    """Whether a named file may be a plan and is checked strictly: its first
    line is a plan header (:func:`looks_like_plan`), or a line at column 0
    holds a value (or list item) starting ``loop.plan/``, ``loop.workflow/``
    or ``PlanVersion``, or is one of the keys ``entry:``, ``nodes:``,
    ``edges:``; a file that is empty (only whitespace and comments) or not
    UTF-8 counts too, so that the YAML layer says precisely what is wrong.
    Anything else (``.pre-commit-config.yaml``, a CI workflow, a Kubernetes
    manifest) is not a plan."""
    if looks_like_plan(data) or _PLAN_SIGN.search(data) is not None:
        return True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def _spec(patterns: Sequence[str], *, skip_invalid: bool = False) -> Any:
    """The :mod:`pathspec` matcher of ``patterns`` (``None`` for none).
    ``skip_invalid`` (a ``.gitignore``, where git itself ignores a line it
    cannot read, such as a lone ``!``): drop such lines; otherwise they were
    refused before (configuration and command line,
    :func:`loopc.lint.config.pattern_problem`) and a ``ValueError`` here is
    a caller's bug."""
    if not patterns:
        return None
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(list(patterns))
    except ValueError:
        if not skip_invalid:
            raise
    from loopc.lint.config import pattern_problem

    return pathspec.GitIgnoreSpec.from_lines([p for p in patterns if pattern_problem(p) is None])


def _rel(path: str) -> str:
    rel = os.path.relpath(path)
    return rel.replace(os.sep, "/")


class _Ignores:
    """The ``.gitignore`` files that apply below a walked directory: those
    from the repository root (the nearest folder holding ``.git``) down."""

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def spec_for(self, directory: str) -> Any:
        if directory not in self._cache:
            spec = None
            gi = os.path.join(directory, ".gitignore")
            try:  # bounded, never blocking on a FIFO or device
                data = read_bounded(gi, GITIGNORE_BYTES)[:GITIGNORE_BYTES]
                spec = _spec(data.decode("utf-8", "replace").splitlines(), skip_invalid=True)
            except OSError:
                pass
            self._cache[directory] = spec
        return self._cache[directory]

    def ignored(self, path: str, is_dir: bool, chain: Sequence[str]) -> bool:
        for base in chain:
            spec = self.spec_for(base)
            if spec is None:
                continue
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if rel.startswith(".."):
                continue
            if spec.match_file(rel + ("/" if is_dir else "")):
                return True
        return False


def _parents_to_repo_root(directory: str) -> list[str]:
    """Folders from the repository root (nearest ancestor with ``.git``) down
    to ``directory``; just ``directory`` outside a repository."""
    chain = []
    d = os.path.abspath(directory)
    while True:
        chain.append(d)
        if os.path.exists(os.path.join(d, ".git")):
            return list(reversed(chain))
        parent = os.path.dirname(d)
        if parent == d:
            return [os.path.abspath(directory)]
        d = parent


def discover(paths: Sequence[str], *, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Iterator[Entry]:
    """Yield an :class:`Entry` for every file to check under ``paths``."""
    inc = _spec(include)
    exc = _spec(exclude)
    ignores = _Ignores()
    for p in paths:
        if os.path.isdir(p):
            found = False
            root_chain = _parents_to_repo_root(p)
            walk_errors: list[OSError] = []
            for root, dirs, files in os.walk(p, onerror=walk_errors.append):
                chain = root_chain + _between(root_chain[-1], root)
                keep = []
                for d in sorted(dirs):
                    full = os.path.join(root, d)
                    if d.startswith(".") or ignores.ignored(full, True, chain):
                        continue
                    if exc is not None and exc.match_file(_rel(full) + "/"):
                        continue
                    keep.append(d)
                dirs[:] = keep
                for f in sorted(files):
                    full = os.path.join(root, f)
                    if f.startswith("."):
                        continue
                    if inc is not None:
                        if not inc.match_file(_rel(full)):
                            continue
                    elif not f.lower().endswith((".yaml", ".yml")):
                        continue
                    if exc is not None and exc.match_file(_rel(full)):
                        continue
                    if ignores.ignored(full, False, chain):
                        continue
                    found = True
                    yield Entry(full, walked=True)
            for err in walk_errors:  # an unreadable folder below p
                found = True
                why = "permission denied" if isinstance(err, PermissionError) else (err.strerror or str(err)).lower()
                yield Entry(str(err.filename or p), why)
            if not found:
                yield Entry(p, "no *.yaml or *.yml files found")
        else:
            # files, and also FIFOs, devices, dangling links, link loops and
            # paths that do not exist: reading reports precisely what they
            # are (loopc.boundedio)
            if exc is not None and exc.match_file(_rel(p)):
                continue
            yield Entry(p)


def _between(base: str, root: str) -> list[str]:
    """Folders strictly below ``base`` down to ``root`` (both may be relative)."""
    base_abs = os.path.abspath(base)
    root_abs = os.path.abspath(root)
    if root_abs == base_abs:
        return []
    rel = os.path.relpath(root_abs, base_abs)
    out = []
    cur = base_abs
    for part in rel.split(os.sep):
        cur = os.path.join(cur, part)
        out.append(cur)
    return out


def shard(entries: Sequence[Entry], k: int, n: int) -> list[Entry]:
    """Shard ``k`` of ``n`` (1-based): entries sorted by path, dealt round-robin,
    so shard sizes differ by at most one and every entry lands in exactly one
    shard, independent of the order the paths were named in."""
    ordered = sorted(entries, key=lambda e: e.path)
    return [e for i, e in enumerate(ordered) if i % n == k - 1]


def path_filter_options(verb: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``--exclude``/``--include`` options of the commands that walk
    paths with :func:`loopc.cli.check.collect` (``check``, ``inventory``;
    docs/ci.md#what-gets-checked); ``verb`` completes the ``--include`` help
    ("check", "take")."""
    import click

    def apply(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option(
            "--include",
            multiple=True,
            metavar="GLOB",
            help=f"In directories, {verb} the files matching GLOB instead of *.yaml/*.yml (repeatable).",
        )(f)
        return click.option(
            "--exclude", multiple=True, metavar="GLOB", help="Skip files matching GLOB (gitignore syntax; repeatable)."
        )(f)

    return apply
