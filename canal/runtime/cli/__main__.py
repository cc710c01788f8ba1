"""``python -m canal.runtime.cli`` is ``canal``."""

from canal.runtime.cli.client import main

main()
