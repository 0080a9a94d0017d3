"""Language-server responsiveness (issue 25 item 3): ``python
benchmarks/lsp_concurrency.py [--src DIR] [--label NAME]`` from the
repository root.

Drives a real ``loopc lsp`` process (``--src``: the ``src`` directory of
another checkout, e.g. a ``git worktree`` of the commit before, put first on
``PYTHONPATH`` for a side-by-side run) with a pygls client and measures wall
time per request:

* ``hover_while_big_check`` — a hover on a small plan (already checked)
  sent while the check of the 508-node near-budget plan after an edit is
  in flight: 50 ms after the edit and the pull of the big plan (Neovim 0.11
  capabilities), 200 ms after the edit alone for push (VS Code
  capabilities: past the 150 ms debounce, so the check has started); the
  big plan's diagnostics are awaited before the next round;
* ``edit_to_diagnostics`` — one keystroke in the 98-node plan to its new
  diagnostics: pull (``didChange`` + ``textDocument/diagnostic``) and push
  (``didChange`` until ``publishDiagnostics`` of the new version) with the
  default settings (no ``debounce`` set: what a user gets);
* ``memory_100k_edits`` — resident memory of the server before and after
  100,000 one-character ``didChange`` notifications (pull client, so text
  sync only), from ``/proc/<pid>/status`` (Linux); ``--edits N`` to change
  the count, 0 to skip.

Prints median and p95 in milliseconds and writes
``benchmarks/lsp_concurrency_<label>.json``.  The machine is shared:
compare side by side runs, expect p95 noise.

``--before SRC`` (the ``src`` directory of the commit to compare with)
runs both servers in one invocation, interleaved: the rounds and edits are
split into ``--blocks`` blocks, and each block runs both servers in turn
(current first in even blocks, the other first in odd ones), so drifting
machine load hits both alike.  The samples of all blocks are pooled per
server; the output adds ``ratio`` (current / before) for each median and
p95, and prints a table.  The memory measurement is skipped in this mode.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
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


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def summary(xs: list[float]) -> dict[str, float]:
    return {"n": len(xs), "median_ms": round(statistics.median(xs), 1), "p95_ms": round(pct(xs, 95), 1),
            "max_ms": round(max(xs), 1)}


class Session:
    def __init__(self, src: str | None, spec: str) -> None:
        from pytest_lsp import client_capabilities

        self.src = src
        self.caps = client_capabilities(spec)
        self.pull = self.caps.text_document is not None and self.caps.text_document.diagnostic is not None
        self.client = LanguageClient("loopc-bench", "1")
        self.published: dict[tuple[str, int], float] = {}
        self.versions: dict[str, int] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: lsp.PublishDiagnosticsParams) -> None:
            if params.version is not None:
                self.published[(params.uri, params.version)] = time.perf_counter()

        @self.client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: lsp.RegistrationParams) -> None:
            return None

        @self.client.feature(lsp.WORKSPACE_CONFIGURATION)
        def on_config(params: lsp.ConfigurationParams) -> list[Any]:
            return [{} for _ in params.items]  # default settings

    async def start(self) -> None:
        env = dict(os.environ)
        if self.src:
            env["PYTHONPATH"] = self.src + os.pathsep + env.get("PYTHONPATH", "")
        await self.client.start_io(sys.executable, "-m", "loopc", "lsp", env=env)
        self.pid = self.client._server.pid  # type: ignore[attr-defined]
        await self.client.initialize_async(lsp.InitializeParams(capabilities=self.caps, process_id=os.getpid()))
        self.client.initialized(lsp.InitializedParams())

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    def open(self, uri: str, text: str) -> None:
        self.versions[uri] = 1
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)))

    def change(self, uri: str, change: Any) -> int:
        self.versions[uri] += 1
        v = self.versions[uri]
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=v), content_changes=[change]))
        return v

    async def diagnostics(self, uri: str, version: int) -> None:
        if self.pull:
            await self.client.text_document_diagnostic_async(
                lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
            return
        while (uri, version) not in self.published:
            await asyncio.sleep(0.0005)


def keystroke(text: str, k: int) -> Any:
    """The ``k``-th edit: one character inserted into the first message
    template, then deleted (ASCII prefix: code points are units)."""
    i = text.index("text: ") + len("text: ") + 5
    line = text.count("\n", 0, i)
    col = i - (text.rfind("\n", 0, i) + 1)
    at = lsp.Position(line=line, character=col)
    if k % 2 == 0:
        return lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text="x")
    end = lsp.Position(line=line, character=col + 1)
    return lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=end), text="")


async def hover_while_big_check(src: str | None, spec: str, rounds: int) -> dict[str, Any]:
    s = Session(src, spec)
    await s.start()
    small, big = "file:///bench/small.yaml", "file:///bench/big.yaml"
    small_text = G.typical_plan()
    big_text = G.near_budget_plan()
    s.open(small, small_text)
    s.open(big, big_text)
    await s.diagnostics(small, 1)
    await s.diagnostics(big, 1)
    j = small_text.index("to: {node: ") + len("to: {node: ") + 1
    at = lsp.Position(line=small_text.count("\n", 0, j), character=j - (small_text.rfind("\n", 0, j) + 1))
    hover = lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=small), position=at)
    await s.client.text_document_hover_async(hover)
    lat: list[float] = []
    checks: list[float] = []
    for k in range(rounds):
        t_edit = time.perf_counter()
        v = s.change(big, keystroke(big_text, k))
        pending = asyncio.ensure_future(s.diagnostics(big, v))
        await asyncio.sleep(0.05 if s.pull else 0.2)
        t0 = time.perf_counter()
        await s.client.text_document_hover_async(hover)
        lat.append((time.perf_counter() - t0) * 1000)
        await pending
        checks.append((time.perf_counter() - t_edit) * 1000)
    await s.stop()
    return {"diagnostics": "pull" if s.pull else "push", "hover_small_ms": summary(lat),
            "big_edit_to_diagnostics_ms": summary(checks),
            "_samples": {"hover_small_ms": lat, "big_edit_to_diagnostics_ms": checks}}


async def edit_to_diagnostics(src: str | None, spec: str, edits: int) -> dict[str, Any]:
    s = Session(src, spec)
    await s.start()
    uri = "file:///bench/plan100.yaml"
    text = G.hundred_node_plan()
    s.open(uri, text)
    await s.diagnostics(uri, 1)
    await asyncio.sleep(0.3)
    lat: list[float] = []
    for k in range(edits):
        t0 = time.perf_counter()
        v = s.change(uri, keystroke(text, k))
        await s.diagnostics(uri, v)
        end = s.published.get((uri, v), time.perf_counter()) if not s.pull else time.perf_counter()
        lat.append((end - t0) * 1000)
        await asyncio.sleep(0.25)  # a pause between keystrokes: each edit is diagnosed on its own
    await s.stop()
    return {"diagnostics": "pull" if s.pull else "push", "edit_to_diagnostics_ms": summary(lat),
            "_samples": {"edit_to_diagnostics_ms": lat}}


def _public(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if not k.startswith("_")}


def interleaved(current: str | None, before: str, blocks: int, rounds: int, edits: int) -> dict[str, Any]:
    """Both servers (``current`` and ``before``: ``src`` directories,
    ``None`` for this checkout's), interleaved block by block (see the module
    docstring); samples pooled per server.  Returns
    ``{measure: {"current": summary, "before": summary, "ratio": {...}}}``
    with the measures ``<metric>_<client>`` in milliseconds."""
    servers = {"current": current, "before": before}
    pooled: dict[str, dict[str, list[float]]] = {}
    for b in range(blocks):
        order = ["current", "before"] if b % 2 == 0 else ["before", "current"]
        n_rounds = rounds // blocks + (1 if b < rounds % blocks else 0)
        n_edits = edits // blocks + (1 if b < edits % blocks else 0)
        for name, spec in (("neovim_pull", "neovim@v0.11.0"), ("vscode_push", "visual-studio-code")):
            for label in order:
                runs = []
                if n_rounds:
                    runs.append(asyncio.run(hover_while_big_check(servers[label], spec, n_rounds)))
                if n_edits:
                    runs.append(asyncio.run(edit_to_diagnostics(servers[label], spec, n_edits)))
                for r in runs:
                    for metric, xs in r["_samples"].items():
                        pooled.setdefault(f"{metric}_{name}", {}).setdefault(label, []).extend(xs)
                print(f"block {b + 1}/{blocks} {name} {label} done", flush=True)
    out: dict[str, Any] = {}
    for measure, by in pooled.items():
        cur, bef = summary(by["current"]), summary(by["before"])
        out[measure] = {"current": cur, "before": bef, "ratio": {
            k: round(cur[k] / bef[k], 2) if bef[k] else None for k in ("median_ms", "p95_ms")}}
    return out


def table(result: dict[str, Any]) -> str:
    """A Markdown table of :func:`interleaved`'s result."""
    rows = ["| measure | n | current median / p95 ms | before median / p95 ms | ratio median / p95 |",
            "|---|---|---|---|---|"]
    for measure, r in result.items():
        c, b, q = r["current"], r["before"], r["ratio"]
        rows.append(f"| {measure} | {c['n']} / {b['n']} | {c['median_ms']} / {c['p95_ms']} | "
                    f"{b['median_ms']} / {b['p95_ms']} | {q['median_ms']} / {q['p95_ms']} |")
    return "\n".join(rows)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


