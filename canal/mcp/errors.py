"""Errors of the MCP server. Each comes back to the agent as a tool result in the one error shape
(``runtime.errors.render_error``): the code, what was wrong, then ``Next:`` with a call that works."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


class McpToolError(CanalError):
    """Root of errors raised by the MCP layer itself (not by the operation it calls)."""

    code = "MCP_ERROR"
    exit_code = ExitCode.USAGE


ARGUMENT_MISSING = register(McpToolError, "ARGUMENT_MISSING", "Argument missing.")

ARGUMENT_INVALID = register(McpToolError, "ARGUMENT_INVALID", "Argument invalid.")

ARGUMENT_UNKNOWN = register(McpToolError, "ARGUMENT_UNKNOWN", "Argument unknown.")

SANDBOX_UNKNOWN = register(McpToolError, "SANDBOX_UNKNOWN", """
    MCP's ``sandbox`` argument names the project's own sandbox, one already made, or a fork (made with
    fork); a new name starts nothing.
    """)

TOOL_UNKNOWN = register(McpToolError, "TOOL_UNKNOWN", "Tool unknown.")

CONFIRMATION_DECLINED = register(McpToolError, "CONFIRMATION_DECLINED", """
    The person asked through the client said no (or dismissed the question).
    """, exit_code=ExitCode.CONFIRMATION_REQUIRED)
