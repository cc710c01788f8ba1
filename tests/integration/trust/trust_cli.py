"""Running the real ``canal`` CLI as an agent's harness does (helpers of the tests in this folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CANAL = str(Path(sys.executable).parent / "canal")


def run_cli(project: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``canal ARGS`` as a harness runs it for the agent: pipes, no terminal."""
    env = {**os.environ, "CANAL_NO_SERVER": "1"}
    return subprocess.run([CANAL, *args], cwd=project, input=stdin, capture_output=True, text=True,
                          env=env, timeout=120, check=False)
