from __future__ import annotations

import json
from pathlib import Path

import pytest

from canal.workflows.tools import ToolRegistry, build_argv, parse_result, prepare_call
from canal.workflows.tools.errors import TOOL_ARGS_INVALID, TOOL_RESULT_INVALID
from canal.workflows.tools.model import ToolDefinition
from tests.error_codes import raises_code

GOOD = {"name": "demo", "host": "demo.example", "api_token": "s3cret"}


@pytest.fixture
def registry(project: Path) -> ToolRegistry:
    return ToolRegistry.from_project(project)


def test_missing_required_fields_are_rejected_with_the_list(registry: ToolRegistry) -> None:
    with raises_code(TOOL_ARGS_INVALID) as info:
        prepare_call(registry.get("create_project"), {"name": "demo", "colour": "red"})
    err = info.value
    assert err.message == ("tool create_project: missing required fields: host (Service domain), "
                           "api_token (Deploy API token). Nothing was run.")
    assert err.details["missing"] == [{"field": "host", "desc": "Service domain"},
                                      {"field": "api_token", "desc": "Deploy API token"}]
    assert err.details["dropped"] == ["colour"]
    assert [(a.kind, dict(a.args)) for a in err.next] == [("tool.meta", {"name": "create_project"})]


def test_wrong_values_are_listed(registry: ToolRegistry) -> None:
    with raises_code(TOOL_ARGS_INVALID) as info:
        prepare_call(registry.get("create_project"), {**GOOD, "host": "Bad Host", "tier": "gold"})
    assert [e["field"] for e in info.value.details["errors"]] == ["host", "tier"]


def test_argv_is_built_from_whole_and_embedded_templates(registry: ToolRegistry) -> None:
    call = prepare_call(registry.get("create_project"), {**GOOD, "auth_type": 2})
    assert call.argv == ["python3", "/opt/tools/create_project.py", "--name=demo", "--host", "demo.example",
                         "--tier=free", "--auth-type=2"]
    assert call.env == {"DEPLOY_TOKEN": "s3cret"}
    assert "s3cret" not in " ".join(call.argv)


def test_an_element_naming_an_absent_optional_parameter_is_left_out(registry: ToolRegistry) -> None:
    assert "--auth-type=" not in " ".join(build_argv(registry.get("create_project"), GOOD))


def test_shell_metacharacters_stay_one_argv_element(registry: ToolRegistry) -> None:
    argv = build_argv(registry.get("clean_build"), {"dir": "build; rm -rf / $(id)"})
    assert argv == ["rm", "-rf", "--", "build; rm -rf / $(id)"]


def test_leading_dash_is_refused_before_a_literal_double_dash(registry: ToolRegistry) -> None:
    with raises_code(TOOL_ARGS_INVALID, match="host: must not start with '-'"):
        prepare_call(registry.get("create_project"), {**GOOD, "host": "-oproxy.example"})
    # After "--" the same value is only ever a path.
    assert build_argv(registry.get("list_files"), {"path": "-weird"})[-1] == "-weird"


def test_nul_bytes_are_refused(registry: ToolRegistry) -> None:
    with raises_code(TOOL_ARGS_INVALID, match="NUL"):
        prepare_call(registry.get("clean_build"), {"dir": "a\0b"})


def test_script_tools_get_their_parameters_as_json_in_env(registry: ToolRegistry) -> None:
    call = prepare_call(registry.get("report"), {"status": 1})
    assert call.argv == ["/opt/tools/report.py"]
    assert json.loads(call.env["CANAL_TOOL_PARAMS"]) == {"status": 1}


def test_values_render_by_type() -> None:
    tool = ToolDefinition.model_validate({
        "name": "t", "description": "x", "run": ["x", "{{params.b}}", "{{params.n}}", "--l={{params.l}}"],
        "parameters": {"b": {"type": "boolean"}, "n": {"type": "number"}, "l": {"type": "array"}}})
    assert build_argv(tool, {"b": False, "n": 1.5, "l": [1, "a"]}) == ["x", "false", "1.5", '--l=[1,"a"]']


def test_parse_result(registry: ToolRegistry) -> None:
    assert parse_result(registry.get("report"), '{"ok": true}') == {"ok": True}
    assert parse_result(registry.get("clean_build"), "plain\n") == "plain\n"
    with raises_code(TOOL_RESULT_INVALID):
        parse_result(registry.get("report"), "not json")
