"""gVisor in integration tests: suites that take a ``runtime`` run under runsc when the engine has it."""

from __future__ import annotations

import os
from typing import Any

import pytest

REQUIRE_RUNSC = os.environ.get("CANAL_REQUIRE_RUNSC") == "1"


def require_gvisor(docker_client: Any) -> None:
    """Skip when the engine has no gVisor registration; fail instead when CANAL_REQUIRE_RUNSC=1 (CI)."""
    from canal.sandbox.runtimes import gvisor_status

    usable, detail = gvisor_status(sorted(docker_client.info().get("Runtimes") or {}))
    if usable:
        return
    if REQUIRE_RUNSC:
        pytest.fail(f"CANAL_REQUIRE_RUNSC=1 but {detail}; fix: sudo scripts/ensure-docker")
    pytest.skip(f"{detail}; set CANAL_REQUIRE_RUNSC=1 to fail instead")
