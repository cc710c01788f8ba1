"""Errors of the MCP server. Each comes back to the agent as a tool result in the one error shape
(``runtime.errors.render_error``): the code, what was wrong, then ``Next:`` with a call that works."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class McpToolError(CanalError):
    """Root of errors raised by the MCP layer itself (not by the operation it calls)."""

    code = "MCP_ERROR"
    exit_code = ExitCode.USAGE


class ArgumentMissing(McpToolError):
    code = "ARGUMENT_MISSING"


class ArgumentInvalid(McpToolError):
    code = "ARGUMENT_INVALID"


class ArgumentUnknown(McpToolError):
    code = "ARGUMENT_UNKNOWN"


class SandboxUnknown(McpToolError):
    """MCP's ``sandbox`` argument names the project's own sandbox, one already made, or a fork (made with
    fork); a new name starts nothing."""

    code = "SANDBOX_UNKNOWN"


class ToolUnknown(McpToolError):
    code = "TOOL_UNKNOWN"


class ConfirmationDeclined(McpToolError):
    """The person asked through the client said no (or dismissed the question)."""

    code = "CONFIRMATION_DECLINED"
    exit_code = ExitCode.CONFIRMATION_REQUIRED
