"""loopc.value behaves as the attrs classes it replaced on the one-file path
(issue 26, start-up): the same declarations under ``attrs.frozen`` /
``attrs.define`` and under :class:`loopc.value.Value` construct, compare,
hash, order, print, evolve, pickle and refuse assignment alike."""

from __future__ import annotations

import copy
import functools
import pickle
import weakref
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopc import value
from loopc.value import Value, field


@attrs.frozen(order=True)
class ASpan:
    line: int
    column: int
    start: int | None = attrs.field(default=None, order=False)


class VSpan(Value, order=True):
    line: int
    column: int
    start: int | None = field(default=None, order=False)


@attrs.frozen
class ADiag:
    code: str
    span: ASpan | None
    pointer: str = ""
    related: tuple[Any, ...] = ()
    tags: list[str] = attrs.field(factory=list, eq=False)


class VDiag(Value):
    code: str
    span: VSpan | None
    pointer: str = ""
    related: tuple[Any, ...] = ()
    tags: list[str] = field(factory=list, eq=False)


@attrs.frozen(kw_only=True)
class ALit:
    value: Any
    start: int = 0


class VLit(Value, kw_only=True):
    value: Any
    start: int = 0


@attrs.frozen(eq=False)
class ANode:
    id: str
    text: str = "x"


class VNode(Value, eq=False):
    id: str
    text: str = "x"


@attrs.define
class AMut:
    n: int
    items: tuple[int, ...] = attrs.field(default=(), converter=tuple)


class VMut(Value, frozen=False):
    n: int
    items: tuple[int, ...] = field(default=(), converter=tuple)


PAIRS = [(ASpan, VSpan), (ADiag, VDiag), (ALit, VLit), (ANode, VNode), (AMut, VMut)]
small = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=2))


def _repr(obj: Any) -> str:
    return repr(obj).replace("ASpan", "Span").replace("VSpan", "Span").replace(type(obj).__name__, type(obj).__name__[1:])


def _build(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", cls(*args, **kwargs)
    except TypeError:
        return "TypeError", None


@given(st.lists(small, max_size=6), st.dictionaries(st.sampled_from(["line", "code", "value", "id", "n", "start", "pointer", "nope"]), small, max_size=3))
def test_construction_and_repr_match_attrs(args: list[Any], kwargs: dict[str, Any]) -> None:
    for a_cls, v_cls in PAIRS:
        a_kind, a = _build(a_cls, tuple(args), kwargs)
        v_kind, v = _build(v_cls, tuple(args), kwargs)
        assert a_kind == v_kind, (a_cls, args, kwargs)
        if a is not None:
            assert _repr(a) == _repr(v)
            assert v.__match_args__ == a.__match_args__


@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), small, small)
def test_equality_hash_and_order_match_attrs(l1: int, c1: int, l2: int, c2: int, s1: Any, s2: Any) -> None:
    a1, a2 = ASpan(l1, c1, s1), ASpan(l2, c2, s2)
    v1, v2 = VSpan(l1, c1, s1), VSpan(l2, c2, s2)
    assert (a1 == a2) == (v1 == v2) and (a1 != a2) == (v1 != v2)
    assert (a1 < a2, a1 <= a2, a1 > a2, a1 >= a2) == (v1 < v2, v1 <= v2, v1 > v2, v1 >= v2)
    if v1 == v2:
        assert hash(v1) == hash(v2)
    d1, d2 = ADiag("LP1", None, tags=["a"]), ADiag("LP1", None, tags=["b"])
    assert d1 == d2 and VDiag("LP1", None, tags=["a"]) == VDiag("LP1", None, tags=["b"])  # eq=False field
    assert VSpan(1, 1) != ASpan(1, 1) and VSpan(1, 1) != (1, 1, None)
    with pytest.raises(TypeError):
        VSpan(1, 1) < ASpan(1, 1)  # noqa: B015


def test_identity_equality_mutability_and_unhashable_mutable() -> None:
    n = VNode("a")
    assert n != VNode("a") and n == n and hash(n) == object.__hash__(n)
    m = VMut(1, [1, 2])
    assert m.items == (1, 2)  # the converter ran
    m.n = 5
    assert m == VMut(5, (1, 2)) and VMut.__hash__ is None and AMut.__hash__ is None


def test_frozen_evolve_pickle_copy_weakref() -> None:
    d = VDiag("LP1", VSpan(1, 2), tags=["t"])
    for target in (d, d.span):
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            target.code = "x"  # type: ignore[misc, union-attr]
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            del target.code  # type: ignore[misc, union-attr]
    e = d.evolve(pointer="/p")
    assert e.pointer == "/p" and e.code == "LP1" and d.pointer == ""
    with pytest.raises(TypeError):
        d.evolve(nope=1)
    assert VMut(1, [3]).evolve(n=2) == VMut(2, (3,))
    for obj in (d, VLit(value=[1]), VMut(3, (1,))):
        assert pickle.loads(pickle.dumps(obj)) == obj
        assert copy.deepcopy(obj) == obj and copy.copy(obj) == obj
    n = pickle.loads(pickle.dumps(VNode("a", "t")))
    assert (n.id, n.text) == ("a", "t")
    assert weakref.ref(d)() is d
    assert not hasattr(d, "__dict__")  # slotted, as attrs made them
    assert [f.name for f in value.fields(VDiag)] == [a.name for a in attrs.fields(ADiag)]
    assert value.is_value(VDiag) and not value.is_value(ADiag)
    with pytest.raises(TypeError):
        value.fields(ADiag)


