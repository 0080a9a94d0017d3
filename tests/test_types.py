"""The type model (loopc.compiler.types): assignability, wire forms,
literals, descriptions (seed 004 §4.2, §4.4; syntax sheet §2, §7)."""
from __future__ import annotations

import pytest

from loopc.compiler import types as T
from loopc.compiler.model import FieldSchema
from loopc.compiler.types import Type


def fs(t: str, required: bool = False, **kw) -> FieldSchema:
    return FieldSchema(t, required, **kw)


class TestFromFieldSchema:
    def test_scalars(self) -> None:
        for k in T.FIELD_KINDS:
            if k in ("enum", "array"):
                continue
            assert T.type_of_field(fs(k, True)) == Type(k)
        assert T.type_of_field(fs("string")) == Type("string", optional=True)
        assert T.type_of_field(fs("string", default="x")).optional is False

    def test_enum_and_array(self) -> None:
        assert T.type_of_field(fs("enum", True, values=("a", "b"))) == T.enum_of(["a", "b"])
        t = T.type_of_field(fs("array", True, items=fs("array", items=fs("agent"))))
        assert t == T.array_of(T.array_of(T.AGENT))  # element types are never optional
        assert T.type_of_field(fs("array", True)) == T.array_of(None)

    def test_unknown_kind_is_unknown(self) -> None:
        assert T.type_of_field(fs("strng", True)).kind == "unknown"

    def test_record(self) -> None:
        r = T.record_of({"a": fs("number", True), "b": fs("string")})
        assert r.kind == "object" and r.field_names() == ("a", "b")
        assert r.field("a") == T.NUMBER and r.field("b") == Type("string", optional=True)
        assert r.field("c") is None
        r = T.record_of({"a": fs("number", True)}, optional=True)
        assert r.optional and r.field("a").optional  # type: ignore[union-attr]


class TestAssignable:
    @pytest.mark.parametrize("src,dst", [
        (T.STRING, T.STRING), (T.enum_of("ab"), T.STRING), (T.AGENT, T.RESPONDER),
        (T.enum_of("a"), T.enum_of("ab")), (T.UNKNOWN, T.SCOPE), (T.SCOPE, T.UNKNOWN),
        (T.NULL, T.with_optional(T.STRING)), (T.with_optional(T.STRING), T.STRING),
        (T.array_of(T.AGENT), T.array_of(T.RESPONDER)), (T.array_of(None), T.array_of(T.MEMBER)),
        (T.array_of(T.enum_of("a")), T.array_of(T.STRING)),
        (T.object_of({"a": T.NUMBER}), T.OBJECT), (T.OBJECT, T.object_of({"a": T.NUMBER})),
        (T.object_of({"a": T.NUMBER, "b": T.STRING}), T.object_of({"a": T.NUMBER})),
        (T.object_of({}), T.object_of({"a": T.with_optional(T.NUMBER)})),
        (T.WORK_ITEMS, T.WORK_ITEMS),
    ])
    def test_yes(self, src: Type, dst: Type) -> None:
        assert T.assignable(src, dst)

    @pytest.mark.parametrize("src,dst", [
        (T.STRING, T.enum_of("ab")), (T.STRING, T.MEMBER), (T.STRING, T.DURATION),
        (T.CHANNEL, T.SCOPE), (T.RESPONDER, T.AGENT), (T.MEMBER, T.AGENT), (T.AGENT, T.MEMBER),
        (T.enum_of("abc"), T.enum_of("ab")), (T.NULL, T.STRING), (T.NUMBER, T.STRING),
        (T.array_of(T.STRING), T.array_of(T.MEMBER)), (T.array_of(T.STRING), T.STRING),
        (T.OBJECT, T.SCOPE), (T.SCOPE, T.OBJECT), (T.object_of({}), T.object_of({"a": T.NUMBER})),
        (T.object_of({"a": T.STRING}), T.object_of({"a": T.NUMBER})), (T.BOOLEAN, T.NUMBER),
        (T.array_of(T.array_of(T.STRING)), T.array_of(T.array_of(T.NUMBER))),
    ])
    def test_no(self, src: Type, dst: Type) -> None:
        assert not T.assignable(src, dst)

    def test_deep_arrays_iterative(self) -> None:
        a = T.STRING
        b = T.STRING
        for _ in range(5000):
            a = T.array_of(a)
            b = T.array_of(b)
        assert T.assignable(a, b)

    def test_comparable(self) -> None:
        assert T.comparable(T.enum_of("a"), T.STRING)
        assert T.comparable(T.STRING, T.enum_of("a"))
        assert T.comparable(T.UNKNOWN, T.NUMBER)
        assert not T.comparable(T.MEMBER, T.AGENT)
        assert not T.comparable(T.STRING, T.CHANNEL)


