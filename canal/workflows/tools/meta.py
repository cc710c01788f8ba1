"""What ``tool meta`` shows: a tool's fields after its rules (ignored fields gone, notes and enums in)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from canal.workflows.fields import FieldSpec, FieldType
from canal.workflows.tools.extract import auto_rules
from canal.workflows.tools.layout import refuse_symlink, rules_path
from canal.workflows.tools.model import ToolDefinition
from canal.workflows.tools.registry import display_path
from canal.workflows.tools.rules import EnumOption, Rule, effective, parse_rules


class Choice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    value: Any
    label: str


class FieldMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    type: FieldType
    required: bool
    desc: str = ""
    enum: list[Any] | None = None
    choices: list[Choice] | None = None
    default: Any = None
    pattern: str | None = None
    sensitive: bool = False
    ignored: bool = False  # only in the metadata file; ``tool meta`` leaves ignored fields out
    notes: list[str] = []


class ToolMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    name: str
    description: str
    idempotent: bool
    result: Literal["json", "text"]
    fields: list[FieldMeta]
    notes: list[str] = []


def _coerce(value: str, kind: FieldType) -> Any:
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
    except ValueError:
        return value
    return value


def _field(name: str, spec: FieldSpec, rules: list[Rule], *, ignored: bool = False) -> FieldMeta:
    notes = [r.text for r in rules if r.kind == "NOTE" and r.field == name]
    enums = [r.options for r in rules if r.kind == "ENUM" and r.field == name]
    options: tuple[EnumOption, ...] = enums[0] if enums else ()
    choices = [Choice(value=_coerce(o.value, spec.type), label=o.label) for o in options] or None
    return FieldMeta(name=name, type=spec.type, required=spec.required, desc=spec.desc, enum=spec.enum,
                     choices=choices, default=spec.default, pattern=spec.pattern, sensitive=spec.sensitive,
                     ignored=ignored, notes=notes)


def _hidden(name: str, spec: FieldSpec, rules: list[Rule]) -> bool:
    ignored = any(r.kind == "IGNORE" and r.field == name for r in rules)
    kept = any(r.kind == "KEEP" and r.field == name for r in rules)
    # A field the tool cannot run without stays visible whatever a rule says: fail towards showing.
    return ignored and not kept and not (spec.required and spec.default is None)


def build_meta(tool: ToolDefinition, rules: list[Rule], *, required_only: bool = False,
               include_ignored: bool = False) -> ToolMeta:
    """The tool as an agent should see it; ``include_ignored`` keeps hidden fields, marked (metadata file)."""
    fields: list[FieldMeta] = []
    for name, spec in tool.parameters.items():
        hidden = _hidden(name, spec, rules)
        if (hidden and not include_ignored) or (required_only and not spec.required):
            continue
        fields.append(_field(name, spec, rules, ignored=hidden))
    notes = [r.text for r in rules if r.kind == "NOTE" and r.field is None]
    return ToolMeta(name=tool.name, description=tool.description, idempotent=tool.idempotent,
                    result=tool.result, fields=fields, notes=notes)


def rules_for(project_dir: Path, tool: ToolDefinition) -> list[Rule]:
    """The tool's effective rules: its rules file (if discover wrote one) over the generated rules."""
    path = refuse_symlink(rules_path(project_dir, tool.name), project_dir)
    generated = auto_rules(tool)
    if not path.is_file():
        return effective([], generated)
    lines = parse_rules(path.read_text(encoding="utf-8"), display_path(path, project_dir), tool.parameters)
    return effective(lines, generated)


def tool_meta(project_dir: Path, tool: ToolDefinition, *, required_only: bool = False) -> ToolMeta:
    return build_meta(tool, rules_for(project_dir, tool), required_only=required_only)
