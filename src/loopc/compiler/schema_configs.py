"""Per-kind configuration readers of the schema pass
(:mod:`loopc.compiler.schema`; docs/reference.md#nodes, one section per
kind): a node config's closed keys, its generic fields read by form
(:attr:`loopc.kinds.Kind.generic_fields`), then the kind's own fields and
cross-field rules by the reader method named after the kind
(LP2040–LP2066).  Never raises on bad input.
"""
from __future__ import annotations

from typing import Any, Callable

from loopc import kinds
from loopc.compiler.model import (
    CONFIG_CLASSES, MISSING, FieldSchema, Literal, SwitchCase, ValueExpr,
)
from loopc.compiler.report import Reporter
from loopc.compiler.schema_contracts import _Contracts
from loopc.compiler.schema_keys import _K, CALLBACK_ONLY, CASE_KEYS, MAX_RELATED_SCOPES, WORK_ITEMS_KEYS
from loopc.compiler.wireforms import ERROR_CODE_RE
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq


def _later_key(m: YMap, a: str, b: str) -> YScalar:
    """The key node of ``a`` or ``b`` (both present in ``m``) written later
    (``a``'s on a tie)."""
    ka, kb = m.key_node(a), m.key_node(b)
    assert ka is not None and kb is not None
    return kb if kb.start > ka.start else ka


