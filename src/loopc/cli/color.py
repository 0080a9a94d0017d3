"""Colour in diagnostics text: ``--color auto|always|never``
(docs/ci.md#colour).

* :func:`use_color` — the decision: ``always``/``never`` as given; ``auto``
  is off when ``NO_COLOR`` is set (non-empty; it wins), on when
  ``FORCE_COLOR`` is set (non-empty), off for ``TERM=dumb``, otherwise on
  exactly when the stream is a terminal;
* :func:`paint` — ``text`` in one of the :data:`STYLES` (ANSI SGR codes,
  the 8 standard colours, rendered by rich).

With colour off the text is byte-identical to loopc's plain output: the
renderer only wraps pieces when colour is on.
"""

from __future__ import annotations

import os
from typing import IO, Any, Callable, Mapping

__all__ = ["CHOICES", "STYLES", "color_option", "paint", "use_color"]

CHOICES = ("auto", "always", "never")

#: style of each piece of a diagnostic (rich style strings)
STYLES = {
    "path": "bold",
    "error": "bold red",
    "warning": "bold yellow",
    "info": "bold blue",
    "note": "bold cyan",
    "help": "bold green",
    "gutter": "blue",
}


def use_color(choice: str, stream: IO[str] | Any, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to colour text written to ``stream`` for ``--color choice``
    (see the module docstring); never raises (a closed stream is no terminal)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def paint(text: str, style: str) -> str:
    """``text`` wrapped in the ANSI codes of ``STYLES[style]`` (or of a rich
    style string), reset after."""
    from rich.color import ColorSystem
    from rich.style import Style

    return Style.parse(STYLES.get(style, style)).render(text, color_system=ColorSystem.STANDARD)


def color_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--color`` option of the commands that print diagnostics (a
    ``color`` parameter: one of :data:`CHOICES`)."""
    import click

    return click.option(
        "--color",
        "color",
        type=click.Choice(CHOICES),
        default="auto",
        show_default=True,
        help="Colour diagnostics text: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), always, never.",
    )(f)
