"""The tool surface: names, schemas and descriptions a model reads, and the one error shape."""

from __future__ import annotations

import json
import re

from canal.core.next import act
from canal.host.files.errors import PathNotFound
from canal.mcp.operations import confirmation_text
from canal.mcp.server import error_reply
from canal.mcp.tools import TOOLS, input_schema
from canal.mcp.workflow import next_words
from canal.workflows.views import FieldView, StartView, StepView


def test_names_are_distinct_verbs_and_descriptions_are_prompts() -> None:
    names = [t.name for t in TOOLS]
    assert len(set(names)) == len(names) == 23
    for tool in TOOLS:
        assert "Example" in tool.description, tool.name
        assert re.fullmatch(r"[a-z_]+", tool.name)
        if tool.args.model_fields and any(not f.is_required() for f in tool.args.model_fields.values()):
            assert "Default" in tool.description, f"{tool.name} states its defaults"


def test_every_description_example_is_a_valid_call() -> None:
    for tool in TOOLS:
        for line in tool.description.splitlines():
            if line.startswith(("Example: ", "After CONFIRMATION_REQUIRED: ")):
                example = json.loads(line.split(": ", 1)[1])
                tool.args.model_validate(example)


def test_schemas_are_plain_objects_without_pydantic_noise() -> None:
    for tool in TOOLS:
        schema = input_schema(tool.args)
        assert schema["type"] == "object"
        assert "title" not in schema
        for prop in schema["properties"].values():
            assert "title" not in prop
            assert "anyOf" not in prop
            assert prop.get("description")
    run = input_schema(TOOLS[0].args)
    assert run["properties"]["timeout"]["type"] == ["number", "string"]  # "30", "2m" too (issue 32)
    assert "default" not in run["properties"]["timeout"]


def test_consequences_are_stated() -> None:
    run = TOOLS[0].description
    assert "NOTHING RAN" in run
    assert "confirm_token" in run


def test_canal_errors_render_in_the_one_shape() -> None:
    reply = error_reply(PathNotFound("no such file: a.txt", hint="view {\"path\": \".\"}"), "view")
    assert reply.is_error
    assert reply.text == 'PATH_NOT_FOUND\nno such file: a.txt\nNext: view {"path": "."}'
    assert reply.data["code"] == "PATH_NOT_FOUND"


def test_unexpected_errors_are_results_too() -> None:
    reply = error_reply(ValueError("boom"), "view")
    assert reply.is_error
    assert reply.text.startswith("INTERNAL_ERROR\nview failed inside Canal: ValueError: boom")


def test_confirmation_says_nothing_ran_and_who_approves() -> None:
    agent = confirmation_text("rm-recursive: recursive delete", "c_1", "agent", "call run_command again")
    assert agent.startswith("CONFIRMATION_REQUIRED\nrm-recursive: recursive delete. Nothing was run.\n")
    assert agent.endswith('if they agree, call run_command again, adding confirm_token "c_1"')
    human = confirmation_text("r", "c_2", "human", "call run_command again")
    assert "canal approve c_2 --for" in human  # an approver decides it, as themselves


def test_next_step_is_a_tool_call() -> None:
    step = StepView(id="choose", type="interactive", title="", instructions="",
                    fields=[FieldView(name="directory", type="string", required=True, description="")])
    view = StartView(run_id="wr_1", workflow="w", version="1", definition_digest="d", status="waiting_input",
                     step=step, next=[act("workflow.advance", run_id="wr_1", gate={"directory": "<string>"})])
    assert next_words(view) == ('call workflow {"action": "advance", "run_id": "wr_1", '
                                '"gate_data": {"directory": "<string>"}}')
