"""The switch-condition reasoning (loopc.analyzer.conditions) is sound: a
case it calls never-matching, covered or the cases it calls exhaustive are
so for every concrete value (checked by brute force over a dense sample)."""
from __future__ import annotations

import pytest

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from loopc.analyzer.conditions import Domain, _eval, analyze_cases, formula
from loopc.compiler.expr import parse_expression

NUMS = [0, 3, 7, 9]
STRS = ["'a'", "'b'", "'c'"]
atom = st.one_of(
    st.builds(lambda op, n: f"input.x {op} {n}", st.sampled_from(["<", "<=", ">", ">=", "==", "!="]),
              st.sampled_from(NUMS)),
    st.builds(lambda op, s: f"input.s {op} {s}", st.sampled_from(["==", "!="]), st.sampled_from(STRS)),
    st.builds(lambda xs: f"input.s in [{', '.join(xs)}]", st.lists(st.sampled_from(STRS), min_size=1, max_size=3)),
    st.just("input.flag"),
    st.just("contains(input.s, 'q')"),
)
cond = st.recursive(atom, lambda inner: st.one_of(
    st.builds(lambda a, b: f"({a}) && ({b})", inner, inner),
    st.builds(lambda a, b: f"({a}) || ({b})", inner, inner),
    st.builds(lambda a: f"!({a})", inner)), max_leaves=4)

SAMPLE_X = [None] + [Fraction(n, 2) for n in range(-4, 24)]
SAMPLE_S = [None, "a", "b", "c", "zz"]


def _formula(text: str):
    tree, errs = parse_expression(text)
    assert not errs, (text, errs)
    return formula(tree, text)


def _concrete(formulas):
    for x in SAMPLE_X:
        for s in SAMPLE_S:
            for flag in (None, True, False):
                for q in (False, True):
                    env = {"input.x": x, "input.s": s, "input.flag": flag}
                    yield [_eval(f, env, {"contains ( input.s , 'q' )": q}) for f in formulas]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(cond, min_size=1, max_size=4))
def test_claims_hold_for_every_concrete_value(conds: list[str]) -> None:
    formulas = [_formula(c) for c in conds]
    v = analyze_cases(formulas)
    assert v is not None
    rows = list(_concrete(formulas))
    for i in v.never:
        assert not any(r[i] for r in rows), conds
    for i in v.covered:
        assert all(any(r[:i]) for r in rows if r[i]), conds
    if v.exhaustive:
        assert all(any(r) for r in rows), conds


def test_the_cvss_order_is_caught_and_the_right_order_is_not() -> None:
    wrong = analyze_cases([_formula("input.cvss >= 7"), _formula("input.cvss >= 9")])
    right = analyze_cases([_formula("input.cvss >= 9"), _formula("input.cvss >= 7")])
    assert wrong is not None and wrong.covered == {1: (0,)}
    assert right is not None and right.covered == {}


def test_too_many_combinations_claims_nothing() -> None:
    many = [_formula(" || ".join(f"input.v{k} == {n}" for n in range(6))) for k in range(6)]
    assert analyze_cases(many) is None


# -- declared domains: required / enum / boolean closure ---------------------

DOMAINS = {
    "input.x": st.sampled_from([None, Domain("number", True), Domain("number", False)]),
    "input.s": st.sampled_from([None, Domain("enum", False, ("a", "b")), Domain("enum", True, ("a", "b", "c")),
                                Domain("string", False)]),
    "input.flag": st.sampled_from([None, Domain("boolean", False), Domain("boolean", True)]),
}


def _domain_values(key: str, dom, sample: list) -> list:
    if dom is None:
        return sample
    if dom.type == "enum":
        vals = list(dom.values)
    elif dom.type == "boolean":
        vals = [True, False]
    else:
        vals = [v for v in sample if v is not None]
    return vals + ([None] if dom.nullable else [])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(cond, min_size=1, max_size=4), st.fixed_dictionaries(DOMAINS))
@pytest.mark.slow
def test_claims_hold_for_every_value_of_the_declared_domains(conds: list[str], doms: dict) -> None:
    """With domains, the claims hold for every value the declared types
    allow (and a domain the literals do not fit is ignored, so the claims
    then hold for every value)."""
    formulas = [_formula(c) for c in conds]
    domains = {k: d for k, d in doms.items() if d is not None}
    v = analyze_cases(formulas, domains)
    assert v is not None
    base = analyze_cases(formulas)
    assert base is not None
    # a domain only ever adds claims
    assert set(base.never) <= set(v.never) and (not base.exhaustive or v.exhaustive)
    xs = _domain_values("input.x", doms["input.x"], SAMPLE_X)
    ss = _domain_values("input.s", doms["input.s"], SAMPLE_S)
    fl = _domain_values("input.flag", doms["input.flag"], [None, True, False])
    rows = []
    for x in xs:
        for s in ss:
            for flag in fl:
                for q in (False, True):
                    env = {"input.x": x, "input.s": s, "input.flag": flag}
                    rows.append([_eval(f, env, {"contains ( input.s , 'q' )": q}) for f in formulas])
    for i in v.never:
        assert not any(r[i] for r in rows), (conds, doms)
    for i in v.covered:
        assert all(any(r[:i]) for r in rows if r[i]), (conds, doms)
    if v.exhaustive:
        assert all(any(r) for r in rows), (conds, doms)


