"""Test helpers for users of loopc (docs/api.md#golden-ir-snapshots-in-your-test-suite-syrupy)."""
