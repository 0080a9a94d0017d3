"""Print docs/diagnostics.md from the code registry: ``python -m loopc.codes``
(``python tools/regen.py`` writes it with every other generated file)."""
from __future__ import annotations

import sys

from loopc.codes import all_codes

FAMILY_TITLES = {
    "LP1": "LP1xxx — YAML, source budgets and suppression comments",
    "LP2": "LP2xxx — schema",
    "LP3": "LP3xxx — types, expressions and bindings",
    "LP4": "LP4xxx — graph and analyzer",
    "LP5": "LP5xxx — IR and artifact budgets",
    "LP6": "LP6xxx — execution plans and the capability catalog",
}


def render() -> str:
    """The Markdown page, deterministic (sorted by code)."""
    out = [
        "# loopc diagnostics",
        "",
        "Generated from the registry in `src/loopc/codes/` by `python tools/regen.py`;",
        "a test fails when this page is stale. `loopc explain CODE` prints one entry.",
        "Every failing example below is checked by the test-suite to produce its code,",
        "and every fixed example to check clean. Each code links to the rule it enforces",
        "in the [language reference](reference.md).",
        "",
    ]
    fam = None
    for c in all_codes():
        if c.code[:3] != fam:
            fam = c.code[:3]
            out += [f"## {FAMILY_TITLES.get(fam, fam)}", ""]
        ref = f" Rule: [{c.reference.split('#')[1]}]({c.reference})" if c.reference else ""
        if ref and c.located:
            ref += (" for the document; inside a node's configuration, the section of its kind (a "
                    "join's: [node-join](reference.md#node-join)), inside a contract "
                    "[contracts](reference.md#contracts), inside an edge [edges](reference.md#edges)")
        ref += "." if ref else ""
        out += [f'<a id="{c.code.lower()}"></a>', "", f"### {c.code} `{c.name}` — {c.title}", "",
                f"Severity: {c.severity.value}.{ref}", "", c.explanation, ""]
        if c.example:
            if c.example.startswith("<"):
                out += [f"Failing example: {c.example[1:-1]}.", ""]
            else:
                out += ["Failing example:", "", "```yaml", c.example.rstrip("\n"), "```", ""]
        if c.fixed:
            out += ["Fix:", "", "```yaml", c.fixed.rstrip("\n"), "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
