"""The server's tie to its client process (docs/editors.md#lifetime).

``initialize`` names the client's process id (``processId``); when that
process is gone, nobody will ever send ``exit`` — an editor that crashed
while something else still holds the pipes open would leave the server
running forever.  :func:`watch` polls :func:`process_alive` every
:data:`POLL_SECONDS` and calls back once the process has died.
"""
from __future__ import annotations

import asyncio
import os
import sys
from typing import Callable

#: Seconds between two looks at the client process.
POLL_SECONDS = 1.0


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` (> 0) exists.  POSIX: ``os.kill(pid, 0)``
    (no signal is sent; a process of another user exists too).  Windows,
    where ``os.kill`` would terminate it: ``OpenProcess`` and a zero-timeout
    wait through ``ctypes``.  Any other doubt counts as alive."""
    if pid <= 0:
        return True
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        return _alive_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _alive_windows(pid: int) -> bool:  # pragma: no cover - Windows only
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    synchronize, wait_timeout = 0x00100000, 0x00000102
    handle = kernel32.OpenProcess(synchronize, False, pid)
    if not handle:
        return False
    try:
        return bool(kernel32.WaitForSingleObject(handle, 0) == wait_timeout)
    finally:
        kernel32.CloseHandle(handle)


async def watch(pid: int, on_death: Callable[[], None], interval: float = POLL_SECONDS) -> None:
    """Poll process ``pid`` every ``interval`` seconds; call ``on_death()``
    once it is gone, then return."""
    while process_alive(pid):
        await asyncio.sleep(interval)
    on_death()
