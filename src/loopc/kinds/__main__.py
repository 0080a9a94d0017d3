"""``python -m loopc.kinds``: print docs/node-kinds.md."""

from __future__ import annotations

import sys

from loopc.kinds.docs import markdown

sys.stdout.write(markdown())
