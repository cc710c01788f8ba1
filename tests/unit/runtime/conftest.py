"""A project folder with its own state, config and key (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(canal_home: Path) -> Path:
    root = canal_home / "project"
    root.mkdir()
    return root
