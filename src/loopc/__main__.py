"""``python -m loopc`` — same as the ``loopc`` console script."""
from loopc.cli.main import main

main()
