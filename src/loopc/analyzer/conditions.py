"""Exact reasoning about switch conditions over literal comparisons
(docs/reference.md#node-switch; docs/language.md#switch-conditions).

A condition is abstracted into a boolean formula whose atoms compare one
*subject* (a reference path such as ``input.cvss``) with a literal:
``x == v``, ``x != v``, ``x < n`` / ``<=`` / ``>`` / ``>=`` (numbers only),
``x in [v, ...]`` (one equality per element), a bare boolean path (``x ==
true``) and the mirrored forms (``9 <= x``).  Anything else — function calls,
path-to-path comparisons, orderings over strings or durations — becomes a
*free* atom: an independent boolean named by its token sequence.

Every subject ranges over a finite set of representatives that covers every
equivalence class of the atoms mentioning it: for numbers, each literal, a
point between each pair of neighbours and one point beyond each end; for
strings and other scalars, each literal and one value equal to none of them;
and ``null`` for every subject.  A subject's declared type (a
:class:`Domain`) narrows that: no ``null`` when the field is required or
has a default, exactly the members of an enum, exactly ``true`` and
``false`` for a boolean (a domain whose type the literals do not fit is not
used: the type pass reports them).  A property that holds for every combination
of representatives (and every valuation of the free atoms) therefore holds
for every real value, so what this module claims is proved; when the
combinations exceed :data:`MAX_ASSIGNMENTS` it claims nothing.

:func:`analyze_cases` answers, for the ordered cases of one switch, which
case can never match, which ``first_match`` case is covered by earlier ones,
and whether the cases together always match (so the default never fires).
"""
from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from loopc.value import Value
from loopc.analyzer.condtokens import tokens
from loopc.compiler.expr.ast import And, ArrayLit, Compare, Lit, Not, Or, Path

__all__ = [
    "MAX_ASSIGNMENTS", "CaseVerdicts", "Domain", "analyze_cases", "condition_formula", "false_when", "formula",
    "subjects",
]

#: Largest number of representative combinations examined for one switch.
MAX_ASSIGNMENTS = 4096

_OTHER = object()  # a value equal to no literal of its subject
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


class _Atom(Value):
    subject: str
    op: str
    value: Any  # bool | int | float | str | None


def _path_key(p: Any) -> str:
    return ".".join((p.root, *p.segments))


def _lit_value(n: Any) -> tuple[bool, Any]:
    if isinstance(n, Lit) and (n.value is None or isinstance(n.value, (bool, int, float, str))):
        return True, n.value
    return False, None


def _is_number(v: Any) -> bool:
    cls = v.__class__
    if cls is str or cls is bool:
        return False
    return cls is int or cls is float or (isinstance(v, (int, float)) and not isinstance(v, bool))


def formula(tree: Any, text: str) -> Any:
    """Abstract a parsed condition into a formula: ``("and", [...])``,
    ``("or", [...])``, ``("not", f)``, ``("atom", _Atom)``, ``("free", key)``
    or ``("const", bool)``.  ``text`` is the condition's source (for the
    keys of free atoms)."""
    return _build(tree, text)


@functools.lru_cache(maxsize=4096)
def condition_formula(text: str) -> Any:
    """The :func:`formula` of the condition ``text``, ``None`` when it does
    not parse.  Memoised by text (pure, and the formula is never changed:
    the switch checks and the wait ordering share it, and the language
    server re-checks unchanged conditions on every edit)."""
    from loopc.compiler.expr import parse_expression

    try:
        tree, errs = parse_expression(text)
    except Exception:  # noqa: BLE001 - never trust a parser on hostile input
        return None
    return None if tree is None or errs else formula(tree, text)


def _free(n: Any, text: str) -> Any:
    return ("free", _free_key(text[n.start:n.end]))


