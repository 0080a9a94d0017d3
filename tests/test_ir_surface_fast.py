"""The surface check is one walk over plans compiled from the declarations
(``loopc.ir.surface.walk``) with two modes: the accepting mode
(``surface.accept_parsed``: no pointers, members checked inline) and the
precise mode (``surface._validate``: pointers, the first violation in
declaration order).  They share their checks, so the accepting mode's
answer is the precise mode's and the nesting scan's (``canonical.scan``): on
every golden artifact and on randomly mutated ones (as JSON parses them),
under every artifact version, it returns the precise mode's version and the
scan's ``(fast, depth)``, and ``None`` whenever the precise mode rejects.
(It may also give up, ``None``, on a value the precise mode accepts;
``validate`` and the decoder then take the precise answer — on the goldens
it never does.)"""
from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopc.ir import surface
from loopc.ir.canonical import CanonicalizationError, scan
from loopc.ir.versions import VERSIONS

from conftest import ROOT
from conftest import slots as json_slots

GOLDENS = sorted((ROOT / "golden").glob("*/*/expected.json"))
ARTIFACTS = [json.loads(p.read_text(encoding="utf-8")) for p in GOLDENS]


def _walk(v: Any, spec: Any, version: int) -> tuple[str, Any]:
    try:
        return "ok", surface._validate(v, version, spec)
    except surface.SurfaceError:
        return "rejected", None
    except Exception as exc:  # noqa: BLE001 - the walk's own exceptions are compared too
        return type(exc).__name__, None


def _fast(v: Any, spec: Any, version: int) -> tuple[str, Any]:
    got = surface.accept_parsed(v, version, spec)
    if got is None:
        return "rejected", None
    try:
        assert got[1:] == scan(v), (got, scan(v))
    except CanonicalizationError:  # pragma: no cover - no golden nests so deep
        pytest.fail("accepted a value the scan refuses")
    return "ok", got[0]


def _agree(v: Any, spec: Any = surface.ARTIFACT) -> None:
    v = json.loads(json.dumps(v))  # as JSON parses it
    for version in VERSIONS:
        walk, fast = _walk(v, spec, version), _fast(v, spec, version)
        if fast[0] == "ok":  # accepted: the walk accepts it too, needing the same version
            assert walk == fast, (version, walk, fast)
        # validate() is the walk's answer either way
        try:
            got: tuple[str, Any] = "ok", surface.validate(v, version, spec=spec)
        except surface.SurfaceError:
            got = "rejected", None
        except Exception as exc:  # noqa: BLE001
            got = type(exc).__name__, None
        assert got == walk


@pytest.mark.parametrize("art", ARTIFACTS, ids=[str(p.parent.relative_to(ROOT / "golden")) for p in GOLDENS])
def test_goldens_take_the_accepting_pass(art: Any) -> None:
    assert GOLDENS
    version = int(art["artifactVersion"].rsplit("v", 1)[1])
    got = surface.accept_parsed(art, version)
    assert got == (surface._validate(art, version, surface.ARTIFACT), *scan(art))
    _agree(art)


_POOL: list[Any] = [
    None, True, False, 0, 1, -1, 101, 1.5, 2.0, 2**60, "", "x", "a b", "Bad", "string", "array<string>",
    "array<scope>", "scope", "responder", "array<nope>", "lit", "ref", "object", "eq", "and", "not", "template",
    "array", "run.input", "item", "loop", "fork", "fan_out", "all_match", "fail_item", "never", "PT1S", "P1X",
    "failed", "timed_out", "in", "continue", "collect", "send_message", "join", "end", [], {}, [1], ["x"],
    ["lit", "string", "x"], ["ref", "string", "run.input", "a"], ["ref", "string", "item"],
    ["object", "object", "b", ["lit", "string", "x"], "a", ["lit", "string", "y"]],
    ["eq", "boolean", ["lit", "number", 1]], {"type": "string", "required": True},
    {"type": "array", "required": False, "items": {"type": "scope", "required": True}},
    {"type": "enum", "required": True, "values": []},
    ["lit", "number", 2.5], ["lit", "number", 2**60], ["lit", "object", {"a": [[[1.5]]], "\U0001f600": 1}],
    {"type": "number", "required": False, "default": [[[[[0.5]]]]]}, {"\U0001f600": 1},
]


def _mutate(art: Any, rnd: random.Random) -> Any:
    art = copy.deepcopy(art)
    for _ in range(rnd.randint(1, 3)):
        slots = json_slots(art)
        holder, key = rnd.choice(slots)
        what = rnd.randrange(6)
        if what == 0:  # a value from the pool
            holder[key] = copy.deepcopy(rnd.choice(_POOL))
        elif what == 1:  # a value from elsewhere in the artifact (plausible shapes)
            h2, k2 = rnd.choice(slots)
            holder[key] = copy.deepcopy(h2[k2])
        elif what == 2:  # drop it
            del holder[key]
        elif what == 3:  # a new key or element next to it
            if isinstance(holder, dict):
                h2, k2 = rnd.choice(slots)
                name = k2 if isinstance(k2, str) else rnd.choice(["extra", "items", "values", "retry", "label"])
                holder[name] = copy.deepcopy(holder[key] if rnd.random() < 0.5 else rnd.choice(_POOL))
            else:
                holder.insert(key, copy.deepcopy(holder[key]))
        elif what == 4 and isinstance(holder[key], str):  # a nearby string
            s = holder[key]
            holder[key] = rnd.choice([s.upper(), s + "\n", s + "x", s[:-1], "array<" + s + ">", s.replace("_", "-")])
        elif what == 5 and isinstance(holder[key], list) and holder[key]:
            holder[key].reverse()
    return art


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@pytest.mark.slow
@given(st.integers(0, len(ARTIFACTS) - 1), st.randoms(use_true_random=False))
def test_mutated_artifacts_agree(i: int, rnd: random.Random) -> None:
    _agree(_mutate(ARTIFACTS[i], rnd))


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.integers(0, len(ARTIFACTS) - 1), st.randoms(use_true_random=False))
def test_mutated_parts_agree(i: int, rnd: random.Random) -> None:
    """Each named definition on its own, on parts of a mutated artifact."""
    art = _mutate(ARTIFACTS[i], rnd)
    holder, key = rnd.choice(json_slots(art))
    for _, spec in surface.iter_specs():
        _agree(holder[key], spec)
