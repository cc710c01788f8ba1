"""The tool table: names, descriptions, argument models and hints, and the step that turns raw
arguments into a validated model or an error that names the field and repeats its constraint."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from canal.mcp import descriptions as d
from canal.mcp import schemas as s
from canal.mcp import tasks as t
from canal.mcp.args import SANDBOX_WORKDIR, in_workdir
from canal.mcp.errors import ARGUMENT_INVALID, ARGUMENT_MISSING, ARGUMENT_UNKNOWN, McpToolError


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    args: type[s.ToolArgs]
    example: Mapping[str, Any]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False

    def to_mcp(self, workdir: str = SANDBOX_WORKDIR) -> types.Tool:
        """The tool as listed; ``workdir``: the project's folder in the sandbox, named in the texts."""
        hints = types.ToolAnnotations(title=self.title, read_only_hint=self.read_only,
                                      destructive_hint=self.destructive, idempotent_hint=self.idempotent,
                                      open_world_hint=False)
        schema = input_schema(self.args)
        if workdir != SANDBOX_WORKDIR:
            schema = json.loads(in_workdir(json.dumps(schema), workdir))
        return types.Tool(name=self.name, title=self.title, description=in_workdir(self.description, workdir),
                          input_schema=schema, annotations=hints)

    def example_call(self) -> str:
        return f"{self.name} {json.dumps(dict(self.example))}"


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("run_command", "Run a shell command in the sandbox", d.RUN_COMMAND, s.RunCommandArgs,
             {"command": "ls -la"}, destructive=True),
    ToolSpec("view", "View a file or folder", d.VIEW, s.ViewArgs, {"path": "README.md", "range": "1:40"},
             read_only=True, idempotent=True),
    ToolSpec("edit", "Edit a file (exact replace, returns the diff)", d.EDIT, s.EditArgs,
             {"path": "src/app.py", "old": "return 1", "new": "return 2"}),
    ToolSpec("remove", "Move files to the trash (reversible)", d.REMOVE, s.RemoveArgs, {"path": "build.log"}),
    ToolSpec("restore", "Restore a file from the trash", d.RESTORE, s.RestoreArgs,
             {"trash_id": "t20250101T120000Z-3f9a2c"}),
    ToolSpec("write", "Write a whole file (a replaced one goes to the trash)", d.WRITE, s.WriteArgs,
             {"path": "notes/todo.md", "content": "- write the tests\n"}),
    ToolSpec("trash", "List the project's trash", d.TRASH, s.TrashArgs, {}, read_only=True, idempotent=True),
    ToolSpec("workflow", "List, describe, start, advance or inspect workflows", d.WORKFLOW, s.WorkflowArgs,
             {"action": "list"}),
    ToolSpec("list_capabilities", "List the project's tools and workflows", d.LIST_CAPABILITIES,
             s.ListCapabilitiesArgs,
             {}, read_only=True, idempotent=True),
    ToolSpec("describe_capability", "Show one project tool's fields", d.DESCRIBE_CAPABILITY,
             s.DescribeCapabilityArgs, {"name": "list_files"}, read_only=True, idempotent=True),
    ToolSpec("call_capability", "Run one project tool", d.CALL_CAPABILITY, s.CallCapabilityArgs,
             {"name": "list_files", "arguments": {"path": "src"}}, destructive=True),
    ToolSpec("checkpoints", "List the workspace's newest checkpoints", d.CHECKPOINTS, s.CheckpointsArgs,
             {"limit": 5},
             read_only=True, idempotent=True),
    ToolSpec("diff", "Show what changed since a checkpoint", d.DIFF, s.DiffArgs, {}, read_only=True,
             idempotent=True),
    ToolSpec("undo", "Put the project back to a checkpoint", d.UNDO, s.UndoArgs, {}),
    ToolSpec("fork", "Start an isolated copy of the project (autonomous)", d.FORK, s.ForkArgs,
             {"name": "try-upgrade"}),
    ToolSpec("changes", "Show what a fork changed", d.CHANGES, s.ForkNameArgs, {"name": "try-upgrade"},
             read_only=True, idempotent=True),
    ToolSpec("apply", "Apply a fork's changes to the project (confirmed)", d.APPLY, s.ApplyArgs,
             {"name": "try-upgrade"}, destructive=True),
    ToolSpec("discard", "Remove a fork", d.DISCARD, s.ForkNameArgs, {"name": "try-upgrade"},
             destructive=True),
    ToolSpec("task_start", "Start a long command as a background task", t.TASK_START, t.TaskStartArgs,
             {"command": "pytest -q", "name": "tests"}, destructive=True),
    ToolSpec("task_list", "List background tasks", t.TASK_LIST, t.TaskListArgs, {}, read_only=True,
             idempotent=True),
    ToolSpec("task_show", "Show a background task's output so far", t.TASK_SHOW, t.TaskShowArgs,
             {"task_id": "tests"}, read_only=True, idempotent=True),
    ToolSpec("task_wait", "Wait for a background task to end", t.TASK_WAIT, t.TaskWaitArgs,
             {"task_id": "tests", "timeout": 60}, read_only=True),
    ToolSpec("task_cancel", "Stop a background task and everything it started", t.TASK_CANCEL,
             t.TaskIdArgs, {"task_id": "tests"}, destructive=True),
)
BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}


