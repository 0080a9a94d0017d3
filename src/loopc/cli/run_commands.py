"""``loopc run`` and ``loopc conform`` (docs/conformance.md).

* ``loopc run SCENARIO... [--format text|json] [--trace]`` — exit 0 when
  every expectation holds, 1 when one does not, 2 when a scenario or its
  plan is malformed (2 wins).  A directory runs every scenario in it
  (``*.yaml``/``*.yml``/``*.json`` files that are not plan sources).
* ``loopc conform --runtime CMD [SCENARIO...]`` — drive an external runtime
  over the JSON-lines protocol and report every divergence per scenario
  (field-level, with JSON pointers); exit 0 when the runtime conforms, 1
  when not, 2 when a scenario is malformed, the runtime cannot be started
  or an option is invalid (one line on stderr).  Without a path it runs
  the kit's golden scenarios (package data,
  :data:`loopc.conformance.SCENARIO_DIR`), from any working directory.
* ``loopc conform --list [--format text|json]`` — name the kit's scenarios
  (text: ``<name>  <path>`` per line; json: ``{"scenarios": [{"name",
  "path"}...], "directory"}``); exit 0.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterator, NoReturn

import click

def scenario_paths(paths: tuple[str, ...]) -> Iterator[tuple[str, str | None]]:
    """(path, error) for every scenario; directories recurse (sorted)."""
    from loopc.conformance import is_scenario_file

    for p in paths:
        if os.path.isdir(p):
            found = False
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in sorted(files):
                    full = os.path.join(root, f)
                    if is_scenario_file(full):
                        found = True
                        yield full, None
            if not found:
                yield p, "no scenario files found"
        else:
            yield p, None  # the runner reads it (or says precisely why it cannot)


def json_text(doc: Any) -> str:
    """``doc`` as JSON text that is always valid JSON (RFC 8259 has no NaN or
    infinity): scenario numbers are validated (docs/conformance.md#numbers),
    so a non-finite float is a defect; should one appear it is written as
    the string ``"NaN"``/``"Infinity"``/``"-Infinity"``, never bare.  No
    string holds ``##[`` or a bidi control as written
    (:func:`loopc.cli.textsafe.json_text`: the same value)."""
    from loopc.cli.textsafe import json_text as inert

    try:
        return inert(json.dumps(doc, ensure_ascii=False, allow_nan=False))
    except ValueError:
        return inert(json.dumps(_finite(doc), ensure_ascii=False, allow_nan=False))


def _finite(doc: Any) -> Any:
    import math

    if isinstance(doc, float) and not math.isfinite(doc):
        return "NaN" if math.isnan(doc) else ("Infinity" if doc > 0 else "-Infinity")
    if isinstance(doc, list):
        return [_finite(x) for x in doc]
    if isinstance(doc, dict):
        return {k: _finite(v) for k, v in doc.items()}
    return doc


def _trace(journal: list[dict[str, Any]]) -> str:
    lines = []
    skip = {"kind", "at", "seq", "step", "marker"}
    for r in journal:
        rest = " ".join(f"{k}={json.dumps(v, sort_keys=True, ensure_ascii=False)}" for k, v in r.items() if k not in skip)
        seq = "  --" if r.get("marker") else f"{r['seq']:4d}"
        lines.append(f"{seq} {r.get('at', '')}  {r['kind']:<22} {rest}")
    return "\n".join(lines)


def _malformed_object(problems: list[Any]) -> dict[str, Any]:
    """The ``--format json`` object of a malformed scenario: the usual keys,
    nothing run, the diagnostics under ``diagnostics``."""
    return {"status": None, "output": None, "error": None, "state": {}, "visits": {}, "attempts": {},
            "events": [], "journal": [], "expectationsMet": False,
            "differences": [p.render() for p in problems], "malformed": True,
            "diagnostics": [p.to_json() for p in problems]}


def budget_options(fn: Any) -> Any:
    """``--max-activations``, ``--max-journal-records``, ``--max-steps``: the
    per-Run budget (docs/conformance.md#budgets; defaults
    :data:`loopc.interpreter.engine.DEFAULT_BUDGET`, kept in step by a test)."""
    for flag, what, default in (("--max-steps", "committed steps", 10_000_000),
                                ("--max-journal-records", "journal records", 10_000_000),
                                ("--max-activations", "node activations", 1_000_000)):
        fn = click.option(flag, type=click.IntRange(min=1), default=default, show_default=True,
                          help=f"Fail a Run that would use more {what} (runtime.budget_exceeded).")(fn)
    return fn


def _budget(max_activations: int, max_journal_records: int, max_steps: int) -> Any:
    from loopc.interpreter.engine import Budget

    return Budget(activations=max_activations, records=max_journal_records, steps=max_steps)


def register(cli: click.Group) -> None:
    @cli.command("run")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    @click.option("--trace", is_flag=True, help="Print a readable timeline of the journal.")
    @budget_options
    @click.argument("paths", nargs=-1, required=True)
    def run_cmd(fmt: str, trace: bool, max_activations: int, max_journal_records: int, max_steps: int,
                paths: tuple[str, ...]) -> None:
        """Run scenarios against the reference interpreter."""
        from loopc.cli.formats.json import utf8_json
        from loopc.cli.textsafe import escape_lines, escape_text
        from loopc.interpreter.runner import run_file

        budget = _budget(max_activations, max_journal_records, max_steps)

        items = list(scenario_paths(paths))
        single = len(paths) == 1 and len(items) == 1 and not os.path.isdir(paths[0])
        results: list[dict[str, Any]] = []
        malformed = failed = passed = 0
        for path, err in items:
            if err is not None:
                click.echo(f"loopc: {escape_text(path)}: {err}", err=True)
                malformed += 1
                continue
            rep = run_file(path, budget=budget)
            if isinstance(rep, list):
                malformed += 1
                for p in rep:
                    click.echo(escape_text(p.render()), err=True)
                if fmt == "json":
                    obj_m = _malformed_object(rep)
                    results.append(obj_m if single else {"scenario": path, **obj_m})
                continue
            obj = rep.to_json()
            if rep.ok:
                passed += 1
            else:
                failed += 1
            if fmt == "json":
                results.append(obj if single else {"scenario": path, **obj})
            else:
                click.echo(f"{'PASS' if rep.ok else 'FAIL'} {escape_text(path)} ({rep.status})")
                for d in rep.differences:
                    click.echo(f"  - {escape_text(d)}")
                if trace:
                    click.echo(escape_lines(_trace(rep.journal)))
        if fmt == "json":
            if single and results:
                click.echo(json_text(utf8_json(results[0])))
            else:
                doc = {"scenarios": results, "passed": passed, "failed": failed + malformed}
                click.echo(json_text(utf8_json(doc)))
        elif not single:
            click.echo(f"{passed} passed, {failed} failed" + (f", {malformed} malformed" if malformed else ""))
        sys.exit(2 if malformed else 1 if failed else 0)

    @cli.command("conform")
    @click.option("--runtime", "runtime", default=None, help="Command line of the runtime under test (required unless --list).")
    @click.option("--list", "list_only", is_flag=True, help="Name the kit's golden scenarios and exit.")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    @click.option("--timeout", "timeout", default="20", show_default=True, metavar="SECONDS",
                  help="Seconds the runtime has for each complete reply line.")
    @click.option("--reply-limit", "reply_limit", default="64MiB", show_default=True, metavar="SIZE",
                  help="Longest reply line accepted (bytes, or with KiB, MiB, GiB).")
    @click.option("--crash-variants/--no-crash-variants", "crash_variants", default=True, show_default=True,
                  help="Also run every scenario with a crash inside each delivery step (afterEffectSubmit).")
    @click.option("--verifier/--no-verifier", "verifier", default=True, show_default=True,
                  help="Check that the runtime refuses artifacts that do not verify.")
    @budget_options
    @click.argument("paths", nargs=-1)
    def conform_cmd(runtime: str | None, list_only: bool, fmt: str, timeout: str, reply_limit: str,
                    crash_variants: bool, verifier: bool, max_activations: int, max_journal_records: int,
                    max_steps: int, paths: tuple[str, ...]) -> None:
        """Check an external runtime against the reference interpreter.

        Without SCENARIO arguments, runs the golden scenarios shipped with
        loopc (see --list)."""
        import math
        import shlex

        from loopc.cli.formats.json import dumps, utf8_json
        from loopc.cli.textsafe import escape_text
        from loopc.conformance import SCENARIO_DIR, scenario_name, scenarios
        from loopc.interpreter.conform import RuntimeError_, RuntimeProcess, conform_file, verifier_suite
        from loopc.interpreter.kitio import parse_size
        from loopc.interpreter.runner import Prepared, prepare_file

        def usage(msg: str) -> NoReturn:
            click.echo(f"loopc: {escape_text(msg)}", err=True)
            sys.exit(2)

        if list_only:
            if paths or runtime is not None:
                usage("--list takes no --runtime and no SCENARIO")
            kit = scenarios(SCENARIO_DIR)
            if fmt == "json":
                doc_l = {"directory": SCENARIO_DIR, "scenarios": [{"name": scenario_name(p), "path": p} for p in kit]}
                click.echo(dumps(doc_l))
            else:
                width = max((len(scenario_name(p)) for p in kit), default=0)
                for p in kit:
                    click.echo(f"{escape_text(scenario_name(p)):<{width}}  {escape_text(p)}")
            sys.exit(0)
        if runtime is None:
            usage("missing option --runtime (the command line of the runtime under test), or use --list")
            return
        try:
            argv = shlex.split(runtime)
        except ValueError as exc:
            usage(f"--runtime: {exc} in {runtime!r}; give a command line, e.g. \"python -m my_runtime\"")
        if not argv:
            usage("--runtime: the command line is empty")
        try:
            limit_s = float(timeout)
        except ValueError:
            limit_s = math.nan
        if not (math.isfinite(limit_s) and 0 < limit_s <= 86_400):
            usage(f"--timeout: {timeout!r} is not a number of seconds in (0, 86400]")
        try:
            limit_b = parse_size(reply_limit)
        except ValueError as exc:
            usage(f"--reply-limit: {exc}")
        bounds: dict[str, Any] = {"timeout": limit_s, "reply_limit": limit_b}
        items = list(scenario_paths(paths or (SCENARIO_DIR,)))
        try:
            proc = RuntimeProcess(argv, **bounds)
        except RuntimeError_ as exc:
            click.echo(f"loopc: {escape_text(str(exc))}", err=True)
            sys.exit(2)
        out: list[dict[str, Any]] = []
        bad = malformed = 0
        first: Prepared | None = None

        def live() -> RuntimeProcess:
            nonlocal proc
            if proc.dead is not None or proc.proc.poll() is not None:
                # the runtime died or was stopped on an earlier request: start a fresh one
                proc.kill()
                try:
                    proc = RuntimeProcess(argv, **bounds)
                except RuntimeError_ as exc:
                    click.echo(f"loopc: {escape_text(str(exc))}", err=True)
                    sys.exit(2)
            return proc

        for path, err in items:
            if err is not None:
                click.echo(f"loopc: {escape_text(path)}: {err}", err=True)
                malformed += 1
                continue
            res = conform_file(path, argv, live(), budget=_budget(max_activations, max_journal_records, max_steps),
                               crash_variants=crash_variants)
            if first is None and not isinstance(res, list):
                prep = prepare_file(path)
                first = prep if isinstance(prep, Prepared) else None
            if isinstance(res, list):
                malformed += 1
                for prob in res:
                    click.echo(escape_text(prob.render()), err=True)
                continue
            out.append({"scenario": path, **res})
            if not res["conforms"]:
                bad += 1
            if fmt == "text":
                click.echo(f"{'OK  ' if res['conforms'] else 'DIFF'} {escape_text(path)}")
                for d in res["divergences"]:
                    click.echo(f"  - {escape_text(str(d['message']))}")
        cases = verifier_suite(first, live()) if verifier and first is not None else []
        accepted = sum(1 for c in cases if not c["refused"])
        if fmt == "text":
            for c in cases:
                click.echo(f"{'OK  ' if c['refused'] else 'DIFF'} verifier: {c['case']} ({escape_text(c['what'])})")
                if c["divergence"]:
                    click.echo(f"  - {escape_text(str(c['divergence']))}")
        proc.close()
        if fmt == "json":
            doc: dict[str, Any] = {"scenarios": out, "conforming": len(out) - bad, "diverging": bad}
            if cases:
                doc["verifier"] = {"cases": cases, "refused": len(cases) - accepted, "accepted": accepted}
            click.echo(json_text(utf8_json(doc)))
        else:
            tail = f"; verifier: {len(cases) - accepted} of {len(cases)} corrupt artifacts refused" if cases else ""
            click.echo(f"{len(out) - bad} conforming, {bad} diverging" + (f", {malformed} malformed" if malformed else "")
                       + tail)
        sys.exit(2 if malformed else 1 if bad or accepted else 0)
