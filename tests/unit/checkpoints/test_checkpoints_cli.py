"""``canal checkpoints`` lists the checkpoints whose records verify and names the ones that do not."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import CanalGroup
from canal.cli.work import checkpoint_cmd
from canal.runtime.services import Services


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"m" * 32).decode())
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("a\n")
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(project))
    return project


def test_a_corrupt_record_is_named_and_the_others_listed(project: Path) -> None:
    store = Services(project).checkpoints
    ids = [store.take(kind="run", command=f"step {i}").id for i in range(3)]
    bad = store.records_dir / "0000000002.json"
    bad.write_text(bad.read_text().replace("step 1", "ls"))
    group = CanalGroup("canal")
    checkpoint_cmd.register(group)
    shown = CliRunner().invoke(group, ["checkpoints"])
    assert shown.exit_code == 0, shown.output
    assert "step 0" in shown.stdout
    assert "step 2" in shown.stdout
    assert "step 1" not in shown.stdout
    assert f"{ids[1]}     CORRUPT record 0000000002.json: its HMAC does not match" in shown.stderr
    as_json = CliRunner().invoke(group, ["checkpoints", "--json"])
    data = json.loads(as_json.stdout)
    assert [r["checkpoint"]["id"] for r in data["checkpoints"]] == [ids[0], ids[2]]
    assert data["corrupt"] == [{"id": ids[1], "record": "0000000002.json", "why": "its HMAC does not match"}]