def _build(n: Any, text: str) -> Any:
    # a module-level function, not a closure: a recursive closure refers to
    # itself through its cell, a reference cycle per condition
    if isinstance(n, Not):
        return ("not", _build(n.operand, text))
    if isinstance(n, And):
        return ("and", [_build(k, text) for k in n.operands])
    if isinstance(n, Or):
        return ("or", [_build(k, text) for k in n.operands])
    if isinstance(n, Lit):
        return ("const", n.value) if isinstance(n.value, bool) else _free(n, text)
    if isinstance(n, Path):
        return ("atom", _Atom(_path_key(n), "==", True))
    if isinstance(n, Compare):
        left, right, op = n.left, n.right, n.op
        if op == "in":
            if isinstance(left, Path) and isinstance(right, ArrayLit):
                vals = [_lit_value(i) for i in right.items]
                if all(ok for ok, _ in vals):
                    return ("or", [("atom", _Atom(_path_key(left), "==", v)) for _, v in vals])
            return _free(n, text)
        if isinstance(right, Path) and not isinstance(left, Path):
            left, right, op = right, left, _FLIP.get(op, op)
        ok, v = _lit_value(right)
        if isinstance(left, Path) and ok and op in _FLIP:
            if op in ("==", "!=") or _is_number(v):
                return ("atom", _Atom(_path_key(left), op, v))
        return _free(n, text)
    return _free(n, text)


def _free_key(src: str) -> str:
    """Whitespace-normalised text of a free atom without enclosing
    parentheses (``(contains(a, 'q'))`` and ``contains(a,'q')`` are one atom;
    string literals are kept verbatim)."""
    toks = list(tokens(src) or (src.strip(),))
    while len(toks) >= 2 and toks[0] == "(" and toks[-1] == ")":
        depth = 0
        for k, t in enumerate(toks):
            depth += (t == "(") - (t == ")")
            if depth == 0 and k < len(toks) - 1:
                break
        else:
            toks = toks[1:-1]
            continue
        break
    return " ".join(toks)


def subjects(formulas: Iterable[Any | None]) -> list[str]:
    """The subject keys the formulas compare with literals (first-seen order)."""
    atoms: list[Any] = []
    for f in formulas:
        if f is not None:
            _atoms(f, atoms)
    return list(dict.fromkeys(a[1].subject for a in atoms if a[0] == "atom"))


def _atoms(f: Any, out: list[Any]) -> None:
    stack = [f]
    while stack:
        g = stack.pop()
        if g[0] in ("and", "or"):
            stack.extend(g[1])
        elif g[0] == "not":
            stack.append(g[1])
        elif g[0] in ("atom", "free"):
            out.append(g)


class Domain(Value):
    """What a subject's declared type allows (docs/language.md#switch-conditions): ``type`` is the field type (``number``, ``enum``,
    ``boolean``, ``string``, ...), ``nullable`` whether ``null`` is possible
    (an optional field without default; Run state is always nullable, a
    write may store ``null``), ``values`` the members of an enum."""

    type: str
    nullable: bool = True
    values: tuple[str, ...] | None = None


def _fits(dom: Domain, nums: list[Any], others: list[Any]) -> bool:
    """Do the literals compared with the subject fit its type?  When not,
    the type pass reports them and the domain is not used."""
    if dom.type == "number":
        return not others
    if dom.type == "enum":
        members = dom.values or ()
        return not nums and bool(members) and all(isinstance(v, str) and v in members for v in others)
    if dom.type == "boolean":
        return not nums and all(isinstance(v, bool) for v in others)
    return not nums and not any(isinstance(v, bool) for v in others)


def _representatives(atoms: Iterable[_Atom],
                     domains: Mapping[str, Domain] | None = None) -> dict[str, list[Any]] | None:
    values: dict[str, list[Any]] = {}
    for a in atoms:
        values.setdefault(a.subject, []).append(a.value)
    reps: dict[str, list[Any]] = {}
    for subject, vals in values.items():
        nums = sorted({Fraction(v) for v in vals if _is_number(v)})
        others = [v for v in vals if not _is_number(v) and v is not None]
        if nums and others:
            return None  # ill-typed: the type pass reports it
        dom = domains.get(subject) if domains else None
        if dom is not None and (not _fits(dom, nums, others) or not dom.nullable and None in vals):
            dom = None  # ill-typed (a null comparison of a never-null value too): the type pass reports it
        r: list[Any] = [None] if dom is None or dom.nullable else []
        if dom is not None and dom.type == "enum" and dom.values:
            r += list(dict.fromkeys(dom.values))  # every member, nothing else
        elif dom is not None and dom.type == "boolean":
            r += [True, False]
        elif nums:
            r += nums + [nums[0] - 1, nums[-1] + 1]
            r += [(a + b) / 2 for a, b in zip(nums, nums[1:])]
        else:
            # each distinct literal once (same type and equal), in first-seen order
            seen = [v for _, v in dict.fromkeys((type(v), v) for v in others)]
            # a value equal to no literal; for a boolean subject also both truth values
            r += seen + [_OTHER]
            if all(isinstance(v, bool) for v in seen):
                r += [b for b in (True, False) if not any(s is b for s in seen)]
        reps[subject] = r
    return reps


