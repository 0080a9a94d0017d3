"""Language server features end to end over stdio (issue 12): completion,
hover, definition, references, rename, document symbols, code actions,
settings and the debugInfo command, for VS Code (UTF-16, push) and Neovim
0.11 (UTF-8, pull) capabilities; protocol-spec violations fail the test."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from loopc import check_source
from lsp_support import (
    MARKS, change_doc, client_fixture, diagnostics, new_uri, open_doc, pos_of, rename_edits,
)

pytestmark = MARKS
client = client_fixture()

#: a plan with a fork, a join, a loop and references of every kind; the CJK
#: and emoji in the text put multi-unit characters before later positions
PLAN = """apiVersion: loop.plan/v1
kind: PlanVersion
input:
  topic: {type: string, required: true}
  room: {type: scope, required: true}
  reviewer: {type: agent, required: true}
output:
  verdict: {type: string, required: true}
entry: ask
nodes:
  - id: ask
    type: send_message
    input:
      topic: {type: string, required: true}
      room: {type: scope, required: true}
      reviewer: {type: agent, required: true}
    sendMessage:
      scope: {ref: input.room}
      text: "レビュー 😀 {{ input.topic }}"
      completion: callback
      responder: {ref: input.reviewer}
      callbackOutput:
        verdict: {type: enum, values: [approve, reject], required: true}
  - id: split
    type: fork
    input:
      verdict: {type: string, required: true}
    fork: {branches: [legal, security]}
  - id: legal_ok
    type: set_variable
    setVariable: {assign: {}}
  - id: sec_ok
    type: set_variable
    setVariable: {assign: {}}
  - id: gather
    type: join
    join:
      forkId: split
      mode: all
      result: {verdict: {type: string, required: true}}
      merge: {verdict: {ref: run.input.topic}}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - id: e_split
    from: {node: ask, port: completed}
    to: {node: split}
    bind: {verdict: {ref: output.verdict}}
  - id: e_legal
    from: {node: split, port: legal}
    to: {node: legal_ok}
  - id: e_sec
    from: {node: split, port: security}
    to: {node: sec_ok}
  - id: e_legal_join
    from: {node: legal_ok, port: completed}
    to: {node: gather}
  - id: e_sec_join
    from: {node: sec_ok, port: completed}
    to: {node: gather}
  - id: e_done
    from: {node: gather, port: completed}
    to: {node: done}
    bind: {verdict: {ref: output.verdict}}
