"""No type debt (issue 24 item 5): every module of the package passes mypy.

The gate (``.ci/lint``) runs ``mypy --config-file mypy.ini``; these checks
keep it from being switched off for part of the package again — no
``ignore_errors`` section in mypy.ini, no file-wide ignore comment in
``src/loopc``, and the checked files still the whole package.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MYPY_INI = ROOT / "mypy.ini"
PACKAGE = ROOT / "src" / "loopc"

#: a comment that silences mypy for a whole file: ``# mypy: ignore-errors``
#: anywhere, or a bare ``# type: ignore`` before the first statement
_FILE_WIDE = re.compile(r"#\s*mypy:\s*ignore[-_]errors", re.I)
_BARE_IGNORE = re.compile(r"#\s*type:\s*ignore\s*$")


def _config() -> configparser.ConfigParser:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read_string(MYPY_INI.read_text(encoding="utf-8"))
    return cp


def test_mypy_ini_has_no_ignore_errors_section() -> None:
    cp = _config()
    offending = [s for s in cp.sections() if cp.has_option(s, "ignore_errors")]
    assert offending == [], (
        f"mypy.ini exempts modules from type checking ({', '.join(offending)}): fix the modules' types "
        "instead (real annotations, narrowing; a `# type: ignore[code]` with its reason where one line must)")


def test_mypy_rejects_a_stale_type_ignore() -> None:
    """An ignore comment mypy no longer needs is an error, so none outlives its reason."""
    assert _config().getboolean("mypy", "warn_unused_ignores", fallback=False)


def test_mypy_checks_the_whole_package() -> None:
    cp = _config()
    assert cp.has_section("mypy")
    files = [f.strip() for f in cp.get("mypy", "files", fallback="").split(",") if f.strip()]
    assert "src/loopc" in files, f"mypy.ini [mypy] files = {files}: the package must be checked"
    assert not cp.has_option("mypy", "exclude"), "mypy.ini excludes part of the package from checking"


def test_no_file_wide_ignore_comment_in_the_package() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        if _FILE_WIDE.search(text):
            found.append(f"{rel}: '# mypy: ignore-errors'")
        for line in text.splitlines():
            stripped = line.strip()
            if not stripped or stripped.startswith("#!") or stripped.startswith("# -*-"):
                continue
            if _BARE_IGNORE.fullmatch(stripped):
                found.append(f"{rel}: a bare '# type: ignore' before the first statement")
            if not stripped.startswith("#"):
                break
    assert found == [], "file-wide mypy exemptions:\n  " + "\n  ".join(found)
