"""The syrupy extension for golden IR snapshots (loopc.testing.syrupy):
pretty JSON with the digest on disk, canonical-bytes comparison, a readable
diff on change, ``pytest --snapshot-update`` to accept."""

from __future__ import annotations


import pytest

from loopc.testing.syrupy import IRSnapshotExtension, pretty_snapshot, snapshot_diff

pytest_plugins = ["pytester"]

from conftest import ROOT
EXAMPLE = ROOT / "examples" / "wait_timeout.yaml"


@pytest.fixture()
def ir_snapshot(snapshot):
    return snapshot.use_extension(IRSnapshotExtension)  # what loopc.testing.syrupy.ir_snapshot is


def test_example_ir_is_pinned(ir_snapshot) -> None:
    # the committed file: tests/__snapshots__/test_syrupy_ext/test_example_ir_is_pinned.json
    assert EXAMPLE.read_text("utf-8") == ir_snapshot


def test_pretty_snapshot_shapes() -> None:
    from loopc.pipeline import compile_source

    res = compile_source(EXAMPLE.read_text("utf-8"))
    text = pretty_snapshot(res)
    assert text == pretty_snapshot(res.bytes) == pretty_snapshot(EXAMPLE.read_text("utf-8"))
    assert f'"digest": "{res.digest}"' in text and text.endswith("}\n")
    with pytest.raises(ValueError, match="does not compile"):
        pretty_snapshot("apiVersion: loop.plan/v1\nkind: PlanVersion\n")
    with pytest.raises(TypeError):
        pretty_snapshot(42)


# The user's test run is in-process: plugins of this environment that the
# example does not use stay off, so none warns about its own configuration
# (pytest-asyncio warns when its loop-scope option is unset, and the user's
# project has no ini file); a warning in the user's run fails the test.
_USER_RUN = ("-p", "no:cacheprovider", "-p", "no:asyncio")


def test_user_workflow_update_compare_and_diff(pytester: pytest.Pytester) -> None:
    plan = pytester.path / "plan.yaml"
    plan.write_text(EXAMPLE.read_text("utf-8"))
    pytester.makepyfile(
        test_user_ir_snapshot_example="""
        from pathlib import Path
        from loopc.testing.syrupy import IRSnapshotExtension

        def test_plan_ir(snapshot):
            src = (Path(__file__).parent / "plan.yaml").read_text()
            assert src == snapshot(extension_class=IRSnapshotExtension)
        """
    )
    r = pytester.runpytest(*_USER_RUN, "--snapshot-update")
    r.assert_outcomes(passed=1, warnings=0)
    (snap,) = (pytester.path / "__snapshots__").rglob("*.json")
    assert '"digest": "sha256:' in snap.read_text()
    pytester.runpytest(*_USER_RUN).assert_outcomes(passed=1, warnings=0)
    # whitespace in the stored file does not matter: canonical bytes are compared
    snap.write_text(snap.read_text().replace("\n", "\n  "))
    pytester.runpytest(*_USER_RUN).assert_outcomes(passed=1, warnings=0)
    # a changed plan fails with a line diff naming what changed
    plan.write_text(plan.read_text().replace("default: PT1H", "default: PT2H"))
    r = pytester.runpytest(*_USER_RUN)
    r.assert_outcomes(failed=1, warnings=0)
    assert "digest" in r.stdout.str()


LABELLED = ("  - id: deploy\n    type: fork\n", "  - id: deploy\n    type: fork\n    label: Deploy gate\n")


def _changes(lines: list[str]) -> list[str]:
    return [x for x in lines if x[:1] in "+-" and not x.startswith(("---", "+++"))]


def test_snapshot_diff_is_exactly_the_changed_lines() -> None:
    src = EXAMPLE.read_text("utf-8")
    assert LABELLED[0] in src
    old, new = pretty_snapshot(src), pretty_snapshot(src.replace(*LABELLED))
    lines = snapshot_diff(new, old.replace("\n", "\n  "))  # a re-indented stored file changes nothing
    assert lines[0].startswith("semantic digest unchanged (sha256:")
    assert _changes(lines) == ['+          "label": "Deploy gate",']
    moved = snapshot_diff(pretty_snapshot(src.replace("default: PT1H", "default: PT2H")), old)
    assert moved[0].startswith("semantic digest moved: sha256:") and " -> sha256:" in moved[0]
    assert snapshot_diff(old, old)[1:] == []


def test_user_failure_report_shows_exactly_the_change(pytester: pytest.Pytester) -> None:
    """A label-only change fails (the artifact bytes changed) with the
    digest verdict and only the changed line (syrupy's own differ showed a
    line that did not change)."""
    plan = pytester.path / "plan.yaml"
    plan.write_text(EXAMPLE.read_text("utf-8"))
    # (``pytest_plugins = ["loopc.testing.syrupy"]`` works too, but this
    # process imported the module already, which pytest warns about)
    pytester.makeconftest("from loopc.testing.syrupy import ir_snapshot  # noqa: F401\n")
    pytester.makepyfile(
        test_user_ir="""
        from pathlib import Path

        def test_plan_ir(ir_snapshot):
            assert (Path(__file__).parent / "plan.yaml").read_text() == ir_snapshot
        """
    )
    pytester.runpytest(*_USER_RUN, "--snapshot-update").assert_outcomes(passed=1, warnings=0)
    plan.write_text(plan.read_text().replace(*LABELLED))
    r = pytester.runpytest(*_USER_RUN, "--snapshot-no-colors")
    r.assert_outcomes(failed=1, warnings=0)
    report = [x[1:].strip() for x in r.outlines if x.startswith("E ")]
    assert any(x.startswith("semantic digest unchanged (sha256:") for x in report), r.outlines
    assert [x for x in report if x[:1] in "+-" and not x.startswith(("---", "+++"))] == [
        '+          "label": "Deploy gate",'
    ], report
    plan.write_text(plan.read_text().replace("default: PT1H", "default: PT2H"))
    r = pytester.runpytest(*_USER_RUN, "--snapshot-no-colors")
    assert any("semantic digest moved: sha256:" in x for x in r.outlines)
