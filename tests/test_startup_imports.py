"""The one-file path of ``loopc check`` imports only what it uses (issue 26,
item 2): no language server, interpreter, plan, rich or jsonschema modules;
lark only when an expression is more than a bare dotted path; wcwidth only
for a non-ASCII source line shown in an excerpt.  The import *set* is
asserted, never the time (benchmarks/startup.py measures that)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Runs the console-script entry point in a fresh interpreter on argv and
# (importing json only then) prints the top-level names (and loopc subpackages) it imported.
_PROBE = """
import sys
sys.argv = ["loopc"] + sys.argv[1:]
from loopc.cli import main  # the console script's entry point
try:
    main()
except SystemExit as e:
    code = e.code
else:
    code = 0
mods = sorted(sys.modules)
import json
import os
print(json.dumps({"code": code, "top": sorted({m.split(".")[0] for m in mods}),
                  "loopc": [m for m in mods if m.startswith("loopc.")]}), file=sys.__stderr__)
"""

#: Never on the one-file check path, whatever the plan holds.
NEVER = {"pygls", "lsprotocol", "jsonschema", "rich", "networkx", "cattrs", "pytest", "hypothesis"}
#: loopc subpackages and modules the check path does not use.
NEVER_LOOPC = (
    "loopc.lsp",
    "loopc.interpreter",
    "loopc.plan",
    "loopc.cli.run_commands",
    "loopc.cli.plan_commands",
    "loopc.cli.lsp_command",
    "loopc.cli.graph",
    "loopc.cli.fmt",
    "loopc.cli.ir_commands",
    "loopc.cli.completion",
    "loopc.format",
)


def _imports(args: list[str], tmp_path: pathlib.Path) -> dict[str, Any]:
    env = {
        "LOOPC_CACHE_DIR": str(tmp_path / "cache"),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONDONTWRITEBYTECODE": "1",
        "NO_COLOR": "1",
    }
    r = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    last = r.stderr.strip().splitlines()[-1]
    out: dict[str, Any] = json.loads(last)
    return out


def _check(out: dict[str, Any], *, extra: frozenset[str] = frozenset()) -> set[str]:
    top = set(out["top"])
    loopc = out["loopc"]
    assert not (top & (NEVER | extra)), sorted(top & (NEVER | extra))
    bad = [m for m in loopc if m.startswith(NEVER_LOOPC)]
    assert not bad, bad
    return top


PATHS_ONLY = ROOT / "examples" / "set_variable_timer.yaml"  # every expression a bare dotted path
WITH_CONDITION = ROOT / "examples" / "wait_timeout.yaml"  # `condition: "run.state.window_open == true"`


@pytest.mark.parametrize("cache", [["--no-cache"], []], ids=["no-cache", "cache"])
def test_check_of_a_paths_only_plan_imports_neither_lark_nor_wcwidth(tmp_path: pathlib.Path, cache: list[str]) -> None:
    out = _imports(["check", *cache, str(PATHS_ONLY)], tmp_path)
    assert out["code"] == 0
    # no attrs class is built on the path (loopc.value), and the plain form (no click) leaves
    # inspect, pkgutil and tempfile unimported too (a miss writes its entry with os.open)
    # and no OpenSSL: the cache hashes its few kilobytes with CPython's own SHA-256 (loopc.hashing);
    # a clean file's entry is written and read without json
    plain = (
        frozenset()
        if cache
        else frozenset({"inspect", "pkgutil", "tempfile", "shutil", "random", "hashlib", "_hashlib", "hmac", "json"})
    )
    top = _check(out, extra=frozenset({"lark", "wcwidth", "attr", "attrs"}) | plain)
    assert ("click" in top) == bool(cache) and "loopc" in top  # the plain form runs without click
    if not cache:  # the second run is a cache hit: no pass runs, so no pass module is imported
        # (not even the YAML parser or the pipeline), and nothing is written (tempfile)
        out = _imports(["check", *cache, str(PATHS_ONLY)], tmp_path)
        assert out["code"] == 0
        _check(
            out, extra=frozenset({"lark", "wcwidth", "ruamel", "_ruamel_yaml", "tempfile", "hashlib", "hmac", "json"})
        )
        assert not [
            m
            for m in out["loopc"]
            if m.startswith(("loopc.compiler", "loopc.analyzer", "loopc.pipeline", "loopc.kinds", "loopc.ir"))
        ], out["loopc"]


#: Standard-library modules the clean one-file path (``--no-cache``) leaves
#: unimported: each is used only for a diagnostic's text, a crash report, the
#: lark grammar, the compile or the cache (``hashlib``).
CLEAN_PATH_NEVER = {"json", "difflib", "traceback", "pathlib", "hashlib", "urllib", "textwrap"}


def _bare_interpreter_modules(tmp_path: pathlib.Path) -> set[str]:
    """Top-level modules a bare interpreter of this environment imports (site hooks may add some)."""
    r = subprocess.run(
        [sys.executable, "-c", "import sys, json; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=120,
    )
    return set(json.loads(r.stdout)) - {"json"}  # json: this probe's own


def test_a_pyproject_that_names_no_loopc_key_is_not_parsed(tmp_path: pathlib.Path) -> None:
    """tomllib (and the datetime it imports) is loaded only for a
    ``pyproject.toml`` that may hold a ``loopc`` table; one that does is
    read as before."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "p.yaml").write_text(PATHS_ONLY.read_text("utf-8").replace("entry: remind", "entry: remindd"), "utf-8")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "loopc-plans"\n\n[tool.ruff]\nline-length = 99\n')
    out = _imports(["check", "--no-cache", "p.yaml"], tmp_path)
    assert out["code"] == 1
    _check(out, extra=frozenset({"tomllib", "tomli"}))
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.loopc]\nexclude = ["p.yaml"]\n')
    (tmp_path / "q.yaml").write_text(PATHS_ONLY.read_text("utf-8"), "utf-8")
    out = _imports(["check", "--no-cache", "."], tmp_path)  # p.yaml's error is excluded: the table was read
    assert out["code"] == 0 and "tomllib" in out["top"]


