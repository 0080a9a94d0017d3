"""No import cycle in loopc, between packages or inside one
(docs/architecture.md#layers: lazy imports are for start-up time, never to
hide a cycle).

The graph is grimp's (the library under import-linter): every ``import`` and
``from ... import`` statement of every module, function-level ones included,
but not those under ``if TYPE_CHECKING:`` (``exclude_type_checking_imports``),
which never run.  import-linter's layer contracts only see imports between
packages; this test also sees a circle inside one package (``schema`` ->
``typecheck_values`` -> ``typecheck_context`` -> ``graph`` -> ``schema`` was
one), held by a function-level import.  A cycle is a strongly connected
component of more than one module; the failure message names each import
of it with its line.
"""

from __future__ import annotations

from functools import lru_cache

import grimp
import networkx as nx

#: Cycles known today, each an exact set of modules; nothing else may form a
#: cycle, and an entry that no longer is one must go (the test says so).
#: None today (the language server's features/formatting <-> server circle
#: went with the move of ``Refused`` to ``loopc.lsp.errors``, issue 24 item 4).
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()


@lru_cache(maxsize=1)
def _graph() -> tuple[grimp.ImportGraph, nx.DiGraph]:
    imports = grimp.build_graph("loopc", cache_dir=None, exclude_type_checking_imports=True)
    g: nx.DiGraph = nx.DiGraph()
    for m in imports.modules:
        g.add_node(m)
        g.add_edges_from((m, t) for t in imports.find_modules_directly_imported_by(m))
    return imports, g


def _cycles() -> set[frozenset[str]]:
    return {frozenset(c) for c in nx.strongly_connected_components(_graph()[1]) if len(c) > 1}


def _describe(cycle: frozenset[str]) -> str:
    imports, g = _graph()
    lines = [", ".join(sorted(cycle)) + ":"]
    for a, b in sorted(g.subgraph(cycle).edges):
        for d in imports.get_import_details(importer=a, imported=b):
            lines.append(f"    {a} -> {b}  (line {d['line_number']}: {d['line_contents']})")
    return "\n".join(lines)


def test_the_graph_is_the_package() -> None:
    imports, g = _graph()
    assert {"loopc", "loopc.pipeline.check", "loopc.ir.verifier"} <= set(g.nodes)
    # a function-level import is an edge (loopc.ir.model.plan imports the
    # envelope version helpers inside functions)
    assert g.has_edge("loopc.ir.model.plan", "loopc.ir.versions")


def test_type_checking_imports_do_not_count() -> None:
    with_tc = grimp.build_graph("loopc", cache_dir=None, exclude_type_checking_imports=False)
    imports, g = _graph()
    only_tc = [
        (a, b) for a in with_tc.modules for b in with_tc.find_modules_directly_imported_by(a) if not g.has_edge(a, b)
    ]
    assert only_tc, "no import under `if TYPE_CHECKING:` found: the filter is not exercised"


def test_no_import_cycle() -> None:
    found = _cycles()
    new = sorted((c for c in found if c not in KNOWN_CYCLES), key=sorted)
    assert not new, "import cycles (move the shared piece into a module both import):\n" + "\n".join(
        map(_describe, new)
    )


def test_known_cycles_are_still_cycles() -> None:
    gone = sorted((sorted(c) for c in KNOWN_CYCLES - _cycles()))
    assert not gone, f"no longer cycles, remove them from KNOWN_CYCLES: {gone}"
