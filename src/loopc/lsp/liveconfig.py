"""Live project configuration (docs/editors.md#live-configuration): a change
of ``.loopc.toml`` or ``pyproject.toml`` shows in the editor without a
keystroke.

* After ``initialized`` the server asks the client to watch both files
  (``client/registerCapability`` for ``workspace/didChangeWatchedFiles``,
  globs ``**/.loopc.toml`` and ``**/pyproject.toml``) when the client
  supports registering that dynamically; a client that watches on its own
  (a static ``synchronize.fileEvents`` setting) is served the same way.
* On ``workspace/didChangeWatchedFiles`` naming either file the parsed
  files are dropped (:func:`loopc.lsp.project.forget`), every open
  document's analysis is discarded, and diagnostics are renewed the one way
  the client takes them: ``workspace/diagnostic/refresh`` to a pull client
  that supports it (one without it gets the new result on its next pull),
  re-checked and published to a push client.  ``workspace/didChangeConfiguration``
  does the same when the editor settings changed
  (:meth:`loopc.lsp.server.LoopcServer.load_settings`).
* A cached analysis is never served after its configuration files changed,
  notification or not: each analysis records the files' ``stat``
  (:func:`loopc.lsp.project.stamp`) and is re-checked when it no longer
  holds (:func:`loopc.lsp.analysis.config_current`).
"""
from __future__ import annotations

import asyncio
import logging
import posixpath
from typing import Any, Sequence

from lsprotocol import types as lsp

from loopc.lsp.project import CONFIG_FILES

log = logging.getLogger("loopc.lsp")

#: the ``id`` of the server's watched-files registration
REGISTRATION_ID = "loopc.configuration-files"
#: what the client is asked to watch: both files in every folder
WATCHERS = [lsp.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]


def supports_dynamic_watch(caps: Any) -> bool:
    """Whether the client capabilities ``caps`` allow registering
    ``workspace/didChangeWatchedFiles`` dynamically."""
    ws = getattr(caps, "workspace", None)
    watched = getattr(ws, "did_change_watched_files", None)
    return bool(getattr(watched, "dynamic_registration", False))


async def watch_config_files(ls: Any) -> bool:
    """Ask the client to watch the configuration files (when it can register
    the watch dynamically); ``True`` when it accepted.  A client that refuses
    or does not answer within 5 s is logged at debug level, never an error."""
    if not supports_dynamic_watch(ls.client_capabilities):
        return False
    params = lsp.RegistrationParams(registrations=[lsp.Registration(
        id=REGISTRATION_ID, method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=WATCHERS))])
    try:
        await asyncio.wait_for(ls.client_register_capability_async(params), 5.0)
    except Exception as exc:  # noqa: BLE001 - the client declined: no live configuration through watching
        log.debug("loopc: the client did not register the configuration-file watch: %s", exc)
        return False
    return True


def config_paths(changes: Sequence[lsp.FileEvent]) -> list[str]:
    """The file-system paths of the changed configuration files among
    ``changes`` (other files are not ours)."""
    from pygls.uris import to_fs_path

    found: list[str] = []
    for change in changes:
        uri = change.uri
        if posixpath.basename(uri.rstrip("/")) not in CONFIG_FILES:
            continue
        try:
            path = to_fs_path(uri)
        except Exception:  # noqa: BLE001 - an odd URI: forget everything below
            path = None
        found.append(path or uri)
    return found


def configuration_changed(ls: Any, paths: list[str] | None = None) -> None:
    """The project configuration changed (``paths``: which files, ``None``
    for any): forget the parsed files and the open documents' analyses,
    then renew the diagnostics (refresh a pull client, re-check and publish
    to a push client)."""
    from loopc.lsp import project

    project.forget(paths)
    ls.invalidate()
    ls.config_problems_logged.clear()
    ls.refresh_diagnostics()


def register(server: Any) -> None:
    """Register the ``workspace/didChangeWatchedFiles`` handler on ``server``
    (a LoopcServer)."""

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: Any, params: lsp.DidChangeWatchedFilesParams) -> None:
        try:
            paths = config_paths(params.changes)
            if paths:
                configuration_changed(ls, paths)
        except Exception:  # noqa: BLE001 - a notification never takes the server down
            ls.log_error("configuration change")
