"""Shared test set-up: ``loopc check``'s result cache goes to a per-session
temporary folder, never the user's cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _isolated_check_cache(tmp_path_factory: pytest.TempPathFactory):
    import os

    old = os.environ.get("LOOPC_CACHE_DIR")
    os.environ["LOOPC_CACHE_DIR"] = str(tmp_path_factory.mktemp("loopc-cache"))
    yield
    if old is None:
        os.environ.pop("LOOPC_CACHE_DIR", None)
    else:
        os.environ["LOOPC_CACHE_DIR"] = old
