"""A tmp project driven through the real ``canal`` CLI, one process per command (helpers of the tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CANAL = str(Path(sys.executable).with_name("canal"))
KEEP = ("CANAL_NO_SERVER", "CANAL_RUNTIME_DIR", "CANAL_CACHE_DIR")  # the test session's choice: in-process


@dataclass(frozen=True)
class CliProject:
    root: Path
    state: Path
    config: Path

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_") or k in KEEP}
        return {**env, "CANAL_STATE_DIR": str(self.state), "CANAL_CONFIG_DIR": str(self.config)}

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([CANAL, *args], cwd=self.root, env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CANAL, *args], cwd=self.root, env=self.env, text=True, capture_output=True,
                              timeout=120, check=False)

    def json(self, *args: str, code: int = 0) -> dict[str, Any]:
        done = self.run(*args, "--json")
        assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
        data: dict[str, Any] = json.loads(done.stdout)
        return data

    def every_file_bytes(self) -> Iterator[tuple[Path, bytes]]:
        for path in sorted(self.state.rglob("*")):
            if path.is_file():
                yield path, path.read_bytes()
