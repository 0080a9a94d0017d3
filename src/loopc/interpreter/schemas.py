"""The one declaration of the journal records and the conformance protocol
messages, and the JSON Schemas generated from it (docs/conformance.md#schemas).

:data:`RECORDS` declares every journal record kind with its fields;
:data:`MESSAGES` every request and reply of the protocol
(:data:`PROTOCOL_VERSION`).  From them:

* :func:`journal_schema` — ``loop.run.journal.v1.schema.json``: one journal
  record (JSON Schema 2020-12);
* :func:`protocol_schema` — ``loop.run.protocol.v2.schema.json``: every
  message under ``$defs`` (``loadRequest``, ``loadReply``, ...), the journal
  record as ``$defs/journalRecord``.

Both are shipped as package data next to this module (``schema/``, read by
:func:`load_schema` — the kit validates replies with them at run time) and
mirrored into ``docs/schema/``; ``tests/test_schemas.py`` checks that both
copies equal what this module generates (:func:`generated_files`).
Regenerate both with the checkout's ``python tools/regen.py``
(``--check`` to check).

:func:`validator` gives a ``jsonschema`` validator for one message;
:func:`problems` lists a value's violations as ``(JSON pointer, message)``.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

__all__ = ["RECORDS", "MESSAGES", "PROTOCOL_VERSION", "JOURNAL_SCHEMA_NAME", "PROTOCOL_SCHEMA_NAME",
           "journal_schema", "protocol_schema", "load_schema", "validator", "problems", "generated_files"]

#: The protocol version this kit speaks (``load`` carries it).
PROTOCOL_VERSION = 2
JOURNAL_SCHEMA_NAME = "loop.run.journal.v1.schema.json"
PROTOCOL_SCHEMA_NAME = f"loop.run.protocol.v{PROTOCOL_VERSION}.schema.json"
_BASE_ID = "https://loopc.dev/schema/"

# ---------------------------------------------------------------- value shapes
STR: dict[str, Any] = {"type": "string"}
ID: dict[str, Any] = {"type": "string", "minLength": 1}
ANY: dict[str, Any] = {}
OBJ: dict[str, Any] = {"type": "object"}
COUNT: dict[str, Any] = {"type": "integer", "minimum": 1}
INDEX: dict[str, Any] = {"type": "integer", "minimum": 0}
#: RFC 3339 UTC, at most 9 fraction digits, trailing zeros trimmed.
INSTANT: dict[str, Any] = {"type": "string",
                           "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{0,8}[1-9])?Z$"}
DURATION: dict[str, Any] = {"type": "string", "pattern": r"^P"}
ERROR: dict[str, Any] = {"type": "object", "required": ["code", "detail"], "additionalProperties": False,
                         "properties": {"code": ID, "detail": STR}}
EVENT_REF: dict[str, Any] = {"type": ["integer", "null"], "minimum": 0,
                             "description": "index of the scenario event that caused the record"}


def _enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def _or_null(s: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [s, {"type": "null"}]}


def _list(s: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": s}


RUN_STATUS = _enum("waiting", "succeeded", "failed", "cancelled")
ITEM_STATUS = _enum("succeeded", "failed", "timed_out", "blocked", "cancelled")
FRAME = {"type": "array", "prefixItems": [_enum("fork", "all_match", "fan_out", "loop"), ID, ID, ANY],
         "minItems": 4, "maxItems": 4, "description": "[kind, owner node, owner activation, key]"}

# ---------------------------------------------------------------- the declaration
#: kind → (description, required fields, optional fields).  Every record
#: also has ``kind``, ``at`` (instant), ``seq`` and ``step`` (counts from 1).
RECORDS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "run.started": ("The Run started (step 1).",
                    {"run": ID, "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                     "input": OBJ, "state": OBJ}, {}),
    "activation.started": ("A token arrived at a node: a new activation.",
                           {"act": ID, "node": ID, "input": OBJ, "lineage": _list(FRAME)}, {}),
    "activation.completed": ("An activation left by a port (`ports` for fork/all_match; `port: null` for an End, "
                             "with `status`).",
                             {"act": ID, "node": ID},
                             {"port": _or_null(ID), "ports": _list(ID), "output": ANY,
                              "status": _enum("succeeded", "failed"), "error": ERROR}),
    "activation.cancelled": ("An activation was cancelled.", {"act": ID, "node": ID, "reason": STR}, {}),
    "attempt.started": ("An attempt of a message, approval or wait started.", {"act": ID, "attempt": COUNT}, {}),
    "attempt.failed": ("An attempt failed.", {"act": ID, "attempt": COUNT, "error": ERROR}, {}),
    "effect.reserved": ("An effect was reserved; `key` is its identity (the dedupe key of every delivery).",
                        {"act": ID, "attempt": COUNT, "effect": ID, "key": ID,
                         "effectKind": _enum("message", "approval"), "request": OBJ}, {}),
    "effect.delivered": ("The world accepted the effect.", {"effect": ID, "act": ID, "attempt": COUNT},
                         {"messageId": ID}),
    "effect.failed": ("The world refused the effect.", {"effect": ID, "act": ID, "attempt": COUNT, "error": ERROR},
                      {}),
    "effect.transport_retry": ("A private transport retry of the same effect.",
                               {"effect": ID, "act": ID, "attempt": COUNT, "transmission": COUNT}, {}),
    "agent.leased": ("An Agent's capacity was leased.", {"act": ID, "agent": ID}, {}),
    "agent.queued": ("An activation waits for an Agent.", {"act": ID, "agent": ID, "position": COUNT}, {}),
    "agent.released": ("An Agent's capacity was released.", {"act": ID, "agent": ID}, {}),
    "callback.accepted": ("A callback result was accepted (an outside input).",
                          {"act": ID, "attempt": COUNT, "output": OBJ, "event": EVENT_REF},
                          {"workItems": _list(ANY)}),
    "callback.failed": ("A callback reported failure (an outside input).",
                        {"act": ID, "attempt": COUNT, "error": ERROR, "event": EVENT_REF}, {}),
    "decision.recorded": ("An approval was decided (an outside input).",
                          {"act": ID, "attempt": COUNT, "decision": _enum("approved", "rejected"), "by": STR,
                           "comment": _or_null(STR), "event": EVENT_REF}, {}),
    "timer.scheduled": ("A timer was scheduled.",
                        {"timer": ID, "act": ID, "timerKind": _enum("wait", "timeout", "retry"), "attempt": COUNT,
                         "due": INSTANT}, {}),
    "timer.fired": ("A timer fired.",
                    {"timer": ID, "act": ID, "timerKind": _enum("wait", "timeout", "retry"), "attempt": COUNT}, {}),
    "clock.advanced": ("The clock moved (an outside input).", {"to": INSTANT, "by": DURATION, "event": EVENT_REF},
                       {}),
    "state.written": ("A Run state field was written.",
                      {"act": ID, "field": ID, "before": ANY, "after": ANY, "version": COUNT}, {}),
    "scope.opened": ("A fork, all_match or fan_out opened its branches or items.",
                     {"scopeKind": _enum("fork", "all_match", "fan_out"), "owner": ID, "act": ID,
                      "join": _or_null(ID)},
                     {"branches": _list(ID), "maxConcurrency": COUNT,
                      "items": _list({"type": "object", "required": ["id", "key", "dependsOn"],
                                      "additionalProperties": False,
                                      "properties": {"id": ID, "key": ID, "dependsOn": _list(ID)}})}),
    "join.arrived": ("A branch arrived at its join.",
                     {"act": ID, "branch": ID, "outcome": _enum("succeeded", "failed")},
                     {"value": ANY, "error": ERROR}),
    "join.refused": ("An arrival the join no longer takes.",
                     {"act": ID, "branch": ID, "reason": _enum("closed", "duplicate")}, {}),
    "item.started": ("A fan-out item started.", {"item": ID, "key": ID}, {}),
    "item.terminal": ("A fan-out item ended (its envelope).",
                      {"item": ID, "key": ID, "status": ITEM_STATUS, "value": ANY, "error": _or_null(ERROR),
                       "blockedBy": _list(ID)}, {}),
    "item.refused": ("A terminal result for an item that no longer takes one.",
                     {"item": ID, "status": ITEM_STATUS}, {}),
    "loop.iteration": ("A counted loop entered an iteration.",
                       {"act": ID, "iteration": COUNT, "state": OBJ}, {}),
    "loop.exited": ("A counted loop exited.",
                    {"act": ID, "iteration": COUNT, "via": _enum("break", "continue"), "state": OBJ}, {}),
    "loop.refused": ("A return to a loop that no longer takes one.",
                     {"act": ID, "iteration": COUNT, "port": ID}, {}),
    "route.implicit": ("A lowered failure route was taken.",
                       {"action": _enum("fail_plan", "fail_branch", "fail_item", "never"), "owner": _or_null(ID),
                        "status": _or_null(STR), "error": ERROR}, {}),
    "run.cancelled": ("The Run was cancelled (an outside input).", {"event": EVENT_REF}, {}),
    "run.completed": ("The Run ended.", {"status": _enum("succeeded", "failed")},
                      {"output": ANY, "error": ERROR}),
}

_COMMON = {"kind": ID, "at": INSTANT, "seq": COUNT, "step": COUNT}


def _record_then(kind: str) -> dict[str, Any]:
    desc, req, opt = RECORDS[kind]
    props = {**_COMMON, "kind": {"const": kind}, **req, **opt}
    out: dict[str, Any] = {"description": desc, "required": ["kind", "at", "seq", "step", *req],
                           "properties": props, "additionalProperties": False}
    if kind == "activation.completed":
        out["oneOf"] = [{"required": ["port"]}, {"required": ["ports"]}]
    return out


def _record_body() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": sorted(RECORDS)}},
        "allOf": [{"if": {"type": "object", "required": ["kind"], "properties": {"kind": {"const": k}}},
                   "then": _record_then(k)} for k in RECORDS],
    }


def journal_schema() -> dict[str, Any]:
    """The JSON Schema of one journal record (docs/conformance.md#the-journal)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": _BASE_ID + JOURNAL_SCHEMA_NAME,
            "title": "loop.run journal record, version 1",
            "description": "One record of a Run's journal; generated from loopc.interpreter.schemas.RECORDS.",
            **_record_body()}


