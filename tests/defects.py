"""One-defect copies of a plan: each generator makes one authoring mistake
everywhere it can be made in a text (the classes of tests/test_one_defect.py,
and the mistakes fixes are offered for) and yields ``(label, bad_text)``,
``label`` naming what was meant (a key, an id, a line).  Deterministic: the
same text gives the same copies in the same order.

Used by tests/test_one_defect.py (one defect, one diagnostic) and
tests/test_fix_safety.py (every safe fix proven on every copy)."""

from __future__ import annotations

import random
import re
from typing import Callable, Iterator

Defects = Iterator[tuple[str, str]]

_NODE_ID = re.compile(r"^  - id: ([a-z_]+)\n    type: (\w+)", re.M)
_CONFIG_KEYS = "|".join(sorted({k.config_key for k in __import__("loopc.kinds", fromlist=["KINDS"]).KINDS.values()}))
_BLOCK_CONFIG = re.compile(rf"^    (?:{_CONFIG_KEYS}):\n((?:      .*\n|        .*\n)+)", re.M)
#: Keys of the syntax short enough that difflib's ratio misses a swap of two
#: of their letters (``ot`` for ``to``), and a few longer ones.
SHORT_KEYS = ("id", "to", "from", "ref", "type", "mode", "port", "node", "bind", "end", "text", "expr", "code")


def _sub(text: str, a: int, b: int, new: str) -> str:
    return text[:a] + new + text[b:]


def top_level_key_misspelt(text: str) -> Defects:
    """A top-level key with its last letter dropped, or two letters swapped."""
    for key in (m.group(1) for m in re.finditer(r"^([A-Za-z]+):", text, re.M)):
        for wrong in (key[:-1], key[0] + key[2] + key[1] + key[3:]):
            yield key, re.sub(rf"^{key}:", f"{wrong}:", text, count=1, flags=re.M)


def key_letters_swapped(text: str) -> Defects:
    """Any key of :data:`SHORT_KEYS` with two adjacent (different) letters swapped."""
    for m in re.finditer(r"(?:^\s+(?:- )?|[{,] )(%s):" % "|".join(SHORT_KEYS), text, re.M):
        key = m.group(1)
        for i in range(len(key) - 1):
            if key[i] != key[i + 1]:
                yield key, _sub(text, m.start(1), m.end(1), key[:i] + key[i + 1] + key[i] + key[i + 2:])


def yaml11_boolean(text: str) -> Defects:
    """A plain ``true``/``false`` value written as a YAML 1.1 word (``yes``, ``Off``...)."""
    for m in re.finditer(r"(?<=: )(true|false)(?=[,}\n])", text):
        for word in (("yes", "on", "Y") if m.group(1) == "true" else ("no", "Off", "N")):
            yield m.group(1), _sub(text, m.start(1), m.end(1), word)


def template_unquoted(text: str) -> Defects:
    """A quoted scalar reduced to its (unquoted) ``{{ ... }}`` template."""
    for m in re.finditer(r'"[^"\n]*?(\{\{[^}"\n]*\}\})[^"\n]*"', text):
        yield m.group(0), _sub(text, m.start(), m.end(), m.group(1))


def join_owner_key_swapped(text: str) -> Defects:
    """A join naming its owner with the other key (``forkId`` ↔ ``fanOutId``)."""
    for m in re.finditer(r"^(\s+)(forkId|fanOutId):", text, re.M):
        other = "fanOutId" if m.group(2) == "forkId" else "forkId"
        yield m.group(2), _sub(text, m.start(2), m.end(2), other)


def config_key_dedented(text: str) -> Defects:
    """The last key of a block configuration dedented to node level."""
    for m in _BLOCK_CONFIG.finditer(text):
        last = list(re.finditer(r"^      (\w+):", m.group(1), re.M))[-1]
        at = m.start(1) + last.start()
        yield last.group(1), text[:at] + text[at + 2:]


def loop_exit_into_in(text: str) -> Defects:
    """A loop body's way back to ``continue`` entering ``in`` (or the default port)."""
    for m in re.finditer(r"to: \{node: (\w+), port: continue\}", text):
        for to in (f"to: {{node: {m.group(1)}, port: in}}", f"to: {{node: {m.group(1)}}}"):
            yield m.group(1), _sub(text, m.start(), m.end(), to)


def node_id_duplicated(text: str) -> Defects:
    """A node given the id of an earlier node (a copy not renamed)."""
    ids = list(_NODE_ID.finditer(text))
    for i, m in enumerate(ids[1:], 1):
        for prev in ids[:i]:
            yield m.group(1), _sub(text, m.start(1), m.end(1), prev.group(1))


