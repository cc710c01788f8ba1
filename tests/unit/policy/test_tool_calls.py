"""Calls to MCP backends' tools: the profiles' defaults follow the annotations' specified meaning, rules
with ``scope: tool`` can name tools and argument values, and tool rules' examples are checked at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.policy import build_policy, load_policy
from canal.policy.errors import PolicyLoadError
from canal.policy.loader import load_fork_policy
from canal.policy.toolcalls import ToolCall

READ = {"readOnlyHint": True}
SAFE_WRITE = {"destructiveHint": False}
SILENT: dict[str, bool] = {}


@pytest.mark.parametrize(("profile", "annotations", "action"), [
    ("standard", READ, "allow"), ("standard", SAFE_WRITE, "allow"), ("standard", SILENT, "confirm"),
    ("standard", {"readOnlyHint": False, "destructiveHint": True}, "confirm"),
    # a read-only tool does not destroy, whatever destructiveHint says
    ("standard", {"readOnlyHint": True, "destructiveHint": True}, "allow"),
    ("strict", READ, "allow"), ("strict", SAFE_WRITE, "deny"), ("strict", SILENT, "deny"),
])
def test_the_profiles_follow_the_annotations(profile: str, annotations: dict[str, bool], action: str) -> None:
    decision = load_policy(profile, []).decide_tool(ToolCall("backend", "t", {"id": 1}, annotations))
    assert decision.action == action


def test_a_non_boolean_hint_counts_as_missing() -> None:
    call = ToolCall("backend", "t", {}, {"readOnlyHint": "yes"})
    assert load_policy("standard", []).decide_tool(call).action == "confirm"


def test_unattended_and_forks_never_run_an_unconfirmed_change() -> None:
    call = ToolCall("backend", "delete_project", {"id": 3})
    assert load_policy("standard", []).decide_tool(call, unattended=True).action == "deny"
    # a fork's workspace is a copy; the backend is not: the confirmation becomes a refusal there
    assert load_fork_policy("standard", []).decide_tool(call).action == "deny"
    assert load_fork_policy("standard", []).decide_tool(ToolCall("b", "list", {}, READ)).action == "allow"


def test_command_rules_never_see_tool_calls_and_back(tmp_path: Path) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text("""version: 1
name: team
extends: standard
default: allow
rules:
  - id: no-prod-deploys
    decision: deny
    scope: tool
    expression: tool == "deploy" && args.env == "prod"
    message: deploys to prod go through the release process
    examples:
      match: ['{"tool": "deploy", "args": {"env": "prod"}, "read_only": true}']
      not_match: ['{"tool": "deploy", "args": {"env": "staging"}}',
                  '{"tool": "list", "args": {"env": "prod"}}']
""")
    policy = build_policy([rules])
    prod = policy.decide_tool(ToolCall("backend", "deploy", {"env": "prod"}, READ))
    assert (prod.action, prod.rule_ids) == ("deny", ("no-prod-deploys",))
    assert policy.decide_tool(ToolCall("backend", "deploy", {"env": "dev"}, READ)).action == "allow"
    assert policy.decide("echo deploy prod").action == "allow"


def test_a_rule_that_fails_on_a_call_denies_it(tmp_path: Path) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text("""version: 1
name: team
default: allow
rules:
  - id: by-count
    decision: confirm
    scope: tool
    expression: args.count > 10
""")
    decision = build_policy([rules]).decide_tool(ToolCall("backend", "t", {"other": 1}, READ))
    assert (decision.action, decision.source) == ("deny", "eval_error")


@pytest.mark.parametrize(("example", "problem"), [
    ('{"tool": "list"}', "did not match"),
    ("deploy prod", "is not a tool call's facts"),
    ('{"command": "rm -rf /"}', "is not a tool call's facts"),
])
def test_tool_rule_examples_are_checked_at_load(tmp_path: Path, example: str, problem: str) -> None:
    rules = tmp_path / "r.yaml"
    rules.write_text(f"""version: 1
name: team
default: allow
rules:
  - id: deploys
    decision: confirm
    scope: tool
    expression: tool == "deploy"
    examples: {{match: ['{example}']}}
""")
    with pytest.raises(PolicyLoadError, match=problem):
        build_policy([rules])
