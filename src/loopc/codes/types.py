"""LP30xx — the expression and template language (docs/reference.md#expressions,
docs/reference.md#templates, docs/reference.md#types, docs/reference.md#budgets).

Returned by :mod:`loopc.compiler.expr` (``ExprError.code``) and reported by
the type pass at the exact position inside the scalar
(:func:`loopc.compiler.scalarpos.value_span`).  LP300x are syntax and
budget errors, LP302x operator typing, LP303x templates.
Path defects (unknown root or field, root not legal here) and an agent in
``target`` use the binding family's codes (LP3201–LP3205, LP3402,
:mod:`loopc.codes.bindings`) whether they come from a lone expression or a
``{ref}``: one defect, one code.
"""
import json

from loopc.codes import Code, register

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"


def _q(s: str) -> str:
    """A YAML double-quoted scalar holding ``s``."""
    return json.dumps(s, ensure_ascii=False)


def _plan(when: str = "input.severity == 'high'", text: str = "Urgent: {{ input.topic }}",
          target: str = "#release") -> str:
    """A switch ``route`` (one case ``when``) → send_message ``notify``
    (``text``, ``target``) → succeeded End ``done``."""
    return H + f"""input:
  severity: {{type: enum, values: [high, low], required: true}}
  topic: {{type: string, required: true}}
  count: {{type: number, required: true}}
  tags: {{type: array, required: true, items: {{type: string}}}}
  owner: {{type: agent, required: true}}
  due: {{type: duration, required: true}}
  note: {{type: string}}
output: {{}}
entry: route
nodes:
  - id: route
    type: switch
    input:
      severity: {{type: enum, values: [high, low], required: true}}
      topic: {{type: string, required: true}}
      count: {{type: number, required: true}}
      tags: {{type: array, required: true, items: {{type: string}}}}
      owner: {{type: agent, required: true}}
      due: {{type: duration, required: true}}
      note: {{type: string}}
    switch:
      mode: first_match
      cases:
        - port: urgent
          when: {_q(when)}
      default: other
  - id: notify
    type: send_message
    input:
      topic: {{type: string, required: true}}
      count: {{type: number, required: true}}
      tags: {{type: array, required: true, items: {{type: string}}}}
      owner: {{type: agent, required: true}}
    sendMessage:
      target: {_q(target)}
      text: {_q(text)}
      completion: sent
  - id: done
    type: end
    end: {{status: succeeded}}
edges:
  - id: e_urgent
    from: {{node: route, port: urgent}}
    to: {{node: notify}}
  - id: e_other
    from: {{node: route, port: other}}
    to: {{node: done}}
  - id: e_sent
    from: {{node: notify, port: completed}}
    to: {{node: done}}
"""


OK = _plan()

_LONG = " || ".join(f"input.count == {i}" for i in range(600))
_DEEP = "(" * 65 + "input.count == 1" + ")" * 65
_LONG_TEXT = "x" * 70_000 + " {{ input.topic }}"

