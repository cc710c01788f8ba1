"""``approvals.approvers`` in canal.yaml: each approver has a way to prove who they are that exists."""

from __future__ import annotations

import pytest

from canal.runtime.errors import ConfigError
from canal.runtime.settings.config import parse_config

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOq4dVvP1vq0nC2e7kY3t5GvXq9r4z2mH8n6bJ1aQ0Zk bob"


def test_user_and_ssh_key_are_ways_to_prove_it() -> None:
    config = parse_config(f"approvals:\n  approvers:\n    - {{name: bob, user: bob, ssh_key: '{KEY}'}}\n")
    assert config.approvals.approvers[0].methods() == ["os-user", "ssh"]


@pytest.mark.parametrize(("entry", "said"), [
    ("{name: bob, passkey: true}", "'passkey: true' is not how a passkey is enrolled"),  # the old spelling
    ("{name: bob, user: bob, passkey: true}", "add the line it shows under passkeys: [...]"),
    ("{name: bob}", "has no way to prove who they are: give user, ssh_key or passkeys"),
    ("{name: bob, passkeys: ['not-a-line']}", "is not two base64url parts joined by ':'"),
    ("{name: bob, passkeys: ['" + "A" * 43 + ":" + "A" * 80 + "']}", "is not a COSE public key"),
])
def test_an_approver_without_a_way_that_exists_is_refused(entry: str, said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(f"approvals:\n  approvers:\n    - {entry}\n")
    assert said in str(refused.value)
    assert "canal.yaml:3: approvals.approvers.0" in str(refused.value)
