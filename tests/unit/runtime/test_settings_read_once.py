"""Issue 33, finding 5: a ``Canal`` reads where its state, config and keys are when it is made, not when
it first needs them: an environment changed afterwards (another project's variables set by a library,
a test, a long-lived host) neither moves its audit log nor changes its keys."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from canal.runtime.api import Canal
from canal.sandbox.fake import FakeBackend


def test_the_state_config_and_key_are_the_ones_in_force_when_the_canal_was_made(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canal = Canal(project, backend=FakeBackend())
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "elsewhere-state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "elsewhere-config"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"x" * 32).decode())
    ran = canal.run("echo hello > greeting.txt")
    assert ran.status == "ok", ran.text
    assert canal._services.state_dir.is_relative_to(tmp_path / "state")
    assert canal.host_folders["config"] == tmp_path / "config"
    assert not (tmp_path / "elsewhere-state").exists()
    assert not (tmp_path / "elsewhere-config").exists()
    # the records it wrote verify under the key in force when it was made
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"k" * 32).decode())
    again = Canal(project, backend=FakeBackend())
    assert again.audit.verify().ok
    assert [c.id for c in again._services.checkpoints.list()] == [ran.checkpoint.id if ran.checkpoint else ""]
