"""Helpers: run ``canal`` in its own process against a tmp project whose state lives in tmp folders."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CANAL = str(Path(sys.executable).with_name("canal"))
KEEP = ("CANAL_NO_SERVER", "CANAL_RUNTIME_DIR", "CANAL_CACHE_DIR")  # the test session's choice: in-process


@dataclass(frozen=True)
class ToolProject:
    root: Path
    state: Path
    config: Path

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_") or k in KEEP}
        env.update(CANAL_STATE_DIR=str(self.state), CANAL_CONFIG_DIR=str(self.config))
        return subprocess.run([CANAL, *args], cwd=self.root, env=env, text=True, capture_output=True,
                              timeout=120, check=False, input=stdin)
