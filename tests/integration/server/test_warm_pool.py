"""The server's warm pool hands a new project its first sandbox, made ahead with its running session."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from project_helpers import remove_project_containers
from served_cli import ServedProject
from server_helpers import stop_servers

from canal.runtime.sandboxes.pooling import Pools
from canal.runtime.sandboxes.start import OUTPUT_MOUNT
from canal.sandbox.backend import LABEL_POOL
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.reaper import reap
from canal.sandbox.spec import Mount, SandboxSpec


@pytest.fixture
def two_projects(tmp_path: Path, docker_client: Any, sandbox_image: str) -> Iterator[list[ServedProject]]:
    """Two projects that mount nothing of themselves (workspace: none), with state in the default layout
    under a temporary data folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_") or k == "CANAL_CACHE_DIR"}
    env.update(CANAL_RUNTIME_DIR=str(tmp_path / "rt"), XDG_DATA_HOME=str(tmp_path / "data"),
               CANAL_CONFIG_DIR=str(tmp_path / "config"))
    projects = []
    for name in ("first", "second"):
        root = tmp_path / name
        root.mkdir()
        (root / "canal.yaml").write_text("workspace: none\n")
        projects.append(ServedProject(root, tmp_path / "rt", env))
    try:
        yield projects
    finally:
        stop_servers(tmp_path / "rt")
        for project in projects:
            remove_project_containers(docker_client, project.root)


def status(project: ServedProject) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(project.run("server", "status", "--json").stdout)
    return data


def test_a_new_projects_first_sandbox_comes_from_the_pool(two_projects: list[ServedProject],
                                                          docker_client: Any) -> None:
    first, second = two_projects
    assert first.run("run", "--", "true").returncode == 0  # made on demand; the server starts a pool
    deadline = time.monotonic() + 120
    while status(first).get("pooled_ready", 0) < 1 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert status(first).get("pooled_ready") == 1
    done = second.run("run", "--max-lines", "3", "--", "seq 1 50")
    assert done.returncode == 0, done.stderr
    ps = second.run("ps", "--json")
    container = json.loads(ps.stdout)["sandboxes"][0]["container"]
    labels = docker_client.containers.get(container).labels
    assert labels[LABEL_POOL] == "1"  # handed out by the pool, not made for this call
    saved = next(line for line in done.stdout.splitlines() if "Full output: /canal/output/" in line)
    path = saved.split("Full output: ")[1].split()[0]
    # the output folder moved into this project's state, and the sandbox's mount followed it
    assert second.run("run", "--", f"tail -1 {path}").stdout.startswith("50\n")
    pool_owner = labels["canal.owner"]
    server_pid = status(second)["pid"]
    # it lets go of its socket at once (a new server may start), then removes its spares: --wait
    # returns once its process is gone, so a script may count containers right after
    stopped = second.run("server", "stop", "--wait", "--json")
    assert stopped.returncode == 0, stopped.stderr
    [entry] = json.loads(stopped.stdout)["stopped"]
    assert (entry["pid"], entry["exited"]) == (server_pid, True)
    stat = Path(f"/proc/{server_pid}/stat")  # gone, or a zombie its adopting parent has not reaped yet
    assert not stat.exists() or stat.read_bytes().rpartition(b")")[2].split()[0] == b"Z"
    pooled = {"label": [f"canal.owner={pool_owner}", f"{LABEL_POOL}=1"]}
    left = docker_client.containers.list(all=True, filters=pooled)
    assert [c.name for c in left] == [container]  # the spare is gone; the handed-out one is the project's


def test_a_handed_out_sandbox_is_the_projects_for_gc_and_a_new_servers_sweep(
        tmp_path: Path, docker_client: Any, sandbox_image: str) -> None:
    """Docker labels are fixed at creation, so a pooled sandbox keeps the pool's owner label when it is
    handed out; the project's backend must still list it as the project's (canal gc reaps it, a pool
    sweep of a restarted server leaves it alone), as it does a sandbox made on demand."""
    tag = uuid.uuid4().hex[:10]
    pool_backend = DockerBackend(docker_client, owner=f"canal-pool-{os.geteuid()}-t{tag}")
    project = DockerBackend(docker_client, owner=f"canal-proj{tag}-{tag}ab")
    pools = Pools(pool_backend, tmp_path / "pool")
    name = f"{project.owner}-default"
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    spec = SandboxSpec(image=sandbox_image,  # type: ignore[arg-type]
                       mounts=(Mount(source=outputs, target=OUTPUT_MOUNT, read_only=True),))
    try:
        pools.remember(spec, None)
        deadline = time.monotonic() + 120
        while pools.status()["pooled_ready"] < 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert pools.take(spec, name, outputs, project) is not None
        assert project.exec(name, "echo pooled").stdout.read_bytes() == b"pooled\n"
        assert [i.name for i in project.list()] == [name]
        pools.close()  # the server stops: its spares go, the handed-out sandbox stays
        # a new server sweeps what the old one left in its pool, never what it handed out
        after_restart = Pools(DockerBackend(docker_client, owner=pool_backend.owner), tmp_path / "pool2")
        assert name not in after_restart.sweep_leftovers()
        assert project.get(name) is not None
        assert reap(project, now=datetime.now(tz=UTC) + timedelta(days=2)) == [name]
    finally:
        pools.close()
        project.remove(name)
        for info in pool_backend.list():
            pool_backend.remove(info.name)
