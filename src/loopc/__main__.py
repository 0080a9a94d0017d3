"""``python -m loopc`` — same as the ``loopc`` console script."""
from loopc.cli import main

main()
