"""Value classes that cost nothing to define: what ``attrs.frozen`` gave the
classes on the path of ``loopc check FILE``, written once here instead of
generated per class on every start (docs/architecture.md#value-classes).

``attrs`` generates and compiles ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and the frozen ``__setattr__`` of every class when its module is
imported, and rebuilds each slotted class: ~0.45 ms per class, ~34 ms for the
74 classes the one-file check defined, plus ~27 ms importing ``attrs``
itself.  A :class:`Value` subclass declares its fields the same way
(annotations, defaults, :func:`field`); :class:`ValueMeta` records them in a few
microseconds, the shared ``__eq__``/``__hash__``/``__repr__`` below read
them, and ``__init__`` is generic for a class's first instances and
compiled after :data:`COMPILE_AFTER` of them (so a class the run builds a
few times never pays for compiling one), with the same semantics as attrs'
generated one.

Class keywords (all optional): ``eq`` (default ``True``: equal when of the
same class with equal compared fields, hashed by them; ``False``: identity
equality and hash), ``order`` (``<`` and friends over the ordered fields),
``kw_only`` (every field keyword-only), ``frozen`` (default ``True``:
assignment raises :class:`attrs.exceptions.FrozenInstanceError`; ``False``
is ``attrs.define``'s mutable, unhashable class), ``slots`` (default
``True``: slotted as attrs makes them; ``False`` adds an instance
``__dict__``, which :func:`add_field` needs; a class with a
:func:`functools.cached_property` gets one anyway).  ``class X(Value)`` is
built by :class:`ValueMeta` into a plain class: ``issubclass(X, Value)`` is
false, :func:`is_value` tells.

A class may define ``__post_init__`` (called at the end of ``__init__``) or
its own ``__init__``.  :meth:`Value.evolve` is ``attrs.evolve``; :func:`fields`
and :func:`is_value` are ``attrs.fields`` and ``attrs.has``.
"""

from __future__ import annotations

import operator
import reprlib
from typing import TYPE_CHECKING, Any, Callable, ClassVar, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_kw: Any) -> Callable[[Any], Any]:
        return lambda obj: obj


__all__ = ["Value", "ValueBase", "Field", "field", "fields", "is_value", "add_field", "declare", "NOTHING"]

_T = TypeVar("_T")


class _Nothing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOTHING"

    def __reduce__(self) -> str:
        return "NOTHING"


#: "no default": the field is required.
NOTHING: Any = _Nothing()


class Field:
    """One declared field: ``name``, ``type`` (the annotation as written: a
    string under ``from __future__ import annotations``), ``default``
    (:data:`NOTHING` when required), ``factory`` (called for a fresh default),
    ``kw_only``, ``eq`` (compared and hashed), ``order`` (ordered),
    ``repr`` (shown), ``converter`` (applied to the argument)."""

    __slots__ = ("name", "type", "default", "factory", "kw_only", "eq", "order", "repr", "converter")

    def __init__(self, name: str = "", type: Any = None, default: Any = NOTHING, factory: Callable[[], Any] | None = None,
                 kw_only: bool = False, eq: bool = True, order: bool = True, repr: bool = True,
                 converter: Callable[[Any], Any] | None = None) -> None:
        self.name = name
        self.type = type
        self.default = default
        self.factory = factory
        self.kw_only = kw_only
        self.eq = eq
        self.order = order
        self.repr = repr
        self.converter = converter

    @property
    def required(self) -> bool:
        return self.default is NOTHING and self.factory is None

    def _named(self, name: str, type: Any, kw_only: bool) -> "Field":
        return Field(name, type, self.default, self.factory, self.kw_only or kw_only, self.eq, self.order, self.repr,
                     self.converter)

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r}, default={self.default!r})"


