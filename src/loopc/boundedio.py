"""Bounded, non-blocking reads of input files — the one I/O helper below the
command line (docs/language.md#command-line-output; used by the ``*_file`` helpers,
the CLI, and the scenario and catalog loaders).

Every input has a byte budget (1 MiB for plan sources; the artifact, scenario
and catalog budgets are their modules' own).  :func:`read_bounded` reads at
most ``limit + 1`` bytes — one byte more than the budget is enough for the
caller to report "over budget" without reading the rest — and never blocks:
the file is opened with ``O_NONBLOCK`` and checked with ``fstat`` on the open
descriptor (no race between a check and the open), so a FIFO, a terminal or
a device is refused before any read.  Only regular files are read.

Failures raise :class:`ReadError` (an ``OSError``) whose ``reason`` says
precisely what the path is: ``"is a FIFO (named pipe)"``, ``"is a character
device"`` (``/dev/null``, ``/dev/zero``, a terminal), ``"is a directory"``,
``"is a symbolic link loop"``, ``"is a dangling symbolic link"``,
``"permission denied"``, ``"no such file or directory"``, ...  Never raises
anything else for a bad path.
"""
from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

__all__ = ["ReadError", "read_bounded", "read_stream_bounded", "special_kind"]


class ReadError(OSError):
    """A path that cannot be read as a regular file.

    ``reason`` is a short lower-case phrase for messages
    (``loopc: plan.yaml: is a FIFO (named pipe); only regular files are
    read``); ``errno``/``strerror``/``filename`` are set as for ``OSError``
    (``strerror`` equals ``reason``).
    """

    def __init__(self, path: str, reason: str, code: int = errno.EINVAL) -> None:
        super().__init__(code, reason, path)
        self.reason = reason


_KINDS = (
    (stat.S_ISDIR, "is a directory", errno.EISDIR),
    (stat.S_ISFIFO, "is a FIFO (named pipe); only regular files are read", errno.EINVAL),
    (stat.S_ISCHR, "is a character device; only regular files are read", errno.EINVAL),
    (stat.S_ISBLK, "is a block device; only regular files are read", errno.EINVAL),
    (stat.S_ISSOCK, "is a socket; only regular files are read", errno.EINVAL),
)


def special_kind(mode: int) -> tuple[str, int] | None:
    """(reason, errno) for a file mode that is not a regular file, else ``None``."""
    if stat.S_ISREG(mode):
        return None
    for test, reason, code in _KINDS:
        if test(mode):
            return reason, code
    return "is not a regular file", errno.EINVAL


def _open_error(path: str, exc: OSError) -> ReadError:
    code = exc.errno or errno.EIO
    if code == errno.ELOOP:
        return ReadError(path, "is a symbolic link loop (too many levels of symbolic links)", code)
    if code == errno.ENOENT:
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return ReadError(path, "is a dangling symbolic link (its target does not exist)", code)
        except OSError:
            pass
        return ReadError(path, "no such file or directory", code)
    if code in (errno.EACCES, errno.EPERM):
        return ReadError(path, "permission denied", code)
    if code == errno.ENOTDIR:
        return ReadError(path, "a component of the path is not a directory", code)
    if code == errno.ENXIO:
        try:
            got = special_kind(os.stat(path).st_mode)
        except OSError:
            got = None
        if got is not None:
            return ReadError(path, got[0], code)
        return ReadError(path, "no such device or address", code)
    if code == errno.ENAMETOOLONG:
        return ReadError(path, "file name too long", code)
    return ReadError(path, (exc.strerror or str(exc)).lower(), code)


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """Read at most ``limit + 1`` bytes of the regular file ``path``.

    A result longer than ``limit`` means the file is over its budget (the
    caller reports that).  Never blocks on a FIFO, terminal or device and
    never reads a special file.  Raises :class:`ReadError` for anything that
    is not a readable regular file.
    """
    p = os.fspath(path)
    if "\0" in p:  # os.open would raise ValueError: no file can have this name
        raise ReadError(p, "file name contains a NUL character", errno.EINVAL)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except OSError as exc:
        raise _open_error(p, exc) from None
    try:
        kind = special_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise ReadError(p, kind[0], kind[1])
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            try:
                b = os.read(fd, min(left, 1 << 20))
            except OSError as exc:
                raise ReadError(p, (exc.strerror or str(exc)).lower(), exc.errno or errno.EIO) from None
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_stream_bounded(stream: BinaryIO, limit: int) -> bytes:
    """Read at most ``limit + 1`` bytes from an already open binary stream
    (standard input for a ``-`` argument); ``OSError`` propagates."""
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        b = stream.read(min(left, 1 << 20))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)
