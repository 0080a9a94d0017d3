"""Hostile runtimes behind the conformance protocol (tests/test_conform_kit.py):
``python tests/tools/hostile_runtime.py MODE``.  Each mode answers like the
reference runtime except for one way of lying, stalling or flooding.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "src"))

from loopc.interpreter.protocol import Session  # noqa: E402


def _map_numbers(v: Any, f: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return f(v)
    if isinstance(v, list):
        return [_map_numbers(x, f) for x in v]
    return {k: _map_numbers(x, f) for k, x in v.items()}


def _write(text: str | bytes) -> None:
    data = text.encode("utf-8") if isinstance(text, str) else text
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def main(mode: str) -> int:
    session = Session()
    for raw in sys.stdin:
        req = json.loads(raw)
        op = req.get("op")
        if op == "quit":
            _write('{"ok": true}\n')
            return 0
        if op == "load":
            if mode == "ignores_crashes":
                req["crashes"] = []
            resp: Any = session.load(req)
            if mode == "accepts_everything" and resp.get("ok") is False:
                resp = {"ok": True, "protocol": 2}
            if mode == "protocol_v1":
                resp.pop("protocol", None)
        elif op == "event":
            resp = session.event(req)
        else:
            resp = session.report()
        if mode == "half_line" and op == "report":
            _write('{"status": "succ')  # half a line, then silence
            time.sleep(3600)
        if mode == "endless" and op == "report":
            chunk = b"[" * 65536
            while True:  # a reply line that never ends
                _write(chunk)
        if mode == "mute_after_load" and op == "event":
            time.sleep(3600)
        if mode == "deep" and op == "report":
            _write("[" * 200_000 + "]" * 200_000 + "\n")
            continue
        if mode == "nan" and op == "report":
            _write('{"status": NaN}\n')
            continue
        if mode == "huge_int" and op == "report":
            _write('{"status": ' + "9" * 5000 + "}\n")
            continue
        if mode == "not_utf8" and op == "report":
            _write(b'{"status": "\xff"}\n')
            continue
        if op == "report" and isinstance(resp, dict) and isinstance(resp.get("journal"), list):
            if mode == "non_object_records":
                resp["journal"] = [1, "x", None] + resp["journal"][3:]
            elif mode == "ones_as_true":
                resp["journal"] = _map_numbers(resp["journal"], lambda n: True if n == 1 else n)
            elif mode == "ints_as_floats":  # conforms: numbers compare as IEEE doubles
                resp["journal"] = _map_numbers(resp["journal"], float)
                resp["state"] = _map_numbers(resp["state"], float)
            elif mode == "extra_record":
                resp["journal"].insert(2, {"kind": "debug.note", "seq": 0})
            elif mode == "two_wrong_fields":
                resp["journal"][0]["at"] = "1970-01-01T00:00:00Z"
                resp["journal"][-1]["kind"] = resp["journal"][-1]["kind"] + "!"
                resp["visits"] = {}
        if mode == "key_changes_on_redelivery" and op == "report" and isinstance(resp, dict):
            seen: set[str] = set()
            for d in resp["deliveries"]:
                if d["effect"] in seen:
                    d["key"] += "#again"
                seen.add(d["effect"])
        if mode == "applied_as_int" and op == "event" and isinstance(resp, dict):
            resp["applied"] = int(bool(resp["applied"]))
        _write(json.dumps(resp) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
