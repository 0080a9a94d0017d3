"""Fuzz target for the language server (issue 21): malformed and hostile
protocol input — wrong or missing framing, garbage between messages,
invalid UTF-8, JSON that is no message, params that do not fit, odd ids,
positions past the end, edits around line separators, cancels, unknown
methods, responses nobody asked for — thrown at one real ``loopc lsp``
process.  After every input a probe request must be answered (no hang, the
framing is back in sync), every message the server writes must be valid
JSON-RPC 2.0, and at the end standard error holds no traceback and
``shutdown``/``exit`` ends the process with status 0.

The corpus is ``tests/data/lsp_fuzz/*.bin`` (raw bytes, replayed first and
spliced into generated inputs); add the bytes of any failure found there.
Bounded: :data:`BUDGET_SECONDS` (default 15; ``LOOPC_LSP_FUZZ_SECONDS``
for a longer local run) for the generated part."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_support import RawSession

CORPUS = sorted((Path(__file__).parent / "data" / "lsp_fuzz").glob("*.bin"))
BUDGET_SECONDS = float(os.environ.get("LOOPC_LSP_FUZZ_SECONDS", "15"))
PROBE_TIMEOUT = 30.0

URIS = ["file:///fuzz/a.yaml", "file:///fuzz/b.yaml", "untitled:Untitled-1", "file:///fuzz/%E6%97%A5.yaml"]
PLAN = ("apiVersion: loop.plan/v1\nkind: PlanVersion\ninput: {x: {type: string}}\noutput: {}\nentry: s\nnodes:\n"
        "  - id: s\n    type: switch\n    switch:\n      mode: first_match\n"
        "      cases:\n        - {port: a, when: \"input.x == 'y' && !(input.x != 'z')\"}\n      default: b\n"
        "  - id: done\n    type: end\n    end: {status: succeeded}\nedges:\n"
        "  - {id: e1, from: {node: s, port: a}, to: {node: done}}\n"
        "  - {id: e2, from: {node: s, port: b}, to: {node: done}}\n")
METHODS = [
    "textDocument/hover", "textDocument/completion", "textDocument/definition", "textDocument/references",
    "textDocument/rename", "textDocument/prepareRename", "textDocument/documentSymbol",
    "textDocument/semanticTokens/full", "textDocument/codeAction", "textDocument/codeLens",
    "textDocument/inlayHint", "textDocument/diagnostic", "textDocument/prepareCallHierarchy",
    "callHierarchy/incomingCalls", "workspace/executeCommand", "workspace/didChangeConfiguration",
    "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "textDocument/didSave",
    "$/cancelRequest", "$/setTrace", "$/progress", "loopc/unknown", "initialized",
]

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63), st.floats(allow_nan=False),
                      st.text(max_size=12))
json_value = st.recursive(json_leaf, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=8), kids, max_size=4)), max_leaves=12)
number = st.one_of(st.integers(-3, 40), st.integers(-2**40, 2**40), st.floats(allow_nan=False, allow_infinity=False))
position = st.fixed_dictionaries({"line": number, "character": number})
text = st.one_of(st.just(PLAN), st.text(alphabet="ab: -{}[]\n\r\t'\"\u2028\u2029\u0085日😀", max_size=60),
                 st.builds(lambda a, b: PLAN[:a] + b + PLAN[a:], st.integers(0, len(PLAN)),
                           st.text(alphabet="x:{}\n\u2028", max_size=5)))


@st.composite
def params(draw: Any, method: str) -> Any:
    if draw(st.integers(0, 5)) == 0:
        return draw(json_value)  # anything at all
    uri = draw(st.sampled_from(URIS))
    doc = {"uri": uri}
    if method == "textDocument/didOpen":
        return {"textDocument": {"uri": uri, "languageId": "yaml", "version": draw(number), "text": draw(text)}}
    if method == "textDocument/didChange":
        change: dict[str, Any] = {"text": draw(st.text(alphabet="xy:\n\r\u2028", max_size=6))}
        if draw(st.booleans()):
            change["range"] = {"start": draw(position), "end": draw(position)}
        return {"textDocument": {"uri": uri, "version": draw(number)}, "contentChanges": [change]}
    if method == "$/cancelRequest":
        return {"id": draw(st.one_of(st.integers(), st.text(max_size=5), json_value))}
    if method == "workspace/executeCommand":
        return {"command": draw(st.sampled_from(["loopc.debugInfo", "nope"])), "arguments": draw(json_value)}
    if method == "workspace/didChangeConfiguration":
        return {"settings": draw(json_value)}
    if method == "textDocument/rename":
        return {"textDocument": doc, "position": draw(position), "newName": draw(st.text(max_size=10))}
    if method in ("textDocument/codeAction", "textDocument/inlayHint"):
        return {"textDocument": doc, "range": {"start": draw(position), "end": draw(position)},
                "context": {"diagnostics": []}}
    if method == "callHierarchy/incomingCalls":
        return {"item": {"name": "s", "kind": 12, "uri": uri, "range": {"start": draw(position), "end": draw(position)},
                         "selectionRange": {"start": draw(position), "end": draw(position)}, "data": draw(json_value)}}
    return {"textDocument": doc, "position": draw(position), "context": {"includeDeclaration": draw(st.booleans())}}


@st.composite
def message(draw: Any) -> bytes:
    """One framed (or deliberately mis-framed) message."""
    method = draw(st.sampled_from(METHODS))
    obj: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0"])), "method": method}
    if draw(st.integers(0, 2)):
        obj["id"] = draw(st.one_of(st.integers(0, 10**6), st.text(max_size=6), st.none(), st.booleans(),
                                   st.floats(allow_nan=False)))
    if draw(st.integers(0, 4)):
        obj["params"] = draw(params(method))
    body = json.dumps(obj).encode()
    mangle = draw(st.integers(0, 9))
    if mangle == 1:  # invalid UTF-8 or cut JSON
        body = body[: draw(st.integers(0, len(body)))] + draw(st.sampled_from([b"\xff", b"\xc3", b"", b"}"]))
    delta = draw(st.integers(-12, 12)) if mangle == 2 else 0
    head = b"Content-Length: %d\r\n" % max(0, len(body) + delta)
    if mangle == 3:
        head += b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    if mangle == 4:
        return head + body  # no blank line
    if mangle == 5:
        return draw(st.binary(max_size=24)) + head + b"\r\n" + body
    if mangle == 6:
        return head.replace(b"\r\n", b"\n") + b"\n" + body
    return head + b"\r\n" + body


def inputs() -> Any:
    seeds = [p.read_bytes() for p in CORPUS]
    piece = st.one_of(message(), st.sampled_from(seeds)) if seeds else message()
    return st.lists(piece, min_size=1, max_size=5).map(b"".join)


def check_messages(msgs: list[dict]) -> None:
    """Every message is JSON-RPC 2.0: a response (an ``id``, exactly one of
    ``result``/``error``, an error with an integer code and a string
    message) or a notification/request of the server (a ``method``)."""
    for m in msgs:
        assert isinstance(m, dict) and m.get("jsonrpc") == "2.0", m
        if "method" in m:
            assert isinstance(m["method"], str)
            continue
        assert "id" in m and (("result" in m) != ("error" in m)), m
        if "error" in m:
            e = m["error"]
            assert isinstance(e.get("code"), int) and isinstance(e.get("message"), str), m


class Target:
    """One server process for the whole module; :meth:`feed` writes an
    input and waits for the answer to a probe that follows it."""

    def __init__(self) -> None:
        self.session = RawSession()
        self.n = 0
        self.session.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "capabilities": {"textDocument": {"diagnostic": {}}}, "initializationOptions": {"debounce": 0}}})
        self.session.reply("init")
        self.session.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def feed(self, data: bytes) -> None:
        self.n += 1
        probe = f"probe-{self.n}"
        self.session.send(data)
        self.session.send({"jsonrpc": "2.0", "id": probe, "method": "workspace/executeCommand",
                           "params": {"command": "loopc.debugInfo"}})
        reply = self.session.reply(probe, PROBE_TIMEOUT)
        assert "result" in reply and reply["result"]["version"], (data[:300], reply)
        assert b"Traceback" not in self.session.stderr, (data[:300], self.session.stderr.decode(errors="replace"))

    def finish(self) -> None:
        if os.environ.get("LOOPC_LSP_FUZZ_STATS"):
            import collections
            kinds = collections.Counter(m.get("method") or ("error %s" % m["error"]["code"] if "error" in m else "result")
                                        for m in self.session.messages())
            print(f"\nfuzz: {self.n} inputs; server messages {dict(kinds)}")
            print(self.session.stderr.decode(errors="replace")[-2000:])
        check_messages(self.session.messages())
        assert self.session.close() == 0
        err = self.session.stderr.decode(errors="replace")
        assert "Traceback" not in err, err[-3000:]


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    t = Target()
    yield t
    t.finish()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus(target: Target, seed: Path) -> None:
    target.feed(seed.read_bytes())


_start: list[float] = []


@pytest.mark.timeout(300)
@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@pytest.mark.slow
@given(data=inputs())
def test_generated(target: Target, data: bytes) -> None:
    if not _start:
        _start.append(time.monotonic())
    if time.monotonic() - _start[0] > BUDGET_SECONDS:
        return  # over the budget: the remaining examples are not run
    target.feed(data)


def test_corpus_exists() -> None:
    assert len(CORPUS) >= 15
