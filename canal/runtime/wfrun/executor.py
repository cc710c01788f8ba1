"""``CanalStepExecutor``: the engine's ``StepExecutor`` over ``Canal.run_argv``.

Each automated step goes through the whole run pipeline (policy, confirmation token, backup, sandbox,
presenter, audit). ``run`` steps pass their argv as is; ``tool`` steps are validated and built by
``prepare_call``. A JSON result is parsed from the FULL stdout (not the presenter's cut), and the run's
sensitive gate values are masked in the audit log and in presented output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from canal.core.mask import mask_exact
from canal.runtime.result import RunResult
from canal.workflows.errors import WorkflowError
from canal.workflows.ports import OutcomeStatus, StepOutcome, StepRequest
from canal.workflows.tools import ToolDefinition, parse_result, prepare_call

if TYPE_CHECKING:
    from canal.runtime.api import Canal
    from canal.runtime.wfrun.factory import ProjectTools

MAX_RESULT_BYTES = 8 * 1024 * 1024  # a step result lives in the sealed run document


class StepResultInvalid(WorkflowError):
    """The step ran and exited 0, but its stdout is not the result it declares (or is too large)."""

    code = "STEP_RESULT_INVALID"
    exit_code = 125


@dataclass(frozen=True)
class _Call:
    argv: list[str]
    env: dict[str, str]
    timeout_s: float | None
    tool: ToolDefinition | None


class CanalStepExecutor:
    def __init__(self, canal: Canal, tools: ProjectTools) -> None:
        self.canal = canal
        self.tools = tools

    def execute(self, request: StepRequest) -> StepOutcome:
        try:
            call = self._call(request)
        except WorkflowError as exc:
            return StepOutcome(status="error", reason=mask_exact(exc.message, request.secrets))
        result = self.canal.run_argv(
            call.argv, env=call.env or None, timeout_s=call.timeout_s, confirm=request.confirm_token,
            unattended=request.unattended or self.canal.unattended, secrets=request.secrets)
        return self._outcome(request, call, result)

    def _call(self, request: StepRequest) -> _Call:
        if request.argv is not None:
            return _Call(list(request.argv), dict(request.env), request.timeout_s, None)
        assert request.tool is not None
        tool = self.tools.definition(request.tool)
        if tool.image is not None:
            msg = f"tool {tool.name} asks for image {tool.image!r}; per-tool images are not supported yet"
            raise WorkflowError(msg, hint=f"remove image: from tools/{tool.name}.yaml")
        prepared = prepare_call(tool, request.inputs)
        env = {**request.env, **prepared.env}
        return _Call(prepared.argv, env, request.timeout_s or tool.timeout_s, tool)

    def _outcome(self, request: StepRequest, call: _Call, result: RunResult) -> StepOutcome:
        secrets = request.secrets
        shown = mask_exact(result.text or result.output, secrets)
        if result.status == "confirmation_required" and result.confirmation is not None:
            return StepOutcome(status="confirmation_required", output=shown,
                               reason=mask_exact(result.reason, secrets),
                               confirmation_token=result.confirmation.token,
                               confirmation_reason=mask_exact(result.confirmation.reason, secrets))
        if result.status == "denied":
            return StepOutcome(status="denied", output=shown, reason=mask_exact(result.reason, secrets))
        if result.status != "ok":
            status: OutcomeStatus = "failed" if result.status in ("failed", "timeout", "killed") else "error"
            reason = f"{result.status}: {result.reason}" if result.reason else result.status
            return StepOutcome(status=status, exit_code=result.exit_code, output=shown,
                               reason=mask_exact(reason, secrets))
        try:
            value = _result(request, call, result)
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
        raise StepResultInvalid(msg, hint="print less, or write large data to a file and return its path")
    with raw.stdout.open() as fh:
        data = fh.read()
    return data.decode("utf-8", errors="replace")


def _result(request: StepRequest, call: _Call, result: RunResult) -> Any:
    stdout = full_stdout(result)
    if call.tool is not None:
        return parse_result(call.tool, stdout)  # ToolResultInvalid when it is not the declared JSON
    if request.result_format == "text":
        return stdout
    try:
        return json.loads(stdout)
    except ValueError as exc:
        msg = f"step {request.step_id} declares result: json but its stdout is not JSON ({exc})"
        raise StepResultInvalid(msg, hint="make the command print one JSON value on stdout",
                                details={"stdout_bytes": len(stdout)}) from None
