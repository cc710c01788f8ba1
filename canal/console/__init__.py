"""The web console (``canal console``): pending approvals decided with passkeys, the audit log, and
read-only views of sandboxes, tasks and workflow runs, served on http://localhost:PORT (127.0.0.1 only).

A front end, like MCP: the CLI finds ``serve`` through the ``canal.front_ends`` entry point and never
imports this package. In the Canal server the console is a resident of its warm state (it lives as long
as the server, which stays up while an approver is logged in); without a server, ``serve`` runs it in
the foreground until interrupted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def serve(project_dir: Path, on_ready: Callable[[str], None]) -> str:
    """Serve ``project_dir``'s console on its configured port; ``on_ready`` gets the URL. Returns the URL
    at once in the server; blocks (until Ctrl-C) without one."""
    from canal.console.runner import ConsoleServer
    from canal.runtime.sandboxes.warm import installed
    from canal.runtime.services import Services

    project_dir = project_dir.resolve()
    settings = Services(project_dir).config.approvals.console
    warm = installed()
    if warm is None:
        server = ConsoleServer(project_dir, settings.port, settings.session_ttl_s).start()
        on_ready(server.url)
        try:
            server.wait()
        finally:
            server.close()
        return server.url
    key = ("console", str(project_dir), settings.port)
    resident = warm.resident(key, lambda: ConsoleServer(project_dir, settings.port,
                                                         settings.session_ttl_s).start())
    assert isinstance(resident, ConsoleServer)
    resident.revive()
    on_ready(resident.url)
    return resident.url
