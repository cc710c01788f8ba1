"""Finding 2 of issue 15: the mount check was a short denylist; another project's state, system and
engine folders, credentials and Canal's own venv were mounted read-write. Now: an allowlist (the
project, or roots a person listed), and folders refused whatever canal.yaml says."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import remove_project_containers

from canal.host.paths import data_root
from canal.runtime.admin.doctor import check_mounts
from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.errors import MOUNT_REFUSED
from canal.sandbox.spec import Mount
from tests.error_codes import raises_code

pytestmark = pytest.mark.docker

REFUSED = ["/usr/bin", "/usr/local/bin", "/root/.ssh", "/root", "/run/docker", "/run/containerd",
           "/var/lib/containerd", "/var/run", "/run/docker.sock", "/home", "/lib", "/var/log", "/etc", "/"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docker_client,  # type: ignore[no-untyped-def]
            sandbox_image: str) -> Iterator[Path]:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # every project's state under tmp_path
    monkeypatch.delenv("CANAL_STATE_DIR", raising=False)
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True)
    yield folder
    remove_project_containers(docker_client, folder)


def config_with(source: Path | str, roots: tuple[Path, ...] = (), read_only: bool = False) -> CanalConfig:
    mount = Mount(source=Path(source), target="/mnt/x", read_only=read_only)
    return CanalConfig.model_validate({"sandbox": {"mounts": [mount.model_dump()], "user": "auto"},
                                       "mount_roots": [str(r) for r in roots]})


def refused(project: Path, source: Path | str, roots: tuple[Path, ...] = ()) -> MOUNT_REFUSED:
    with Canal(project, config=config_with(source, roots)) as canal, raises_code(MOUNT_REFUSED) as info:
        canal.up()
    assert canal.ps() == []  # nothing was started
    return info.value


@pytest.mark.parametrize("source", REFUSED)
def test_system_engine_home_and_credentials_folders_are_refused_even_when_listed(project: Path,
                                                                                 source: str) -> None:
    err = refused(project, source, roots=(Path("/"),))
    assert err.details["rule"] in {"system", "engine", "home", "credentials", "canal-install"}, err.details


def test_canal_state_of_another_project_and_canal_install_are_refused(project: Path, tmp_path: Path) -> None:
    other = data_root() / "projects" / "other-0123456789ab"
    other.mkdir(parents=True)
    assert refused(project, other, roots=(tmp_path,)).details["rule"] == "canal-state"
    assert refused(project, sys.prefix, roots=(Path(sys.prefix).parent,)).details["rule"] in {
        "canal-install", "home"}
    assert refused(project, tmp_path / "config", roots=(tmp_path,)).details["rule"] == "canal-state"


def test_a_folder_outside_the_project_needs_a_listed_root(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "datasets"
    outside.mkdir()
    err = refused(project, outside)
    assert err.details["rule"] == "not-allowlisted"
    assert "mount_roots" in err.hint
    assert [a.kind for a in err.next] == ["config.approve", "doctor"]


def test_allowed_mounts_are_read_only_by_default(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "datasets"
    outside.mkdir()
    (outside / "a.csv").write_text("1,2\n")
    config = CanalConfig.model_validate({"sandbox": {"user": "auto", "mounts": [
        {"source": str(outside), "target": "/data"}, {"source": str(project / "data"), "target": "/inner"}]},
        "mount_roots": [str(tmp_path / "datasets")]})
    with Canal(project, config=config) as canal:
        result = canal.run("cat /data/a.csv; touch /data/b 2>&1; touch /inner/c 2>&1; true")
        canal.down()
    assert result.output.count("Read-only file system") == 2, result.text
    assert result.output.startswith("1,2\n")


def test_doctor_says_why_a_mount_is_refused(project: Path) -> None:
    (project / "canal.yaml").write_text("sandbox:\n  mounts: [{source: /run/containerd, target: /c}]\n")
    check = check_mounts(project)
    assert not check.ok
    assert "REFUSED /run/containerd -> /c (ro)" in check.detail
    assert "container engine" in check.detail
