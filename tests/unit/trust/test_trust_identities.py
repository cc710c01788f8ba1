"""Approving changed settings uses the approvers of the settings approved last, never the new content's."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from canal.host.approvals import APPROVER_IS_AGENT, APPROVER_UNVERIFIED, SIGNER_NOT_ALLOWED
from canal.host.approvals.decide import Proof
from canal.host.approvals.sshsig import sign
from canal.runtime.trust import TrustedConfig
from canal.runtime.trust.decide import approve_config
from tests.error_codes import raises_code

KEY = b"k" * 32


class Audit:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, object]]] = []

    def append(self, event: str, data: dict[str, object], *, actor: str = "agent") -> str:
        self.events.append((event, dict(data)))
        return f"a-{len(self.events):06d}"


def keypair(folder: Path, name: str) -> tuple[Path, str]:
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key, key.with_suffix(".pub").read_text().strip()


def settings(*keys: tuple[str, str]) -> str:
    lines = "".join(f"    - {{name: {name}, ssh_key: '{key}'}}\n" for name, key in keys)
    return f"policy: {{approval: human}}\napprovals:\n  approvers:\n{lines}"


Setup = tuple[TrustedConfig, Audit, Path, Path]


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    project = tmp_path / "project"
    project.mkdir()
    alice, alice_pub = keypair(tmp_path, "alice")
    mallory, mallory_pub = keypair(tmp_path, "mallory")
    (project / "canal.yaml").write_text(settings(("alice", alice_pub)))
    audit = Audit()
    trust = TrustedConfig(project, tmp_path / "state", KEY, audit)
    digest = trust.status().snapshot.digest
    record = approve_config(trust, digest, Proof(), os.geteuid(), terminal_user="root")  # the bootstrap
    assert record.how == "tty"
    (project / "canal.yaml").write_text(settings(("alice", alice_pub), ("mallory", mallory_pub)))
    return trust, audit, alice, mallory


def test_once_approvers_are_named_a_terminal_no_longer_counts(setup: Setup) -> None:
    trust, audit, _, _ = setup
    digest = trust.status().snapshot.digest
    with raises_code(APPROVER_UNVERIFIED):
        approve_config(trust, digest, Proof(), os.geteuid(), terminal_user="root")
    with raises_code(APPROVER_IS_AGENT):
        approve_config(trust, digest, Proof(peer_uid=os.geteuid()), os.geteuid())
    assert [e[1]["code"] for e in audit.events if e[0] == "config.refused"] == [
        "APPROVER_UNVERIFIED", "APPROVER_IS_AGENT"]


def test_the_new_content_cannot_approve_itself(setup: Setup) -> None:
    trust, _, _, mallory = setup
    digest = trust.status().snapshot.digest
    expires = int(time.time()) + 600
    with raises_code(SIGNER_NOT_ALLOWED):  # mallory is only in the new, unapproved content
        approve_config(trust, digest, Proof(signature=sign(trust.message(digest, expires), mallory)),
                       os.geteuid(), expires=expires)
    assert trust.status().state == "unapproved"


def test_an_approver_in_force_signs_the_change(setup: Setup) -> None:
    trust, audit, alice, _ = setup
    digest = trust.status().snapshot.digest
    expires = int(time.time()) + 600
    record = approve_config(trust, digest, Proof(signature=sign(trust.message(digest, expires), alice)),
                            os.geteuid(), expires=expires)
    assert (record.approved_by, record.how) == ("alice", "ssh")
    assert trust.status().state == "approved"
    approved = [e[1] for e in audit.events if e[0] == "config.approve"][-1]
    assert "BEGIN SSH SIGNATURE" in approved["evidence"]["signature"]  # type: ignore[index]
