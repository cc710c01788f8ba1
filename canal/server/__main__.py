"""``python -m canal.server [--daemon]``: the server process (the client starts it on demand)."""

from canal.server.main import main

main()
