"""What the engine returns: typed views for the CLI (text or ``--json``), never raw run documents.

Every view masks sensitive gate values, including where they were echoed into results or output.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from canal.core.mask import MASK, mask_exact
from canal.core.next import NextAction
from canal.workflows.model import StepDef
from canal.workflows.rundoc import RunDoc, StepRecord
from canal.workflows.templates import Context, render_body

RESULT_CLIP = 2000


class _View(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldView(_View):
    name: str
    type: str
    required: bool
    description: str
    enum: list[Any] | None = None
    default: Any = None
    pattern: str | None = None
    sensitive: bool = False


class StepView(_View):
    id: str
    type: str
    title: str
    instructions: str
    fields: list[FieldView]


class StepRunView(_View):
    id: str
    status: str
    outcome: str | None
    exit_code: int | None
    attempts: int
    output: str


class CompletedView(_View):
    id: str
    type: str
    title: str
    status: str
    gate: dict[str, Any] | None = None
    result: Any = None
    exit_code: int | None = None


class ConfirmationView(_View):
    """The one confirmation shape of every JSON result (runtime.run.result.ConfirmationView), and the step
    that waits for it; ``rerun`` is filled in by the front end."""

    step: str
    token: str
    reason: str
    rule_ids: list[str] = Field(default_factory=list)
    expires_at: str = ""
    approval: Literal["agent", "human"] = "agent"
    rerun: str = ""


class FailureView(_View):
    step: str
    code: str
    reason: str
    compensated_by: str | None = None


class StartView(_View):
    run_id: str
    workflow: str
    version: str
    definition_digest: str
    status: str
    step: StepView
    hint: str = ""
    next: list[NextAction] = Field(default_factory=list)


class AdvanceView(_View):
    run_id: str
    status: str
    accepted: list[str]
    dropped: list[str]
    ran: list[StepRunView]
    step: StepView | None
    confirmation: ConfirmationView | None
    failure: FailureView | None
    attention: str | None
    hint: str = ""
    next: list[NextAction] = Field(default_factory=list)


class CurrentView(_View):
    run_id: str
    workflow: str
    version: str
    status: str
    step: StepView | None
    completed: list[CompletedView]
    confirmation: ConfirmationView | None
    failure: FailureView | None
    attention: str | None
    hint: str = ""
    next: list[NextAction] = Field(default_factory=list)


class RunSummary(_View):
    run_id: str
    workflow: str
    version: str
    status: str
    current_step: str | None
    updated_at: str


class WorkflowSummary(_View):
    name: str
    description: str
    version: str
    steps: int
    path: str


def mask(value: Any, secrets: list[str]) -> Any:
    """Replace every occurrence of a secret inside strings of ``value`` (nested) by the mask."""
    if not secrets:
        return value
    if isinstance(value, str):
        return mask_exact(value, secrets)
    if isinstance(value, dict):
        return {key: mask(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [mask(item, secrets) for item in value]
    return value


def context_of(doc: RunDoc) -> Context:
    sensitive = frozenset((step_id, name) for step_id in doc.gate
                          for name, spec in doc.definition.step(step_id).fields.items() if spec.sensitive)
    return Context(gate=doc.gate, results=doc.results, sensitive=sensitive)


def step_view(doc: RunDoc, step: StepDef) -> StepView:
    fields = [FieldView(name=name, type=spec.type, required=spec.required, description=spec.desc,
                        enum=spec.enum, default=spec.default, pattern=spec.pattern, sensitive=spec.sensitive)
              for name, spec in step.fields.items()]
    text = mask(render_body(step.instructions, context_of(doc)), doc.sensitive_values())
    return StepView(id=step.id, type=step.type, title=step.title, instructions=text, fields=fields)


def _clip(value: Any) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= RESULT_CLIP:
        return value
    return text[:RESULT_CLIP] + f"... [{len(text)} chars; clipped: the run's show view has all of it]"


def masked_gate(doc: RunDoc, step: StepDef) -> dict[str, Any]:
    values = doc.gate.get(step.id, {})
    return {name: MASK if step.fields.get(name) and step.fields[name].sensitive else value
            for name, value in values.items()}


def completed_view(doc: RunDoc, step: StepDef, record: StepRecord, *, clip: bool = True) -> CompletedView:
    result = mask(doc.results.get(step.id), doc.sensitive_values())
    return CompletedView(
        id=step.id, type=step.type, title=step.title, status=record.status,
        gate=masked_gate(doc, step) if step.type == "interactive" else None,
        result=_clip(result) if clip else result, exit_code=record.exit_code)


def run_view(doc: RunDoc, step_id: str, record: StepRecord) -> StepRunView:
    output = mask(record.output or record.error or "", doc.sensitive_values())
    return StepRunView(id=step_id, status=record.status, outcome=record.outcome, exit_code=record.exit_code,
                       attempts=record.attempts, output=output)


def confirmation_view(doc: RunDoc) -> ConfirmationView | None:
    c = doc.confirmation
    return None if c is None else ConfirmationView(step=c.step, token=c.token,
                                                   reason=mask(c.reason, doc.sensitive_values()),
                                                   rule_ids=c.rule_ids, expires_at=c.expires_at,
                                                   approval=c.approval)


def failure_view(doc: RunDoc) -> FailureView | None:
    f = doc.failure
    return None if f is None else FailureView(step=f.step, code=f.code,
                                              reason=mask(f.reason, doc.sensitive_values()),
                                              compensated_by=f.compensated_by)
