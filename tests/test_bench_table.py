"""benchmarks/table.py and benchmarks/workflows.py (issue 26 item 6): the
pieces that do not time anything — the anchor's workflow generator, the
environment each side runs in, the side-by-side table.  No test asserts a
time; the benchmark itself stays out of .ci/run."""
from __future__ import annotations

import sys
from pathlib import Path

from ruamel.yaml import YAML

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import table  # noqa: E402
import workflows  # noqa: E402


def test_workflows_are_deterministic_yaml_of_about_the_asked_size() -> None:
    for size in (500, 5_000, 40_000):
        text = workflows.workflow(3, size)
        assert text == workflows.workflow(3, size)
        assert size <= len(text.encode("utf-8")) <= size + 4_000
        doc = YAML(typ="safe").load(text)
        assert set(doc) >= {"name", "on", "jobs"}
        jobs = list(doc["jobs"])
        for prev, job in zip(jobs, jobs[1:]):
            assert doc["jobs"][job]["needs"] == [prev]


def test_write_like_mirrors_a_plan_tree(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "p.yaml").write_text("x" * 3_000, encoding="utf-8")
    (tree / "q.yaml").write_text("y" * 9_000, encoding="utf-8")
    n, total = workflows.write_like(tree, tmp_path / "wf")
    assert n == 2 and (tmp_path / "wf" / "a" / "p.yml").is_file() and (tmp_path / "wf" / "q.yml").is_file()
    assert 12_000 <= total <= 12_000 + 8_000


def test_side_environments() -> None:
    side = table.Side("current", Path("/x/src"))
    plain = side.env(bytecode=False)
    assert plain["PYTHONPATH"] == "/x/src" and plain["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "PYTHONPYCACHEPREFIX" not in plain
    warm = side.env(bytecode=True, pyc=Path("/tmp/pyc"), LOOPC_CACHE_DIR="/tmp/c")
    assert warm["PYTHONPYCACHEPREFIX"] == "/tmp/pyc" and "PYTHONDONTWRITEBYTECODE" not in warm
    assert warm["LOOPC_CACHE_DIR"] == "/tmp/c"
    assert side.loopc("--version")[-1] == "--version"


def test_markdown_gives_each_side_and_its_ratio_to_current() -> None:
    doc = {"sides": ["current", "baseline r", "actionlint"],
           "rows": {"cold": {"current": {"median": 2.0, "unit": "s", "rate": "1.00 MB/s"},
                             "baseline r": {"median": 3.0, "unit": "s", "cpu_median": 2.5}},
                    "small": {"current": {"median": 100.0, "unit": "ms"}, "actionlint": {"median": 6.0, "unit": "ms"}}}}
    out = table.markdown(doc).splitlines()
    assert out[0] == "| what | current | baseline r | actionlint |"
    assert out[2] == "| cold | 2.000 s, 1.00 MB/s | 3.000 s (CPU 2.500 s) (1.50×) | — |"
    assert out[3] == "| small | 100.0 ms | — | 6.0 ms (0.06×) |"
