"""Per-kind behaviour is looked up in tables keyed by kind, proved complete
against the registry here, so a kind without a handler fails at test time
(docs/architecture.md#add-a-node-kind); the kind-name dispatch sites that
remain outside ``src/loopc/kinds/`` are listed, each with its reason, in
tests/kind_dispatch_allowlist.toml."""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from loopc import value
from loopc import kinds
from loopc.compiler import schema_configs, scopemap, typecheck_nodes
from loopc.interpreter import engine
from loopc.ir import budget, lower
from loopc.kinds.base import SCOPES


def test_every_kind_has_exactly_one_interpreter_handler() -> None:
    acts = set(engine.ACTIVATION_HANDLERS)
    arrivals = set(engine.ARRIVAL_OPS)
    assert not acts & arrivals
    assert acts | arrivals == set(kinds.KINDS)
    for op, h in engine.ACTIVATION_HANDLERS.items():
        b = kinds.KINDS[op].behaviour
        assert h is getattr(engine.Engine, "_op_" + op, None) or (b is not None and h is engine.BEHAVIOUR_HANDLERS[b])
    # no handler is left behind by a kind that went (or was renamed)
    ops = {m[4:] for m in dir(engine.Engine) if m.startswith("_op_")}
    assert ops == {op for op in acts if hasattr(engine.Engine, "_op_" + op)}


def test_a_kind_without_a_handler_fails_when_the_engine_loads(monkeypatch: pytest.MonkeyPatch) -> None:

    t = kinds.tables()
    toy = t.kinds["fork"].evolve(name="toy_fork", config_key="toyFork")
    monkeypatch.setattr(engine, "kind_tables", lambda: t.evolve(kinds={**t.kinds, "toy_fork": toy}))
    with pytest.raises(ImportError, match=r"\['toy_fork'\] have no interpreter handler"):
        engine._activation_handlers()


def _toy_pass_kind(name: str = "toy_pass") -> kinds.Kind:
    from loopc.kinds.base import Kind, Ports
    from loopc.kinds.spec import Obj

    return Kind(name=name, config_key="toyPass", since=6, summary="Pass the token on.", source={}, wire=Obj({}),
                ports=Ports(fixed=("completed",)), behaviour="pass")


def test_a_kind_of_behaviour_pass_needs_no_handler(monkeypatch: pytest.MonkeyPatch) -> None:

    t = kinds.tables()
    monkeypatch.setattr(engine, "kind_tables", lambda: t.evolve(kinds={**t.kinds, "toy_pass": _toy_pass_kind()}))
    assert engine._activation_handlers()["toy_pass"] is engine.BEHAVIOUR_HANDLERS["pass"]


def test_behaviour_pass_needs_one_port_that_carries_nothing() -> None:

    k = _toy_pass_kind()
    with pytest.raises(ValueError, match="behaviour 'pass'"):
        k.evolve(ports=k.ports.evolve(fixed=("a", "b")))
    with pytest.raises(ValueError, match="unknown behaviour"):
        k.evolve(behaviour="sing")


def test_a_kind_of_generic_wire_fields_only_needs_no_ir_config_class(monkeypatch: pytest.MonkeyPatch) -> None:
    import attrs

    from loopc.ir.model import configs
    from loopc.kinds.spec import INSTR, F, Obj

    toy = _toy_pass_kind().evolve(wire=Obj({"note": F(INSTR, required=False, since=6)}))
    monkeypatch.setattr(configs, "KINDS", {**kinds.KINDS, "toy_pass": toy})
    cls = configs._generic_config("toy_pass")
    assert cls.__name__ == "ToyPassConfig" and cls.OP == "toy_pass" and issubclass(cls, configs.Config)
    assert [(a.name, a.metadata["wire"], a.metadata["codec"]) for a in attrs.fields(cls)] == [("note", "note", "instr")]
    assert cls().note is None
    # every registered kind has its IR config class, declared or derived
    assert set(configs.CONFIG_CLASSES) == set(kinds.KINDS)


