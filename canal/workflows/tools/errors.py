"""Errors of the tool catalog: definitions, rules files, arguments, results. Codes are public API."""

from __future__ import annotations

from canal.workflows.errors import WorkflowError


class ToolError(WorkflowError):
    code = "TOOL_ERROR"


class ToolDefinitionInvalid(ToolError):
    """A ``tools/<name>.yaml`` or a ``WorkFlow.md`` front matter is malformed; the message names file:line."""

    code = "TOOL_DEFINITION_INVALID"


class ToolNotFound(ToolError):
    code = "TOOL_NOT_FOUND"


class ToolArgsInvalid(ToolError):
    """Arguments failed validation: ``details`` lists missing fields, wrong values and dropped names."""

    code = "TOOL_ARGS_INVALID"


class RulesInvalid(ToolError):
    """A line of a rules file cannot be understood; the message names file:line."""

    code = "TOOL_RULES_INVALID"


class ToolRunnerUnavailable(ToolError):
    """The tool asks for something Canal cannot run it with yet (a per-tool image). Nothing ran."""

    code = "TOOL_RUNNER_UNAVAILABLE"
    exit_code = 125  # the runtime's CANAL_ERROR: Canal cannot run it, whoever asks


class ToolResultInvalid(ToolError):
    """A tool declared ``result: json`` but its stdout is not JSON."""

    code = "TOOL_RESULT_INVALID"
    exit_code = 125  # the runtime's CANAL_ERROR: the tool ran but its contract broke


class WorkflowHeaderInvalid(ToolError):
    """A ``WorkFlow.md`` has no readable front matter with a name and a one-line description."""

    code = "DISCOVER_WORKFLOW_INVALID"


class UnsafePath(ToolError):
    """A path discover reads or writes is a symbolic link: the project may be shared with a sandbox,
    so a planted link must not make Canal read, write or delete files elsewhere on the host."""

    code = "DISCOVER_PATH_UNSAFE"
