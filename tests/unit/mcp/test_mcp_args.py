"""Argument normalisation: the shapes models produce become the canonical ones; the rest is refused
with the field's constraint."""

from __future__ import annotations

from typing import Any

import pytest

from canal.mcp.args import coerce_fields, to_range, to_seconds
from canal.mcp.errors import ARGUMENT_INVALID, ARGUMENT_MISSING, ARGUMENT_UNKNOWN
from canal.mcp.tools import BY_NAME, parse_args
from canal.runtime.errors import render_error
from tests.error_codes import raises_code


def parsed(tool: str, raw: dict[str, Any]) -> dict[str, Any]:
    return parse_args(BY_NAME[tool], raw).model_dump()


@pytest.mark.parametrize(("raw", "command"), [
    ({"command": "ls -la"}, "ls -la"),
    ({"cmd": ["ls", "-la", "a b"]}, "ls -la 'a b'"),
    ({"command": ["echo", 3]}, "echo 3"),
])
def test_command_from_a_string_or_an_argv_list(raw: dict[str, Any], command: str) -> None:
    assert parsed("run_command", raw)["command"] == command


@pytest.mark.parametrize(("value", "seconds"), [(30, 30.0), ("30", 30.0), ("30s", 30.0), ("2m", 120.0),
                                                 (" 1.5 ", 1.5)])
def test_timeout_from_numbers_and_text(value: Any, seconds: float) -> None:
    assert parsed("run_command", {"command": "true", "timeout": value})["timeout"] == seconds


def test_seconds_leaves_unreadable_text_for_validation() -> None:
    assert to_seconds("soon") == "soon"


@pytest.mark.parametrize(("value", "paths"), [
    ("build.log", ["build.log"]),
    ("a b 'c d'", ["a", "b", "c d"]),
    ('["a", "/workspace/b"]', ["a", "b"]),
    (["/workspace/x/y", "z"], ["x/y", "z"]),
])
def test_remove_paths_from_list_string_or_json(value: Any, paths: list[str]) -> None:
    assert parsed("remove", {"path": value})["path"] == paths


@pytest.mark.parametrize(("value", "expected"), [
    ("10:40", (10, 40)), ("10-40", (10, 40)), ("10,40", (10, 40)), ("5:", (5, None)), (":9", (None, 9)),
    ([3, 7], (3, 7)), ("12", (12, 12)), (12, (12, 12)), ({"start": 2, "end": 4}, (2, 4)), ("[1, 2]", (1, 2)),
])
def test_view_range_shapes(value: Any, expected: tuple[int | None, int | None]) -> None:
    assert parsed("view", {"path": "a.py", "range": value})["range"] == expected


def test_range_of_nothing_is_none() -> None:
    assert to_range("") is None
    assert parsed("view", {})["range"] is None


def test_sandbox_paths_become_project_paths() -> None:
    assert parsed("view", {"file_path": "/workspace/src/app.py"})["path"] == "src/app.py"
    assert parsed("view", {"path": "/workspace"})["path"] == "."


def test_edit_takes_the_names_other_harnesses_use() -> None:
    args = parsed("edit", {"file_path": "a.py", "old_string": "x", "new_string": "y", "replace_all": "true"})
    assert args == {"path": "a.py", "old": "x", "new": "y", "replace_all": True}


def test_objects_from_json_text() -> None:
    args = parsed("call_capability", {"name": "greet", "arguments": '{"name": "a"}'})
    assert args["arguments"] == {"name": "a"}
    assert parsed("call_capability", {"name": "greet", "arguments": ""})["arguments"] == {}
    gate = parsed("workflow", {"action": "advance", "run_id": "r", "gate_data": '{"n": 2}'})["gate_data"]
    assert gate == {"n": 2}


def test_field_types_from_text() -> None:
    kinds = {"n": "integer", "x": "number", "b": "boolean", "tags": "array", "o": "object", "s": "string"}
    values = {"n": "2", "x": "2.5", "b": "yes", "tags": "a b", "o": '{"k": 1}', "s": "7", "other": "3"}
    assert coerce_fields(values, kinds) == {"n": 2, "x": 2.5, "b": True, "tags": ["a", "b"], "o": {"k": 1},
                                            "s": "7", "other": "3"}
    assert coerce_fields({"n": "two"}, kinds) == {"n": "two"}  # left for the gate to reject


def test_missing_argument_names_it_and_repeats_its_constraint() -> None:
    with raises_code(ARGUMENT_MISSING) as caught:
        parse_args(BY_NAME["run_command"], {})
    text = render_error(caught.value)
    assert text.startswith("ARGUMENT_MISSING\nrun_command: the argument command is missing. "
                           "command: The shell")
    assert text.endswith('Next: call run_command {"command": "ls -la"}')


def test_invalid_argument_shows_what_was_sent_and_the_constraint() -> None:
    with raises_code(ARGUMENT_INVALID) as caught:
        parse_args(BY_NAME["run_command"], {"command": "true", "timeout": 99999})
    lines = render_error(caught.value).splitlines()
    assert lines[0] == "ARGUMENT_INVALID"
    assert "timeout is invalid" in lines[1]
    assert "(got 99999)" in lines[1]
    assert lines[2].startswith("timeout: Seconds before the command is killed, above 0 and at most 3600.")


def test_unknown_argument_lists_what_the_tool_takes() -> None:
    with raises_code(ARGUMENT_UNKNOWN) as caught:
        parse_args(BY_NAME["remove"], {"path": "a", "force": True})
    assert "remove takes required: path; optional: recursive." in caught.value.message


def test_workflow_action_is_one_of_three() -> None:
    with raises_code(ARGUMENT_INVALID) as caught:
        parse_args(BY_NAME["workflow"], {"action": "stop"})
    assert "start (needs name), advance" in caught.value.message


def test_sandbox_paths_under_a_moved_workdir_become_project_paths() -> None:
    """canal.yaml's ``sandbox.workdir`` moves the project in the sandbox: paths under it are the
    project's, and ``/workspace`` is then just another folder (not the project)."""
    def under(raw: dict[str, Any]) -> dict[str, Any]:
        return parse_args(BY_NAME["view"], raw, workdir="/src").model_dump()

    assert under({"file_path": "/src/pkg/app.py"})["path"] == "pkg/app.py"
    assert under({"path": "/src/"})["path"] == "."
    assert under({"path": "/workspace/app.py"})["path"] == "/workspace/app.py"  # refused later: outside
    removed = parse_args(BY_NAME["remove"], {"paths": ["/src/a", "b"]}, workdir="/src").model_dump()
    assert removed["path"] == ["a", "b"]
