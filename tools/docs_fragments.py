"""Docs text that restates a declaration, generated between markers
(docs/architecture.md#regeneration); ``python tools/regen.py`` rewrites it.

In a page under ``docs/``, a fragment is written as

    <!-- regen:NAME -->generated text<!-- /regen:NAME -->

(inline, or with the text on lines of its own); the text between the two
markers is what :data:`FRAGMENTS` renders for ``NAME``, and nothing else in
the page is touched.  Markdown renders neither marker.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

_MARKED = re.compile(r"(<!-- regen:([a-z0-9-]+) -->)(.*?)(<!-- /regen:\2 -->)", re.S)


def _latest() -> int:
    from loopc.ir.versions import LATEST

    return LATEST


def _range() -> str:
    return f"v1–v{_latest()}"


def _envelopes() -> str:
    return f"`loop.plan.artifact/v1`…`v{_latest()}`"


def _numbers() -> str:
    return f"1…{_latest()}"


def _schema_files() -> str:
    return f"`docs/schema/loop.plan.artifact.v1.schema.json` … `v{_latest()}`"


def features_by_version() -> dict[int, list[str]]:
    """Every feature of the artifact surface newer than v1, by the version
    that introduced it: fields, union variants, alternatives, enum values,
    type kinds and reference roots, named by the surface definition
    (:data:`loopc.ir.surface.DEFS`) that holds them."""
    from loopc.ir import surface
    from loopc.kinds.spec import F, Arr, ByType, InstrArr, MapOf, Obj, Str, Tagged, TypeDesc

    found: dict[int, set[str]] = defaultdict(set)
    for name, spec in surface.DEFS.items():
        todo: list[tuple[object, str]] = [(spec, f"`{name}`")]
        while todo:
            s, at = todo.pop()
            if isinstance(s, F):
                if s.since > 1:
                    found[s.since].add(at)
                todo.append((s.spec, at))
            elif isinstance(s, Obj):
                todo.extend((f, f"{at[:-1]}.{k}`") for k, f in s.fields.items())
            elif isinstance(s, Tagged):
                for tag, (obj, since) in s.variants.items():
                    if since > 1:
                        found[since].add(f"{at[:-1]}.{s.tag}` `{tag}`")
                    todo.append((obj, at))
                todo.extend((f, f"{at[:-1]}.{k}`") for k, f in s.common.items())
            elif isinstance(s, ByType):
                for alt, (a, since) in s.alts.items():
                    if since > 1:
                        found[since].add(f"{at} as {alt}")
                    todo.append((a, at))
            elif isinstance(s, Arr):
                todo.append((s.items, at))
            elif isinstance(s, MapOf):
                todo.append((s.values, at))
            elif isinstance(s, Str) and s.enum:
                for v, since in s.enum.items():
                    if since > 1:
                        found[since].add(f"{at} `{v}`")
            elif isinstance(s, InstrArr):
                for k, since in s.kinds.items():
                    if since > 1:
                        found[since].add(f"type kind `{k}`")
                for k, since in s.roots.items():
                    if since > 1:
                        found[since].add(f"reference root `{k}`")
            elif isinstance(s, TypeDesc):
                for k, since in s.kinds.items():
                    if since > 1:
                        found[since].add(f"type kind `{k}`")
    return {v: sorted(found[v]) for v in sorted(found)}


def _version_table() -> str:
    from loopc.ir.versions import VERSIONS

    feats = features_by_version()
    rows = [
        "",
        "| version | introduces (anywhere in the artifact; generated from the declarations) |",
        "|---|---|",
        "| v1 | everything not listed below |",
    ]
    rows += [f"| v{v} | {', '.join(feats.get(v, [])) or '—'} |" for v in VERSIONS if v > 1]
    return "\n".join(rows) + "\n"


def _instr_paths(spec: object, at: str, out: list[str]) -> None:
    """The paths inside a config's wire spec that hold an instruction tree,
    in declaration order (``[*]`` an array item, ``.*`` a map value)."""
    from loopc.kinds.spec import F, Arr, ByType, MapOf, Obj, Ref, Tagged

    if isinstance(spec, F):
        _instr_paths(spec.spec, at, out)
    elif isinstance(spec, Obj):
        for k, f in spec.fields.items():
            _instr_paths(f, f"{at}.{k}" if at else k, out)
    elif isinstance(spec, Tagged):
        for k, f in spec.common.items():
            _instr_paths(f, f"{at}.{k}", out)
        for obj, _ in spec.variants.values():
            _instr_paths(obj, at, out)
    elif isinstance(spec, ByType):
        for alt, _ in spec.alts.values():
            _instr_paths(alt, at, out)
    elif isinstance(spec, Arr):
        _instr_paths(spec.items, at + "[*]", out)
    elif isinstance(spec, MapOf):
        _instr_paths(spec.values, at + ".*", out)
    elif isinstance(spec, Ref) and spec.name == "Instr" and at not in out:
        out.append(at)


def _instr_places() -> str:
    from loopc.kinds import KINDS

    parts = []
    for op, kind in KINDS.items():
        paths: list[str] = []
        _instr_paths(kind.wire, "", paths)
        if paths:
            parts.append(f"`{op}` `{' '.join(paths)}`")
    return "; ".join(parts)


def _node_kinds_table() -> str:
    """docs/reference.md#nodes: each kind's config key and ports, from its
    declaration (:class:`loopc.kinds.base.Kind`)."""
    from loopc.kinds import KINDS

    authored = {"ports": "one per case, plus the default", "branches": "one per branch key"}
    rows = ["", "| `type` | config key | source ports | target ports |", "|---|---|---|---|"]
    for k in KINDS.values():
        p = k.ports
        if p.authored:
            sources = authored[p.authored]
        else:
            names = [f"`{n}`" + (f" (with `{p.conditional[n]}`)" if n in p.conditional else "") for n in p.fixed]
            sources = ", ".join(names) or "none"
        targets = ", ".join(f"`{t}`" for t in p.targets)
        rows.append(f"| `{k.name}` | `{k.config_key}` | {sources} | {targets} |")
    return "\n".join(rows) + "\n"


def _md(text: str) -> str:
    """``text`` safe inside a markdown table cell."""
    return text.replace("|", "\\|")


def _shape(spec: object, floor: int = 1) -> str:
    """A wire spec (:mod:`loopc.kinds.spec`) in the words of docs/ir.md:
    ``instr``, ``Contract``, ``field → instr``, literal choices, bounds, and
    nested objects and unions, with the version of every part newer than
    ``floor`` (the version of what holds it)."""
    from loopc.kinds.spec import F, Arr, Bool, ByType, Int, MapOf, Obj, Ref, Str, Tagged

    def newer(n: int) -> str:
        return f" (v{n})" if n > floor else ""

    if isinstance(spec, F):
        return _shape(spec.spec, floor)
    if isinstance(spec, Ref):
        return "instr" if spec.name == "Instr" else spec.name
    if isinstance(spec, MapOf):
        return f"field → {_shape(spec.values, floor)}"
    if isinstance(spec, Str):
        if spec.enum:
            return " | ".join(f"`{v}`" + newer(n) for v, n in spec.enum.items())
        return "string"
    if isinstance(spec, Int):
        return f"{spec.minimum}..{spec.maximum}"
    if isinstance(spec, Bool):
        return "`true`" if spec.const is True else "boolean"
    if isinstance(spec, Arr):
        at_least = f", ≥ {spec.min_items}" if spec.min_items else ""
        return f"[{_shape(spec.items, floor)}…{at_least}]"
    if isinstance(spec, Obj):
        return "{" + ", ".join(_member(k, f, floor) for k, f in spec.fields.items()) + "}"
    if isinstance(spec, Tagged):
        alts = []
        for tag, (obj, since) in spec.variants.items():
            fields = {**spec.common, **obj.fields}
            inner = [f'"{spec.tag}": "{tag}"'] + [_member(k, f, max(floor, since)) for k, f in fields.items()]
            alts.append("{" + ", ".join(inner) + "}" + newer(since))
        return " or ".join(alts)
    if isinstance(spec, ByType):
        return " or ".join(_shape(a, max(floor, n)) + newer(n) for a, n in spec.alts.values())
    return type(spec).__name__


def _member(name: str, f: object, floor: int = 1) -> str:
    """One config member: ``name`` (its version when newer than ``floor``,
    its shape, ``optional``)."""
    from loopc.kinds.spec import F

    assert isinstance(f, F)
    marks = [f"v{f.since}"] if f.since > floor else []
    marks += [_shape(f.spec, max(floor, f.since))] + ([] if f.required else ["optional"])
    return f"`{name}` ({', '.join(marks)})"


def _node_configs_table() -> str:
    """docs/ir.md#node-configs: each opcode's config members with their
    shape, the version that introduced them and whether they are optional,
    and its cross-field rules, from the kinds' wire declarations."""
    from loopc.kinds import KINDS

    rows = ["", "| op | `config` members | rules |", "|---|---|---|"]
    for op, k in KINDS.items():
        head = f"`{op}`" + (f" (v{k.since})" if k.since > 1 else "")
        members = "; ".join(_member(n, f, k.since) for n, f in k.wire.fields.items())
        rules = "; ".join(msg for msg, _ in k.wire.checks) or "—"
        rows.append(f"| {head} | {_md(members)} | {_md(rules)} |")
    return "\n".join(rows) + "\n"


