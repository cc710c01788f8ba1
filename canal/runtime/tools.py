"""``Canal.tools`` and ``Canal.call_tool``: the project's tools (tools/*.yaml), listed, described and
called the same way by the CLI, MCP and workflow steps, with one set of error codes.

A call is validated like a gate (``prepare_call``: missing, invalid and dropped fields), then runs as an
exact argv through the whole run pipeline (policy, confirmation, sandbox, presenter, audit); values reach
the command only as whole argv elements or environment variables. The text helpers below show one
tool's fields (each front end adds its own way to call it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from canal.core.fsutil import atomic_write_text
from canal.core.next import Say
from canal.runtime.run.result import RunResult
from canal.workflows.tools import ToolDefinition, ToolMeta, ToolRegistry, prepare_call, tool_meta
from canal.workflows.tools.discover import DiscoverResult, discover
from canal.workflows.tools.errors import TOOL_RUNNER_UNAVAILABLE
from canal.workflows.tools.meta import FieldMeta

if TYPE_CHECKING:
    from canal.runtime.api import Canal
    from canal.runtime.mcpremote.listing import ServerProblem


class Tools:
    """The tools of ``canal``'s project. The folder is read at each call: a tool added (and discovered)
    while a long-lived Canal serves MCP is there for the next call."""

    def __init__(self, canal: Canal) -> None:
        self.canal = canal

    @property
    def registry(self) -> ToolRegistry:
        return ToolRegistry.from_project(self.canal.project_dir)

    def list(self) -> list[ToolDefinition]:
        return list(self.registry)

    def discover(self) -> tuple[DiscoverResult, Sequence[ServerProblem]]:
        """List every configured MCP server's tools, then regenerate the catalog (``canal discover``);
        a server that does not answer keeps its previous tools and is named with its code."""
        from canal.runtime.mcpremote.listing import list_servers

        listed, problems = list_servers(self.canal)
        result = discover(self.canal.project_dir, atomic_write_text, listed=listed,
                          servers=self.canal.config.tools.mcp_servers)
        return result, problems

    def get(self, name: str) -> ToolDefinition:
        """The tool, or ``TOOL_NOT_FOUND``."""
        return self.registry.get(name)

    def meta(self, name: str, *, required_only: bool = False) -> ToolMeta:
        """Its fields after its rules: ignored fields left out, notes and enum labels in."""
        return tool_meta(self.canal.project_dir, self.get(name), required_only=required_only)

    def call(self, name: str, args: Mapping[str, Any], *, confirm: str | None = None,
             env: Mapping[str, str] | None = None, timeout_s: float | None = None,
             unattended: bool | None = None, secrets: Sequence[str] = (),
             say: Say | None = None) -> RunResult:
        """Run tool ``name`` with ``args``: ``TOOL_NOT_FOUND``, ``TOOL_ARGS_INVALID`` or
        ``TOOL_RUNNER_UNAVAILABLE`` before anything runs, else the run's result (a refusal included)."""
        definition = self.get(name)
        if definition.mcp is not None:  # a backend's tool: its own path to the server (mcpremote.calls)
            from canal.runtime.mcpremote.calls import call_backend

            return call_backend(self.canal, definition, args, confirm=confirm, unattended=unattended,
                                secrets=secrets, say=say)
        if definition.image is not None:
            msg = (f"tool {definition.name} asks for image {definition.image!r}; per-tool images are not "
                   "supported yet. Nothing ran.")
            raise TOOL_RUNNER_UNAVAILABLE(msg, hint=f"remove image: from tools/{definition.name}.yaml, or "
                                          "use the default image", details={"tool": definition.name})
        prepared = prepare_call(definition, args)
        merged = {**(env or {}), **prepared.env}
        return self.canal.run_argv(prepared.argv, env=merged or None,
                                   timeout_s=timeout_s or definition.timeout_s, confirm=confirm,
                                   unattended=unattended, secrets=secrets, say=say)


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
