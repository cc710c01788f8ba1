"""A fork's policy is derived from the project's own profile: its deny rules kept, its confirmations
waived (the fork is a copy: nothing outside it is harmed by what a person would have confirmed), and
the confirm rules that guard something a fork can still reach (strict's secret reads: the output goes
to the agent) kept closed, as deny, since nobody is asked in a fork."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.policy import load_policy
from canal.policy.loader import load_fork_policy
from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig, PolicySettings
from canal.sandbox.fake import FakeBackend

SECRET_READS = ["cat .env", "grep API_KEY .dev.vars", "cat /proc/self/environ", "head .[e]nv",
                "cat ~/.ssh/id_rsa", "cd /proc/1 && cat environ"]


def test_a_standard_projects_fork_asks_nothing_and_still_denies() -> None:
    fork = load_fork_policy("standard")
    assert fork.decide("rm -rf build").action == "allow"
    assert fork.decide("git push --force").action == "allow"
    assert fork.decide("rm -rf /").action == "deny"
    assert fork.decide("cat .env").action == "allow"  # standard never guarded it
    assert load_policy("standard").decide("rm -rf build").action == "confirm"


@pytest.mark.parametrize("command", SECRET_READS)
def test_a_strict_projects_fork_keeps_secret_reads_closed(command: str) -> None:
    assert load_policy("strict").decide(command).action == "confirm"
    assert load_fork_policy("strict").decide(command).action == "deny"


def test_a_strict_projects_fork_is_never_looser_than_its_deny_rules() -> None:
    fork = load_fork_policy("strict")
    assert fork.decide("rm -rf build").action == "allow"  # strict would confirm: the fork is a copy
    assert fork.decide("python3 -c 'print(1)'").action == "allow"
    assert fork.decide("echo x > notes.md").action == "allow"
    assert fork.decide("rm -rf /").action == "deny"
    assert fork.decide("mkfs.ext4 /dev/sda").action == "deny"
    assert fork.hash != load_policy("strict").hash != load_fork_policy("standard").hash


def test_project_rule_files_in_a_fork(tmp_path: Path) -> None:
    rules = tmp_path / "team.yaml"
    rules.write_text("""version: 1
name: team
default: allow
rules:
  - id: no-prod
    decision: deny
    programs: [kubectl]
    expression: args.exists(a, a == "prod")
    examples: {match: ["kubectl --context prod get pods"]}
  - id: ask-deploy
    decision: confirm
    programs: [deploy]
    expression: "true"
    examples: {match: ["deploy now"]}
  - id: ask-upload
    decision: confirm
    in_fork: deny
    programs: [upload]
    expression: "true"
    examples: {match: ["upload dump.sql"]}
""")
    fork = load_fork_policy("standard", [rules])
    assert fork.decide("kubectl --context prod get pods").action == "deny"
    assert fork.decide("deploy now").action == "allow"
    assert fork.decide("upload dump.sql").action == "deny"
    project = load_policy("standard", [rules])
    assert project.decide("upload dump.sql").action == "confirm"  # in_fork changes nothing outside forks


def test_the_canal_of_a_strict_project_gives_its_forks_the_derived_policy(tmp_path: Path,
                                                                           state_dir: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    canal = Canal(project, config=CanalConfig(policy=PolicySettings(profile="strict")), backend=FakeBackend())
    assert canal.fork_policy.decide("cat .env").action == "deny"
    assert canal.fork_policy.decide("rm -rf build").action == "allow"
    assert canal.policy.decide("rm -rf build").action == "confirm"
