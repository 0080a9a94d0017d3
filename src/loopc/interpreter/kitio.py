"""The conformance kit's side of the JSON-lines pipe to a runtime under test
(docs/conformance.md#protocol, "Limits").

:class:`RuntimeProcess` spawns the runtime and exchanges one request line
for one reply line, with two bounds on every reply:

* **time** — the whole reply line (not only its first byte) must arrive
  within ``timeout`` seconds of the request (default
  :data:`DEFAULT_REPLY_TIMEOUT_S`); a runtime that writes half a line and
  stalls, or never reads its input, is stopped at the deadline;
* **size** — a reply line longer than ``reply_limit`` bytes (default
  :data:`DEFAULT_REPLY_LIMIT`) is refused as soon as the limit is passed,
  without reading the rest.

Reads happen on a reader thread and writes on a writer thread, so neither a
full pipe nor a silent runtime can block the kit past the deadline.  After
any failure (timeout, oversize reply, end of output, invalid JSON) the
runtime's protocol state is unknown: the process is killed and every later
:meth:`RuntimeProcess.ask` raises :class:`RuntimeError_` at once.

:func:`parse_reply` turns a reply line into a JSON value with I-JSON bounds
(no NaN/Infinity, no number that is not a finite IEEE double, nesting at
most :data:`MAX_REPLY_DEPTH`), raising :class:`RuntimeError_` otherwise;
never ``RecursionError`` or ``MemoryError``.
"""
from __future__ import annotations

import json
import math
import os
import queue
import re
import signal
import subprocess
import threading
import time
from typing import Any

__all__ = ["RuntimeProcess", "RuntimeError_", "parse_reply", "parse_size", "DEFAULT_REPLY_TIMEOUT_S",
           "DEFAULT_REPLY_LIMIT", "MAX_REPLY_DEPTH"]

#: Seconds a runtime has for each complete reply line.
DEFAULT_REPLY_TIMEOUT_S = 20.0
#: Bytes a reply line may have (64 MiB), newline excluded.
DEFAULT_REPLY_LIMIT = 64 * 1024 * 1024
#: Deepest nesting of a reply (a report holds journal records holding plan
#: values; artifacts are gated at 256 and scenario values at 64).
MAX_REPLY_DEPTH = 300
_CHUNK = 1 << 16


class RuntimeError_(Exception):
    """The runtime under test did not answer properly (could not start,
    exited, timed out, wrote an oversize or non-JSON reply)."""


def parse_size(text: str) -> int:
    """``"65536"``, ``"64KiB"``, ``"64MiB"``, ``"1GiB"`` → bytes (a positive
    integer).  Raises ``ValueError`` with a one-line reason."""
    m = re.fullmatch(r"\s*([0-9]{1,15})\s*(|B|KiB|MiB|GiB)\s*", text)
    if m is None:
        raise ValueError(f"{text!r} is not a size (bytes, or a number with KiB, MiB or GiB)")
    n = int(m.group(1)) * {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m.group(2)]
    if n < 1:
        raise ValueError("the size must be at least 1 byte")
    return n


def _finite_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"number {text[:40]} is not a finite IEEE double")
    return v


