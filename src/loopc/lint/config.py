"""Lint configuration of ``loopc check`` and the language server
(docs/ci.md#configuration).

A :class:`LintConfig` is built from the ``[tool.loopc]`` table of
``pyproject.toml`` or the top level of ``.loopc.toml`` (the latter wins when
both exist; finding and reading the files is the caller's job — see
:func:`loopc.cli.config.load_config` — this module does no I/O).

Keys (TOML, kebab-case)::

    include = ["plans/**/*.yaml"]      # globs added to the directory walk
    exclude = ["plans/legacy/**"]      # gitignore-style patterns skipped
    disable = ["LP4603"]               # warnings never reported
    error = ["LP4701"]                 # warnings reported as errors
    warnings-as-errors = false         # every warning reported as an error

Codes may be given as ``LP4603`` or as their slug (``wait.condition_static``).
Errors cannot be disabled or downgraded: an error means the plan cannot
compile.  A code named in both ``disable`` and ``error`` is a problem (a
code is either dropped or raised, never silently one of them), and so is a
pattern :mod:`pathspec` cannot read as gitignore syntax (:func:`pattern_problem`).
Problems are returned as messages, never raised; each starts with its
location, ``source`` or ``source:line:column`` when the caller can locate
the entry (``locate``).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from loopc.value import Value, field

KEYS = ("include", "exclude", "disable", "error", "warnings-as-errors")


class LintConfig(Value):
    """Effective lint configuration (codes normalised to ``LPxxxx``, sorted).

    ``source`` names where it came from (a file path, or ``"defaults"``).
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()
    error: tuple[str, ...] = ()
    warnings_as_errors: bool = False
    source: str = field(default="defaults", eq=False)

    def to_dict(self) -> dict[str, Any]:
        """The TOML-shaped mapping (kebab-case keys), as ``loopc config`` prints it."""
        return {
            "include": list(self.include),
            "exclude": list(self.exclude),
            "disable": list(self.disable),
            "error": list(self.error),
            "warnings-as-errors": self.warnings_as_errors,
        }

    def digest(self) -> str:
        """SHA-256 hex of a canonical text of :meth:`to_dict` (a cache-key
        part): its items sorted, as Python's ``repr`` writes their strings,
        lists and booleans (no :mod:`json` on the one-file path)."""
        from loopc.hashing import sha256

        data = repr(sorted(self.to_dict().items()))
        return sha256(data.encode("utf-8", "surrogateescape")).hexdigest()

    def with_overrides(
        self, *, warnings_as_errors: bool | None = None, exclude: tuple[str, ...] = (), include: tuple[str, ...] = ()
    ) -> "LintConfig":
        """This configuration with command-line options layered on top."""
        return self.evolve(
            warnings_as_errors=self.warnings_as_errors or bool(warnings_as_errors),
            exclude=self.exclude + tuple(exclude),
            include=self.include + tuple(include),
        )

    def to_toml(self) -> str:
        """``[tool.loopc]``-style TOML text of the effective configuration."""
        import json

        lines = [f"# effective configuration (from {self.source})"]
        for k, v in self.to_dict().items():
            if isinstance(v, bool):
                lines.append(f"{k} = {'true' if v else 'false'}")
            else:
                lines.append(f"{k} = [{', '.join(json.dumps(x) for x in v)}]")
        return "\n".join(lines) + "\n"


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a gitignore-style pattern (as :mod:`pathspec`
    reads ``include``/``exclude`` and ``--include``/``--exclude``), or
    ``None`` when it is one: ``'!'`` alone negates nothing, a trailing
    ``\\`` escapes nothing; any other refusal of the library is quoted."""
    if pattern == "!":
        return "a lone '!' negates nothing (write '!' followed by the pattern to re-include)"
    if pattern.endswith("\\") and (len(pattern) - len(pattern.rstrip("\\"))) % 2 == 1:
        return "a trailing '\\' escapes nothing (write '\\\\' for a backslash)"
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except Exception as exc:  # noqa: BLE001 - GitIgnorePatternError (a ValueError) or any other refusal
        return f"not a gitignore pattern ({exc})"
    return None


#: ``locate(key, index)`` -> ``"line:column"`` of entry ``index`` of ``key``
#: (``index`` ``None``: the key itself) in the configuration file, or ``None``.
Locator = Callable[[str, "int | None"], "str | None"]


def _code_index() -> dict[str, Any]:
    from loopc import codes

    out: dict[str, Any] = {}
    for c in codes.all_codes():
        out[c.code] = c
        out.setdefault(c.name, c)
    return out


def from_mapping(
    data: Mapping[str, Any], source: str = "defaults", locate: Locator | None = None
) -> tuple[LintConfig, list[str]]:
    """Build a :class:`LintConfig` from a parsed TOML table.

    Returns ``(config, problems)``; each problem is a human-readable message
    (unknown key, wrong type, unknown code, an error code in ``disable`` or
    ``error``, a code in both, a pattern that is not gitignore syntax)
    starting with ``source`` — ``source:line:column`` when ``locate`` finds
    the entry.  Invalid entries are dropped from the returned configuration.
    """
    problems: list[str] = []
    idx: dict[str, Any] = {}  # the code registry, loaded only for a table that names codes (start-up)
    values: dict[str, Any] = {}
    where_code: dict[tuple[str, str], int] = {}

    def at(key: str, index: int | None = None) -> str:
        pos = locate(key, index) if locate is not None else None
        return f"{source}:{pos}" if pos else source

    for key, value in data.items():
        if key not in KEYS:
            alt = key.replace("_", "-")
            hint = f" (did you mean '{alt}'?)" if alt in KEYS else ""
            problems.append(f"{at(key)}: unknown key '{key}'{hint}; known keys: {', '.join(KEYS)}")
            continue
        if key == "warnings-as-errors":
            if not isinstance(value, bool):
                problems.append(f"{at(key)}: '{key}' must be true or false")
                continue
            values["warnings_as_errors"] = value
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"{at(key)}: '{key}' must be a list of strings")
            continue
        if key in ("include", "exclude"):
            kept = []
            for i, v in enumerate(value):
                why = pattern_problem(v)
                if why is None:
                    kept.append(v)
                else:
                    problems.append(f"{at(key, i)}: '{key}' pattern '{v}': {why}")
            values[key] = tuple(kept)
            continue
        codes_out: list[str] = []
        if value and not idx:
            idx = _code_index()
        for i, v in enumerate(value):
            entry = idx.get(v.upper()) or idx.get(v)
            if entry is None:
                problems.append(f"{at(key, i)}: '{key}' names unknown diagnostic code '{v}'")
            elif entry.severity.value == "error" and key == "disable":
                problems.append(
                    f"{at(key, i)}: 'disable' names {entry.code} ({entry.name}), an error: errors cannot be "
                    "disabled or downgraded (an error means the plan cannot compile)"
                )
            elif entry.severity.value == "error":
                continue  # already an error: raising it is a no-op
            else:
                codes_out.append(entry.code)
                where_code.setdefault((key, entry.code), i)
        values[key] = tuple(sorted(set(codes_out)))
    for code in sorted(set(values.get("disable", ())) & set(values.get("error", ()))):
        name = idx[code].name
        problems.append(
            f"{at('error', where_code[('error', code)])}: 'error' names {code} ({name}), which 'disable' "
            f"(at {at('disable', where_code[('disable', code)])}) names too: a code is either disabled or "
            "raised to an error; remove it from one of them"
        )
    if problems and "disable" in values and "error" in values:
        both = set(values["disable"]) & set(values["error"])
        values["disable"] = tuple(c for c in values["disable"] if c not in both)
        values["error"] = tuple(c for c in values["error"] if c not in both)
    return LintConfig(**values, source=source), problems
