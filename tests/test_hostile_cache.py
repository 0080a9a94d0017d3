"""The hostile corpus, cache class (issue 21, finding 1): a ``loopc check``
result cache restored from a place others can write to.  An entry is plain
data checked on read; anything but an entry loopc wrote for this key is a
miss (the file is checked again), never a result, never code run, never a
traceback, never a hang (pytest-timeout guards each case)."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from loopc import value
import loopc
from loopc.cli import cache as cache_mod
from loopc.cli.main import cli

from conftest import HEADER as H
from conftest import MINIMAL as GOOD
from conftest import REPOSITORY_PLANS, ROOT

BAD = H + "input: {}\ninput: {}\n" + GOOD.split("\n", 3)[3]


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".git").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.delenv(cache_mod.KEY_ENV, raising=False)
    return tmp_path / "repo"


def _entry(cache: Path) -> Path:
    entries = list(cache.rglob("*.json"))
    assert len(entries) == 1, entries
    return entries[0]


def _key_of(entry: Path) -> str:
    return entry.parent.name + entry.name[: -len(".json")]


def _sealed(key: str, payload: bytes, secret: bytes = b"") -> bytes:
    """An entry as an attacker who knows the format (and ``secret``) writes it."""
    msg = b"loopc-cache/2\0" + key.encode() + b"\0" + payload
    if secret:
        return b"loopc-cache/2 hmac-sha256 " + hmac.new(secret, msg, hashlib.sha256).hexdigest().encode() + b"\n" + payload
    return b"loopc-cache/2 sha256 " + hashlib.sha256(msg).hexdigest().encode() + b"\n" + payload


def _primed(repo: Path, tmp_path: Path, env: dict[str, str] | None = None) -> tuple[Path, Path, str]:
    """A repository with one erroring plan, checked once into a fresh cache:
    (cache folder, its one entry, the uncached JSON output)."""
    (repo / "p.yaml").write_text(BAD)
    cache = tmp_path / "cache"
    expected = run("check", "--no-cache", "--format", "json", "p.yaml", env=env)
    assert expected.exit_code == 1
    first = run("check", "--cache-dir", str(cache), "--format", "json", "p.yaml", env=env)
    assert first.exit_code == 1 and first.stdout == expected.stdout
    return cache, _entry(cache), expected.stdout


def _still_checked(repo: Path, cache: Path, expected: str, env: dict[str, str] | None = None) -> None:
    r = run("check", "--cache-dir", str(cache), "--format", "json", "p.yaml", env=env)
    assert r.exit_code == 1, r.output
    assert r.stdout == expected


# --- entries are plain data -------------------------------------------------------

def test_no_pickle_in_loopc() -> None:
    for p in (ROOT / "src" / "loopc").rglob("*.py"):
        text = p.read_text(encoding="utf-8")
        assert "import pickle" not in text and "pickle." not in text, p


def test_entry_is_json_behind_a_header(repo: Path, tmp_path: Path) -> None:
    cache, entry, _ = _primed(repo, tmp_path)
    head, _, body = entry.read_bytes().partition(b"\n")
    assert head.startswith(b"loopc-cache/2 sha256 ")
    assert [d[0] for d in json.loads(body)] == ["LP1005"]


class _Boom:
    """A pickle that would create ``marker`` when loaded."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


@pytest.mark.timeout(30)
def test_planted_pickle_runs_nothing(repo: Path, tmp_path: Path) -> None:
    cache, entry, expected = _primed(repo, tmp_path)
    marker = tmp_path / "pwned"
    bomb = pickle.dumps(_Boom(str(marker)))
    entry.write_bytes(bomb)  # at the entry's own path
    entry.with_suffix(".pickle").write_bytes(bomb)  # where the old cache kept it
    _still_checked(repo, cache, expected)
    assert not marker.exists()
    # an old-style pickled `()` beside the entry makes nothing pass either
    entry.unlink()
    entry.with_suffix(".pickle").write_bytes(pickle.dumps(()))
    _still_checked(repo, cache, expected)
    assert not marker.exists()


# --- forged entries ------------------------------------------------------------------

@pytest.mark.timeout(30)
def test_forged_empty_entry_without_a_valid_mac_is_a_miss(repo: Path, tmp_path: Path) -> None:
    cache, entry, expected = _primed(repo, tmp_path)
    entry.write_bytes(b"loopc-cache/2 sha256 " + b"0" * 64 + b"\n[]")
    _still_checked(repo, cache, expected)
    entry.write_bytes(b"[]")
    _still_checked(repo, cache, expected)


