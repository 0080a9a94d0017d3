"""Source map of a typed model: model object / field → YAML node → span
(docs/api.md#source-map).

Every object of :mod:`loopc.compiler.model` keeps ``src``, the YAML node it
was built from; this module is the one place that knows which YAML key each
model *field* was read from (``Edge.from_node`` is ``from.node``,
``Join.fork_id`` is ``forkId``, ``Node.config`` is the configuration key
named after the node's type, ``SendMessage.allowed_responders`` is
``workItems.allowedResponders``), so consumers stop re-spelling YAML keys.

* :func:`yaml_node` — the YAML node of an object, or of one of its fields;
* :func:`span` — its :class:`~loopc.diagnostics.Span` (1-based lines,
  code-point columns, end exclusive, with 0-based code-point offsets into
  the decoded text, BOM removed);
* :func:`key_span` — the span of the mapping key that names it;
* :func:`key_path` — the YAML key path of a model field;
* :func:`port_node` — the YAML node that declares an authored port (a switch
  case's ``port``, the switch ``default``, a fork's ``branches`` entry).

:class:`SourceMap` binds the same lookups to one plan and adds the reverse
lookup, :meth:`SourceMap.object_at` (the innermost model object at an
offset).  Lookups return ``None`` for a field that is not written in the
source (omitted, defaulted, or computed such as ``SendMessage.has_work_items``
when false); they raise ``TypeError`` for an object that is not a model
object and ``ValueError`` for a field its class does not have.
"""

from __future__ import annotations

from typing import Any, Iterator

from loopc import value as _value
from loopc import kinds
from loopc.compiler import model as M
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Span

__all__ = ["SourceMap", "key_path", "key_span", "model_objects", "port_node", "span", "yaml_node"]

#: Model fields whose YAML key is not the camelCase of the attribute name
#: (``None``: the field is not read from the source).  ``()`` is the
#: object's own node (the value forms hold their text in ``src`` itself).
_KEYS: dict[type, dict[str, tuple[str, ...] | None]] = {
    M.Plan: {"malformed_nodes": None, "malformed_edges": None},
    M.Edge: {
        "from_node": ("from", "node"),
        "from_port": ("from", "port"),
        "to_node": ("to", "node"),
        "to_port": ("to", "port"),
    },
    M.SendMessage: {
        "allowed_responders": ("workItems", "allowedResponders"),
        "has_work_items": ("workItems",),
    },
    M.Literal: {"value": (), "verbatim": ()},
    M.Ref: {"path": (), "text": ()},
    M.Expr: {"text": ()},
    M.Template: {"text": ()},
    M.ListValue: {"items": ()},
    M.MapValue: {"entries": ()},
}

_MODEL_TYPES = tuple(
    t for t in vars(M).values() if isinstance(t, type) and _value.is_value(t) and t.__module__ == M.__name__
)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _check(obj: Any, field: str | None) -> None:
    if not isinstance(obj, _MODEL_TYPES):
        raise TypeError(f"{type(obj).__name__} is not a loopc.compiler.model object")
    if field is not None and field not in {f.name for f in _value.fields(type(obj))}:
        raise ValueError(f"{type(obj).__name__} has no field {field!r}")


def key_path(obj: Any, field: str) -> tuple[str, ...] | None:
    """YAML keys, from ``obj``'s own mapping, of model field ``field``
    (``("from", "node")`` for ``Edge.from_node``; ``()`` for a value form's
    text, which is ``obj.src`` itself); ``None`` when the field is not read
    from the source.  ``TypeError``/``ValueError`` as in the module doc."""
    _check(obj, field)
    if field == "src":
        return ()
    if isinstance(obj, M.Node) and field == "config":
        key = kinds.tables().node_config_keys.get(obj.type)
        return (key,) if key is not None else None
    table = _KEYS.get(type(obj), {})
    if field in table:
        return table[field]
    return (_camel(field),)


def yaml_node(obj: Any, field: str | None = None) -> YNode | None:
    """The YAML node ``obj`` was built from, or the value node of its
    ``field``; ``None`` when not written in the source."""
    _check(obj, field)
    node = obj.src
    if field is None or not isinstance(node, YNode):
        return node if isinstance(node, YNode) else None
    path = key_path(obj, field)
    if path is None:
        return None
    for key in path:
        if not isinstance(node, YMap):
            return None
        node = node.get(key)
        if node is None:
            return None
    return node


