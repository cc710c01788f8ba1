"""Fixtures for workflow engine tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from wf_helpers import BASIC, Events, write_workflow

from canal.workflows.memory_store import MemoryRunStore


@pytest.fixture
def roots(tmp_path: Path) -> list[Path]:
    root = tmp_path / "defs"
    write_workflow(root, "basic", BASIC)
    return [root]


@pytest.fixture
def store() -> MemoryRunStore:
    return MemoryRunStore()


@pytest.fixture
def events() -> Events:
    return Events()


