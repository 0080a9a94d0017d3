"""Switch checks (docs/reference.md#node-switch; pass 7 of
docs/language.md#compiler-passes: match modes, case order and defaults).

The schema pass already guarantees one ``default``, at least one case and
unique ports; a fork's branch set is unconditional by construction, and an
``all_match`` switch's conditional lineage is checked by the scope-typing
pass (its join correlates the matched set).  What remains is the order of
conditions, which is semantic for ``first_match``:

* LP4201 ``switch.shadowed_case`` (error): a ``first_match`` case can never
  be selected because an earlier case has the same condition or an earlier
  condition is always true (an invalid condition order, docs/reference.md#node-switch);
* LP4202 ``switch.unreachable_default`` (warning): a condition is always
  true, so the default port never fires;
* LP4203 ``switch.case_never_matches`` (warning): a condition is always
  false.

Conditions are compared on their token sequence (whitespace does not
matter, string literals are compared verbatim); constant folding covers
boolean literals under ``!``, ``&&`` and ``||`` only, and parses only a
condition that could fold.  Conditions over data are decided by
:mod:`loopc.analyzer.conditions`, each compared field ranging over what its
declared type allows (:func:`_domains`).
"""
from __future__ import annotations

import functools
from typing import Any

from loopc.analyzer.condtokens import tokens
from loopc.analyzer.context import Ctx
from loopc.compiler.model import Switch
from loopc.compiler.yamlnodes import YMap, YNode


def _parse(text: str) -> Any:
    from loopc.compiler.expr import parse_expression

    try:
        tree, errs = parse_expression(text)
    except Exception:  # noqa: BLE001
        return None
    return None if errs else tree


def constant(tree: Any) -> bool | None:
    """Constant truth value of a parsed condition, or ``None`` (iterative
    post-order over ``!``/``&&``/``||`` and boolean literals)."""
    from loopc.compiler.expr.ast import And, Lit, Not, Or

    val: dict[int, bool | None] = {}
    todo: list[tuple[Any, bool]] = [(tree, False)]
    while todo:
        n, done = todo.pop()
        if isinstance(n, (Not, And, Or)) and not done:
            todo.append((n, True))
            kids = (n.operand,) if isinstance(n, Not) else n.operands
            todo.extend((k, False) for k in kids)
            continue
        if isinstance(n, Lit):
            val[id(n)] = n.value if isinstance(n.value, bool) else None
        elif isinstance(n, Not):
            v = val.get(id(n.operand))
            val[id(n)] = None if v is None else not v
        elif isinstance(n, And):
            vs = [val.get(id(k)) for k in n.operands]
            val[id(n)] = False if False in vs else (True if all(v is True for v in vs) else None)
        elif isinstance(n, Or):
            vs = [val.get(id(k)) for k in n.operands]
            val[id(n)] = True if True in vs else (False if all(v is False for v in vs) else None)
        else:
            val[id(n)] = None
    return val.get(id(tree))


def maybe_constant(toks: tuple[str, ...]) -> bool:
    """Only literals combined by ``!``/``&&``/``||`` fold to a constant:
    anything else is skipped without parsing."""
    if not ({"true", "false"} & set(toks)):
        return False
    return len([t for t in toks if t not in "()"]) == 1 or bool({"&&", "||", "!"} & set(toks))


def check_switches(ctx: Ctx, order: list[str]) -> None:
    """Report LP4201–LP4203 for every reachable switch (docs/reference.md#switch)."""
    for nid in order:
        node = ctx.nodes[nid]
        c = node.config
        if not isinstance(c, Switch):
            continue
        # a case whose condition is absent or rejected by the type pass is no claim
        texts = [case.when.text if case.when is not None and not _rejected(ctx, case) else None
                 for case in c.cases]
        reported: set[tuple[str, str]] = set()
        _syntactic(ctx, nid, node, c, texts, reported)
        _semantic(ctx, nid, node, c, texts, reported)


@functools.lru_cache(maxsize=4096)
def _syntax(text: str) -> tuple[tuple[str, ...], bool | None] | None:
    """``(tokens, constant value or None)`` of a condition, or ``None`` when
    it does not tokenize, or could fold but does not parse.  Memoised by
    text (pure; the cases of a plan's switches repeat conditions, and the
    language server re-checks unchanged ones on every edit)."""
    canon = tokens(text)
    if canon is None:
        return None
    if not maybe_constant(canon):
        return canon, None
    tree = _parse(text)
    return None if tree is None else (canon, constant(tree))