def test_a_clean_check_imports_no_diagnostic_only_module_and_not_the_compile(tmp_path: pathlib.Path) -> None:
    out = _imports(["check", "--no-cache", str(PATHS_ONLY)], tmp_path)
    assert out["code"] == 0
    never = CLEAN_PATH_NEVER - _bare_interpreter_modules(tmp_path)
    assert not set(out["top"]) & never, sorted(set(out["top"]) & never)
    assert "loopc.pipeline.compile" not in out["loopc"]


def test_check_of_a_plan_with_a_condition_imports_lark_but_not_the_rest(tmp_path: pathlib.Path) -> None:
    out = _imports(["check", "--no-cache", str(WITH_CONDITION)], tmp_path)
    assert out["code"] == 0
    top = _check(out, extra=frozenset({"wcwidth"}))
    assert "lark" in top


def test_a_tree_of_every_example_builds_no_attrs_class(tmp_path: pathlib.Path) -> None:
    """Switches (the condition prover), fan-outs, loops, joins: checking
    every example plan still imports no attrs (loopc.value)."""
    out = _imports(["check", "--no-cache", str(ROOT / "examples")], tmp_path)
    assert out["code"] == 0
    _check(out, extra=frozenset({"attr", "attrs"}))


def test_an_ascii_excerpt_does_not_import_wcwidth_but_a_non_ascii_one_does(tmp_path: pathlib.Path) -> None:
    src = PATHS_ONLY.read_text("utf-8").replace("entry: remind", "entry: remindd")
    (tmp_path / "ascii.yaml").write_text(src, "utf-8")
    out = _imports(["check", "--no-cache", "ascii.yaml"], tmp_path)
    assert out["code"] == 1
    _check(out, extra=frozenset({"lark", "wcwidth"}))
    (tmp_path / "wide.yaml").write_text(src.replace("entry: remindd", "entry: remindé"), "utf-8")
    out = _imports(["check", "--no-cache", "wide.yaml"], tmp_path)
    assert out["code"] == 1
    assert "wcwidth" in _check(out, extra=frozenset({"lark"}))


