"""Fixtures that talk to the real Docker engine."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def docker_client():  # type: ignore[no-untyped-def]
    from canal.sandbox.engine import docker_client as make

    client = make()
    yield client
    client.close()


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:  # type: ignore[no-untyped-def]
    """The default sandbox image, built (or found in the build cache) once per session."""
    from canal.sandbox.image import build_default_image

    return build_default_image(docker_client).tag