def _syntactic(ctx: Ctx, nid: str, node: Any, c: Switch, texts: list[str | None],
               reported: set[tuple[str, str]]) -> None:
    """Identical conditions and constant folding (no parse unless a condition
    could fold)."""
    first = c.mode == "first_match"
    seen: dict[tuple[str, ...], Any] = {}  # condition tokens -> first case with them
    always = None  # first always-true case
    for case, text in zip(c.cases, texts):
        got = _syntax(text) if text is not None else None
        if got is None:
            continue  # the type pass reports the condition
        canon, val = got
        at = (case.src.get("when") if isinstance(case.src, YMap) else None) or ctx.node_at(node)
        if first and always is not None:
            ctx.report(
                "LP4201", at,
                f"case `{case.port}` of first_match switch `{nid}` can never be selected: the earlier "
                f"case `{always.port}` is always true, and first_match takes the first matching "
                f"case in order", key=(nid, case.port), node=nid,
                related=[(f"case `{always.port}` always matches", case_at(ctx, node, always))])
            reported.add(("LP4201", case.port))
        elif first and canon in seen:
            prev = seen[canon]
            ctx.report(
                "LP4201", at,
                f"case `{case.port}` of first_match switch `{nid}` can never be selected: the earlier "
                f"case `{prev.port}` has the same condition, and first_match takes the first "
                f"matching case in order", key=(nid, case.port), node=nid,
                related=[(f"case `{prev.port}` has this condition", case_at(ctx, node, prev))])
            reported.add(("LP4201", case.port))
        seen.setdefault(canon, case)
        if val is True and always is None:
            always = case
            dat = (c.src.get("default") if isinstance(c.src, YMap) else None) or ctx.node_at(node)
            ctx.report(
                "LP4202", dat,
                f"the default port `{c.default}` of {c.mode} switch `{nid}` can never fire: case "
                f"`{case.port}` is always true (the default is selected only when no "
                f"case matches)", key=(nid,), node=nid,
                related=[(f"case `{case.port}` always matches", at)])
            reported.add(("LP4202", ""))
        elif val is False:
            ctx.report(
                "LP4203", at,
                f"case `{case.port}` of switch `{nid}` never matches: its condition is always false",
                key=(nid, case.port), node=nid)
            reported.add(("LP4203", case.port))


def _semantic(ctx: Ctx, nid: str, node: Any, c: Switch, texts: list[str | None],
              reported: set[tuple[str, str]]) -> None:
    """Shadowing, never-matching cases and an unreachable default proved over
    comparisons of values with literals (:mod:`loopc.analyzer.conditions`)."""
    from loopc.analyzer.conditions import condition_formula

    # a case whose condition the type pass rejected is no claim (treated as
    # matching nothing, which only weakens the verdicts)
    formulas = [condition_formula(text) if text is not None else None for text in texts]
    if all(f is None for f in formulas):
        return
    verdicts = _verdicts(tuple(texts), tuple(_domains(ctx, node, formulas).items()))
    if verdicts is None:
        return
    cases = list(c.cases)
    for i in verdicts.never:
        case = cases[i]
        if ("LP4203", case.port) in reported or ("LP4201", case.port) in reported:
            continue
        ctx.report(
            "LP4203", case_at(ctx, node, case),
            f"case `{case.port}` of switch `{nid}` never matches: no value satisfies its condition",
            key=(nid, case.port), node=nid)
    if c.mode == "first_match":
        for i, earlier in sorted(verdicts.covered.items()):
            case = cases[i]
            if ("LP4201", case.port) in reported:
                continue
            names = ", ".join(f"`{cases[j].port}`" for j in earlier)
            ctx.report(
                "LP4201", case_at(ctx, node, case),
                f"case `{case.port}` of first_match switch `{nid}` can never be selected: every value "
                f"it matches is already matched by the earlier case{'s' if len(earlier) > 1 else ''} "
                f"{names}, and first_match takes the first matching case in order; list the more "
                f"specific case first", key=(nid, case.port), node=nid,
                related=[(f"case `{cases[j].port}` matches first", case_at(ctx, node, cases[j]))
                         for j in earlier])
    if verdicts.exhaustive and ("LP4202", "") not in reported:
        dat = (c.src.get("default") if isinstance(c.src, YMap) else None) or ctx.node_at(node)
        ctx.report(
            "LP4202", dat,
            f"the default port `{c.default}` of {c.mode} switch `{nid}` can never fire: the cases "
            f"together match every value (the default is selected only when no case matches)",
            key=(nid,), node=nid)


@functools.lru_cache(maxsize=1024)
def _verdicts(texts: tuple[str | None, ...], domains: tuple[tuple[str, Any], ...]) -> Any:
    """:func:`~loopc.analyzer.conditions.analyze_cases` of the conditions
    ``texts`` (``None``: no claim) over ``domains`` (subject, Domain),
    memoised (pure: a switch the language server re-checks unchanged, or
    repeated in a plan, is decided once)."""
    from loopc.analyzer.conditions import analyze_cases, condition_formula

    return analyze_cases([condition_formula(t) if t is not None else None for t in texts], dict(domains))


def _domains(ctx: Ctx, node: Any, formulas: list[Any]) -> dict[str, Any]:
    """Subject key → :class:`~loopc.analyzer.conditions.Domain` for every
    one-segment path the conditions compare whose field is declared: the
    switch's own ``input`` contract (``input.x``), the Plan input
    (``run.input.x``) or Run state (``run.state.x``, always nullable)."""
    from loopc.analyzer.conditions import Domain, subjects

    out: dict[str, Any] = {}
    contracts = {"input": node.input_contract, "run.input": ctx.plan.input, "run.state": ctx.plan.state}
    for subject in subjects(formulas):
        root, _, name = subject.rpartition(".")
        fs = contracts[root].get(name) if root in contracts else None
        if fs is None or ctx.r.presence_tainted(fs.src):
            continue  # undeclared, or whether it may be null is unknown (its `required` was rejected)
        nullable = root == "run.state" or not (fs.required or fs.has_default)
        out[subject] = Domain(fs.type, nullable, tuple(fs.values) if fs.values else None)
    return out


def _rejected(ctx: Ctx, case: Any) -> bool:
    """Did the type pass reject ``case``'s condition (it taints its ``when``)?"""
    src = case.when.src
    return isinstance(src, YNode) and ctx.r.decl_tainted(src)


def case_at(ctx: Ctx, node, case):
    return (case.src.get("when") if isinstance(case.src, YMap) else None) or ctx.node_at(node)
