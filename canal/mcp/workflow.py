"""The ``workflow`` tool: start, advance and inspect runs of the workflow engine, on the server's Canal.

The run views are the shared text bodies (``canal.runtime.wfrun.text``); the ``Next:`` line is MCP's
own, worded from the view's next actions as a ``workflow`` tool call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from canal.core.next import act, say_all
from canal.mcp import schemas as s
from canal.mcp.args import coerce_fields
from canal.mcp.errors import ARGUMENT_MISSING
from canal.mcp.operations import Confirmation, Reply, confirmation_text, rerun_words
from canal.mcp.words import Words
from canal.runtime.api import Canal
from canal.runtime.wfrun.text import advance_body, current_body, start_body
from canal.workflows.fields import FieldSpec
from canal.workflows.views import AdvanceView, CurrentView, StartView, WorkflowSummary

TOOL = "workflow"


class WorkflowTool:
    def __init__(self, canal: Canal) -> None:
        self.canal = canal

    def __call__(self, args: s.WorkflowArgs) -> Reply:
        if args.action == "list":
            return self.listed()
        if args.action == "describe":
            return self.describe(_require(args.name, "name", "describe",
                                          {"action": "describe", "name": "NAME"}))
        if args.action == "start":
            return self.start(args)
        run_id = _require(args.run_id, "run_id", args.action,
                          {"action": args.action, "run_id": "r_..."})
        engine = self.canal.workflows
        if args.action == "current":
            current = engine.current(run_id)
            return _reply(current, current_body(current))
        gate = self._typed_gate(run_id, args.gate_data)
        view = engine.advance(run_id, gate, confirm=args.confirm_token)
        return self._advanced(view)

    def _typed_gate(self, run_id: str, gate_data: dict[str, Any] | None) -> dict[str, Any] | None:
        """Numbers and booleans a model sent as text, in the current step's declared field types."""
        if not gate_data:
            return gate_data
        step = self.canal.workflows.current(run_id).step
        kinds = {f.name: f.type for f in step.fields} if step is not None else {}
        return coerce_fields(gate_data, kinds)

    def listed(self) -> Reply:
        items = self.canal.workflows.list_workflows()
        lines = [_names(items)]
        if items:
            lines.append(f"Next: {Words(TOOL)(act('workflow.start', name=items[0].name))}   (or describe one "
                         "first: action \"describe\")")
        return Reply("\n".join(lines), {"status": "ok", "workflows": [_public(w) for w in items]})

    def describe(self, name: str) -> Reply:
        definition = self.canal.workflows.definition(name)
        meta = definition.meta
        lines = [f"{meta.name} (version {meta.version}): {meta.description}",
                 "steps, in order (automated ones run in the sandbox; interactive ones ask you for their "
                 "fields; notifications only inform):"]
        for number, step in enumerate(definition.main_steps(), 1):
            lines.append(f"  {number}. {step.id} ({step.type}){': ' + step.title if step.title else ''}")
            lines.extend(f"       {line}" for line in field_lines(step.fields))
        lines.append(f"Next: {Words(TOOL)(act('workflow.start', name=meta.name))}")
        data = {"status": "ok", "name": meta.name, "version": meta.version, "description": meta.description,
                "steps": [{"id": st.id, "type": st.type, "title": st.title,
                           "fields": {k: f.model_dump(mode="json") for k, f in st.fields.items()}}
                          for st in definition.main_steps()]}
        return Reply("\n".join(lines), data)

    def start(self, args: s.WorkflowArgs) -> Reply:
        engine = self.canal.workflows
        if not args.name:
            msg = (f"workflow: action \"start\" needs name, the workflow to start. Workflows here:\n"
                   f"{_names(engine.list_workflows())}")
            raise ARGUMENT_MISSING(msg, hint='call workflow {"action": "start", "name": "NAME"}',
                                  details={"tool": TOOL, "field": "name"})
        view = engine.start(args.name, unattended=self.canal.unattended)
        return _reply(view, start_body(view))

    def _advanced(self, view: AdvanceView) -> Reply:
        conf = view.confirmation
        if conf is None:
            return _reply(view, advance_body(view))
        approval = self.canal.config.policy.approval
        shown = [ln for ln in advance_body(view) if not ln.startswith("CONFIRMATION_REQUIRED: ")]
        retry = f"call workflow again with action \"advance\", the same run_id ({view.run_id})"
        text = "\n".join([*shown, confirmation_text(f"step {conf.step}: {conf.reason}", conf.token, approval,
                                                    retry)])
        data = {"status": "ok", **view.model_dump(mode="json")}
        data["confirmation"]["rerun"] = rerun_words(retry, conf.token)
        return Reply(text, data, is_error=True, confirmation=Confirmation(conf.token, approval, conf.reason))


def _names(items: list[WorkflowSummary]) -> str:
    return "\n".join(f"{w.name}: {w.description}" for w in items) or "(none in this project)"


def _public(summary: WorkflowSummary) -> dict[str, Any]:
    """A summary without its host folder (nothing an agent reads names a host path)."""
    return summary.model_dump(mode="json", exclude={"path"})


def field_lines(fields: Mapping[str, FieldSpec]) -> list[str]:
    """One line per gate field: name (* when required), type, default or allowed values, description."""
    lines = []
    for name, spec in fields.items():
        parts = [f"{name}{'*' if spec.required else ''} {spec.type}"]
        if spec.enum:
            parts.append(f"one of {', '.join(map(str, spec.enum))}")
        if spec.default is not None:
            parts.append(f"default {spec.default}")
        if spec.pattern:
            parts.append(f"pattern {spec.pattern}")
        lines.append("field " + ", ".join(parts) + (f": {spec.desc}" if spec.desc else ""))
    return lines


def _require(value: str | None, field: str, action: str, example: dict[str, str]) -> str:
    if value:
        return value
    doc = s.WorkflowArgs.model_fields[field].description
    msg = f"workflow: action \"{action}\" needs {field}. {field}: {doc}"
    raise ARGUMENT_MISSING(msg, hint=f"call workflow {json.dumps(example)}",
                          details={"tool": TOOL, "field": field})


def next_words(view: StartView | AdvanceView | CurrentView) -> str:
    """The ``Next:`` sentence for a view, as MCP says it ('' when the run needs nothing more)."""
    return say_all(view.next, Words(TOOL), lead=view.hint)


def _reply(view: StartView | AdvanceView | CurrentView, lines: list[str]) -> Reply:
    said = next_words(view)
    text = "\n".join([*lines, f"Next: {said}"] if said else lines)
    failed = view.status in ("failed", "needs_attention")
    return Reply(text, {"status": "ok", **view.model_dump(mode="json")}, is_error=failed)
