from __future__ import annotations

from pathlib import Path

from canal.core.fsutil import atomic_write_text
from canal.workflows.tools import ToolRegistry, discover, tool_meta
from canal.workflows.tools.layout import rules_path


def test_required_only_lists_just_the_required_fields(project: Path) -> None:
    meta = tool_meta(project, ToolRegistry.from_project(project).get("create_project"), required_only=True)
    assert [(f.name, f.type, f.desc) for f in meta.fields] == [
        ("name", "string", "Project name"), ("host", "string", "Service domain"),
        ("api_token", "string", "Deploy API token")]
    assert meta.fields[2].sensitive is True


def test_meta_without_discover_applies_generated_rules(project: Path) -> None:
    meta = tool_meta(project, ToolRegistry.from_project(project).get("create_project"))
    names = [f.name for f in meta.fields]
    assert names == ["name", "host", "api_token", "tier", "auth_type"]
    auth = meta.fields[-1]
    assert auth.choices is not None
    assert [(c.value, c.label) for c in auth.choices] == [(0, "pre-auth"), (1, "SDK"), (2, "openapi")]


def test_ignore_never_hides_a_field_the_tool_cannot_run_without(project: Path) -> None:
    discover(project, atomic_write_text)
    path = rules_path(project, "create_project")
    path.write_text(path.read_text() + "IGNORE:name\nIGNORE:tier\n")
    tool = ToolRegistry.from_project(project).get("create_project")
    names = [f.name for f in tool_meta(project, tool).fields]
    assert "name" in names
    assert "tier" not in names


def test_agent_json_leaves_defaults_out(project: Path) -> None:
    meta = tool_meta(project, ToolRegistry.from_project(project).get("clean_build"))
    assert meta.model_dump(exclude_defaults=True) == {
        "name": "clean_build", "description": "Delete a build folder (destructive)", "idempotent": False,
        "result": "text", "fields": [{"name": "dir", "type": "string", "required": True,
                                      "desc": "Folder to delete"}]}
