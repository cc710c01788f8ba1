"""The sandbox cannot read or change the trash: a real hardened container with the workspace mounted
searches its whole filesystem for markers that only trashed files hold, and tries to reach the trash."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.host.trash import Trash, remove_paths
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.errors import MOUNT_REFUSED
from canal.sandbox.spec import Mount, SandboxSpec
from tests.error_codes import raises_code

SMALL = {"memory": "256m", "pids": 128, "cpus": 1.0}


@pytest.fixture
def backend(docker_client) -> Iterator[DockerBackend]:  # type: ignore[no-untyped-def]
    b = DockerBackend(docker_client, owner=f"canal-test-files-{uuid.uuid4().hex[:8]}")
    yield b
    for info in b.list():
        b.remove(info.name)
    b.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    ws.chmod(0o777)  # the sandbox user (uid 1000) works in it
    return ws


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sandbox_cannot_read_or_change_the_trash(backend: DockerBackend, sandbox_image: str,
                                                 workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    trash = Trash(state / "trash")
    marker = f"cnlmark{uuid.uuid4().hex}"
    (workspace / "secret.txt").write_text(f"{marker}-deleted\n")
    (workspace / "build" / "obj").mkdir(parents=True)
    (workspace / "build" / "obj" / "a.o").write_text(f"{marker}-in-folder\n")
    (workspace / "keep.txt").write_text(f"{marker}-backup\n")
    (workspace / "visible.txt").write_text(f"{marker}-visible\n")  # control: reachable, so found
    removed = remove_paths(trash, workspace, [Path("secret.txt"), Path("build")], recursive=True,
                           base=workspace)
    backup = trash.put(workspace / "keep.txt", workspace=workspace, move=False, actor="pipeline")
    (workspace / "keep.txt").write_text("overwritten\n")
    # Open the trash to everyone for this test: only its absence from the sandbox may hide it,
    # not host permissions (the sandbox user is uid 1000, the trash belongs to us).
    for p in [tmp_path, state, *state.rglob("*")]:
        if not p.is_symlink():
            p.chmod(0o777 if p.is_dir() else 0o666)
    stored = {p: _sha(p) for p in trash.root.rglob("*") if p.is_file()}
    assert len(stored) == 3 + 3  # three items, three info records

    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    spec = SandboxSpec(image=sandbox_image, mounts=(Mount(source=workspace, target="/workspace",
                                                          read_only=False),), limits=SMALL)  # type: ignore[arg-type]
    backend.create(name, spec)
    try:
        found = backend.exec(name, ["grep", "-rlsF", "--exclude-dir=proc", "--exclude-dir=sys",
                                    "--exclude-dir=dev", marker, "/"], timeout_s=120)
        assert found.stdout.read_bytes().decode().split() == ["/workspace/visible.txt"]
        assert backend.exec(name, ["ls", str(trash.root)]).exit_code == 2
        assert backend.exec(name, ["test", "-e", str(trash.root / "info")]).exit_code == 1
        # Try to damage it anyway (exit codes ignored): the host-side check below shows nothing changed.
        backend.exec(name, ["sh", "-c", 'rm -rf "$1"; mkdir -p "$1/trash/info" && echo x > "$1/trash/info/x"',
                            "sh", str(state)])
        # A marker in the container's own filesystem is found: the search itself works everywhere.
        assert backend.exec(name, ["sh", "-c", f"printf %s {marker}-tmp > /tmp/probe"]).ok
        again = backend.exec(name, ["grep", "-rlsF", "--exclude-dir=proc", "--exclude-dir=sys",
                                    "--exclude-dir=dev", marker, "/"], timeout_s=120)
        assert sorted(again.stdout.read_bytes().decode().split()) == ["/tmp/probe", "/workspace/visible.txt"]
    finally:
        backend.remove(name)

    assert {p: _sha(p) for p in trash.root.rglob("*") if p.is_file()} == stored
    for outcome in removed:
        assert outcome.entry is not None
        trash.restore(outcome.entry.id)
    trash.restore(backup.id, to=workspace / "keep.restored.txt")
    assert (workspace / "secret.txt").read_text() == f"{marker}-deleted\n"
    assert (workspace / "build" / "obj" / "a.o").read_text() == f"{marker}-in-folder\n"
    assert (workspace / "keep.restored.txt").read_text() == f"{marker}-backup\n"


def test_a_mount_that_would_expose_the_trash_is_refused(docker_client, sandbox_image: str,  # type: ignore[no-untyped-def]
                                                        tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "trash").mkdir(parents=True)
    guarded = DockerBackend(docker_client, owner=f"canal-test-files-{uuid.uuid4().hex[:8]}",
                            protected_paths=[state])
    spec = SandboxSpec(image=sandbox_image, mounts=(Mount(source=tmp_path, target="/data"),))
    with raises_code(MOUNT_REFUSED):
        guarded.create(f"canal-t-{uuid.uuid4().hex[:10]}", spec)
    assert guarded.list() == []
    guarded.close()