class TestWireForms:
    @pytest.mark.parametrize("s,ok", [
        ("PT30S", True), ("P1D", True), ("PT1H30M", True), ("P1DT2H", True), ("PT0.5S", True),
        ("P", False), ("PT", False), ("P1DT", False), ("P1Y", False), ("P1W", False), ("PT1.S", False),
        ("pt1h", False), ("1H", False),
    ])
    def test_duration(self, s: str, ok: bool) -> None:
        assert T.is_duration(s) is ok

    def test_duration_seconds(self) -> None:
        assert T.duration_seconds("P1DT1H1M1.5S") == 86400 + 3600 + 60 + 1.5
        assert T.duration_seconds("nope") is None

    @pytest.mark.parametrize("s,ok", [
        ("2024-05-01T09:00:00Z", True), ("2024-05-01T09:00:00.123+02:00", True),
        ("2024-05-01t09:00:00z", True), ("2016-12-31T23:59:60Z", True),
        ("2024-05-01T09:00:00", False), ("2024-02-30T00:00:00Z", False), ("2024-05-01 09:00:00Z", False),
        ("2024-05-01T24:00:00Z", False), ("2024-05-01T09:00:00+25:00", False), ("2024-05-01", False),
    ])
    def test_datetime(self, s: str, ok: bool) -> None:
        assert T.is_datetime(s) is ok

    def test_ids_and_channels(self) -> None:
        assert T.is_canonical_id("mem_ana") and T.is_canonical_id("agt_Back-end_1")
        assert not T.is_canonical_id("ana") and not T.is_canonical_id("Mem_ana")
        assert not T.is_canonical_id("mem_" + "x" * 253)
        assert T.is_channel("#release") and T.is_channel("#0-a_b")
        assert not T.is_channel("release") and not T.is_channel("#Release") and not T.is_channel("#")

    def test_numbers(self) -> None:
        assert T.is_number(1) and T.is_number(1.5) and T.is_number(2**53 - 1)
        assert not T.is_number(2**53) and not T.is_number(float("nan"))
        assert not T.is_number(float("inf")) and not T.is_number(True)

    def test_wire_form_error(self) -> None:
        assert T.wire_form_error("high", T.enum_of(["high"])) is None
        assert "not one of" in (T.wire_form_error("x", T.enum_of(["high"])) or "")
        assert T.wire_form_error("anything", T.STRING) is None
        assert T.wire_form_error("PT1H", T.DURATION) is None
        assert "ISO 8601" in (T.wire_form_error("1h", T.DURATION) or "")
        assert T.wire_form_error("x", T.NUMBER) is not None


