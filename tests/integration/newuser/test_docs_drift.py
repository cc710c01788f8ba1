"""Finding 13: the docs and help say what the code does; the standard profile's rm -f decision."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from first_hour import User

REPO = Path(__file__).resolve().parents[3]


def test_errors_md_is_generated_from_every_code() -> None:
    done = subprocess.run([sys.executable, "-m", "canal.error_catalog"], capture_output=True,
                          text=True, check=True)
    assert (REPO / "docs" / "errors.md").read_text() == done.stdout
    for code in ("NO_ACTIVE_RUN", "STEP_FAILED", "STEP_ERROR", "PROFILE_LOOSER_THAN_PROJECT",
                 "CONFIRMATION_UNATTENDED", "ARGUMENT_MISSING", "ARGUMENT_INVALID", "TOOL_UNKNOWN",
                 "POLICY_DENIED", "NO_PROJECT", "CONFIG_EXISTS", "INVALID_DURATION"):
        assert f"| `{code}` |" in done.stdout, code
    for exit_code in ("122", "130", "137"):
        assert f"\n| {exit_code} |" in done.stdout, exit_code


def test_help_and_index_match_the_commands(user: User) -> None:
    root = user.project("app")
    full = user.canal(root, "help", "run", "--full").stdout
    for exit_code in ("120", "121", "122", "124", "125", "130", "137"):
        assert f"\n  {exit_code}  " in full, exit_code
    index = user.canal(root).stdout
    assert "shipped workflows (canal workflow start NAME):" in index
    assert "  project-bootstrap: " in index
    assert "  init: " in index


def test_docs_audit_md_describes_key_rotation_as_it_works() -> None:
    text = (REPO / "docs" / "audit.md").read_text()
    assert "Key rotation is\nnot supported yet" not in text
    assert "canal key rotate" in text


def test_standard_treats_rm_f_of_workspace_files_like_rm(user: User) -> None:
    root = user.project("app", {"a.log": "x\n", "b.log": "y\n", "build/out.o": "z\n"})
    check = user.canal(root, "policy", "check", "--", "rm -f a.log")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("ALLOW"), check.stdout
    done = user.canal(root, "run", "--", "rm -f a.log && rm b.log")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (root / "a.log").exists()
    assert not (root / "b.log").exists()
    asked = user.canal(root, "run", "--", "rm -rf build")
    assert asked.returncode == 120
    outside = user.canal(root, "policy", "check", "--", "rm -f /tmp/scratch")
    assert outside.stdout.startswith("CONFIRM"), outside.stdout
