"""LP5xxx — lowering to the canonical artifact and the artifact budget
(docs/reference.md#budgets, docs/reference.md#artifact).

Budget codes share the slug family ``resource.artifact_budget``: the
pre-lowering projection (LP5001–LP5004) and the final gates on the completed
artifact (LP5005–LP5007).  They are compile errors: ``loopc check`` does not
run lowering, ``loopc compile``/``digest`` and :func:`loopc.compile_source` do.
"""
from loopc.codes import Code, register

_PROJ = ("Before lowering, loopc projects — with saturating arithmetic and without enumerating "
         "fields × ports — every materialized contract copy (a node's input copied onto each "
         "switch/fork port, a callback contract on its config and its `completed` port, the Plan "
         "output on every succeeded End...), every binding and expression instruction "
         "(pass-through bindings included), every template segment, runtime port and scope record. ")

register(
    Code("LP5001", "resource.artifact_budget.schema_fields", "Artifact would hold more than 16,384 schema fields",
         _PROJ + "The projected number of materialized FieldSchemas exceeds 16,384. Reduce fan-in of "
         "large contracts onto many ports (for example a switch or fork whose wide input is copied "
         "onto every port), or split the plan.",
         "<a plan whose 40-field input passes through a fork with 500 branches>",
         "<the same plan with the wide contract reduced to the fields the branches use>"),
    Code("LP5002", "resource.artifact_budget.expression_instructions",
         "Artifact would hold more than 32,768 expression instructions",
         _PROJ + "The projected number of expression instructions (every operator, operand, "
         "reference, literal and template segment, and one reference per pass-through binding) "
         "exceeds 32,768.",
         "<a plan with 500 nodes each carrying templates of 100 interpolations>",
         "<the same plan with shorter templates>"),
    Code("LP5003", "resource.artifact_budget.ir_units", "Artifact would hold more than 131,072 IR units",
         _PROJ + "IR units are nodes, edges, ports, schema fields, expression instructions, scope "
         "records and state-effect entries; their projected sum exceeds 131,072.",
         "<a plan near every authoring limit at once>", "<a smaller plan>"),
    Code("LP5004", "resource.artifact_budget.materialized_bytes",
         "Artifact would exceed 64 MiB of worst-case materialized data",
         _PROJ + "The conservative size estimate — every retained string counted with worst-case "
         "JSON escaping (6 bytes per UTF-8 byte) on each copy, plus structural overhead — exceeds "
         "64 MiB (67,108,864 bytes).",
         "<a plan whose long labels and templates are copied onto many ports>",
         "<the same plan with shorter strings>"),
    Code("LP5005", "resource.artifact_budget.artifact_size", "Canonical artifact larger than 8 MiB",
         "The completed artifact's RFC 8785 canonical JSON is larger than 8 MiB (8,388,608 bytes), "
         "the final gate after lowering. The projection (LP5001–LP5004) passed, but the real "
         "artifact is still too large.",
         "<a plan just under the projection limits whose artifact exceeds 8 MiB>", "<a smaller plan>"),
    Code("LP5006", "resource.artifact_budget.envelope_nesting", "Artifact JSON nested deeper than 256",
         "The completed artifact nests objects and arrays deeper than 256 levels. Deeply nested "
         "literal values or array item schemas inside deep contracts cause this.",
         "<a plan whose default literal nests 250 arrays>", "<the same plan with a flatter literal>"),
    Code("LP5007", "resource.artifact_budget.expression_nesting",
         "Compiled expression nested deeper than 128",
         "A compiled expression instruction tree (expression, template or value constructor) is "
         "deeper than 128 levels. Source expressions are limited to nesting 64, but constructors "
         "around them and nested literals add levels.",
         "<a bind value built of 130 nested list constructors>", "<the same value written flatter>"),
    Code("LP5010", "ir.lowering_incomplete", "The checked plan lacks information lowering needs",
         "Lowering needs the type pass's compiled form of every expression and the analyzer's "
         "facts. When an earlier pass did not run (for example because of an internal error) the "
         "plan cannot be compiled even though no error was reported for it.",
         "<a plan checked while a pass was disabled>", ""),
)