"""


def enc(client: LanguageClient) -> str:
    return client.profile[2]  # type: ignore[attr-defined]


def pull(client: LanguageClient) -> bool:
    return client.profile[3]  # type: ignore[attr-defined]


def doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def test_plan_checks_clean() -> None:
    assert check_source(PLAN).diagnostics == ()


async def opened(client: LanguageClient, text: str = PLAN) -> str:
    uri = new_uri()
    open_doc(client, uri, text)
    await diagnostics(client, uri, pull(client), until=lambda d: True)
    return uri


def text_at(text: str, rng: lsp.Range, encoding: str) -> str:
    line = text.split("\n")[rng.start.line]
    b = line.encode("utf-8" if encoding == "utf-8" else "utf-16-le")
    w = 1 if encoding == "utf-8" else 2
    return b[rng.start.character * w: rng.end.character * w].decode("utf-8" if encoding == "utf-8" else "utf-16-le")


async def test_definition_of_nodes_ports_and_fields(client: LanguageClient) -> None:
    e = enc(client)
    uri = await opened(client)
    cases = [
        ("to: {node: split}", len("to: {node: "), "      - id: split", "split"),
        ("forkId: split", len("forkId: "), None, "split"),
        ("port: legal}", len("port: "), "[legal,", "legal"),
        ("{{ input.topic }}", len("{{ input."), "      topic: {type: string, required: true}\n      room", "topic"),
        ("{ref: output.verdict}", len("{ref: output."), "        verdict: {type: enum", "verdict"),
        ("run.input.topic", len("run.input."), "  topic: {type", "topic"),
    ]
    for needle, delta, _, name in cases:
        res = await client.text_document_definition_async(lsp.DefinitionParams(
            text_document=doc(uri), position=pos_of(PLAN, needle, e, delta=delta)))
        assert res, needle
        loc = res[0] if isinstance(res, list) else res
        assert loc.uri == uri
        assert text_at(PLAN, loc.range, e) == name, (needle, loc)
    # the definition of `topic` read in the template is the node's input field (line 12)
    res = await client.text_document_definition_async(lsp.DefinitionParams(
        text_document=doc(uri), position=pos_of(PLAN, "{{ input.topic }}", e, delta=len("{{ input."))))
    assert res[0].range.start.line == PLAN[: PLAN.index("      topic: {type: string")].count("\n")
    # a fixed port leads to its node
    res = await client.text_document_definition_async(lsp.DefinitionParams(
        text_document=doc(uri), position=pos_of(PLAN, "port: completed}", e, delta=len("port: "))))
    assert res[0].range.start.line == PLAN[: PLAN.index("  - id: ask")].count("\n")


async def test_references_of_a_node_id(client: LanguageClient) -> None:
    e = enc(client)
    uri = await opened(client)
    refs = await client.text_document_references_async(lsp.ReferenceParams(
        text_document=doc(uri), position=pos_of(PLAN, "id: split", e, delta=4),
        context=lsp.ReferenceContext(include_declaration=True)))
    assert len(refs) == 5  # id, forkId, to e_split, from e_legal, from e_sec
    assert all(text_at(PLAN, r.range, e) == "split" for r in refs)


async def test_rename_node_and_branch_recheck_clean(client: LanguageClient) -> None:
    e = enc(client)
    uri = await opened(client)
    prep = await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(
        text_document=doc(uri), position=pos_of(PLAN, "id: split", e, delta=4)))
    assert prep is not None
    # a fixed port cannot be renamed
    fixed = await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(
        text_document=doc(uri), position=pos_of(PLAN, "port: completed}", e, delta=len("port: "))))
    assert fixed is None
    text = PLAN
    version = 1
    for needle, delta, new in (("id: split", 4, "fan_split"), ("[legal,", 1, "compliance")):
        edit = await client.text_document_rename_async(lsp.RenameParams(
            text_document=doc(uri), position=pos_of(text, needle, e, delta=delta), new_name=new))
        edits = rename_edits(client, edit, uri, version)
        assert len(edits) >= 2
        # apply from the end backwards, as a client does
        for te in sorted(edits, key=lambda t: (t.range.start.line, t.range.start.character), reverse=True):
            version += 1
            change_doc(client, uri, version, te.range, te.new_text)
            lines = text.split("\n")
            line = lines[te.range.start.line]
            codec = "utf-8" if e == "utf-8" else "utf-16-le"
            w = 1 if e == "utf-8" else 2
            b = line.encode(codec)
            line = (b[: te.range.start.character * w].decode(codec) + te.new_text
                    + b[te.range.end.character * w:].decode(codec))
            lines[te.range.start.line] = line
            text = "\n".join(lines)
    assert "fan_split" in text and "compliance" in text
    assert check_source(text).diagnostics == ()
    assert await diagnostics(client, uri, pull(client), until=lambda d: d == []) == []


async def test_rename_refuses_a_clash(client: LanguageClient) -> None:
    e = enc(client)
    uri = await opened(client)
    with pytest.raises(Exception, match="already exists"):
        await client.text_document_rename_async(lsp.RenameParams(
            text_document=doc(uri), position=pos_of(PLAN, "id: split", e, delta=4), new_name="ask"))


async def labels(client: LanguageClient, uri: str, text: str, needle: str, delta: int) -> list[str]:
    res = await client.text_document_completion_async(lsp.CompletionParams(
        text_document=doc(uri), position=pos_of(text, needle, enc(client), delta=delta)))
    items = res.items if isinstance(res, lsp.CompletionList) else (res or [])
    return [i.label for i in items]


async def test_completion(client: LanguageClient) -> None:
    uri = await opened(client)
    v = 1
    cases = [
        # (edit of PLAN, needle, delta, expected subset)
        (PLAN.replace("to: {node: split}", "to: {node: s}"), "to: {node: s}", len("to: {node: s"),
         {"split", "sec_ok", "ask", "done"}),
        (PLAN.replace("from: {node: split, port: legal}", "from: {node: split, port: }"),
         "from: {node: split, port: }", len("from: {node: split, port: "), {"legal", "security"}),
        (PLAN.replace("    type: fork\n", "    type: f\n"), "    type: f", len("    type: f"), {"fork", "fan_out"}),
        (PLAN.replace("      completion: callback\n", "      completion: \n"), "      completion: ",
         len("      completion: "), {"sent", "callback"}),
        (PLAN.replace("      mode: all\n", "      mode: \n"), "      mode: ", len("      mode: "), {"all", "any"}),
        (PLAN.replace('"レビュー 😀 {{ input.topic }}"', '"レビュー 😀 {{ input.'), "{{ input.",
         len("{{ input."), {"topic", "room"}),
        (PLAN.replace('"レビュー 😀 {{ input.topic }}"', '"レビュー 😀 {{ '), "😀 {{ ", len("😀 {{ "),
         {"run", "input"}),
        (PLAN.replace("{ref: run.input.topic}", "{ref: run.input.}"), "{ref: run.input.}", len("{ref: run.input."),
         {"topic", "room"}),
        (PLAN.replace("      forkId: split\n", "      forkId: \n"), "      forkId: ", len("      forkId: "), {"split"}),
        (PLAN.replace("    type: fork\n", "    type: fork\n    re\n"), "    re\n", len("    re"), {"label", "description"}),
        (PLAN.replace("    bind: {verdict: {ref: output.verdict}}\n  - id: e_legal\n",
                      "    bind:\n      \n  - id: e_legal\n"), "    bind:\n      ", len("    bind:\n      "), {"verdict"}),
    ]
    for text, needle, delta, want in cases:
        v += 1
        change_doc(client, uri, v, None, text)
        got = set(await labels(client, uri, text, needle, delta))
        assert want <= got, (needle, got)
    # output.* of the edge leaving the callback: the callbackOutput fields
    v += 1
    text = PLAN.replace("bind: {verdict: {ref: output.verdict}}", "bind: {verdict: {ref: output.}}", 1)
    change_doc(client, uri, v, None, text)
    got = set(await labels(client, uri, text, "{ref: output.}", len("{ref: output.")))
    assert got == {"verdict"}
    # `ready` is not a port of a fork; a fork's ports are its branches only
    v += 1
    text = PLAN.replace("from: {node: split, port: legal}", "from: {node: split, port: }")
    change_doc(client, uri, v, None, text)
    assert "completed" not in await labels(client, uri, text, "from: {node: split, port: }",
                                           len("from: {node: split, port: "))


async def test_completion_replaces_the_whole_word(client: LanguageClient) -> None:
    """Mid-word completion (``compl|etion: callback``, ``run.in|put``)
    replaces the whole word, not only what is before the cursor: an
    ``InsertReplaceEdit`` (insert = before the cursor, replace = the word)
    for a client that supports it (VS Code), a ``TextEdit`` over the word
    otherwise; the key's existing colon is kept, not doubled."""
    e = enc(client)
    vscode = client.profile[0] == "vscode"  # type: ignore[attr-defined]
    uri = await opened(client)
    for needle, delta, label, word in (("      completion: callback", len("      compl"), "completion", "completion"),
                                       ("{ref: run.input.topic}", len("{ref: run.in"), "input", "input")):
        res = await client.text_document_completion_async(lsp.CompletionParams(
            text_document=doc(uri), position=pos_of(PLAN, needle, e, delta=delta)))
        items = res.items if isinstance(res, lsp.CompletionList) else (res or [])
        item = next(i for i in items if i.label == label)
        te = item.text_edit
        start = pos_of(PLAN, needle, e, delta=needle.index(word))
        end = pos_of(PLAN, needle, e, delta=needle.index(word) + len(word))
        if vscode:
            assert isinstance(te, lsp.InsertReplaceEdit)
            assert te.insert == lsp.Range(start=start, end=pos_of(PLAN, needle, e, delta=delta))
            rng = te.replace
        else:
            assert isinstance(te, lsp.TextEdit)
            rng = te.range
        assert rng == lsp.Range(start=start, end=end)
        assert te.new_text == label  # replacing `completion` before its colon: no second `: `


