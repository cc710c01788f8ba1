from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from canal.host.trash import Trash


class RecordingAudit:
    """An AuditSink that keeps events in memory and hands out sequential record ids."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any], str]] = []

    def append(self, event: str, data: Mapping[str, Any], *, actor: str = "agent") -> str:
        self.events.append((event, dict(data), actor))
        return f"a-{len(self.events):06d}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def audit() -> RecordingAudit:
    return RecordingAudit()


@pytest.fixture
def trash(tmp_path: Path, audit: RecordingAudit) -> Trash:
    return Trash(tmp_path / "state" / "trash", audit)