def test_a_control_kind_needs_no_catalog_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind of pure control flow (effect class ``none``, no modes) gets the
    control descriptor from its declaration; any other kind must declare its
    descriptor, and the message says where."""

    from loopc.plan import builtin
    from loopc.plan.descriptor import ExecutionClass

    t = kinds.tables()
    noop = t.kinds["fork"].evolve(name="noop", config_key="noop", summary="Pass the token on.")
    poke = t.kinds["set_variable"].evolve(name="poke", config_key="poke")
    monkeypatch.setattr(builtin, "_kind_tables", lambda: t.evolve(kinds={**t.kinds, "noop": noop, "poke": poke}))
    desc, reasons = builtin._descriptor("noop")
    assert desc.execution_class is ExecutionClass.PURE_COMPUTE
    assert reasons["ExecutionClass"].startswith("pass the token on: pure computation")
    with pytest.raises(KeyError, match="'poke'.*effect class 'state'"):
        builtin._descriptor("poke")
    assert builtin.action_type("noop", {}) == "noop"


def test_a_kind_with_modes_names_the_mode_of_a_node() -> None:
    from loopc.plan.builtin import action_type

    assert action_type("send_message", {"completion": "callback"}) == "send_message.callback"
    assert action_type("send_message", {"completion": "sent"}) == "send_message.sent"
    assert action_type("wait", {"condition": ["ref", "boolean", "run.state.x"]}) == "wait.condition"
    assert action_type("wait", {"duration": "PT1S"}) == "wait.timer"
    for k in kinds.KINDS.values():
        assert bool(k.modes) == (k.mode_of is not None)


def test_a_kind_of_generic_fields_only_needs_no_model_class(monkeypatch: pytest.MonkeyPatch) -> None:

    from loopc.compiler import model

    t = kinds.tables()
    noop = t.kinds["wait"].evolve(name="no_op", config_key="noOp")  # wait's fields are all generic
    monkeypatch.setattr(kinds, "tables", lambda: t.evolve(kinds={**t.kinds, "no_op": noop}))
    cls = model._generic_class("no_op")
    assert cls.__name__ == "NoOp"
    assert {a.name for a in value.fields(cls)} == {"src", "condition", "duration", "timeout"}
    assert cls(duration="PT1S").duration == "PT1S" and cls().condition is None
    with pytest.raises(TypeError, match="'fork' has custom fields \\['branches'\\]"):
        model._generic_class("fork")
    assert set(model.CONFIG_CLASSES) == set(t.kinds)


def test_the_closing_keys_name_opened_scopes() -> None:
    """A join's forkId/fanOutId owners (Kind.closes) drive the analyzer's
    owner rules, its parallel scopes and the editor's value completion."""
    from loopc.analyzer.scope_frames import PARALLEL

    closes = kinds.tables().closes
    opened = {k.scope for k in kinds.KINDS.values()}
    assert closes and all(set(v) <= opened for v in closes.values())
    assert set(PARALLEL) == {s for v in closes.values() for s in v}
    with pytest.raises(ValueError, match="closes"):

        kinds.KINDS["join"].evolve(closes={"nope": ("fork",)})


def test_every_port_that_carries_its_kinds_own_output_has_its_function() -> None:
    """Per-port output contracts are declared on the kinds (Ports.carries);
    a kind whose ports carry ``own`` needs its function in the port table."""
    from loopc.compiler import ports

    own = {n for n, k in kinds.KINDS.items() if "own" in k.ports.carries.values()}
    assert set(ports._OWN_OUTPUTS) == own
    for k in kinds.KINDS.values():
        assert "failed" not in k.ports.carries  # always {code, detail}

    with pytest.raises(ValueError, match="carries its contract"):
        kinds.KINDS["wait"].evolve(ports=kinds.KINDS["wait"].ports.evolve(carries={"completed": "contract"})
        )


