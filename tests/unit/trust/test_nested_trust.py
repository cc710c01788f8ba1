"""Issue 36, finding 2 (high): the agent wrote ``sub/canal.yaml`` holding only the defaults and ran
``canal -C sub``; compared with the built-in defaults it needed nobody, and the enclosing project's
approved settings (gVisor, ``approval: human``, rule files) were gone. A nested project is now bound by
every enclosing approval (canal/runtime/trust/enclosing.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.host.approvals import Approver
from canal.host.approvals.errors import APPROVER_UNVERIFIED
from canal.runtime.trust import CONFIG_TRUST_INVALID, ConfigUnapproved, TrustedConfig
from tests.error_codes import raises_code

KEY = b"k" * 32
PERSON = Approver(user="alice", how="tty")
OUTER = "sandbox: {runtime: runsc}\npolicy: {profile: standard, approval: human}\nunattended: true\n"


def trust(project: Path) -> TrustedConfig:
    """Each project its own state folder (the default layout), all under ``states/``."""
    states = _states_of(project)
    return TrustedConfig(project, states(project), KEY, state_of=states)


def _states_of(project: Path):  # type: ignore[no-untyped-def]
    base = next(p for p in project.parents if (p / "states").is_dir()) / "states"
    return lambda folder: base / str(folder.resolve()).strip("/").replace("/", "_")


@pytest.fixture
def outer(tmp_path: Path) -> Path:
    (tmp_path / "states").mkdir()
    folder = tmp_path / "outer"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "canal.yaml").write_text(OUTER)
    t = trust(folder)
    t.approve(PERSON, t.status().snapshot.digest)
    return folder


def test_a_nested_canal_yaml_with_the_defaults_is_unapproved(outer: Path) -> None:
    sub = outer / "sub"
    (sub / "canal.yaml").write_text("policy: {profile: standard}\n")
    status = trust(sub).status()
    assert status.state == "unapproved"
    assert status.enclosing == outer.resolve()
    assert {c.setting for c in status.loosened} >= {"sandbox.runtime", "policy.approval", "unattended"}
    with pytest.raises(ConfigUnapproved) as info:
        trust(sub).require()
    assert f"inside the project {outer.resolve()}" in info.value.message
    assert info.value.details["enclosing"] == str(outer.resolve())


def test_a_nested_folder_without_canal_yaml_is_bound_too(outer: Path) -> None:
    """``CANAL_PROJECT_DIR=sub`` or ``Canal("sub")``: the defaults loosen the enclosing approval."""
    with pytest.raises(ConfigUnapproved, match=r"it has no canal\.yaml"):
        trust(outer / "sub" / "deeper").require()


def test_a_nested_project_that_only_tightens_is_accepted(outer: Path) -> None:
    sub = outer / "sub"
    (sub / "canal.yaml").write_text(OUTER.replace("standard", "strict"))
    config = trust(sub).require()
    assert config.policy.profile == "strict"
    assert config.sandbox.runtime == "runsc"
    assert trust(sub).status().state == "approved"  # recorded as its own baseline (by tightening)


def test_an_accepted_nested_project_is_bound_again_when_the_outer_one_tightens(outer: Path) -> None:
    sub = outer / "sub"
    (sub / "canal.yaml").write_text(OUTER)
    trust(sub).require()
    (outer / "canal.yaml").write_text(OUTER.replace("standard", "strict"))
    trust(outer).require()  # the outer project tightened: accepted alone
    assert trust(sub).status().state == "unapproved"


def test_a_person_may_approve_the_nested_content_itself(outer: Path) -> None:
    sub = outer / "sub"
    (sub / "canal.yaml").write_text("policy: {profile: standard}\n")
    t = trust(sub)
    t.approve(PERSON, t.status().snapshot.digest)
    assert trust(sub).require().sandbox.runtime == "runc"


def test_the_enclosing_approvers_decide_for_a_nested_project_without_its_own(outer: Path) -> None:
    named = OUTER + "approvals:\n  approvers:\n    - {name: bob, user: '4242'}\n"
    (outer / "canal.yaml").write_text(named)
    t = trust(outer)
    t.approve(PERSON, t.status().snapshot.digest)
    sub = outer / "sub"
    (sub / "canal.yaml").write_text("policy: {profile: standard}\n")
    nested = trust(sub)
    assert [a.name for a in nested.approvers().approvers] == ["bob"]
    with raises_code(APPROVER_UNVERIFIED):  # a terminal no longer bootstraps it
        nested.approve(PERSON, nested.status().snapshot.digest)


def test_an_enclosing_record_that_fails_its_check_refuses(outer: Path) -> None:
    record = trust(outer).store.path
    record.write_text(record.read_text().replace("runsc", "runc"))
    (outer / "sub" / "canal.yaml").write_text(OUTER)
    with raises_code(CONFIG_TRUST_INVALID):
        trust(outer / "sub").require()


def test_an_unrelated_project_beside_it_is_not_bound(outer: Path) -> None:
    beside = outer.parent / "beside"
    beside.mkdir()
    assert trust(beside).status().state == "defaults"
