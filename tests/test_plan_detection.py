"""Which files are plans, for ``loopc check`` and ``loopc inventory`` alike
(docs/ci.md#what-gets-checked, docs/plan.md#inventory): one walker, one
configuration, one plan detection; a named file that is not a plan gets one
LP1014 warning, not a cascade; inventory's exit status follows check's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopc.cli.main import cli
from loopc.cli.walk import plan_like

from conftest import EXAMPLES, ROOT

PRE_COMMIT = "repos:\n  - repo: https://github.com/loopc/loopc\n    rev: v0.1.0\n    hooks:\n      - id: loopc-check\n"
WORKFLOW = "name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: []\n"
K8S = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with two plans, a pre-commit configuration, a CI
    workflow at the top, a gitignored plan and a hidden folder."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    shutil.copy(EXAMPLES[0], ws / "a.yaml")
    shutil.copy(ROOT / "golden" / "set_variable" / "assign" / "source.yaml", ws / "b.yaml")
    (ws / ".pre-commit-config.yaml").write_text(PRE_COMMIT)
    (ws / "ci.yml").write_text(WORKFLOW)
    (ws / "build").mkdir()
    shutil.copy(EXAMPLES[0], ws / "build" / "copy.yaml")
    (ws / ".gitignore").write_text("build/\n")
    monkeypatch.chdir(ws)
    return ws


def _invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_inventory_walks_like_check(workspace: Path) -> None:
    code, out, err = _invoke("inventory", "--format", "json", ".")
    assert code == 0, out + err
    inv = [Path(p["path"]).name for p in json.loads(out)["plans"]]
    assert inv == ["a.yaml", "b.yaml"]
    code, out, _ = _invoke("check", "--no-cache", "--format", "json", ".")
    assert [Path(f["path"]).name for f in json.loads(out)["files"]] == inv
    code, out, err = _invoke("inventory", ".")
    assert "rejected 0" in out and "pre-commit" not in out and "ci.yml" not in out and "copy.yaml" not in out
    assert "skipped ./ci.yml: not a loop.plan/v1 plan" in err


def test_inventory_honours_configuration_and_exclude(workspace: Path) -> None:
    (workspace / ".loopc.toml").write_text('exclude = ["b.yaml"]\n')
    code, out, _ = _invoke("inventory", "--format", "json", ".")
    assert code == 0 and [Path(p["path"]).name for p in json.loads(out)["plans"]] == ["a.yaml"]
    code, out, _ = _invoke("inventory", "--format", "json", "--exclude", "a.yaml", ".")
    assert code == 0 and json.loads(out)["plans"] == []


def test_inventory_exit_status(workspace: Path) -> None:
    # a profile verdict (durable_orchestration, blockers listed) is not an error
    code, out, _ = _invoke("inventory", "a.yaml")
    assert code == 0 and "durable_orchestration" in out and "not bounded_atomic" in out
    (workspace / "broken.yaml").write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\n")
    code, out, _ = _invoke("inventory", ".")
    assert code == 1 and "rejected 1" in out
    code, _, err = _invoke("inventory", ".", "missing.yaml")
    assert code == 2 and "missing.yaml" in err  # 2 wins
    (workspace / "empty").mkdir()
    assert _invoke("inventory", "empty")[0] == 2  # like check: no YAML file found


def test_named_non_plan_files_get_one_warning(workspace: Path) -> None:
    """pre-commit names every file its `files:` pattern matches."""
    (workspace / "k8s.yaml").write_text(K8S)
    names = [".pre-commit-config.yaml", "ci.yml", "k8s.yaml"]
    code, out, _ = _invoke("check", "--no-cache", "--format", "json", *names, "a.yaml")
    assert code == 0, out
    files = {Path(f["path"]).name: f["diagnostics"] for f in json.loads(out)["files"]}
    for n in names:
        (d,) = files[n]
        assert (d["code"], d["severity"], d["line"]) == ("LP1014", "warning", 1), d
        assert "--exclude" in d["message"] and "not a loop.plan/v1 plan" in d["message"]
    code, out, _ = _invoke("check", "--no-cache", "ci.yml")
    assert code == 0 and out.count("LP1014") == 1 and "LP2006" not in out
    # the configuration applies as to any warning
    assert _invoke("check", "--no-cache", "--warnings-as-errors", "ci.yml")[0] == 1
    (workspace / ".loopc.toml").write_text('disable = ["LP1014"]\n')
    code, out, _ = _invoke("check", "--no-cache", "ci.yml")
    assert code == 0 and "LP1014" not in out
    assert _invoke("check", "--no-cache", "--exclude", "ci.yml", "ci.yml", "a.yaml")[0] == 0


def test_inventory_named_non_plan_warns_and_lists_nothing(workspace: Path) -> None:
    code, out, err = _invoke("inventory", "--format", "json", "ci.yml", "a.yaml")
    assert code == 0
    assert [Path(p["path"]).name for p in json.loads(out)["plans"]] == ["a.yaml"]
    assert err.count("LP1014") == 1


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: loop.plan/v2\nkind: PlanVersion\n",  # wrong version: LP2002, checked strictly
        "# my plan\napiVersion: loop.plan/v1\nkind: PlanVersion\n",  # comment first: LP1009
        "kind: PlanVersion\n",
        "apiVersoin: loop.plan/v1\n",
        "entry: start\nnodes: []\n",
        '{"apiVersion": "loop.plan/v1", "kind": "PlanVersion"}\n',
        "",
        "# nothing yet\n",
        "apiVersion: loop.plan/v1\n\xff",
    ],
)
def test_plan_like_files_are_checked_strictly(text: str, tmp_path: Path) -> None:
    data = text.encode("latin-1")
    assert plan_like(data)
    f = tmp_path / "p.yaml"
    f.write_bytes(data)
    code, out, _ = _invoke("check", "--no-cache", "--format", "json", str(f))
    codes = [d["code"] for d in json.loads(out)["files"][0]["diagnostics"]]
    assert code == 1 and codes and "LP1014" not in codes, codes


@pytest.mark.parametrize("text", [PRE_COMMIT, WORKFLOW, K8S, "[1, 2]\n", "just text\n", '{"a": 1}\n'])
def test_non_plans(text: str) -> None:
    assert not plan_like(text.encode())


def test_every_repository_plan_is_plan_like() -> None:
    from conftest import REPOSITORY_PLANS

    assert all(plan_like(p.read_bytes()) for p in REPOSITORY_PLANS)
