"""Registry of diagnostic codes (ruff-style: one entry per rule).

Each code has a stable slug ``name``, default severity, a title, an
explanation, a failing example and the fix.  ``docs/diagnostics.md`` is
generated from this registry (``python -m loopc.codes`` prints it;
``python tools/regen.py`` rewrites it with every other generated file)
and a test checks that the committed page is current.

Families live in their own modules so that each pass owns its codes:
``yaml`` (LP1xxx), ``schema`` (LP2xxx), ``types`` (LP3xxx), ``graph``
(LP40xx, front-end graph basics), ``analysis`` (LP41xx–LP49xx, analyzer),
``ir`` (LP5xxx, IR and budgets), ``lint`` (LP19xx, suppression comments),
``plan`` (LP6xxx, execution plans and the capability catalog).
"""
from __future__ import annotations

import functools
import importlib

from loopc.value import Value
from loopc.codes.sections import LOCATED, SECTIONS
from loopc.diagnostics import Severity
from loopc.diagnostics import DOCS_URL_ENV, DOCS_URL_FALLBACK, docs_base_url, docs_url  # noqa: F401 - documentation URLs, re-exported

FAMILIES = ("yaml", "schema", "types", "bindings", "graph", "analysis", "ir", "internal", "lint", "plan")


class Code(Value):
    """One registered diagnostic code.

    ``example`` is a complete failing plan (or YAML snippet for LP1xxx) and
    ``fixed`` the corrected version; both are executed by the test-suite.
    ``section`` is the anchor of the docs/reference.md section whose rule the
    code enforces (empty: :data:`loopc.codes.sections.SECTIONS` names it).
    """

    code: str
    name: str
    title: str
    explanation: str
    example: str = ""
    fixed: str = ""
    severity: Severity = Severity.ERROR
    section: str = ""

    @property
    def reference(self) -> str | None:
        """``reference.md#<anchor>`` of the rule this code enforces, or ``None``."""
        anchor = section(self.code)
        return f"reference.md#{anchor}" if anchor else None

    @property
    def located(self) -> bool:
        """Whether each finding of this code links to the section of where
        it is (:data:`loopc.codes.sections.LOCATED`): a key missing from a
        join's configuration is the join's rule, not the document's."""
        return self.code in LOCATED


    @property
    def url(self) -> str:
        """Stable documentation URL of this code (:func:`docs_url`)."""
        return docs_url(self.code)


REGISTRY: dict[str, Code] = {}



def register(*codes: Code) -> None:
    for c in codes:
        if c.code in REGISTRY:
            raise ValueError(f"duplicate diagnostic code {c.code}")
        REGISTRY[c.code] = c


def _load_all() -> None:
    for fam in FAMILIES:
        try:
            importlib.import_module(f"loopc.codes.{fam}")
        except ModuleNotFoundError as exc:  # family not written yet
            if exc.name != f"loopc.codes.{fam}":
                raise


_loaded = False


def get(code: str) -> Code:
    """Return the registry entry for ``code``; raises KeyError if unknown."""
    global _loaded
    if not _loaded:
        _load_all()
        _loaded = True
    return REGISTRY[code]


@functools.lru_cache(maxsize=None)
def section(code: str) -> str | None:
    """Anchor of the docs/reference.md section that ``code`` enforces
    (``"node-join"``), or ``None`` when neither the registry entry
    (``Code.section``) nor :data:`loopc.codes.sections.SECTIONS` names one.
    Cached per code (the registry is fixed once loaded; a check asks once
    per diagnostic)."""
    try:
        own = get(code).section
    except KeyError:
        own = ""
    return own or SECTIONS.get(code)


def all_codes() -> list[Code]:
    global _loaded
    if not _loaded:
        _load_all()
        _loaded = True
    return [REGISTRY[k] for k in sorted(REGISTRY)]
