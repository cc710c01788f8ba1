"""A command that may write a file the checkpoint has no copy of is confirmed first (denied when
unattended); one that cannot reach it runs. Over the in-package FakeBackend."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings
from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.fake import FakeBackend


@pytest.fixture
def canal(tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Canal:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "big.bin").write_bytes(b"b" * 4096)
    (project / "notes.txt").write_text("n\n")
    config = CanalConfig(checkpoints=CheckpointSettings(max_file_bytes=1024))
    return Canal(project, config=config, backend=FakeBackend())


@pytest.mark.parametrize("command", [": > data/big.bin", "rm -f data/big.bin", "truncate -s 0 data/big.bin",
                                     "python3 -c 'open(\"x\", \"w\")'"])
def test_a_command_that_may_write_it_is_confirmed(canal: Canal, command: str) -> None:
    result = canal.run(command)
    assert result.status == "confirmation_required", result.text
    assert result.confirmation is not None
    assert "data/big.bin" in result.confirmation.reason
    assert "checkpoint-uncovered" in result.confirmation.rule_ids


def test_unattended_it_is_denied(canal: Canal) -> None:
    result = canal.run(": > data/big.bin", unattended=True)
    assert result.status == "denied", result.text


def test_a_command_that_cannot_reach_it_runs(canal: Canal) -> None:
    result = canal.run("echo more >> notes.txt")
    assert result.status == "ok", result.text


def test_overwriting_a_gitignored_file_is_confirmed_but_a_new_one_is_not(canal: Canal) -> None:
    project = canal._services.project_dir
    (project / ".gitignore").write_text(".env\nlocal.db\n")
    (project / ".env").write_text("TOKEN=mine\n")
    asked = canal.run("echo TOKEN=x > .env")
    assert asked.status == "confirmation_required", asked.text
    assert asked.confirmation is not None
    assert ".env" in asked.confirmation.reason
    made = canal.run("echo 1 > local.db")  # nothing there yet: nothing to lose
    assert made.status == "ok", made.text