register(
    # -- syntax and budgets (LP300x) ---------------------------------
    Code("LP3001", "expr.syntax", "Expression syntax error",
         "The expression does not follow the expression grammar: literals (quoted strings, "
         "JSON numbers, `true`, `false`, `null`, `[...]`), paths (`input.a.b`), comparisons "
         "`== != < <= > >= in`, `!`, `&&`, `||`, parentheses and the calls `contains`, `startsWith`, "
         "`endsWith`, `length`. There is no arithmetic; comparisons do not chain (`a < b < c` is "
         "an error: write `a < b && b < c`); the keywords `true false null in` cannot be path "
         "segments. The diagnostic points at the offending token and lists what was expected; a lone "
         "`=` between operands gets the (unsafe) fix `==`. A wait "
         "`condition` that does not parse says nothing the analyzer can reason about: no race for "
         "want of the ordering it would give (LP4601), nor LP4603/LP4604, is reported about it.",
         _plan(when="input.count > 1 < 5"), _plan(when="input.count > 1 && input.count < 5")),
    Code("LP3002", "expr.too_long", "Expression longer than 8 KiB",
         "One expression is at most 8 KiB (8,192 bytes) of UTF-8. The diagnostic starts at the "
         "first character beyond the limit. Split the logic over several switch cases or compute a "
         "value upstream.",
         _plan(when=_LONG), _plan(when="input.count < 600")),
    Code("LP3003", "expr.too_deep", "Expression nesting deeper than 64",
         "One expression nests at most 64 levels. Nesting is the larger of the parsed tree's depth "
         "(`&&` and `||` are n-ary, so a long `a && b && ...` chain is only two levels) and the "
         "depth of nested brackets `(`/`[`.",
         _plan(when=_DEEP), _plan(when="input.count == 1")),
    Code("LP3004", "template.too_long", "Template longer than 64 KiB",
         "One interpolated template is at most 64 KiB (65,536 bytes) of UTF-8. Each `{{ }}` "
         "expression inside it is also limited to 8 KiB.",
         _plan(text=_LONG_TEXT), _plan()),
    Code("LP3005", "template.syntax", "Unclosed or empty interpolation",
         "In a template every `{{` opens an interpolation closed by the next `}}` outside a quoted "
         "string, and holds one expression; it must close before the next `{{` opens "
         "(`{{ a ({{ b }})` leaves the first one open). A literal `{{` is written `{{ '{{' }}`; "
         "a `}}` outside an interpolation is ordinary text.",
         _plan(text="Topic: {{ input.topic"),
         _plan(text="Topic: {{ input.topic }} (write {{ '{{' }} for a brace pair)")),
    Code("LP3006", "expr.bad_literal", "Invalid literal",
         "String literals accept the escapes `\\\\ \\' \\\" \\n \\t \\uXXXX` only (a surrogate pair "
         "for characters beyond U+FFFF; a lone surrogate is rejected). Numbers are JSON numbers: "
         "integers within ±(2^53−1), finite decimals.",
         _plan(when="input.count == 9007199254740993"), _plan(when="input.count == 9007199254740991")),
    # -- operator typing (LP302x) ---------------------------------------
    Code("LP3020", "expr.type_mismatch", "Operands or value of the wrong type",
         "Comparisons are strict: both operands have one type (an `enum` compares with a "
         "`string`), two enums must share a value, and an expression used where a type is expected "
         "must be assignable to it (`enum` → `string`, `agent` → `responder`, nothing else).",
         _plan(when="input.count == input.topic"), _plan(when="input.count == 3")),
    Code("LP3021", "expr.unknown_function", "Unknown function",
         "The only functions are `contains(a, b)`, `startsWith(a, b)`, `endsWith(a, b)` and "
         "`length(x)` (names are case-sensitive).",
         _plan(when="startswith(input.topic, 'v1')"), _plan(when="startsWith(input.topic, 'v1')")),
    Code("LP3022", "expr.bad_arguments", "Wrong arguments to a function",
         "`contains` takes (string, string) or (array<T>, T); `startsWith`/`endsWith` take "
         "(string, string); `length` takes one string or array and returns a number.",
         _plan(when="contains(input.count, 'x')"), _plan(when="contains(input.tags, 'x')")),
    Code("LP3023", "expr.not_boolean", "Logical operator on a non-boolean",
         "`!`, `&&` and `||` take booleans; there is no truthiness. Compare explicitly "
         "(`length(input.tags) > 0`, `input.note != null`).",
         _plan(when="input.topic && input.count > 1"),
         _plan(when="input.topic != '' && input.count > 1")),
    Code("LP3024", "expr.not_comparable", "Values of this type cannot be compared",
         "`==`/`!=` compare scalars (string, enum, number, boolean, duration, datetime, member, "
         "agent, channel); `< <= > >=` compare numbers, strings (code-point order), durations or "
         "datetimes; `in` needs an array on its right and a scalar on its left.",
         _plan(when="input.tags == input.tags"), _plan(when="length(input.tags) == 2")),
    Code("LP3025", "expr.literal_mismatch", "String literal does not fit the expected type",
         "A string literal takes the expected type when it matches that type's wire form: one of "
         "an enum's values, an ISO 8601 duration (`PT1H`), an RFC 3339 datetime with offset, a "
         "`#channel`, a canonical member/agent id (`mem_ana`). A misspelt enum value gets a "
         "did-you-mean and its replacement as a fix (unsafe: a guess to review), which edits the "
         "literal's text and keeps its quotes (offered only where the suggestion reads back as "
         "itself, in YAML and in the expression's quotes).",
         _plan(when="input.severity == 'urgent'"), _plan(when="input.severity == 'high'")),
    Code("LP3026", "expr.mixed_array", "Array literal elements of different types",
         "The elements of an array literal `[e, ...]` have one type (string literals take the "
         "type of their neighbours when they match its wire form).",
         _plan(when="input.count in [1, 'two']"), _plan(when="input.count in [1, 2]")),
    Code("LP3027", "expr.null_compare", "Comparison of a never-null value with null",
         "Only optional values (neither `required` nor defaulted) can be null, so only they may "
         "be compared with `null`.",
         _plan(when="input.topic != null"), _plan(when="input.note != null")),
    # -- templates (LP303x) ---------------------------------------------
    Code("LP3030", "template.non_scalar", "Non-scalar value interpolated into text",
         "Templates render scalars only: string, enum, number, boolean, duration, datetime, "
         "member, agent, channel. Objects, arrays, scopes, work_items and responders cannot be "
         "interpolated; interpolate one of their scalar fields instead.",
         _plan(text="Tags: {{ input.tags }}"), _plan(text="Tags: {{ length(input.tags) }}")),
)
