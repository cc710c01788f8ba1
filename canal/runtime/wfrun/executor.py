"""``CanalStepExecutor``: the engine's ``StepExecutor`` over ``Canal.run_argv`` and ``Canal.call_tool``.

Each automated step goes through the whole run pipeline (policy, confirmation token, backup, sandbox,
presenter, audit). ``run`` steps pass their argv as is; ``tool`` steps are ``Canal.call_tool``, the
call the CLI and MCP make too. A JSON result is parsed from the FULL stdout (not the presenter's cut),
and the run's sensitive gate values are masked in the audit log and in presented output.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from canal.core.errors import register
from canal.core.mask import mask_exact
from canal.runtime.run.result import RunResult
from canal.workflows.errors import WorkflowError
from canal.workflows.ports import OutcomeStatus, StepOutcome, StepRequest
from canal.workflows.tools import ToolDefinition, parse_result
from canal.workflows.tools.errors import ToolError

if TYPE_CHECKING:
    from canal.runtime.api import Canal
    from canal.runtime.wfrun.factory import ProjectTools

MAX_RESULT_BYTES = 8 * 1024 * 1024  # a step result lives in the sealed run document


STEP_RESULT_INVALID = register(WorkflowError, "STEP_RESULT_INVALID", """
    The step ran and exited 0, but its stdout is not the result it declares (or is too large).
    """, exit_code=125)


class CanalStepExecutor:
    def __init__(self, canal: Canal, tools: ProjectTools) -> None:
        self.canal = canal
        self.tools = tools

    def execute(self, request: StepRequest) -> StepOutcome:
        options: dict[str, Any] = {"confirm": request.confirm_token, "secrets": request.secrets,
                                   "unattended": request.unattended or self.canal.unattended}
        if request.argv is not None:
            result = self.canal.run_argv(list(request.argv), env=dict(request.env) or None,
                                         timeout_s=request.timeout_s, **options)
            return self._outcome(request, None, result)
        assert request.tool is not None
        try:  # the same call as `canal tool call` and MCP's call_capability, with the same errors
            tool = self.tools.definition(request.tool)
            result = self.canal.call_tool(request.tool, request.inputs, env=request.env,
                                          timeout_s=request.timeout_s, **options)
        except ToolError as exc:  # unknown tool, invalid inputs, no runner for it: nothing ran
            return StepOutcome(status="error", reason=mask_exact(exc.message, request.secrets), code=exc.code)
        return self._outcome(request, tool, result)

    def _outcome(self, request: StepRequest, tool: ToolDefinition | None, result: RunResult) -> StepOutcome:
        secrets = request.secrets
        shown = mask_exact(result.text or result.output, secrets)
        if result.status == "confirmation_required" and result.confirmation is not None:
            return StepOutcome(status="confirmation_required", output=shown,
                               reason=mask_exact(result.reason, secrets),
                               confirmation_token=result.confirmation.token,
                               confirmation_reason=mask_exact(result.confirmation.reason, secrets),
                               confirmation_rule_ids=tuple(result.confirmation.rule_ids),
                               confirmation_expires_at=result.confirmation.expires_at,
                               confirmation_approval=result.confirmation.approval)
        if result.status == "denied":
            return StepOutcome(status="denied", output=shown, reason=mask_exact(result.reason, secrets))
        if result.status != "ok":
            status: OutcomeStatus = "failed" if result.status in ("failed", "timeout", "killed") else "error"
            reason = f"{result.status}: {result.reason}" if result.reason else result.status
            return StepOutcome(status=status, exit_code=result.exit_code, output=shown,
                               reason=mask_exact(reason, secrets))
        try:
            value = _result(request, tool, result)
        except WorkflowError as exc:
            return StepOutcome(status="error", exit_code=result.exit_code, output=shown,
                               reason=mask_exact(exc.message, secrets))
        return StepOutcome(status="ok", exit_code=result.exit_code, result=value, output=shown)


def full_stdout(result: RunResult) -> str:
    """Every byte the command wrote to stdout (the presenter may have shown only head and tail)."""
    raw = result.exec_result
    if raw is None:
        return result.output
    if raw.stdout.size > MAX_RESULT_BYTES:
        msg = f"the step wrote {raw.stdout.size} bytes to stdout; a result holds at most {MAX_RESULT_BYTES}"
        raise STEP_RESULT_INVALID(msg, hint="print less, or write large data to a file and return its path")
    with raw.stdout.open() as fh:
        data = fh.read()
    return data.decode("utf-8", errors="replace")


def _result(request: StepRequest, tool: ToolDefinition | None, result: RunResult) -> Any:
    stdout = full_stdout(result)
    if tool is not None:
        return parse_result(tool, stdout)  # TOOL_RESULT_INVALID when it is not the declared JSON
    if request.result_format == "text":
        return stdout
    try:
        return json.loads(stdout)
    except ValueError as exc:
        msg = f"step {request.step_id} declares result: json but its stdout is not JSON ({exc})"
        raise STEP_RESULT_INVALID(msg, hint="make the command print one JSON value on stdout",
                                details={"stdout_bytes": len(stdout)}) from None
