"""An MCP stdio server on the mcp SDK (``MCPServer``), run in the sandbox from the SDK the test mounts
read-only at /opt/mcp-sdk (the host's own installation: the image has no pip)."""

import sys

sys.path.insert(0, "/opt/mcp-sdk")

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("sdk-backend")
NOTES: list[str] = []


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def count_words(text: str) -> int:
    """Count the words of a text"""
    return len(text.split())


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def purge_notes(reason: str) -> str:
    """Delete every note (destructive)"""
    NOTES.clear()
    return f"purged: {reason}"


if __name__ == "__main__":
    server.run("stdio")
