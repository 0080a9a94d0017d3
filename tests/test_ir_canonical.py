"""Canonical bytes (RFC 8785) and the surface/JSON-Schema generator."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from loopc.ir import surface
from loopc.ir.canonical import CanonicalizationError, canonical_bytes, json_depth, pretty_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ir_reference_digest  # noqa: E402

keys = st.text(max_size=6)
scalars = (st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(keys, kids, max_size=4),
                      max_leaves=30)
no_floats = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=12),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(keys, kids, max_size=4), max_leaves=30)


def _ok(v: object) -> bool:
    try:
        rfc8785.dumps(v)
    except rfc8785.CanonicalizationError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(values)
def test_canonical_bytes_equal_rfc8785(v: object) -> None:
    if not _ok(v):
        with pytest.raises(CanonicalizationError):
            canonical_bytes(v)
        return
    assert canonical_bytes(v) == rfc8785.dumps(v)


@settings(max_examples=300, deadline=None)
@given(no_floats)
def test_fast_path_equals_reference_serializer(v: object) -> None:
    if not _ok(v):
        return
    assert canonical_bytes(v) == ir_reference_digest.jcs(v)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_reference_number_form_matches_rfc8785(x: float) -> None:
    assert ir_reference_digest.jcs(x) == rfc8785.dumps(x)


def test_non_bmp_keys_sort_by_utf16() -> None:
    v = {"\U0001f600": 1, "\ufb01": 2, "a": 3}
    assert canonical_bytes(v) == rfc8785.dumps(v)
    assert list(json.loads(canonical_bytes(v))) == ["a", "\U0001f600", "\ufb01"]


def test_rejections() -> None:
    for bad in (float("nan"), float("inf"), 2**60, {1: 2}, "\ud800", object()):
        with pytest.raises(CanonicalizationError):
            canonical_bytes(bad)
    deep: object = 0
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(CanonicalizationError):
        canonical_bytes(deep)


def test_json_depth_and_pretty() -> None:
    assert json_depth(1) == 0 and json_depth([]) == 1 and json_depth({"a": [{}]}) == 3
    assert pretty_text({"b": 1, "a": [1]}) == '{\n  "a": [\n    1\n  ],\n  "b": 1\n}\n'


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_generated_schemas_are_valid_json_schema(version: int) -> None:
    jsonschema.Draft202012Validator.check_schema(surface.json_schema(version))


def test_source_schema_is_valid_draft7() -> None:
    from loopc.ir.source_schema import source_schema

    jsonschema.Draft7Validator.check_schema(source_schema())


def test_every_surface_element_has_a_version() -> None:
    assert surface.required_version  # the surface walker doubles as version selection
    for name, spec in surface.iter_specs():
        assert isinstance(spec, surface.Spec), name
    assert set(surface.NODE_OPS) == set(surface.CONFIGS)
