"""A new node kind is one module under ``src/loopc/kinds/``: the registry
finds it without an edit in ``loopc/kinds/__init__.py``
(docs/architecture.md#add-a-node-kind)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopc import kinds


def test_every_kind_module_is_registered() -> None:
    assert kinds.discovered(frozenset(kinds.KINDS)) == []
    folder = Path(kinds.__file__).parent
    modules = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")} - {"base", "spec", "docs"}
    assert modules == set(kinds.KINDS)
    assert list(kinds.KINDS)[-1] == "end"


def test_discovery_lists_new_kind_modules_only(tmp_path: Path) -> None:
    for name in ("base.py", "spec.py", "docs.py", "__main__.py", "_private.py", "wait.py", "noop.py", "note.txt"):
        (tmp_path / name).write_text("", encoding="utf-8")
    assert kinds.discovered(frozenset(("wait",)), str(tmp_path)) == ["noop"]
    assert kinds.discovered(frozenset(), str(tmp_path / "missing")) == []
    assert kinds.discovered(frozenset(), None) == []


def test_a_module_must_declare_its_own_kind() -> None:
    with pytest.raises(TypeError, match=r"loopc/kinds/base\.py must declare KIND"):
        kinds._load("base")
    with pytest.raises(TypeError, match="name='spec'"):
        kinds._load("spec")
