"""What ``canal discover`` asks each configured MCP server: its tools (``tools/list``, every page)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from canal.core.errors import CanalError
from canal.runtime.mcpremote.launch import connected

if TYPE_CHECKING:
    from canal.runtime.api import Canal


@dataclass(frozen=True)
class ServerProblem:
    server: str
    code: str
    message: str


def list_servers(canal: Canal) -> tuple[dict[str, list[dict[str, Any]]], list[ServerProblem]]:
    """server -> its tools as listed (JSON, the protocol's field names), for each server that answered;
    and for each that did not, why (its previous listing stays in the catalog)."""
    listed: dict[str, list[dict[str, Any]]] = {}
    problems: list[ServerProblem] = []
    for server in sorted(canal.config.tools.mcp_servers):
        try:
            with connected(canal, server) as client:
                listed[server] = [t.model_dump(by_alias=True, exclude_none=True, mode="json")
                                  for t in client.list_tools()]
        except CanalError as exc:
            problems.append(ServerProblem(server, exc.code, exc.message))
    return listed, problems
