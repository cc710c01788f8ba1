"""The next command for the agent, for each state a run can be in."""

from __future__ import annotations

import json
import shlex

from canal.workflows.rundoc import RunDoc


def _example_gate(doc: RunDoc) -> str:
    step = doc.definition.step(doc.current_step) if doc.current_step else None
    if step is None or not step.fields:
        return ""
    example = {name: f"<{spec.type}>" for name, spec in step.fields.items() if spec.required}
    if not example:
        example = {name: f"<{spec.type}>" for name, spec in step.fields.items()}
    return " --gate-data " + shlex.quote(json.dumps(example))


def next_hint(doc: RunDoc) -> str:
    run = doc.run_id
    status = doc.status
    if status == "waiting_input":
        return f"canal workflow advance {run}{_example_gate(doc)}"
    if status == "ready":
        return f"canal workflow advance {run}   (runs step {doc.current_step})"
    if status == "waiting_confirmation" and doc.confirmation is not None:
        return f"ask the user, then: canal workflow advance {run} --confirm {doc.confirmation.token}"
    if status == "running":
        return f"another process runs step {doc.current_step}; check later: canal workflow current {run}"
    if status == "needs_attention":
        return (f"check whether step {doc.current_step} took effect, then either "
                f"canal workflow advance {run} --retry   or   canal workflow abort {run}")
    if status == "failed":
        return f"see what failed: canal workflow show {run}; start again: canal workflow start {doc.workflow}"
    return ""