def field(*, default: Any = NOTHING, factory: Callable[[], Any] | None = None, kw_only: bool = False,
          eq: bool = True, order: bool = True, repr: bool = True,
          converter: Callable[[Any], Any] | None = None) -> Any:
    """A field with options (``attrs.field``'s names): ``default`` or
    ``factory``, ``kw_only``, ``eq=False`` (left out of ``==`` and the hash),
    ``order=False``, ``repr=False``, ``converter``."""
    if default is not NOTHING and factory is not None:
        raise TypeError("a field takes a default or a factory, not both")
    return Field(default=default, factory=factory, kw_only=kw_only, eq=eq, order=order, repr=repr, converter=converter)


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    return getattr(annotation, "__origin__", None) is not None and "ClassVar" in repr(annotation)


def _frozen_error(*_args: Any) -> None:
    from attrs.exceptions import FrozenInstanceError  # only on the error path: attrs stays off start-up

    raise FrozenInstanceError()


def _restore(cls: type, values: tuple[Any, ...]) -> Any:
    obj: Any = object.__new__(cls)
    for f, v in zip(cls.__value_fields__, values):  # type: ignore[attr-defined]
        object.__setattr__(obj, f.name, v)
    return obj


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return operator.attrgetter(*names)


#: Instances a class builds with the generic ``__init__`` before its own is
#: compiled: compiling costs ~0.1 ms a class, the generic one ~1 µs more an
#: instance, and most classes of a one-file check build a few instances.
COMPILE_AFTER = 16


def _lazy_init(self: Any, *args: Any, **kwargs: Any) -> None:
    owner: Any = type(self)
    if owner.__dict__.get("__init__") is not _lazy_init:  # called through super().__init__
        owner = next(c for c in owner.__mro__ if c.__dict__.get("__init__") is _lazy_init)
    built = owner.__dict__.get("_value_built", 0) + 1
    if built < COMPILE_AFTER:
        type.__setattr__(owner, "_value_built", built)
        _generic_init(owner, self, args, kwargs)
        return
    init = _compile_init(owner)
    type.__setattr__(owner, "__init__", init)
    init(self, *args, **kwargs)


