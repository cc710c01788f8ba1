from __future__ import annotations

from pathlib import Path

import pytest

from canal.workflows.tools import ToolRegistry, load_tool
from canal.workflows.tools.errors import TOOL_DEFINITION_INVALID, TOOL_NOT_FOUND
from canal.workflows.tools.templates import code_positions
from tests.error_codes import raises_code


def write_tool(folder: Path, name: str, body: str) -> Path:
    path = folder / "tools" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def test_registry_loads_every_fixture_tool(project: Path) -> None:
    registry = ToolRegistry.from_project(project)
    assert registry.names() == ["clean_build", "create_project", "list_files", "report"]
    tool = registry.get("create_project")
    assert tool.parameters["name"].required is True
    assert tool.result == "json"
    assert tool.timeout_s == 60
    assert registry.get("list_files").idempotent is True
    assert registry.get("report").script == "/opt/tools/report.py"


def test_unknown_tool_names_the_next_command(project: Path) -> None:
    with raises_code(TOOL_NOT_FOUND) as info:
        ToolRegistry.from_project(project).get("nope")
    assert [a.kind for a in info.value.next] == ["tool.list"]


@pytest.mark.parametrize(("fixture", "line", "fragment"), [
    ("bad_template.yaml", 4, "read as code or a shell string"),
    ("unknown_key.yaml", 5, "timeout: Extra inputs are not permitted"),
    ("sensitive_argv.yaml", 4, "'token' is sensitive"),
    ("unknown_param.yaml", 6, "unknown parameter 'mesage'"),
])
def test_broken_definitions_name_file_and_line(broken_dir: Path, fixture: str, line: int,
                                               fragment: str) -> None:
    with raises_code(TOOL_DEFINITION_INVALID) as info:
        load_tool(broken_dir / fixture)
    assert f"{fixture}:{line}: " in info.value.message
    assert fragment in info.value.message
    assert info.value.details["errors"][0]["line"] == line


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write_tool(tmp_path, "bad", "description: x\nrun: [echo\nparameters: {}\n")
    with raises_code(TOOL_DEFINITION_INVALID, match=r"bad\.yaml:\d+: YAML syntax"):
        load_tool(path)


def test_name_must_match_the_file(tmp_path: Path) -> None:
    path = write_tool(tmp_path, "alpha", "name: beta\ndescription: x\nrun: [echo]\n")
    with raises_code(TOOL_DEFINITION_INVALID, match=r"alpha\.yaml:1: name: must equal the file name"):
        load_tool(path)


@pytest.mark.parametrize("body", [
    "description: x\n",
    "description: x\nrun: [echo]\nscript: /bin/x\n",
    "description: x\nscript: relative/x\n",
    "description: x\nrun: []\n",
    "description: \"two\\nlines\"\nrun: [echo]\n",
    "description: x\nrun: [\"{{params.p}}\"]\nparameters: {p: {type: string}}\n",
    "description: x\nrun: [echo]\nenv: {CANAL_TOOL_PARAMS: x}\n",
    "description: x\nrun: [echo, \"{{gate.a.b}}\"]\n",
    "description: x\nrun: [echo, \"{{params.a\"]\nparameters: {a: {}}\n",
])
def test_invalid_shapes_are_refused(tmp_path: Path, body: str) -> None:
    with raises_code(TOOL_DEFINITION_INVALID):
        load_tool(write_tool(tmp_path, "t", body))


@pytest.mark.parametrize(("argv", "code"), [
    (["bash", "-c", "x", "_", "y"], {2}),
    (["/bin/sh", "-ec", "x"], {2}),
    (["python3", "-c", "x"], {2}),
    (["perl", "-e", "x"], {2}),
    (["node", "-p", "x"], {2}),
    (["php", "-r", "x"], {2}),
    (["node", "--eval", "x"], {2}),
    (["env", "bash", "-lc", "x"], {3}),
    (["ssh", "host", "ls", "x"], {1, 2, 3}),
    (["awk", "-F", ",", "{print}", "file"], {3}),
    (["awk", "-v", "a=1", "--", "{print}"], {4}),
    (["ls", "-c", "x"], set()),
    (["bash", "script.sh", "arg"], set()),
])
def test_code_positions(argv: list[str], code: set[int]) -> None:
    assert code_positions(argv) == code


def test_templates_are_allowed_as_positionals_of_a_shell(tmp_path: Path) -> None:
    body = ("description: x\nparameters: {m: {type: string}}\n"
            "run: [bash, -c, 'echo \"$1\"', _, '{{params.m}}']\n")
    assert load_tool(write_tool(tmp_path, "t", body)).run == ["bash", "-c", 'echo "$1"', "_", "{{params.m}}"]
