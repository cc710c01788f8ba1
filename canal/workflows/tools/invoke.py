"""From a tool and an agent's arguments to what runs: validated values, argv and environment.

Validation is the gate's (``validate_fields``): missing required fields are rejected with their list.
Values become whole argv elements or environment variables, never part of a shell string. A value
that fills a whole argv element (a string, or a number such as ``-5`` as its text) may not start with
``-`` (it would be read as an option) unless the template sits after a literal ``--``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from canal.core.next import act
from canal.workflows.fields import ValidationOutcome, validate_fields
from canal.workflows.tools import templates
from canal.workflows.tools.errors import TOOL_ARGS_INVALID, TOOL_RESULT_INVALID, ToolError
from canal.workflows.tools.model import PARAMS_ENV, ToolDefinition


@dataclass(frozen=True)
class PreparedCall:
    argv: list[str]
    env: dict[str, str]
    values: dict[str, Any]
    dropped: list[str]


def reject_args(tool: ToolDefinition, outcome: ValidationOutcome,
            extra: list[tuple[str, str]]) -> ToolError:
    parts: list[str] = []
    if outcome.missing:
        listed = ", ".join(f"{n} ({d})" if d else n for n, d in outcome.missing)
        parts.append(f"missing required fields: {listed}")
    problems = [(p.field, p.problem) for p in outcome.errors] + extra
    if problems:
        parts.append("invalid values: " + "; ".join(f"{f}: {p}" for f, p in problems))
    return TOOL_ARGS_INVALID(
        f"tool {tool.name}: " + ". ".join(parts) + ". Nothing was run.",
        next=act("tool.meta", name=tool.name),
        details={"tool": tool.name,
                 "missing": [{"field": n, "desc": d} for n, d in outcome.missing],
                 "errors": [{"field": f, "problem": p} for f, p in problems],
                 "dropped": outcome.dropped},
    )


def _value_problems(tool: ToolDefinition, values: Mapping[str, Any]) -> list[tuple[str, str]]:
    problems = [(n, "contains a NUL byte") for n, v in values.items() if "\0" in templates.as_text(v)]
    after_dashdash = False
    for element in tool.run or []:
        name = templates.whole(element)
        value = values.get(name) if name else None
        if name and value is not None and templates.as_text(value).startswith("-") and not after_dashdash:
            problems.append((name, "must not start with '-' (it would be read as an option)"))
        after_dashdash = after_dashdash or element == "--"
    return problems


def _argv(tool: ToolDefinition, values: Mapping[str, Any]) -> list[str]:
    if tool.script is not None:
        return [tool.script]
    rendered = (templates.render(element, values) for element in tool.run or [])
    # An element naming an optional parameter that has no value is left out whole.
    return [element for element in rendered if element is not None]


def _env(tool: ToolDefinition, values: Mapping[str, Any]) -> dict[str, str]:
    env = {k: v for k, v in ((k, templates.render(t, values)) for k, t in tool.env.items()) if v is not None}
    if tool.script is not None:
        env[PARAMS_ENV] = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return env


def prepare_call(tool: ToolDefinition, args: Mapping[str, Any]) -> PreparedCall:
    """Validate ``args`` like a gate and build what runs; raises ``TOOL_ARGS_INVALID`` with each problem."""
    outcome = validate_fields(tool.parameters, args)
    extra = _value_problems(tool, outcome.values)
    if not outcome.ok or extra:
        raise reject_args(tool, outcome, extra)
    return PreparedCall(argv=_argv(tool, outcome.values), env=_env(tool, outcome.values),
                        values=outcome.values, dropped=outcome.dropped)


def build_argv(tool: ToolDefinition, params: Mapping[str, Any]) -> list[str]:
    """The argv a call runs (after the same validation as ``prepare_call``)."""
    return prepare_call(tool, params).argv


def parse_result(tool: ToolDefinition, stdout: str) -> Any:
    """``result: json`` parses stdout (an error if it is not JSON); ``result: text`` returns it as is."""
    if tool.result == "text":
        return stdout
    try:
        return json.loads(stdout)
    except ValueError as exc:
        msg = f"tool {tool.name} declares result: json but its stdout is not JSON ({exc})"
        raise TOOL_RESULT_INVALID(msg,
                                hint=f"check the tool's command in tools/{tool.name}.yaml",
                                details={"tool": tool.name, "stdout_head": stdout[:200]}) from None
