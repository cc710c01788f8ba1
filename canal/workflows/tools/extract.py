"""Rules ``canal discover`` writes on its own: system fields to ignore, enums found in descriptions."""

from __future__ import annotations

import re

from canal.workflows.fields import FieldSpec
from canal.workflows.tools.model import ToolDefinition
from canal.workflows.tools.rules import EnumOption, Rule, parse_options

# Fields a backend fills in itself; an agent asked to supply them only wastes its context.
SYSTEM_FIELDS = frozenset({
    "id", "created_at", "updated_at", "deleted_at", "insert_time", "update_time", "create_time",
    "created_time", "updated_time", "modify_time", "modified_at", "created_by", "updated_by",
    "create_by", "update_by", "create_admin", "update_admin", "insert_admin", "gmt_create",
    "gmt_modified", "is_deleted", "row_version",
})

_ITEM = r"[A-Za-z0-9_.+]{1,24}-[^\s,，、;；()（）]+"
_ENUM_LIST = re.compile(rf"(?<![\w-])({_ITEM}(?:\s*[,，、]\s*{_ITEM})+)")
_SEPARATORS = re.compile(r"\s*[,，、]\s*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def is_system_field(name: str) -> bool:
    return snake(name) in SYSTEM_FIELDS


def enum_in_text(text: str) -> tuple[EnumOption, ...] | None:
    """Value-label pairs such as ``0-pre-auth,1-SDK,2-openapi`` in a description (two or more)."""
    for match in _ENUM_LIST.finditer(text):
        options = parse_options(_SEPARATORS.sub(",", match.group(1)))
        if options and len({o.value for o in options}) == len(options):
            return options
    return None


def _field_rules(name: str, spec: FieldSpec) -> list[Rule]:
    rules: list[Rule] = []
    if is_system_field(name):
        if spec.required and spec.default is None:
            rules.append(Rule("NOTE", name, text="looks system-managed but the tool requires it",
                              auto=True))
        else:
            rules.append(Rule("IGNORE", name, auto=True))
    options = enum_in_text(spec.desc)
    if options:
        rules.append(Rule("ENUM", name, options=options, auto=True))
    return rules


def auto_rules(tool: ToolDefinition) -> list[Rule]:
    """Generated rules for ``tool``, in parameter order."""
    return [rule for name, spec in tool.parameters.items() for rule in _field_rules(name, spec)]
