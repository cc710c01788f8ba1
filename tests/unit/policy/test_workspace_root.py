"""The workspace is where canal.yaml's ``sandbox.workdir`` puts it, not always /workspace.

A project whose sandbox mounts the workspace at /src had every write confirmed as "outside the
workspace" and every git command as a foreign repository, while a write to /workspace (no longer the
workspace, so no checkpoint covers it) went unasked. The policy now decides against the workspace root it
is given (``Policy.decide(..., workspace=...)``, the pipeline passes the project's workdir).
"""

from __future__ import annotations

import pytest

from canal.policy.engine import Policy
from canal.policy.loader import load_policy


@pytest.fixture(scope="module")
def standard() -> Policy:
    return load_policy("standard", [])


@pytest.mark.parametrize("command", ["echo hi > notes.txt", "rm -f notes.txt", "sed -i s/a/b/ f.txt",
                                     "git status", "cd sub && git log", "rm -f /src/x.txt", "touch /src/a"])
def test_allowed_in_the_default_workspace_is_allowed_in_another(standard: Policy, command: str) -> None:
    default = standard.decide(command.replace("/src", "/workspace"), cwd="/workspace")
    moved = standard.decide(command, cwd="/src", workspace="/src")
    assert (default.action, moved.action) == ("allow", "allow"), moved.rule_ids


@pytest.mark.parametrize(("command", "rule"), [
    ("rm -f /workspace/x", "outside-workspace-write"),  # no longer the workspace: no checkpoint covers it
    ("echo x > /workspace/notes.txt", "outside-workspace-write"),
    ("git -C /workspace status", "git-foreign-repository"),
    ("rm -f ../x", "outside-workspace-write"),
])
def test_the_old_root_is_outside_a_moved_workspace(standard: Policy, command: str, rule: str) -> None:
    decision = standard.decide(command, cwd="/src", workspace="/src")
    assert decision.action == "confirm", decision.rule_ids
    assert rule in decision.rule_ids


@pytest.mark.parametrize("command", ["rm -rf /src", "cd / && rm -rf src", "rm -rf /src/"])
def test_wiping_the_workspace_root_is_denied_wherever_it_is(standard: Policy, command: str) -> None:
    decision = standard.decide(command, cwd="/src", workspace="/src")
    assert decision.action == "deny", decision.rule_ids
    assert "rm-root" in decision.rule_ids


def test_the_workspace_is_part_of_the_cached_decision(standard: Policy) -> None:
    """The same command and cwd in two workspaces are two decisions (a cache keyed without it would
    answer the second from the first)."""
    assert standard.decide("echo hi > /src/a", cwd="/src", workspace="/src").action == "allow"
    assert standard.decide("echo hi > /src/a", cwd="/src").action == "confirm"