@pytest.mark.timeout(30)
def test_without_a_key_a_cache_writer_can_hide_findings(repo: Path, tmp_path: Path) -> None:
    """The documented threat model (docs/ci.md#the-result-cache): the
    digest detects damage, not forgery."""
    cache, entry, _ = _primed(repo, tmp_path)
    entry.write_bytes(_sealed(_key_of(entry), b"[]"))
    assert run("check", "--cache-dir", str(cache), "p.yaml").exit_code == 0


@pytest.mark.timeout(30)
def test_with_a_key_forged_entries_are_misses(repo: Path, tmp_path: Path) -> None:
    env = {cache_mod.KEY_ENV: "s3cret"}
    cache, entry, expected = _primed(repo, tmp_path, env)
    assert entry.read_bytes().startswith(b"loopc-cache/2 hmac-sha256 ")
    key = _key_of(entry)
    for forged in (_sealed(key, b"[]"),                      # a plain digest
                   _sealed(key, b"[]", b"guess"),             # another key
                   _sealed(key, b"[]", b"s3cret").replace(b"hmac-sha256", b"sha256")):
        entry.write_bytes(forged)
        _still_checked(repo, cache, expected, env)
    # the real key verifies (the forger would need the secret)
    entry.write_bytes(_sealed(key, b"[]", b"s3cret"))
    assert run("check", "--cache-dir", str(cache), "p.yaml", env=env).exit_code == 0
    # entries written without the key are misses under it, and the reverse
    cache2, entry2, expected2 = _primed(repo, tmp_path / "x")
    _still_checked(repo, cache2, expected2, env)
    assert _entry(cache2).read_bytes().startswith(b"loopc-cache/2 hmac-sha256 ")


@pytest.mark.timeout(30)
def test_an_entry_of_another_file_does_not_verify(repo: Path, tmp_path: Path) -> None:
    """The MAC covers the entry's key: a clean file's entry copied over an
    erroring file's is a miss."""
    (repo / "good.yaml").write_text(GOOD)
    cache = tmp_path / "cache"
    assert run("check", "--cache-dir", str(cache), "good.yaml").exit_code == 0
    good_entry = _entry(cache)
    (repo / "p.yaml").write_text(BAD)
    expected = run("check", "--no-cache", "--format", "json", "p.yaml").stdout
    assert run("check", "--cache-dir", str(cache), "p.yaml").exit_code == 1
    bad_entry = next(p for p in cache.rglob("*.json") if p != good_entry)
    bad_entry.write_bytes(good_entry.read_bytes())
    _still_checked(repo, cache, expected)


# --- damaged and hostile entries: each a miss ------------------------------------

def _diag(**over) -> list:
    """One entry diagnostic (the LP1005 of ``BAD``) with fields replaced."""
    d = json.loads(cache_mod.encode(loopc.check_source(BAD, path="p.yaml").diagnostics))[0]
    names = ["code", "name", "severity", "message", "span", "pointer", "node", "edge", "related", "fix",
             "path", "section"]
    for k, v in over.items():
        d[names.index(k)] = v
    return d


def _valid(payload: object) -> Callable[[str], bytes]:
    return lambda key: _sealed(key, json.dumps(payload).encode())