def test_version_imports_no_command_module(tmp_path: pathlib.Path) -> None:
    out = _imports(["--version"], tmp_path)
    assert out["code"] == 0
    loopc = out["loopc"]
    assert not [m for m in loopc if m.startswith("loopc.cli.") and m not in ("loopc.cli.main", "loopc.cli.iofail", "loopc.cli.gcpolicy")], (
        loopc
    )


def test_every_command_is_still_listed_and_loads_on_use() -> None:
    """The lazy group lists every command module's commands and loads a module on first use."""
    from click.testing import CliRunner

    from loopc.cli.main import _LAZY, cli

    out = CliRunner().invoke(cli, ["--help"]).output
    for name in _LAZY:
        assert f"\n  {name} " in out, name
        assert name in cli.commands


def test_importing_loopc_imports_no_submodule_and_every_public_name_loads() -> None:
    """``import loopc`` (done first by every ``loopc.*`` import, the command
    line's included) runs no pass module: the public names load on first use
    (``loopc.__getattr__``), ``from loopc import X`` included."""
    probe = (
        "import json, sys; import loopc; before = sorted(m for m in sys.modules if m.startswith('loopc'));"
        " top = sorted({m.split('.')[0] for m in sys.modules});"
        " from loopc import check_source, Diagnostic, kinds;"
        " names = {n: type(getattr(loopc, n)).__name__ for n in loopc.__all__};"
        " print(json.dumps({'before': before, 'top': top, 'names': names,"
        " 'same': check_source is loopc.pipeline.check_source, 'kinds': kinds.__name__}))"
    )
    r = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["before"] == ["loopc"]
    assert "attrs" not in out["top"] and "attr" not in out["top"]
    assert out["same"] and out["kinds"] == "loopc.kinds"
    assert set(out["names"]) == set(__import__("loopc").__all__)
    assert out["names"]["__version__"] == "str" and out["names"]["check_source"] == "function"
    import loopc

    with pytest.raises(AttributeError):
        loopc.no_such_name  # noqa: B018
    assert set(loopc.__all__) <= set(dir(loopc))


def test_version_builds_no_attrs_class(tmp_path: pathlib.Path) -> None:
    out = _imports(["--version"], tmp_path)
    assert out["code"] == 0
    assert "attr" not in out["top"] and "attrs" not in out["top"], out["top"]
    assert out["loopc"] == ["loopc.cli", "loopc.cli.gcpolicy", "loopc.cli.iofail", "loopc.cli.main"], out["loopc"]


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux fast path of the default cache folder")
@pytest.mark.parametrize("xdg", [None, "", "/tmp/xdg-cache", "relative/cache", "/tmp/xdg-cache/"])
@pytest.mark.parametrize("home", ["/home/someone", "/home/someone/", "/"])
def test_the_default_cache_folder_is_platformdirs_without_importing_it(
    monkeypatch: pytest.MonkeyPatch, xdg: str | None, home: str
) -> None:
    """A cached ``loopc check`` finds its default folder without importing
    platformdirs (~15 ms), and it is the folder platformdirs gives."""
    import platformdirs

    from loopc.cli import cache

    monkeypatch.delenv("LOOPC_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", home)
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert cache.linux_cache_home() is not None
    assert cache.default_dir() == os.path.join(platformdirs.user_cache_dir("loopc", appauthor=False), "check")