def _generic_init(cls: Any, self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """What the compiled ``__init__`` does, read from the fields (the same
    values; a wrong call raises :class:`TypeError` as it does)."""
    positional = cls.__match_args__
    if len(args) > len(positional):
        raise TypeError(f"{cls.__qualname__}.__init__() takes {len(positional) + 1} positional arguments "
                        f"but {len(args) + 1} were given")
    given = dict(zip(positional, args))
    for k, v in kwargs.items():
        if k in given:
            raise TypeError(f"{cls.__qualname__}.__init__() got multiple values for argument {k!r}")
        given[k] = v
    for f in cls.__value_fields__:
        n = f.name
        if n in given:
            v = given.pop(n)
            if v is NOTHING and f.factory is not None:
                v = f.factory()
        elif f.factory is not None:
            v = f.factory()
        elif f.default is not NOTHING:
            v = f.default
        else:
            raise TypeError(f"{cls.__qualname__}.__init__() missing 1 required argument: {n!r}")
        if f.converter is not None:
            v = f.converter(v)
        object.__setattr__(self, n, v)
    if given:
        raise TypeError(f"{cls.__qualname__}.__init__() got an unexpected keyword argument {next(iter(given))!r}")
    if getattr(cls, "__post_init__", None) is not None:
        self.__post_init__()


def _compile_init(cls: type) -> Callable[..., None]:
    """The ``__init__`` attrs would generate for ``cls``'s fields."""
    glb: dict[str, Any] = {"_set": object.__setattr__, "NOTHING": NOTHING}
    positional: list[str] = []
    keyword: list[str] = []
    # as attrs writes them: through object.__setattr__ bound once (a call of two arguments, not three)
    body: list[str] = ["_s = _set.__get__(self)"]
    for i, f in enumerate(cls.__value_fields__):  # type: ignore[attr-defined]
        n = f.name
        value = n
        if f.factory is not None:
            glb[f"_f{i}"] = f.factory
            param = f"{n}=NOTHING"
            value = f"(_f{i}() if {n} is NOTHING else {n})"
        elif f.default is not NOTHING:
            glb[f"_d{i}"] = f.default
            param = f"{n}=_d{i}"
        else:
            param = n
        if f.converter is not None:
            glb[f"_c{i}"] = f.converter
            value = f"_c{i}({value})"
        (keyword if f.kw_only else positional).append(param)
        body.append(f"_s({n!r}, {value})")
    if getattr(cls, "__post_init__", None) is not None:
        body.append("self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    src = f"def __init__({params}):\n    " + "\n    ".join(body or ["pass"]) + "\n"
    ns: dict[str, Any] = {}
    exec(compile(src, f"<loopc.value {cls.__module__}.{cls.__qualname__}.__init__>", "exec"), glb, ns)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _install(cls: Any, all_fields: tuple[Field, ...]) -> None:
    cls.__value_fields__ = all_fields
    setattr(cls, "__match_args__", tuple(f.name for f in all_fields if not f.kw_only))  # noqa: B010 - mypy: not assignable
    # staticmethod: a one- or no-field getter is a Python function, which the instance would bind
    cls._value_key = staticmethod(_getter(tuple(f.name for f in all_fields if f.eq)))
    cls._value_order = staticmethod(_getter(tuple(f.name for f in all_fields if f.eq and f.order)))
    cls._value_shown = tuple(f.name for f in all_fields if f.repr)
    seen_default = None
    for f in all_fields:
        if f.kw_only:
            continue
        if not f.required:
            seen_default = f.name
        elif seen_default is not None:
            raise TypeError(f"{cls.__qualname__}: field {f.name!r} without a default follows {seen_default!r}, "
                            "which has one")


def _own_fields(body: Any, kw_only: bool) -> list[Field]:
    """The fields a class body declares: its annotations (``ClassVar`` ones
    left out), with their defaults or :func:`field` markers."""
    own: list[Field] = []
    for fname, annotation in body.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        declared = body.get(fname, NOTHING)
        if isinstance(declared, Field):
            own.append(declared._named(fname, annotation, kw_only))
        else:
            own.append(Field(fname, annotation, declared, kw_only=kw_only))
    return own


def _inherited(bases: tuple[type, ...]) -> dict[str, Field]:
    out: dict[str, Field] = {}
    for c in reversed([c for b in bases for c in b.__mro__]):
        for f in c.__dict__.get("__value_fields__", ()):
            out.pop(f.name, None)
            out[f.name] = f
    return out


def _behaviour(body: Any, put: Callable[[str, Any], None], *, eq: bool, order: bool, frozen: bool) -> None:
    """What the class keywords ask for, each method put only where the body
    does not define its own."""
    if "__init__" not in body:
        put("__init__", _lazy_init)
    if not frozen:
        if "__setattr__" not in body:
            put("__setattr__", object.__setattr__)
        if "__delattr__" not in body:
            put("__delattr__", object.__delattr__)
    if not eq:
        for name in ("__eq__", "__ne__", "__hash__"):
            if name not in body:
                put(name, getattr(object, name))
    elif not frozen and "__hash__" not in body:
        put("__hash__", None)  # attrs.define: mutable and equal by value, so unhashable
    if order:
        for name, method in (("__lt__", ValueBase._lt), ("__le__", ValueBase._le), ("__gt__", ValueBase._gt),
                             ("__ge__", ValueBase._ge)):
            if name not in body:
                put(name, method)


class ValueBase:
    """What every value class has (:class:`Value`'s documentation): the
    shared methods, and :meth:`__init_subclass__` for a subclass of a value
    class (which no metaclass builds: see :class:`ValueMeta`)."""

    __slots__ = ("__weakref__",)
    __value_fields__: ClassVar[tuple[Field, ...]]
    _value_key: ClassVar[Any]  # Callable[[Value], tuple]: the compared fields' values
    _value_order: ClassVar[Any]  # Callable[[Value], tuple]: the ordered fields' values
    _value_shown: ClassVar[tuple[str, ...]]

    if not TYPE_CHECKING:
        __setattr__ = _frozen_error
        __delattr__ = _frozen_error

    def __init_subclass__(cls, *, eq: bool = True, order: bool = False, kw_only: bool = False, frozen: bool = True,
                          slots: bool = True, **kwargs: Any) -> None:
        """A class derived from a value class (not from :class:`Value`
        itself): its fields are recorded here, after its bases'.  It keeps
        an instance ``__dict__`` (a class cannot get slots after its body)."""
        super().__init_subclass__(**kwargs)
        body = cls.__dict__
        if body.get("_value_by_meta") or type(cls) is not type:
            return  # ValueMeta built it and records its fields, or it is Value itself
        own = _own_fields(body, kw_only)
        inherited = _inherited(cls.__bases__)
        for f in own:
            inherited.pop(f.name, None)
            if isinstance(body.get(f.name), Field):
                if f.default is NOTHING:
                    delattr(cls, f.name)  # a factory's or a required field's marker: no class attribute
                else:
                    setattr(cls, f.name, f.default)
        _behaviour(body, lambda name, v: setattr(cls, name, v), eq=eq, order=order, frozen=frozen)
        _install(cls, (*inherited.values(), *own))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._value_key(self) == self._value_key(other)

    def __ne__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._value_key(self) != self._value_key(other)

    def __hash__(self) -> int:
        return hash(self._value_key(self))

    def _lt(self, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._value_order(self) < self._value_order(other)

    def _le(self, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._value_order(self) <= self._value_order(other)

    def _gt(self, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._value_order(self) > self._value_order(other)

    def _ge(self, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._value_order(self) >= self._value_order(other)

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._value_shown)
        return f"{self.__class__.__qualname__.rsplit('>.', 1)[-1]}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (self.__class__, tuple([getattr(self, f.name) for f in self.__value_fields__])))

    def evolve(self: _T, **changes: Any) -> _T:
        """A copy with ``changes`` applied (``attrs.evolve``): the other
        fields are passed to ``__init__`` as they are (so converters and
        ``__post_init__`` run again); an unknown name raises :class:`TypeError`."""
        cls = self.__class__
        for f in cls.__value_fields__:  # type: ignore[attr-defined]
            if f.name not in changes:
                changes[f.name] = getattr(self, f.name)
        return cls(**changes)


@dataclass_transform(field_specifiers=(field, Field), eq_default=True, order_default=False,
                     kw_only_default=False, frozen_default=True)
class ValueMeta(type):
    """Builds each ``class X(Value, ...)``: records the fields its body
    declares, gives it ``__slots__`` for them (``slots=False``: an instance
    ``__dict__`` as well, for :func:`add_field` and
    :func:`functools.cached_property`) and what the class keywords ask for —
    and returns a *plain* class, derived from the methods' base instead of
    from :class:`Value`, whose type is ``type``.  A class whose type is a
    metaclass makes every failing ``isinstance`` check against it take twice
    as long (CPython looks up ``__instancecheck__`` on the metaclass), and
    the passes make hundreds of thousands of those per tree; a first version
    that kept the metaclass cost the cold tree 5% more instructions.  So
    ``issubclass(X, Value)`` is false: ask :func:`is_value`."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any], *, eq: bool = True,
                order: bool = False, kw_only: bool = False, frozen: bool = True, slots: bool = True) -> Any:
        if not any(isinstance(b, ValueMeta) for b in bases):
            return super().__new__(mcls, name, bases, ns)  # Value itself
        bases = tuple(ValueBase if b is Value else b for b in bases)
        own = _own_fields(ns, kw_only)
        inherited = _inherited(bases)
        have = {n for b in bases for c in b.__mro__ for n in c.__dict__.get("__slots__", ())}
        for f in own:
            inherited.pop(f.name, None)
            declared = ns.get(f.name, NOTHING)
            if slots or isinstance(declared, Field):
                ns.pop(f.name, None)
            if not slots and isinstance(declared, Field) and f.default is not NOTHING:
                ns[f.name] = f.default
        extra = ["__dict__"] if not slots and "__dict__" not in have else []
        if slots and any(type(v).__name__ == "cached_property" for v in ns.values()):
            extra = ["__dict__"]  # cached_property keeps its values there
        slotted = [f.name for f in own if f.name not in have] if slots else []  # slots=False: all in __dict__
        ns["__slots__"] = (*ns.get("__slots__", ()), *slotted, *extra)
        ns["_value_by_meta"] = True
        _behaviour(ns, ns.__setitem__, eq=eq, order=order, frozen=frozen)
        cls = type.__new__(type, name, bases, ns)
        _install(cls, (*inherited.values(), *own))
        return cls

    def __init__(cls, name: str, bases: tuple[type, ...], ns: dict[str, Any], **_kw: Any) -> None:
        super().__init__(name, bases, ns)


class Value(ValueBase, metaclass=ValueMeta):
    """Base of the value classes (module docstring): fields from
    annotations, ``__init__`` in field order, value equality and hash,
    ``Name(field=value, ...)`` repr, immutable, pickled by its fields.
    ``class X(Value)`` gives a plain slotted class (:class:`ValueMeta`); a
    class derived from ``X`` is a value class too, with an instance
    ``__dict__``."""

    __slots__ = ()


def declare(cls: type, names: tuple[str, ...]) -> None:
    """Make ``cls``, a :class:`ValueBase` subclass that writes its own
    ``__slots__`` and ``__init__`` (the wire vocabulary of
    :mod:`loopc.kinds.spec`), a value class over the fields ``names`` (its
    ``__init__`` order): the shared equality, hash, repr, pickling and
    :meth:`~ValueBase.evolve` then read them."""
    _install(cls, tuple(Field(n) for n in names))


def fields(cls: type) -> tuple[Field, ...]:
    """The fields of a :class:`Value` class, inherited ones first
    (``attrs.fields``); :class:`TypeError` for another class."""
    try:
        return cls.__value_fields__  # type: ignore[attr-defined]
    except AttributeError:
        raise TypeError(f"{cls!r} is not a value class") from None


def is_value(cls: type) -> bool:
    """True for a value class (``attrs.has``)."""
    return isinstance(cls, type) and getattr(cls, "__value_fields__", None) is not None


def add_field(cls: type, name: str, *, default: Any = NOTHING, kw_only: bool = False,
              annotation: Any = "Any") -> None:
    """Add field ``name`` after the others to value class ``cls``, one
    whose instances have a ``__dict__`` (``slots=False``; a derived field:
    the node kinds' generic fields of :mod:`loopc.compiler.model`).
    ``TypeError`` for a slotted class or a name it already has."""
    if not any("__dict__" in c.__dict__ for c in cls.__mro__ if c is not object):
        raise TypeError(f"{cls.__qualname__} is slotted: declare {name!r} in its body or use slots=False")
    if any(f.name == name for f in fields(cls)):
        raise TypeError(f"{cls.__qualname__} already has a field {name!r}")
    _install(cls, (*fields(cls), Field(name, annotation, default, kw_only=kw_only)))
    if default is not NOTHING:
        setattr(cls, name, default)
    if "__annotations__" not in cls.__dict__:
        cls.__annotations__ = {}
    cls.__dict__["__annotations__"][name] = annotation
    if "__init__" in cls.__dict__ and cls.__dict__["__init__"] is not _lazy_init:
        cls.__init__ = _lazy_init  # type: ignore[misc]  # recompiled with the new field on first use
