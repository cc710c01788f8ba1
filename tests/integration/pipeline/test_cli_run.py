"""The README's main job from a shell: ``canal run -- echo hello`` in the default sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from canal.runtime.api import Canal


def canal_cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "canal.cli", *args], cwd=project,
                          env=os.environ.copy(), capture_output=True, text=True, timeout=300, check=False)


def test_echo_hello_prints_hello_and_a_footer(project: Path, canal: Canal) -> None:
    done = canal_cli(project, "run", "--", "echo", "hello")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "hello"
    assert lines[-1].startswith("[exit:0 | ")
    assert done.stderr == ""


def test_exit_status_is_the_commands_own_and_refusals_are_documented(project: Path, canal: Canal) -> None:
    assert canal_cli(project, "run", "--", "exit 3").returncode == 3
    asked = canal_cli(project, "run", "--", "rm", "-rf", "build")
    assert asked.returncode == 120
    assert asked.stderr.startswith("CONFIRMATION_REQUIRED")
    denied = canal_cli(project, "run", "--unattended", "--", "rm", "-rf", "build")
    assert denied.returncode == 121
    slow = canal_cli(project, "run", "--timeout", "1", "--json", "--", "sleep", "30")
    assert slow.returncode == 124
    data = json.loads(slow.stdout)
    assert data["status"] == "timeout"
    assert set(data) >= {"status", "exit_code", "reason", "duration_s", "output", "stderr", "output_file",
                         "decision", "confirmation"}


def test_bad_config_names_the_line(project: Path, canal: Canal, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "canal.yaml").write_text("policy:\n  profile: standard\n  bogus: 1\n")
    done = canal_cli(bad, "run", "--", "true")
    assert done.returncode == 2
    assert done.stderr.startswith("CONFIG_INVALID")
    assert "canal.yaml:3: policy.bogus" in done.stderr