# ---------------------------------------------------------------- protocol messages
_FAULTS = {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}


def _msg(desc: str, req: dict[str, Any], opt: dict[str, Any] | None = None, *,
         closed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "description": desc, "required": list(req),
                           "properties": {**req, **(opt or {})}}
    if closed:
        out["additionalProperties"] = False
    return out


#: name → schema of every protocol message (requests the kit sends, replies
#: the runtime gives).  Replies are open (a runtime may add fields);
#: requests are closed.
MESSAGES: dict[str, dict[str, Any]] = {
    "loadRequest": _msg(
        "Start a new Run (discarding any previous one).",
        {"op": {"const": "load"}, "protocol": {"const": PROTOCOL_VERSION}, "run": ID, "artifact": STR,
         "input": OBJ,
         "faults": _msg("The world's failures.", {"deliveries": _FAULTS, "transport": _FAULTS}),
         "start": INSTANT,
         "crashes": {"type": "array", "items": _enum("afterEffectSubmit"), "uniqueItems": True,
                     "description": "crash points the runtime simulates inside steps"}}),
    "loadReply": {"type": "object", "description": "`ok: true` with the protocol version, or `ok: false` with why "
                                                   "(a refused artifact, another protocol version).",
                  "required": ["ok"], "properties": {"ok": {"type": "boolean"}},
                  "if": {"properties": {"ok": {"const": True}}},
                  "then": {"required": ["protocol"], "properties": {"protocol": {"const": PROTOCOL_VERSION}}},
                  "else": {"required": ["error"], "properties": {"error": STR}}},
    "eventRequest": _msg("Apply one scenario event.",
                         {"op": {"const": "event"}, "index": INDEX,
                          "event": {"type": "object", "minProperties": 1, "maxProperties": 1}},
                         {"to": INSTANT}),
    "eventReply": _msg("Whether the event applied.", {"applied": {"type": "boolean"}, "reason": _or_null(STR)},
                       closed=False),
    "reportRequest": _msg("Report the Run.", {"op": {"const": "report"}}),
    "reportReply": _msg(
        "The Run as it stands.",
        {"status": RUN_STATUS, "output": ANY, "error": _or_null(ERROR), "state": OBJ,
         "visits": {"type": "object", "additionalProperties": INDEX},
         "attempts": {"type": "object", "additionalProperties": INDEX},
         "journal": _list({"$ref": "#/$defs/journalRecord"}),
         "deliveries": _list(_msg("One submission of an effect to the world.", {"effect": ID, "key": ID},
                                  closed=False))},
        closed=False),
    "quitRequest": _msg("Stop.", {"op": {"const": "quit"}}),
    "quitReply": _msg("Stopping.", {"ok": {"const": True}}, closed=False),
}


