"""The project's tools (tools/*.yaml) as the front ends show them: one tool's fields as text (both front
ends add their own way to call it), and the errors of running one."""

from __future__ import annotations

import json

from canal.core.errors import CanalError
from canal.workflows.tools import ToolMeta
from canal.workflows.tools.meta import FieldMeta


class ToolRunnerUnavailable(CanalError):
    """The tool asks for something Canal cannot run it with yet (a per-tool image)."""

    code = "TOOL_RUNNER_UNAVAILABLE"


def field_line(f: FieldMeta) -> str:
    head = f"  {f.name}{'*' if f.required else ''} {f.type}{', sensitive' if f.sensitive else ''}"
    extras: list[str] = []
    if f.default is not None:
        extras.append(f"default {json.dumps(f.default)}")
    if f.enum is not None:
        extras.append("one of " + "|".join(str(v) for v in f.enum))
    if f.choices:
        extras.append("values " + ", ".join(f"{c.value}={c.label}" for c in f.choices))
    if f.pattern:
        extras.append(f"pattern {f.pattern}")
    extras.extend(f.notes)
    desc = f": {f.desc}" if f.desc else ""
    return head + desc + (f" ({'; '.join(extras)})" if extras else "")


def meta_lines(meta: ToolMeta) -> list[str]:
    """What the tool does, its result, its fields after its rules, and its notes."""
    lines = [f"{meta.name}: {meta.description}",
             f"result: {meta.result} | idempotent: {'yes' if meta.idempotent else 'no'}",
             "fields (* required):" if meta.fields else "fields: none"]
    lines.extend(field_line(f) for f in meta.fields)
    lines.extend(f"note: {n}" for n in meta.notes)
    return lines


def example_args(meta: ToolMeta) -> dict[str, str]:
    """Placeholders for the fields a call must supply."""
    return {f.name: f"<{f.type}>" for f in meta.fields if f.required}
