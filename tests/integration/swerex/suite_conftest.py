"""The conftest SWE-ReX's own ``tests/test_execution.py`` imports (its sdist ships none), written for Canal.

test_swerex_suite.py copies this file as ``conftest.py`` next to the test file it fetched from the package
index, in a package of their own, and runs them in a virtual environment with SWE-ReX's client. It gives
the fixtures the suite expects:

- ``remote_runtime``: SWE-ReX's ``RemoteRuntime`` talking to ``canal swerex serve`` (the real CLI, in a
  project made for the run: ``CANAL_SWEREX_PROJECT``), one server for the whole run;
- ``runtime_with_default_session``: the same with the session ``default`` open;
- ``_Action`` and ``_Command``: SWE-ReX's ``BashAction`` and ``Command`` with a bounded timeout;
- ``tmp_path``: a fresh folder inside the project's workspace. SWE-ReX's tests read and write through the
  runtime and then look at the same path on their own machine; Canal's endpoint takes the host's name
  of the project folder as well as the sandbox's (/workspace), so the path means the same on both sides.

Names are resolved only for loopback: the suite's ``test_server_dead`` asks for a public name, and these
tests send nothing off the machine, so that lookup fails here at once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from swerex.runtime.abstract import BashAction, CloseBashSessionRequest, Command, CreateBashSessionRequest
from swerex.runtime.remote import RemoteRuntime

PROJECT = Path(os.environ["CANAL_SWEREX_PROJECT"])
CANAL = os.environ["CANAL_SWEREX_CANAL"]
KEY = os.environ["CANAL_SWEREX_API_KEY"]
AGENT_UID = int(os.environ.get("CANAL_SWEREX_UID", "1000"))
_real_getaddrinfo = socket.getaddrinfo


class _Action(BashAction):
    timeout: float | None = 30


class _Command(Command):
    timeout: float | None = 30


def _loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host not in ("127.0.0.1", "localhost", "::1", None):
        raise socket.gaierror(socket.EAI_NONAME, f"{host}: not resolved in these tests (loopback only)")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.getaddrinfo = _loopback_only


@pytest.fixture(scope="session")
def canal_endpoint() -> Iterator[tuple[str, int]]:
    server = subprocess.Popen([CANAL, "swerex", "serve", "--port", "0"], cwd=PROJECT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""  # SWE-ReX endpoint of P: http://H:PORT
        if "http://" not in line:
            why = server.stderr.read() if server.stderr else ""
            raise RuntimeError(f"canal swerex serve did not start: {line}{why}")
        host, _, port = line.rsplit("http://", 1)[1].strip().rpartition(":")
        yield host, int(port)
    finally:
        server.terminate()
        server.communicate(timeout=60)  # and its pipes closed


@pytest.fixture
def remote_runtime(canal_endpoint: tuple[str, int]) -> RemoteRuntime:
    host, port = canal_endpoint
    return RemoteRuntime(host=f"http://{host}", port=port, auth_token=KEY)


@pytest.fixture
async def runtime_with_default_session(remote_runtime: RemoteRuntime) -> AsyncIterator[RemoteRuntime]:
    await remote_runtime.create_session(CreateBashSessionRequest())
    yield remote_runtime
    await remote_runtime.close_session(CloseBashSessionRequest())


@pytest.fixture
def tmp_path() -> Path:
    folder = PROJECT / "swerex-tmp" / uuid.uuid4().hex[:12]
    folder.mkdir(parents=True)
    for path in (folder, folder.parent):
        os.chown(path, AGENT_UID, AGENT_UID)
    return folder
