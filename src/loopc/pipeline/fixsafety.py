"""The fix-safety rule, checked on one input (docs/api.md#fixes-and-their-safety).

A fix marked safe (``Applicability.SAFE``) is applied unattended by
``loopc check --fix`` and the language server's "fix all", so it must never
make a plan worse.  Applied *alone* to the text its diagnostic came from, it
must leave

* no error the original text did not have, both checked with follow-on
  suppression off (:func:`loopc.pipeline.check.check_unsuppressed`: a new
  error cannot hide behind an old one), errors compared by code and message
  as a multiset; and
* where the original compiled, a text that compiles to the same semantic
  digest (a respelling never changes what the plan means).

:func:`prove_fix` checks one fix on one text; the property test
(tests/test_fix_safety.py) runs it for every fix marked safe that a corpus of
plans and their one-defect copies produces.  Pure: text in, verdict out.
"""

from __future__ import annotations

from collections import Counter

import attrs

from loopc.diagnostics import Diagnostic
from loopc.pipeline.check import error_identities, fix_new_errors

__all__ = ["COMPUTE", "FixVerdict", "error_identities", "prove_fix"]


class _Compute:
    """The type of :data:`COMPUTE`."""


#: ``prove_fix(digest_before=COMPUTE)``: compile the text to know its digest
COMPUTE = _Compute()


@attrs.frozen
class FixVerdict:
    """What applying one fix alone did.

    ``applied``: the fix's edits applied (``False``: they fall outside the
    text or overlap each other; nothing to judge).  ``new_errors``: the
    errors of the fixed text the original did not have (with follow-on
    suppression off), ``(code, message)`` each.  ``digest_before`` /
    ``digest_after``: the semantic digests (``None`` when that text does not
    compile).  ``fixed``: the fixed text.
    """

    applied: bool
    fixed: str
    new_errors: tuple[tuple[str, str], ...] = ()
    digest_before: str | None = None
    digest_after: str | None = None

    @property
    def safe(self) -> bool:
        """Does the fix meet the rule on this input?"""
        if not self.applied:
            return True
        if self.new_errors:
            return False
        return self.digest_before is None or self.digest_after == self.digest_before

    def explain(self) -> str:
        """One line saying why the fix is not safe here (empty when it is)."""
        if self.safe:
            return ""
        if self.new_errors:
            return "new errors: " + "; ".join(f"{c} {m}" for c, m in self.new_errors)
        return f"semantic digest {self.digest_before} became {self.digest_after}"


def prove_fix(
    text: str,
    diagnostic: Diagnostic,
    *,
    before: Counter[tuple[str, str]] | None = None,
    digest_before: str | None | _Compute = COMPUTE,
) -> FixVerdict:
    """Apply ``diagnostic``'s fix alone to ``text`` (whatever its
    applicability) and judge it by the rule of the module docstring.

    ``before`` (the :func:`error_identities` of ``text`` checked unsuppressed)
    and ``digest_before`` (its digest, ``None`` when it does not compile) may
    be given when several fixes of one text are judged; they are computed
    when omitted (``before=None``, ``digest_before=COMPUTE``).  Never raises on bad input: every pass runs
    guarded."""
    from loopc.pipeline.compile import compile_source

    applied, fixed, new = fix_new_errors(text, diagnostic, before=before)
    if not applied:
        return FixVerdict(False, text)
    if isinstance(digest_before, _Compute):
        digest_before = compile_source(text).digest
    digest_after = compile_source(fixed).digest if digest_before is not None else None
    return FixVerdict(True, fixed, new, digest_before, digest_after)
