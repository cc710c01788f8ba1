"""Escape suite: what a command inside the default sandbox must not be able to do."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.sandbox.docker_backend import DockerBackend
from canal.sandbox.errors import MountRefused
from canal.sandbox.result import EndReason
from canal.sandbox.spec import Mount, SandboxSpec


@pytest.fixture(scope="module")
def box(docker_backend: DockerBackend, sandbox_image: str) -> Iterator[str]:
    os.environ["CANAL_HOST_SECRET_T"] = "host-only-value"
    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    docker_backend.create(name, SandboxSpec(image=sandbox_image, limits={"memory": "128m", "pids": 64}))  # type: ignore[arg-type]
    yield name
    docker_backend.remove(name)
    del os.environ["CANAL_HOST_SECRET_T"]


def test_no_network(docker_backend: DockerBackend, box: str) -> None:
    ifaces = docker_backend.exec(box, ["ls", "/sys/class/net"]).stdout.read_bytes().split()
    assert ifaces == [b"lo"]
    probe = "import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)"
    result = docker_backend.exec(box, ["python3", "-c", probe], timeout_s=20)
    assert result.exit_code == 1
    assert b"Network is unreachable" in result.stderr.read_bytes()


@pytest.mark.parametrize("path", ["/x", "/etc/x", "/usr/bin/x", "/canal/output/x", "/var/x"])
def test_no_write_outside_workspace_and_tmpfs(docker_backend: DockerBackend, box: str, path: str) -> None:
    result = docker_backend.exec(box, ["touch", path])
    assert result.exit_code == 1
    assert b"Read-only file system" in result.stderr.read_bytes()


def test_writes_inside_workspace_tmp_and_home_work(docker_backend: DockerBackend, box: str) -> None:
    assert docker_backend.exec(box, "touch /workspace/a /tmp/a $HOME/a").ok


def test_no_capabilities_and_no_privilege_gain(docker_backend: DockerBackend, box: str) -> None:
    status = docker_backend.exec(box, ["cat", "/proc/self/status"]).stdout.read_bytes().decode()
    caps = {line.split(":")[0]: line.split()[1] for line in status.splitlines() if line.startswith("Cap")}
    assert caps["CapEff"] == caps["CapPrm"] == caps["CapBnd"] == "0000000000000000"
    assert "NoNewPrivs:\t1" in status
    assert docker_backend.exec(box, ["id", "-u"]).stdout.read_bytes() == b"1000\n"


def test_no_host_environment_and_no_canal_state(docker_backend: DockerBackend, box: str,
                                                state_dir: Path, sandbox_image: str) -> None:
    env = docker_backend.exec(box, ["env"]).stdout.read_bytes()
    assert b"CANAL_HOST_SECRET_T" not in env
    assert b"host-only-value" not in env
    assert docker_backend.exec(box, ["ls", str(state_dir)]).exit_code == 2
    guarded = DockerBackend(docker_backend.client, owner=docker_backend.owner, protected_paths=[state_dir])
    spec = SandboxSpec(image=sandbox_image, mounts=(Mount(source=state_dir.parent, target="/data"),))
    with pytest.raises(MountRefused):
        guarded.create(f"canal-t-{uuid.uuid4().hex[:10]}", spec)


def test_fork_bomb_is_contained_and_reported(docker_backend: DockerBackend, box: str) -> None:
    result = docker_backend.exec(box, ":(){ :|:& };:", timeout_s=10)
    assert "pids" in result.limits_hit
    assert result.reason in (EndReason.KILLED, EndReason.HARD_TIMEOUT)
    assert result.survivors == ()
    assert docker_backend.exec(box, "echo alive").stdout.read_bytes() == b"alive\n"


def test_memory_bomb_is_contained_and_reported(docker_backend: DockerBackend, box: str) -> None:
    bomb = "a = []\nwhile True: a.append(bytearray(10**7))"
    result = docker_backend.exec(box, ["python3", "-c", bomb], timeout_s=30)
    assert result.reason is EndReason.OOM_KILLED
    assert result.exit_code == 137
    assert "memory" in result.limits_hit
    assert docker_backend.exec(box, "echo alive").stdout.read_bytes() == b"alive\n"


def test_detached_children_are_dead_after_a_timeout(docker_backend: DockerBackend, box: str) -> None:
    command = ("setsid sleep 1001 & nohup sleep 1002 >/dev/null 2>&1 & "
               "( ( sleep 1003 & ) & ) ; sleep 1004")
    result = docker_backend.exec(box, command, timeout_s=1)
    assert result.reason is EndReason.HARD_TIMEOUT
    assert result.exit_code == 124
    assert result.survivors == ()
    left = docker_backend.exec(box, ["ps", "-eo", "args"]).stdout.read_bytes()
    assert b"sleep 100" not in left
