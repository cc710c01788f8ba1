"""``python -m canal.cli`` is ``canal``."""

from canal.cli.client import main

main()
