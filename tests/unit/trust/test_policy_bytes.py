"""The policy is built from exactly the bytes of the rule files that were read and approved (one read):
a file swapped after the approval check cannot slip its rules in (issue 15 follow-up)."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.host.approvals import Approver
from canal.runtime.api import Canal
from canal.runtime.trust import snapshot
from canal.sandbox.fake import FakeBackend

PERSON = Approver(user="alice", how="tty")
APPROVED = """version: 1
name: team
default: allow
rules:
  - id: no-curl
    decision: deny
    programs: [curl]
    expression: "true"
"""
SWAPPED = APPROVED.replace("decision: deny", "decision: allow")


@pytest.fixture
def project(tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    folder = tmp_path / "project"
    (folder / "policy").mkdir(parents=True)
    (folder / "canal.yaml").write_text("policy:\n  files: [policy/team.yaml]\n")
    (folder / "policy" / "team.yaml").write_text(APPROVED)
    trust = Canal(folder, backend=FakeBackend())._services.trust
    trust.approve(PERSON, trust.status().snapshot.digest)
    return folder


def test_a_rule_file_swapped_after_the_approval_check_is_not_what_decides(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = project / "policy" / "team.yaml"
    real = snapshot.read_settings_bytes
    reads: list[str] = []

    def read_then_swap(path: Path, *args: object, **kwargs: object) -> bytes | None:
        data = real(path, *args, **kwargs)  # type: ignore[arg-type]
        if path.name == "team.yaml":
            reads.append(str(path))
            rules.write_text(SWAPPED)  # the agent wins the race right after the check
        return data

    monkeypatch.setattr(snapshot, "read_settings_bytes", read_then_swap)
    canal = Canal(project, backend=FakeBackend())
    decision = canal.policy.decide("curl https://example.com")
    assert decision.action == "deny", decision.to_json()
    assert decision.rule_ids == ("no-curl",)
    assert len(reads) == 1, "one read: the bytes approved are the bytes compiled"
    assert rules.read_text() == SWAPPED
    assert canal.fork_policy.decide("curl x").action == "deny"


def test_a_config_given_in_code_reads_each_rule_file_once_without_following_a_link(
        project: Path, tmp_path: Path) -> None:
    from canal.runtime.errors import ConfigError
    from canal.runtime.settings.config import CanalConfig

    config = CanalConfig.model_validate({"policy": {"files": ["policy/team.yaml"]}})
    assert Canal(project, config=config, backend=FakeBackend()).policy.decide("curl x").action == "deny"
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(SWAPPED)
    (project / "policy" / "team.yaml").unlink()
    (project / "policy" / "team.yaml").symlink_to(outside)
    with pytest.raises(ConfigError) as refused:
        _ = Canal(project, config=config, backend=FakeBackend()).policy
    assert refused.value.details["reason"] == "symlink"
