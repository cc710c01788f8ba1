"""Fixtures for the tool catalog: a copy of tests/data/tools/project per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "tools"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "project"
    shutil.copytree(DATA / "project", dest)
    return dest


@pytest.fixture
def broken_dir() -> Path:
    return DATA / "broken"
