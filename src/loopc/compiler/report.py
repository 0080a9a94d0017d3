"""Collects diagnostics for one source (every finding, not only the first:
docs/language.md#one-defect-one-diagnostic) and applies loopc's one
follow-on-suppression policy (docs/architecture.md#one-defect-one-diagnostic).

Passes call :meth:`Reporter.report` with a code and a location: a
:class:`~loopc.compiler.yamlnodes.YNode` (its range and pointer are used), or
an explicit :class:`~loopc.diagnostics.Span` plus pointer, or ``None`` for a
finding about the whole source (it then has no position).  Severity and slug
come from the code registry.

The policy, in one place:

* **Taint.**  An error *taints* the entities it says are wrong (``taints=``,
  or :meth:`Reporter.taint` when a pass rejects an entity after reporting
  its defects): a node or edge the schema pass left out of the model
  (:func:`node_entity`, :func:`edge_entity`), a declaration at a source
  pointer — a top-level section, a mapping key, a contract field
  (:func:`decl`, :func:`decl_key`) — or a scope / scope branch
  (:func:`scope_entity`).  Entities are tuples read as paths:
  tainting ``decl("/input")`` taints every declaration under it.
* **Dependence.**  A diagnostic that depends on an entity (``needs=``; a
  diagnostic's ``node``/``edge`` culprit is always one of them) is
  suppressed when that entity is tainted: its defect is a follow-on of the
  one already reported.  A suppressed error still taints what it names.
* **Identity.**  A diagnostic is reported once: an exact duplicate (same
  code, range and message) is dropped, and a pass may give a coarser
  identity (``key=``: one diagnostic per code and culprit).

Passes that skip work on rejected entities ask :meth:`Reporter.tainted`.
"""
from __future__ import annotations

from typing import Hashable, Iterable, Sequence, Tuple, Union


from loopc import codes
from loopc.codes import section as code_section
from loopc.compiler.yamlnodes import YNode
from loopc.diagnostics import Diagnostic, Fix, Related, Severity, Span

Location = Union[YNode, Span, None]


def span_of(at: Location) -> Span | None:
    """The span of a location; ``None`` (no position) stays ``None``."""
    if at is None:
        return None
    if isinstance(at, Span):
        return at
    return at.span


#: An entity a diagnostic can taint or depend on: a tuple read as a path
#: (``("node", id)``, ``("edge", id)``, ``("decl", seg, ...)``,
#: ``("scope", owner[, branch])``); see :func:`node_entity`,
#: :func:`edge_entity`, :func:`decl`, :func:`scope_entity`.
Entity = Tuple[str, ...]


def node_entity(node_id: str) -> Entity:
    """The node ``node_id`` (tainted: the schema pass rejected it)."""
    return ("node", node_id)


def edge_entity(edge_id: str) -> Entity:
    """The edge ``edge_id`` (tainted: the schema pass rejected it)."""
    return ("edge", edge_id)


def decl(pointer: str) -> Entity:
    """The declaration at RFC 6901 ``pointer`` in the source (``/input``,
    ``/nodes/3/join/forkId``, ``/state/count``): a section, key or contract
    field that is missing, misspelt or was rejected when it is tainted."""
    return ("decl", *pointer.split("/")[1:])


def expr_entity(pointer: str) -> Entity:
    """The meaning of the expression at RFC 6901 ``pointer`` (a wait's
    ``condition``): tainted when the type pass rejects the expression (it does
    not parse, or does not type), so what reasons about what it says — the
    wait rule of Run-state races, LP4603, LP4604 — is a follow-on."""
    return ("expr", *pointer.split("/")[1:])


def writes_entity(node_id: str) -> Entity:
    """The Run-state writes of set_variable ``node_id``: tainted when an
    ``assign`` key names no state field (LP3302), so what it writes is not
    known and what depends on knowing every writer (LP4603's "no set_variable
    writes it") is a follow-on."""
    return ("writes", node_id)


def decl_key(mapping: YNode, key: str) -> Entity:
    """The declaration of ``key`` in ``mapping`` (present or not)."""
    return decl(mapping.pointer + "/" + _escape(key))


