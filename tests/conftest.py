"""Shared test set-up: ``loopc check``'s result cache goes to a per-session
temporary folder, never the user's cache; and the paths and snippets many
test modules share (``from conftest import ROOT, HEADER, ...``), defined once
here instead of copied into each file."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

#: The repository checkout.
ROOT = Path(__file__).resolve().parents[1]
#: The developer tools (regeneration, goldens; not packaged): importable by
#: their module names (``import golden_ir``), as ``python tools/regen.py``
#: imports them.
TOOLS = ROOT / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))
#: The header every plan source starts with.
HEADER = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"
#: The smallest plan that checks clean: no input or output, one succeeded End.
MINIMAL = (
    HEADER
    + """input: {}
output: {}
entry: done
nodes:
  - id: done
    type: end
    end: {status: succeeded}
edges: []
"""
)
#: The conformance kit's golden scenarios (package data; loopc.conformance.SCENARIO_DIR).
KIT = ROOT / "src" / "loopc" / "conformance" / "scenarios"
#: examples/*.yaml, sorted.
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
#: Every plan source of the repository: examples, golden sources, fixtures (sorted).
REPOSITORY_PLANS = sorted(
    [*ROOT.glob("examples/*.yaml"), *ROOT.glob("golden/*/*/source.yaml"), *ROOT.glob("tests/fixtures/*/*.yaml")]
)


@pytest.fixture(autouse=True, scope="session")
def _isolated_check_cache(tmp_path_factory: pytest.TempPathFactory):
    import os

    old = os.environ.get("LOOPC_CACHE_DIR")
    os.environ["LOOPC_CACHE_DIR"] = str(tmp_path_factory.mktemp("loopc-cache"))
    yield
    if old is None:
        os.environ.pop("LOOPC_CACHE_DIR", None)
    else:
        os.environ["LOOPC_CACHE_DIR"] = old


def golden_artifact(name: str) -> dict[str, Any]:
    """The expected artifact of golden case ``name`` as parsed JSON."""
    return json.loads((ROOT / "golden" / name / "expected.json").read_text(encoding="utf-8"))


def seal(d: dict[str, Any]) -> bytes:
    """Canonical bytes of artifact ``d`` with the digest recomputed for the
    (mutated) content, so only the semantic rules can reject it."""
    from loopc.ir.canonical import canonical_bytes
    from loopc.ir.digest import semantic_digest

    d = copy.deepcopy(d)
    d["digest"] = "sha256:" + "0" * 64
    d["digest"] = semantic_digest(d)
    return canonical_bytes(d)


def artifact_node(d: dict[str, Any], nid: str) -> dict[str, Any]:
    """The node with id ``nid`` in artifact ``d``."""
    return next(n for n in d["plan"]["nodes"] if n["id"] == nid)


def slots(data: Any) -> list[tuple[Any, Any]]:
    """Every (container, key-or-index) slot of JSON-like ``data``, iteratively
    (the mutation tests pick one to change)."""
    out: list[tuple[Any, Any]] = []
    stack = [data]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            for k, v in cur.items():
                out.append((cur, k))
                stack.append(v)
        elif isinstance(cur, list):
            for i, v in enumerate(cur):
                out.append((cur, i))
                stack.append(v)
    return out
