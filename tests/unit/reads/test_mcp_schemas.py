"""Issue 32, finding 5: every MCP tool's inputSchema is JSON Schema (keywords only, valid against the
metaschema), and the alternative shapes a field accepts are declared."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from canal.mcp.tools import TOOLS, input_schema

# JSON Schema 2020-12 keywords, plus the annotations pydantic writes.
KEYWORDS = {
    "$schema", "$id", "$ref", "$defs", "$comment", "$anchor", "$dynamicRef", "$dynamicAnchor",
    "type", "enum", "const", "properties", "additionalProperties", "required", "items", "prefixItems",
    "anyOf", "oneOf", "allOf", "not", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "format", "default",
    "description", "title", "examples", "propertyNames", "patternProperties", "minProperties",
    "maxProperties", "multipleOf", "contains", "dependentRequired", "dependentSchemas", "readOnly",
    "writeOnly", "deprecated", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems",
}
SUBSCHEMA_MAPS = {"properties", "$defs", "patternProperties", "dependentSchemas"}


def _unknown(node: Any, where: str) -> list[str]:
    if isinstance(node, list):
        return [u for i, item in enumerate(node) for u in _unknown(item, f"{where}[{i}]")]
    if not isinstance(node, dict):
        return []
    found = [f"{where}.{k}" for k in node if k not in KEYWORDS]
    for key, value in node.items():
        if key in SUBSCHEMA_MAPS and isinstance(value, dict):
            found += [u for name, sub in value.items() for u in _unknown(sub, f"{where}.{key}.{name}")]
        elif key in {"default", "enum", "const", "examples", "required"}:
            continue
        else:
            found += _unknown(value, f"{where}.{key}")
    return found


def test_every_input_schema_uses_json_schema_keywords_only() -> None:
    for spec in TOOLS:
        schema = input_schema(spec.args)
        Draft202012Validator.check_schema(schema)
        assert _unknown(schema, spec.name) == [], spec.name


def test_the_timeout_bound_is_declared() -> None:
    timeout = input_schema(next(t for t in TOOLS if t.name == "run_command").args)["properties"]["timeout"]
    assert timeout["exclusiveMinimum"] == 0
    assert timeout["maximum"] == 3600


def test_accepted_alternative_shapes_are_declared() -> None:
    props = {t.name: input_schema(t.args)["properties"] for t in TOOLS}
    validator = Draft202012Validator
    for tool, field, value in (("remove", "path", "build"), ("remove", "path", ["a", "b"]),
                               ("apply", "paths", "src"), ("run_command", "command", ["ls", "-la"]),
                               ("run_command", "timeout", "30s"), ("run_command", "timeout", 30)):
        assert validator(props[tool][field]).is_valid(value), (tool, field, value, props[tool][field])
