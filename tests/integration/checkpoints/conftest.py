"""A real project (owned by the sandbox user) and a sandbox image that has ``make``.

The default image has no ``make``; these tests build a derived image with it (Debian's package, from
the mirror the default image already uses), tagged and labelled for tests only.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from canal.runtime.api import Canal
from canal.runtime.settings.config import parse_config

MAKE_IMAGE = "canal/sandbox-make-test:0.1.0"
DOCKERFILE = """FROM {base}
USER root
RUN apt-get update && apt-get install -y --no-install-recommends make && rm -rf /var/lib/apt/lists/*
USER 1000:1000
LABEL canal.test=checkpoints
"""


@pytest.fixture(scope="session")
def make_image(docker_client: Any, sandbox_image: str) -> str:
    import docker.errors

    try:
        docker_client.images.get(MAKE_IMAGE)
        return MAKE_IMAGE
    except docker.errors.ImageNotFound:
        pass
    docker_client.images.build(fileobj=io.BytesIO(DOCKERFILE.format(base=sandbox_image).encode()),
                               tag=MAKE_IMAGE, rm=True, labels={"canal.test": "checkpoints"})
    return MAKE_IMAGE


@pytest.fixture
def host_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    return tmp_path


@pytest.fixture
def open_canal(make_image: str) -> Iterator[Any]:
    opened: list[Canal] = []

    def make(project: Path) -> Canal:
        canal = Canal(project, config=parse_config(f"sandbox: {{image: {make_image}}}\n"))
        opened.append(canal)
        return canal

    yield make
    for canal in opened:
        for fork in canal.forks():  # their containers and overlay mounts go too
            canal.discard(fork.name)
        canal.down()
        canal.close()
