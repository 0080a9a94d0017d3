"""Language-server latency (issue 12): ``python benchmarks/lsp.py`` from the
repository root.

Drives a real ``loopc lsp`` process over stdio with a pygls client and
measures, per request, the wall time from sending to receiving the answer:

* ``re-diagnose`` — one keystroke (a one-character incremental
  ``didChange`` inside a message template, alternately inserted and deleted)
  followed by a pull ``textDocument/diagnostic`` (Neovim 0.11 capabilities):
  the re-check of the new version (incremental, docs/editors.md#incremental-re-check;
  with ``--whole`` the same sessions again with the setting ``incremental: false``)
  plus conversion and transport.  The
  push path (VS Code capabilities, ``debounce`` 0) is measured the same way,
  until the ``publishDiagnostics`` of the new version arrives;
* ``completion`` / ``hover`` — requests at a node id, a port and inside a
  ``{{ }}`` reference of the unchanged document (the analysis is cached per
  version, so this is the feature's own cost);

on a ~100-node plan (200 edits, 200 requests each) and on the near-budget
plan (``--near N`` edits, default 20).  Reports median and p95 in
milliseconds and writes ``benchmarks/lsp_results.json``.  The machine is
shared: compare medians and ratios, expect p95 noise.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate as G  # noqa: E402


def plan_100() -> str:
    """The ~100-node plan (:func:`generate.hundred_node_plan`)."""
    return G.hundred_node_plan()


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def summary(xs: list[float]) -> dict[str, float]:
    return {"n": len(xs), "median_ms": round(statistics.median(xs), 2), "p95_ms": round(pct(xs, 95), 2),
            "max_ms": round(max(xs), 2)}


def caps(name: str) -> lsp.ClientCapabilities:
    from pytest_lsp import client_capabilities

    return client_capabilities(name)


async def session(text: str, spec: str, edits: int, requests: int, incremental: bool = True) -> dict[str, Any]:
    client = LanguageClient("loopc-bench", "1")
    published: dict[int, float] = {}

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: lsp.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            published[params.version] = time.perf_counter()

    @client.feature(lsp.WORKSPACE_CONFIGURATION)
    def on_config(params: lsp.ConfigurationParams) -> list[Any]:
        return [{"debounce": 0, "incremental": incremental} for _ in params.items]

    await client.start_io(sys.executable, "-m", "loopc", "lsp")
    c = caps(spec)
    pull = c.text_document is not None and c.text_document.diagnostic is not None
    await client.initialize_async(lsp.InitializeParams(capabilities=c, process_id=None,
                                                       initialization_options={"debounce": 0,
                                                                               "incremental": incremental}))
    client.initialized(lsp.InitializedParams())
    uri = "file:///bench/plan.yaml"
    doc = lsp.TextDocumentIdentifier(uri=uri)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)))
    if pull:
        await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=doc))
    await asyncio.sleep(0.5)

    # one keystroke inside the first message template, inserted then deleted
    i = text.index("text: ") + len("text: ") + 5
    line = text.count("\n", 0, i)
    col = i - (text.rfind("\n", 0, i) + 1)  # ASCII prefix: code points == units
    at = lsp.Position(line=line, character=col)
    diag: list[float] = []
    version = 1
    for k in range(edits):
        version += 1
        if k % 2 == 0:
            change = lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text="x")
        else:
            end = lsp.Position(line=line, character=col + 1)
            change = lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=end), text="")
        t0 = time.perf_counter()
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[change]))
        if pull:
            await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=doc))
            diag.append((time.perf_counter() - t0) * 1000)
        else:
            while version not in published:
                await asyncio.sleep(0.0005)
            diag.append((published[version] - t0) * 1000)
    # requests on the (now unchanged) document
    if edits % 2:
        version += 1
        end = lsp.Position(line=line, character=col + 1)
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=end), text="")]))
    spots = []
    for needle, delta in (("to: {node: ", len("to: {node: ") + 1), ("port: ", len("port: ") + 1),
                          ("{{ input.", len("{{ input.") + 1)):
        j = text.index(needle) + delta
        spots.append(lsp.Position(line=text.count("\n", 0, j), character=j - (text.rfind("\n", 0, j) + 1)))
    await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=spots[0]))
    comp: list[float] = []
    hov: list[float] = []
    for k in range(requests):
        p = spots[k % len(spots)]
        t0 = time.perf_counter()
        await client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=p))
        comp.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=p))
        hov.append((time.perf_counter() - t0) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    out: dict[str, Any] = {"diagnostics": "pull" if pull else "push", "re_diagnose": summary(diag)}
    if requests:
        out["completion"] = summary(comp)
        out["hover"] = summary(hov)
    return out


def in_process(text: str, n: int) -> dict[str, float]:
    """The check alone (``check_source``) on the same edits, for the ratio."""
    from loopc import check_source

    i = text.index("text: ") + len("text: ") + 5
    xs = []
    check_source(text)
    for k in range(n):
        t = text[:i] + "x" + text[i:] if k % 2 == 0 else text
        t0 = time.perf_counter()
        check_source(t)
        xs.append((time.perf_counter() - t0) * 1000)
    return summary(xs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--near", type=int, default=20)
    ap.add_argument("--json", default=str(HERE / "lsp_results.json"))
    ap.add_argument("--whole", action="store_true",
                    help="also run the Neovim sessions with the incremental re-check off, side by side")
    args = ap.parse_args()
    p100 = plan_100()
    near = G.near_budget_plan()
    results: dict[str, Any] = {"plan_100": G.stats(p100), "near_budget": G.stats(near)}
    results["plan_100_check_source"] = in_process(p100, args.edits)
    results["plan_100_neovim"] = asyncio.run(session(p100, "neovim@v0.11.0", args.edits, args.requests))
    if args.whole:  # the same session with the incremental re-check off (setting incremental: false)
        results["plan_100_neovim_whole"] = asyncio.run(
            session(p100, "neovim@v0.11.0", args.edits, 0, incremental=False))
    results["plan_100_vscode"] = asyncio.run(session(p100, "visual-studio-code", args.edits, 0))
    if args.near:
        results["near_budget_check_source"] = in_process(near, args.near)
        results["near_budget_neovim"] = asyncio.run(session(near, "neovim@v0.11.0", args.near, 30))
        if args.whole:
            results["near_budget_neovim_whole"] = asyncio.run(
                session(near, "neovim@v0.11.0", args.near, 0, incremental=False))
    results["notes"] = ("wall-clock ms, client send to answer, one shared 2-core machine; "
                        "re_diagnose includes the full check of the new version")
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    for k, v in results.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
