"""``canal tool call`` through the run pipeline, in real sandboxes: validation before anything runs,
a destructive tool stopping for confirmation with the exact command to rerun, then running with it."""

from __future__ import annotations

import json
import shlex

from tool_cli import ToolProject


def test_destructive_tool_stops_for_confirmation_then_runs_with_the_token(tool_project: ToolProject) -> None:
    args = '{"dir": "build"}'
    asked = tool_project.run("tool", "call", "clean_build", "--args", args)
    assert asked.returncode == 120
    assert asked.stdout == ""
    lines = asked.stderr.splitlines()
    assert lines[0] == "CONFIRMATION_REQUIRED"
    assert lines[1] == ("rm-recursive: recursive delete, targets known only at run time, or a forced delete "
                        "outside the workspace. Nothing was run.")
    prefix = "Ask the user, then run: "
    assert lines[2].startswith(prefix)
    rerun = shlex.split(lines[2].removeprefix(prefix))
    assert rerun[:6] == ["canal", "tool", "call", "clean_build", "--args", args]
    assert rerun[6] == "--confirm"
    assert rerun[7].startswith("c_")
    assert len(rerun) == 8
    assert (tool_project.root / "build").is_dir()  # nothing ran

    done = tool_project.run(*rerun[1:])
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert not (tool_project.root / "build").exists()
    assert "[backup of build" in done.stdout  # the pipeline kept a copy in the host-side trash

    reused = tool_project.run(*rerun[1:])
    assert reused.returncode == 122
    assert reused.stderr.startswith("APPROVAL_REUSED\n")


def test_missing_required_field_is_rejected_with_the_list_and_nothing_runs(tool_project: ToolProject) -> None:
    rejected = tool_project.run("tool", "call", "clean_build", "--args", "{}")
    assert rejected.returncode == 2
    assert rejected.stderr.splitlines()[:2] == [
        "TOOL_ARGS_INVALID",
        "tool clean_build: missing required fields: dir (Folder to delete). Nothing was run."]
    assert (tool_project.root / "build").is_dir()


def test_tool_runs_in_the_sandbox_on_the_workspace(tool_project: ToolProject) -> None:
    done = tool_project.run("tool", "call", "word_count", "--args", '{"path": "notes.txt"}', "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["exit_code"]) == ("ok", 0)
    assert result["output"] == "4 notes.txt"


CONFIRMATION = {"token", "reason", "rule_ids", "expires_at", "approval", "rerun"}


def test_a_tool_call_asks_in_the_one_confirmation_shape(tool_project: ToolProject) -> None:
    """Issue 32, finding 3: ``tool call --json`` asks as run, apply and workflows do, through the real
    client (and its server), and the rerun runs as written."""
    (tool_project.root / "build").mkdir(exist_ok=True)
    asked = tool_project.run("tool", "call", "clean_build", "--args", '{"dir": "build"}', "--json")
    assert asked.returncode == 120
    found = json.loads(asked.stdout)["confirmation"]
    assert set(found) >= CONFIRMATION, found
    assert found["rule_ids"] == ["rm-recursive"]
    assert found["approval"] == "agent"
    rerun = shlex.split(found["rerun"])
    assert rerun[-2:] == ["--confirm", found["token"]]
    assert (tool_project.root / "build").is_dir()  # nothing ran
    done = tool_project.run(*rerun[1:])
    assert done.returncode == 0, done.stderr
    assert not (tool_project.root / "build").exists()
