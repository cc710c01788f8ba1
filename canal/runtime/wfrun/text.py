"""Workflow views as text for an agent: the run, its step, fields to collect, what ran.

Both front ends show these bodies and add their own ``Next:`` line from the view's next actions (a
shell command for the CLI, a tool call for MCP). Sensitive values arrive already masked by the
engine's views; nothing here unmasks.
"""

from __future__ import annotations

import json
from typing import Any

from canal.workflows.views import (
    AdvanceView,
    CompletedView,
    CurrentView,
    FieldView,
    StartView,
    StepRunView,
    StepView,
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


def tail_lines(view: AdvanceView | CurrentView) -> list[str]:
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
    return lines


def start_body(view: StartView) -> list[str]:
    lines = [f"run {view.run_id} started: {view.workflow} v{view.version} ({view.definition_digest[:19]}), "
             f"status {view.status}"]
    return lines + step_lines(view.step)


def advance_body(view: AdvanceView) -> list[str]:
    lines = [f"run {view.run_id}: {view.status}"]
    if view.accepted:
        lines.append("accepted: " + ", ".join(view.accepted))
    if view.dropped:
        lines.append("dropped (not in the gate): " + ", ".join(view.dropped))
    lines += ran_lines(view.ran)
    if view.step is not None:
        lines += step_lines(view.step)
    return lines + tail_lines(view)


def completed_line(c: CompletedView) -> str:
    code = "" if c.exit_code is None else f" (exit {c.exit_code})"
    line = f"  {c.id} [{c.type}]: {c.status}{code}"
    if c.gate is not None:
        line += f"; gate {_compact(c.gate)}"
    if c.result not in (None, ""):
        line += f"; result {_compact(c.result)}"
    return line


def current_body(view: CurrentView) -> list[str]:
    lines = [f"run {view.run_id} ({view.workflow} v{view.version}): {view.status}"]
    if view.completed:
        lines.append("completed steps:")
        lines += [completed_line(c) for c in view.completed]
    if view.step is not None:
        lines.append("current " + "\n".join(step_lines(view.step)))
    return lines + tail_lines(view)