def decl_path(*keys: str) -> Entity:
    """The declaration at the mapping keys ``keys`` from the document root
    (``decl_path("state", "count")`` is ``decl("/state/count")``)."""
    return ("decl", *map(_escape, keys))


def presence(field_src: YNode | None) -> tuple[Entity, ...]:
    """What decides whether the field declared by the FieldSchema mapping
    ``field_src`` may be absent: its ``required`` and ``default``.  Tainted
    when the schema pass rejected one of them, so a finding that depends on
    the field being required or optional (``needs=presence(fs.src)``) is a
    follow-on.  A field declared by no source (a node kind's) has none."""
    if field_src is None:
        return ()
    return (decl(field_src.pointer + "/required"), decl(field_src.pointer + "/default"))


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def scope_entity(owner: str, branch: str | None = None) -> Entity:
    """The scope opened by ``owner`` (a fork, all_match switch, fan_out or
    loop), or one ``branch`` of it: tainted when an error already says a
    token leaves it wrongly or its join is broken, so derived findings about
    its joins and branches are follow-ons."""
    return ("scope", owner) if branch is None else ("scope", owner, branch)


class Reporter:
    """Accumulates the diagnostics of one check and applies the
    follow-on-suppression policy of this module (taint, dependence,
    identity)."""

    def __init__(self, *, suppress_follow_ons: bool = True) -> None:
        """``suppress_follow_ons=False`` reports the follow-ons too (taints
        are still recorded, so passes skip the same rejected entities): what
        the fix-safety proof checks with (:mod:`loopc.pipeline.fixsafety`),
        so a fix cannot hide a new error behind an old one."""
        self.diagnostics: list[Diagnostic] = []
        self._tainted: set[Entity] = set()
        self._identities: set[Hashable] = set()
        self._suppress = suppress_follow_ons

    # -- the policy ------------------------------------------------------

    def taint(self, *entities: Entity) -> None:
        """Mark ``entities`` as already reported wrong (see the module doc)."""
        self._tainted.update(entities)

    @property
    def any_tainted(self) -> bool:
        """Is anything tainted?  (When not, every taint query answers no:
        a pass may skip building the entities it would ask about.)"""
        return bool(self._tainted)

    def tainted(self, entity: Entity) -> bool:
        """Is ``entity``, or an entity it lies under, tainted?"""
        t = self._tainted
        if not t:
            return False
        return any(entity[:i] in t for i in range(2, len(entity) + 1))

    def presence_tainted(self, field_src: YNode | None) -> bool:
        """Is the presence of the field declared by ``field_src`` tainted
        (:func:`presence`)?  Cheap when nothing is tainted: the entities,
        built from the field's pointer, are then never made."""
        if not self._tainted or field_src is None:
            return False
        return any(self.tainted(e) for e in presence(field_src))

    def decl_tainted(self, src: YNode) -> bool:
        """Is the declaration at YAML node ``src`` (:func:`decl` of its
        pointer) tainted?  The pointer is only built when something is."""
        return bool(self._tainted) and self.tainted(decl(src.pointer))

    def tainted_names(self, kind: str) -> frozenset[str]:
        """Names of the tainted entities of one kind (``"node"``, ``"edge"``)."""
        return frozenset(e[1] for e in self._tainted if e[0] == kind and len(e) == 2)

    def add(self, d: Diagnostic, *, key: Hashable | None = None) -> Diagnostic | None:
        """Record an already built diagnostic under the identity rule;
        returns ``None`` when it duplicates one already recorded."""
        s = d.span
        exact = (d.code, None if s is None else (s.line, s.column, s.end_line, s.end_column), d.message)
        ids = self._identities
        if exact in ids or (key is not None and (d.code, key) in ids):
            return None
        ids.add(exact)
        if key is not None:
            ids.add((d.code, key))
        self.diagnostics.append(d)
        return d

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        """:meth:`add` each of ``diags``."""
        for d in diags:
            self.add(d)

    # -- reporting -------------------------------------------------------

    def report(
        self,
        code: str,
        at: Location,
        message: str,
        *,
        pointer: str | None = None,
        node: str | None = None,
        edge: str | None = None,
        related: Iterable[tuple[str, Location]] = (),
        fix: Fix | None = None,
        severity: Severity | None = None,
        section: str | None = None,
        needs: Iterable[Entity] = (),
        taints: Iterable[Entity] = (),
        key: Hashable | None = None,
    ) -> Diagnostic | None:
        """Record a diagnostic; ``related`` is ``(message, location)`` pairs;
        ``section`` the reference anchor when where the finding is says more
        than its code (default: the code's section).

        ``needs``: entities the finding depends on (with the ``node`` and
        ``edge`` culprits); ``taints``: entities an error makes suspect;
        ``key``: a coarser identity than the exact one (code, range,
        message).  Returns the diagnostic, or ``None`` when the policy
        suppressed it (a follow-on or a duplicate)."""
        entry = codes.get(code)
        sev = severity or entry.severity
        follow_on = self._suppress and bool(self._tainted) and (
            (node is not None and ("node", node) in self._tainted)
            or (edge is not None and ("edge", edge) in self._tainted)
            or any(self.tainted(e) for e in needs)
        )
        if sev is Severity.ERROR:
            self._tainted.update(taints)
        if follow_on:
            return None
        if pointer is None:
            pointer = at.pointer if isinstance(at, YNode) else ""
        rel = tuple(
            Related(m, span_of(loc), loc.pointer if isinstance(loc, YNode) else "")
            for m, loc in related
        ) if related else ()
        # positional: a source with 100,000 findings reports 100,000 times
        d = Diagnostic(code, entry.name, sev, message, span_of(at), pointer, node, edge, rel, fix, None,
                       section or code_section(code) or "")
        return self.add(d, key=key)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def sorted(self) -> Sequence[Diagnostic]:
        return sorted(self.diagnostics, key=Diagnostic.sort_key)


