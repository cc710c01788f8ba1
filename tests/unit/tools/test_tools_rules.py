from __future__ import annotations

from pathlib import Path

import pytest

from canal.core.fsutil import atomic_write_text
from canal.workflows.tools import ToolRegistry, discover, tool_meta
from canal.workflows.tools.errors import TOOL_RULES_INVALID
from canal.workflows.tools.extract import auto_rules, enum_in_text, is_system_field
from canal.workflows.tools.layout import rules_path
from canal.workflows.tools.rules import EnumOption, parse_rules
from tests.error_codes import raises_code


def rules_lines(project: Path, tool: str) -> list[str]:
    return rules_path(project, tool).read_text().splitlines()


def test_auto_ignore_and_enum_on_fixtures(project: Path) -> None:
    discover(project, atomic_write_text)
    assert rules_lines(project, "create_project")[1:] == [
        "ENUM:auth_type:0-pre-auth,1-SDK,2-openapi #auto",
        "IGNORE:id #auto",
        "IGNORE:created_at #auto",
        "IGNORE:update_admin #auto",
    ]
    assert rules_lines(project, "report")[1:] == [
        "ENUM:status:0-disabled,1-enabled,2-archived #auto",
        "IGNORE:insertTime #auto",
    ]
    assert rules_lines(project, "clean_build")[1:] == []


def test_a_required_system_field_is_noted_not_ignored(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "get.yaml").write_text(
        "description: Get a row\nparameters: {id: {type: integer, required: true}}\n"
        "run: [echo, '{{params.id}}']\n")
    tool = ToolRegistry.from_project(tmp_path).get("get")
    assert [r.line() for r in auto_rules(tool)] == [
        "NOTE:id:looks system-managed but the tool requires it #auto"]


def test_manual_rule_overrides_auto_and_survives_reruns(project: Path) -> None:
    discover(project, atomic_write_text)
    path = rules_path(project, "create_project")
    path.write_text(path.read_text() + "# kept comment\nENUM:auth_type:0-none,1-sdk\nKEEP:created_at\n"
                    "NOTE:Call only after the project name is confirmed\nNOTE:host:without scheme\n")
    for _ in range(2):
        discover(project, atomic_write_text)
    lines = rules_lines(project, "create_project")
    assert lines[1:] == [
        "# kept comment",
        "ENUM:auth_type:0-none,1-sdk",
        "KEEP:created_at",
        "NOTE:Call only after the project name is confirmed",
        "NOTE:host:without scheme",
        "IGNORE:id #auto",
        "IGNORE:update_admin #auto",
    ]
    meta = tool_meta(project, ToolRegistry.from_project(project).get("create_project"))
    fields = {f.name: f for f in meta.fields}
    assert [(c.value, c.label) for c in fields["auth_type"].choices or []] == [(0, "none"), (1, "sdk")]
    assert "created_at" in fields
    assert "id" not in fields
    assert fields["host"].notes == ["without scheme"]
    assert meta.notes == ["Call only after the project name is confirmed"]


def test_deleting_a_manual_line_brings_the_auto_line_back(project: Path) -> None:
    discover(project, atomic_write_text)
    path = rules_path(project, "report")
    path.write_text(path.read_text() + "KEEP:insertTime\n")
    discover(project, atomic_write_text)
    assert "IGNORE:insertTime #auto" not in rules_lines(project, "report")
    path.write_text(path.read_text().replace("KEEP:insertTime\n", ""))
    discover(project, atomic_write_text)
    assert "IGNORE:insertTime #auto" in rules_lines(project, "report")


def test_auto_lines_are_regenerated_when_the_tool_changes(project: Path) -> None:
    discover(project, atomic_write_text)
    tool_file = project / "tools" / "report.yaml"
    tool_file.write_text(tool_file.read_text().replace("2-archived", "3-archived"))
    discover(project, atomic_write_text)
    assert "ENUM:status:0-disabled,1-enabled,3-archived #auto" in rules_lines(project, "report")
    assert not any("2-archived" in ln for ln in rules_lines(project, "report"))


@pytest.mark.parametrize(("text", "expected"), [
    ("Auth type: 0-pre-auth,1-SDK,2-openapi", [("0", "pre-auth"), ("1", "SDK"), ("2", "openapi")]),
    ("状态：0-禁用，1-启用", [("0", "禁用"), ("1", "启用")]),
    ("mode (a-alpha, b-beta)", [("a", "alpha"), ("b", "beta")]),
    ("Just a well-known description", None),
    ("Only one 0-off value", None),
    ("dup 1-a,1-b", None),
])
def test_enum_extraction(text: str, expected: list[tuple[str, str]] | None) -> None:
    found = enum_in_text(text)
    assert found == (tuple(EnumOption(v, lb) for v, lb in expected) if expected else None)


@pytest.mark.parametrize(("name", "system"), [
    ("id", True), ("created_at", True), ("createdAt", True), ("update_admin", True), ("insert_time", True),
    ("user_id", False), ("name", False),
])
def test_system_fields(name: str, system: bool) -> None:
    assert is_system_field(name) is system


@pytest.mark.parametrize("line", ["FORBID:x", "IGNORE:", "ENUM:x", "ENUM:x:novalue", "NOTE:", "just text"])
def test_malformed_lines_name_the_line(line: str) -> None:
    with raises_code(TOOL_RULES_INVALID) as info:
        parse_rules(f"# header #auto\n{line}\n", "rules/t.rules", {"x"})
    assert info.value.message.startswith("rules/t.rules:2: ")
    assert info.value.details["line"] == 2
