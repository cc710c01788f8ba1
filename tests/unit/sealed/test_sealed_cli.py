"""``canal state`` and ``canal key`` through the real CLI group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import cli
from canal.host.keys import KeyStore
from canal.host.paths import project_key, state_dir_for, state_path_for
from canal.runtime.services import sealed_store_for
from canal.runtime.settings.project import find_project_dir
from tests.unit.sealed.conftest import run_doc


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state-dir"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "project").mkdir(exist_ok=True)
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(tmp_path / "project"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    project = find_project_dir()
    store = sealed_store_for(state_dir_for(project), KeyStore(), project_key(project))
    store.save("run-1", run_doc(), sensitive_paths=["gate.deploy.password"], expected_revision=0)
    return tmp_path


def test_state_show_masks_and_reveal_decrypts(env: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["state", "show", "run-1", "--json"])
    assert shown.exit_code == 0, shown.output
    body = json.loads(shown.output)
    assert body["doc"]["gate"]["deploy"]["password"] == "[sealed]"
    assert "hunter2" not in shown.output
    revealed = runner.invoke(cli, ["state", "show", "run-1", "--json", "--reveal"])
    assert json.loads(revealed.output)["doc"]["gate"]["deploy"]["password"] == "hunter2-plain-gate-value"
    audit = (state_path_for(env / "project") / "audit" / "audit.jsonl").read_text()
    assert "state.reveal" in audit
    assert "hunter2" not in audit


def test_state_verify_reports_damage(env: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["state", "verify"]).exit_code == 0
    path = state_path_for(env / "project") / "state" / "run-1.json"
    path.write_bytes(path.read_bytes()[:50])
    result = runner.invoke(cli, ["state", "verify", "--json"])
    assert result.exit_code == 1
    assert json.loads(result.output)["documents"][0]["code"] == "SEALED_TRUNCATED"


def test_key_rotate_then_retire(env: Path) -> None:
    runner = CliRunner()
    keys = json.loads(runner.invoke(cli, ["key", "show", "--json"]).output)["keys"]
    old = keys[0]["id"]
    assert "material" not in keys[0]
    rotated = runner.invoke(cli, ["key", "rotate", "--json"])
    assert rotated.exit_code == 0, rotated.output
    assert json.loads(rotated.output)["resealed"] == 1
    retired = runner.invoke(cli, ["key", "retire", old])
    assert retired.exit_code == 0, retired.output
    assert runner.invoke(cli, ["state", "show", "run-1"]).exit_code == 0


def test_retire_is_refused_while_a_file_uses_the_key(env: Path) -> None:
    runner = CliRunner()
    old = json.loads(runner.invoke(cli, ["key", "show", "--json"]).output)["keys"][0]["id"]
    from canal.host.keys import KeyStore
    KeyStore().rotate()  # a new primary, but nothing re-sealed
    result = runner.invoke(cli, ["key", "retire", old])
    assert result.exit_code == 2
    assert "KEY_RETIRE_REFUSED" in result.output
