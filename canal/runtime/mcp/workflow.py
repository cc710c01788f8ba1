"""The ``workflow`` tool: start, advance and inspect runs of the workflow engine, on the server's Canal.

The text views are the CLI's (``runtime.cli.workflow_render``); only the ``Next:`` line is rewritten,
so an agent connected over MCP is told the tool call to make, not a shell command.
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any

from canal.runtime.api import Canal
from canal.runtime.cli.workflow_render import render_advance, render_current, render_list, render_start
from canal.runtime.mcp import schemas as s
from canal.runtime.mcp.args import coerce_fields
from canal.runtime.mcp.errors import ArgumentMissing
from canal.runtime.mcp.operations import Confirmation, Reply, confirmation_text
from canal.runtime.wfrun import open_engine
from canal.workflows.engine import Engine
from canal.workflows.views import AdvanceView, CurrentView, StartView, StepView

_RETRY = "call workflow again with action \"advance\", the same run_id"


class WorkflowTool:
    def __init__(self, canal: Canal) -> None:
        self.canal = canal

    @cached_property
    def engine(self) -> Engine:
        return open_engine(self.canal)

    def __call__(self, args: s.WorkflowArgs) -> Reply:
        if args.action == "start":
            return self.start(args)
        run_id = _require(args.run_id, "run_id", args.action,
                          {"action": args.action, "run_id": "r_..."})
        if args.action == "current":
            current = self.engine.current(run_id)
            return _reply(current, render_current(current))
        gate = self._typed_gate(run_id, args.gate_data)
        view = self.engine.advance(run_id, gate, confirm=args.confirm_token)
        return self._advanced(view)

    def _typed_gate(self, run_id: str, gate_data: dict[str, Any] | None) -> dict[str, Any] | None:
        """Numbers and booleans a model sent as text, in the current step's declared field types."""
        if not gate_data:
            return gate_data
        step = self.engine.current(run_id).step
        kinds = {f.name: f.type for f in step.fields} if step is not None else {}
        return coerce_fields(gate_data, kinds)

    def start(self, args: s.WorkflowArgs) -> Reply:
        if not args.name:
            names = render_list(self.engine.list_workflows())
            msg = (f"workflow: action \"start\" needs name, the workflow to start. Workflows here:\n{names}")
            raise ArgumentMissing(msg, hint='call workflow {"action": "start", "name": "NAME"}',
                                  details={"tool": "workflow", "field": "name"})
        view = self.engine.start(args.name, unattended=self.canal.unattended)
        return _reply(view, render_start(view))

    def _advanced(self, view: AdvanceView) -> Reply:
        reply = _reply(view, render_advance(view))
        conf = view.confirmation
        if conf is None:
            return reply
        approval = self.canal.config.policy.approval
        shown = _without_next(render_advance(view), "CONFIRMATION_REQUIRED: ")
        text = "\n".join([*shown.splitlines(),
                          confirmation_text(f"step {conf.step}: {conf.reason}", conf.token, approval,
                                            f"{_RETRY} ({view.run_id})")])
        wanted = Confirmation(conf.token, approval, conf.reason)
        return Reply(text, reply.data, is_error=True, confirmation=wanted)


def _require(value: str | None, field: str, action: str, example: dict[str, str]) -> str:
    if value:
        return value
    doc = s.WorkflowArgs.model_fields[field].description
    msg = f"workflow: action \"{action}\" needs {field}. {field}: {doc}"
    raise ArgumentMissing(msg, hint=f"call workflow {json.dumps(example)}",
                          details={"tool": "workflow", "field": field})


def _without_next(text: str, *also: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(("Next: ", *also)))


def _gate_example(step: StepView | None) -> dict[str, Any]:
    if step is None:
        return {}
    required = {f.name: f"<{f.type}>" for f in step.fields if f.required}
    return required or {f.name: f"<{f.type}>" for f in step.fields}


def mcp_next(view: StartView | AdvanceView | CurrentView) -> str:
    """The next tool call for the run's state; the engine's own hint when MCP has no call for it."""
    run = view.run_id
    if view.status == "waiting_input":
        call: dict[str, Any] = {"action": "advance", "run_id": run}
        gate = _gate_example(view.step)
        if gate:
            call["gate_data"] = gate
        return f"workflow {json.dumps(call)}"
    if view.status == "ready":
        return f"workflow {json.dumps({'action': 'advance', 'run_id': run})}"
    conf = getattr(view, "confirmation", None)
    if view.status == "waiting_confirmation" and conf is not None:
        call = {"action": "advance", "run_id": run, "confirm_token": conf.token}
        return f"ask the user; if they agree: workflow {json.dumps(call)}"
    if view.status == "completed":
        return ""
    return view.next


_OWN_NEXT = ("waiting_input", "ready", "completed", "waiting_confirmation")


def _reply(view: StartView | AdvanceView | CurrentView, text: str) -> Reply:
    body = _without_next(text) if view.status in _OWN_NEXT else text
    nxt = mcp_next(view)
    if nxt and nxt != view.next:
        body += f"\nNext: {nxt}"
    failed = view.status in ("failed", "needs_attention")
    return Reply(body, {"status": "ok", **view.model_dump(mode="json")}, is_error=failed)
