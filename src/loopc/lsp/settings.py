"""Client settings of the language server (docs/editors.md#settings).

Read from ``workspace/configuration`` (section ``loopc``) when the client
supports it, else from ``initializationOptions``; re-read on
``workspace/didChangeConfiguration``.  Unknown keys and ill-typed values are
ignored (a bad setting never stops the server):

* ``severity`` — code (``LP4101``) or slug → ``error`` | ``warning`` |
  ``info`` | ``hint`` | ``off``;
* ``debounce`` — milliseconds to wait after an edit before re-checking
  (push diagnostics only; 0..5000, default 150).
"""
from __future__ import annotations

from typing import Any

import attrs

DEFAULT_DEBOUNCE_MS = 150
MAX_DEBOUNCE_MS = 5000
_LEVELS = frozenset(("error", "warning", "info", "information", "hint", "off", "none", "ignore"))


@attrs.frozen
class Settings:
    """Effective settings: ``severity`` overrides and ``debounce_ms``."""

    severity: dict[str, str] = attrs.field(factory=dict)
    debounce_ms: int = DEFAULT_DEBOUNCE_MS

    def to_json(self) -> dict[str, Any]:
        return {"severity": dict(self.severity), "debounce": self.debounce_ms}


def parse_settings(raw: Any) -> Settings:
    """Settings from a client's JSON value (``None`` or garbage → defaults)."""
    if not isinstance(raw, dict):
        return Settings()
    if isinstance(raw.get("loopc"), dict):  # initializationOptions may nest the section
        raw = raw["loopc"]
    sev: dict[str, str] = {}
    s = raw.get("severity")
    if isinstance(s, dict):
        for k, v in s.items():
            if isinstance(k, str) and isinstance(v, str) and v.lower() in _LEVELS:
                sev[k.upper() if k[:2].lower() == "lp" else k] = v.lower()
    debounce = DEFAULT_DEBOUNCE_MS
    d = raw.get("debounce")
    if isinstance(d, (int, float)) and not isinstance(d, bool) and d == d:
        debounce = int(max(0, min(MAX_DEBOUNCE_MS, d)))
    return Settings(sev, debounce)