def test_declaration_mistakes_are_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="without a default follows"):

        class _Bad(Value):
            a: int = 1
            b: int

    class Cached(Value):
        a: int

        @functools.cached_property
        def twice(self) -> int:
            return self.a * 2

    assert Cached(2).twice == 4
    with pytest.raises(TypeError, match="slotted"):
        value.add_field(VSpan, "extra", default=None)
    value.add_field(Cached, "extra", default=None)  # its cached_property gave it an instance __dict__
    assert Cached(1).extra is None and Cached(1, extra=3).extra == 3  # type: ignore[attr-defined, call-arg]
    with pytest.raises(TypeError, match="already has"):
        value.add_field(Cached, "extra")
    with pytest.raises(TypeError):
        field(default=1, factory=list)


def test_a_post_init_runs_and_a_subclass_extends_the_fields() -> None:
    seen = []

    class Base(Value):
        a: int

        def __post_init__(self) -> None:
            seen.append(self.a)

    class Sub(Base):
        b: str = "b"

    assert Sub(1).b == "b" and [f.name for f in value.fields(Sub)] == ["a", "b"]
    Base(2)
    assert seen == [1, 2]
    assert Sub(1) != Base(1)


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((), {}),
    (("c",), {}),
    (("c", None), {}),
    (("c", None, "/p"), {}),
    (("c", None, "/p", (1,), ["t"], "extra"), {}),
    (("c",), {"span": None, "tags": ["x"]}),
    (("c", None), {"span": None}),
    ((), {"code": "c", "span": None, "nope": 1}),
]


@pytest.mark.parametrize("compile_after", [1, 10**9], ids=["compiled", "generic"])
def test_the_generic_and_the_compiled_init_agree_with_attrs(monkeypatch: pytest.MonkeyPatch, compile_after: int) -> None:
    """Before a class has built ``COMPILE_AFTER`` instances its ``__init__``
    is the generic one; then the compiled one: both as attrs' own."""
    monkeypatch.setattr(value, "COMPILE_AFTER", compile_after)

    class Diag(Value):  # a fresh class: nothing compiled yet
        code: str
        span: Any
        pointer: str = ""
        related: tuple[Any, ...] = field(default=(), converter=tuple)
        tags: list[str] = field(factory=list, eq=False)

    @attrs.frozen
    class ADiag2:
        code: str
        span: Any
        pointer: str = ""
        related: tuple[Any, ...] = attrs.field(default=(), converter=tuple)
        tags: list[str] = attrs.field(factory=list, eq=False)

    for args, kwargs in CALLS * 3:
        a_kind, a = _build(ADiag2, args, kwargs)
        v_kind, v = _build(Diag, args, kwargs)
        assert a_kind == v_kind, (args, kwargs)
        if a is not None:
            assert repr(a).replace("ADiag2", "Diag") == repr(v)

    class Kw(Value, kw_only=True):
        a: int
        b: list[int] = field(factory=list)

        def __post_init__(self) -> None:
            self.b.append(self.a)

    for _ in range(3):
        assert Kw(a=1).b == [1]
        with pytest.raises(TypeError):
            Kw(1)  # type: ignore[misc]
        with pytest.raises(TypeError):
            Kw()  # type: ignore[call-arg]
    assert ("__init__" in Diag.__dict__ and Diag.__dict__["__init__"] is not value._lazy_init) == (compile_after == 1)


def test_a_lazy_pattern_compiles_on_first_use_and_then_is_the_pattern() -> None:
    import re

    from loopc import lazyre

    p = lazyre.compile(r"(?P<k>[a-z]+)=(\d+)", re.I)
    assert "_compiled" not in p.__dict__  # nothing compiled yet
    real = re.compile(r"(?P<k>[a-z]+)=(\d+)", re.I)
    for text in ("A=1 b=22", "", "=3", "x=1\ny=2"):
        assert [m.groups() for m in p.finditer(text)] == [m.groups() for m in real.finditer(text)]
        assert bool(p.match(text)) == bool(real.match(text)) and p.sub("-", text) == real.sub("-", text)
        assert p.split(text) == real.split(text) and p.findall(text) == real.findall(text)
    assert (p.pattern, p.flags, p.groupindex, p.groups) == (real.pattern, real.flags, real.groupindex, real.groups)
    assert p.__dict__["match"].__self__ is p.__dict__["_compiled"]  # the compiled pattern's own method
    b = lazyre.compile(rb"\xef\xbb\xbf")
    assert b.match(b"\xef\xbb\xbfx") is not None


def test_classes_of_one_field_and_of_none_compare_hash_and_order() -> None:
    class One(Value, order=True):
        x: int

    class NoField(Value):
        pass

    assert One(1) == One(1) and One(1) != One(2) and One(1) < One(2)
    assert hash(One(1)) == hash(One(1)) and {One(1), One(1)} == {One(1)}
    assert NoField() == NoField() and hash(NoField()) == hash(NoField()) and repr(NoField()) == "NoField()"
    assert One(3).evolve(x=4) == One(4)


def test_a_value_class_is_a_plain_class_so_isinstance_stays_fast() -> None:
    """No metaclass: ``isinstance`` against a value class takes CPython's
    exact-type path (a metaclass would add an ``__instancecheck__`` lookup
    to every failing check, and the passes make many)."""
    assert type(VDiag) is type and type(VSpan) is type and not issubclass(VDiag, Value)
    assert value.is_value(VDiag) and not value.is_value(Value) and not value.is_value(ADiag)
    assert not isinstance("x", VDiag) and isinstance(VDiag("c", None), VDiag)