def port_node(node: M.Node, port: str) -> YNode | None:
    """The YAML node declaring ``port`` of ``node`` when the author named it:
    the ``port`` value of a switch case, the switch's ``default``, or the
    ``branches`` entry of a fork (docs/reference.md#edges-and-bindings); ``None`` for the
    fixed ports of a node type (``completed``, ``failed``, ...) and for a
    node whose source is not a mapping."""
    cfg = node.config
    if isinstance(cfg, M.Switch):
        for case in cfg.cases:
            if case.port == port and isinstance(case.src, YMap):
                return yaml_node(case, "port")
        return yaml_node(cfg, "default") if cfg.default == port else None
    if isinstance(cfg, M.Fork):
        br = yaml_node(cfg, "branches")
        if isinstance(br, YSeq):
            for b in br.items:
                if isinstance(b, YScalar) and b.value == port:
                    return b
    return None


def span(obj: Any, field: str | None = None) -> Span | None:
    """Span of :func:`yaml_node` (the whole mapping for an object; the value
    of a field), ``None`` when not written in the source."""
    node = yaml_node(obj, field)
    return node.span if node is not None else None


def key_span(obj: Any, field: str | None = None) -> Span | None:
    """Span of the mapping key naming ``obj`` in its parent mapping (a
    contract field's name, a ``bind``/``merge``/``init``/``assign`` key) or,
    with ``field``, the key of that field in ``obj``'s mapping (the last
    key of :func:`key_path`).  ``None`` when there is no such key (a list
    item, an omitted field, a field read from ``obj``'s own node)."""
    node = yaml_node(obj, field)
    if node is None or (field is not None and not key_path(obj, field)):
        return None
    parent = node.parent
    if isinstance(parent, YMap) and isinstance(node.key, str):
        kn = parent.key_node(node.key)
        if kn is not None and parent.get(node.key) is node:
            return kn.span
    return None


def model_objects(plan: M.Plan) -> Iterator[Any]:
    """Every model object of ``plan`` (the plan, contracts' FieldSchemas
    with their ``items``, nodes and their configurations, switch cases,
    retries, edges and every ValueExpr, nested list/map members included),
    each once, in authored order."""
    seen: set[int] = set()
    stack: list[Any] = [plan]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        kids: list[Any] = []
        for a in _value.fields(type(obj)):
            if a.name == "src":
                continue
            _collect(getattr(obj, a.name), kids)
        stack.extend(reversed(kids))


def _collect(v: Any, out: list[Any]) -> None:
    if isinstance(v, _MODEL_TYPES):
        out.append(v)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _collect(x, out)
    elif isinstance(v, dict) or (hasattr(v, "values") and hasattr(v, "items") and not isinstance(v, (str, bytes))):
        for x in v.values():
            _collect(x, out)


class SourceMap:
    """:func:`yaml_node`, :func:`span` and :func:`key_span` for one plan,
    plus :meth:`object_at`.  Built by :attr:`loopc.CheckResult.source_map`
    (``None`` there when the document could not be modelled)."""

    def __init__(self, plan: M.Plan) -> None:
        self.plan = plan
        self._rows: list[tuple[int, int, Any]] | None = None

    yaml_node = staticmethod(yaml_node)
    span = staticmethod(span)
    key_span = staticmethod(key_span)
    key_path = staticmethod(key_path)

    def objects(self) -> Iterator[Any]:
        """:func:`model_objects` of the plan."""
        return model_objects(self.plan)

    def object_at(self, offset: int) -> Any | None:
        """The innermost model object whose source node contains code-point
        ``offset`` (``start <= offset < end``; the deeper object when two
        share a node); ``None`` outside every object.  Linear in the plan."""
        if self._rows is None:
            self._rows = [
                (n.start, n.end, obj) for obj in self.objects() if isinstance((n := obj.src), (YMap, YSeq, YScalar))
            ]
        best: tuple[int, int, Any] | None = None
        for start, end, obj in self._rows:
            if start <= offset < end and (best is None or end - start <= best[1] - best[0]):
                best = (start, end, obj)
        return best[2] if best is not None else None