async def test_hover(client: LanguageClient) -> None:
    e = enc(client)
    uri = await opened(client)
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=doc(uri), position=pos_of(PLAN, "to: {node: split}", e, delta=len("to: {node: "))))
    assert "fork" in h.contents.value and "legal" in h.contents.value
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=doc(uri), position=pos_of(PLAN, "{{ input.topic }}", e, delta=len("{{ input."))))
    assert "string" in h.contents.value
    # a path with no declaration in the plan: the type pass's resolved type
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=doc(uri), position=pos_of(PLAN, "{ref: input.room}", e, delta=len("{ref: "))))
    assert h is not None and "scope" in h.contents.value
    # a diagnostic's code is explained
    bad = PLAN.replace("to: {node: split}", "to: {node: splt}")
    v2 = new_uri()
    open_doc(client, v2, bad)
    await diagnostics(client, v2, pull(client), until=lambda d: len(d) > 0)
    h = await client.text_document_hover_async(lsp.HoverParams(
        text_document=doc(v2), position=pos_of(bad, "splt", e, delta=1)))
    code = check_source(bad).diagnostics[0].code
    assert code in h.contents.value


async def test_document_symbols_are_the_domain_outline(client: LanguageClient) -> None:
    uri = await opened(client)
    syms = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc(uri)))
    names = [s.name for s in syms]
    assert names == ["input", "output", "nodes", "edges"]
    nodes = syms[2].children
    assert [n.name for n in nodes] == ["ask", "split", "legal_ok", "sec_ok", "gather", "done"]
    split = nodes[1]
    assert split.detail == "fork"
    assert [p.name for p in split.children] == ["legal", "security"]
    assert syms[3].children[0].detail == "ask.completed → split"


