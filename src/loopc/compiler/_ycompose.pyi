"""Types of the optional compiled composer (_ycompose.c; see yamlload)."""
from typing import Any

def setup(
    lib: str, scalar: type, map: type, seq: type, links: type, resolve: Any, special: frozenset[str],
    invisible: frozenset[str], max_nodes: int, max_nesting: int, /,
) -> None: ...
def compose(text: str, end_line: int, end_col: int, /) -> Any: ...