def input_schema(model: type[s.ToolArgs]) -> dict[str, Any]:
    """The model's JSON schema without pydantic's titles and null branches (less for the model to read)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        branches = prop.pop("anyOf", None)
        if branches is not None:
            kept = [b for b in branches if b.get("type") != "null"]
            prop.update(kept[0] if len(kept) == 1 else {"anyOf": kept})
        if prop.get("default", 0) is None:
            del prop["default"]
    clean: dict[str, Any] = _json_schema_keywords(schema)
    return clean


# pydantic writes a bound it cannot put on a custom schema under its own names (gt, le): clients only
# read JSON Schema's
_BOUNDS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}


def _json_schema_keywords(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema_keywords(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        name = str(key)
        if name in ("properties", "$defs"):  # names, not keywords
            out[name] = {prop: _json_schema_keywords(sub) for prop, sub in value.items()}
        else:
            keep = name in ("default", "enum", "const")
            out[_BOUNDS.get(name, name)] = value if keep else _json_schema_keywords(value)
    return out


def parse_args(spec: ToolSpec, raw: Mapping[str, Any] | None, *,
               workdir: str = SANDBOX_WORKDIR) -> s.ToolArgs:
    """Validated arguments, or the first problem as ARGUMENT_MISSING / ARGUMENT_UNKNOWN / ARGUMENT_INVALID.
    ``workdir``: the project's folder in the sandbox (canal.yaml's ``sandbox.workdir``), whose paths
    become project paths."""
    try:
        return spec.args.model_validate(dict(raw or {}), context={"workdir": workdir})
    except ValidationError as exc:
        raise _argument_error(spec, exc) from None


def _field_doc(spec: ToolSpec, name: str) -> str:
    field = spec.args.model_fields.get(name)
    return field.description or "" if field is not None else ""


def _accepted(spec: ToolSpec) -> str:
    required = [n for n, f in spec.args.model_fields.items() if f.is_required()]
    optional = [n for n, f in spec.args.model_fields.items() if not f.is_required()]
    parts = [f"required: {', '.join(required)}" if required else "required: none"]
    if optional:
        parts.append(f"optional: {', '.join(optional)}")
    return "; ".join(parts)


def _argument_error(spec: ToolSpec, exc: ValidationError) -> McpToolError:
    problems = exc.errors(include_url=False)
    first = problems[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    hint = f"call {spec.example_call()}"
    details = {"tool": spec.name,
               "problems": [{"field": ".".join(str(p) for p in e["loc"]), "type": e["type"],
                             "message": e["msg"]} for e in problems]}
    if first["type"] == "missing":
        msg = f"{spec.name}: the argument {field} is missing. {field}: {_field_doc(spec, field)}"
        return ARGUMENT_MISSING(msg, hint=hint, details=details)
    if first["type"] == "extra_forbidden":
        msg = f"{spec.name}: unknown argument {field}. {spec.name} takes {_accepted(spec)}."
        return ARGUMENT_UNKNOWN(msg, hint=hint, details=details)
    got = json.dumps(first.get("input"), default=str)
    if len(got) > 80:
        got = got[:77] + "..."
    lines = [f"{spec.name}: {field or 'arguments'} is invalid: {first['msg']} (got {got}).",
             f"{field}: {_field_doc(spec, field)}" if field else f"{spec.name} takes {_accepted(spec)}."]
    lines.extend(f"also: {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in problems[1:])
    return ARGUMENT_INVALID("\n".join(lines), hint=hint, details=details)
