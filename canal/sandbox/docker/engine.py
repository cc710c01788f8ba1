"""The one place a Docker client is made; connection failures become ENGINE_UNAVAILABLE."""

from __future__ import annotations

import gc
import os
import warnings

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
        return client
    except (docker.errors.DockerException, OSError) as exc:
        if client is not None:
            client.close()  # its connection pool holds the socket that failed
        failure = str(exc)  # only the words: the traceback would keep a half-made client's socket alive
    _drop_half_made_clients()
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    msg = f"No Docker engine answers at {where}: {failure}"
    raise EngineUnavailable(msg, hint=ENGINE_HINT, details={"docker_host": where})


def _drop_half_made_clients() -> None:
    """A client whose constructor failed (the server's API version could not be fetched) is never
    returned, so it cannot be closed: its session's socket is finalized here, its ResourceWarning
    silenced (the failure is reported as ENGINE_UNAVAILABLE instead)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
