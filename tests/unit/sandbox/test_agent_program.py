"""The agent's program: compiled code for a Python that reads the host's bytecode, source for any other
(canal/sandbox/docker/agent_program.py). The boot line runs here in a real interpreter."""

from __future__ import annotations

import marshal
import subprocess
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType

import pytest

import canal.sandbox.agent
from canal.sandbox.docker.agent_program import (
    AGENT_SOURCE,
    Launch,
    agent_code,
    agent_modules,
    agent_program,
    pack,
    sandbox_file,
)


def _payload(code_part: bytes, source: str, magic: bytes = MAGIC_NUMBER) -> Launch:
    return pack(magic + code_part, source.encode())


def _boot(launch: Launch) -> str:
    done = subprocess.run([sys.executable, "-c", launch.boot], input=launch.data,
                          capture_output=True, check=True, timeout=30)
    return done.stdout.decode()


CODE = marshal.dumps(({"m": (False, "unused")}, compile("print('code', sorted(MODULES))", "x", "exec")))
SOURCE = "print('source')"


def test_a_python_that_reads_the_hosts_bytecode_runs_the_code_part() -> None:
    assert _boot(_payload(CODE, SOURCE)) == "code ['m']\n"


@pytest.mark.parametrize("payload", [
    _payload(CODE, SOURCE, magic=b"\x00\x00\r\n"),  # another Python's bytecode: never loaded
    _payload(b"\x00not marshal", SOURCE),  # a code part this Python cannot read
    _payload(marshal.dumps(42), SOURCE),  # one it reads but that is not (modules, loader)
])
def test_any_other_compiles_the_source_part(payload: Launch) -> None:
    assert _boot(payload) == "source\n"


def test_the_code_part_holds_every_module_under_its_sandbox_file_name() -> None:
    data = agent_code()
    assert data[:4] == MAGIC_NUMBER
    modules, loader = marshal.loads(data[4:])
    sources = agent_modules()
    assert modules.keys() == sources.keys()
    assert isinstance(loader, CodeType)

    def files(code: CodeType) -> set[str]:
        return {code.co_filename}.union(*(files(c) for c in code.co_consts if isinstance(c, CodeType)))

    for name, (package, shipped) in modules.items():
        assert package == sources[name][0]
        if not sources[name][1]:  # the bare parents carry no code
            assert shipped == ""
            continue
        code = marshal.loads(shipped)  # each module's own: read when the agent imports it
        assert files(code) == {sandbox_file(name, package)}
        assert code.co_code == compile(sources[name][1], sandbox_file(name, package), "exec",
                                       dont_inherit=True, optimize=0).co_code
    host_folder = str(Path(canal.sandbox.agent.__file__).parent).encode()
    assert host_folder not in data  # the host's install path stays on the host


def test_the_launch_reads_the_code_part_then_the_source_behind_a_short_boot_line() -> None:
    launch = agent_program()
    assert launch.data.endswith(AGENT_SOURCE.encode())
    assert MAGIC_NUMBER in launch.data
    assert len(launch.boot) < 160  # what ps shows in the sandbox (tests/integration/newuser: < 200)
    # the marshalled bytes of equal code differ with how it was made (compiled, or read from the cache)
    code = launch.data[launch.data.index(MAGIC_NUMBER):len(launch.data) - len(AGENT_SOURCE.encode())]
    assert marshal.loads(code[4:])[0].keys() == marshal.loads(agent_code()[4:])[0].keys()
