"""The audit log is bound to its project and its history; state verify knows every ledgered file."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import cli
from canal.runtime.api import Canal
from canal.runtime.services import Services

DOC = "bind-doc"


@pytest.fixture
def ran(canal: Canal, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The module's project after a real run and a sealed document; its log restored afterwards."""
    result = canal.run("echo hello")
    assert result.status == "ok", result.text
    if not canal._services.sealed.path_for(DOC).exists():
        canal._services.sealed.save(DOC, {"n": 1}, expected_revision=0)
    log = canal._services.audit.path
    keep = log.read_bytes()
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(canal.project_dir))
    yield log
    log.write_bytes(keep)


def canal_cli(*args: str) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["canal", *args])
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_first_record_names_the_project_and_the_key(canal: Canal, ran: Path) -> None:
    first = json.loads(ran.read_text().splitlines()[0])
    assert first["event"] == "audit.opened"
    assert first["data"] == {"project_id": canal._services.project_id, "key_id": first["key_id"]}
    assert canal_cli("audit", "verify")[0] == 0


def test_an_emptied_log_fails_verify(ran: Path) -> None:
    ran.write_bytes(b"")
    code, _, err = canal_cli("audit", "verify")
    assert code == 1
    assert err.startswith("AUDIT_LOG_MISSING\n"), err


def test_a_deleted_log_fails_verify(ran: Path) -> None:
    ran.unlink()
    code, _, err = canal_cli("audit", "verify")
    assert code == 1
    assert err.startswith("AUDIT_LOG_MISSING\n"), err


def test_another_projects_log_fails_verify(ran: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CANAL_STATE_DIR", str(tmp_path / "other-state"))
        foreign = Services(other).audit
        foreign.append("run.denied", {"sandbox": "default", "command": "ls"})
    shutil.copyfile(foreign.path, ran)
    code, _, err = canal_cli("audit", "verify")
    assert code == 1
    assert err.startswith("AUDIT_LOG_FOREIGN\n"), err


def test_a_deleted_state_file_fails_state_verify(canal: Canal, ran: Path) -> None:
    assert canal_cli("state", "verify")[0] == 0
    doc = canal._services.sealed.path_for(DOC)
    keep = doc.read_bytes()
    doc.unlink()
    try:
        code, out, _ = canal_cli("state", "verify")
    finally:
        doc.write_bytes(keep)
    assert code == 1
    assert f"FAIL {DOC}" in out
    assert "SEALED_DELETED" in out
    assert "0 ok, 1 failed" in out
