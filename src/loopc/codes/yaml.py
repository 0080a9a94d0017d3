"""LP1xxx — strict YAML layer and source budgets (docs/reference.md#source-file,
docs/reference.md#budgets)."""
from loopc.codes import Code, register
from loopc.diagnostics import Severity

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"
OK_BODY = """input: {}
output: {}
entry: done
nodes:
  - id: done
    type: end
    end: {status: succeeded}
edges: []
"""

register(
    Code("LP1001", "yaml.syntax", "YAML syntax error",
         "The source is not well-formed YAML (libyaml could not parse it). The diagnostic sits on "
         "the cause where loopc can tell it, and says what was written: a `{`, `[` or quote that "
         "is never closed (the parser only notices lines later, where it gave up: that place is "
         "the related location), a line indented where no block of the structure around it can "
         "take it, a tab or an invisible character such as a no-break space, an en "
         "space or a zero-width space in indentation (named; an invisible character comes with a safe "
         "fix, a tab with none since its width depends on the editor), a second `: ` in a plain "
         "value, a key without `:`. Other errors keep the parser's own words at the place it gave "
         "up, with where the construct began as the related location. For an indentation error the "
         "parser often gives up a line or more after the mis-indented one (`mode:` one column too "
         "deep under `switch:` makes the next key, `cases:`, the error): loopc re-parses with the "
         "stop line and the lines just before it re-indented to the columns the blocks around them "
         "use (at most eight re-parses, on the error path only), and reports the line whose "
         "re-indentation gets the parser furthest, with the parser's stop as the related location. "
         "Only the columns that do get it further are named, each with a line already at that "
         "column; the fix re-indents the line (with the lines under it when they have to "
         "move too). The fix is safe when it is the one re-indentation tried that parses; otherwise it decides which block the line belongs to, a guess, and "
         "is unsafe. No fix is offered when two columns, or the stop line and the line before it, "
         "are equally likely.",
         H + "input: {a: [1, 2}\n" + OK_BODY.split("\n", 1)[1],
         H + OK_BODY),
    Code("LP1002", "yaml.encoding", "Source is not UTF-8",
         "Plan source is UTF-8 text (a UTF-8 BOM is allowed). Bytes that do not decode, or unpaired surrogates, are rejected at their position.",
         "<bytes b'apiVersion: loop.plan/v1\\nkind: PlanVersion\\n\\xff'>", H + OK_BODY),
    Code("LP1003", "yaml.empty", "Empty document",
         "The source holds no YAML document at all (only comments or whitespace).", "# nothing here yet\n", H + OK_BODY),
    Code("LP1004", "yaml.multiple_documents", "More than one YAML document",
         "A plan is exactly one YAML document; a `---` that starts a second document is rejected, and the plan is not analysed further: the second document often holds the rest of the plan (after a stray `---`), and the first alone would report every part it lacks.",
         H + OK_BODY + "---\nfoo: 1\n", H + OK_BODY),
    Code("LP1005", "yaml.duplicate_key", "Duplicate mapping key",
         "A key appears twice in one mapping. The diagnostic sits on the second key and points at the first; the first definition is used and checking continues.",
         H + "input: {}\ninput: {}\n" + OK_BODY.split("\n", 1)[1], H + OK_BODY),
    Code("LP1006", "yaml.alias", "Anchors and aliases are not allowed",
         "`&anchor` and `*alias` are rejected so that no document can expand beyond its visible size (alias bombs). Write values out in full.",
         H + "input: &i {}\noutput: *i\n" + OK_BODY.split("\n", 2)[2], H + OK_BODY),
    Code("LP1007", "yaml.tag", "Tags are not allowed",
         "Explicit tags such as `!!str` or `!custom` are rejected; values are untagged YAML 1.2 core schema. Quote a scalar to make it a string.",
         H + "input: !!map {}\n" + OK_BODY.split("\n", 1)[1], H + OK_BODY),
    Code("LP1008", "yaml.complex_key", "Mapping key is not a scalar",
         "Keys are strings; a sequence or mapping used as a key is rejected. An unquoted template "
         "(`text: {{ input.title }}`) is such a key to YAML: the diagnostic says to quote it, the fix "
         "does, and the value is read as the template it was meant to be (nothing else is reported "
         "about its shape).",
         H + "input: {[a]: 1}\n" + OK_BODY.split("\n", 1)[1], H + OK_BODY),
    Code("LP1009", "yaml.header_position", "Header lines must come first",
         "The first two lines (after an optional BOM) are exactly `apiVersion: loop.plan/v1` and `kind: PlanVersion`; no comment, `---` or other key may precede them.",
         "# my plan\n" + H + OK_BODY, H + OK_BODY),
    Code("LP1014", "source.not_a_plan", "Named file is not a plan",
         "A file named on the command line (as pre-commit does, for every file its `files:` pattern "
         "matches) that shows no sign of a loop.plan/v1 plan — no `apiVersion: loop.plan/v1` header, "
         "no value naming the plan format or `PlanVersion`, no top-level `entry`, `nodes` or `edges` "
         "— gets this one warning at 1:1 and nothing else is checked: a CI workflow, "
         "`.pre-commit-config.yaml` or a Kubernetes manifest is not a broken plan. A file that does "
         "look like a plan is checked strictly, header and all. Directories never report it: a walked "
         "file whose first line is not a plan header is skipped with a note. To stop naming the file, "
         "exclude it: `loopc check --exclude PATH`, `exclude = [\"PATH\"]` under `[tool.loopc]`, or "
         "narrow pre-commit's `files:`/`exclude:`. The warning can be disabled like any other "
         "(`disable = [\"LP1014\"]`).",
         "<`loopc check .pre-commit-config.yaml`, whose content is `repos: []`>",
         H + OK_BODY, severity=Severity.WARNING),
    Code("LP1010", "resource.source_size", "Source larger than 1 MiB",
         "Plan source is at most 1 MiB (1,048,576 bytes) of UTF-8. Nothing is parsed beyond this "
         "check.",
         "<a 2 MiB source>", H + OK_BODY),
    Code("LP1011", "resource.source_nesting", "YAML nesting deeper than 64",
         "Source YAML nesting is at most 64 levels; the check runs on the event stream before any "
         "tree is built.",
         "<65 nested flow sequences>", H + OK_BODY),
    Code("LP1012", "resource.source_nodes", "More than 100,000 YAML nodes",
         "Source YAML holds at most 100,000 structural nodes — mappings, sequences and scalars, "
         "keys included.",
         "<a document with 100,001 scalars>", H + OK_BODY),
    Code("LP1013", "resource.diagnostic_limit", "More diagnostics than the per-file limit",
         "At most 200 diagnostics are reported per file (the limit is configurable: "
         "`loopc check --max-diagnostics N`, `check_source(..., max_diagnostics=N)`; 0 or `None` "
         "means no limit). The first ones by position are kept and this one summary follows them, "
         "at the first diagnostic left out: its message gives how many were left out and of which "
         "severities (the JSON output also carries the number as `suppressed`), and its severity "
         "is the highest among them, so the exit status stays right. Fix the reported problems "
         "(often one mistake repeated) and check again, or raise the limit.",
         "<a plan with 201 or more problems, such as 201 unknown top-level keys>", H + OK_BODY,
         severity=Severity.WARNING),
)