def node_id_misspelt(text: str) -> Defects:
    """A node's own id with two letters swapped (its edges keep the id)."""
    entry = re.search(r"^entry: (\w+)", text, re.M)
    for m in _NODE_ID.finditer(text):
        nid = m.group(1)
        if entry is not None and nid == entry.group(1) or len(nid) < 4:
            continue
        if re.search(rf"(forkId|fanOutId): {nid}\b", text):
            continue
        i = next((i for i in range(1, len(nid) - 1) if nid[i] != nid[i + 1]), None)
        if i is not None:
            yield nid, _sub(text, m.start(1), m.end(1), nid[:i] + nid[i + 1] + nid[i] + nid[i + 2:])


def edge_target_misspelt(text: str) -> Defects:
    """An edge target's node id with a letter dropped (``route_verdct``)."""
    for m in re.finditer(r"to: \{node: (\w+)", text):
        nid = m.group(1)
        if len(nid) >= 4:
            yield nid, _sub(text, m.start(1), m.end(1), nid[:-2] + nid[-1])


def single_equals(text: str) -> Defects:
    """``a = b`` for ``a == b``."""
    for m in re.finditer(r"(?<=[^=!<>])==(?=[^=])", text):
        yield "==", _sub(text, m.start(), m.end(), "=")


def legacy_header(text: str) -> Defects:
    """The legacy header (``loop.workflow/v1``, ``Workflow``), and a near-miss ``kind``."""
    yield "header", text.replace("apiVersion: loop.plan/v1", "apiVersion: loop.workflow/v1", 1).replace(
        "kind: PlanVersion", "kind: Workflow", 1)
    for wrong in ("Plan", "planversion", "PlanVersions"):
        yield "kind", text.replace("kind: PlanVersion", f"kind: {wrong}", 1)


def legacy_root(text: str) -> Defects:
    """A reference written with a legacy root: ``inputs.x`` for ``run.input.x``
    or ``input.x``, ``state.x`` for ``run.state.x``."""
    for m in re.finditer(r"\b(run\.input|run\.state|(?<![.\w])input)\.([A-Za-z_]\w*)", text):
        legacy = "state" if m.group(1) == "run.state" else "inputs"
        yield m.group(0), _sub(text, m.start(1), m.end(1), legacy)


def edge_target_bare(text: str) -> Defects:
    """``to: {node: x}`` written ``to: x``."""
    for m in re.finditer(r"to: (\{node: (\w+)\})", text):
        yield m.group(2), _sub(text, m.start(1), m.end(1), m.group(2))


def expression_wrapped(text: str) -> Defects:
    """An expression key written ``{expr: "..."}``."""
    for m in re.finditer(r'(?:when|condition): ("[^"\n]*")', text):
        yield m.group(1), _sub(text, m.start(1), m.end(1), "{expr: " + m.group(1) + "}")


def literal_wrapped(text: str) -> Defects:
    """A literal-only value written ``{literal: x}``."""
    for m in re.finditer(r"(?:maxIterations|mode|status|completion|maxConcurrency): (\w+)(?=[,}\n])", text):
        yield m.group(1), _sub(text, m.start(1), m.end(1), "{literal: " + m.group(1) + "}")


def line_shifted(text: str, *, per_text: int = 24) -> Defects:
    """One content line moved one to three columns (in or out), or its first
    space made an invisible character or a tab: at most ``per_text`` lines,
    chosen by a generator seeded with the text (the same lines every run)."""
    lines = text.split("\n")
    indented = [i for i, line in enumerate(lines) if line.startswith(" ") and line.strip()
                and not line.lstrip().startswith("#")]
    rng = random.Random(len(text) * 31 + text.count("\n"))
    for i in sorted(rng.sample(indented, min(per_text, len(indented)))):
        line = lines[i]
        lead = len(line) - len(line.lstrip(" "))
        shifted = [" " + line, "  " + line] + [line[k:] for k in (1, 2, 3) if k <= lead]
        for new in shifted + ["\u00a0" + line[1:], "\u2002" + line[1:], "\t" + line[1:]]:
            yield f"line {i + 1}", "\n".join(lines[:i] + [new] + lines[i + 1:])


#: Every generator, by name.
GENERATORS: dict[str, Callable[[str], Defects]] = {
    f.__name__: f for f in (
        top_level_key_misspelt, key_letters_swapped, yaml11_boolean, template_unquoted, join_owner_key_swapped,
        config_key_dedented, loop_exit_into_in, node_id_duplicated, node_id_misspelt, edge_target_misspelt,
        single_equals, legacy_header, legacy_root, edge_target_bare, expression_wrapped, literal_wrapped,
        line_shifted,
    )
}
