"""What the agent does next, for each state a run can be in: prose that holds for every reader, and
next actions as data (``canal.core.next``) that each front end words in its own way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from canal.core.next import NextAction, act
from canal.workflows.rundoc import RunDoc


@dataclass(frozen=True)
class Next:
    lead: str = ""  # prose before the actions ("ask the user")
    actions: list[NextAction] = field(default_factory=list)  # alternatives


def example_gate(doc: RunDoc) -> dict[str, Any] | None:
    """Placeholders for the current step's fields (the required ones, or all when none is)."""
    step = doc.definition.step(doc.current_step) if doc.current_step else None
    if step is None or not step.fields:
        return None
    example = {name: f"<{spec.type}>" for name, spec in step.fields.items() if spec.required}
    return example or {name: f"<{spec.type}>" for name, spec in step.fields.items()}


def next_for(doc: RunDoc) -> Next:
    run, status = doc.run_id, doc.status
    if status == "waiting_input":
        return Next(actions=[act("workflow.advance", run_id=run, gate=example_gate(doc))])
    if status == "ready":
        return Next(actions=[act("workflow.advance", f"runs step {doc.current_step}", run_id=run)])
    if status == "waiting_confirmation" and doc.confirmation is not None:
        return Next("ask the user", [act("workflow.advance", run_id=run, confirm=doc.confirmation.token)])
    if status == "running":
        return Next(f"another process runs step {doc.current_step}; check later",
                    [act("workflow.current", run_id=run)])
    if status == "needs_attention":
        return Next(f"check whether step {doc.current_step} took effect",
                    [act("workflow.advance", "to retry it", run_id=run, retry=True),
                     act("workflow.abort", "to stop the run", run_id=run)])
    if status == "failed":
        return Next(actions=[act("workflow.show", "see what failed", run_id=run),
                             act("workflow.start", "start again", name=doc.workflow)])
    return Next()