def protocol_schema() -> dict[str, Any]:
    """The JSON Schema of every protocol message, under ``$defs``
    (docs/conformance.md#protocol)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": _BASE_ID + PROTOCOL_SCHEMA_NAME,
            "title": f"loopc conformance protocol, version {PROTOCOL_VERSION}",
            "description": "Requests and replies of the JSON-lines protocol; generated from "
                           "loopc.interpreter.schemas.MESSAGES.",
            "$defs": {**MESSAGES, "journalRecord": _record_body()},
            "anyOf": [{"$ref": f"#/$defs/{name}"} for name in MESSAGES]}


# ---------------------------------------------------------------- files and validation
PACKAGE_DIR = Path(__file__).resolve().parent / "schema"


def _dump(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def generated_files(docs_dir: Path | None = None) -> dict[Path, bytes]:
    """Every file generated from the declaration: the package copies and,
    with ``docs_dir``, the docs mirrors."""
    out = {}
    for name, obj in ((JOURNAL_SCHEMA_NAME, journal_schema()), (PROTOCOL_SCHEMA_NAME, protocol_schema())):
        data = _dump(obj)
        out[PACKAGE_DIR / name] = data
        if docs_dir is not None:
            out[docs_dir / name] = data
    return out


@lru_cache(maxsize=4)
def load_schema(name: str) -> dict[str, Any]:
    """A shipped schema (package data) by file name."""
    from importlib.resources import files

    return json.loads((files("loopc.interpreter") / "schema" / name).read_text(encoding="utf-8"))


@lru_cache(maxsize=32)
def validator(name: str) -> Any:
    """A ``jsonschema`` validator for one message of the shipped protocol
    schema (``"reportReply"``, ...) or ``"journalRecord"``."""
    import jsonschema

    full = load_schema(PROTOCOL_SCHEMA_NAME)
    return jsonschema.Draft202012Validator({"$defs": full["$defs"], "$ref": f"#/$defs/{name}"})


def _pointer(path: Any) -> str:
    from loopc.interpreter.jsondiff import pointer_token

    return "".join(f"/{pointer_token(p)}" for p in path)


def problems(name: str, value: Any, limit: int = 50) -> list[tuple[str, str]]:
    """Violations of message ``name`` by ``value``: ``(JSON pointer,
    message)``, the most specific error of each branch, at most
    ``limit``."""
    import jsonschema

    out: list[tuple[str, str]] = []
    errors: Iterator[Any] = validator(name).iter_errors(value)
    for err in errors:
        best = jsonschema.exceptions.best_match([err]) if err.context else err
        msg = best.message
        out.append((_pointer(best.absolute_path), msg if len(msg) <= 300 else msg[:300] + "…"))
        if len(out) >= limit:
            break
    return out
