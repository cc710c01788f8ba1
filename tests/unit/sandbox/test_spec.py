from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from canal.sandbox.backend import LABEL_QUOTA
from canal.sandbox.docker.spec import canal_labels, run_kwargs
from canal.sandbox.errors import MOUNT_REFUSED
from canal.sandbox.spec import Mount, SandboxSpec, check_mount, check_mounts
from tests.error_codes import raises_code


def test_defaults_are_hardened() -> None:
    spec = SandboxSpec()
    kwargs = run_kwargs(spec, name="canal-x", labels={})
    assert spec.network.mode == "none"
    assert kwargs["network_mode"] == "none"
    assert spec.user == "1000:1000"
    assert kwargs["read_only"] is True
    assert kwargs["cap_drop"] == ["ALL"]
    assert kwargs["security_opt"] == ["no-new-privileges"]
    assert kwargs["init"] is True
    assert kwargs["pids_limit"] == spec.limits.pids
    assert kwargs["mem_limit"] == kwargs["memswap_limit"] == spec.limits.memory
    assert set(kwargs["tmpfs"]) == {"/tmp", "/home/agent", "/workspace"}
    assert kwargs["runtime"] == "runc"


def test_hardening_turns_off_only_when_asked() -> None:
    kwargs = run_kwargs(SandboxSpec(cap_drop_all=False, no_new_privileges=False, read_only_root=False),
                        name="canal-x", labels={})
    assert "cap_drop" not in kwargs
    assert "security_opt" not in kwargs
    assert kwargs["read_only"] is False


def test_sizes_parse_and_unknown_fields_fail() -> None:
    assert SandboxSpec(limits={"memory": "512m"}).limits.memory == 512 * 1024**2  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        SandboxSpec(limits={"memory": "lots"})  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        SandboxSpec(privileged=True)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        SandboxSpec(network="host")  # type: ignore[arg-type]


def test_reserved_labels_and_bad_targets_fail() -> None:
    with pytest.raises(ValidationError):
        SandboxSpec(labels={"canal.owner": "me"})
    for target in ("relative", "/", "/proc/x", "/a/../b"):
        with pytest.raises(ValidationError):
            Mount(source=Path("/tmp"), target=target)


@pytest.mark.parametrize("source", ["/", "/etc", "/etc/ssl", "/proc", "/sys/fs", "/dev", "/var/run",
                                    "/run", "/var/run/docker.sock"])
def test_dangerous_mounts_are_refused(source: str) -> None:
    with raises_code(MOUNT_REFUSED) as info:
        check_mount(Mount(source=Path(source), target="/data"))
    assert info.value.code == "MOUNT_REFUSED"
    assert info.value.details["source"] == source


def test_state_dir_refused_inside_containing_and_through_symlink(tmp_path: Path) -> None:
    state = tmp_path / "home" / ".local" / "share" / "canal"
    state.mkdir(parents=True)
    link = tmp_path / "innocent"
    os.symlink(state, link)
    for source in (state, state / "audit", tmp_path / "home", link):
        with raises_code(MOUNT_REFUSED):
            check_mount(Mount(source=source, target="/data"), [state])
    project = tmp_path / "project"
    project.mkdir()
    check_mounts(SandboxSpec(mounts=(Mount(source=project, target="/workspace"),)), [state])


def test_symlink_to_etc_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "etc-link"
    os.symlink("/etc", link)
    with raises_code(MOUNT_REFUSED):
        check_mount(Mount(source=link, target="/data"))


def test_only_a_writable_bind_mounted_workspace_is_watched_against_its_quota(tmp_path: Path) -> None:
    def labels(*mounts: Mount) -> dict[str, str]:
        return canal_labels(SandboxSpec(mounts=mounts), owner="o", name="n")

    rw = Mount(source=tmp_path, target="/workspace", read_only=False)
    ro = Mount(source=tmp_path, target="/workspace")
    nested_rw = Mount(source=tmp_path, target="/workspace/out", read_only=False)
    elsewhere_rw = Mount(source=tmp_path, target="/data", read_only=False)
    assert labels(rw)[LABEL_QUOTA] == str(1024**3)
    assert LABEL_QUOTA not in labels(ro)  # nothing in the sandbox can grow it
    assert LABEL_QUOTA not in labels(ro, elsewhere_rw)
    assert LABEL_QUOTA in labels(ro, nested_rw)  # a writable folder inside it can
    assert LABEL_QUOTA not in labels()  # a tmpfs workspace has its own size
