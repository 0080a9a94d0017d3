"""Content-addressed result cache of ``loopc check`` (docs/ci.md#the-result-cache).

An entry's *key* is the SHA-256 of: the cache format version, loopc's
version and a build id (the sizes and modification times of loopc's own
modules, so an edited checkout never reads stale results; the rule set —
every registered code with its name, severity and section — is declared in
those modules, ``loopc/codes/``, so the build id covers it without loading
the registry on every start), the digest of the effective lint configuration, the reported path
(diagnostics carry it), and the SHA-256 of the source bytes.

An entry is plain data, never code: one header line
``loopc-cache/2 <scheme> <hex MAC>`` followed by the JSON of the
diagnostics (:func:`encode`).  The MAC covers the format, the entry's key
and the JSON bytes: ``sha256`` (a digest: detects damage, not forgery)
when ``$LOOPC_CACHE_KEY`` is unset or empty, ``hmac-sha256`` under that
key when it is set (a forged or copied entry does not verify).  On read
(:meth:`Cache.get`) the file must be a regular file of at most
:data:`MAX_ENTRY_BYTES`, its header must name the scheme in force, the MAC
must match (an HMAC compared with :func:`hmac.compare_digest`) and the
JSON must decode, shape by shape, into diagnostics of known codes for the
requested path
(:func:`decode`).  Anything else — a missing, truncated, oversized or
special file, an old pickle, a wrong MAC, an unknown code, a value of the
wrong type — is a *miss*: the file is checked again and the entry
rewritten.  Never an error, never a traceback, never a result.

Entries live under the platform's user cache folder
(:func:`platformdirs.user_cache_dir`, e.g. ``~/.cache/loopc/check``),
``$LOOPC_CACHE_DIR``, or ``--cache-dir DIR``; an unwritable cache is no
cache.  Threat model (docs/ci.md#the-result-cache): whoever can write the
cache folder can, without a key, make a file pass by planting an entry
with a valid digest; with ``LOOPC_CACHE_KEY`` set from a secret they
cannot.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

from loopc import lazyre
from loopc.hashing import sha256

FORMAT = "loopc-cache/2"
"""First word of every entry's header; bumped when the entry shape changes."""

KEY_ENV = "LOOPC_CACHE_KEY"
"""Environment variable holding the HMAC key (any text; unset or empty: a
plain SHA-256 digest, which detects damage but not forgery)."""

MAX_ENTRY_BYTES = 64 * 1024 * 1024
"""Largest entry read or written (bytes); a larger one is a miss, and a
result that would be larger is not stored."""

_SUFFIX = ".json"
_HEADER_RE = lazyre.compile(rb"loopc-cache/2 (sha256|hmac-sha256) ([0-9a-f]{64})\n")
_CODE_RE = lazyre.compile(r"LP[0-9]{4}\Z")
_MAX_INT = 2**53


@functools.lru_cache(maxsize=1)
def build_id() -> str:
    """Hex digest of loopc's version and its module files' sizes and mtimes
    (:func:`build_files`)."""
    import loopc

    h = sha256(loopc.__version__.encode())
    for rel, size, mtime_ns in build_files():
        h.update(f"{rel}\0{size}\0{mtime_ns}\n".encode())
    return h.hexdigest()


def build_files() -> list[tuple[str, int, int]]:
    """``(path relative to the package, size, mtime in ns)`` of every
    ``.py``, ``.lark`` and ``.json`` file of the loopc package
    (``__pycache__`` left out), in ``os.walk``'s top-down order."""
    import loopc

    out: list[tuple[str, int, int]] = []

    def walk(folder: str, rel: str) -> None:
        # os.walk's top-down order (a folder's files, sorted, then its sub-folders, sorted) with
        # os.scandir's entries: half the time of os.walk + relpath on every start (issue 26)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        below = []
        for e in entries:
            if e.is_dir(follow_symlinks=False):  # os.walk does not descend into a linked folder either
                if e.name != "__pycache__":
                    below.append(e)
            elif e.name.endswith((".py", ".lark", ".json")):
                try:
                    st = e.stat()
                except OSError:
                    continue
                out.append((f"{rel}{e.name}", st.st_size, st.st_mtime_ns))
        for e in below:
            walk(e.path, f"{rel}{e.name}{os.sep}")

    walk(os.path.dirname(os.path.abspath(loopc.__file__)), "")
    return out