class _Configs(_Contracts):
    """The typed config of a node, by kind (:meth:`config`)."""

    def __init__(self, reporter: Reporter) -> None:
        super().__init__(reporter)
        #: ``mode: any`` fan-out joins: (node id, the mode value, fanOutId)
        self._any_joins: list[tuple[str | None, Any, str | None]] = []

    #: one reader method per node kind, named after it (loopc.kinds); the
    #: plain functions, called with the builder (bound methods kept on the
    #: instance would make a reference cycle)
    _config_builders: dict[str, Callable[..., Any]] = {}

    def config(self, t: str, c: YMap, node: YMap) -> Any:
        """The typed config of a node of type ``t``: its closed keys, every
        generic field read by :meth:`generic`, then the kind's own fields by
        the builder method named after the kind (if any), which returns them
        as keyword arguments, or ``None`` when the config is unusable."""
        kind = _K[t]
        what = kind.config_key
        self.closed(c, kind.source_keys, what)
        got, ok = self.generic(c, kind, what)
        custom = self._config_builders.get(t)
        if custom is not None:
            more = custom(self, c, node, got)
            if more is None:
                return None
            got.update(more)
        if not ok:
            return None
        return CONFIG_CLASSES[t](**got, src=c)

    def generic(self, c: YMap, kind: kinds.Kind, what: str) -> tuple[dict[str, Any], bool]:
        """Read the generic fields of ``kind`` (:attr:`loopc.kinds.Kind.generic_fields`)
        from config mapping ``c`` by form: a template, an expression, a
        ValueExpr, a literal choice or bounded integer.  Returns ``{attribute:
        value}`` of the keys present (``None`` where unusable, after reporting)
        and whether every required one is usable; a missing required key is
        reported (LP2006, with the field's ``hint``)."""
        out: dict[str, Any] = {}
        ok = True
        for key, attr, f in kind.generic_fields:
            form = f.form
            x: Any
            if form == "template":
                x = self.get_template(c, key, what, required=f.required)
            elif form == "literal":
                if f.choices is not None:
                    x = self.get_choice(c, key, f.choices, what, required=f.required)
                else:
                    lo, hi = f.bounds  # type: ignore[misc]
                    x = self.get_int(c, key, lo, hi, what, required=f.required)
            else:
                v = c.get(key)
                if v is None:
                    if f.required:
                        self.missing(c, key, what, f.hint)
                    x = None
                else:
                    x = self.expr_text(v, key) if form == "expression" else self.value(v)
            if x is None:
                if f.required:
                    ok = False
                if key not in c:
                    continue  # omitted: the model's default
            out[attr] = x
        return out, ok

    # the kinds' own fields (cross-field rules); generic fields need nothing here

    def send_message(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        what = "sendMessage"
        completion = got.get("completion")
        tn, sn = c.get("target"), c.get("scope")
        target = scope = None
        if tn is not None and sn is not None:
            later = _later_key(c, "target", "scope")
            self.err("LP2040", later, "declare exactly one destination: 'target' (a target string) or "
                     "'scope' (a scope value), not both")
        elif tn is None and sn is None:
            self.err("LP2040", self.anchor(c), "sendMessage needs a destination: 'target' (such as "
                     "\"#release\") or 'scope' (a scope value)", needs=self.needs_one(c, "target", "scope"))
        if tn is not None:
            target = self.get_template(c, "target", what)
        if sn is not None:
            scope = self.value(sn)
        start_thread = None
        if "startThread" in c:
            start_thread = self.get_bool(c, "startThread", what)
            if completion == "callback":
                self.err("LP2042", c.key_node("startThread"), "'startThread' applies only to sent completion; "
                         "open the thread with a sent node and address the callback node by its threadScope")
        if completion == "sent":
            for k in CALLBACK_ONLY:
                kn = c.key_node(k)
                if kn is not None:
                    self.err("LP2041", kn, f"'{k}' applies only to callback completion (this node uses "
                             "completion: sent)")
        responder = None
        rn = c.get("responder")
        if rn is not None:
            responder = self.value(rn)
        callback_output = None
        con = c.get("callbackOutput")
        if con is not None:
            callback_output = self.contract(con, "callbackOutput", callback=True)
        work_scope: Any = MISSING
        wn = c.get("workScope")
        if wn is not None:
            if isinstance(wn, YScalar) and wn.value is None:
                work_scope = None
            else:
                work_scope = self.value(wn)
        related: Any = None
        rsn = c.get("relatedScopes")
        if rsn is not None:
            if wn is None:
                self.err("LP2043", c.key_node("relatedScopes"), "'relatedScopes' needs 'workScope' (a scope "
                         "value, or null to let the Agent choose)", needs=self.needs_one(c, "workScope"))
            if isinstance(rsn, YSeq):
                elems = rsn.items
                if not elems:
                    self.err("LP2044", rsn, "'relatedScopes' must list at least one scope; omit the key for none")
                elif len(elems) > MAX_RELATED_SCOPES:
                    self.err("LP2093", rsn, f"'relatedScopes' lists {len(elems)} scopes; the limit is "
                             f"{MAX_RELATED_SCOPES}")
                related = tuple(self.value(e) for e in elems)
            else:
                related = self.value(rsn)
                if isinstance(related, Literal) and isinstance(related.value, list):
                    if not related.value:
                        self.err("LP2044", rsn, "'relatedScopes' must hold at least one scope; omit the key for none")
                    elif len(related.value) > MAX_RELATED_SCOPES:
                        self.err("LP2093", rsn, f"'relatedScopes' lists {len(related.value)} scopes; the limit "
                                 f"is {MAX_RELATED_SCOPES}")
        allowed_responders = None
        has_work_items = False
        win = c.get("workItems")
        if win is not None:
            has_work_items = True
            if not isinstance(win, YMap):
                self.shape(win, "'workItems' must be a mapping {allowedResponders: <array<agent> value>}")
            else:
                self.closed(win, WORK_ITEMS_KEYS, "workItems")
                an = win.get("allowedResponders")
                if an is None:
                    self.missing(win, "allowedResponders", "workItems", " (an array<agent> value)")
                else:
                    allowed_responders = self.value(an)
        if completion == "callback" and con is None and wn is None:
            self.err("LP2045", c.key_node("completion"), "a callback sendMessage needs 'callbackOutput' (the "
                     "fields the Agent returns) unless it declares 'workScope'",
                     needs=self.needs_one(c, "callbackOutput", "workScope"))
        return dict(target=target, scope=scope, start_thread=start_thread, responder=responder,
                    callback_output=callback_output, work_scope=work_scope, related_scopes=related,
                    allowed_responders=allowed_responders, has_work_items=has_work_items)

    def set_variable(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        an = c.get("assign")
        if an is None:
            self.missing(c, "assign", "setVariable", " (a mapping of Run state field to value)")
            return None
        assign = self.value_map(an, "assign")
        return None if assign is None else {"assign": assign}

    def wait(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        cn, dn, ton = c.get("condition"), c.get("duration"), c.get("timeout")
        if cn is not None and dn is not None:
            later = _later_key(c, "condition", "duration")
            self.err("LP2050", later, "a wait has exactly one of 'condition' (resume on a Run-state change) "
                     "or 'duration' (a pure timer), not both")
        elif cn is None and dn is None:
            self.err("LP2050", self.anchor(c), "a wait needs 'condition' (resume on a Run-state change) or "
                     "'duration' (a pure timer)", needs=self.needs_one(c, "condition", "duration"))
        if ton is not None and cn is None and dn is not None:
            self.err("LP2051", c.key_node("timeout"), "'timeout' applies only to a wait with a 'condition'; "
                     "a pure timer already ends after its duration", needs=self.needs_one(c, "condition"))
        return {}

    def switch(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        what = "switch"
        ports: dict[str, YNode] = {}
        cases: list[SwitchCase] = []
        ok = True
        cn = c.get("cases")
        if cn is None:
            self.missing(c, "cases", what, " (a list of {port, when})")
            ok = False
        elif not isinstance(cn, YSeq):
            self.shape(cn, "'cases' must be a list of {port, when}")
            ok = False
        elif not cn.items:
            self.err("LP2055", cn, "a switch needs at least one case")
            ok = False
        else:
            for item in cn.items:
                case = self.case(item, ports)
                if case is None:
                    ok = False
                else:
                    cases.append(case)
        default = None
        dn = c.get("default")
        if dn is None:
            self.missing(c, "default", what, " (the port taken when no case matches)")
        else:
            s = self.lit_scalar(dn, "default", "a port name")
            if s is not None and self.ident(s, "default port"):
                default = s.value
                self._port(default, s, ports)
        if default is None or not ok:
            return None
        return {"cases": tuple(cases), "default": default}

    def _port(self, name: str, at: YNode, seen: dict[str, YNode], noun: str = "port") -> bool:
        if name in seen:
            where = "across the switch's cases and default" if noun == "port" else "within the fork"
            self.err("LP2056", at, f"duplicate {noun} '{name}'; {noun}s are unique {where}",
                     related=[("first used here", seen[name])])
            return False
        seen[name] = at
        return True

    def case(self, n: YNode, ports: dict[str, YNode]) -> SwitchCase | None:
        if not isinstance(n, YMap):
            self.shape(n, "a switch case must be a mapping {port, when}")
            return None
        m: YMap = n
        self.closed(m, CASE_KEYS, "switch case")
        port = None
        pn = m.get("port")
        if pn is None:
            self.missing(m, "port", "switch case")
        else:
            s = self.lit_scalar(pn, "port", "a port name")
            if s is not None and self.ident(s, "case port") and self._port(s.value, s, ports):
                port = s.value
        when = None
        wn = m.get("when")
        if wn is None:
            self.missing(m, "when", "switch case", " (a condition expression)")
        else:
            when = self.expr_text(wn, "when")
        if port is None or when is None:
            return None
        return SwitchCase(port, when, m)

    def fork(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        bn = c.get("branches")
        if bn is None:
            self.missing(c, "branches", "fork", " (a list of at least two branch keys)")
            return None
        if isinstance(bn, YMap) and len(bn.index) == 1:
            k0, v0 = next(bn.entries())
            if k0 in ("ref", "expr"):
                self.err("LP2013", bn, "'branches' takes a literal list of branch keys")
                return None
            if k0 == "literal":
                self.literal_wrapper(bn, v0, "branches")
                return None
        if not isinstance(bn, YSeq):
            self.shape(bn, "'branches' must be a list of branch keys")
            return None
        seen: dict[str, YNode] = {}
        ok = True
        for e in bn.items:
            s = self.lit_scalar(e, "branches", "a branch key")
            if s is None or not self.ident(s, "branch key") or not self._port(s.value, s, seen, "branch key"):
                ok = False
        if len(bn.items) < 2:
            self.err("LP2057", bn, f"a fork needs at least two branches (found {len(bn.items)}); "
                     "a single path needs no fork")
            return None
        if not ok:
            return None
        return {"branches": tuple(seen)}

    def join(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        what = "join"
        fk, fo = c.get("forkId"), c.get("fanOutId")
        if fk is not None and fo is not None:
            later = _later_key(c, "forkId", "fanOutId")
            self.err("LP2060", later, "a join names exactly one owner: 'forkId' (a fork or all_match switch) "
                     "or 'fanOutId' (a fan_out), not both")
        elif fk is None and fo is None:
            self.err("LP2060", self.anchor(c), "a join needs its owner: 'forkId' (a fork or all_match "
                     "switch) or 'fanOutId' (a fan_out)", needs=self.needs_one(c, "forkId", "fanOutId"))
        fork_id = self.get_str(c, "forkId", what) if fk is not None else None
        fan_out_id = self.get_str(c, "fanOutId", what) if fo is not None else None
        if got.get("mode") == "any" and fo is not None:
            # decided once every node is read (:meth:`any_fan_out_joins`): a
            # `fanOutId` naming a fork or all_match switch is the defect
            # (the analyzer's LP4311, fixed by renaming the key), not the mode
            self._any_joins.append((self.node, c.get("mode"), fan_out_id))
        result: dict[str, FieldSchema] | None = {}
        rn = c.get("result")
        if rn is not None:
            result = self.contract(rn, "the join result")
        merge: dict[str, ValueExpr | None] | None = {}
        mn = c.get("merge")
        if mn is not None:
            merge = self.value_map(mn, "merge")
        if result is None or merge is None or (fork_id is None and fan_out_id is None):
            return None
        if fork_id is not None and fan_out_id is not None:
            return None
        return {"result": result, "merge": merge, "fork_id": fork_id, "fan_out_id": fan_out_id}

    def loop(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        state: dict[str, FieldSchema] | None = {}
        sn = c.get("state")
        if sn is not None:
            state = self.contract(sn, "the loop state")
        init: dict[str, ValueExpr | None] | None = {}
        inn = c.get("init")
        if inn is not None:
            init = self.value_map(inn, "init")
        if state is None or init is None:
            return None
        return {"state": state, "init": init}

    def end(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        what = "end"
        status = got.get("status")
        code = None
        detail = None
        if status == "succeeded":
            for k, holder in (("input", node), ("code", c), ("detail", c)):
                kn = holder.key_node(k)
                if kn is not None:
                    why = ("its input contract is the Plan output" if k == "input"
                           else "only a failed End records an error")
                    self.err("LP2065", kn, f"a succeeded End has no '{k}': {why}")
            return {"code": None, "detail": None}
        if status == "failed":
            cn = c.get("code")
            if cn is None:
                self.missing(c, "code", "a failed End", " (a stable error code such as review_rejected)")
            else:
                s = self.lit_scalar(cn, "code", "an error code string")
                if s is not None:
                    if s.value.__class__ is str and ERROR_CODE_RE.match(s.value):
                        code = s.value
                    else:
                        shown = s.value if s.value.__class__ is str else s.raw
                        self.err("LP2066", s, f"error code '{shown}' must match ^[a-z][a-z0-9_.]{{0,63}}$ "
                                 "(such as review_rejected)")
            if "detail" in c:
                detail = self.get_template(c, "detail", what)
                if detail is None:
                    return None
            if code is None:
                return None
            return {"code": code, "detail": detail}
        return None



_Configs._config_builders = {t: getattr(_Configs, t) for t in _K if hasattr(_Configs, t)}
