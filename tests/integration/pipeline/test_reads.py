"""Issue 32, what the agent reads through the CLI (a subprocess against a real sandbox): a passing test
run says what ran; every hint is a command the reader can run as written."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from project_helpers import chown_tree

from canal.runtime.api import Canal

UNIT_TEST = """\
import unittest


class T(unittest.TestCase):
    def test_one(self):
        self.assertEqual(1, 1)

    def test_two(self):
        self.assertTrue(True)
"""


def canal_cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "canal.cli", *args], cwd=project,
                          env=os.environ.copy(), capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def unittest_project(project: Path, canal: Canal) -> Path:
    (project / "test_small.py").write_text(UNIT_TEST)
    chown_tree(project)
    return project


def test_a_passing_unittest_run_says_what_ran(unittest_project: Path) -> None:
    done = canal_cli(unittest_project, "run", "--", "python3 -m unittest")
    assert done.returncode == 0, done.stderr
    assert "Ran 2 tests in " in done.stdout, done.stdout
    assert "--- stderr ---\n" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("[exit:0 | ")
    data = json.loads(canal_cli(unittest_project, "run", "--json", "--", "python3 -m unittest -v").stdout)
    assert "Ran 2 tests in " in data["stderr"]
    assert "test_one" in data["stderr"]


def test_big_stderr_on_success_is_a_bounded_tail(unittest_project: Path) -> None:
    script = "for i in $(seq 1 3000); do echo \"   Compiling crate$i\" >&2; done; echo done"
    done = canal_cli(unittest_project, "run", "--", f"make -v >/dev/null 2>&1; {script}")
    assert done.returncode == 0, done.stderr
    shown = done.stdout.split("--- stderr ---\n", 1)[1].split("\n--- end stderr ---", 1)[0]
    assert "Compiling crate3000" in shown
    assert "Compiling crate1\n" not in shown
    assert len(shown.splitlines()) <= 22
    assert "2980 earlier lines of stderr not shown" in shown
    hint = shown.split("read it: ", 1)[1].splitlines()[0].removesuffix("]")
    assert hint.startswith("canal run -- "), hint  # a command the CLI's reader can run as written
    again = canal_cli(unittest_project, *shlex.split(hint)[1:])
    assert again.returncode == 0, again.stderr
    assert "Compiling crate1\n" in again.stdout


def _next_commands(text: str) -> list[str]:
    """The ``canal ...`` commands a hint line names, in order."""
    found = []
    for part in text.replace("   or   ", ", or ").split(", or "):
        at = part.find("canal ")
        if at >= 0:
            found.append(part[at:].split("   (")[0].rstrip("]").rstrip())
    return found


def test_overflow_hints_run_as_written(unittest_project: Path) -> None:
    done = canal_cli(unittest_project, "run", "--no-stream", "--", "seq -f 'line %g' 5000")
    assert done.returncode == 0, done.stderr
    note = done.stdout.splitlines()[-2]
    grep, sed = _next_commands(note)[:2]
    assert grep.startswith("canal run -- 'grep -n PATTERN /canal/output/"), note
    found = canal_cli(unittest_project, *shlex.split(grep.replace("PATTERN", "4999"))[1:])
    assert found.returncode == 0, found.stdout
    assert found.stdout.startswith("4999:line 4999\n"), found.stdout
    window = canal_cli(unittest_project, *shlex.split(sed)[1:])
    assert window.stdout.startswith("line 51\n"), window.stdout


def test_a_denied_recursive_delete_suggests_canal_rm(unittest_project: Path) -> None:
    (unittest_project / "build").mkdir(exist_ok=True)
    chown_tree(unittest_project)
    denied = canal_cli(unittest_project, "run", "--unattended", "--", "rm -rf build")
    assert denied.returncode == 121
    assert "canal rm -r build" in denied.stderr, denied.stderr
    removed = canal_cli(unittest_project, "rm", "-r", "build")
    assert removed.returncode == 0, removed.stderr
    assert not (unittest_project / "build").exists()


def test_a_program_in_tmp_says_tmp_is_noexec(unittest_project: Path) -> None:
    done = canal_cli(unittest_project, "run", "--",
                     "printf '#!/bin/sh\\necho hi\\n' > /tmp/hi.sh && chmod +x /tmp/hi.sh && /tmp/hi.sh")
    assert done.returncode == 126, done.stdout
    assert "[Hint: /tmp is mounted noexec in the sandbox" in done.stdout, done.stdout
    assert "canal run -- python3 -m venv /workspace/.venv" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("[exit:126 | ")


def test_a_missing_make_names_the_preset(unittest_project: Path) -> None:
    done = canal_cli(unittest_project, "run", "--", "make test")
    assert done.returncode == 127, done.stdout
    assert "make is not in the sandbox's image; the image presets node, python have it" in done.stdout
    assert "then run: canal config approve" in done.stdout


SHAPE = {"token", "reason", "rule_ids", "expires_at", "approval", "rerun"}


def _confirmation(data: dict[str, object]) -> dict[str, object]:
    found = data.get("confirmation")
    assert isinstance(found, dict), data
    assert set(found) >= SHAPE, found
    assert found["token"], found
    assert found["expires_at"], found
    assert found["approval"] == "agent", found
    return found


def test_every_confirmation_has_one_shape(unittest_project: Path) -> None:
    """Finding 3: run, apply and a workflow step give one confirmation object, and its rerun runs as
    written (task start needs the server, which these tests do not start; it shares run's shape)."""
    (unittest_project / "build").mkdir(exist_ok=True)
    chown_tree(unittest_project)
    asked = canal_cli(unittest_project, "run", "--json", "--", "rm -rf build")
    assert asked.returncode == 120
    run = _confirmation(json.loads(asked.stdout))
    assert run["rerun"] == f"canal run --confirm {run['token']} -- rm -rf build"

    forked = canal_cli(unittest_project, "fork", "f1")
    assert forked.returncode == 0, forked.stderr
    made = canal_cli(unittest_project, "run", "-s", "f1", "--", "echo new > new.txt")
    assert made.returncode == 0, made.stdout
    applied = canal_cli(unittest_project, "apply", "f1", "--json")
    assert applied.returncode == 120, applied.stderr
    apply = _confirmation(json.loads(applied.stdout))
    assert apply["rule_ids"] == ["fork-apply"]
    assert apply["rerun"] == f"canal apply f1 --confirm {apply['token']}"
    again = canal_cli(unittest_project, *shlex.split(str(apply["rerun"]))[1:])
    assert again.returncode == 0, again.stderr
    assert (unittest_project / "new.txt").read_text() == "new\n"
    assert canal_cli(unittest_project, "discard", "f1").returncode == 0

    started = json.loads(canal_cli(unittest_project, "workflow", "start", "--json", "cleanup-build").stdout)
    wf = started["run_id"]
    canal_cli(unittest_project, "workflow", "advance", wf, "--gate-data", '{"directory": "dist-x"}')
    paused = canal_cli(unittest_project, "workflow", "advance", wf, "--json")
    assert paused.returncode == 120, paused.stdout
    step = _confirmation(json.loads(paused.stdout))
    assert step["rerun"] == f"canal workflow advance {wf} --confirm {step['token']}"
    assert step["rule_ids"]
