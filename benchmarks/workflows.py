"""GitHub Actions workflow files for an anchor linter (actionlint), sized
like loopc's plan tree: ``python benchmarks/workflows.py DIR --like TREE``
writes one workflow per plan of ``TREE`` (same relative path, ``.yml``),
each within a few hundred bytes of its plan's size; ``--files N --bytes B``
writes ``N`` workflows of about ``B`` bytes each instead (each at least
``B`` and at most one step, a few hundred bytes, over; never less than one
job, about 1.5 KB).

The workflows are deterministic and valid for actionlint (no finding): a
``push``/``pull_request``/``workflow_dispatch`` trigger with typed inputs,
``env``, and jobs chained by ``needs`` whose steps mix ``uses:`` (pinned
``actions/checkout``, ``actions/setup-python``, ``actions/cache``) with
``run:`` scripts that read ``${{ inputs.* }}``, ``${{ env.* }}``,
``${{ matrix.* }}`` and ``${{ needs.*.outputs.* }}`` expressions, the
expression density of a plan's templates.  No network, no shell check
dependency (actionlint runs shellcheck only when it is installed).
"""
from __future__ import annotations

import argparse
import random
from pathlib import Path

_HEAD = """name: {name}
on:
  push:
    branches: [main]
  pull_request:
  workflow_dispatch:
    inputs:
      target:
        description: "Where to deploy"
        type: choice
        options: [staging, production]
        default: staging
      verbose:
        type: boolean
        default: false
permissions:
  contents: read
env:
  TOPIC: {name}
  LEVEL: "{level}"
jobs:
"""

_JOB = """  {job}:
    runs-on: ubuntu-latest
{needs}    timeout-minutes: {minutes}
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    outputs:
      result: ${{{{ steps.last.outputs.result }}}}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{{{ matrix.python }}}}
"""

_STEP = """      - name: {title}
        if: ${{{{ github.event_name != 'pull_request' || inputs.verbose }}}}
        env:
          NOTE: "{prose}"
        run: |
          echo "step {k} of ${{{{ env.TOPIC }}}} at level ${{{{ env.LEVEL }}}}"
          echo "target ${{{{ inputs.target }}}} on ${{{{ matrix.python }}}}"
"""

_CACHE = """      - uses: actions/cache@v4
        with:
          path: ~/.cache/pip
          key: pip-${{{{ runner.os }}}}-${{{{ matrix.python }}}}-{k}
"""

_LAST = """      - id: last
        run: echo "result=done-{job}" >> "$GITHUB_OUTPUT"
"""

_WORDS = ("review", "deploy", "verify", "package", "announce", "triage", "measure", "archive", "notify", "audit")


def workflow(i: int, size: int) -> str:
    """Workflow number ``i``, of at least ``size`` bytes (UTF-8) and at most
    one step (a few hundred bytes) over: a job takes steps while the
    workflow is short of ``size`` (at least one), then ends."""
    r = random.Random(7000 + i)
    out = [_HEAD.format(name=f"pipeline-{i:04d}", level=r.randint(1, 5))]
    total = len(out[0])
    job = 0
    k = 0
    while total < size or job == 0:
        name = f"job_{job:02d}"
        needs = f"    needs: [job_{job - 1:02d}]\n" if job else ""
        parts = [_JOB.format(job=name, needs=needs, minutes=r.randint(5, 60))]
        last = _LAST.format(job=name)
        total += len(parts[0]) + len(last)
        for step in range(r.randint(2, 6)):
            if step and total >= size:
                break
            k += 1
            prose = " ".join(r.choice(_WORDS) for _ in range(r.randint(4, 30)))
            piece = _STEP.format(title=f"{r.choice(_WORDS)} {k}", prose=prose, k=k)
            if k % 3 == 0:
                piece += _CACHE.format(k=k)
            parts.append(piece)
            total += len(piece)
        parts.append(last)
        out.append("".join(parts))
        job += 1
    return "".join(out)


def write_like(tree: Path, dest: Path) -> tuple[int, int]:
    """One workflow per ``*.yaml`` of ``tree`` under ``dest`` (same folders);
    returns (files, total bytes)."""
    n = total = 0
    for i, plan in enumerate(sorted(tree.rglob("*.yaml"))):
        rel = plan.relative_to(tree).with_suffix(".yml")
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        text = workflow(i, plan.stat().st_size)
        target.write_text(text, encoding="utf-8")
        n += 1
        total += len(text.encode("utf-8"))
    return n, total


def write_count(dest: Path, files: int, size: int) -> tuple[int, int]:
    """``files`` workflows of about ``size`` bytes (:func:`workflow`) under ``dest/.github/workflows``."""
    d = dest / ".github" / "workflows"
    d.mkdir(parents=True, exist_ok=True)
    total = 0
    for i in range(files):
        text = workflow(i, size)
        (d / f"w{i:04d}.yml").write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
    return files, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dest")
    ap.add_argument("--like", help="a plan tree to mirror file by file")
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--bytes", type=int, default=10_000)
    a = ap.parse_args()
    if a.like:
        n, total = write_like(Path(a.like), Path(a.dest))
    else:
        n, total = write_count(Path(a.dest), a.files, a.bytes)
    print(f"{n} workflows, {total:,} bytes")


if __name__ == "__main__":
    main()