class TestLiterals:
    @pytest.mark.parametrize("value,t", [
        ("x", T.STRING), ("high", T.enum_of(["high"])), (1, T.NUMBER), (1.5, T.NUMBER),
        (True, T.BOOLEAN), (None, T.with_optional(T.STRING)), ("PT1H", T.DURATION),
        ("mem_a", T.MEMBER), ("agt_a", T.AGENT), ("agt_a", T.RESPONDER), ("#c", T.CHANNEL),
        ({"kind": "task", "scopeId": "tsk_api"}, T.SCOPE), ({"a": [1]}, T.OBJECT),
        (["a", "b"], T.array_of(T.STRING)), (["agt_a"], T.array_of(T.AGENT)), ([], T.array_of(T.MEMBER)),
        ({"a": 1}, T.object_of({"a": T.NUMBER})), ({}, T.object_of({"a": T.with_optional(T.NUMBER)})),
        ("x", T.UNKNOWN), ([[1], [2]], T.array_of(T.array_of(T.NUMBER))),
    ])
    def test_valid(self, value, t: Type) -> None:
        assert T.literal_error(value, t) is None

    @pytest.mark.parametrize("value,t,frag", [
        ("5", T.NUMBER, "string"), (5, T.STRING, "number"), (True, T.NUMBER, "boolean"),
        (None, T.STRING, "null"), ("low", T.enum_of(["high"]), "enum"), ("1h", T.DURATION, "ISO"),
        ("#c", T.SCOPE, "scope"), ({"kind": "task"}, T.SCOPE, "scopeId"),
        ({"kind": "room", "scopeId": "tsk_a"}, T.SCOPE, "kind"),
        ({"kind": "task", "scopeId": "bad"}, T.SCOPE, "canonical"),
        ({"kind": "task", "scopeId": "tsk_a", "x": 1}, T.SCOPE, "unknown x"),
        ([1, "a"], T.array_of(T.NUMBER), "[1]"), ("x", T.WORK_ITEMS, "work_items"),
        ([], T.WORK_ITEMS, "work_items"), ({"a": "x"}, T.object_of({"a": T.NUMBER}), "at a"),
        ({}, T.object_of({"a": T.NUMBER}), "missing required field 'a'"), (2**53, T.NUMBER, "range"),
        (float("nan"), T.NUMBER, "range"), ([1], T.OBJECT, "array"), ({"a": 1}, T.array_of(T.NUMBER), "mapping"),
    ])
    def test_invalid(self, value, t: Type, frag: str) -> None:
        err = T.literal_error(value, t)
        assert err is not None and frag in err, err

    def test_type_of_literal(self) -> None:
        assert T.type_of_literal("x") == T.STRING
        assert T.type_of_literal(1) == T.NUMBER
        assert T.type_of_literal(True) == T.BOOLEAN
        assert T.type_of_literal(None) == T.NULL
        assert T.type_of_literal(["a"]) == T.array_of(T.STRING)
        assert T.type_of_literal([1, "a"]) == T.array_of(T.UNKNOWN)
        assert T.type_of_literal([]) == T.array_of(None)
        assert T.type_of_literal({"a": 1}) == T.OBJECT


class TestDescribe:
    def test_forms(self) -> None:
        assert T.describe(T.array_of(T.AGENT)) == "array<agent>"
        assert T.describe(T.array_of(T.array_of(T.STRING))) == "array<array<string>>"
        assert T.describe(T.with_optional(T.MEMBER)) == "member?"
        assert T.describe(Type("array", items=T.NUMBER, optional=True)) == "array<number>?"
        assert T.describe(T.enum_of(["high", "low"])) == "enum(high|low)"
        assert T.describe(T.object_of({"a": T.NUMBER})) == "object{a}"
        assert T.describe(T.OBJECT) == "object"
        assert T.describe(T.array_of(None)) == "array<unknown>"
        assert T.describe(None) == "unknown"
        assert repr(T.STRING) == "Type<string>"
        assert T.article("object") == "an object" and T.article("string") == "a string"

    def test_deep_describe_iterative(self) -> None:
        t = T.STRING
        for _ in range(3000):
            t = T.array_of(t)
        assert T.describe(t).count("array<") == 3000


class TestContextTypes:
    def test_item(self) -> None:
        assert T.ITEM.field("dependsOn") == T.array_of(T.STRING)
        assert T.ITEM.field("responder") == T.RESPONDER
        assert T.ITEM.field("dependencies") == T.OBJECT
        assert T.ITEM.field_names() == ("key", "dependsOn", "workScope", "relatedScopes", "responder",
                                        "instruction", "dependencies")

    def test_items(self) -> None:
        env = T.ITEMS.items
        assert env is not None and env.field("status") == T.enum_of(T.ITEM_STATUSES)
        assert env.field("value").optional and env.field("error").optional  # type: ignore[union-attr]
        assert T.assignable(T.ITEMS, T.array_of(T.OBJECT))

    def test_branches_winner_loop(self) -> None:
        b = T.branches_of(["legal", "security"], {"ok": fs("boolean", True)})
        assert b.field("legal").field("ok") == T.BOOLEAN  # type: ignore[union-attr]
        b = T.branches_of(["x"], {"ok": fs("boolean", True)}, optional=True)
        assert b.field("x").field("ok").optional  # type: ignore[union-attr]
        w = T.winner_of({"v": fs("string", True)})
        assert w.field("key") == T.STRING and w.field("value").field("v") == T.STRING  # type: ignore[union-attr]
        lp = T.loop_of({"draft": fs("string", True)})
        assert lp.field("iteration") == T.NUMBER
