"""Projects whose canal.yaml the agent attacks, with real sandboxes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CANAL = str(Path(sys.executable).parent / "canal")


@pytest.fixture
def host_env(tmp_path: Path, sandbox_image: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    monkeypatch.delenv("CANAL_APPROVER_KEY", raising=False)
    return tmp_path


def run_cli(project: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``canal ARGS`` as a harness runs it for the agent: pipes, no terminal."""
    env = {**os.environ, "CANAL_NO_SERVER": "1"}
    return subprocess.run([CANAL, *args], cwd=project, input=stdin, capture_output=True, text=True,
                          env=env, timeout=120, check=False)
