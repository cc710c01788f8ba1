"""Issue 36, finding 2 (high): the agent wrote ``sub/canal.yaml`` holding only the defaults, from its own
sandbox, then ran ``canal -C sub run``: a ``runtime: runsc`` project ran on runc (the host's kernel) and
``approval: human`` went back to the agent approving itself. With the default layout (a state folder per
project) nobody was asked. Now a nested project is bound by the enclosing approval, through every door
(``-C``, ``CANAL_PROJECT_DIR``, the Python API)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers
from trust_cli import run_cli

from canal.core.errors import CanalError
from canal.host.approvals import Approver
from canal.runtime.api import Canal
from canal.runtime.services import Services

pytestmark = pytest.mark.docker

OUTER = "sandbox:\n  runtime: {runtime}\npolicy:\n  profile: standard\n  approval: human\n"
AGENT_WRITES = "mkdir -p sub/deeper && printf 'policy:\\n  profile: standard\\n' > sub/canal.yaml"


@pytest.fixture
def outer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docker_client: Any, sandbox_image: str,
          runtime: str) -> Iterator[Path]:
    """An approved project, each project with its own state folder (no CANAL_STATE_DIR: the default)."""
    monkeypatch.delenv("CANAL_STATE_DIR", raising=False)
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    folder = tmp_path / "outer"
    folder.mkdir()
    (folder / "canal.yaml").write_text(OUTER.format(runtime=runtime))
    chown_tree(folder)
    services = Services(folder)
    services.trust.approve(Approver(user="alice", how="tty"), services.trust.status().snapshot.digest)
    yield folder
    for project in (folder, folder / "sub", folder / "sub" / "deeper"):
        remove_project_containers(docker_client, project)


def _code(shown: Any) -> str:
    return str(json.loads(shown.stdout)["code"])


def test_a_nested_canal_yaml_written_by_the_agent_is_refused(outer: Path) -> None:
    written = run_cli(outer, "run", "--", AGENT_WRITES)
    assert written.returncode == 0, written.stdout + written.stderr
    assert (outer / "sub" / "canal.yaml").is_file()
    shown = run_cli(outer, "-C", "sub", "run", "--json", "--", "touch ran-nested")
    assert shown.returncode == 2, shown.stdout + shown.stderr
    assert _code(shown) == "CONFIG_UNAPPROVED"
    error = json.loads(shown.stdout)
    assert error["details"]["enclosing"] == str(outer.resolve())
    assert {c["setting"] for c in error["details"]["changes"] if c["loosens"]} >= {"policy.approval"}
    assert not (outer / "sub" / "ran-nested").exists()


def test_every_door_to_a_nested_folder_is_bound(outer: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (outer / "sub" / "deeper").mkdir(parents=True)
    with pytest.raises(CanalError) as info, Canal(outer / "sub" / "deeper") as canal:
        canal.run("touch ran-api")
    assert info.value.code == "CONFIG_UNAPPROVED"
    env_door = run_cli(outer, "run", "--json", "--", "true")  # the outer project itself still runs
    assert env_door.returncode == 0, env_door.stdout
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(outer / "sub" / "deeper"))
    shown = run_cli(outer / "sub" / "deeper", "run", "--json", "--", "touch ran-env")
    assert _code(shown) == "CONFIG_UNAPPROVED", shown.stdout
    assert not list((outer / "sub").rglob("ran-*"))


def test_a_nested_project_that_keeps_the_settings_runs_under_them(outer: Path, runtime: str) -> None:
    (outer / "sub").mkdir()
    (outer / "sub" / "canal.yaml").write_text(OUTER.format(runtime=runtime) + "unattended: true\n")
    shown = run_cli(outer, "-C", "sub", "run", "--json", "--", "dmesg 2>&1; true")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert ("Starting gVisor" in json.loads(shown.stdout)["output"]) is (runtime == "runsc")
    if os.geteuid() == 0:  # as the project's owner would see it: the nested project's own record
        assert Services(outer / "sub").trust.status().state == "approved"