def _bounded_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > 309:  # beyond any finite double (about 1.8e308): refused before conversion
        raise ValueError(f"an integer of {digits:,} digits is beyond the IEEE double range")
    v = int(text)
    try:
        float(v)
    except OverflowError:
        raise ValueError(f"number {text[:40]}… is beyond the IEEE double range") from None
    return v


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_int=_bounded_int, parse_constant=_no_constant)


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), iterative; stops
    counting once ``limit`` is passed (returns ``limit + 1``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        d += 1
        if d > deepest:
            deepest = d
            if d > limit:
                return d
        stack.extend((c, d) for c in children)
    return deepest


def parse_reply(line: bytes, what: str = "reply") -> Any:
    """One reply line → its JSON value.  Raises :class:`RuntimeError_` for
    text that is not UTF-8 I-JSON within the bounds of this module."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RuntimeError_(f"the {what} is not UTF-8 (byte {exc.start})") from None
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise RuntimeError_(f"the {what} is nested deeper than {MAX_REPLY_DEPTH}") from None
    except ValueError as exc:
        raise RuntimeError_(f"the {what} is not valid JSON: {str(exc)[:200]} ({text[:80]!r})") from None
    if json_depth(value, MAX_REPLY_DEPTH) > MAX_REPLY_DEPTH:
        raise RuntimeError_(f"the {what} is nested deeper than {MAX_REPLY_DEPTH}")
    return value


class RuntimeProcess:
    """A runtime under test: one JSON request per line on its stdin, one
    JSON reply per line on its stdout (stderr is discarded).

    ``timeout`` (seconds, > 0) bounds each complete reply; ``reply_limit``
    (bytes) bounds its length.  Raises :class:`RuntimeError_` when the
    command cannot be started."""

    def __init__(self, argv: list[str], *, timeout: float = DEFAULT_REPLY_TIMEOUT_S,
                 reply_limit: int = DEFAULT_REPLY_LIMIT) -> None:
        self.argv = argv
        self.timeout = timeout
        self.reply_limit = reply_limit
        self.dead: str | None = None  # why the runtime can no longer be asked
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, bufsize=0,
                                         start_new_session=os.name == "posix")
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise RuntimeError_(f"cannot start runtime {argv!r}: {reason}") from None
        self._closing = threading.Event()
        self._replies: queue.Queue[tuple[str, bytes]] = queue.Queue(maxsize=8)
        self._requests: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read_loop, name="loopc-conform-reader", daemon=True)
        self._writer = threading.Thread(target=self._write_loop, name="loopc-conform-writer", daemon=True)
        self._reader.start()
        self._writer.start()

    # ------------------------------------------------------------ threads
    def _put(self, item: tuple[str, bytes]) -> bool:
        while not self._closing.is_set():
            try:
                self._replies.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        limit = self.reply_limit
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                self._put(("eof", bytes(buf)))
                return
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                end = len(chunk) if nl < 0 else nl
                if len(buf) + end - start > limit:
                    self._put(("oversize", b""))
                    return  # the line is refused; the runtime is stopped by the asker
                buf += chunk[start:end]
                if nl < 0:
                    break
                line = bytes(buf)
                buf.clear()
                start = nl + 1
                if line.strip() and not self._put(("line", line)):
                    return

    def _write_loop(self) -> None:
        assert self.proc.stdin is not None
        while True:
            data = self._requests.get()
            if data is None:
                break
            try:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except (OSError, ValueError):
                break
        try:
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass

    # ------------------------------------------------------------ asking
    def _fail(self, why: str) -> RuntimeError_:
        self.dead = why
        self.kill()
        return RuntimeError_(why)

    def ask(self, req: dict[str, Any], *, timeout: float | None = None) -> Any:
        """Send ``req`` and return the parsed reply (any JSON value; the
        caller checks its shape).  Raises :class:`RuntimeError_`."""
        if self.dead is not None:
            raise RuntimeError_(f"the runtime is stopped ({self.dead})")
        limit = self.timeout if timeout is None else timeout
        op = req.get("op")
        self._requests.put((json.dumps(req, ensure_ascii=False) + "\n").encode("utf-8"))
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(f"no complete answer to {op} within {limit:g} s")
            try:
                kind, data = self._replies.get(timeout=min(left, 0.5))
            except queue.Empty:
                if not self._reader.is_alive() and self._replies.empty():
                    raise self._fail("the runtime exited") from None
                continue
            break
        if kind == "oversize":
            raise self._fail(f"the answer to {op} is longer than {self.reply_limit:,} bytes")
        if kind == "eof":
            tail = f" after writing an incomplete line ({data[:80]!r})" if data.strip() else ""
            raise self._fail(f"the runtime exited{tail}")
        try:
            return parse_reply(data, f"answer to {op}")
        except RuntimeError_ as exc:
            raise self._fail(str(exc)) from None

    def kill(self) -> None:
        """Stop the process now (idempotent)."""
        self._closing.set()
        if self.proc.poll() is None:
            try:
                if os.name == "posix":  # its own session: children holding the pipe go too
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:  # pragma: no cover
                    self.proc.kill()
            except OSError:
                pass
        self._requests.put(None)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a kill is not refused
            pass

    def close(self) -> None:
        """Say ``quit`` (waiting at most 5 s), then stop the process."""
        if self.dead is None:
            try:
                self.ask({"op": "quit"}, timeout=min(self.timeout, 5.0))
            except RuntimeError_:
                pass
        self._requests.put(None)
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
