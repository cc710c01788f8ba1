"""Which sandbox runtimes the integration suites run under, decided once at collection.

runc always; gVisor (``runsc``) when the engine has it registered. A test that takes ``runtime`` is
generated once per runtime in that list, so a green run never holds a skipped runsc case: on an engine
without gVisor the runsc cases are not generated, and the run's summary says so
(``pytest_terminal_summary`` in tests/integration/sandbox/conftest.py). CI sets
``CANAL_REQUIRE_RUNSC=1``: there, an engine without gVisor stops the run at collection.
"""

from __future__ import annotations

import functools
import os

import pytest

REQUIRE_RUNSC = os.environ.get("CANAL_REQUIRE_RUNSC") == "1"


@functools.cache
def gvisor_problem() -> str | None:
    """Why runsc cases cannot run on this engine, or None when they can (or no engine answers: then the
    Docker-missing path of tests/conftest.py decides for every integration test)."""
    from canal.sandbox.docker.engine import docker_client
    from canal.sandbox.runtimes import gvisor_status

    try:
        client = docker_client(timeout=10)
    except Exception:
        return None
    try:
        usable, detail = gvisor_status(sorted(client.info().get("Runtimes") or {}))
    finally:
        client.close()
    return None if usable else detail


def runtimes_under_test() -> tuple[str, ...]:
    """``("runc", "runsc")``, or ``("runc",)`` on an engine without gVisor (a usage error instead when
    CANAL_REQUIRE_RUNSC=1)."""
    problem = gvisor_problem()
    if problem is None:
        return ("runc", "runsc")
    if REQUIRE_RUNSC:
        msg = f"CANAL_REQUIRE_RUNSC=1 but {problem}; fix: sudo scripts/ensure-docker"
        raise pytest.UsageError(msg)
    return ("runc",)
