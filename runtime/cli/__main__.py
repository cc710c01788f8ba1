"""``python -m runtime.cli`` is ``canal``."""

from runtime.cli.main import main

main()
