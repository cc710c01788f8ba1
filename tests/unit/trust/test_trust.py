"""Trusted configuration: canal.yaml applies once a person approved it; only tightening is accepted alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from canal.host.approvals import Approver
from canal.runtime.errors import ConfigError
from canal.runtime.trust import CONFIG_TRUST_INVALID, ConfigUnapproved, TrustedConfig, compare
from tests.error_codes import raises_code

KEY = b"k" * 32
PERSON = Approver(user="alice", how="tty")


class Audit:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, object]]] = []

    def append(self, event: str, data: dict[str, object], *, actor: str = "agent") -> str:
        self.events.append((event, dict(data)))
        return f"a-{len(self.events):06d}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def trust(project: Path, audit: Audit | None = None, key: bytes = KEY) -> TrustedConfig:
    return TrustedConfig(project, project.parent / "state", key, audit)


def write(project: Path, text: str) -> None:
    (project / "canal.yaml").write_text(text)


def approve(project: Path, audit: Audit | None = None) -> None:
    t = trust(project, audit)
    t.approve(PERSON, t.status().snapshot.digest)


def test_no_file_gives_the_defaults_without_a_record(project: Path) -> None:
    config = trust(project).require()
    assert config.policy.profile == "standard"
    assert not (project.parent / "state" / "trusted-config.json").exists()


def test_a_new_file_that_only_tightens_is_accepted_and_becomes_the_baseline(project: Path) -> None:
    audit = Audit()
    write(project, "policy: {profile: strict, approval: human}\nunattended: true\n")
    assert trust(project, audit).require().policy.profile == "strict"
    assert [e for e, _ in audit.events] == ["config.accept"]
    write(project, "policy: {profile: standard, approval: human}\nunattended: true\n")  # back: loosens
    with pytest.raises(ConfigUnapproved) as info:
        trust(project, audit).require()
    assert "policy.profile" in info.value.message
    assert [a.kind for a in info.value.next] == ["config.approve"]


def test_the_findings_rewrite_is_refused_until_a_person_approves(project: Path) -> None:
    write(project, "policy: {profile: strict, approval: human}\n")
    approve(project)
    write(project, "policy: {profile: standard, approval: agent}\nsandbox:\n  user: '0:0'\n"
                   "  network: bridge\n  cap_drop_all: false\n  no_new_privileges: false\n"
                   "  read_only_root: false\n"
                   "  mounts: [{source: /etc, target: /host, read_only: false}]\n")
    with pytest.raises(ConfigUnapproved) as info:
        trust(project).require()
    loosened = {c["setting"] for c in info.value.details["changes"] if c["loosens"]}  # type: ignore[union-attr]
    assert loosened == {"policy.profile", "policy.approval", "sandbox.user", "sandbox.network",
                        "sandbox.cap_drop_all", "sandbox.no_new_privileges", "sandbox.read_only_root",
                        "sandbox.mounts"}
    audit = Audit()
    approve(project, audit)
    assert trust(project).require().sandbox.network.mode == "bridge"
    assert audit.events[0][0] == "config.approve"
    assert audit.events[0][1]["approved_by"] == "alice"


def test_removing_an_approved_file_does_not_fall_back_to_looser_defaults(project: Path) -> None:
    write(project, "policy: {profile: strict}\n")
    approve(project)
    (project / "canal.yaml").unlink()
    with pytest.raises(ConfigUnapproved, match="was removed"):
        trust(project).require()


def test_presenter_settings_change_freely(project: Path) -> None:
    write(project, "policy: {profile: strict}\n")
    approve(project)
    write(project, "policy: {profile: strict}\npresenter: {max_lines: 400}\n")
    assert trust(project).status().state == "approved"


def test_an_edited_policy_file_needs_approval(project: Path) -> None:
    (project / "extra.yaml").write_text("name: extra\nrules: []\n")
    write(project, "policy: {files: [extra.yaml]}\n")
    with pytest.raises(ConfigUnapproved, match=r"policy\.files"):
        trust(project).require()
    approve(project)
    (project / "extra.yaml").write_text("name: extra\nrules: []\ndefault: allow\n")
    with pytest.raises(ConfigUnapproved, match="policy files content"):
        trust(project).require()


def test_approval_refuses_content_that_changed_since_it_was_shown(project: Path) -> None:
    write(project, "policy: {profile: strict}\n")
    shown = trust(project).status().snapshot.digest
    write(project, "sandbox: {network: bridge}\n")
    with pytest.raises(ConfigUnapproved, match="changed while"):
        trust(project).approve(PERSON, shown)


def test_a_forged_or_foreign_record_is_refused(project: Path, tmp_path: Path) -> None:
    write(project, "sandbox: {network: bridge}\n")
    approve(project)
    record = project.parent / "state" / "trusted-config.json"
    data = json.loads(record.read_text())
    data["settings"]["sandbox"]["user"] = "0:0"
    record.write_text(json.dumps(data))
    with raises_code(CONFIG_TRUST_INVALID):
        trust(project).require()
    approve_other = tmp_path / "other"
    approve_other.mkdir()
    with raises_code(CONFIG_TRUST_INVALID):
        TrustedConfig(approve_other, project.parent / "state", KEY).require()


def test_a_policy_file_outside_the_project_is_refused(project: Path) -> None:
    write(project, "policy: {files: [/dev/zero]}\n")
    with pytest.raises(ConfigError, match="outside the project"):
        trust(project).require()
    os.symlink("/etc", project / "etc")
    write(project, "policy: {files: [etc/passwd]}\n")
    with pytest.raises(ConfigError, match="outside the project"):
        trust(project).require()


@pytest.mark.parametrize(("before", "after", "loosens"), [
    ({"policy": {"profile": "standard"}}, {"policy": {"profile": "strict"}}, False),
    ({"sandbox": {"limits": {"memory": 10}}}, {"sandbox": {"limits": {"memory": 20}}}, True),
    ({"sandbox": {"mounts": [{"source": "/a", "target": "/a", "read_only": False}]}},
     {"sandbox": {"mounts": [{"source": "/a", "target": "/a", "read_only": True}]}}, False),
    ({"sandbox": {"mounts": []}}, {"sandbox": {"mounts": [{"source": "/a", "target": "/a"}]}}, True),
    ({"sandbox": {"image": "a"}}, {"sandbox": {"image": "b"}}, True),
    ({"timeouts": {"idle": None}}, {"timeouts": {"idle": 5}}, False),
    ({"timeouts": {"idle": 5}}, {"timeouts": {"idle": None}}, True),
    ({"sandbox": {"env": {}}}, {"sandbox": {"env": {"LD_PRELOAD": "/x"}}}, True),
    ({"sandbox": {"network": "bridge"}}, {"sandbox": {"network": "none"}}, False),
    ({"sandbox": {"network": "none"}}, {"sandbox": {"network": {"mode": "allowlist", "allow": ["pypi.org"]}}},
     True),
])
def test_what_counts_as_loosening(before: dict[str, object], after: dict[str, object], loosens: bool) -> None:
    (change,) = compare(before, after, {}, {})
    assert change.loosens is loosens


def test_a_snapshot_sees_changed_content_with_the_same_size_and_time(tmp_path: Path) -> None:
    """The parsed canal.yaml is kept per content, not per file stamp: an edit that keeps the size and
    the modification time (an agent can set both) is read as the new content."""
    from canal.runtime.trust.snapshot import take_snapshot

    config = tmp_path / "canal.yaml"
    config.write_text("workspace: ro\n")
    stamp = config.stat()
    assert take_snapshot(tmp_path).config.workspace == "ro"
    config.write_text("workspace: rw\n")
    os.utime(config, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert config.stat().st_size == stamp.st_size
    assert take_snapshot(tmp_path).config.workspace == "rw"


def test_another_projects_untouched_record_is_refused(project: Path, tmp_path: Path) -> None:
    """Issue 35: the forged-or-foreign test above reuses a record it had already edited, so the MAC
    refused it and the project check was never reached. A well-signed record of another project,
    copied into this one's state folder, is refused for naming that project."""
    write(project, "sandbox: {network: bridge}\n")
    approve(project)
    other = tmp_path / "other"
    other.mkdir()
    (other / "canal.yaml").write_text("sandbox: {network: bridge}\n")
    state = tmp_path / "other-state"
    state.mkdir()
    approved = project.parent / "state" / "trusted-config.json"
    (state / "trusted-config.json").write_bytes(approved.read_bytes())
    with raises_code(CONFIG_TRUST_INVALID, match="belongs to another project"):
        TrustedConfig(other, state, KEY).require()
