"""Starting an MCP backend: a stdio server in a sandbox of its own, reached through the engine.

The sandbox is the project's (its image, hardening, limits and ``sandbox.network``) under a name no
agent can give (``_mcp-<server>``: sandbox names start with a letter or digit), so ``canal run -s``
never reaches it and the server's credentials (``env_from_env``, passed to its process only) are not in
any sandbox the agent's commands run in. The files its command names are copied in from the bytes a
person approved (their sha256 is in the approved settings) and run from that copy, so an edit of
``mcp/backend.py`` by the agent is not what runs (and needs a person again before anything does); the
sandbox has no workspace unless the server's ``workspace: ro`` asks for the project, read-only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from canal.core.next import act
from canal.host.paths import project_key
from canal.runtime.mcpremote.client import McpClient
from canal.runtime.mcpremote.errors import MCP_SERVER_NOT_STARTED, MCP_SERVER_UNKNOWN
from canal.runtime.sandboxes.start import SandboxRef, ensure_sandbox
from canal.runtime.settings.mcp_servers import McpServerSettings
from canal.runtime.trust.errors import ConfigUnapproved
from canal.runtime.trust.snapshot import read_image_file
from canal.sandbox.docker.backend import DockerBackend

if TYPE_CHECKING:
    from canal.runtime.api import Canal

SANDBOX_PREFIX = "_mcp-"
APPROVED_DIR = "/tmp/canal-mcp"  # in the server's sandbox: the approved copy of its files


def server_ref(canal: Canal, server: str) -> SandboxRef:
    name = f"{SANDBOX_PREFIX}{server}"
    servers = canal.config.tools.mcp_servers
    workspace = servers[server].workspace if server in servers else "none"
    return SandboxRef(name, f"canal-{project_key(canal.project_dir)}-{name}", workspace=workspace)


def server_settings(canal: Canal, server: str) -> McpServerSettings:
    servers = canal.config.tools.mcp_servers
    if server not in servers:
        msg = f"no MCP server named {server!r} in tools.mcp_servers; nothing was run."
        raise MCP_SERVER_UNKNOWN(msg, hint="add it to canal.yaml (a person approves it), or update the "
                                 "catalog to drop the tools of a removed server", next=act("discover"),
                               details={"server": server, "known": sorted(servers)})
    return servers[server]


def credentials(server: str, settings: McpServerSettings) -> dict[str, str]:
    """The server's variables from Canal's environment; a missing one stops it before it starts."""
    missing = sorted(host for host in settings.env_from_env.values() if host not in os.environ)
    if missing:
        msg = (f"MCP server {server} needs {', '.join(missing)} in Canal's environment "
               f"(tools.mcp_servers.{server}.env_from_env); it was not started.")
        hint = f"set {missing[0]} where Canal runs (in its server, for a served call), then retry"
        raise MCP_SERVER_NOT_STARTED(msg, hint=hint, details={"server": server, "missing": missing})
    return {name: os.environ[host] for name, host in settings.env_from_env.items()}


def approved_files(canal: Canal, server: str, settings: McpServerSettings) -> dict[str, bytes]:
    """Each project file the command names -> its bytes, which must be the bytes approved."""
    services = canal._services
    snap = services.approved_snapshot  # the check this Canal's settings passed: no second read
    servers = (snap.settings.get("tools") or {}).get("mcp_servers", {}) if snap is not None else {}
    approved = dict((servers.get(server) or {}).get("files") or {})
    out: dict[str, bytes] = {}
    for part in settings.project_files():
        if not (canal.project_dir / part).is_file():
            continue
        data = read_image_file(canal.project_dir, part, f"tools.mcp_servers.{server}.command")
        if not services.config_given and approved.get(part) != hashlib.sha256(data).hexdigest():
            msg = (f"{part} (the command of MCP server {server}) changed since its settings were approved; "
                   "it was not started.")
            raise ConfigUnapproved(msg, hint="a person reviews the change and approves it",
                                   next=act("config.approve"), details={"server": server, "file": part})
        out[part] = data
    return out


@contextlib.contextmanager
def connected(canal: Canal, server: str) -> Iterator[McpClient]:
    """The server started in its sandbox and initialized; it ends when the block does."""
    settings = server_settings(canal, server)
    env = credentials(server, settings)
    files = approved_files(canal, server, settings)
    backend = canal.backend
    if not isinstance(backend, DockerBackend):
        msg = f"MCP server {server} runs in a Docker sandbox; backend {type(backend).__name__} has none."
        raise MCP_SERVER_NOT_STARTED(msg, hint="use the Docker backend (the default)",
                                  details={"server": server})
    ref = server_ref(canal, server)
    ensure_sandbox(canal._services, backend, ref)
    argv = list(settings.command or ())
    if files:  # one tar into /tmp makes the folders too
        folder = f"{APPROVED_DIR}/{server}"
        inside = folder.removeprefix("/tmp/")
        backend.put_files(ref.container, {f"{inside}/{part}": data for part, data in files.items()},
                          dest="/tmp")
        argv = [argv[0], *(f"{folder}/{part}" if part in files else part for part in argv[1:])]
    channel = backend.open_stdio(ref.container, argv, env=env)
    client = McpClient(channel, server, timeout_s=settings.timeout,
                       on_timeout=lambda: backend.remove(ref.container))
    try:
        client.initialize()
        yield client
    finally:
        client.close()