def test_required_number_and_enum_members_are_exhaustive() -> None:
    split = [_formula("input.x >= 7"), _formula("input.x < 7")]
    assert not analyze_cases(split).exhaustive
    assert analyze_cases(split, {"input.x": Domain("number", False)}).exhaustive
    assert not analyze_cases(split, {"input.x": Domain("number", True)}).exhaustive
    members = [_formula("input.s == 'a'"), _formula("input.s == 'b'")]
    assert analyze_cases(members, {"input.s": Domain("enum", False, ("a", "b"))}).exhaustive
    assert not analyze_cases(members, {"input.s": Domain("enum", False, ("a", "b", "c"))}).exhaustive
    assert not analyze_cases(members, {"input.s": Domain("enum", True, ("a", "b"))}).exhaustive
    # a literal outside the enum (the type pass reports it): the domain is not used
    odd = [_formula("input.s == 'a'"), _formula("input.s != 'a' && input.s != 'z'")]
    assert analyze_cases(odd, {"input.s": Domain("enum", False, ("a", "z2"))}).never == ()


# -- the bit-set evaluation decides exactly what enumeration decides ---------

def _enumerated(formulas, domains=None):
    """The verdicts by evaluating every case in every combination of
    representatives and free-atom values one by one (what analyze_cases
    decided before it evaluated each case once over the whole space)."""
    import itertools

    from loopc.analyzer.conditions import _atoms, _representatives

    atoms: list = []
    for f in formulas:
        if f is not None:
            _atoms(f, atoms)
    reps = _representatives((a[1] for a in atoms if a[0] == "atom"), domains)
    if reps is None:
        return None
    frees = sorted({a[1] for a in atoms if a[0] == "free"})
    subjects = sorted(reps)
    n = len(formulas)
    can, escapes, overlaps, exhaustive = [False] * n, [False] * n, [set() for _ in range(n)], True
    for combo in itertools.product(*(reps[s] for s in subjects)):
        env = dict(zip(subjects, combo))
        for bits in itertools.product((False, True), repeat=len(frees)):
            truth = [f is not None and _eval(f, env, dict(zip(frees, bits))) for f in formulas]
            exhaustive = exhaustive and any(truth)
            earlier: list = []
            for i, t in enumerate(truth):
                if t:
                    can[i] = True
                    escapes[i] = escapes[i] or not earlier
                    overlaps[i].update(earlier)
                    earlier.append(i)
    never = tuple(i for i in range(n) if formulas[i] is not None and not can[i])
    covered = {i: tuple(sorted(overlaps[i])) for i in range(n)
               if formulas[i] is not None and can[i] and not escapes[i]}
    return never, covered, exhaustive


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.none(), cond), min_size=0, max_size=6), st.fixed_dictionaries(DOMAINS))
def test_verdicts_equal_case_by_case_enumeration(conds: list, doms: dict) -> None:
    formulas = [None if c is None else _formula(c) for c in conds]
    for domains in (None, {k: d for k, d in doms.items() if d is not None}):
        v = analyze_cases(formulas, domains)
        want = _enumerated(formulas, domains)
        assert (v.never, v.covered, v.exhaustive) == want, (conds, domains)


def test_false_when_agrees_with_enumeration() -> None:
    from loopc.analyzer.conditions import false_when

    f = _formula("input.x >= 7 && input.s == 'a' || contains(input.s, 'q') && input.x == 3")
    assert not false_when(f, "input.x", 3) and not false_when(f, "input.x", 8)
    assert false_when(f, "input.x", None) and false_when(f, "input.x", 5)
    assert not false_when(_formula("contains(input.s, 'q') || input.x == 3"), "input.x", None)  # the free atom may hold
    g = _formula("input.x >= 7 && (input.s == 'a' || input.flag)")
    assert false_when(g, "input.x", 6.5) and false_when(g, "input.x", None) and not false_when(g, "input.x", 7)
    assert false_when(_formula("input.s != 'a'"), "input.s", "a")
    assert not false_when(_formula("input.s != 'a'"), "input.s", "b")


def test_many_free_atoms_without_comparisons_claim_nothing() -> None:
    """Thirteen independent atoms are 8,192 combinations: past the bound
    even with no compared subject (the work stays bounded)."""
    many = [_formula(f"contains(input.s, 'k{k}')") for k in range(13)]
    assert analyze_cases(many) is None
    assert analyze_cases(many[:12]) is not None
