"""The deprecated import paths of docs/api.md "Moved import paths" stay
working aliases for users' code, and nothing in the package imports them
(the layer contract's two ``ignore_imports`` entries exist for the aliases
alone)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import loopc
import loopc.compiler.driver as driver
import loopc.ir.api as ir_api
import loopc.pipeline as pipeline
import loopc.pipeline.check as pipeline_check

SRC = Path(loopc.__file__).resolve().parent
ALIASES = {"loopc.compiler.driver": SRC / "compiler" / "driver.py", "loopc.ir.api": SRC / "ir" / "api.py"}


@pytest.mark.parametrize("name", sorted(driver.__all__))
def test_compiler_driver_alias_is_the_pipeline_object(name: str) -> None:
    assert getattr(driver, name) is getattr(pipeline_check, name)


@pytest.mark.parametrize("name", sorted(ir_api.__all__))
def test_ir_api_alias_is_the_pipeline_object(name: str) -> None:
    assert getattr(ir_api, name) is getattr(pipeline, name)


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_nothing_in_the_package_imports_a_deprecated_path() -> None:
    users = {
        str(p.relative_to(SRC)): sorted(set(ALIASES) & _imports(p))
        for p in SRC.rglob("*.py")
        if p not in ALIASES.values()
    }
    assert {k: v for k, v in users.items() if v} == {}
