"""``CanalStepExecutor`` over a stand-in for ``Canal`` (the pipeline itself is covered by integration
tests): results from the full stdout, status mapping, secrets masked while and after a step runs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from canal.runtime.run.result import ConfirmationView, RunResult
from canal.runtime.services import Services
from canal.runtime.tools import Tools
from canal.runtime.wfrun.executor import CanalStepExecutor
from canal.runtime.wfrun.factory import ProjectTools
from canal.sandbox.result import CapturedOutput, EndReason, ExecResult
from canal.workflows.ports import StepRequest

SECRET = "s3cret-value-that-no-pattern-knows"


@dataclass
class StandIn:
    """What the executor uses of ``Canal``: ``services``, ``unattended``, ``run_argv`` and ``call_tool``
    (the real one, over this ``run_argv``)."""

    services: Services
    reply: Callable[[StandIn], RunResult]
    unattended: bool = False
    calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def project_dir(self) -> Path:
        return self.services.project_dir

    def call_tool(self, name: str, args: Mapping[str, Any], **options: Any) -> RunResult:
        return Tools(self).call(name, args, **options)  # type: ignore[arg-type]

    def run_argv(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 timeout_s: float | None = None, confirm: str | None = None,
                 unattended: bool | None = None, secrets: Sequence[str] = (),
                 say: object = None) -> RunResult:
        self.calls.append({"argv": list(argv), "env": env, "timeout_s": timeout_s, "confirm": confirm,
                           "unattended": unattended, "secrets": tuple(secrets)})
        return self.reply(self)


def _ok(stdout: bytes, shown: str) -> RunResult:
    raw = ExecResult(stdout=CapturedOutput.of(stdout), stderr=CapturedOutput.of(b""), exit_code=0,
                     duration_s=0.1, reason=EndReason.EXITED)
    return RunResult(status="ok", exit_code=0, reason="exited", duration_s=0.1, output=shown, text=shown,
                     exec_result=raw)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "project"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "stamp.yaml").write_text(
        'description: Stamp\nparameters:\n  label: { type: string, required: true }\n'
        'run: ["printf", "%s", "{{params.label}}"]\nresult: json\ntimeout_s: 7\n')
    return root


def _executor(project: Path, reply: Callable[[StandIn], RunResult]) -> tuple[CanalStepExecutor, StandIn]:
    canal = StandIn(Services(project), reply)
    return CanalStepExecutor(canal, ProjectTools(project)), canal  # type: ignore[arg-type]


def test_json_result_is_parsed_from_the_full_stdout_not_the_presented_cut(project: Path) -> None:
    big = {"items": list(range(5000)), "secret_echo": SECRET}
    full = json.dumps(big).encode()
    executor, canal = _executor(project, lambda _: _ok(full, f"{full[:50].decode()}... [cut] {SECRET}"))
    outcome = executor.execute(StepRequest(run_id="wr_1", step_id="s", attempt=1, argv=("echo", SECRET),
                                           env={"TOKEN": SECRET}, result_format="json", secrets=(SECRET,)))
    assert outcome.status == "ok"
    assert outcome.result == big
    assert SECRET not in outcome.output
    assert canal.calls[0]["argv"] == ["echo", SECRET]  # the command itself gets the real value
    assert canal.calls[0]["env"] == {"TOKEN": SECRET}
    assert SECRET in canal.calls[0]["secrets"]  # the pipeline masks it in what it audits and shows
    assert SECRET in canal.services.redactor(SECRET)  # and only while the step runs


def test_confirmation_denial_and_failure_map_to_outcomes(project: Path) -> None:
    view = ConfirmationView(token="c_1", reason="recursive delete", expires_at="2030-01-01T00:00:00Z")
    asked = RunResult(status="confirmation_required", exit_code=None, reason="recursive delete",
                      duration_s=0.0, confirmation=view)
    executor, canal = _executor(project, lambda _: asked)
    outcome = executor.execute(StepRequest(run_id="r", step_id="s", attempt=1, argv=("rm", "-rf", "x"),
                                           confirm_token=None, unattended=True))
    assert (outcome.status, outcome.confirmation_token, outcome.confirmation_reason) == (
        "confirmation_required", "c_1", "recursive delete")
    assert canal.calls[0]["unattended"] is True

    for status, expected in (("denied", "denied"), ("failed", "failed"), ("timeout", "failed"),
                             ("error", "error")):
        result = RunResult(status=status, exit_code=3 if status == "failed" else None, reason="why",
                           duration_s=0.0)
        executor, _ = _executor(project, lambda _, r=result: r)
        outcome = executor.execute(StepRequest(run_id="r", step_id="s", attempt=1, argv=("x",)))
        assert outcome.status == expected


def test_not_json_is_an_error_outcome(project: Path) -> None:
    executor, _ = _executor(project, lambda _: _ok(b"not json", "not json"))
    request = StepRequest(run_id="r", step_id="s", attempt=1, argv=("x",), result_format="json")
    outcome = executor.execute(request)
    assert outcome.status == "error"
    assert "declares result: json but its stdout is not JSON" in outcome.reason


def test_tool_step_is_validated_built_and_parsed_by_the_tool(project: Path) -> None:
    executor, canal = _executor(project, lambda _: _ok(b'{"stamped": true}', "{}"))
    outcome = executor.execute(StepRequest(run_id="r", step_id="s", attempt=1, tool="stamp",
                                           inputs={"label": "a-b"}, confirm_token="c_9"))
    assert (outcome.status, outcome.result) == ("ok", {"stamped": True})
    assert canal.calls[0]["argv"] == ["printf", "%s", "a-b"]
    assert (canal.calls[0]["timeout_s"], canal.calls[0]["confirm"]) == (7, "c_9")

    missing = executor.execute(StepRequest(run_id="r", step_id="s", attempt=1, tool="stamp", inputs={}))
    assert missing.status == "error"
    assert "missing required fields: label" in missing.reason
    assert len(canal.calls) == 1  # nothing ran
