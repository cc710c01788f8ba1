"""Helpers: a project driven through the real ``canal`` thin client and its own server."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANAL = str(Path(sys.executable).with_name("canal"))


@dataclass
class ServedProject:
    root: Path
    runtime: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, input: str | None = None, cwd: Path | None = None,
            timeout: float = 120, **extra_env: str) -> subprocess.CompletedProcess[str]:
        env = {**self.env, **extra_env}
        return subprocess.run([CANAL, *args], cwd=cwd or self.root, env=env, text=True, capture_output=True,
                              input=input, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL if input is None else None)

    def popen(self, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
        return subprocess.Popen([CANAL, *args], cwd=self.root, env=self.env, text=True, **kwargs)


def served_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_") or k == "CANAL_CACHE_DIR"}
    env.update(CANAL_RUNTIME_DIR=str(root / "rt"), CANAL_STATE_DIR=str(root / "state"),
               CANAL_CONFIG_DIR=str(root / "config"))
    return env
