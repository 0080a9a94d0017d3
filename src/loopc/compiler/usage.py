"""Unused declarations (docs/reference.md#contracts, docs/reference.md#run-state):

* LP3501 ``input.unused`` (warning): a required Plan input field that no
  reference reads (``run.input.<f>`` anywhere) and the entry node does not
  take by same-name pass-through — every invoker must supply a value that
  nothing uses;
* LP3502 ``state.never_read`` (warning): a Run state field that nothing
  reads (no ``run.state.<f>`` in any binding, configuration, condition or
  merge) and no ``set_variable`` writes — a dead declaration.  A field that
  is written but never read is not reported: the final Run state is part of
  what a Run records (journal, conformance expectations), so write-only
  state is an intended audit trail.

Runs after the analyzer, over the type pass's typed values; skipped when the
plan has errors, since a reference that did not type (a typo) would otherwise make
its field look unused.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from loopc.compiler.expr import ast as A
from loopc.compiler.model import Expr, Plan, Ref, SetVariable
from loopc.compiler.report import Reporter
from loopc.compiler.types import Type
from loopc.compiler.yamlnodes import YMap

__all__ = ["check_usage", "run_paths", "may_read_run"]


def run_paths(typed_values: Iterable[Any]) -> set[tuple[str, str]]:
    """``{("input", f), ("state", f)}`` for every ``run.input.f`` /
    ``run.state.f`` path inside the typed values (iterative walk over attrs
    objects, tuples, lists and mappings; each object visited once; static
    types and the attributes declared scalar (offsets, names, types) hold no
    path and are not walked)."""
    out: set[tuple[str, str]] = set()
    stack = list(typed_values)
    seen: set[int] = set()
    names = _ATTR_NAMES
    path_cls, template_cls, interp_cls = A.Path, A.TemplateAst, A.Interp
    while stack:
        v = stack.pop()
        cls = v.__class__
        if cls is path_cls:
            if v.root.startswith("run"):
                parts = (*v.root.split("."), *v.segments)
                if len(parts) >= 3 and parts[0] == "run" and parts[1] in ("input", "state"):
                    out.add((parts[1], parts[2]))
            continue
        if v is None or cls is str or cls is int or cls is bool or cls is float or cls is Type:
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if cls is template_cls:  # only its interpolations hold paths
            stack.extend(p.expr for p in v.parts if p.__class__ is interp_cls)
        elif cls is tuple or cls is list:
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (str, int, float)):
            continue
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
        else:
            attrs_of = names.get(cls)
            if attrs_of is None:
                fields = getattr(cls, "__value_fields__", None)
                attrs_of = names[cls] = tuple(
                    a.name for a in fields if a.type not in _SCALAR_FIELDS) if fields is not None else ()
            for a in attrs_of:
                stack.append(getattr(v, a, None))
    return out


def may_read_run(typed: Mapping[Any, Any]) -> Iterator[Any]:
    """The typed forms in ``typed`` (the type pass's model object → typed
    form, :attr:`~loopc.compiler.typecheck.TypeInfo.values`) that may hold a
    ``run.*`` path, for :func:`run_paths`: not those of a reference whose
    path does not start at ``run``, nor of an expression whose text does not
    spell ``run`` (templates are walked: their text may be long, their
    interpolations few)."""
    for obj, t in typed.items():
        cls = obj.__class__
        if cls is Ref:
            if obj.path[:1] != ("run",):
                continue
        elif cls is Expr and "run" not in obj.text:
            continue
        yield t


#: value class (:mod:`loopc.value`) -> the names of its attributes that may hold a typed value (run_paths)
_ATTR_NAMES: dict[type, tuple[str, ...]] = {}
#: annotations of value-class fields that hold no path (offsets, names, flags, static
#: types): not walked
_SCALAR_FIELDS = frozenset((
    "int", "str", "bool", "float", "Type", "Type | None", "int | None", "str | None",
    "tuple[int, ...]", "tuple[str, ...]",
))


def check_usage(plan: Plan, typed_values: Iterable[Any], entry_fields: Iterable[str],
                reporter: Reporter) -> None:
    """Report LP3501/LP3502 on ``plan`` (see the module docstring)."""
    if reporter.has_errors:
        return
    used = run_paths(typed_values)
    taken = set(entry_fields)
    src = plan.src if isinstance(plan.src, YMap) else None

    def at(section: str, name: str) -> Any:
        holder = src.get(section) if src is not None else None
        return (holder.key_node(name) if isinstance(holder, YMap) else None) or holder or src

    for name, fs in (plan.input or {}).items():
        if fs.required and ("input", name) not in used and name not in taken:
            reporter.report(
                "LP3501", at("input", name),
                f"required Plan input `{name}` is never used: nothing reads `run.input.{name}` and "
                f"the entry node does not declare `{name}` in its input; remove it, or make it "
                f"optional if invokers may still send it")
    written = {k for n in plan.nodes.values() if isinstance(n.config, SetVariable) for k in n.config.assign}
    for name in (plan.state or {}):
        if ("state", name) not in used and name not in written:
            reporter.report(
                "LP3502", at("state", name),
                f"Run state field `{name}` is never used: nothing reads `run.state.{name}` and no "
                f"set_variable writes it; remove it, or read it")
