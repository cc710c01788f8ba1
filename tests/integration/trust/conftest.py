"""Projects whose canal.yaml the agent attacks, with real sandboxes."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def host_env(tmp_path: Path, sandbox_image: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    monkeypatch.delenv("CANAL_APPROVER_KEY", raising=False)
    return tmp_path
