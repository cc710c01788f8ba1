"""Errors of MCP backends. Codes are public API (docs/errors.md); each says what to run next."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class McpBackendError(CanalError):
    """An MCP backend could not be used; nothing the policy did not see ran."""

    code = "MCP_BACKEND_ERROR"
    exit_code = ExitCode.CANAL_ERROR


class McpServerNotStarted(McpBackendError):
    """The server's command did not start (not found, exited at once, a variable it needs is unset)."""

    code = "MCP_SERVER_NOT_STARTED"


class McpServerNotMcp(McpBackendError):
    """The server started but wrote something that is not JSON-RPC, or ended without answering."""

    code = "MCP_SERVER_NOT_MCP"


class McpProtocolError(McpBackendError):
    """The server answered with JSON that is not a valid MCP message, or answered a request with an error."""

    code = "MCP_PROTOCOL_ERROR"


class McpServerTimeout(McpBackendError):
    """The server did not answer within its ``timeout``; its sandbox was removed (the next call starts it
    afresh)."""

    code = "MCP_SERVER_TIMEOUT"


class McpResultTooLarge(McpBackendError):
    """One message of the server was larger than Canal takes (``MAX_MESSAGE_BYTES``)."""

    code = "MCP_RESULT_TOO_LARGE"


class McpServerUnknown(McpBackendError):
    """A tool names a server that ``tools.mcp_servers`` does not (any more)."""

    code = "MCP_SERVER_UNKNOWN"
    exit_code = ExitCode.USAGE


class ToolGone(McpBackendError):
    """The backend no longer lists the tool the catalog has: run ``canal discover``."""

    code = "TOOL_GONE"
    exit_code = ExitCode.USAGE


class ToolSchemaChanged(McpBackendError):
    """The backend's tool takes other arguments than when the catalog was written: read its metadata
    again (``canal discover``, then ``canal tool meta``). Nothing ran."""

    code = "TOOL_SCHEMA_CHANGED"
    exit_code = ExitCode.USAGE
