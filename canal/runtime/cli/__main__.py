"""``python -m canal.runtime.cli`` is ``canal``."""

from canal.runtime.cli.main import main

main()
