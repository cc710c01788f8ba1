"""The project's own tools (tools/*.yaml) behind three MCP entries, so hundreds of them cost three
lines in the model's tool list: list (one line each), describe (one tool's fields), call."""

from __future__ import annotations

import json
from typing import Any

from canal.runtime.api import Canal
from canal.runtime.mcp import schemas as s
from canal.runtime.mcp.args import coerce_fields
from canal.runtime.mcp.operations import Reply, run_reply
from canal.runtime.mcp.words import Words
from canal.runtime.tools import ToolRunnerUnavailable, example_args, meta_lines
from canal.workflows.tools import ToolRegistry, prepare_call, tool_meta
from canal.workflows.tools.model import ToolDefinition


def _registry(canal: Canal) -> ToolRegistry:
    # Read on each call: the agent may add a tool with discover between two calls.
    return ToolRegistry.from_project(canal.project_dir)


def _matches(tool: ToolDefinition, words: list[str]) -> bool:
    hay = f"{tool.name} {tool.name.replace('_', ' ')} {tool.description}".lower()
    return all(w in hay for w in words)


def list_capabilities(canal: Canal, args: s.ListCapabilitiesArgs) -> Reply:
    registry = _registry(canal)
    words = (args.query or "").lower().split()
    found = [t for t in registry if _matches(t, words)]
    data: dict[str, Any] = {"status": "ok", "tools": [{"name": t.name, "description": t.description}
                                                        for t in found]}
    if not len(registry):
        return Reply("no project tools: this project has no tools/*.yaml. Use run_command for shell "
                     "commands.", data)
    if not found:
        names = ", ".join(registry.names())
        return Reply(f"no tool matches {args.query!r}. All tools: {names}", data)
    lines = [f"{t.name}: {t.description}" for t in found]
    lines.append("Next: describe_capability {\"name\": NAME} for its fields, then call_capability.")
    return Reply("\n".join(lines), data)


def describe_capability(canal: Canal, args: s.DescribeCapabilityArgs) -> Reply:
    definition = _registry(canal).get(args.name)
    meta = tool_meta(canal.project_dir, definition)
    lines = meta_lines(meta)
    example = example_args(meta)
    lines.append(f"call: call_capability {json.dumps({'name': meta.name, 'arguments': example})}")
    return Reply("\n".join(lines), {"status": "ok", "tool": meta.model_dump(exclude={"version"})})


def call_capability(canal: Canal, args: s.CallCapabilityArgs) -> Reply:
    """Validated like a gate, then the same pipeline as a command: policy, confirmation, sandbox, audit."""
    definition = _registry(canal).get(args.name)
    kinds = {name: spec.type for name, spec in definition.parameters.items()}
    prepared = prepare_call(definition, coerce_fields(args.arguments, kinds))
    if definition.image is not None:
        msg = f"tool {definition.name} asks for image {definition.image!r}; per-tool images are not wired yet"
        raise ToolRunnerUnavailable(msg, hint="remove image: from the tool, or use the default image")
    result = canal.run_argv(prepared.argv, env=prepared.env or None, timeout_s=definition.timeout_s,
                            confirm=args.confirm_token, say=Words("call_capability"))
    return run_reply(result, "call call_capability again with the same name and arguments")
