"""``canal key rotate`` made a new primary key, and every project's record of approved settings, signed
under the old one, then failed its signature check: each approved project was refused
(``CONFIG_TRUST_INVALID``) until a person approved it again. Records signed under an earlier key of the
ring (decrypt-only) verify; a new approval is signed under the new primary; a retired key's do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.host.approvals import Approver
from canal.host.keys import KeyStore
from canal.runtime.services import Services
from canal.runtime.trust import CONFIG_TRUST_INVALID
from tests.error_codes import raises_code

PERSON = Approver(user="alice", how="tty")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    folder = tmp_path / "outer" / "project"
    folder.mkdir(parents=True)
    (folder / "canal.yaml").write_text("policy: {profile: strict}\nunattended: true\n")
    approve(folder)
    return folder


def approve(folder: Path) -> None:
    services = Services(folder)
    services.trust.approve(PERSON, services.trust.status().snapshot.digest)


def test_an_approval_made_before_a_key_rotation_still_stands(project: Path) -> None:
    old = KeyStore().primary_id
    KeyStore().rotate()
    services = Services(project)
    assert services.keys.primary_id != old
    assert services.trust.status().state == "approved"
    assert services.config.policy.profile == "strict"
    approve(project)  # a new approval is signed under the new primary key: it stands after retiring
    KeyStore().retire(old)
    assert Services(project).trust.status().state == "approved"


def test_an_enclosing_approval_made_before_a_rotation_still_binds(project: Path) -> None:
    outer = project.parent
    (outer / "canal.yaml").write_text("policy: {profile: strict}\n")
    approve(outer)
    KeyStore().rotate()
    assert [e.project for e in Services(project).trust.enclosing()] == [outer.resolve()]


def test_a_record_signed_under_a_retired_key_fails_its_check(project: Path) -> None:
    old = KeyStore().primary_id
    KeyStore().rotate()
    KeyStore().retire(old)
    with raises_code(CONFIG_TRUST_INVALID):
        Services(project).trust.status()
