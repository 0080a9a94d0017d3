"""Helpers for the language-server tests (tests/test_lsp_*.py): the two
bundled client profiles, document helpers and an independent position
conversion used to check the server's."""
from __future__ import annotations

import asyncio
import sys
from typing import Any, Callable

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "loopc", "lsp"])

#: (profile name, pytest-lsp capability spec, expected encoding, pull?)
VSCODE = ("vscode", "visual-studio-code", "utf-16", False)
NEOVIM = ("neovim", "neovim@v0.11.0", "utf-8", True)
PROFILES = [VSCODE, NEOVIM]

#: ``pytestmark`` of an end-to-end module: one event loop per module (the
#: ``client`` fixture's server lives as long), protocol-spec violations fail
MARKS = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

from conftest import HEADER as H

GOOD = H + """input:
  topic: {type: string, required: true}
output: {}
entry: ask
nodes:
  - id: ask
    type: send_message
    input:
      topic: {type: string, required: true}
    sendMessage:
      target: "#release"
      text: "Review {{ input.topic }}"
      completion: sent
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - id: e_done
    from: {node: ask, port: completed}
    to: {node: done}
"""


async def start(client: LanguageClient, spec: str, *, debounce: int = 10) -> lsp.InitializeResult:
    client.set_configuration({"loopc": {"debounce": debounce}})
    if lsp.CLIENT_REGISTER_CAPABILITY not in client.protocol.fm.features:
        # a client that can register dynamically answers the server's
        # watch of the configuration files (docs/editors.md#live-configuration)
        client.feature(lsp.CLIENT_REGISTER_CAPABILITY)(lambda ls, params: None)
    params = lsp.InitializeParams(capabilities=client_capabilities(spec),
                                  root_uri="file:///work/project")
    return await client.initialize_session(params)


def client_fixture() -> Any:
    """A new ``client`` fixture for an end-to-end module (``client =
    client_fixture()``): one real ``loopc lsp`` process per module and
    profile of :data:`PROFILES`, initialized with that profile's
    capabilities; ``client.profile`` is the profile tuple and
    ``client.init_result`` the server's InitializeResult."""

    @pytest_lsp.fixture(config=SERVER, scope="module", params=PROFILES, ids=[p[0] for p in PROFILES])
    async def client(lsp_client: LanguageClient, request):
        result = await start(lsp_client, request.param[1])
        lsp_client.profile = request.param  # type: ignore[attr-defined]
        lsp_client.init_result = result  # type: ignore[attr-defined]
        yield
        await lsp_client.shutdown_session()

    return client


_counter = [0]


def new_uri(name: str = "plan") -> str:
    _counter[0] += 1
    return f"file:///work/project/{name}_{_counter[0]}.yaml"


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=version, text=text)))


def change_doc(client: LanguageClient, uri: str, version: int, rng: lsp.Range | None, text: str) -> None:
    if rng is None:
        change: Any = lsp.TextDocumentContentChangeWholeDocument(text=text)
    else:
        change = lsp.TextDocumentContentChangePartial(range=rng, text=text)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[change]))