def test_a_cache_hit_in_the_default_folder_does_not_import_platformdirs(tmp_path: pathlib.Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}
    probe = _PROBE.replace(
        'print(json.dumps({"code"', 'print(json.dumps({"platformdirs": "platformdirs" in sys.modules, "code"'
    )
    for _ in range(2):  # a miss, then a hit
        r = subprocess.run(
            [sys.executable, "-c", probe, "check", str(PATHS_ONLY)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
        )
        out = json.loads(r.stderr.strip().splitlines()[-1])
        assert out["code"] == 0 and not out["platformdirs"], out
    assert (tmp_path / ".cache" / "loopc" / "check").is_dir()


def test_the_plain_form_check_paths_imports_no_click(tmp_path: pathlib.Path) -> None:
    """``loopc check PATH...`` (no option) runs without click, a miss and a
    cache hit alike; any option sends the command line through click."""
    for _ in range(2):  # a miss, then a cache hit
        out = _imports(["check", str(PATHS_ONLY)], tmp_path)
        assert out["code"] == 0
        assert "click" not in _check(out, extra=frozenset({"lark", "wcwidth"}))
    out = _imports(["check", "--exit-zero", str(PATHS_ONLY)], tmp_path)
    assert out["code"] == 0 and "click" in out["top"]


@pytest.mark.parametrize(
    "args",
    [
        ["check", "x"],
        ["check", "x", "y"],
        ["check", "check"],
    ],
)
def test_plain_check_paths_accepts_only_paths(args: list[str]) -> None:
    from loopc.cli import plain_check_paths

    assert plain_check_paths(args) == tuple(args[1:])


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["check"],
        ["fmt", "x"],
        ["check", "-"],
        ["check", "--", "x"],
        ["check", "x", "--no-cache"],
        ["check", "-h"],
        ["check", ""],
        ["--version"],
    ],
)
def test_plain_check_paths_leaves_everything_else_to_click(args: list[str]) -> None:
    from loopc.cli import plain_check_paths

    assert plain_check_paths(args) is None


def test_plain_check_paths_leaves_shell_completion_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    from loopc.cli import plain_check_paths
    from loopc.cli.completion import COMPLETE_VAR

    monkeypatch.setenv(COMPLETE_VAR, "bash_complete")
    assert plain_check_paths(["check", "x"]) is None


def test_the_click_command_defaults_are_the_plain_forms() -> None:
    """One table of defaults: every option of the click ``check`` command
    defaults to what :data:`loopc.cli.check.PLAIN` says, and PLAIN names
    exactly the command's options (so the plain form runs what click would)."""
    from loopc.cli.check import PLAIN
    from loopc.cli.check_command import check

    with check.make_context("check", ["x.yaml"]) as ctx:  # what click passes when no option is given
        params = dict(ctx.params)
    assert params.pop("paths") == ("x.yaml",)
    assert params == PLAIN


_SOURCES = {
    "clean.yaml": PATHS_ONLY.read_text("utf-8"),
    "bad.yaml": "apiVersion: loop.plan/v1\nkind: PlanVersion\nfoo: 1\n",
    "notaplan.yaml": "hello: world\n",
    "wide.yaml": PATHS_ONLY.read_text("utf-8").replace("entry: remind", "entry: remindé"),
}


@pytest.mark.parametrize(
    "paths",
    [["clean.yaml"], ["bad.yaml"], ["notaplan.yaml"], ["missing.yaml"], ["wide.yaml", "clean.yaml"], ["."],
     ["bad.yaml", "missing.yaml", "."]],
)
def test_the_plain_form_prints_and_exits_as_click_does(tmp_path: pathlib.Path, paths: list[str]) -> None:
    """Same stdout, stderr and exit status with and without click."""
    for name, text in _SOURCES.items():
        (tmp_path / name).write_text(text, "utf-8")
    runs = {}
    for how, entry in (("plain", "loopc.cli"), ("click", "loopc.cli.main")):
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1",
               "LOOPC_CACHE_DIR": str(tmp_path / f"cache-{how}")}
        code = f"import sys; sys.argv = ['loopc'] + sys.argv[1:]; from {entry} import main; main()"
        r = subprocess.run([sys.executable, "-c", code, "check", *paths], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=120)
        runs[how] = (r.returncode, r.stdout, r.stderr)
    assert runs["plain"] == runs["click"]
    assert "Traceback" not in runs["plain"][2]