def _same(a: Any, b: Any) -> bool:
    if a is _OTHER or b is _OTHER or a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or isinstance(a, Fraction):
        return (_is_number(b) or isinstance(b, Fraction)) and Fraction(a) == Fraction(b)
    return type(a) is type(b) and a == b


def _atom_true(a: _Atom, x: Any) -> bool:
    if a.op == "==":
        return _same(x, a.value)
    if a.op == "!=":
        return not _same(x, a.value)
    if x is None or x is _OTHER or not (_is_number(x) or isinstance(x, Fraction)):
        return False
    xv, v = Fraction(x), Fraction(a.value)
    return {"<": xv < v, "<=": xv <= v, ">": xv > v, ">=": xv >= v}[a.op]


def _eval(f: Any, env: dict[str, Any], free: dict[str, bool]) -> bool:
    """The truth of formula ``f`` for one valuation: ``env`` maps subject
    keys to values, ``free`` free-atom keys to booleans."""
    kind = f[0]
    if kind == "const":
        return bool(f[1])
    if kind == "atom":
        return _atom_true(f[1], env[f[1].subject])
    if kind == "free":
        return free[f[1]]
    if kind == "not":
        return not _eval(f[1], env, free)
    if kind == "and":
        return all(_eval(g, env, free) for g in f[1])
    return any(_eval(g, env, free) for g in f[1])


def _key(x: Any) -> Any:
    """A hashable key with ``_key(a) == _key(b)`` exactly when ``_same(a, b)``."""
    if x.__class__ is str:  # the common case first (equal to the last branch)
        return (4, str, x)
    if x is None:
        return (0,)
    if x is _OTHER:
        return (1,)
    if isinstance(x, bool):
        return (2, x)
    if _is_number(x) or isinstance(x, Fraction):
        return (3, Fraction(x))
    return (4, type(x), x)


class _Space:
    """Every combination of the subjects' representatives and the free
    atoms' truth values, one bit each, so that a formula's truth over the
    whole space is one integer (bit ``i`` set: true in combination ``i``) and
    the verdicts are a few bitwise operations per case instead of one
    evaluation per case and combination."""

    __slots__ = ("reps", "full", "_coords", "_frees", "_index")

    def __init__(self, reps: dict[str, list[Any]], frees: list[str]) -> None:
        self.reps = reps
        dims = [len(reps[s]) for s in sorted(reps)] + [2] * len(frees)
        size = 1
        for n in dims:
            size *= n
        self.full = (1 << size) - 1
        masks: list[list[int]] = []  # per dimension, the combinations holding each of its values
        stride = 1
        for n in dims:
            period = stride * n
            # ``stride`` ones at offset v * stride, repeated every ``period`` bits
            repeat = self.full // ((1 << period) - 1) if size else 0
            masks.append([(((1 << stride) - 1) << (v * stride)) * repeat for v in range(n)])
            stride = period
        self._coords = dict(zip(sorted(reps), masks))
        self._frees = {k: m[1] for k, m in zip(frees, masks[len(reps):])}
        self._index: dict[str, dict[Any, int]] = {}

    def mask(self, f: Any) -> int:
        """The combinations in which formula ``f`` is true (cf. :func:`_eval`)."""
        kind = f[0]
        if kind == "const":
            return self.full if f[1] else 0
        if kind == "atom":
            return self._atom(f[1])
        if kind == "free":
            return self._frees[f[1]]
        if kind == "not":
            return self.full ^ self.mask(f[1])
        if kind == "and":
            m = self.full
            for g in f[1]:
                m &= self.mask(g)
            return m
        m = 0
        for g in f[1]:
            m |= self.mask(g)
        return m

    def _atom(self, a: _Atom) -> int:
        coords = self._coords[a.subject]
        if a.op in ("==", "!="):
            index = self._index.get(a.subject)
            if index is None:
                index = self._index[a.subject] = {}
                for v, x in enumerate(self.reps[a.subject]):
                    k = _key(x)
                    index[k] = index.get(k, 0) | coords[v]
            eq = index.get(_key(a.value), 0)
            return eq if a.op == "==" else self.full ^ eq
        m = 0
        for v, x in enumerate(self.reps[a.subject]):
            if _atom_true(a, x):
                m |= coords[v]
        return m


