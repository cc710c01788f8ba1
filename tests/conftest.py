"""Shared fixtures. Integration tests (tests/integration/) are marked ``docker`` and need a real engine:
without one they are skipped, unless CANAL_REQUIRE_DOCKER=1 (CI), where a missing engine fails the run.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REQUIRE_DOCKER = os.environ.get("CANAL_REQUIRE_DOCKER") == "1"
# Root-only tests (OS users, kernel overlayfs, root-owned projects) skip when not root, unless
# CANAL_REQUIRE_ROOT=1 (CI): then the run fails instead of dropping them.
REQUIRE_ROOT = os.environ.get("CANAL_REQUIRE_ROOT") == "1"

# Every `canal` a test starts runs in-process unless the test asks for the server (tests/integration/
# server/ do, each with its own runtime folder). Whatever server does start in this session's runtime
# folder is stopped when the session ends.
os.environ["CANAL_NO_SERVER"] = "1"
RUNTIME_DIR = Path(tempfile.mkdtemp(prefix="canal-test-runtime-"))
os.environ["CANAL_RUNTIME_DIR"] = str(RUNTIME_DIR)
# cel-python's parser cache (policy/parser_cache.py) stays in the session's own folder too
CACHE_DIR = None if "CANAL_CACHE_DIR" in os.environ else Path(tempfile.mkdtemp(prefix="canal-test-cache-"))
if CACHE_DIR is not None:
    os.environ["CANAL_CACHE_DIR"] = str(CACHE_DIR)


@pytest.fixture(scope="session", autouse=True)
def _no_server_left() -> Iterator[None]:
    yield
    from server_helpers import stop_servers

    stop_servers(RUNTIME_DIR)
    for folder in (RUNTIME_DIR, CACHE_DIR):
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _engine_problem() -> str | None:
    try:
        from canal.sandbox.docker.engine import docker_client

        docker_client(timeout=10).close()
    except Exception as exc:
        return str(exc)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if REQUIRE_ROOT and os.geteuid() != 0:
        raise pytest.UsageError("CANAL_REQUIRE_ROOT=1 but the tests do not run as root: the root-only "
                                "tests would skip. Fix: run them as root (CI does), or unset it")
    integration = [i for i in items if "tests/integration" in i.nodeid.replace(os.sep, "/")]
    for item in integration:
        item.add_marker(pytest.mark.docker)
    if not integration:
        return
    problem = _engine_problem()
    if problem is None:
        return
    if REQUIRE_DOCKER:
        raise pytest.UsageError(f"CANAL_REQUIRE_DOCKER=1 but no Docker engine answers: {problem}\n"
                                "Fix: sudo scripts/ensure-docker")
    skip = pytest.mark.skip(reason=f"no Docker engine ({problem}); set CANAL_REQUIRE_DOCKER=1 to fail")
    for item in integration:
        item.add_marker(skip)


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Canal's host-side state directory, isolated per test."""
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("CANAL_STATE_DIR", str(d))
    return d


@pytest.fixture
def canal_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Canal's host folders for one test: its own state and config folders under ``tmp_path`` and a
    key in the environment (no key ring file)."""
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"k" * 32).decode())
    return tmp_path
