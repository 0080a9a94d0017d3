"""Content-addressed result cache of ``loopc check`` (docs/ci.md#speed-jobs-cache-shards).

An entry's key is the SHA-256 of: the loopc version and a build id (the
sizes and modification times of loopc's own modules, so an edited checkout
never reads stale results), the digest of the effective lint configuration,
the reported path (diagnostics carry it), and the SHA-256 of the source
bytes.  The value is the pickled diagnostics tuple.  Entries live under the
platform's user cache folder (:func:`platformdirs.user_cache_dir`, e.g.
``~/.cache/loopc/check``), ``$LOOPC_CACHE_DIR``, or ``--cache-dir DIR``; a corrupt, unreadable or
unwritable cache is treated as a miss, never as an error.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from typing import Any


@functools.lru_cache(maxsize=1)
def build_id() -> str:
    """Hex digest of loopc's version and its module files' sizes and mtimes."""
    import loopc

    h = hashlib.sha256(loopc.__version__.encode())
    root = os.path.dirname(os.path.abspath(loopc.__file__))
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith((".py", ".lark", ".json")):
                p = os.path.join(d, f)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(p, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def default_dir() -> str:
    """``$LOOPC_CACHE_DIR`` when set, else ``<user cache dir>/loopc/check``."""
    env = os.environ.get("LOOPC_CACHE_DIR")
    if env:
        return env
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("loopc", appauthor=False), "check")


class Cache:
    """A folder of cached check results (see the module docstring)."""

    def __init__(self, directory: str, config_digest: str) -> None:
        self.directory = directory
        self._prefix = f"{build_id()}\0{config_digest}\0".encode()
        self.hits = 0
        self.misses = 0

    def key(self, path: str, data: bytes) -> str:
        h = hashlib.sha256(self._prefix)
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
        h.update(hashlib.sha256(data).digest())
        return h.hexdigest()

    def _file(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key[2:] + ".pickle")

    def get(self, key: str) -> Any:
        """The cached diagnostics tuple, or ``None`` on a miss."""
        try:
            with open(self._file(key), "rb") as fh:
                value = pickle.load(fh)
        except Exception:  # noqa: BLE001 - any unreadable entry is a miss
            self.misses += 1
            return None
        if not isinstance(value, tuple):
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: str, diagnostics: tuple) -> None:
        target = self._file(key)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(diagnostics, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except Exception:  # noqa: BLE001 - a cache that cannot be written is no cache
            try:
                os.unlink(tmp)  # type: ignore[possibly-undefined]
            except Exception:  # noqa: BLE001
                pass