def _space(formulas: Iterable[Any], domains: Mapping[str, Domain] | None = None,
           fixed: tuple[str, Any] | None = None) -> _Space | None:
    """The representative space of ``formulas`` (``None`` entries skipped),
    with subject ``fixed[0]`` holding only the value ``fixed[1]``; ``None``
    when the literals of a subject are ill-typed or the combinations exceed
    :data:`MAX_ASSIGNMENTS`."""
    atoms: list[Any] = []
    for f in formulas:
        if f is not None:
            _atoms(f, atoms)
    compared = (a[1] for a in atoms if a[0] == "atom")
    if fixed is not None:
        compared = (a for a in compared if a.subject != fixed[0])
    reps = _representatives(compared, domains)
    if reps is None:
        return None
    if fixed is not None:
        reps[fixed[0]] = [fixed[1]]
    frees = sorted({a[1] for a in atoms if a[0] == "free"})
    size = 2 ** len(frees)
    if size > MAX_ASSIGNMENTS:
        return None
    for s in reps:
        size *= len(reps[s])
        if size > MAX_ASSIGNMENTS:
            return None
    return _Space(reps, frees)


class CaseVerdicts(Value):
    """What holds for every value of the subjects.

    * ``never`` — indices of cases that can never match;
    * ``covered`` — ``{i: (j, ...)}``: first_match case ``i`` matches only
      values that the earlier cases ``j`` (those it overlaps) already match;
    * ``exhaustive`` — the cases together match every value.
    """

    never: tuple[int, ...]
    covered: dict[int, tuple[int, ...]]
    exhaustive: bool


def analyze_cases(formulas: Sequence[Any | None],
                  domains: Mapping[str, Domain] | None = None) -> CaseVerdicts | None:
    """Decide the verdicts for one switch's ordered case formulas (``None``
    for a case that could not be abstracted: it is treated as matching
    nothing, which only ever weakens the claims).  ``domains`` maps subject
    keys (``input.cvss``) to what their declared type allows; a subject
    without one may hold any value or ``null``.  Returns ``None`` when the
    representative space exceeds :data:`MAX_ASSIGNMENTS`."""
    space = _space(formulas, domains)
    if space is None:
        return None
    masks = [0 if f is None else space.mask(f) for f in formulas]
    never = tuple(i for i, f in enumerate(formulas) if f is not None and not masks[i])
    covered: dict[int, tuple[int, ...]] = {}
    earlier = 0  # the combinations some earlier case matches
    for i, m in enumerate(masks):
        if m and not m & ~earlier:
            covered[i] = tuple(j for j in range(i) if masks[j] & m)
        earlier |= m
    return CaseVerdicts(never, covered, earlier == space.full)


def false_when(f: Any, subject: str, value: Any) -> bool:
    """True when formula ``f`` is false whenever ``subject`` holds ``value``
    (a scalar: ``None``, a boolean, a number or a string), whatever the
    other subjects and free atoms are.  ``False`` (no claim) when ``value``
    is not a scalar or the representative space exceeds
    :data:`MAX_ASSIGNMENTS`."""
    if not (value is None or isinstance(value, (bool, int, float, str))):
        return False
    space = _space([f], fixed=(subject, value))
    return space is not None and not space.mask(f)
