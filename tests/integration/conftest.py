"""Fixtures that talk to the real Docker engine."""

from __future__ import annotations

import pytest

from tests.integration.gvisor import gvisor_problem, runtimes_under_test


@pytest.fixture(scope="session")
def docker_client():  # type: ignore[no-untyped-def]
    from canal.sandbox.docker.engine import docker_client as make

    client = make()
    yield client
    client.close()


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:  # type: ignore[no-untyped-def]
    """The default sandbox image, built (or found in the build cache) once per session."""
    from canal.sandbox.docker.image import build_default_image

    return build_default_image(docker_client).tag


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that takes ``runtime`` runs once per runtime the engine has (tests/integration/gvisor.py):
    generated, never skipped."""
    if "runtime" in metafunc.fixturenames:
        metafunc.parametrize("runtime", runtimes_under_test(), scope="module")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Says so when the runsc cases were not generated (an engine without gVisor, outside CI)."""
    problem = gvisor_problem()
    if problem is not None:
        terminalreporter.write_line(f"runsc cases not generated: {problem} (CANAL_REQUIRE_RUNSC=1 fails "
                                    "the run instead; sudo scripts/ensure-docker registers it)")