def default_dir() -> str:
    """``$LOOPC_CACHE_DIR`` when set, else ``<user cache dir>/loopc/check``
    (:func:`platformdirs.user_cache_dir`; on Linux :func:`linux_cache_home`
    gives the same folder without importing platformdirs)."""
    env = os.environ.get("LOOPC_CACHE_DIR")
    if env:
        return env
    home = linux_cache_home()
    if home is not None:
        return os.path.join(home, "loopc", "check")
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("loopc", appauthor=False), "check")


def linux_cache_home() -> str | None:
    """The user cache folder on Linux outside Android, as the XDG base
    directory rule and platformdirs give it: ``$XDG_CACHE_HOME`` when it is
    an absolute path, else ``$HOME/.cache`` for an absolute ``$HOME``.
    ``None`` anywhere else (another platform, Android, no absolute home):
    ask platformdirs.  Importing platformdirs costs about 15 ms (it imports
    ``tempfile`` and ``pathlib``), which every cached ``loopc check`` without
    ``$LOOPC_CACHE_DIR`` paid (issue 26); tests/test_startup_imports.py checks
    that both agree."""
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel") or "ANDROID_DATA" in os.environ:
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg.startswith("/"):
        return xdg
    if not os.environ.get("HOME", "").startswith("/"):
        return None
    return os.path.expanduser("~/.cache")


# --- the entry codec ------------------------------------------------------------

def _span_out(s: Any) -> list[Any] | None:
    return None if s is None else [s.line, s.column, s.end_line, s.end_column, s.start, s.end]


def _diag_out(d: Any) -> list[Any]:
    fix = None
    if d.fix is not None:
        fix = [d.fix.message, [[_span_out(e.span), e.new_text] for e in d.fix.edits], d.fix.applicability.value]
    return [d.code, d.name, d.severity.value, d.message, _span_out(d.span), d.pointer, d.node, d.edge,
            [[r.message, _span_out(r.span), r.pointer] for r in d.related], fix, d.path, d.section]


def encode(diagnostics: tuple) -> bytes:
    """The JSON bytes of ``diagnostics`` (a tuple of
    :class:`loopc.diagnostics.Diagnostic`): one array per diagnostic, fields
    in declaration order, spans as ``[line, column, endLine, endColumn,
    start, end]`` or ``null``.  A clean file's ``[]`` is written without
    loading :mod:`json` (~1 ms of a one-file check's start-up)."""
    if not diagnostics:
        return b"[]"
    import json

    return json.dumps([_diag_out(d) for d in diagnostics],
                      separators=(",", ":"), allow_nan=False).encode("utf-8")


class _Bad(Exception):
    """An entry that is not what :func:`encode` writes."""


def _str(v: Any) -> str:
    if type(v) is not str:
        raise _Bad
    return v


def _opt_str(v: Any) -> str | None:
    return None if v is None else _str(v)


def _int(v: Any, lo: int) -> int:
    if type(v) is not int or not lo <= v <= _MAX_INT:
        raise _Bad
    return v


def _opt_int(v: Any) -> int | None:
    return None if v is None else _int(v, 0)


def _list(v: Any, n: int | None = None) -> list[Any]:
    if type(v) is not list or (n is not None and len(v) != n):
        raise _Bad
    return v


def _span_in(v: Any) -> Any:
    from loopc.diagnostics import Span

    if v is None:
        return None
    line, col, eline, ecol, start, end = _list(v, 6)
    return Span(_int(line, 1), _int(col, 1), _int(eline, 1), _int(ecol, 1), _opt_int(start), _opt_int(end))


def _diag_in(v: Any, path: str) -> Any:
    from loopc import codes
    from loopc.diagnostics import Applicability, Diagnostic, Fix, Related, Severity, TextEdit

    code, name, sev, message, span, pointer, node, edge, related, fix, dpath, section = _list(v, 12)
    code = _str(code)
    if not _CODE_RE.match(code):
        raise _Bad
    try:
        registered = codes.get(code)
    except KeyError:
        raise _Bad from None
    if _str(name) != registered.name:
        raise _Bad
    if dpath is not None and _str(dpath) != path:
        raise _Bad
    try:
        severity = Severity(_str(sev))
    except ValueError:
        raise _Bad from None
    rel = tuple(Related(_str(m), _span_in(s), _str(p)) for m, s, p in (_list(r, 3) for r in _list(related)))
    fx = None
    if fix is not None:
        fmsg, edits, appl = _list(fix, 3)
        spans = [(_span_in(s), _str(t)) for s, t in (_list(e, 2) for e in _list(edits))]
        if any(s is None for s, _ in spans):
            raise _Bad
        try:
            applicability = Applicability(_str(appl))
        except ValueError:
            raise _Bad from None
        fx = Fix(_str(fmsg), tuple(TextEdit(s, t) for s, t in spans), applicability)
    return Diagnostic(code, name, severity, _str(message), _span_in(span), _str(pointer), _opt_str(node),
                      _opt_str(edge), rel, fx, dpath, _str(section))


