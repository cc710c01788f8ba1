"""The one place a Docker client is made; connection failures become ENGINE_UNAVAILABLE."""

from __future__ import annotations

import os

import docker
import docker.errors

from canal.sandbox.errors import EngineUnavailable

ENGINE_HINT = ("start Docker (sudo systemctl start docker; on a bare Debian machine, from a Canal checkout: "
               "sudo scripts/ensure-docker), then check: docker info")


def docker_client(timeout: int = 120) -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (or the default socket), checked with a ping."""
    client: docker.DockerClient | None = None
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except (docker.errors.DockerException, OSError) as exc:
        if client is not None:
            client.close()  # its connection pool holds the socket that failed
        where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        msg = f"No Docker engine answers at {where}: {exc}"
        raise EngineUnavailable(msg, hint=ENGINE_HINT, details={"docker_host": where}) from exc
    return client