def finish(diags: Iterable[Diagnostic], text: str | None, path: str | None,
           index: object | None = None) -> tuple[Diagnostic, ...]:
    """The diagnostics a check returns: every span (of the diagnostic, its
    related locations and its fix edits) carries its code-point offsets into
    ``text``, every diagnostic its ``path``; sorted by
    :meth:`Diagnostic.sort_key`; a diagnostic without a ``section`` gets its
    code's.  ``diags`` come from a :class:`Reporter` (duplicates are removed
    there, never here).

    ``index`` is a :class:`loopc.lineindex.LineIndex` of ``text`` (built when
    needed and not given).  Without ``text`` spans are left as they are.
    """
    out: list[Diagnostic] = []
    lines = index
    for d in diags:
        span, related, fix = d.span, d.related, d.fix
        if text is not None and _needs_offsets(d):
            if lines is None:
                from loopc.lineindex import LineIndex

                lines = LineIndex(text)
            span, related, fix = _located(d, lines)
        section = d.section or code_section(d.code) or ""
        if span is not d.span or related is not d.related or fix is not d.fix or d.path != path \
                or section != d.section:
            # one constructor call per diagnostic, not an attrs.evolve per change:
            # a source with 100,000 findings spends its time here (issue 21)
            d = Diagnostic(d.code, d.name, d.severity, d.message, span, d.pointer, d.node, d.edge, related, fix,
                           path, section)
        out.append(d)
    out.sort(key=Diagnostic.sort_key)
    return tuple(out)


def _unlocated(span: Span | None) -> bool:
    return span is not None and (span.start is None or span.end is None)


def _needs_offsets(d: Diagnostic) -> bool:
    return (_unlocated(d.span) or any(_unlocated(r.span) for r in d.related)
            or (d.fix is not None and any(_unlocated(e.span) for e in d.fix.edits)))


def _located(d: Diagnostic, index: object) -> tuple[Span | None, tuple[Related, ...], Fix | None]:
    """The span, related locations and fix of ``d`` with code-point offsets."""
    span = d.span.located(index) if d.span is not None else None
    related = d.related
    if related and any(_unlocated(r.span) for r in related):
        related = tuple(Related(r.message, r.span.located(index), r.pointer) if r.span is not None
                        and _unlocated(r.span) else r for r in related)
    fix = d.fix
    if fix is not None and any(_unlocated(e.span) for e in fix.edits):
        fix = fix.evolve(edits=tuple(e.evolve(span=e.span.located(index)) for e in fix.edits))
    return span, related, fix
