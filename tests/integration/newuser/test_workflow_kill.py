"""Finding 6: killing ``canal workflow advance`` stops the step it was running in the sandbox."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from first_hour import User

WORKFLOW = {
    "workflows/slow/WorkFlow.md": "---\nname: slow\ndescription: One slow step\nversion: \"1\"\n---\n",
    "workflows/slow/references/01-tick.md": """\
---
id: tick
type: automated
title: Tick for a while
automation:
  run: ["bash", "-c", "for i in $(seq 1 60); do echo $i >> /workspace/ticks; sleep 0.5; done"]
  timeout_s: 120
---
Writes a line every half second for half a minute.
""",
    "workflows/slow/references/02-done.md": """\
---
id: done
type: notification
title: Done
---
The ticking is over.
""",
}


def _ticks(root: Path) -> int:
    path = root / "ticks"
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killing_advance_stops_its_step(user: User, how: signal.Signals) -> None:
    root = user.project("wf", WORKFLOW)
    started = json.loads(user.canal(root, "workflow", "start", "slow", "--json").stdout)
    run_id = started["run_id"]
    advance = subprocess.Popen([sys.executable, "-m", "canal.cli", "workflow", "advance", run_id],
                               cwd=root, env=user.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while _ticks(root) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ticks(root) >= 2, "the step never started"
    advance.send_signal(how)
    advance.wait(timeout=30)
    time.sleep(2)  # the session's end (or the interrupt) has reached the sandbox
    stopped_at = _ticks(root)
    time.sleep(2)
    assert _ticks(root) == stopped_at, "the step kept running in the sandbox after advance was killed"
    left = user.canal(root, "run", "--", "pgrep -f 'seq 1 60' || echo none")
    assert left.stdout.splitlines()[0] == "none", left.stdout
    current = json.loads(user.canal(root, "workflow", "current", run_id, "--json").stdout)
    assert current["status"] != "done", current