def _port_outputs_table() -> str:
    """docs/reference.md#nodes: what an edge leaving each port reads as
    ``output.*``, from each kind's :attr:`loopc.kinds.base.Ports.outputs`
    (ports with the same text share a row)."""
    from loopc.kinds import KINDS

    rows = ["", "| node | port | `output.*` |", "|---|---|---|"]
    for k in KINDS.values():
        by_text: dict[str, list[str]] = {}
        for port, what in k.ports.outputs.items():
            by_text.setdefault(what, []).append(port)
        for what, ports in by_text.items():
            names = " / ".join(p if p.startswith("<") else f"`{p}`" for p in ports)
            rows.append(f"| `{k.name}` | {names} | {_md(what)} |")
    return "\n".join(rows) + "\n"


def _op_list() -> str:
    """The opcodes by the artifact version that introduced them."""
    from loopc.kinds import KINDS

    by: dict[int, list[str]] = defaultdict(list)
    for op, k in KINDS.items():
        by[k.since].append(op)
    return ", ".join(f"`{' '.join(ops)}` (v{v})" for v, ops in sorted(by.items()))


def _source_port_order() -> str:
    """docs/ir.md: each opcode's source ports in the order it lists them."""
    from loopc.kinds import KINDS

    authored = {
        "ports": "the case ports in case order then the default port",
        "branches": "the branches in authored order",
    }
    parts = []
    for op, k in KINDS.items():
        p = k.ports
        if p.authored:
            parts.append(f"`{op}` {authored[p.authored]}")
        elif not p.fixed:
            parts.append(f"`{op}` none")
        else:
            names = [f"[{n}]" if n in p.conditional else n for n in p.fixed]
            cond = "".join(f" (`{n}` exactly when `config.{c}` exists)" for n, c in p.conditional.items())
            parts.append(f"`{op}` `{' '.join(names)}`{cond}")
    return "; ".join(parts)


