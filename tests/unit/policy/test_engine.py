"""Decisions: strictest wins, unattended, fail-closed sources, targets, argv, cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.policy import Policy, build_policy
from canal.policy.shell.syntax import bash_n


def test_strictest_wins_across_segments(standard: Policy) -> None:
    d = standard.decide("rm -rf build && rm -rf /")
    assert d.action == "deny"
    assert d.source == "rule"
    assert "rm-root" in d.rule_ids
    assert d.segment == "rm -rf /"


def test_confirm_carries_rule_and_reason(standard: Policy) -> None:
    d = standard.decide("git push --force origin main")
    assert (d.action, d.rule_ids) == ("confirm", ("git-force-push",))
    assert d.policy_hash == standard.hash
    assert "git-force-push" in d.reason
    assert d.to_json()["rule_ids"] == ["git-force-push"]


def test_unattended_turns_confirm_into_deny(standard: Policy) -> None:
    d = standard.decide("rm -rf build/", unattended=True)
    assert d.action == "deny"
    assert d.source == "unattended"
    assert any("unattended" in r for r in d.reasons)
    assert standard.decide("ls", unattended=True).action == "allow"


@pytest.mark.parametrize("command", ["echo 'unterminated", "ls ;; pwd", "x" * 10_001, "echo ${ rm -rf /; }",
                                     "echo " + "$(echo " * 150 + "x" + ")" * 150, "ls \x00"])
def test_parse_failures_deny(standard: Policy, command: str) -> None:
    d = standard.decide(command)
    assert (d.action, d.source) == ("deny", "parse_failure")


def test_bash_disagreement_fails_closed(tmp_path: Path) -> None:
    policy = build_policy([Path(__file__).parents[3] / "canal" / "policy" / "profiles" / "standard.yaml"],
                          checker=lambda text: "bash says no" if text == "ls -la" else bash_n(text))
    assert policy.decide("ls -la").source == "parse_failure"


def test_non_boolean_rule_is_eval_error(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: odd\ndefault: allow\nrules:\n  - id: str\n    decision: allow\n"
                    "    programs: [ls]\n    expression: program\n")
    d = build_policy([path]).decide("ls")
    assert (d.action, d.source) == ("deny", "eval_error")


def test_strict_no_match_confirms(strict: Policy) -> None:
    d = strict.decide("make -j2")
    assert (d.action, d.source) == ("confirm", "no_match")
    assert strict.decide("ls -la").action == "allow"


def test_targets_resolved_against_cwd(standard: Policy) -> None:
    d = standard.decide("rm -rf build ../x && echo hi > out.txt", cwd="/workspace/app")
    assert d.targets == ("/workspace/app/build", "/workspace/x", "/workspace/app/out.txt")


@pytest.mark.parametrize(("command", "targets"), [
    ("cd sub && rm -r a", ("/workspace/sub/a",)),
    ("mv a.txt b.txt", ("/workspace/b.txt",)),
    ("cp -t dest a/x.txt", ("/workspace/dest/x.txt",)),
    ("find build -name '*.o' -delete", ("/workspace/build",)),
    ("git clean -fdx", ("/workspace",)),
    ("dd if=/dev/zero of=disk.img", ("/workspace/disk.img",)),
    ("truncate -s 0 log.txt", ("/workspace/log.txt",)),
    ("echo x 2>/dev/null >> keep.txt", ()),
])
def test_targets(standard: Policy, command: str, targets: tuple[str, ...]) -> None:
    assert standard.decide(command).targets == targets


def test_decide_argv_unwraps_without_shell(standard: Policy) -> None:
    assert standard.decide_argv(["sudo", "rm", "-rf", "/"]).action == "deny"
    assert standard.decide_argv(["bash", "-c", "rm -rf build"]).action == "confirm"
    # No shell: a literal ";" is an argument, not a separator.
    assert standard.decide_argv(["echo", "x; rm -rf /"]).action == "allow"
    assert standard.decide_argv([]).action == "deny"


def test_cache_returns_same_decision(standard: Policy) -> None:
    standard.clear_cache()
    first = standard.decide("git status")
    assert standard.decide("git status") is first
    assert standard.decide("git status", cwd="/other") is not first


def test_explain_reports_facts(standard: Policy) -> None:
    decision, reports = standard.explain("sudo rm -rf /tmp/x | tee log")
    assert decision.action == "confirm"
    rm = reports[0]
    assert rm.facts["program"] == "rm"
    assert rm.facts["flags"] == ["r", "f"]
    assert rm.facts["wrappers"] == ["sudo"]
    assert rm.matched == ("rm-recursive",)  # /tmp is the sandbox's own scratch space
    assert rm.facts["outside_targets"] == []  # /tmp is not the host's


def test_over_long_command_is_refused_before_parsing(standard: Policy) -> None:
    calls: list[str] = []
    policy = build_policy([Path(__file__).parents[3] / "canal" / "policy" / "profiles" / "standard.yaml"],
                          checker=lambda text: calls.append(text) or "")
    huge = "echo " + "x" * 2_000_000
    d = policy.decide(huge)
    assert (d.action, d.source) == ("deny", "parse_failure")
    assert "2000005 characters" in d.reason
    assert len(d.segment) <= 200
    assert huge not in [k[0] for k in policy._cache]
    assert not [c for c in calls if len(c) > 10_000]
