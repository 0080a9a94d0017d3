"""Documentation stays true: the Python examples in docs/api.md and README.md
run, and README's Quick start holds exactly two commands."""
from __future__ import annotations

import os
import subprocess
import sys
import re
from pathlib import Path

import pytest

from conftest import ROOT


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


BLOCKS = [(p.name, i, b) for p in (ROOT / "docs" / "api.md", ROOT / "README.md")
          for i, b in enumerate(_python_blocks(p))]


@pytest.mark.parametrize("name,i,block", BLOCKS, ids=[f"{n}#{i}" for n, i, _ in BLOCKS])
def test_python_examples_run(name: str, i: int, block: str, tmp_path: Path) -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        if "open(\"plan.yaml\"" in block:
            block = block.replace('open("plan.yaml", "rb")', 'open("examples/callback_review.yaml", "rb")')
        exec(compile(block, f"{name}#{i}", "exec"), {})
    finally:
        os.chdir(cwd)


def test_quick_start_has_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```[a-z]*\n(.*?)```", section, re.S).group(1)
    commands = [l for l in block.splitlines() if l.strip()]
    assert len(commands) == 2
    assert "pytest" in commands[1]


def test_pre_commit_hook_definition() -> None:
    from ruamel.yaml import YAML

    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"loopc-check", "loopc-fmt"}
    assert by_id["loopc-check"]["entry"] == "loopc check"
    assert by_id["loopc-fmt"]["entry"] == "loopc fmt"
    for hook in hooks:
        assert hook["language"] == "python"
        pattern = re.compile(hook["files"])
        assert pattern.search("plans/release.yaml") and pattern.search("ci/deploy.loop.yml")
        assert not pattern.search(".github/workflows/ci.yml")
    try:  # pre-commit's own manifest validation, when pre-commit is installed
        from pre_commit.clientlib import load_manifest
    except ImportError:
        return
    assert [h["id"] for h in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))] == ["loopc-check", "loopc-fmt"]

def test_readme_pre_commit_snippet_is_a_valid_config(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## pre-commit and CI", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    assert "commit hash" in block  # no release tag exists: the snippet says to pin a commit
    try:
        from pre_commit.clientlib import load_config
    except ImportError:
        pytest.skip("pre-commit is not installed")
    cfg = tmp_path / ".pre-commit-config.yaml"
    cfg.write_text(block, encoding="utf-8")
    hooks = [h["id"] for r in load_config(str(cfg))["repos"] for h in r["hooks"]]
    assert hooks == ["loopc-check", "loopc-fmt"]


@pytest.mark.slow
def test_readme_test_counts_are_current() -> None:
    """The README's "about N tests" and the fast tier's "about M tests"
    (``pytest -m "not slow"``) stay within 15% of what pytest collects."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    full, fast = (int(n.replace(",", "")) for n in re.findall(r"about ([\d,]+)\s+tests", text)[:2])

    def collected(*args: str) -> int:
        out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                             cwd=ROOT, capture_output=True, text=True, timeout=600).stdout
        return sum(int(m) for m in re.findall(r"^tests/\S+: (\d+)$", out, re.M))

    for claimed, args in ((full, ()), (fast, ("-m", "not slow"))):
        n = collected(*args)
        assert abs(n - claimed) <= 0.15 * n, (claimed, n, args)
