"""Text views of workflow runs for ``canal workflow``: what an agent reads, one screen at a time.

Every view ends with ``Next:`` and the command to run. Sensitive values arrive already masked by the
engine's views; nothing here unmasks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from canal.workflows.ports import EventHook
from canal.workflows.validate import Report
from canal.workflows.views import (
    AdvanceView,
    CompletedView,
    CurrentView,
    FieldView,
    RunSummary,
    StartView,
    StepRunView,
    StepView,
    WorkflowSummary,
)


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _indent(text: str, pad: str = "    ") -> list[str]:
    return [pad + line for line in text.rstrip("\n").splitlines()]


def field_line(f: FieldView) -> str:
    head = f"  {f.name}{'*' if f.required else ''} {f.type}{', sensitive' if f.sensitive else ''}"
    extras: list[str] = []
    if f.enum is not None:
        extras.append("one of " + "|".join(str(v) for v in f.enum))
    if f.default is not None:
        extras.append(f"default {json.dumps(f.default)}")
    if f.pattern:
        extras.append(f"pattern {f.pattern}")
    desc = f": {f.description}" if f.description else ""
    return head + desc + (f" ({'; '.join(extras)})" if extras else "")


def step_lines(step: StepView) -> list[str]:
    title = f": {step.title}" if step.title else ""
    lines = [f"step {step.id} ({step.type}){title}"]
    if step.instructions.strip():
        lines.extend(_indent(step.instructions, "  "))
    if step.fields:
        lines.append("fields to collect (* required):")
        lines.extend(field_line(f) for f in step.fields)
    return lines


def ran_lines(ran: list[StepRunView]) -> list[str]:
    ran = [r for r in ran if r.status != "awaiting_confirmation"]  # nothing ran: the tail says why
    lines = ["ran:"] if ran else []
    for r in ran:
        code = "" if r.exit_code is None else f", exit {r.exit_code}"
        lines.append(f"  {r.id}: {r.status} ({r.outcome or '-'}{code}, attempt {r.attempts})")
        lines.extend(_indent(r.output) if r.output.strip() else [])
    return lines


def _tail(view: AdvanceView | CurrentView) -> list[str]:
    lines: list[str] = []
    if view.confirmation is not None:
        c = view.confirmation
        lines.append(f"CONFIRMATION_REQUIRED: step {c.step} waits for confirmation ({c.reason}). "
                     f"Nothing was run. Token: {c.token}")
    if view.failure is not None:
        f = view.failure
        comp = f"; compensated by {f.compensated_by}" if f.compensated_by else ""
        lines.append(f"FAILED: step {f.step} ({f.code}): {f.reason}{comp}")
    if view.attention:
        lines.append(f"NEEDS ATTENTION: {view.attention}")
    if view.next:
        lines.append(f"Next: {view.next}")
    return lines


def render_start(view: StartView) -> str:
    lines = [f"run {view.run_id} started: {view.workflow} v{view.version} ({view.definition_digest[:19]}), "
             f"status {view.status}"]
    lines += step_lines(view.step)
    lines.append(f"Next: {view.next}")
    return "\n".join(lines)


def render_advance(view: AdvanceView) -> str:
    lines = [f"run {view.run_id}: {view.status}"]
    if view.accepted:
        lines.append("accepted: " + ", ".join(view.accepted))
    if view.dropped:
        lines.append("dropped (not in the gate): " + ", ".join(view.dropped))
    lines += ran_lines(view.ran)
    if view.step is not None:
        lines += step_lines(view.step)
    return "\n".join(lines + _tail(view))


def completed_line(c: CompletedView) -> str:
    code = "" if c.exit_code is None else f" (exit {c.exit_code})"
    line = f"  {c.id} [{c.type}]: {c.status}{code}"
    if c.gate is not None:
        line += f"; gate {_compact(c.gate)}"
    if c.result not in (None, ""):
        line += f"; result {_compact(c.result)}"
    return line


def render_current(view: CurrentView) -> str:
    lines = [f"run {view.run_id} ({view.workflow} v{view.version}): {view.status}"]
    if view.completed:
        lines.append("completed steps:")
        lines += [completed_line(c) for c in view.completed]
    if view.step is not None:
        lines.append("current " + "\n".join(step_lines(view.step)))
    return "\n".join(lines + _tail(view))


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
