"""Nodes of the schema pass (:mod:`loopc.compiler.schema`;
docs/reference.md#nodes, docs/reference.md#retry): the node list and its
budget, ids (duplicates, ids the edges name in another spelling), the
``type`` and its discriminated config key, legacy pointers, misplaced and
foreign config keys, ``input`` and ``retry`` (LP2010, LP2030–LP2035,
LP2061, LP2090).  Each node's config is read by
:mod:`loopc.compiler.schema_configs`.  Never raises on bad input.
"""
from __future__ import annotations

import re
from typing import Any

from loopc import kinds
from loopc.compiler.model import NODE_CONFIG_KEYS, RETRY_CAPABLE, Fork, Node, Retry, Switch
from loopc.compiler.ports import source_ports, target_ports
from loopc.compiler.report import Reporter, decl_key, node_entity
from loopc.compiler.schema_configs import _Configs
from loopc.compiler.schema_keys import (
    _K, _RETRY_TYPES, CONFIG_KEY_TYPES, LEGACY_NODE_KEYS, MAX_ATTEMPTS, MAX_NODES, NODE_KEYS, RETRY_KEYS,
)
from loopc.compiler.schema_readers import _rename_fix, stand_in
from loopc.compiler.spelling import suggest
from loopc.compiler.wireforms import IDENT_RE, duration_error, is_duration
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Applicability, Fix, Span, TextEdit


def _edge_references(seq: YNode | None) -> dict[str, list[tuple[str, str | None]]]:
    """Node names the authored edges use, in order, each with its uses:
    ``("from" | "to", port or None)``."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    if not isinstance(seq, YSeq):
        return out
    for m in seq.items:
        if not isinstance(m, YMap):
            continue
        for side in ("from", "to"):
            end = m.get(side)
            if not isinstance(end, YMap):
                continue
            name, port = end.get("node"), end.get("port")
            if isinstance(name, YScalar) and name.value.__class__ is str:
                out.setdefault(name.value, []).append(
                    (side, port.value if isinstance(port, YScalar) and port.value.__class__ is str else None))
    return out


def _ports_fit(node: Node, uses: list[tuple[str, str | None]]) -> bool:
    """Could the edges' ``uses`` of a name be edges of ``node``?"""
    for side, port in uses:
        if side == "from" and port is not None and port not in source_ports(node):
            return False
        if side == "to" and (port or "in") not in target_ports(node):
            return False
    return True



def _config_fits(kind: kinds.Kind, body: YNode | None, node: YMap) -> bool:
    """Do the keys of config mapping ``body`` make a config of ``kind``: only
    its keys, its required ones present, one of each ``oneOf`` group of its
    source rules (wait: ``condition`` or ``duration``), and ``node``'s
    ``retry`` only on a kind that may retry?  Keys only: the values are
    checked once the node is configured as that kind."""
    if not isinstance(body, YMap):
        return False
    keys = set(body.keys())
    if not keys <= kind.source_keys or not set(kind.required_source_keys) <= keys:
        return False
    one_of = kind.source_rules.get("oneOf")
    if one_of and sum(set(g.get("required", ())) <= keys for g in one_of) != 1:
        return False
    return node.get("retry") is None or kind.name in RETRY_CAPABLE


def _lacks(cfg: YNode | None, key: str) -> bool:
    """Is ``cfg`` a configuration mapping without ``key``, or empty (``null``:
    its keys were all dedented beside it)?"""
    if isinstance(cfg, YMap):
        return key not in cfg
    return isinstance(cfg, YScalar) and cfg.value is None and cfg.style == "" and cfg.raw == ""


#: The port that replaces each legacy node-level pointer (LP2010 messages).
_LEGACY_POINTER_PORTS = {
    "onApprove": "approved", "onReject": "rejected", "onTimeout": "timed_out",
    "next": "completed",
}



