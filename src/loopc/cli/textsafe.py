"""Terminal- and CI-safe text for the command line
(docs/language.md#command-line-output).

File names, messages, ids and excerpts can hold characters a terminal would
act on (newlines, ``ESC`` sequences, bidi overrides), bytes that are not
UTF-8 (file names arrive as ``surrogateescape`` strings), or text a CI
runner reads as a command.  GitHub Actions runs a *workflow command* from
any output line that starts, after leading whitespace, with ``::`` (e.g.
``::add-mask::…``, ``::error …::…``) and a legacy one from ``##[`` anywhere
in a line (actions/runner ``ActionCommand.TryParseV2``/``TryParse``).
:func:`escape_text` makes every such piece of text visible and inert, so
text from a plan, a file name or a scenario can never start an output line
with ``::``, hold ``##[``, or break a line; linearly.  Every
user-controlled text the CLI prints goes through it (whole reports through
:func:`escape_lines`); ``--format github`` writes its own ``::error``
commands and escapes their values as the runner documents
(:mod:`loopc.cli.formats.github`); JSON formats keep ``##[`` out of their
strings with :func:`json_text` (the same JSON value).
"""
from __future__ import annotations


from loopc import lazyre

# C0/C1 controls, DEL, NEL, LINE/PARAGRAPH SEPARATOR, bidi marks, embeddings,
# overrides and isolates, lone surrogates (undecodable bytes of a file name).
UNSAFE = "\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
UNSAFE_RE = lazyre.compile(f"[{UNSAFE}]")

#: A leading colon after optional whitespace (Python's ``\s`` is Unicode
#: whitespace, a superset of what the runner's ``TrimStart`` removes): the
#: first character of a would-be ``::command``.  Any leading colon is
#: escaped, so no concatenation (``":" + ":…"``) can form one either.
_LEAD_COLON = lazyre.compile(r"\s*:")
#: The legacy workflow-command prefix, recognised anywhere in a line.
LEGACY_PREFIX = "##["


def escape_char(ch: str) -> str:
    """``\\xNN`` (a byte that was not UTF-8, or a code point ≤ U+00FF) or
    ``\\uNNNN``."""
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape: the byte o - 0xDC00
        return f"\\x{o - 0xDC00:02x}"
    if o <= 0xFF:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}"


def escape_text(s: str, *, inline: bool = False) -> str:
    """``s`` on one inert line: every terminal-unsafe character escaped
    (``\\n`` as ``\\x0a``, ``ESC`` as ``\\x1b``, U+202E as ``\\u202e``, an
    undecodable file-name byte as ``\\xNN``), a leading ``:`` (after
    whitespace) as ``\\x3a`` and ``##[`` as ``#\\x23[`` (workflow commands).
    ``inline=True`` keeps a leading ``:`` — only for text that never starts
    an output line (after a fixed prefix, inside a quoted label).  Linear;
    ``s`` unchanged when safe."""
    if UNSAFE_RE.search(s) is not None:
        s = UNSAFE_RE.sub(lambda m: escape_char(m.group()), s)
    if LEGACY_PREFIX in s:
        s = s.replace(LEGACY_PREFIX, "#\\x23[")
    if inline:
        return s
    m = _LEAD_COLON.match(s)
    if m is not None:
        s = s[: m.end() - 1] + "\\x3a" + s[m.end():]
    return s


def escape_lines(s: str) -> str:
    """:func:`escape_text` of each line of ``s`` (split at ``\\n`` only), the
    line breaks kept: for multi-line reports whose lines hold file names.
    Only for text whose line breaks are loopc's own: a user text with a
    line break must be escaped on its own first (:func:`escape_text`)."""
    return "\n".join(escape_text(line) for line in s.split("\n"))


#: Characters JSON and XML writers leave raw but a terminal or log viewer
#: acts on: DEL and C1 controls (NEL), LINE/PARAGRAPH SEPARATOR, bidi
#: controls (C0 controls are already escaped by both writers).
_RAW_IN_DOCUMENTS = lazyre.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_text(s: str) -> str:
    """Serialised JSON ``s`` made inert without changing its value: every
    ``##[`` written ``#\\u0023[`` and every character of
    :data:`_RAW_IN_DOCUMENTS` as its ``\\uNNNN`` escape (both occur only
    inside strings, where the escape means the same character).  JSON
    lines never start with ``::`` (they start with whitespace, ``{``,
    ``[``, ``]``, ``}``, ``"`` or a literal) and hold no raw C0 control."""
    if LEGACY_PREFIX in s:
        s = s.replace(LEGACY_PREFIX, "#\\u0023[")
    return _RAW_IN_DOCUMENTS.sub(lambda m: f"\\u{ord(m.group()):04x}", s)


def xml_text(s: str) -> str:
    """Serialised XML ``s`` (as :mod:`xml.etree.ElementTree` writes it: no
    comments, CDATA or processing instructions) made inert without changing
    its text: every ``##[`` written ``#&#35;[`` and every character of
    :data:`_RAW_IN_DOCUMENTS` as a character reference.  Line breaks inside
    attribute values are already ``&#10;``/``&#13;``; text nodes must hold
    escaped lines (:func:`escape_text`)."""
    if LEGACY_PREFIX in s:
        s = s.replace(LEGACY_PREFIX, "#&#35;[")
    return _RAW_IN_DOCUMENTS.sub(lambda m: f"&#x{ord(m.group()):x};", s)


def is_inert_line(line: str) -> bool:
    """True when no CI runner reads ``line`` (one line, no line break) as a
    command and no terminal acts on it: it does not start with ``::`` after
    whitespace, holds no ``##[`` and no unsafe character but a tab.  The
    invariant of every line loopc prints, ``--format github``'s own
    commands aside (docs/language.md#command-line-output)."""
    return (not line.lstrip().startswith("::") and LEGACY_PREFIX not in line
            and UNSAFE_RE.search(line.replace("\t", " ")) is None)


def echo(message: str = "", nl: bool = True, err: bool = False) -> None:
    """Write ``message`` — loopc's own text, already escaped here (no
    terminal escapes) — and a newline to stdout or stderr, then flush: what
    ``click.echo`` does with such text, without importing click (the plain
    ``loopc check PATH...`` runs without it).  A stream that cannot encode
    the text falls back to ``click.echo``."""
    import sys

    stream = sys.stderr if err else sys.stdout
    out = message + "\n" if nl else message
    try:
        if out:
            stream.write(out)
    except UnicodeEncodeError:
        import click

        click.echo(message, nl=nl, err=err)
        return
    stream.flush()

