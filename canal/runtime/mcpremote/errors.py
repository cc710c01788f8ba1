"""Errors of MCP backends. Codes are public API (docs/errors.md); each says what to run next."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


class McpBackendError(CanalError):
    """An MCP backend could not be used; nothing the policy did not see ran."""

    code = "MCP_BACKEND_ERROR"
    exit_code = ExitCode.CANAL_ERROR


MCP_SERVER_NOT_STARTED = register(McpBackendError, "MCP_SERVER_NOT_STARTED", """
    The server's command did not start (not found, exited at once, a variable it needs is unset).
    """)

MCP_SERVER_NOT_MCP = register(McpBackendError, "MCP_SERVER_NOT_MCP", """
    The server started but wrote something that is not JSON-RPC, or ended without answering.
    """)

MCP_PROTOCOL_ERROR = register(McpBackendError, "MCP_PROTOCOL_ERROR", """
    The server answered with JSON that is not a valid MCP message, or answered a request with an error.
    """)

MCP_SERVER_TIMEOUT = register(McpBackendError, "MCP_SERVER_TIMEOUT", """
    The server did not answer within its ``timeout``; its sandbox was removed (the next call starts it
    afresh).
    """)

MCP_RESULT_TOO_LARGE = register(McpBackendError, "MCP_RESULT_TOO_LARGE", """
    One message of the server was larger than Canal takes (``MAX_MESSAGE_BYTES``).
    """)

MCP_SERVER_UNKNOWN = register(McpBackendError, "MCP_SERVER_UNKNOWN", """
    A tool names a server that ``tools.mcp_servers`` does not (any more).
    """, exit_code=ExitCode.USAGE)

TOOL_GONE = register(McpBackendError, "TOOL_GONE", """
    The backend no longer lists the tool the catalog has: run ``canal discover``.
    """, exit_code=ExitCode.USAGE)

TOOL_SCHEMA_CHANGED = register(McpBackendError, "TOOL_SCHEMA_CHANGED", """
    The backend's tool takes other arguments than when the catalog was written: read its metadata
    again (``canal discover``, then ``canal tool meta``). Nothing ran.
    """, exit_code=ExitCode.USAGE)