async def test_code_action_applies_the_fix(client: LanguageClient) -> None:
    bad = PLAN.replace("to: {node: split}", "to: {node: splt}")
    uri = new_uri()
    open_doc(client, uri, bad)
    diags = await diagnostics(client, uri, pull(client), until=lambda d: len(d) > 0)
    with_fix = [d for d in diags if d.data and d.data.get("fix")]
    assert with_fix, diags
    acts = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=with_fix[0].range,
        context=lsp.CodeActionContext(diagnostics=with_fix, only=[lsp.CodeActionKind.QuickFix])))
    assert acts and acts[0].kind == lsp.CodeActionKind.QuickFix
    (te,) = acts[0].edit.changes[uri]
    assert te.new_text == "split"
    change_doc(client, uri, 2, te.range, te.new_text)
    assert await diagnostics(client, uri, pull(client), until=lambda d: d == []) == []


async def test_debug_info_and_settings(client: LanguageClient) -> None:
    info = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="loopc.debugInfo"))
    assert info["positionEncoding"] == enc(client)
    assert info["diagnostics"] == ("pull" if pull(client) else "push")
    assert info["settings"]["debounce"] == 10
    # a severity override turns a code off
    bad = PLAN.replace("to: {node: split}", "to: {node: splt}")
    code = check_source(bad).diagnostics[0].code
    client.set_configuration({"loopc": {"debounce": 10, "severity": {code: "off"}}})
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    uri = new_uri()
    for _ in range(100):
        info = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="loopc.debugInfo"))
        if info["settings"]["severity"]:
            break
    open_doc(client, uri, bad)
    got = await diagnostics(client, uri, pull(client), until=lambda d: True)
    assert code not in {d.code for d in got}
    client.set_configuration({"loopc": {"debounce": 10}})
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))


def decode_tokens(text: str, data: list[int], encoding: str, legend: list[str]) -> list[tuple[str, str]]:
    lines = text.split("\n")
    codec = "utf-8" if encoding == "utf-8" else "utf-16-le"
    w = 1 if encoding == "utf-8" else 2
    out = []
    line = ch = 0
    for i in range(0, len(data), 5):
        dl, dc, ln, t, _ = data[i: i + 5]
        if dl:
            line, ch = line + dl, dc
        else:
            ch += dc
        b = lines[line].encode(codec)
        out.append((legend[t], b[ch * w: (ch + ln) * w].decode(codec)))
    return out


async def test_semantic_tokens_for_expressions(client: LanguageClient) -> None:
    uri = await opened(client)
    legend = client.init_result.capabilities.semantic_tokens_provider.legend.token_types  # type: ignore[attr-defined]
    res = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=doc(uri)))
    toks = decode_tokens(PLAN, list(res.data), enc(client), legend)
    # the template after CJK and an emoji: braces, root, field — in the negotiated encoding
    assert ("macro", "{{") in toks and ("macro", "}}") in toks
    i = toks.index(("macro", "{{"))
    assert toks[i + 1: i + 4] == [("namespace", "input"), ("property", "topic"), ("macro", "}}")]
    assert ("namespace", "run") in toks and ("property", "verdict") in toks


