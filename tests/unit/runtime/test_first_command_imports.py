"""What a project's first command imports, and when (issue 33: a new project's first ``canal run``, its
server's start included, is to take under 2x ``docker run --rm``).

The server that a first ``canal run`` starts imports what the command needs in the command's own
thread. The sandbox is started once the settings passed their approval check, and the engine makes it
while the pipeline, the policy engine and the presenter load: so none of those may be imported before
(they were, by ``runtime/api.py`` and the CLI's ``run``, 0.3-0.5 s of CPU ahead of the sandbox). And a
command imports nothing of the other doors: the workflow engine, tasks, the records sub-APIs, the MCP
front end and SDK, the console. Each probe runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# loaded while the engine makes the sandbox: never before it starts
AFTER_THE_SANDBOX_STARTS = (
    "canal.runtime.run.pipeline", "canal.policy.engine", "canal.policy.cel", "celpy", "lark", "pendulum",
    "canal.presenter.presentation", "canal.host.checkpoints.store", "canal.host.forks.store", "pathspec",
    "canal.host.redact", "regex", "hyperscan",
)
# other commands' and other doors' modules: never loaded by a command
OTHER_DOORS = (
    "canal.workflows", "canal.runtime.wfrun", "canal.runtime.tasks", "canal.runtime.admin",
    "canal.runtime.surface", "canal.runtime.calls", "canal.runtime.remote", "canal.runtime.tools",
    "canal.runtime.mcpremote", "canal.runtime.fileops", "canal.mcp", "mcp", "mcp_types", "canal.console",
    "canal.swerex", "cryptography.x509",
)
# a read-only command takes no checkpoint and runs in no fork: it builds neither store
READ_ONLY_NEEDS_NO = ("canal.host.checkpoints.store", "canal.host.forks.store", "pathspec")

# the CLI's ``canal run`` in-process, up to the moment its sandbox would start (after the settings check)
BEFORE_START = """
import contextlib, json, sys
import canal.runtime.api as api

@contextlib.contextmanager
def started_early(services, backend_of, ref, on_build=None):
    services.config  # the approval check comes first, as in runtime/sandboxes/early.py
    print(json.dumps(sorted(sys.modules)))
    raise SystemExit(0)
    yield

api.started_early = started_early
from canal.cli.main import cli
cli.main(["-C", sys.argv[1], "run", "--", "true"], prog_name="canal")
"""

# a whole command through the Python API (the in-package fake engine)
WHOLE_COMMAND = """
import json, sys
from canal import Canal
from canal.sandbox.fake import FakeBackend

with Canal(sys.argv[1], backend=FakeBackend()) as canal:
    result = canal.run("true")
assert result.status == "ok", result.text
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(probe: str, project: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", probe, str(project)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    modules: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return modules


def _among(loaded: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if any(m == n or m.startswith(n + ".") for n in names)]


def test_a_first_command_starts_its_sandbox_before_it_loads_the_pipeline(project: Path) -> None:
    loaded = _loaded(BEFORE_START, project)
    assert "canal.runtime.trust.service" in loaded  # the probe ran where it should: after the check
    assert _among(loaded, AFTER_THE_SANDBOX_STARTS + OTHER_DOORS) == []


def test_a_command_loads_nothing_of_the_other_doors(project: Path) -> None:
    loaded = _loaded(WHOLE_COMMAND, project)
    assert "canal.runtime.run.pipeline" in loaded
    assert _among(loaded, OTHER_DOORS) == []


def test_a_read_only_command_builds_no_checkpoint_or_fork_store(project: Path) -> None:
    loaded = _loaded(WHOLE_COMMAND, project)  # ``true`` in a project whose workspace is rw
    assert _among(loaded, READ_ONLY_NEEDS_NO) == []
