"""``loopc graph FILE --format mermaid|dot|svg`` (issue 13)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopc.cli.main import cli

from conftest import ROOT
from conftest import EXAMPLES


def run(*args: str):
    return CliRunner().invoke(cli, ["graph", *args], catch_exceptions=False)


def test_dot_clusters_shapes_and_implicit_failure_routes() -> None:
    r = run("--format", "dot", str(ROOT / "examples" / "fork_any_join.yaml"))
    assert r.exit_code == 0
    out = r.stdout
    assert out.startswith('digraph "plan" {') and out.rstrip().endswith("}")
    assert 'subgraph "cluster_fork_page_primary"' in out and 'label="fork page / secondary"' in out
    assert '"page" [label="page\\nfork", shape=trapezium, penwidth=2];' in out
    assert "shape=doublecircle" in out and "shape=octagon" in out
    assert '"page" -> "ask_primary" [label="primary"];' in out
    assert "style=dashed" in out and "(implicit)" in out


def test_mermaid_fan_out_cluster_and_reserved_words() -> None:
    r = run(str(ROOT / "examples" / "planner_fan_out.yaml"))
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "flowchart TD"
    assert 'subgraph n_cluster_fan_out_dispatch_ ["fan-out item dispatch"]' in r.stdout
    assert '  n_dispatch -->|"item"| n_do_item' in lines
    assert '  n_do_item -. "failed (implicit)" .-> n_collect' in lines
    # every node id is prefixed, so a node called `end` cannot close a subgraph
    assert all(not line.strip().startswith("end[") for line in lines)
    assert r.stdout.count("subgraph") == sum(1 for line in lines if line.strip() == "end")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_draws(path: Path) -> None:
    for fmt in ("mermaid", "dot"):
        r = run("--format", fmt, str(path))
        assert r.exit_code == 0, r.output
        assert r.stdout.count("{") == r.stdout.count("}") or fmt == "mermaid"


def test_svg_or_a_clear_message(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli, ["graph", "--format", "svg", "-o", str(tmp_path / "p.svg"), str(EXAMPLES[0])], catch_exceptions=False
    )
    if shutil.which("dot") is None:
        assert r.exit_code == 2 and "Graphviz's 'dot' program, which is not installed" in r.stderr
    else:
        assert r.exit_code == 0 and (tmp_path / "p.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_unmodellable_plan_is_not_drawn(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\ninput: {a: [1, 2}\n")
    r = run(str(p))
    assert r.exit_code == 1 and "cannot draw this plan" in r.stderr
    assert run(str(tmp_path / "missing.yaml")).exit_code == 2
