"""Issue 32, finding 6: a sensitive gate field on argv (``--gate-data '{"api_token": ...}'``) is seen by
``ps`` and shell history. ``--gate-data @FILE`` and ``--gate-data -`` (stdin) keep it off the command
line; given inline, it is accepted with a warning that names them. Through the CLI, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKFLOW = """\
---
name: secret-gate
description: Collect a token, then say done
version: "1"
---
# secret-gate
"""
GATE = """\
---
id: collect
type: interactive
title: Collect the token
gate:
  schema:
    api_token: { type: string, required: true, sensitive: true, desc: "An API token" }
    label:     { type: string, desc: "A label" }
---
Ask the user for the token.
"""
DONE = """\
---
id: done
type: notification
title: Done
---
Done.
"""
WARNING = "--gate-data on the command line holds sensitive field(s) api_token"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    folder = project / "workflows" / "secret-gate"
    (folder / "references").mkdir(parents=True)
    (project / "canal.yaml").write_text("")
    (folder / "WorkFlow.md").write_text(WORKFLOW)
    (folder / "references" / "01-collect.md").write_text(GATE)
    (folder / "references" / "02-done.md").write_text(DONE)
    return project


def _cli(project: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    tmp = project.parent
    env = {**os.environ, "CANAL_STATE_DIR": str(tmp / "state"), "CANAL_CONFIG_DIR": str(tmp / "config")}
    return subprocess.run([sys.executable, "-m", "canal.cli", *args], cwd=project, env=env,
                          input=stdin if stdin is not None else "", capture_output=True, text=True,
                          timeout=120, check=False)


def _start(project: Path) -> str:
    started = _cli(project, "workflow", "start", "--json", "secret-gate")
    assert started.returncode == 0, started.stderr
    run_id: str = json.loads(started.stdout)["run_id"]
    return run_id


def test_inline_sensitive_field_warns_and_names_the_safer_forms(project: Path) -> None:
    run = _start(project)
    done = _cli(project, "workflow", "advance", run, "--json", "--gate-data", '{"api_token": "s3cr3t-value"}')
    assert done.returncode == 0, done.stderr
    assert WARNING in done.stderr
    assert "--gate-data @FILE" in done.stderr
    assert "--gate-data -" in done.stderr
    assert "s3cr3t-value" not in done.stderr


def test_a_file_and_stdin_carry_it_without_a_warning(project: Path) -> None:
    secret = project.parent / "gate.json"
    secret.write_text('{"api_token": "from-a-file"}')
    secret.chmod(0o600)
    run = _start(project)
    by_file = _cli(project, "workflow", "advance", run, "--json", "--gate-data", f"@{secret}")
    assert by_file.returncode == 0, by_file.stderr
    assert WARNING not in by_file.stderr
    assert json.loads(by_file.stdout)["step"]["id"] == "done"
    again = _start(project)
    by_stdin = _cli(project, "workflow", "advance", again, "--json", "--gate-data", "-",
                    stdin='{"api_token": "from-stdin"}')
    assert by_stdin.returncode == 0, by_stdin.stderr
    assert WARNING not in by_stdin.stderr
    assert json.loads(by_stdin.stdout)["step"]["id"] == "done"


def test_a_missing_file_is_refused_with_the_forms(project: Path) -> None:
    run = _start(project)
    done = _cli(project, "workflow", "advance", run, "--gate-data", "@/nonexistent/gate.json")
    assert done.returncode != 0
    assert done.stderr.startswith("GATE_"), done.stderr
    assert "@FILE" in done.stderr
