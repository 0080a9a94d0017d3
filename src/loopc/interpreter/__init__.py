"""loopc.interpreter — the reference interpreter and conformance kit
(docs/conformance.md; Run rules in docs/language.md#run-semantics).

* :mod:`loopc.interpreter.engine` — the deterministic, journaled engine;
* :mod:`loopc.interpreter.scenario` — strict scenario loading;
* :mod:`loopc.interpreter.runner` — run a scenario, journal text, resume and
  replay drivers;
* :mod:`loopc.interpreter.monitor` — the invariant monitor;
* :mod:`loopc.interpreter.protocol` / :mod:`loopc.interpreter.conform` — the
  JSON-lines protocol and ``loopc conform``; :mod:`loopc.interpreter.kitio`
  (bounded replies) and :mod:`loopc.interpreter.jsondiff` (JSON-typed
  comparison) serve the kit.

The golden scenarios themselves are package data of :mod:`loopc.conformance`.
"""
