"""Both shipped examples, driven end to end with their real commands run as local processes.

The executor here stands in for the run pipeline: no shell, argv as given, and a stand-in policy that
asks for confirmation before ``rm``. The integration tests run the same examples in sandboxes.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from wf_helpers import EXAMPLES, Events

from canal.workflows.engine import Engine
from canal.workflows.memory_store import MemoryRunStore
from canal.workflows.ports import StaticCatalog, StepOutcome, StepRequest


class LocalExecutor:
    def __init__(self) -> None:
        self.requests: list[StepRequest] = []

    def execute(self, request: StepRequest) -> StepOutcome:
        self.requests.append(request)
        assert request.argv is not None
        if request.argv[0] == "rm" and request.confirm_token != "c_ok":
            return StepOutcome(status="confirmation_required", confirmation_token="c_ok",
                               confirmation_reason="rm -rf matches rule rm-recursive (recursive delete)")
        argv = [sys.executable, *request.argv[1:]] if request.argv[0] == "python3" else list(request.argv)
        done = subprocess.run(argv, env={"PATH": "/usr/bin:/bin", **request.env}, capture_output=True,
                              text=True, timeout=30, check=False)
        if done.returncode != 0:
            return StepOutcome(status="failed", exit_code=done.returncode, output=done.stdout + done.stderr)
        result = json.loads(done.stdout) if request.result_format == "json" else done.stdout
        return StepOutcome(status="ok", exit_code=0, result=result, output=done.stdout)


def engine(store: MemoryRunStore, executor: LocalExecutor, events: Events) -> Engine:
    return Engine(store=store, executor=executor, catalog=StaticCatalog(), roots=[EXAMPLES], on_event=events)


def test_project_bootstrap_end_to_end() -> None:
    store, executor, events = MemoryRunStore(), LocalExecutor(), Events()
    wf = engine(store, executor, events)
    name = "t-" + secrets.token_hex(4)
    token = "tok_" + secrets.token_hex(12)
    try:
        run = wf.start("project-bootstrap").run_id
        view = wf.advance(run, {"project_name": name, "host": "api.example.test", "api_token": token})
        assert [r.id for r in view.ran] == ["create-project", "register-service"]
        assert view.status == "waiting_input"
        assert view.step is not None
        assert f"Project **{name}** is ready" in view.step.instructions
        assert "svc-" in view.step.instructions
        current = wf.current(run)
        created = current.completed[1].result
        assert created["files"] == ["README.md", "service.json"]
        assert current.completed[2].result["project_id"] == created["project_id"]
        assert current.completed[0].gate is not None
        assert current.completed[0].gate["api_token"] == "****"
        assert token not in store.raw(run).replace(f'"api_token": "{token}"', "")
        assert ("gate", "collect-project-info", "api_token") in store.sensitive[run]
        assert token not in json.dumps(events)
        assert wf.advance(run).status == "completed"
    finally:
        shutil.rmtree(Path("/tmp/canal-example") / name, ignore_errors=True)


def test_cleanup_build_stops_for_confirmation_before_deleting() -> None:
    store, executor, events = MemoryRunStore(), LocalExecutor(), Events()
    wf = engine(store, executor, events)
    directory = "t-" + secrets.token_hex(4)
    target = Path("/tmp/canal-builds") / directory
    try:
        run = wf.start("cleanup-build").run_id
        view = wf.advance(run, {"directory": directory, "file_count": 2})
        assert view.status == "waiting_input"
        assert view.step is not None
        assert view.step.id == "review"
        assert f"About to delete **{target}**: 2 files, 2048 bytes" in view.step.instructions
        paused = wf.advance(run)
        assert paused.status == "waiting_confirmation"
        assert paused.confirmation is not None
        assert "rm-recursive" in paused.confirmation.reason
        assert target.is_dir()
        done = wf.advance(run, confirm="c_ok")
        assert [r.id for r in done.ran] == ["delete-build", "verify"]
        assert done.status == "completed"
        assert not target.exists()
        rm = [r for r in executor.requests if r.step_id == "delete-build"]
        assert rm[-1].argv == ("rm", "-rf", "--", str(target))
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_cleanup_build_rejects_a_path_as_directory() -> None:
    wf = engine(MemoryRunStore(), LocalExecutor(), Events())
    run = wf.start("cleanup-build").run_id
    with pytest.raises(Exception, match="must match pattern") as caught:
        wf.advance(run, {"directory": "../../etc"})
    assert getattr(caught.value, "code", "") == "GATE_REJECTED"
