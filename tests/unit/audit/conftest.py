from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from canal.cli.admin import audit_cmd
from canal.cli.main import CanalGroup
from canal.host.audit import AuditLog
from canal.runtime.services import Services
from canal.runtime.settings.project import find_project_dir

KEY = b"k" * 32
KEY_ID = "k-test"


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "audit" / "audit.jsonl"


@pytest.fixture
def log(log_path: Path) -> AuditLog:
    return AuditLog(log_path, KEY, KEY_ID)


@pytest.fixture
def fill() -> Callable[[AuditLog, int], list[str]]:
    def _fill(log: AuditLog, n: int) -> list[str]:
        return [log.append("test.event", {"i": i, "text": f"line {i}"}) for i in range(1, n + 1)]

    return _fill


MASTER = base64.b64encode(b"m" * 32).decode()


@pytest.fixture
def cli() -> click.Group:
    group = CanalGroup("canal")
    audit_cmd.register(group)
    return group


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "state"
    monkeypatch.setenv("CANAL_STATE_DIR", str(state))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "project").mkdir(exist_ok=True)
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(tmp_path / "project"))
    monkeypatch.setenv("CANAL_KEY", MASTER)
    log = Services(find_project_dir()).audit
    log.append("run.started", {"sandbox": "default", "container_id": "c1", "image_digest": "sha256:1",
                               "command": "rm -rf build/", "cwd": "/workspace", "approver": "alice",
                               "decision": {"action": "confirm", "rule_ids": ["rm-recursive"],
                                            "source": "standard", "policy_hash": "p"}})
    log.append("run.completed", {"started": "a-000001", "sandbox": "default", "exit_code": 0,
                                 "reason": "exited", "duration_ms": 420, "output_bytes": 0,
                                 "output_sha256": "e3b0c442"})
    log.append("trash.put", {"path": "build/", "trash_id": "t1"})
    return log.path
