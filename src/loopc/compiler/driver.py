"""Deprecated import path: the check pipeline moved to :mod:`loopc.pipeline`
(docs/api.md#moved-import-paths-the-pipeline-layer).  Import ``loopc.check_source`` or
``loopc.pipeline.check_source`` instead.  The alias stays for users' code; nothing in the
package imports it (tests/test_moved_paths.py).
"""
from __future__ import annotations

from loopc.pipeline.check import (
    MAX_DIAGNOSTICS, CheckResult, cap_diagnostics, cap_result, check_file, check_source, yaml_budget_bytes,
)

__all__ = [
    "MAX_DIAGNOSTICS", "CheckResult", "cap_diagnostics", "cap_result", "check_file", "check_source",
    "yaml_budget_bytes",
]