def _rendered_fields() -> str:
    """The config fields whose value the runtime renders as text
    (:attr:`loopc.kinds.base.SourceField.render`)."""
    from loopc.kinds import KINDS

    names = [f"`{op}` `{key}`" for op, k in KINDS.items() for key, f in k.source.items() if f.render]
    return _and(names)


def _template_keys() -> str:
    """The config keys written as templates (form ``template``), by key."""
    from loopc.kinds import KINDS

    keys: list[str] = []
    for k in KINDS.values():
        for key, f in k.source.items():
            name = f"`{k.config_key}.{key}`"
            if f.form == "template" and name not in keys:
                keys.append(name)
    return _and(keys)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


#: ``<where>`` rows of evaluations that are not one config field: the entry and
#: edge bindings, and the value maps and cases of a kind (docs/conformance.md)
_WHERE_FIXED = (("entry", "the entry binding"), ("edge '<edge>'", "an edge `bind` (also into `continue`/`break`)"))
_WHERE_MAPS = {
    "set_variable": ("set_variable '<node>' <field>", "one assignment"),
    "switch": ("switch '<node>' case '<port>'", "a case's `when`"),
    "join": ("join '<node>' merge", "a join's `merge`"),
    "loop": ("loop '<node>' init", "a loop's `init`"),
}