async def diagnostics(client: LanguageClient, uri: str, pull: bool, *,
                      until: Callable[[list[lsp.Diagnostic]], bool] | None = None,
                      timeout: float = 10.0) -> list[lsp.Diagnostic]:
    """Current diagnostics of ``uri`` the way the client gets them; with
    ``until``, wait (push) or re-pull until the condition holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if pull:
            rep = await client.text_document_diagnostic_async(
                lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
            got = list(rep.items)
        else:
            got = list(client.diagnostics.get(uri, [])) if uri in client.diagnostics else None
        if got is not None and (until is None or until(got)):
            return got
        if loop.time() > deadline:
            raise AssertionError(f"diagnostics of {uri} never satisfied the condition: {got}")
        await asyncio.sleep(0.02)


def rename_edits(client: LanguageClient, edit: lsp.WorkspaceEdit, uri: str, version: int | None = None) -> list:
    """The text edits of a rename answer for ``uri``: ``documentChanges``
    (with the document's ``version`` when given) for a client that supports
    them (the VS Code profile), ``changes`` for one that does not."""
    if client.profile[0] == "vscode":  # type: ignore[attr-defined]
        assert edit.changes is None and edit.document_changes is not None
        (dc,) = edit.document_changes
        assert isinstance(dc, lsp.TextDocumentEdit) and dc.text_document.uri == uri
        if version is not None:
            assert dc.text_document.version == version
        return list(dc.edits)
    assert edit.document_changes is None and edit.changes is not None
    return list(edit.changes[uri])


def units(s: str, encoding: str) -> int:
    """Independent column arithmetic (not the server's): code units of ``s``."""
    if encoding == "utf-8":
        return len(s.encode("utf-8"))
    if encoding == "utf-16":
        return len(s.encode("utf-16-le")) // 2
    return len(s)


def pos_of(text: str, needle: str, encoding: str, *, nth: int = 0, delta: int = 0) -> lsp.Position:
    """Protocol position of the ``nth`` occurrence of ``needle`` (+ ``delta``
    code points)."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    i += delta
    line = text.count("\n", 0, i)
    start = text.rfind("\n", 0, i) + 1
    return lsp.Position(line=line, character=units(text[start:i], encoding))


def expected_range(text: str, span: Any, encoding: str) -> lsp.Range:
    """The range of a loopc span (1-based lines, code-point columns of the
    BOM-less text) in the editor's text, by independent arithmetic."""
    bom = 1 if text.startswith("\ufeff") else 0
    lines = text.replace("\r\n", "\n").split("\n")

    def p(line1: int, col1: int) -> lsp.Position:
        lt = lines[line1 - 1] if line1 - 1 < len(lines) else ""
        col = col1 - 1 + (bom if line1 == 1 else 0)
        return lsp.Position(line=line1 - 1, character=units(lt[:col], encoding))

    return lsp.Range(start=p(span.line, span.column), end=p(span.end_line, span.end_column))


class RawSession:
    """A ``loopc lsp`` process driven byte by byte (framing tests, the fuzz
    target): :meth:`send` writes bytes, :meth:`recv` reads framed messages
    as they arrive, with a deadline instead of a hang.  ``extra`` are more
    ``loopc lsp`` arguments."""

    def __init__(self, *extra: str) -> None:
        import subprocess
        import threading

        self.proc = subprocess.Popen([sys.executable, "-m", "loopc", "lsp", *extra], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._buf = b""
        self._got: list[dict] = []
        self._lock = threading.Condition()
        self._stderr = b""
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump(self) -> None:
        import json
        import re

        out = self.proc.stdout
        assert out is not None
        while True:
            chunk = out.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                break
            with self._lock:
                self._buf += chunk
                while True:
                    m = re.match(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n", self._buf)
                    if m is None or len(self._buf) < m.end() + int(m.group(1)):
                        break
                    n = int(m.group(1))
                    self._got.append(json.loads(self._buf[m.end(): m.end() + n]))
                    self._buf = self._buf[m.end() + n:]
                self._lock.notify_all()
        with self._lock:
            self._lock.notify_all()

    def _pump_err(self) -> None:
        err = self.proc.stderr
        assert err is not None
        while True:
            chunk = err.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                break
            self._stderr += chunk

    @property
    def stderr(self) -> bytes:
        return self._stderr

    def send(self, data: bytes | dict) -> None:
        import json

        if isinstance(data, dict):
            body = json.dumps(data).encode()
            data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def messages(self) -> list[dict]:
        with self._lock:
            return list(self._got)

    def wait_for(self, pred: Callable[[dict], bool], timeout: float = 60.0) -> dict:
        """The first message received that satisfies ``pred`` (waits)."""
        import time

        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for m in self._got:
                    if pred(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._buf):
                    raise AssertionError(f"no such message within {timeout} s; got {self._got[-5:]}; "
                                         f"stderr {self._stderr[-500:]!r}")
                self._lock.wait(min(left, 0.5))

    def reply(self, msg_id: Any, timeout: float = 60.0) -> dict:
        return self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def close(self, timeout: float = 30.0) -> int:
        """shutdown + exit (when still running); the exit status."""
        if self.proc.poll() is None:
            try:
                self.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
                self.reply("bye", timeout)
                self.send({"jsonrpc": "2.0", "method": "exit"})
            except (OSError, AssertionError):
                self.proc.kill()
        try:
            return self.proc.wait(timeout)
        finally:
            for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    f.close()  # type: ignore[union-attr]
                except OSError:
                    pass
