"""Fixtures for the sandbox layer: a Docker backend owned by this test run, cleaned up at the end."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.spec import SandboxSpec

SMALL = {"memory": "256m", "pids": 128, "cpus": 1.0}


@pytest.fixture(scope="session")
def owner() -> str:
    return f"canal-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def docker_backend(docker_client, owner: str) -> Iterator[DockerBackend]:  # type: ignore[no-untyped-def]
    backend = DockerBackend(docker_client, owner=owner, output_cap=4096)
    yield backend
    for info in backend.list():
        backend.remove(info.name)
    backend.close()


@pytest.fixture(scope="module")
def shared_box(docker_backend: DockerBackend, sandbox_image: str) -> Iterator[str]:
    """One running sandbox per test module (tests that need a fresh one make their own)."""
    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    docker_backend.create(name, SandboxSpec(image=sandbox_image, limits=SMALL))  # type: ignore[arg-type]
    yield name
    docker_backend.remove(name)


def unique() -> str:
    return f"canal-t-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def small_spec(sandbox_image: str) -> SandboxSpec:
    return SandboxSpec(image=sandbox_image, limits=SMALL)  # type: ignore[arg-type]