def _where_labels(op: str) -> list[str]:
    """How the runtime names each config field of ``op`` that holds an
    instruction: its key; a field inside a union by the union's key
    (``workScope``), inside a plain object by its own (``allowedResponders``)."""
    from loopc.kinds import KINDS
    from loopc.kinds.spec import F, Obj

    labels: list[str] = []
    for key, f in KINDS[op].wire.fields.items():
        paths: list[str] = []
        _instr_paths(f, key, paths)
        if not paths:
            continue
        spec = f.spec if isinstance(f, F) else f
        if isinstance(spec, Obj):
            labels += [p.rsplit(".", 1)[-1] for p in paths]
        else:
            labels.append(key)
    return labels


def _where_table() -> str:
    """docs/conformance.md: every ``<where>`` a run-time error names, with the
    config fields of each kind from its wire declaration (an approval's are
    the fields its request is built from,
    :func:`loopc.interpreter.attempts.declared_request`)."""
    from loopc.kinds import KINDS

    rows = ["", "| where | what |", "|---|---|"]
    rows += [f"| `{w}` | {what} |" for w, what in _WHERE_FIXED]
    for op in KINDS:
        if op in _WHERE_MAPS:
            w, what = _WHERE_MAPS[op]
            rows.append(f"| `{w}` | {what} |")
            continue
        labels = _where_labels(op)
        if len(labels) == 1:
            rows.append(f"| `{op} '<node>' {labels[0]}` | its `{labels[0]}` |")
        elif labels:
            names = [f"`{x}`" for x in labels]
            rows.append(f"| `{op} '<node>' <field>` | `<field>` is {', '.join(names[:-1])} or {names[-1]} |")
    return "\n".join(rows) + "\n"


def _config_classes() -> str:
    """docs/api.md: the typed IR's config class of each opcode with its
    members (:data:`loopc.ir.model.CONFIG_CLASSES`)."""
    import attrs

    from loopc.ir.model import configs

    nested = {"work_scope": configs.WorkScope, "related_scopes": configs.RelatedScopes, "work_items": configs.WorkItems}
    out = []
    for cls in configs.CONFIG_CLASSES.values():
        members = []
        for a in attrs.fields(cls):
            codec = a.metadata.get("codec")
            inner = nested.get(codec)
            if inner is not None:
                members.append(f"{a.name}: {inner.__name__}({', '.join(x.name for x in attrs.fields(inner))})")
            elif codec == "cases":
                sc = configs.SwitchCase
                members.append(f"{a.name}: ({sc.__name__}({', '.join(x.name for x in attrs.fields(sc))}), ...)")
            else:
                members.append(a.name)
        out.append(f"`{cls.__name__}({', '.join(members)})`")
    return ", ".join(out)


