"""Docker-only behaviours: timeouts, broken sessions, vanished sandboxes, big output, pool, reaper."""

from __future__ import annotations

import tracemalloc
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from canal.sandbox.backend import LABEL_POOL
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.pool import WarmPool
from canal.sandbox.errors import RUNTIME_UNKNOWN, ImageNotFound, SandboxNotRunning
from canal.sandbox.reaper import reap
from canal.sandbox.result import EndReason
from canal.sandbox.spec import SandboxSpec
from tests.error_codes import raises_code


def unique() -> str:
    return f"canal-t-{uuid.uuid4().hex[:10]}"


def test_idle_timeout_kills_a_silent_command(docker_backend: DockerBackend, shared_box: str) -> None:
    result = docker_backend.exec(shared_box, "echo start; sleep 30", idle_timeout_s=1)
    assert result.reason is EndReason.IDLE_TIMEOUT
    assert result.exit_code == 124
    assert result.stdout.read_bytes() == b"start\n"


def test_a_command_that_kills_the_session_gets_a_fresh_one(docker_backend: DockerBackend,
                                                           shared_box: str) -> None:
    docker_backend.exec(shared_box, "cd /tmp")
    result = docker_backend.exec(shared_box, "kill -9 $PPID; sleep 5")
    assert result.reason is EndReason.KILLED
    assert "fresh session" in result.detail
    after = docker_backend.exec(shared_box, "pwd")
    assert (after.ok, after.stdout.read_bytes()) == (True, b"/workspace\n")


def test_a_command_that_wedges_the_session_gets_a_fresh_one(docker_backend: DockerBackend,
                                                            shared_box: str) -> None:
    result = docker_backend.exec(shared_box, "kill -STOP $PPID")
    assert result.reason is EndReason.KILLED
    assert "stopped answering" in result.detail
    assert docker_backend.exec(shared_box, "echo ok").stdout.read_bytes() == b"ok\n"


def test_sandbox_removed_under_a_command(docker_backend: DockerBackend, small_spec: SandboxSpec) -> None:
    name = unique()
    docker_backend.create(name, small_spec)
    try:
        docker_backend.warm(name)
        container = docker_backend.client.containers.get(name)
        docker_backend.client.api.kill(container.id)
        result = docker_backend.exec(name, "echo hi")
        assert result.reason is EndReason.SANDBOX_VANISHED
        with pytest.raises(SandboxNotRunning):
            docker_backend.exec(name, "echo hi")
    finally:
        docker_backend.remove(name)


def test_big_output_keeps_host_memory_bounded(docker_backend: DockerBackend, shared_box: str,
                                              tmp_path: Path) -> None:
    tracemalloc.start()
    result = docker_backend.exec(shared_box, ["head", "-c", "67108864", "/dev/zero"], spool_dir=tmp_path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert result.stdout.size == 64 * 1024 * 1024
    assert result.stdout.path is not None
    assert result.stdout.path.stat().st_size == 64 * 1024 * 1024
    assert peak < 16 * 1024 * 1024


def test_unknown_runtime_and_image(docker_backend: DockerBackend, small_spec: SandboxSpec) -> None:
    with raises_code(RUNTIME_UNKNOWN) as info:
        docker_backend.create(unique(), small_spec.model_copy(update={"runtime": "nosuchrt"}))
    assert "runc" in info.value.message
    with pytest.raises(ImageNotFound):
        docker_backend.create(unique(), small_spec.model_copy(update={"image": "canal/none:0"}))


def test_pool_acquire_and_reaper(docker_backend: DockerBackend, small_spec: SandboxSpec) -> None:
    # Its own owner: the reaper acts on every sandbox of an owner, and others share docker_backend.
    docker_backend = DockerBackend(docker_backend.client, owner=unique())
    pool = WarmPool(docker_backend, small_spec, size=1)
    name = unique()
    try:
        pool.fill()
        info = pool.acquire(name)
        assert info.name == name
        assert info.labels[LABEL_POOL] == "1"
        assert docker_backend.exec(name, "echo warm").stdout.read_bytes() == b"warm\n"
    finally:
        pool.close()
    stopped = unique()
    docker_backend.create(stopped, small_spec)
    docker_backend.stop(stopped)
    foreign = docker_backend.client.containers.run(small_spec.image, ["sleep", "60"], detach=True,
                                                   name=unique(), labels={"canal.sandbox": "x"})
    try:
        removed = reap(docker_backend)
        assert stopped in removed
        assert name not in removed
        assert docker_backend.get(name) is not None
        later = reap(docker_backend, now=datetime.now(tz=UTC) + timedelta(days=2))
        assert name in later
        foreign.reload()
        assert foreign.status == "running"
    finally:
        foreign.remove(force=True)
        docker_backend.remove(name)
        docker_backend.remove(stopped)


def test_per_command_env_and_workdir_do_not_persist_for_str(docker_backend: DockerBackend,
                                                            shared_box: str) -> None:
    once = docker_backend.exec(shared_box, "echo $ONLY; pwd", env={"ONLY": "x"}, workdir="/tmp")
    assert once.stdout.read_bytes() == b"x\n/tmp\n"
    after = docker_backend.exec(shared_box, "echo \"[$ONLY]\"; pwd")
    assert after.stdout.read_bytes() == b"[]\n/workspace\n"
