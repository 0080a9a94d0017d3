"""Deliberately wrong engines: each planted bug must turn at least one test
red (tests/test_interpreter_bugs.py), which shows the golden scenarios, the
journal pins, the invariant monitor and crash/resume catch real mistakes.
Also used by tests/tools/broken_runtime.py behind the conformance protocol."""
from __future__ import annotations

from typing import Any

from loopc.interpreter.engine import Act, Engine


class JoinKeyedByNode(Engine):
    """Join correlation keyed by the join node only (iterations and items mix)."""

    def _group_key(self, join: str, owner_act: str) -> tuple[str, ...]:
        return (join,)


class SlotNotReleasedOnFailure(Engine):
    """A failed item keeps its maxConcurrency slot."""

    def _release_slot(self, fo: Any, k: str, status: str) -> None:
        if status == "succeeded":
            super()._release_slot(fo, k, status)


class LateCallbackAccepted(Engine):
    """A completed or cancelled activation still takes a callback."""

    def _addressable(self, a: Act, kinds: tuple[str, ...]) -> bool:
        return a.status in kinds or a.status in ("done", "cancelled")

    def _callback_acceptable(self, a: Act) -> bool:
        return a.status in ("awaiting", "done", "cancelled")


class AnyIsFirstTerminal(Engine):
    """An any join closes at the first terminal branch, failed or not."""

    def _any_failed(self, g: Any) -> bool:
        return True


class EffectReissuedOnTransportRetry(Engine):
    """A transport retry reserves a new effect instead of reusing the attempt's."""

    def _transport_effect(self, a: Act) -> str:
        if a.effect is None or self._cur and self._cur[-1]["kind"] == "effect.transport_retry":
            a.effect = self._next("eff")
        return a.effect


class RetryResetsActivation(Engine):
    """A node retry creates a new activation instead of a new attempt."""

    def _retry(self, a: Act) -> None:
        self._finish(a, "done")
        b = self._activate(a.node, a.ctx, a.input)
        self._start_attempt(b)


class WaitNotWokenByWrite(Engine):
    """A state write does not re-evaluate waiting conditions."""

    def _wake_waits(self) -> None:
        return None


class BlockedByDirectOnly(Engine):
    """blockedBy lists the direct unsuccessful dependencies, not the roots."""

    def _blocked_by(self, fo: Any, deps: list[str]) -> list[str]:
        return [d for d in deps if fo.status[d] != "succeeded"]


BUGS: dict[str, type[Engine]] = {
    "join_keyed_by_node": JoinKeyedByNode,
    "slot_not_released_on_failure": SlotNotReleasedOnFailure,
    "late_callback_accepted": LateCallbackAccepted,
    "any_is_first_terminal": AnyIsFirstTerminal,
    "effect_reissued_on_transport_retry": EffectReissuedOnTransportRetry,
    "retry_resets_activation": RetryResetsActivation,
    "wait_not_woken_by_write": WaitNotWokenByWrite,
    "blocked_by_direct_only": BlockedByDirectOnly,
}
