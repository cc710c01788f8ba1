"""A call to a backend tool, in the order a command goes: arguments checked like a gate, the tool checked
against the server's live listing (gone, or its schema changed since the catalog), the policy over its
facts, a confirmation when it asks for one, the intent in the audit log, the call, the presenter, the
outcome in the audit log. Sensitive fields are sealed in every record and masked in what is shown."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from mcp_types import CallToolResult, JSONRPCError, TextContent, Tool

from canal.core.errors import POLICY_DENIED, ConfirmationRequired
from canal.core.mask import mask_exact
from canal.core.next import NextAction, Say, act, say_all
from canal.host.approvals import Approval, DecisionSummary
from canal.policy.decision import Decision
from canal.policy.toolcalls import ToolCall
from canal.presenter import present
from canal.runtime.errors import format_error
from canal.runtime.mcpremote.errors import TOOL_GONE, TOOL_SCHEMA_CHANGED
from canal.runtime.mcpremote.launch import connected, credentials, server_ref, server_settings
from canal.runtime.run.result import ConfirmationView, DecisionView, RunResult, iso_time
from canal.sandbox.result import CapturedOutput, EndReason, ExecResult
from canal.workflows.fields import validate_fields
from canal.workflows.tools.backends import schema_sha256
from canal.workflows.tools.invoke import reject_args
from canal.workflows.tools.model import ToolDefinition

if TYPE_CHECKING:
    from canal.runtime.api import Canal

SEALED = "[sealed]"
CALL_CWD = "/"  # what a tool call's confirmation is bound to besides its text (it has no working folder)


def call_backend(canal: Canal, definition: ToolDefinition, args: Mapping[str, Any], *,
                 confirm: str | None = None, unattended: bool | None = None, secrets: Sequence[str] = (),
                 say: Say | None = None) -> RunResult:
    binding = definition.mcp
    assert binding is not None
    outcome = validate_fields(definition.parameters, args)
    if not outcome.ok:
        raise reject_args(definition, outcome, [])
    values = outcome.values
    sensitive = [n for n, f in definition.parameters.items() if f.sensitive and n in values]
    hidden = [*secrets, *(str(values[n]) for n in sensitive),
              *credentials(binding.server, server_settings(canal, binding.server)).values()]
    unattended = canal.unattended if unattended is None else unattended
    ref = server_ref(canal, binding.server)
    redact = _redactor(canal, hidden)
    with connected(canal, binding.server) as client:
        listed = _live(client.list_tools(), definition)
        call = ToolCall(binding.server, binding.tool, values, listed.get("annotations") or {})
        shown_call = ToolCall(binding.server, binding.tool, {k: SEALED if k in sensitive else v
                                                            for k, v in values.items()}, call.annotations)
        decision = canal.policy.decide_tool(call, unattended=unattended)
        view = DecisionView(action=decision.action, rule_ids=list(decision.rule_ids),
                            reasons=list(decision.reasons), source=decision.source,
                            policy_hash=decision.policy_hash)
        record = {"sandbox": ref.name, "tool": definition.name, "server": binding.server,
                  "remote_tool": binding.tool, "command": redact(shown_call.text),
                  "decision": view.model_dump()}
        if decision.action == "deny":
            return _denied(canal, decision, view, record, redact, say)
        approval: Approval | None = None
        if decision.action == "confirm":
            if confirm is None:
                return _ask(canal, call, shown_call, decision, view, record, redact, say)
            approval = canal._services.approvals.redeem(confirm, call.text, ref.name, CALL_CWD,
                                                       decision.policy_hash)
        audit = canal._services.audit
        started = audit.append("tool.started", {
            **record, "annotations": dict(call.annotations),
            "approver": None if approval is None else f"{approval.approver} ({approval.how})",
            "approval": None if approval is None else approval.token}, actor=canal.actor)
        began = time.monotonic()
        answer = client.call_tool(binding.tool, values)
        elapsed = time.monotonic() - began
    result = _as_exec(answer, definition, elapsed)
    shown = present(result, config=canal.config.presenter, output_dir=canal._services.outputs_dir(ref.name),
                    redact=redact, name_hint=definition.name, command=redact(shown_call.text), say=say)
    body = result.stdout.data or b""
    audit_id = audit.append("tool.completed", {
        "started": started, "sandbox": ref.name, "tool": definition.name, "is_error": result.exit_code != 0,
        "duration_ms": int(elapsed * 1000), "output_bytes": len(body),
        "output_sha256": hashlib.sha256(body).hexdigest()}, actor=canal.actor)
    return RunResult(status="ok" if result.exit_code == 0 else "failed", exit_code=result.exit_code,
                     reason="exited" if result.exit_code == 0 else "the tool reported an error",
                     duration_s=round(elapsed, 3), output=shown.output, stderr=shown.stderr,
                     output_file=shown.output_file, decision=view, sandbox=ref.name, audit_id=audit_id,
                     text=shown.text, exec_result=result)


def _live(tools: list[Tool], definition: ToolDefinition) -> dict[str, Any]:
    """The tool as the server lists it now; ``TOOL_GONE`` or ``TOOL_SCHEMA_CHANGED`` before anything runs."""
    binding = definition.mcp
    assert binding is not None
    found = next((t for t in tools if t.name == binding.tool), None)
    if found is None:
        msg = (f"MCP server {binding.server} no longer lists {binding.tool} (tool {definition.name}); "
               "nothing was run.")
        raise TOOL_GONE(msg, hint="bring the catalog up to date", next=act("discover"),
                       details={"tool": definition.name, "server": binding.server})
    listed = found.model_dump(by_alias=True, exclude_none=True, mode="json")
    if schema_sha256(listed.get("inputSchema")) != binding.schema_sha256:
        msg = (f"tool {definition.name} takes other arguments than when its metadata was written "
               f"(MCP server {binding.server} changed it); nothing was run.")
        raise TOOL_SCHEMA_CHANGED(msg, hint="update the catalog, read the tool's fields again, then call it",
                                next=[act("discover"), act("tool.meta", name=definition.name)],
                                details={"tool": definition.name, "server": binding.server})
    return listed


def _redactor(canal: Canal, hidden: Sequence[str]) -> Any:
    base = canal._services.redactor
    values = [h for h in hidden if h]
    return (lambda text: base(mask_exact(text, values))) if values else base


def _as_exec(answer: CallToolResult | JSONRPCError, definition: ToolDefinition, elapsed: float) -> ExecResult:
    """The result as a command's output: text parts (and the structured content) on stdout; an error
    result (``isError``, or the server's JSON-RPC error) on stderr with exit status 1."""
    if isinstance(answer, JSONRPCError):
        err = f"MCP error {answer.error.code}: {answer.error.message}\n".encode()
        return _exited(b"", err, 1, elapsed)
    texts = [part.text if isinstance(part, TextContent) else _described(part) for part in answer.content]
    structured = answer.structured_content
    if structured is not None and (definition.result == "json" or not texts):
        body = json.dumps(structured, ensure_ascii=False, indent=2)
    else:
        body = "\n".join(texts)
    data = (body + ("\n" if body and not body.endswith("\n") else "")).encode()
    if answer.is_error:
        return _exited(b"", data, 1, elapsed)
    return _exited(data, b"", 0, elapsed)


def _exited(out: bytes, err: bytes, code: int, elapsed: float) -> ExecResult:
    return ExecResult(_captured(out), _captured(err), exit_code=code, duration_s=elapsed,
                      reason=EndReason.EXITED)


def _described(part: Any) -> str:
    kind = getattr(part, "type", "content")
    mime = getattr(part, "mime_type", None) or getattr(getattr(part, "resource", None), "mime_type", None)
    uri = getattr(part, "uri", None) or getattr(getattr(part, "resource", None), "uri", None)
    text = getattr(getattr(part, "resource", None), "text", None)
    if text is not None:
        return str(text)
    return f"[{kind}{f' {mime}' if mime else ''}{f' {uri}' if uri else ''}]"


def _captured(data: bytes) -> CapturedOutput:
    return CapturedOutput(size=len(data), data=data, sha256=hashlib.sha256(data).hexdigest())


def _denied(canal: Canal, decision: Decision, view: DecisionView, record: dict[str, Any], redact: Any,
            say: Say | None) -> RunResult:
    audit_id = canal._services.audit.append("tool.denied", record, actor=canal.actor)
    rules = ", ".join(decision.rule_ids) or decision.source
    hint = "ask the user to make this call outside Canal, or use a tool the policy allows"
    actions: list[NextAction] = [act("tool.list")]
    message = f"{record['command']} matches {rules} ({decision.reason}). Nothing was run."
    words = say_all(actions, say, lead=hint) if say else hint
    text = redact(format_error(POLICY_DENIED.code, message, words))
    return RunResult(status="denied", exit_code=None, reason=decision.reason, duration_s=0.0, decision=view,
                     sandbox=record["sandbox"], audit_id=audit_id, text=text, hint=hint, next=actions)


def _ask(canal: Canal, call: ToolCall, shown: ToolCall, decision: Decision, view: DecisionView,
         record: dict[str, Any], redact: Any, say: Say | None) -> RunResult:
    pending = canal._services.approvals.request(
        call.text, record["sandbox"], CALL_CWD, decision.policy_hash,
        DecisionSummary(rule_ids=decision.rule_ids, reason=decision.reason), display=redact(shown.text))
    approval: Literal["agent", "human"] = "human" if pending.needs_human else "agent"
    confirmation = ConfirmationView(token=pending.token, reason=decision.reason,
                                    rule_ids=list(decision.rule_ids),
                                    expires_at=iso_time(pending.expires_at), approval=approval)
    audit_id = canal._services.audit.append("tool.confirmation_required", {
        **record, "token": pending.token, "approval": approval}, actor=canal.actor)
    actions = [act("confirm", token=pending.token, approval=approval, call=True)]
    hint = "" if pending.needs_human else "ask the user"
    rules = ", ".join(decision.rule_ids)
    message = f"{record['command']} matches {rules} ({decision.reason}). Nothing was run."
    words = say_all(actions, say, lead=hint) if say else hint
    text = redact(format_error(ConfirmationRequired.code, message, words))
    return RunResult(status="confirmation_required", exit_code=None, reason=decision.reason, duration_s=0.0,
                     decision=view, confirmation=confirmation, sandbox=record["sandbox"], audit_id=audit_id,
                     text=text, hint=hint, next=actions)
