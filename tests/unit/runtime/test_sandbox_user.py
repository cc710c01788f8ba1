"""``sandbox.user: auto`` (the default) runs the sandbox as the project folder's owner, never root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canal.runtime.errors import STATE_DIR_UNUSABLE
from canal.runtime.sandboxes.start import sandbox_ref, sandbox_spec, sandbox_user
from canal.runtime.services import Services
from canal.runtime.settings.config import CanalConfig, parse_config
from tests.error_codes import raises_code


def test_default_and_a_section_without_user_are_auto() -> None:
    assert CanalConfig().sandbox.user == "auto"
    assert parse_config("sandbox:\n  network: none\n").sandbox.user == "auto"
    assert parse_config("sandbox:\n  user: '1234:1234'\n").sandbox.user == "1234:1234"


def test_auto_is_the_project_owner(tmp_path: Path, state_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    if os.geteuid() == 0:
        os.chown(project, 1001, 1002)
        expected = "1001:1002"
    else:
        expected = f"{os.getuid()}:{os.getgid()}"
    spec = sandbox_spec(Services(project, config=CanalConfig()), sandbox_ref(project, "default"))
    assert spec.user == expected
    assert spec.env["HOME"] == "/home/agent"
    assert any(m.target == "/canal/output" and m.read_only for m in spec.mounts)


def test_a_root_owned_project_runs_as_uid_0_so_it_can_write_its_workspace(state_dir: Path) -> None:
    assert Path("/").stat().st_uid == 0
    assert sandbox_user(Services(Path("/"), config=CanalConfig())) == "0:0"


def test_an_explicit_user_is_kept(state_dir: Path, tmp_path: Path) -> None:
    config = parse_config("sandbox:\n  user: '2000:2000'\n")
    assert sandbox_user(Services(tmp_path, config=config)) == "2000:2000"


def test_state_inside_the_project_is_refused_before_anything_starts(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("CANAL_STATE_DIR", str(project / ".canal-state"))
    with raises_code(STATE_DIR_UNUSABLE) as refused:
        sandbox_spec(Services(project, config=CanalConfig()), sandbox_ref(project, "default"))
    assert refused.value.code == "STATE_DIR_UNUSABLE"
    assert "CANAL_STATE_DIR" in refused.value.hint