async def test_call_hierarchy_code_lens_inlay_hints(client: LanguageClient) -> None:
    e = enc(client)
    uri = await opened(client)
    items = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=doc(uri), position=pos_of(PLAN, "id: gather", e, delta=4)))
    assert [i.name for i in items] == ["gather"]
    inc = await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=items[0]))
    assert sorted(c.from_.name for c in inc) == ["legal_ok", "sec_ok"]
    out = await client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(item=items[0]))
    assert [c.to.name for c in out] == ["done"]
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(text_document=doc(uri)))
    titles = {text_at(PLAN, c.range, e): c.command.title for c in lenses}
    assert titles["legal_ok"] == "1 upstream · 1 downstream · in fork `split` branch `legal`"
    assert titles["split"] == "1 upstream · 2 downstream"
    end = lsp.Position(line=PLAN.count("\n"), character=0)
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        text_document=doc(uri), range=lsp.Range(start=lsp.Position(line=0, character=0), end=end)))
    labels = [h.label for h in hints]
    assert ": string" in labels and ": scope" in labels
    assert "← {verdict: string}" in labels


async def test_fix_all_applies_only_safe_fixes(client: LanguageClient) -> None:
    # `to: split` (a bare id) has a safe fix `{node: split}`; `splt` a did-you-mean (unsafe)
    bad = PLAN.replace("to: {node: split}", "to: split").replace("to: {node: legal_ok}", "to: {node: legl_ok}")
    uri = new_uri()
    open_doc(client, uri, bad)
    diags = await diagnostics(client, uri, pull(client), until=lambda d: len(d) >= 2)
    safe = [d for d in diags if d.data and d.data.get("fix", {}).get("safe")]
    unsafe = [d for d in diags if d.data and d.data.get("fix") and not d.data["fix"]["safe"]]
    assert safe and unsafe, diags
    acts = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=lsp.Range(start=lsp.Position(line=0, character=0),
                                                 end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=[], only=["source.fixAll.loopc"])))
    assert [a.kind for a in acts] == ["source.fixAll.loopc"]
    edits = acts[0].edit.changes[uri]
    assert [e.new_text for e in edits] == [e["newText"] for d in safe for e in d.data["fix"]["edits"]]
    assert all("legal_ok" not in e.new_text for e in edits)


async def test_every_fix_is_a_quick_fix_also_without_data(client: LanguageClient) -> None:
    # issue 22: the safe fix and the did-you-mean (unsafe) are both quick fixes, the safe
    # one preferred; a client that sends the diagnostics back without `data` still gets them
    bad = PLAN.replace("to: {node: split}", "to: split").replace("to: {node: legal_ok}", "to: {node: legl_ok}")
    uri = new_uri()
    open_doc(client, uri, bad)
    diags = await diagnostics(client, uri, pull(client), until=lambda d: len(d) >= 2)
    fixable = [d for d in diags if d.data and d.data.get("fix")]
    assert {d.data["fix"]["safe"] for d in fixable} == {True, False}, diags
    bare = [lsp.Diagnostic(range=d.range, message=d.message, severity=d.severity, code=d.code, source=d.source)
            for d in fixable]
    acts = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=bare[0].range,
        context=lsp.CodeActionContext(diagnostics=bare, only=[lsp.CodeActionKind.QuickFix])))
    assert [(a.kind, a.is_preferred) for a in acts] == [
        (lsp.CodeActionKind.QuickFix, d.data["fix"]["safe"]) for d in fixable]
    assert [[e.new_text for e in a.edit.changes[uri]] for a in acts] == [
        [e["newText"] for e in d.data["fix"]["edits"]] for d in fixable]


async def test_rename_a_field_across_references(client: LanguageClient) -> None:
    e = enc(client)
    uri = await opened(client)
    # the callback output `verdict` is read as `output.verdict` on edge e_split
    edit = await client.text_document_rename_async(lsp.RenameParams(
        text_document=doc(uri), position=pos_of(PLAN, "        verdict: {type: enum", e, delta=9),
        new_name="decision"))
    edits = rename_edits(client, edit, uri)
    assert len(edits) == 2
    lines = PLAN.split("\n")
    assert {lines[t.range.start.line].strip()[:20] for t in edits} == {
        "verdict: {type: enum", "bind: {verdict: {ref"}
