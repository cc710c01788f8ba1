"""The console's unit tests: a project with approved settings naming alice (a passkey) and bob."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from console_helpers import ORIGIN, PORT, Setup, approve_settings, settings_text
from webauthn_soft import SoftAuthenticator

from canal.console.app import Console


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"k" * 32).decode())
    project = tmp_path / "project"
    project.mkdir()
    alice = SoftAuthenticator(ORIGIN)
    approve_settings(project, settings_text(alice.line()))
    return Setup(project, Console(project, PORT, 600), alice)
