"""Every prune is in the audit log (docs/checkpoints.md), retention's own included: before this, only a
person's ``canal checkpoints --prune`` was recorded, and the checkpoints retention removed while
commands ran left no trace. The record is written before anything is removed: when it cannot be
written, nothing is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.fake import FakeBackend

SETTINGS = {"checkpoints": {"keep": 2, "floor_count": 1, "floor_hours": 0}}


def pruned_records(canal: Canal) -> list[dict[str, object]]:
    lines = canal._services.audit.path.read_text().splitlines()
    return [json.loads(line) for line in lines if '"checkpoint.pruned"' in line]


def test_what_retention_removes_is_in_the_audit_log(project: Path) -> None:
    canal = Canal(project, config=CanalConfig.model_validate(SETTINGS), backend=FakeBackend())
    taken = [canal.run(f"mkdir d{i}").checkpoint for i in range(8)]
    kept = {c.id for c in canal._services.checkpoints.list()}
    gone = [c.id for c in taken if c is not None and c.id not in kept]
    assert gone, "retention pruned nothing: the test shows nothing"
    records = pruned_records(canal)
    assert [cp for r in records for cp in r["data"]["pruned"]] == gone  # type: ignore[index]
    assert all(r["data"]["by"] == "retention" and r["actor"] == "canal" for r in records)  # type: ignore[index]
    assert canal.audit.verify().ok


def test_a_prune_whose_record_cannot_be_written_removes_nothing(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canal = Canal(project, config=CanalConfig.model_validate(SETTINGS), backend=FakeBackend())
    canal.run("mkdir d0")
    audit = canal._services.audit
    real = audit.append

    def refusing(event: str, *args: object, **kwargs: object) -> str:
        if event == "checkpoint.pruned":
            raise OSError(28, "No space left on device")
        return real(event, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(audit, "append", refusing)
    for i in range(1, 8):
        canal.run(f"mkdir d{i}")
    assert len(canal._services.checkpoints.list()) == 8  # nothing went unrecorded
