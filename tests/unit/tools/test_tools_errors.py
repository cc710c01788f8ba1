from __future__ import annotations

from canal.core.errors import CanalError
from canal.runtime.tools import TOOL_RUNNER_UNAVAILABLE
from canal.workflows.tools import errors


def test_error_codes_are_pinned() -> None:
    table = {cls.code: cls.exit_code for cls in (
        errors.ToolError, errors.TOOL_DEFINITION_INVALID, errors.TOOL_NOT_FOUND, errors.TOOL_ARGS_INVALID,
        errors.TOOL_RULES_INVALID, errors.TOOL_RESULT_INVALID, errors.DISCOVER_WORKFLOW_INVALID,
        errors.DISCOVER_PATH_UNSAFE,
        TOOL_RUNNER_UNAVAILABLE)}
    assert table == {
        "TOOL_ERROR": 2, "TOOL_DEFINITION_INVALID": 2, "TOOL_NOT_FOUND": 2, "TOOL_ARGS_INVALID": 2,
        "TOOL_RULES_INVALID": 2, "TOOL_RESULT_INVALID": 125, "DISCOVER_WORKFLOW_INVALID": 2,
        "DISCOVER_PATH_UNSAFE": 2, "TOOL_RUNNER_UNAVAILABLE": 125,
    }
    assert isinstance(errors.TOOL_ARGS_INVALID("x", hint="y"), CanalError)
