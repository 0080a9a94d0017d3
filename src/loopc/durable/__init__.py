"""loopc.durable — run verified artifacts on DBOS with the reference engine
as the scheduler (docs/durable.md).  Optional: ``pip install 'loopc[durable]'``.

* :mod:`loopc.durable.handlers` — the handler interface and the built-in
  file sink, bound through the capability catalog;
* :mod:`loopc.durable.store` — loopc's tables (artifacts, Runs, journal
  records); readable without DBOS;
* :mod:`loopc.durable.runtime` — the DBOS workflow per Run and the commands
  behind ``loopc durable``.  Importing it imports DBOS.

Uses only the interpreter's host API (:mod:`loopc.interpreter.host`).
"""
