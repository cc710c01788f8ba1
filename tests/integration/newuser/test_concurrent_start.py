"""Finding 14: eight processes using a fresh project at once all get its one sandbox."""

from __future__ import annotations

import subprocess
import sys
import time

from first_hour import User

SCRIPT = """
import sys, time
from pathlib import Path
from canal import Canal
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.01)
with Canal(sys.argv[1]) as canal:
    result = canal.run("echo ready")
print(result.status, result.exit_code, result.output.strip())
"""


def test_eight_processes_starting_one_sandbox_all_succeed(user: User) -> None:
    root = user.project("busy")
    go = user.home / "go"
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, str(root), str(go)], env=user.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    time.sleep(1.0)  # every process imported Canal and waits at the line
    go.touch()
    outcomes = [p.communicate(timeout=240) for p in procs]
    failures = [(p.returncode, err[-400:]) for p, (_, err) in zip(procs, outcomes, strict=True)
                if p.returncode != 0]
    assert failures == []
    assert [out for out, _ in outcomes] == ["ok 0 ready\n"] * 8
