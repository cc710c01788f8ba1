"""The project's own tools (tools/*.yaml) behind three MCP entries, so hundreds of them cost three
lines in the model's tool list: list (one line each), describe (one tool's fields), call."""

from __future__ import annotations

import json
from typing import Any

from canal.mcp import schemas as s
from canal.mcp.args import coerce_fields
from canal.mcp.operations import Reply, run_reply
from canal.mcp.words import Words
from canal.runtime.api import Canal
from canal.runtime.tools import example_args, meta_lines
from canal.workflows.tools import ToolRegistry
from canal.workflows.tools.model import ToolDefinition


def _registry(canal: Canal) -> ToolRegistry:
    return canal.tools.registry  # read at each call: a tool may have been added since the last one


def _matches(tool: ToolDefinition, words: list[str]) -> bool:
    hay = f"{tool.name} {tool.name.replace('_', ' ')} {tool.description}".lower()
    return all(w in hay for w in words)


def list_capabilities(canal: Canal, args: s.ListCapabilitiesArgs) -> Reply:
    registry = _registry(canal)
    words = (args.query or "").lower().split()
    found = [t for t in registry if _matches(t, words)]
    flows = [w for w in canal.workflows.list_workflows()
             if all(x in f"{w.name} {w.description}".lower() for x in words)]
    data: dict[str, Any] = {"status": "ok", "tools": [{"name": t.name, "description": t.description}
                                                        for t in found],
                            "workflows": [{"name": w.name, "description": w.description} for w in flows]}
    lines = _tool_lines(registry, found, args.query)
    if flows:
        lines.append("workflows (a fixed sequence of steps: workflow {\"action\": \"describe\", \"name\": "
                     "NAME} shows them, then action \"start\"):")
        lines.extend(f"  {w.name}: {w.description}" for w in flows)
    return Reply("\n".join(lines), data)


def _tool_lines(registry: ToolRegistry, found: list[ToolDefinition], query: str | None) -> list[str]:
    if not len(registry):
        return ["no project tools: this project has no tools/*.yaml. Use run_command for shell commands."]
    if not found:
        return [f"no tool matches {query!r}. All tools: {', '.join(registry.names())}"]
    return [*(f"{t.name}: {t.description}" for t in found),
            "Next: describe_capability {\"name\": NAME} for its fields, then call_capability."]


def describe_capability(canal: Canal, args: s.DescribeCapabilityArgs) -> Reply:
    meta = canal.tools.meta(args.name)
    lines = meta_lines(meta)
    example = example_args(meta)
    lines.append(f"call: call_capability {json.dumps({'name': meta.name, 'arguments': example})}")
    return Reply("\n".join(lines), {"status": "ok", "tool": meta.model_dump(exclude={"version"})})


def call_capability(canal: Canal, args: s.CallCapabilityArgs) -> Reply:
    """Validated like a gate, then the same pipeline as a command: policy, confirmation, sandbox, audit."""
    kinds = {name: spec.type for name, spec in canal.tools.get(args.name).parameters.items()}
    result = canal.call_tool(args.name, coerce_fields(args.arguments, kinds), confirm=args.confirm_token,
                             say=Words("call_capability"))
    return run_reply(result, "call call_capability again with the same name and arguments")