class _Nodes(_Configs):
    """The node list, each node's common keys and its config."""

    def __init__(self, reporter: Reporter) -> None:
        super().__init__(reporter)
        #: the authored edges' node references (:func:`_edge_references`), read on first use
        self._edge_refs: dict[str, list[tuple[str, str | None]]] | None = None
        #: while reading the nodes: the conforming spellings of ill-formed
        #: node ids the edges name, and the ids read so far
        self._meant_ids: set[str] = set()
        self._ids_seen: dict[str, YNode] = {}


    def nodes(self, seq: YSeq, root: YMap) -> tuple[dict[str, Node], set[str]]:
        items = seq.items
        if len(items) > MAX_NODES:
            self.err("LP2090", root.key_node("nodes"), f"the plan has {len(items):,} nodes; the limit is "
                     f"{MAX_NODES}")
        nodes: dict[str, Node] = {}
        bad: set[str] = set()
        first: dict[str, YNode] = {}
        dups: list[tuple[str, YNode, Node | None]] = []
        self._meant_ids, self._ids_seen = set(), first
        for item in items:
            self.node = None
            before = self.errs
            deferred = len(self._any_joins)
            nid, idn, node = self.node_(item)
            if nid is None:
                self.node = None
                continue
            if idn is None:  # the id a misspelt 'id' key gives: set aside, never a duplicate
                if nid not in first:
                    bad.add(nid)
                continue
            if nid in first:
                self.any_fan_out_joins(self._any_joins[deferred:], {}, bad)
                del self._any_joins[deferred:]
                dups.append((nid, idn, node))
                continue
            first[nid] = idn
            if node is None or self.errs != before:
                bad.add(nid)
            else:
                nodes[nid] = node
        self.any_fan_out_joins(self._any_joins, nodes, bad)
        bad.update(m for m in self._meant_ids if m not in first)
        self.duplicates(dups, first, root, bad)
        self.node = None
        return nodes, bad

    def any_fan_out_joins(self, joins: list[tuple[str | None, Any, str | None]],
                          nodes: dict[str, Node], bad: set[str]) -> None:
        """LP2061 for each ``mode: any`` join naming its owner with
        ``fanOutId``, unless that owner is a fork or an all_match switch: then
        the key is what is wrong (the analyzer's LP4311), and ``any`` is a
        mode that owner's join may have.  A join reported here is rejected."""
        for nid, mode_node, owner_id in joins:
            owner = nodes.get(owner_id) if owner_id is not None else None
            if owner is not None and (isinstance(owner.config, Fork) or (
                    isinstance(owner.config, Switch) and owner.config.mode == "all_match")):
                continue
            self.node = nid
            self.err("LP2061", mode_node, "a fan-out join waits for every item: use mode: all",
                     fix=_rename_fix(mode_node, "all", "replace with"))
            if nid is not None and nodes.pop(nid, None) is not None:
                bad.add(nid)

    def duplicates(self, dups: list[tuple[str, YNode, Node | None]], first: dict[str, YNode],
                   root: YMap, bad: set[str]) -> None:
        """LP2030 for each node whose id an earlier node already has (the
        first definition is used).  The duplicate is set aside under the id
        it most likely meant: the one name edges use that no node has (when
        exactly one fits, by count and by the ports the edges use).  That id
        is rejected with it (``malformed_nodes``, tainted), so the edges naming
        it are not dangling a second time (LP4002), and the fix renames the
        duplicate to it rather than wiring those edges to the first definition."""
        if not dups:
            return
        refs = _edge_references(root.get("edges"))
        unknown = [n for n in refs if n not in first]
        for nid, idn, node in dups:
            cands = [u for u in unknown if node is None or _ports_fit(node, refs[u])]
            meant = cands[0] if len(cands) == 1 else None
            self.node = nid
            if meant is None:
                self.err("LP2030", idn, f"duplicate node id '{nid}'; the first definition is used",
                         related=[("first defined here", first[nid])])
                continue
            unknown.remove(meant)
            bad.add(meant)
            self.err("LP2030", idn, f"duplicate node id '{nid}'; the first definition is used, and "
                     f"edges name '{meant}', which no node has: did you mean to call this node '{meant}'?",
                     related=[("first defined here", first[nid])], fix=_rename_fix(idn, meant),
                     taints=[node_entity(meant)])

    def _node_id_meant(self, m: YMap, idn: YScalar) -> str | None:
        """LP2014 for a node id that breaks the identifier rule when the
        edges name its conforming spelling (``legal-review`` → ``legal_review``:
        lower case, other characters as ``_``) and not the id as written, and
        no node has that spelling: the node is set aside under it too (the
        edges naming it are not dangling, LP4002) and the fix renames the id.
        Returns that spelling, or ``None`` (the plain LP2014 applies)."""
        val = idn.value
        meant = re.sub(r"[^a-z0-9_]", "_", val.lower())
        refs = self._refs(m)
        if meant == val or IDENT_RE.match(meant) is None or meant not in refs or val in refs:
            return None
        if meant in self._ids_seen:
            return None
        self._meant_ids.add(meant)
        self.err("LP2014", idn, f"node id '{val}' must match ^[a-z][a-z0-9_]{{0,63}}$ (lower-case "
                 f"letter, then lower-case letters, digits or '_', at most 64); the edges name "
                 f"'{meant}': did you mean that?", fix=_rename_fix(idn, meant),
                 taints=[node_entity(meant)])
        return meant

    def node_(self, n: YNode) -> tuple[str | None, YNode | None, Node | None]:
        if not isinstance(n, YMap):
            self.shape(n, "a node must be a mapping with 'id', 'type' and its config key")
            return None, None, None
        m: YMap = n
        nid: str | None = None
        idn = m.get("id")
        if idn is None:
            pass  # after the unknown keys: a misspelt 'id' says it, and gives the id
        elif isinstance(idn, YScalar) and idn.value.__class__ is str:
            nid = idn.value
            self.node = nid
            if IDENT_RE.match(nid) is None and self._node_id_meant(m, idn) is None:
                self.ident(idn, "node id")
        else:
            self.shape(idn, "a node 'id' must be a string")
        what = f"node '{nid}'" if nid else "node"

        t: str | None = None
        tn = m.get("type")
        if tn is not None:
            s = self.lit_scalar(tn, "type", "a node type")
            if s is not None:
                val = s.value
                if val.__class__ is str and val in NODE_CONFIG_KEYS:
                    t = val
                else:
                    shown = val if val.__class__ is str else s.raw
                    sug = CONFIG_KEY_TYPES.get(shown) or (suggest(shown, NODE_CONFIG_KEYS) if shown else None)
                    msg = f"unknown node type '{shown}'"
                    if sug is not None:
                        self.err("LP2031", s, msg + f"; did you mean '{sug}'?", fix=_rename_fix(s, sug, "replace with"))
                    else:
                        self.err("LP2031", s, msg + f" (types: {', '.join(NODE_CONFIG_KEYS)})")
        cfg_key = NODE_CONFIG_KEYS.get(t) if t else None

        # closed keys: common + own config; legacy pointers and foreign config keys are dedicated
        foreign: list[tuple[str, YScalar]] = []
        moved = False  # a key of the configuration sits beside it (misplaced)
        allowed = NODE_KEYS + ((cfg_key,) if cfg_key else tuple(CONFIG_KEY_TYPES))
        for k in m.index:
            if k in allowed or k == cfg_key or k.startswith("\x00"):
                continue
            kn, kv = m.key_node(k), m.get(k)
            assert kn is not None and kv is not None
            if cfg_key and t and k in _K[t].source_keys and _lacks(m.get(cfg_key), k) and (
                    k not in LEGACY_NODE_KEYS or self._port_used(m, kv)):
                self.misplaced(m, cfg_key, kn, k, kv, what)
                moved = True
            elif k in LEGACY_NODE_KEYS:
                port = _LEGACY_POINTER_PORTS.get(k)
                how = (f"add an edge from port `{port}` instead" if port
                       else "add an edge from the right port instead")
                self.err("LP2010", kn, f"node-level '{k}' is a legacy control-flow pointer; control flow is "
                         f"declared only by edges ({how})")
            elif k in CONFIG_KEY_TYPES:
                foreign.append((k, kn))
            else:
                self.unknown(kn, k, allowed, what)
        if idn is None:
            stand_in_ = stand_in(m, "id", allowed)
            if isinstance(stand_in_, YScalar) and stand_in_.value.__class__ is str and stand_in_.value:
                # the node is set aside under the id its misspelt key gives:
                # the entry and the edges naming it are not dangling (LP4001, LP4002)
                nid = stand_in_.value
            else:
                self.missing(m, "id", "node")
        if tn is None:  # after the unknown keys: a misspelt 'type' already says it
            self.missing(m, "type", what, f" ({', '.join(NODE_CONFIG_KEYS)})")
        cfg = m.get(cfg_key) if cfg_key else None
        if t is not None and tn is not None and cfg_key is not None:  # t is read from tn and has a key
            for k, kn in foreign:
                if self.foreign_config(m, t, tn, k, kn, lone=cfg is None and len(foreign) == 1):
                    t = None  # the type is the defect: nothing is judged by it (retry)
                    break  # (only a lone foreign key can be that)
            if cfg is None and not foreign:
                self.err("LP2033", tn, f"a node of type '{t}' needs its configuration mapping '{cfg_key}'",
                         needs=self.needs_one(m, cfg_key))

        label = self.get_str(m, "label", what, literal_only=False)
        description = self.get_str(m, "description", what, literal_only=False)
        inp = None
        inn = m.get("input")
        if inn is not None:
            inp = self.contract(inn, f"the input of {what}")
        retry = None
        rn = m.get("retry")
        if rn is not None and t is not None:
            if t not in RETRY_CAPABLE:
                self.err("LP2034", m.key_node("retry"), f"'retry' applies only to {_RETRY_TYPES}, not {t}")
            else:
                retry = self.retry(rn)

        config = None
        if t is not None and cfg is not None:
            if not isinstance(cfg, YMap):
                if not moved:  # else empty because its keys were dedented: said there
                    self.shape(cfg, f"'{cfg_key}' must be a mapping")
            else:
                config = self.config(t, cfg, m)
        if nid is None or config is None or t is None:  # (a config is built only for a type)
            return nid, idn, None
        return nid, idn, Node(nid, t, config, inp, retry, label, description, m)

    def misplaced(self, m: YMap, cfg_key: str, kn: YScalar, k: str, v: YNode, what: str) -> None:
        """LP2007 for a key of the node's configuration written beside it, at
        node level (a dedented ``callbackOutput``): it stands in for that key
        of the configuration, so "missing ``k``" there is a follow-on.  The fix
        indents it into the configuration when it directly follows a block
        configuration and its value stays deeper than the key."""
        cfg = m.get(cfg_key)
        ckn = m.key_node(cfg_key)
        assert cfg is not None and ckn is not None
        first = cfg.first_key() if isinstance(cfg, YMap) else None
        # the configuration's key column: its first key's, or two deeper than an empty one
        col = first.col if first is not None else ckn.col + 2
        keys = m.keys()
        fix = None
        if not (isinstance(cfg, YMap) and cfg.flow) and col > kn.col and keys.index(k) == keys.index(cfg_key) + 1 \
                and (not isinstance(v, (YMap, YSeq)) or v.flow or v.line == kn.line or v.col > col):
            fix = Fix(f"indent '{k}' under '{cfg_key}'",
                      (TextEdit(Span(kn.line + 1, kn.col + 1, kn.line + 1, kn.col + 1), " " * (col - kn.col)),),
                      Applicability.UNSAFE)
        line_up = f"to line up with '{first.value}'" if first is not None else f"deeper than '{cfg_key}'"
        self.err("LP2007", kn, f"'{k}' belongs under '{cfg_key}', the configuration of {what}, not beside it "
                 f"at node level: indent it {line_up}", fix=fix,
                 taints=[decl_key(cfg, k)] if isinstance(cfg, YMap) else [decl_key(m, cfg_key)])

    def foreign_config(self, m: YMap, t: str, tn: YNode, k: str, kn: YScalar, lone: bool) -> bool:
        """LP2032 for config key ``k`` (another kind's) on a node of type
        ``t``.  When it is the node's only config and its keys fit that other
        kind but not ``t`` (:func:`_config_fits`), the ``type`` is what is
        wrong: reported at the type, with the fix ``type: <kind>``.  The fix
        renaming the key is offered only when its keys fit ``t``; when they
        fit neither, no fix.  Returns whether the type was reported."""
        other = CONFIG_KEY_TYPES[k]
        body = m.get(k)
        fits_own = lone and _config_fits(_K[t], body, m)
        fits_other = lone and _config_fits(_K[other], body, m)
        if fits_other and not fits_own and isinstance(tn, YScalar) and self._ports_fit_kind(m, _K[other], body):
            self.err("LP2032", tn, f"this node has type '{t}' but is configured as a {other} node: '{k}' holds "
                     f"a {other} configuration; did you mean 'type: {other}'?",
                     related=[(f"the {other} configuration", kn)], fix=_rename_fix(tn, other, "replace with"))
            return True
        self.err("LP2032", kn, f"'{k}' configures a {other} node; a node of type "
                 f"'{t}' is configured under '{NODE_CONFIG_KEYS[t]}'",
                 fix=_rename_fix(kn, NODE_CONFIG_KEYS[t]) if fits_own else None)
        return False

    def _port_used(self, m: YMap, v: YNode) -> bool:
        """Is ``v`` a scalar naming a source port that authored edges leave
        node mapping ``m`` by (a switch's ``default`` port, not a legacy
        node-level ``default`` pointer naming a node)?"""
        idn = m.get("id")
        if not isinstance(v, YScalar) or not isinstance(idn, YScalar):
            return False
        return ("from", v.value) in self._refs(m).get(idn.value, ())

    def _refs(self, m: YMap) -> dict[str, list[tuple[str, str | None]]]:
        """The authored edges' node references of the document holding node mapping ``m``."""
        if self._edge_refs is None:
            root = m.parent.parent if m.parent is not None else None
            self._edge_refs = _edge_references(root.get("edges")) if isinstance(root, YMap) else {}
        return self._edge_refs

    def _ports_fit_kind(self, m: YMap, kind: kinds.Kind, body: YNode | None) -> bool:
        """Could the authored edges naming node mapping ``m``'s id be edges of
        a ``kind`` node configured by ``body``?  (Fixed ports only: a kind whose
        ports are authored is taken to fit.)"""
        idn = m.get("id")
        if kind.ports.authored is not None or not isinstance(idn, YScalar) or not isinstance(body, YMap):
            return True
        present = set(body.keys())
        srcs = {p for p in kind.ports.fixed if p not in kind.ports.conditional or kind.ports.conditional[p] in present}
        for side, port in self._refs(m).get(idn.value, ()):
            if side == "from" and port is not None and port not in srcs:
                return False
            if side == "to" and (port or "in") not in kind.ports.targets:
                return False
        return True

    def retry(self, rn: YNode) -> Retry | None:
        if not isinstance(rn, YMap):
            self.shape(rn, "'retry' must be a mapping {maxAttempts, backoff}")
            return None
        m: YMap = rn
        self.closed(m, RETRY_KEYS, "retry")
        ma = self.get_int(m, "maxAttempts", 1, MAX_ATTEMPTS, "retry", required=True)
        bo = None
        bn = m.get("backoff")
        if bn is None:
            self.missing(m, "backoff", "retry", " (a duration such as PT5S)")
        else:
            s = self.lit_scalar(bn, "backoff", "a duration such as PT5S")
            if s is not None:
                if s.value.__class__ is str and is_duration(s.value):
                    bo = s.value
                else:
                    shown = s.value if s.value.__class__ is str else s.raw
                    shown = shown if len(shown) <= 60 else shown[:57] + "..."
                    self.err("LP2035", s, f"'backoff' must be an ISO 8601 duration such as PT5S or P1D "
                             f"(days, hours, minutes, seconds), not '{shown}'{duration_error(s.value)}")
        if ma is None or bo is None:
            return None
        return Retry(ma, bo, m)
