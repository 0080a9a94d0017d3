"""Terminal-safe text for the command line (docs/language.md#command-line-output).

File names, messages and excerpts can hold characters a terminal would act
on (newlines, ``ESC`` sequences, bidi overrides) or bytes that are not UTF-8
(file names arrive as ``surrogateescape`` strings).  :func:`escape_text`
makes them visible and inert, linearly.
"""
from __future__ import annotations

import re

# C0/C1 controls, DEL, NEL, LINE/PARAGRAPH SEPARATOR, bidi marks, embeddings,
# overrides and isolates, lone surrogates (undecodable bytes of a file name).
UNSAFE = "\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
UNSAFE_RE = re.compile(f"[{UNSAFE}]")


def escape_char(ch: str) -> str:
    """``\\xNN`` (a byte that was not UTF-8, or a code point ≤ U+00FF) or
    ``\\uNNNN``."""
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape: the byte o - 0xDC00
        return f"\\x{o - 0xDC00:02x}"
    if o <= 0xFF:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}"


def escape_text(s: str) -> str:
    """``s`` with every terminal-unsafe character escaped (``\\n`` as
    ``\\x0a``, ``ESC`` as ``\\x1b``, U+202E as ``\\u202e``, an undecodable
    file-name byte as ``\\xNN``).  Linear; ``s`` unchanged when safe."""
    if UNSAFE_RE.search(s) is None:
        return s
    return UNSAFE_RE.sub(lambda m: escape_char(m.group()), s)


def escape_lines(s: str) -> str:
    """:func:`escape_text` of each line of ``s`` (split at ``\n`` only), the
    line breaks kept: for multi-line reports whose lines hold file names."""
    return "\n".join(escape_text(line) for line in s.split("\n"))