async def memory(src: str | None, edits: int) -> dict[str, Any]:
    s = Session(src, "neovim@v0.11.0")
    await s.start()
    uri = "file:///bench/mem.yaml"
    text = G.typical_plan()
    s.open(uri, text)
    await s.diagnostics(uri, 1)
    await asyncio.sleep(0.5)
    before = rss_kb(s.pid)
    samples = []
    for k in range(edits):
        s.change(uri, keystroke(text, k))
        if k % 2000 == 1999:
            await s.client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="loopc.debugInfo"))
            samples.append(rss_kb(s.pid))
    await s.client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="loopc.debugInfo"))
    after = rss_kb(s.pid)
    await s.stop()
    return {"edits": edits, "rss_before_kb": before, "rss_after_kb": after,
            "rss_at_10k_kb": samples[4] if len(samples) > 4 else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=None, help="src directory of the checkout whose server to run")
    ap.add_argument("--label", default="current")
    ap.add_argument("--rounds", type=int, default=30, help="hovers while the big plan is checked, per client")
    ap.add_argument("--edits", type=int, default=60, help="keystrokes on the 98-node plan, per client")
    ap.add_argument("--memory-edits", type=int, default=100_000)
    ap.add_argument("--before", default=None,
                    help="src directory of the commit to compare with, interleaved in this run")
    ap.add_argument("--blocks", type=int, default=3, help="interleaved blocks with --before")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"label": args.label, "src": args.src}
    if args.before:
        out["before"] = args.before
        out["side_by_side"] = interleaved(args.src, args.before, max(1, args.blocks), args.rounds, args.edits)
        print(table(out["side_by_side"]), flush=True)
        (HERE / f"lsp_concurrency_{args.label}.json").write_text(json.dumps(out, indent=2) + "\n",
                                                                encoding="utf-8")
        return 0
    for name, spec in (("neovim_pull", "neovim@v0.11.0"), ("vscode_push", "visual-studio-code")):
        out[f"hover_while_big_check_{name}"] = _public(asyncio.run(hover_while_big_check(args.src, spec,
                                                                                         args.rounds)))
        print(name, json.dumps(out[f"hover_while_big_check_{name}"]), flush=True)
        out[f"edit_to_diagnostics_{name}"] = _public(asyncio.run(edit_to_diagnostics(args.src, spec, args.edits)))
        print(name, json.dumps(out[f"edit_to_diagnostics_{name}"]), flush=True)
    if args.memory_edits:
        out["memory"] = asyncio.run(memory(args.src, args.memory_edits))
        print("memory", json.dumps(out["memory"]), flush=True)
    (HERE / f"lsp_concurrency_{args.label}.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
