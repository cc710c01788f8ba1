from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from canal.runtime.audit import AuditLog

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
