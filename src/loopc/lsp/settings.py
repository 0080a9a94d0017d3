"""Client settings of the language server (docs/editors.md#settings).

Read from ``workspace/configuration`` (section ``loopc``) when the client
supports it, else from ``initializationOptions``; re-read on
``workspace/didChangeConfiguration``.  Unknown keys and ill-typed values are
ignored (a bad setting never stops the server):

* ``severity`` — code (``LP4101``) or slug → ``error`` | ``warning`` |
  ``info`` | ``hint`` | ``off``;
* ``debounce`` — milliseconds to wait after an edit before re-checking
  (push diagnostics only; 0..5000).  Unset: adaptive — half the document's
  last check time, between :data:`MIN_ADAPTIVE_MS` and
  :data:`DEFAULT_DEBOUNCE_MS` (:func:`adaptive_debounce_ms`);
* ``positionEncoding`` — ``utf-8`` | ``utf-16`` | ``utf-32``: the position
  encoding to answer in when the client offers none
  (``general.positionEncodings``), for clients that read columns in
  something other than the protocol's UTF-16 default (Vim's ALE: bytes,
  vim-lsp: code points).  Read from ``initializationOptions`` only, since
  the encoding is fixed by the ``initialize`` result; in the workspace
  configuration it is parsed, reported and, when it differs from the
  encoding in use, logged as not applied;
* ``incremental`` — ``true`` (the default) or ``false``: re-check a document
  after an edit by re-reading only the ``nodes:``/``edges:`` items it
  touched (:mod:`loopc.pipeline.incremental`; the result is the whole
  check's); ``false`` checks the whole text every time.
"""
from __future__ import annotations

from typing import Any

import attrs

DEFAULT_DEBOUNCE_MS = 150
MAX_DEBOUNCE_MS = 5000
#: The shortest adaptive debounce: a burst of keystrokes (typically 30-200 ms
#: apart) on a small plan re-checks after a pause this long.
MIN_ADAPTIVE_MS = 10
#: the values of the ``positionEncoding`` setting (LSP ``PositionEncodingKind``)
POSITION_ENCODINGS = ("utf-8", "utf-16", "utf-32")
_LEVELS = frozenset(("error", "warning", "info", "information", "hint", "off", "none", "ignore"))


@attrs.frozen
class Settings:
    """Effective settings: ``severity`` overrides, ``debounce_ms`` (``None``:
    adaptive) and ``position_encoding`` (one of :data:`POSITION_ENCODINGS`,
    ``None``: not set) and ``incremental`` (re-check edits incrementally)."""

    severity: dict[str, str] = attrs.field(factory=dict)
    debounce_ms: int | None = None
    position_encoding: str | None = None
    incremental: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"severity": dict(self.severity),
                "debounce": "adaptive" if self.debounce_ms is None else self.debounce_ms,
                "positionEncoding": self.position_encoding,
                "incremental": self.incremental}

    def debounce_for(self, last_check_ms: float | None) -> float:
        """Milliseconds to wait after an edit before re-checking a document
        whose last check took ``last_check_ms`` (``None``: not checked yet):
        the ``debounce`` setting when set, else :func:`adaptive_debounce_ms`."""
        if self.debounce_ms is not None:
            return float(self.debounce_ms)
        return adaptive_debounce_ms(last_check_ms)


def adaptive_debounce_ms(last_check_ms: float | None) -> float:
    """The adaptive push debounce: half as long as the document's last
    check took, clamped to [:data:`MIN_ADAPTIVE_MS`,
    :data:`DEFAULT_DEBOUNCE_MS`]; an unchecked document waits
    :data:`DEFAULT_DEBOUNCE_MS`.  A check that costs little is not worth
    waiting for; one that costs a lot is not worth starting per keystroke —
    checks of one document run one at a time, so a check started by a
    keystroke that is followed by another delays the newest one by up to
    its own duration; waiting half of it skips most such checks in a burst
    of typing and adds at most half a check to the latency after it."""
    if last_check_ms is None:
        return float(DEFAULT_DEBOUNCE_MS)
    return float(max(MIN_ADAPTIVE_MS, min(DEFAULT_DEBOUNCE_MS, last_check_ms / 2)))


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
    debounce: int | None = None
    d = raw.get("debounce")
    if isinstance(d, (int, float)) and not isinstance(d, bool) and d == d:
        debounce = int(max(0, min(MAX_DEBOUNCE_MS, d)))
    enc = raw.get("positionEncoding")
    encoding = enc.lower() if isinstance(enc, str) and enc.lower() in POSITION_ENCODINGS else None
    inc = raw.get("incremental")
    return Settings(sev, debounce, encoding, inc if isinstance(inc, bool) else True)
