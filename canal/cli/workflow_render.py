"""``canal workflow``'s text: the run views (``canal.runtime.wfrun.text``) with the CLI's ``Next:``
line, and the lists and validation reports only the CLI shows."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from canal.cli.words import next_line, say
from canal.core.next import act
from canal.runtime.wfrun.text import advance_body, current_body, start_body
from canal.workflows.ports import EventHook
from canal.workflows.validate import Report
from canal.workflows.views import AdvanceView, CurrentView, RunSummary, StartView, WorkflowSummary


def _with_next(lines: list[str], view: StartView | AdvanceView | CurrentView) -> str:
    said = next_line(view.next, view.hint)
    return "\n".join([*lines, said] if said else lines)


def render_start(view: StartView) -> str:
    return _with_next(start_body(view), view)


def render_advance(view: AdvanceView) -> str:
    return _with_next(advance_body(view), view)


def render_current(view: CurrentView) -> str:
    return _with_next(current_body(view), view)


def render_runs(runs: list[RunSummary]) -> str:
    if not runs:
        return "no workflow runs yet; start one: canal workflow start NAME   (names: canal workflow list)"
    return "\n".join(f"{r.run_id}  {r.workflow} v{r.version}  {r.status}  step {r.current_step or '-'}  "
                     f"updated {r.updated_at}" for r in runs)


def render_list(items: list[WorkflowSummary]) -> str:
    if not items:
        return "no workflows; create one: canal workflow init NAME"
    return "\n".join(f"{w.name}: {w.description} ({w.steps} steps, v{w.version})" for w in items)


def render_validate(reports: dict[str, Report]) -> str:
    if not reports:
        return "no workflows; create one: canal workflow init NAME"
    lines: list[str] = []
    for name, r in reports.items():
        steps = len(r.definition.steps) if r.definition else 0
        lines.append(f"ok {name} ({steps} steps)" if r.ok else f"INVALID {name} ({r.root})")
        lines.extend(f"  {problem}" for problem in r.problems)
    return "\n".join(lines)


def validate_json(reports: dict[str, Report]) -> dict[str, Any]:
    bad = any(not r.ok for r in reports.values())
    return {"status": "invalid" if bad else "ok",
            "workflows": [{"name": name, "path": str(r.root), "ok": r.ok,
                           "problems": [p.as_dict() for p in r.problems]} for name, r in reports.items()]}


def step_progress(write: Callable[[str], None]) -> EventHook:
    """Shows each automated step as it starts and ends (for a person at a terminal, on stderr)."""
    began: dict[str, float] = {}

    def on_event(name: str, data: Mapping[str, Any]) -> None:
        step = str(data.get("step"))
        if name == "workflow.step.started":
            began[step] = time.monotonic()
            attempt = int(data.get("attempt") or 1)
            write(f"[step {step}] started" + (f" (attempt {attempt})" if attempt > 1 else ""))
        elif name == "workflow.step.completed":
            took = time.monotonic() - began.get(step, time.monotonic())
            write(f"[step {step}] ended: exit {data.get('exit_code')} after {took:.2f}s")
        elif name == "workflow.step.failed":
            write(f"[step {step}] failed: {data.get('code')}")
        elif name == "workflow.step.confirmation_required":
            write(f"[step {step}] waits for confirmation")
        elif name == "workflow.step.retry":
            write(f"[step {step}] retrying (attempt {data.get('attempt')}, last status {data.get('status')})")

    return on_event


def view_json(view: BaseModel) -> dict[str, Any]:
    """``--json`` of a run's view; a confirmation names the command that gives its token."""
    data = view.model_dump()
    confirmation = data.get("confirmation")
    if confirmation:
        again = act("workflow.advance", run_id=data.get("run_id"), confirm=confirmation["token"])
        confirmation["rerun"] = say(again)
    return data
