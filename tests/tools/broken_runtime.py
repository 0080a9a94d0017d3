"""A deliberately broken runtime behind the conformance protocol:
``python tests/tools/broken_runtime.py BUG`` (BUG a key of
tests/planted_bugs.py BUGS)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from planted_bugs import BUGS  # noqa: E402

from loopc.interpreter.protocol import serve  # noqa: E402

if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout, BUGS[sys.argv[1]]))
