"""No stale artifact-version range anywhere in docs/, the README or the
package's text (messages and docstrings): every "v1–vN", "v1 … vN",
"`loop.plan.artifact/v1`…`vN`" or "N ∈ 1…N" names the newest supported
version, derived from :data:`loopc.ir.versions.VERSIONS` (the kinds'
declarations).  The docs write such ranges between ``<!-- regen:... -->``
markers (tools/docs_fragments.py) so ``python tools/regen.py`` keeps them
current; a range written by hand elsewhere fails here when a version is
added."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loopc.ir.versions import LATEST, VERSIONS

from conftest import ROOT

_SEP = r"[`\s]*(?:–|—|-|…|\.\.\.|\.\.|to)[`\s]*"
RANGES = (
    re.compile(r"\bv1" + _SEP + r"(?:``)?/?v(\d+)\b"),
    re.compile(r"artifact/v1" + _SEP + r"(?:``)?/?v(\d+)\b"),
    re.compile(r"N ∈ 1" + _SEP + r"(\d+)\b"),
)

FILES = sorted(
    [*ROOT.glob("docs/*.md"), ROOT / "README.md", *(ROOT / "src" / "loopc").rglob("*.py")],
)


def _stale(text: str) -> list[str]:
    out = []
    for pattern in RANGES:
        for m in pattern.finditer(text):
            if int(m.group(1)) != LATEST:
                line = text.count("\n", 0, m.start()) + 1
                out.append(f"line {line}: {m.group(0)!r}")
    return out


def test_versions_are_one_to_latest() -> None:
    assert VERSIONS == tuple(range(1, LATEST + 1))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_no_stale_version_range(path: Path) -> None:
    assert _stale(path.read_text(encoding="utf-8")) == [], (
        "run python tools/regen.py, or write the range between markers"
    )


def test_the_check_finds_a_stale_range() -> None:
    older = LATEST - 1
    assert _stale(f"accepts every envelope v1–v{older}") and _stale(f"`loop.plan.artifact/v1`…`v{older}`")
    assert _stale(f"N ∈ 1…{older}") and _stale(f"``loop.plan.artifact/v1`` … ``/v{older}``")
    assert not _stale(f"v1–v{LATEST} and `loop.plan.artifact/v1`…`v{LATEST}`, N ∈ 1…{LATEST}")


def test_node_config_table_versions_match_the_declarations() -> None:
    """docs/ir.md#node-configs (generated, tools/docs_fragments.py): each
    field it marks with a version (``feedbackScope`` (v5, ...)) carries the
    version its kind declares, and each field newer than its opcode (the
    row's own ``(vN)``, v1 when absent) is marked."""
    from loopc.kinds import KINDS

    text = (ROOT / "docs" / "ir.md").read_text(encoding="utf-8")
    section = text[text.index("## Node configs") :]
    section = section[: section.index("\n## ", 1)]
    found = re.finditer(r"^\| `([a-z_]+)`(?: \(v(\d+)\))? \| (.*) \|$", section, re.M)
    rows = {m.group(1): (int(m.group(2) or 1), m.group(3)) for m in found}
    assert set(rows) == set(KINDS)
    for op, (since, row) in rows.items():
        assert since == KINDS[op].since, op
        for name, f in KINDS[op].wire.fields.items():
            key = "`" + re.escape(name) + r"(?::[^`]*)?`"
            at_once = re.search(key + r" \(v(\d+)", row)
            if f.since > since:
                first = re.search(key + r".*?\(v(\d+)", row)
                assert first and int(first.group(1)) == f.since, (op, name, f.since)
            else:
                assert at_once is None, (op, name, at_once.group(0))
