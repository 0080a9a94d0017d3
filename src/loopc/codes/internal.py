"""LP5999 — a pass crashed (becomes a diagnostic, never a traceback)."""
from loopc.codes import Code, register

register(
    Code("LP5999", "internal.error", "Internal compiler error",
         "A loopc pass raised an unexpected exception. The plan may or may not be valid; "
         "the message names the pass. Please report it with the source that triggered it.",
         "", ""),
)
