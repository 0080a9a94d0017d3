"""Test helpers for users of loopc (docs/api.md "Golden IR snapshots")."""
