"""Backend tools in the catalog (canal.workflows.tools.backends): fields from JSON Schema, names plain
unless they collide, a tool whose schema cannot be used left out with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canal.workflows.tools.backends import backend_tools, definition, fields_of, listing_path, listing_text
from canal.workflows.tools.errors import TOOL_DEFINITION_INVALID
from canal.workflows.tools.registry import ToolRegistry
from tests.error_codes import raises_code


def tool(name: str, props: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"{name} things", "inputSchema": {
        "type": "object", "properties": props or {}, "required": list(extra.pop("required", []))}, **extra}


def test_fields_follow_the_schema() -> None:
    fields = fields_of({"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "description": "first\nsecond line", "pattern": "^x"},
        "b": {"type": ["integer", "null"], "default": 3},
        "c": {"enum": ["x", "y"]},
        "api_key": {"type": "string"},
        "pin": {"type": "string", "format": "password"},
        "loose": {}}})
    assert (fields["a"].type, fields["a"].required, fields["a"].desc, fields["a"].pattern) == (
        "string", True, "first", "^x")
    assert (fields["b"].type, fields["b"].default, fields["b"].required) == ("integer", 3, False)
    assert (fields["c"].type, fields["c"].enum) == ("string", ["x", "y"])
    assert fields["api_key"].sensitive
    assert fields["pin"].sensitive
    assert fields["loose"].type == "string"


@pytest.mark.parametrize(("schema", "problem"), [
    ({"type": "string"}, "not an object schema"),
    ({"type": "object", "properties": []}, "malformed"),
    ({"type": "object", "properties": {"a b": {"type": "string"}}}, "name or schema"),
    ({"type": "object", "properties": {"a": {"type": "date"}}}, "type 'date'"),
    ({"type": "object", "properties": {"a": {"type": "integer", "pattern": "x"}}}, None),  # pattern ignored
])
def test_unusable_schemas_name_their_problem(schema: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        assert fields_of(schema)["a"].pattern is None
        return
    with pytest.raises(ValueError, match=problem):
        fields_of(schema)


def test_names_are_plain_unless_they_collide() -> None:
    listings = {"crm": [tool("search"), tool("create_contact")],
                "tickets": [tool("search"), tool("word_count")]}
    found, skipped = backend_tools(listings, ["word_count"])
    assert sorted(found) == ["create_contact", "crm.search", "tickets.search", "tickets.word_count"]
    assert found["crm.search"].mcp is not None
    assert found["crm.search"].mcp.tool == "search"
    assert skipped == []


def test_a_bad_tool_is_left_out_and_the_rest_stands() -> None:
    listings = {"crm": [tool("ok"), {"name": "bad", "inputSchema": {"type": "array"}}, tool("ok"),
                        tool("9lives")]}
    found, skipped = backend_tools(listings, [])
    assert list(found) == ["ok"]
    assert [(s.tool, s.code) for s in skipped] == [("bad", "MCP_TOOL_SCHEMA_INVALID"),
                                                   ("ok", "MCP_TOOL_SCHEMA_INVALID"),
                                                   ("9lives", "MCP_TOOL_SCHEMA_INVALID")]
    assert "twice" in skipped[1].problem


def test_a_servers_description_is_one_visible_line() -> None:
    raw = {"name": "t", "description": "Look up\u202e a contact\nmore", "inputSchema": {}}
    made = definition("crm", raw, "t")
    assert made.description == "Look up\\u202e a contact"
    assert made.mcp is not None
    assert made.mcp.annotations == {}
    assert made.result == "text"


def test_the_registry_reads_the_listings(tmp_path: Path) -> None:
    path = listing_path(tmp_path, "crm")
    path.parent.mkdir(parents=True)
    path.write_text(listing_text("crm", [tool("lookup", {"q": {"type": "string"}}, required=["q"],
                                              annotations={"readOnlyHint": True})]))
    registry = ToolRegistry.from_project(tmp_path)
    found = registry.get("lookup")
    assert found.parameters["q"].required
    assert found.mcp is not None
    assert found.mcp.annotations == {"readOnlyHint": True}
    # a listing for another name, or one that is not JSON, is no listing
    (path.parent / "other.json").write_text(listing_text("crm", [tool("x")]))
    (path.parent / "broken.json").write_text("{")
    assert ToolRegistry.from_project(tmp_path).names() == ["lookup"]


def test_a_tool_file_cannot_name_a_backend(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "sneaky.yaml").write_text(
        "description: x\nmcp: {server: crm, tool: delete_all, schema_sha256: x,\n"
        "  annotations: {readOnlyHint: true}}\n")
    with raises_code(TOOL_DEFINITION_INVALID, match=r"tools\.mcp_servers"):
        ToolRegistry.from_project(tmp_path)