def test_each_pass_has_the_own_fields_of_exactly_the_kinds_with_custom_fields() -> None:
    """Generic fields need no per-pass code; a kind's custom fields
    (:attr:`loopc.kinds.Kind.custom_keys`) are read, typed, lowered and
    counted by the kind's entry in each pass's table.  A new kind (or a new
    custom field on a kind that had none) fails here until every pass has
    its entry, and a kind that lost its last custom field until its entries go."""
    custom = {n for n, k in kinds.KINDS.items() if k.custom_keys}
    valued = {n for n, k in kinds.KINDS.items() if k.custom_value_keys}
    # the schema pass's reader also checks the cross-field rules a kind
    # declares for editors (Kind.source_rules: wait's condition xor duration)
    ruled = {n for n, k in kinds.KINDS.items() if k.source_rules}
    assert set(schema_configs._Configs._config_builders) == custom | ruled
    assert set(lower._CUSTOM) == custom
    assert set(typecheck_nodes._BY_TYPE) == valued
    assert set(budget._CUSTOM) == valued


def test_scope_kinds_are_the_scopes_the_kinds_open() -> None:
    opened = {k.scope for k in kinds.KINDS.values()} - {"none"}
    assert set(scopemap.SCOPE_KINDS) == opened
    assert scopemap.SCOPE_KINDS == tuple(s for s in SCOPES if s != "none")


ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "loopc"
ALLOWLIST = ROOT / "tests" / "kind_dispatch_allowlist.toml"
ISINSTANCE_ALLOWLIST = ROOT / "tests" / "kind_isinstance_allowlist.toml"


@functools.cache
def _parsed(path: Path) -> tuple[str, ast.Module]:
    """A module's text and tree, read and parsed once per test session (the
    scans below share them)."""
    text = path.read_text(encoding="utf-8")
    return text, ast.parse(text)


def kind_name_sites(src: Path = SRC) -> Counter[str]:
    """``"module::scope"`` → how many string literals equal to a node kind name
    it holds, for every module under ``src`` outside ``kinds/`` (docstrings
    are not literals; ``scope`` is the dotted enclosing def/class, or
    ``<module>``)."""
    names = set(kinds.KINDS)
    # only a module that spells a kind name in quotes can hold such a literal
    # (parsing the others would cost most of this test's time)
    quoted = re.compile("[\"'](?:%s)[\"']" % "|".join(map(re.escape, names)))
    out: Counter[str] = Counter()
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        if rel.parts[0] == "kinds":
            continue
        text = path.read_text(encoding="utf-8")
        if quoted.search(text) is None:
            continue
        _, tree = _parsed(path)
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        todo: list[tuple[ast.AST, str]] = [(tree, "")]
        while todo:
            node, scope = todo.pop()
            for ch in ast.iter_child_nodes(node):
                s = scope
                if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    s = f"{scope}.{ch.name}" if scope else ch.name
                elif isinstance(ch, ast.Constant) and ch.value in names and id(ch) not in docs:
                    out[f"{rel.as_posix()}::{scope or '<module>'}"] += 1
                todo.append((ch, s))
    return out


def config_class_sites(src: Path = SRC) -> Counter[str]:
    """``"module::scope"`` → how many node config classes (``Join``,
    ``JoinConfig``, ... of :mod:`loopc.compiler.model` and
    :mod:`loopc.ir.model.configs`) its ``isinstance`` calls test, for every
    module under ``src`` outside ``kinds/`` and the two model modules."""
    from loopc.compiler import model
    from loopc.ir.model import configs

    names = {c.__name__ for c in (*model.CONFIG_CLASSES.values(), *configs.CONFIG_CLASSES.values())}
    # only a module that spells a config class name can test one (parsing the others costs the time)
    named = re.compile(r"\b(?:%s)\b" % "|".join(sorted(names)))
    out: Counter[str] = Counter()
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        if rel.parts[0] == "kinds" or rel.as_posix() in ("compiler/model.py", "ir/model/configs.py"):
            continue
        text = path.read_text(encoding="utf-8")
        if "isinstance" not in text or named.search(text) is None:
            continue
        todo: list[tuple[ast.AST, str]] = [(_parsed(path)[1], "")]
        while todo:
            node, scope = todo.pop()
            for ch in ast.iter_child_nodes(node):
                s = scope
                if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    s = f"{scope}.{ch.name}" if scope else ch.name
                elif (
                    isinstance(ch, ast.Call)
                    and isinstance(ch.func, ast.Name)
                    and ch.func.id == "isinstance"
                    and len(ch.args) == 2
                ):
                    t = ch.args[1]
                    n = sum(
                        (isinstance(e, ast.Name) and e.id in names)
                        or (isinstance(e, ast.Attribute) and e.attr in names)
                        for e in (t.elts if isinstance(t, ast.Tuple) else [t])
                    )
                    if n:
                        out[f"{rel.as_posix()}::{scope or '<module>'}"] += n
                todo.append((ch, s))
    return out


