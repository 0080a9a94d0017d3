"""loopc.hashing.sha256 (the result cache's SHA-256, docs/ci.md#the-result-cache):
the same digests as hashlib's whichever implementation computes them, the
built-in one for a run's first bytes, hashlib's after them or once it is
imported."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopc import hashing


BUILTIN = hashing._find_builtin()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4096), st.lists(st.binary(max_size=300), max_size=4), st.booleans())
def test_the_digests_are_hashlibs(data: bytes, more: list[bytes], builtin: bool) -> None:
    """Both implementations :func:`hashing.sha256` hands out (here hashlib
    is imported, so it hands out hashlib's: the built-in one is taken as it
    would be in a fresh run)."""
    h = BUILTIN(data) if builtin and BUILTIN else hashing.sha256(data)
    want = hashlib.sha256(data)
    for chunk in more:
        h.update(chunk)
        want.update(chunk)
    c = h.copy()
    assert h.hexdigest() == want.hexdigest()
    assert c.digest() == want.digest()
    assert (h.name, h.digest_size) == ("sha256", 32)


def test_a_run_hashes_its_first_bytes_without_hashlib_then_with_it() -> None:
    probe = (
        "import sys, json\n"
        "from loopc import hashing\n"
        "kinds = [type(hashing.sha256(b'x' * 100_000)).__module__ for _ in range(12)]\n"
        "print(json.dumps([kinds, 'hashlib' in sys.modules, '_hashlib' in sys.modules]))\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    import json

    kinds, hashlib_loaded, openssl_loaded = json.loads(r.stdout)
    # 1 MiB in 100,000-byte pieces: eleven built-in, then hashlib's (OpenSSL's)
    assert kinds[:11] == [kinds[0]] * 11 and kinds[0] != kinds[11], kinds
    assert hashlib_loaded and openssl_loaded


def test_once_hashlib_is_imported_it_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hashing, "_hashed", 0)
    assert "hashlib" in sys.modules  # this module imported it
    assert type(hashing.sha256(b"abc")) is type(hashlib.sha256(b"abc"))


def test_without_a_built_in_sha256_hashlib_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hashing, "_hashed", 0)
    monkeypatch.setattr(hashing, "_builtin", False)
    monkeypatch.delitem(sys.modules, "hashlib")
    h = hashing.sha256(b"abc")
    assert h.hexdigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_not_bytes_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        hashing.sha256("text")  # type: ignore[arg-type]
