"""Workflow advance shows each automated step as it starts and ends (the hook, after the audit record)."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.cli.workflow_render import step_progress
from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.runtime.wfrun.factory import open_engine
from canal.sandbox.fake import FakeBackend


def test_lines_for_start_end_failure_and_confirmation() -> None:
    lines: list[str] = []
    show = step_progress(lines.append)
    show("workflow.step.started", {"step": "02-build", "attempt": 1})
    show("workflow.step.completed", {"step": "02-build", "exit_code": 0})
    show("workflow.step.started", {"step": "03-ship", "attempt": 2})
    show("workflow.step.failed", {"step": "03-ship", "code": "STEP_FAILED"})
    show("workflow.step.confirmation_required", {"step": "04-delete"})
    show("workflow.run.started", {"run_id": "wr_1"})  # not a step: nothing shown
    assert lines[0] == "[step 02-build] started"
    assert lines[1].startswith("[step 02-build] ended: exit 0 after ")
    assert lines[2:] == ["[step 03-ship] started (attempt 2)", "[step 03-ship] failed: STEP_FAILED",
                         "[step 04-delete] waits for confirmation"]


def test_the_engine_reports_automated_steps_as_they_run(tmp_path: Path, state_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    (project / "dist").mkdir(parents=True)
    canal = Canal(project, config=CanalConfig(), backend=FakeBackend())
    seen: list[str] = []
    engine = open_engine(canal, on_event=lambda name, data: seen.append(f"{name} {data.get('step')}"))
    run = engine.start("cleanup-build", unattended=False).run_id
    engine.advance(run, {"directory": "dist"})
    started = [e for e in seen if e.startswith("workflow.step.started")]
    assert started
    assert any(e.split()[0] in ("workflow.step.completed", "workflow.step.failed",
                                "workflow.step.confirmation_required") for e in seen)
    audit = canal._services.audit.path.read_text()
    assert audit.count('"workflow.step.started"') == len(started)  # the audit saw each one too
