"""Errors of the tool catalog: definitions, rules files, arguments, results. Codes are public API."""

from __future__ import annotations

from canal.core.errors import register
from canal.workflows.errors import WorkflowError


class ToolError(WorkflowError):
    code = "TOOL_ERROR"


TOOL_DEFINITION_INVALID = register(ToolError, "TOOL_DEFINITION_INVALID", """
    A ``tools/<name>.yaml`` or a ``WorkFlow.md`` front matter is malformed; the message names file:line.
    """)

TOOL_NOT_FOUND = register(ToolError, "TOOL_NOT_FOUND", "Tool not found.")

TOOL_ARGS_INVALID = register(ToolError, "TOOL_ARGS_INVALID", """
    Arguments failed validation: ``details`` lists missing fields, wrong values and dropped names.
    """)

TOOL_RULES_INVALID = register(ToolError, "TOOL_RULES_INVALID", """
    A line of a rules file cannot be understood; the message names file:line.
    """)

TOOL_RUNNER_UNAVAILABLE = register(ToolError, "TOOL_RUNNER_UNAVAILABLE", """
    The tool asks for something Canal cannot run it with yet (a per-tool image). Nothing ran.
    """, exit_code=125)

TOOL_RESULT_INVALID = register(ToolError, "TOOL_RESULT_INVALID", """
    A tool declared ``result: json`` but its stdout is not JSON.
    """, exit_code=125)

DISCOVER_WORKFLOW_INVALID = register(ToolError, "DISCOVER_WORKFLOW_INVALID", """
    A ``WorkFlow.md`` has no readable front matter with a name and a one-line description.
    """)

DISCOVER_PATH_UNSAFE = register(ToolError, "DISCOVER_PATH_UNSAFE", """
    A path discover reads or writes is a symbolic link: the project may be shared with a sandbox,
    so a planted link must not make Canal read, write or delete files elsewhere on the host.
    """)
