"""Which section of the language reference (docs/reference.md) each
diagnostic code enforces.

:func:`loopc.codes.section` returns the anchor (``"node-join"``) of the rule
a code enforces, and ``Code.reference`` the documentation link built from it.
A code's registry entry may name its section itself (``Code(section=...)``);
otherwise the table below does.  Plain tables: this module imports nothing
of the registry (tests/test_import_cycles.py).  A test checks that every registered code has
a section and that every anchor exists in docs/reference.md.
"""
from __future__ import annotations

__all__ = ["LOCATED", "SECTIONS"]

_RANGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("source-file", ("LP1001", "LP1002", "LP1003", "LP1004", "LP1005", "LP1006", "LP1007", "LP1008", "LP1014")),
    ("header", ("LP1009", "LP2002", "LP2004")),
    ("budgets", ("LP1010", "LP1011", "LP1012", "LP1013", "LP2090", "LP2091", "LP2092", "LP2093", "LP2094",
                 "LP2095", "LP5001", "LP5002", "LP5003", "LP5004", "LP5005", "LP5006", "LP5007")),
    ("document", ("LP2001", "LP2006", "LP2007", "LP2012")),
    ("legacy-shapes", ("LP2003", "LP2005", "LP2008", "LP2009", "LP2010", "LP2011", "LP3203")),
    ("values", ("LP2013", "LP2018", "LP2019", "LP2028")),
    ("identifiers", ("LP2014", "LP2030", "LP2070")),
    ("wire-forms", ("LP2015", "LP2017", "LP2035")),
    ("contracts", ("LP2020", "LP2021", "LP2022", "LP2023", "LP2024", "LP2025", "LP2026", "LP2027")),
    ("nodes", ("LP2016", "LP2031", "LP2032", "LP2033", "LP2056")),
    ("retry", ("LP2034",)),
    ("node-send-message", ("LP2040", "LP2041", "LP2042", "LP2043", "LP2044", "LP2045", "LP3402",
                           "LP3404", "LP3405")),
    ("node-wait", ("LP2050", "LP2051", "LP4603")),
    ("node-switch", ("LP2055", "LP4201", "LP4202", "LP4203")),
    ("node-fork", ("LP2057",)),
    ("node-join", ("LP2060", "LP2061", "LP4301", "LP4309", "LP4311", "LP4312", "LP4701")),
    ("node-end", ("LP2065", "LP2066")),
    ("expressions", ("LP3001", "LP3002", "LP3003", "LP3006", "LP3020", "LP3021", "LP3022", "LP3023",
                     "LP3024", "LP3025", "LP3026", "LP3027")),
    ("templates", ("LP3004", "LP3005", "LP3030")),
    ("references", ("LP3201", "LP3202", "LP3204", "LP3205", "LP3206")),
    ("edges", ("LP3301", "LP3302", "LP3303")),
    ("pass-through", ("LP3304", "LP3305")),
    ("required-sources", ("LP3307",)),
    ("types", ("LP3306", "LP3401", "LP3403", "LP3406")),
    ("graph-rules", ("LP4001", "LP4002", "LP4003", "LP4004", "LP4005", "LP4006", "LP4007", "LP4008")),
    ("ends", ("LP4101",)),
    ("parallel-scopes", ("LP4302", "LP4303", "LP4304", "LP4305", "LP4306", "LP4307", "LP4308",
                         "LP4310")),
    ("fan-out-bodies", ("LP4401", "LP4402", "LP4403", "LP4404", "LP4405", "LP4406", "LP4702")),
    ("loops", ("LP4501", "LP4502", "LP4503", "LP4504")),
    ("run-state", ("LP4601", "LP4602", "LP4604")),
    ("artifact", ("LP5010", "LP5999")),
)

#: code → anchor in docs/reference.md
SECTIONS: dict[str, str] = {c: anchor for anchor, codes in _RANGES for c in codes}

#: Shape codes whose rule is the one of the mapping they are found in: a
#: missing or unknown key, or a wrong shape, inside a node's configuration
#: breaks that node kind's rule (``node-join``), inside a contract the
#: ``contracts`` rule, and so on.  Each such diagnostic carries the section
#: of where it is (``Diagnostic.section``, set by the schema pass:
#: ``loopc.compiler.schema.section_at``); the table's section is the one of
#: the document itself.
LOCATED: frozenset[str] = frozenset(("LP2006", "LP2007", "LP2012", "LP2015", "LP2016"))