def _catalog_table() -> str:
    """docs/plan.md#built-in-catalog: each action type's descriptor
    (:func:`loopc.plan.builtin.builtin_descriptors`); action types with the
    same values share a row, in catalog order."""
    from loopc.plan.builtin import builtin_descriptors

    def row(d: object) -> tuple[str, ...]:
        lock = d.lock_plan_contract  # type: ignore[attr-defined]
        owner = d.effect_owner  # type: ignore[attr-defined]
        idem = d.idempotency_policy  # type: ignore[attr-defined]
        classes = ", ".join(f"`{c.value}`" for c in lock.resource_classes) or "none"
        return (
            d.execution_class.value,  # type: ignore[attr-defined]
            d.transaction_policy.value,  # type: ignore[attr-defined]
            d.replay_policy.value,  # type: ignore[attr-defined]
            f"{lock.kind.value}, {classes}",
            owner.kind.value + (f" `{owner.owner}`" if owner.owner else ""),
            f"({', '.join(k.value for k in idem.key_shape)}) / {idem.scope.value}",
            d.output_durability.value,  # type: ignore[attr-defined]
        )

    groups: dict[tuple[str, ...], list[str]] = {}
    for action, (desc, _) in builtin_descriptors().items():
        groups.setdefault(row(desc), []).append(action)
    head: tuple[str, ...] = ("ExecutionClass", "TransactionPolicy", "ReplayPolicy", "LockPlanContract")
    head += ("EffectOwner", "IdempotencyPolicy", "OutputDurability")
    rows = ["", "| action type | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for values, actions in groups.items():
        rows.append(f"| {' '.join(f'`{a}`' for a in actions)} | " + " | ".join(values) + " |")
    return "\n".join(rows) + "\n"


def _retry_kinds() -> str:
    """The node kinds that accept ``retry`` (:attr:`loopc.kinds.base.Kind.retry`)."""
    from loopc.kinds import KINDS

    return _and([f"`{op}`" for op, k in KINDS.items() if k.retry])


def _no_retry_kinds() -> str:
    """The node kinds that take no ``retry`` (one attempt per activation)."""
    from loopc.kinds import KINDS

    return ", ".join(op for op, k in KINDS.items() if not k.retry)


def _pure_compute_kinds() -> str:
    """docs/plan.md: the pure control-flow kinds (effect class ``none``)
    other than ``end``, whose step is ``PureCompute`` or folded."""
    from loopc.kinds import tables

    return " ".join(f"`{op}`" for op in tables().control_ops if op != "end")


_STAGE = re.compile(r"^# Stage (\d+): (.+)$", re.M)


def _scenario_table() -> str:
    """docs/conformance.md#implementing-a-runtime: each golden scenario of
    the kit with the stage it belongs to and what it proves, read from its
    ``# Stage N: ...`` comment line; ordered by stage, then name.  A
    scenario without that line is a ``ValueError`` naming it."""
    from loopc.conformance import SCENARIO_DIR, scenarios

    rows = []
    for sc in scenarios(SCENARIO_DIR):
        path = Path(sc)
        m = _STAGE.search(path.read_text(encoding="utf-8"))
        if m is None:
            raise ValueError(f"{path.name}: no '# Stage N: what it proves' line")
        rows.append((int(m.group(1)), path.stem, m.group(2).strip()))
    out = ["", "| stage | scenario | proves |", "|---|---|---|"]
    out += [f"| {stage} | `{name}` | {_md(proves)} |" for stage, name, proves in sorted(rows)]
    return "\n".join(out) + "\n"


#: fragment name -> its text
FRAGMENTS: dict[str, Callable[[], str]] = {
    "artifact-versions": _range,
    "artifact-envelopes": _envelopes,
    "artifact-version-numbers": _numbers,
    "artifact-schema-files": _schema_files,
    "artifact-versions-table": _version_table,
    "config-instruction-places": _instr_places,
    "node-kinds-table": _node_kinds_table,
    "node-configs-table": _node_configs_table,
    "port-outputs-table": _port_outputs_table,
    "op-list": _op_list,
    "source-port-order": _source_port_order,
    "rendered-fields": _rendered_fields,
    "template-keys": _template_keys,
    "where-table": _where_table,
    "config-classes": _config_classes,
    "catalog-table": _catalog_table,
    "retry-kinds": _retry_kinds,
    "no-retry-kinds": _no_retry_kinds,
    "pure-compute-kinds": _pure_compute_kinds,
    "scenario-table": _scenario_table,
}


def fragment_files(docs: Path = DOCS) -> tuple[dict[Path, bytes], list[str]]:
    """Every page under ``docs`` that holds a fragment, with its fragments
    rendered, and the errors (an unknown fragment name)."""
    files: dict[Path, bytes] = {}
    errors: list[str] = []
    for page in sorted(docs.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if "<!-- regen:" not in text:
            continue

        def fill(m: re.Match[str], page: Path = page) -> str:
            render = FRAGMENTS.get(m.group(2))
            if render is None:
                errors.append(f"{page.relative_to(docs.parent)}: unknown fragment {m.group(2)!r}")
                return m.group(0)
            try:
                return m.group(1) + render() + m.group(4)
            except ValueError as exc:  # a declaration the fragment cannot read: reported, the text kept
                errors.append(f"{page.relative_to(docs.parent)}: fragment {m.group(2)!r}: {exc}")
                return m.group(0)

        files[page] = _MARKED.sub(fill, text).encode("utf-8")
    return files, errors
