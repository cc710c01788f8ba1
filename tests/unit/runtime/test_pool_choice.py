"""The server's warm pools are asked for only for a spec one of them can serve: making them the first
time costs a Docker client and a sweep, on the way of a new project's first command."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from canal.runtime.sandboxes import start
from canal.runtime.sandboxes.start import OUTPUT_MOUNT
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.spec import Mount, SandboxSpec


class Resources:
    def __init__(self) -> None:
        self.made = 0
        self.made_pools: Any = object()

    def pools(self) -> Any:
        self.made += 1
        return self.made_pools


@pytest.fixture
def resources() -> Resources:
    return Resources()


def test_a_spec_mounting_the_project_makes_no_pools(resources: Resources, tmp_path: Path) -> None:
    mounts = (Mount(source=tmp_path, target="/workspace"), Mount(source=tmp_path, target=OUTPUT_MOUNT))
    services: Any = SimpleNamespace(resources=resources)
    assert start._pools(services, DockerBackend(object()), SandboxSpec(mounts=mounts)) is None
    assert resources.made == 0


def test_a_spec_a_pool_can_serve_gets_them(resources: Resources, tmp_path: Path) -> None:
    spec = SandboxSpec(mounts=(Mount(source=tmp_path, target=OUTPUT_MOUNT, read_only=True),))
    services: Any = SimpleNamespace(resources=resources)
    assert start._pools(services, DockerBackend(object()), spec) is resources.made_pools
    assert resources.made == 1