HOSTILE_ENTRIES: dict[str, Callable[[str], bytes]] = {
    "empty_file": lambda key: b"",
    "header_only": lambda key: _sealed(key, b"")[:86],
    "truncated": lambda key: b"",  # replaced by the test: the real entry cut in half
    "not_utf8": lambda key: _sealed(key, b"\xff\xfe[]"),
    "nan": lambda key: _sealed(key, b"[NaN]"),
    "object_not_list": _valid({"diagnostics": []}),
    "non_diagnostics": _valid([1, 2, 3]),
    "strings": _valid(["LP1005"]),
    "short_diagnostic": _valid([_diag()[:11]]),
    "long_diagnostic": _valid([_diag() + [None]]),
    "unknown_code": _valid([_diag(code="LP9998")]),
    "malformed_code": _valid([_diag(code="LPx")]),
    "renamed_code": _valid([_diag(name="not.the.name")]),
    "bad_severity": _valid([_diag(severity="fatal")]),
    "bool_for_int": _valid([_diag(span=[True, 1, 1, 2, 0, 1])]),
    "negative_line": _valid([_diag(span=[-1, 1, 1, 2, 0, 1])]),
    "huge_int": _valid([_diag(span=[10**400, 1, 1, 2, 0, 1])]),
    "float_for_int": _valid([_diag(span=[1.5, 1, 1, 2, 0, 1])]),
    "message_not_str": _valid([_diag(message=["x"])]),
    "other_path": _valid([_diag(path="other.yaml")]),
    "bad_related": _valid([_diag(related=[["m", None]])]),
    "bad_fix": _valid([_diag(fix=["m", [[None, "x"]], "safe"])]),
    "bad_applicability": _valid([_diag(fix=["m", [], "maybe"])]),
    "deep_nesting": lambda key: _sealed(key, b"[" * 200_000 + b"]" * 200_000),
    "over_budget": lambda key: b"",  # replaced by the test: a sparse file over the budget
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", sorted(HOSTILE_ENTRIES))
def test_hostile_entry_is_a_miss(name: str, repo: Path, tmp_path: Path) -> None:
    cache, entry, expected = _primed(repo, tmp_path)
    if name == "truncated":
        raw = entry.read_bytes()
        entry.write_bytes(raw[: len(raw) // 2])
    elif name == "over_budget":
        with open(entry, "r+b") as fh:
            fh.truncate(cache_mod.MAX_ENTRY_BYTES + 10)
    else:
        entry.write_bytes(HOSTILE_ENTRIES[name](_key_of(entry)))
    _still_checked(repo, cache, expected)
    # the miss rewrote a good entry
    assert cache_mod.decode(_entry(cache).read_bytes().partition(b"\n")[2], "p.yaml")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink_loop"])
def test_special_file_at_an_entry_is_a_miss(kind: str, repo: Path, tmp_path: Path) -> None:
    cache, entry, expected = _primed(repo, tmp_path)
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "directory":
        entry.mkdir()
    else:
        os.symlink(entry.name, entry)
    _still_checked(repo, cache, expected)


def test_a_stale_format_is_a_miss(repo: Path, tmp_path: Path) -> None:
    cache, entry, expected = _primed(repo, tmp_path)
    entry.write_bytes(entry.read_bytes().replace(b"loopc-cache/2", b"loopc-cache/1", 1))
    _still_checked(repo, cache, expected)


# --- the codec ---------------------------------------------------------------------

@pytest.mark.slow
def test_codec_round_trips_every_repository_plan() -> None:
    for p in REPOSITORY_PLANS:
        diags = loopc.check_source(p.read_bytes(), path=str(p), max_diagnostics=None).diagnostics
        assert cache_mod.decode(cache_mod.encode(diags), str(p)) == diags, p


def test_codec_knows_every_diagnostic_field() -> None:
    """The entry shape lists the model's fields in order; a new field must
    be added to the codec (and FORMAT bumped)."""

    from loopc.diagnostics import Diagnostic, Fix, Related, Span, TextEdit

    assert [f.name for f in value.fields(Diagnostic)] == [
        "code", "name", "severity", "message", "span", "pointer", "node", "edge", "related", "fix", "path",
        "section"]
    assert [f.name for f in value.fields(Span)] == ["line", "column", "end_line", "end_column", "start", "end"]
    assert [f.name for f in value.fields(Related)] == ["message", "span", "pointer"]
    assert [f.name for f in value.fields(Fix)] == ["message", "edits", "applicability"]
    assert [f.name for f in value.fields(TextEdit)] == ["span", "new_text"]


def test_codec_keeps_undecodable_file_names() -> None:
    path = os.fsdecode(b"p\xff.yaml")
    diags = loopc.check_source(BAD, path=path).diagnostics
    assert cache_mod.decode(cache_mod.encode(diags), path) == diags


def test_key_covers_content_version_configuration_and_rules(tmp_path: Path) -> None:
    from loopc.lint import LintConfig

    a = cache_mod.Cache(str(tmp_path), LintConfig().digest())
    b = cache_mod.Cache(str(tmp_path), LintConfig(warnings_as_errors=True).digest())
    assert a.key("p.yaml", b"x") != a.key("p.yaml", b"y") != a.key("q.yaml", b"y")
    assert a.key("p.yaml", b"x") != b.key("p.yaml", b"x")
    assert cache_mod.build_id() in a._prefix.decode()
    # the rule set is declared in loopc's own modules, which the build id covers file by file
    files = {rel.replace(os.sep, "/") for rel, _size, _mtime in cache_mod.build_files()}
    import loopc.codes as codes_pkg

    for fam in codes_pkg.FAMILIES:
        assert f"codes/{fam}.py" in files, fam
    assert {"codes/__init__.py", "codes/sections.py", "diagnostics.py", "compiler/expr/grammar.lark"} <= files


def test_a_clean_files_entry_is_the_json_of_no_diagnostics() -> None:
    """encode/decode write and read ``[]`` without json: the same bytes and
    value json gives, and any other spelling still goes through json."""
    import json as _json

    from loopc.cli import cache as _cache

    assert _cache.encode(()) == _json.dumps([], separators=(",", ":")).encode()
    assert _cache.decode(b"[]", "x.yaml") == ()
    assert _cache.decode(b"[ ]", "x.yaml") == ()
    assert _cache.decode(b"[]]", "x.yaml") is None
