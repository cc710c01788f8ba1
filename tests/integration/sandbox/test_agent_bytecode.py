"""A real sandbox's agent starts from the shipped bytecode when its Python reads the host's, and from
the source when it does not (canal/sandbox/docker/agent_program.py)."""

from __future__ import annotations

from importlib.util import MAGIC_NUMBER

import pytest

from canal.sandbox.docker import agent_program, session
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.errors import SESSION_FAILED
from canal.sandbox.result import EndReason
from canal.sandbox.spec import SandboxSpec
from tests.error_codes import raises_code
from tests.integration.sandbox.conftest import unique


def _works(backend: DockerBackend, spec: SandboxSpec) -> None:
    name = unique()
    backend.create(name, spec)
    try:
        result = backend.exec(name, "echo ok; python3 -c 'import sys; print(sys.version_info[:2])'")
        assert (result.reason, result.exit_code) == (EndReason.EXITED, 0)
        assert result.stdout.read_bytes().startswith(b"ok\n")
    finally:
        backend.remove(name)


def test_a_session_starts_from_the_code_part_when_the_images_python_reads_it(
        docker_backend: DockerBackend, shared_box: str, small_spec: SandboxSpec,
        monkeypatch: pytest.MonkeyPatch) -> None:
    probe = ["python3", "-c", "import importlib.util as u, sys; sys.stdout.write(u.MAGIC_NUMBER.hex())"]
    same = docker_backend.exec(shared_box, probe).stdout.read_bytes().decode() == MAGIC_NUMBER.hex()
    # the source part made unusable: only the code part can start this agent
    program = agent_program.pack(agent_program.agent_code(), b"raise SystemExit('the source part ran')")
    monkeypatch.setattr(session, "agent_program", lambda: program)
    if same:  # the default image's python3 and a CPython 3.11 host (CI's)
        _works(docker_backend, small_spec)
    else:  # another host Python: its bytecode is never loaded, so this agent cannot start
        with raises_code(SESSION_FAILED):
            _works(docker_backend, small_spec)


def test_a_session_starts_from_the_source_when_the_magic_differs(docker_backend: DockerBackend,
                                                                 small_spec: SandboxSpec,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    code = b"\x00\x00\r\n" + agent_program.agent_code()[4:]  # another Python's bytecode
    program = agent_program.pack(code, agent_program.AGENT_SOURCE.encode())
    monkeypatch.setattr(session, "agent_program", lambda: program)
    _works(docker_backend, small_spec)
