"""One tool call for every door: ``canal tool call``, MCP's ``call_capability`` and a workflow's tool step
all go through ``Canal.call_tool``, and the same refusal has the same code whichever door it came
through (nothing here needs an engine: each refusal comes before anything runs)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from canal.cli.main import cli
from canal.mcp import schemas as s
from canal.mcp.capabilities import call_capability
from canal.mcp.server import error_reply
from canal.runtime.api import Canal
from canal.runtime.tools import Tools
from canal.runtime.wfrun.executor import CanalStepExecutor
from canal.runtime.wfrun.factory import ProjectTools
from canal.workflows.ports import StepRequest
from canal.workflows.tools.errors import TOOL_ARGS_INVALID, TOOL_RUNNER_UNAVAILABLE
from tests.error_codes import raises_code

TOOLS = {
    "imaged": 'description: Needs its own image\nimage: "example/own:1"\nparameters: {}\nrun: ["true"]\n',
    "stamp": 'description: Stamp\nparameters:\n  label: { type: string, required: true }\n'
             'run: ["printf", "%s", "{{params.label}}"]\n',
    "lister": 'description: List\nparameters:\n  n: { type: integer, required: true }\n'
              'run: ["ls", "{{params.n}}"]\n',
    "scaled": 'description: Scale\nparameters:\n  f: { type: number, required: true }\n'
              'run: ["echo", "{{params.f}}"]\n',
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"k" * 32).decode())
    root = tmp_path / "project"
    (root / "tools").mkdir(parents=True)
    for name, text in TOOLS.items():
        (root / "tools" / f"{name}.yaml").write_text(text)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = Tools.call

    def spy(self: Tools, name: str, args: Any, **options: Any) -> Any:
        seen.append(name)
        return real(self, name, args, **options)

    monkeypatch.setattr(Tools, "call", spy)
    return seen


@pytest.mark.parametrize(("tool", "args", "error"), [
    ("imaged", {}, TOOL_RUNNER_UNAVAILABLE), ("stamp", {}, TOOL_ARGS_INVALID),
    # issue 39, finding 5: a number filling a whole argv element obeys the option rule as a string does
    ("lister", {"n": -5}, TOOL_ARGS_INVALID), ("scaled", {"f": -0.5}, TOOL_ARGS_INVALID),
])
def test_every_door_calls_the_one_call_tool_and_reports_the_same_code(
        project: Path, calls: list[str], tool: str, args: dict[str, Any], error: type[Exception]) -> None:
    code = error.code  # type: ignore[attr-defined]
    with Canal(project) as canal, raises_code(error):
        canal.call_tool(tool, args)

    done = CliRunner().invoke(cli, ["tool", "call", tool, "--args", json.dumps(args)])
    assert done.stderr.splitlines()[0] == code
    assert done.exit_code == error.exit_code  # type: ignore[attr-defined]

    with Canal(project) as canal:
        with raises_code(error) as raised:
            call_capability(canal, s.CallCapabilityArgs(name=tool, arguments=args))
        assert error_reply(raised.value, "call_capability").data["code"] == code

        step = CanalStepExecutor(canal, ProjectTools(project)).execute(
            StepRequest(run_id="wr_1", step_id="s", attempt=1, tool=tool, inputs=args))
    assert (step.status, step.code) == ("error", code)
    assert calls == [tool] * 4
