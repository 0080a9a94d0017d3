"""Deprecated import path: the compile pipeline moved to :mod:`loopc.pipeline`
(docs/api.md#moved-import-paths-the-pipeline-layer).  Import ``loopc.compile_source`` or
``loopc.pipeline.compile_source`` instead.  The alias stays for users' code; nothing in the
package imports it (tests/test_moved_paths.py).
"""
from __future__ import annotations

from loopc.pipeline.compile import CompileResult, bench_compile, compile_checked, compile_file, compile_source

__all__ = ["CompileResult", "compile_source", "compile_file", "compile_checked", "bench_compile"]
