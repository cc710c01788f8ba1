"""Issue 35: without an engine (and without CANAL_REQUIRE_DOCKER) the integration tests must skip, but
the probe leaked the socket of a half-made client, and the ResourceWarning errored the run instead."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

import pytest

from canal.sandbox.docker.engine import docker_client
from canal.sandbox.errors import EngineUnavailable


def test_no_engine_is_engine_unavailable_and_leaves_no_socket(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-engine.sock'}")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        with pytest.raises(EngineUnavailable) as info:
            docker_client(timeout=2)
        del info
        gc.collect()
