"""The web console (``canal console``): pending approvals decided with passkeys, the audit log, and
read-only views of sandboxes, tasks and workflow runs, served on http://localhost:PORT (127.0.0.1 only).

A front end, like MCP: the CLI finds ``serve`` through the ``canal.front_ends`` entry point and never
imports this package. In the Canal server the console is a resident of its resources (it lives as long
as the server, which stays up while an approver is logged in); without a server, ``serve`` runs it in
the foreground until interrupted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from canal.runtime.sandboxes.resources import Resources


def serve(project_dir: Path, on_ready: Callable[[str], None], resources: Resources | None = None) -> str:
    """Serve ``project_dir``'s console on its configured port; ``on_ready`` gets the URL. With resources
    that outlive the call (the Canal server's), the console is one of their residents and this returns
    the URL at once; otherwise it is served in the foreground until Ctrl-C."""
    from canal.console.runner import ConsoleServer
    from canal.runtime.api import Canal

    project_dir = project_dir.resolve()
    with Canal(project_dir, actor="console", resources=resources) as canal:
        settings = canal.config.approvals.console
    if resources is None or not resources.lasting:
        server = ConsoleServer(project_dir, settings.port, settings.session_ttl_s).start()
        on_ready(server.url)
        try:
            server.wait()
        finally:
            server.close()
        return server.url
    key = ("console", str(project_dir), settings.port)
    resident = resources.resident(key, lambda: ConsoleServer(project_dir, settings.port,
                                                             settings.session_ttl_s, resources).start())
    assert isinstance(resident, ConsoleServer)
    resident.revive()
    on_ready(resident.url)
    return resident.url