def decode(data: bytes, path: str) -> tuple | None:
    """The diagnostics tuple :func:`encode` wrote for ``path``, or ``None``
    when ``data`` is anything else (not UTF-8 JSON, too deep, a wrong
    shape or type, an unknown code or a code with another name, a
    diagnostic about another path).  Never raises.  A clean file's ``[]``
    (as :func:`encode` writes it) is read without loading :mod:`json`."""
    if data == b"[]":
        return ()
    import json

    try:
        value = json.loads(data.decode("utf-8"))
        return tuple(_diag_in(v, path) for v in _list(value))
    except (_Bad, ValueError, TypeError, RecursionError, MemoryError):
        return None


# --- the folder -------------------------------------------------------------------

class Cache:
    """A folder of cached check results (see the module docstring).

    ``config_digest`` is :meth:`loopc.lint.config.LintConfig.digest`;
    ``secret`` the HMAC key (default: ``$LOOPC_CACHE_KEY``; ``""`` for a
    plain digest).  ``hits``/``misses`` count :meth:`get` outcomes.
    """

    def __init__(self, directory: str, config_digest: str, secret: str | None = None) -> None:
        self.directory = directory
        self._prefix = f"{FORMAT}\0{build_id()}\0{config_digest}\0".encode()
        if secret is None:
            secret = os.environ.get(KEY_ENV, "")
        self._secret = secret.encode("utf-8", "surrogateescape")
        self._scheme = b"hmac-sha256" if self._secret else b"sha256"
        self.hits = 0
        self.misses = 0

    def key(self, path: str, data: bytes) -> str:
        """Hex key of the result for source bytes ``data`` reported as ``path``."""
        h = sha256(self._prefix)
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
        h.update(sha256(data).digest())
        return h.hexdigest()

    def _file(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key[2:] + _SUFFIX)

    def _mac(self, key: str, payload: bytes) -> str:
        msg = FORMAT.encode() + b"\0" + key.encode() + b"\0" + payload
        if self._secret:
            import hashlib  # only under $LOOPC_CACHE_KEY (start-up: issue 26, loopc.hashing)
            import hmac

            return hmac.new(self._secret, msg, hashlib.sha256).hexdigest()
        return sha256(msg).hexdigest()

    def get(self, key: str, path: str) -> tuple | None:
        """The cached diagnostics tuple of ``key`` (whose diagnostics are
        about ``path``), or ``None`` on a miss (see the module docstring)."""
        value = self._read(key, path)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def _read(self, key: str, path: str) -> tuple | None:
        from loopc.boundedio import read_bounded

        path_ = self._file(key)
        try:
            if os.stat(path_).st_size > MAX_ENTRY_BYTES:  # not read at all (a sparse or planted giant)
                return None
            raw = read_bounded(path_, MAX_ENTRY_BYTES)  # regular files only, never blocks; still bounded
        except OSError:
            return None
        if len(raw) > MAX_ENTRY_BYTES:
            return None
        m = _HEADER_RE.match(raw)
        if m is None or m.group(1) != self._scheme:
            return None
        payload = raw[m.end():]
        want = self._mac(key, payload).encode()
        if self._secret:  # a MAC: compared in constant time
            from hmac import compare_digest

            if not compare_digest(m.group(2), want):
                return None
        elif m.group(2) != want:  # a plain digest anyone can compute: nothing to leak
            return None
        return decode(payload, path)

    def put(self, key: str, diagnostics: tuple) -> None:
        """Store ``diagnostics`` under ``key`` (atomically: a temporary file
        renamed into place); a result that cannot be written, or is over
        :data:`MAX_ENTRY_BYTES`, is not stored."""
        try:
            payload = encode(diagnostics)
        except (TypeError, ValueError, AttributeError):
            return
        entry = b"%s %s %s\n" % (FORMAT.encode(), self._scheme, self._mac(key, payload).encode()) + payload
        if len(entry) > MAX_ENTRY_BYTES:
            return
        target = self._file(key)
        tmp = None
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            # what tempfile.mkstemp does (a fresh name, created exclusively, mode 0o600), without
            # importing tempfile, shutil and random on the one-file path (start-up, issue 26)
            name = os.path.join(os.path.dirname(target), f"tmp{os.urandom(8).hex()}.tmp")
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
            tmp = name  # ours from here on: removed if the write fails
            with os.fdopen(fd, "wb") as fh:
                fh.write(entry)
            os.replace(tmp, target)
        except OSError:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