def allowlist(path: Path = ALLOWLIST) -> dict[str, tuple[str, int]]:
    """``"module::scope"`` → (its group, its count) from an allowlist file."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[str, tuple[str, int]] = {}
    for group, body in data.items():
        assert body["reason"].strip(), f"group {group} gives no reason"
        for site, v in body["sites"].items():
            assert site not in out, f"{site} listed twice"
            if isinstance(v, dict):
                assert v["why"].strip(), f"{site} gives no reason"
                v = v["n"]
            out[site] = (group, v)
    return out


def test_every_kind_name_site_outside_kinds_is_allowlisted() -> None:
    """A new string literal naming a node kind outside ``src/loopc/kinds/``
    fails here: declare the behaviour on the kind (a facet) or in a per-pass
    table keyed by kind, or list the site with its reason."""
    found = kind_name_sites()
    listed = allowlist()
    new = {s: n for s, n in found.items() if n > listed.get(s, ("", 0))[1]}
    assert not new, (
        f"kind-name sites not in tests/{ALLOWLIST.name} (or more than listed): {new}; "
        "list each under the group that gives its reason (a moved function: rename its entry)"
    )


def test_the_allowlist_lists_no_gone_site() -> None:
    """The allowlist shrinks with the sites: an entry whose count is now
    lower (a site moved to a facet or a table, or its function moved) fails."""
    found = kind_name_sites()
    stale = {s: (n, found.get(s, 0)) for s, (_, n) in allowlist().items() if found.get(s, 0) != n}
    assert not stale, f"tests/{ALLOWLIST.name} lists more sites than there are (listed, found): {stale}"


def test_every_isinstance_on_a_config_class_is_allowlisted() -> None:
    """``isinstance(node.config, Join)`` outside the kinds and the models is
    dispatch by kind too: a new one fails here, and one that went (or moved)
    fails until its entry is lowered (tests/kind_isinstance_allowlist.toml)."""
    found = config_class_sites()
    listed = allowlist(ISINSTANCE_ALLOWLIST)
    new = {s: n for s, n in found.items() if n > listed.get(s, ("", 0))[1]}
    assert not new, f"isinstance dispatch on config classes not in tests/{ISINSTANCE_ALLOWLIST.name}: {new}"
    stale = {s: (n, found.get(s, 0)) for s, (_, n) in listed.items() if found.get(s, 0) != n}
    assert not stale, f"tests/{ISINSTANCE_ALLOWLIST.name} lists more sites than there are (listed, found): {stale}"


def test_the_isinstance_scan_sees_a_new_site(tmp_path: Path) -> None:
    pkg = tmp_path / "loopc"
    (pkg / "kinds").mkdir(parents=True)
    (pkg / "kinds" / "x.py").write_text("isinstance(c, Join)\n")
    (pkg / "pass_.py").write_text(
        "def f(c):\n    return isinstance(c, (M.Join, Fork, int)) or isinstance(c, LoopConfig) or isinstance(c, str)\n"
    )
    assert config_class_sites(pkg) == Counter({"pass_.py::f": 3})


def test_the_scan_sees_a_new_dispatch_site(tmp_path: Path) -> None:
    pkg = tmp_path / "loopc"
    (pkg / "kinds").mkdir(parents=True)
    (pkg / "kinds" / "x.py").write_text('A = "loop"\n')
    (pkg / "pass_.py").write_text(
        '"""loop"""\n\n\ndef f(node):\n    """fan_out"""\n    return node.type == "loop" or node.op in ("wait", "other")\n'
    )
    assert kind_name_sites(pkg) == Counter({"pass_.py::f": 2})
