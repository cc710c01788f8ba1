"""Issue 33, the shared server path: the server builds one ``Canal`` per project, sandbox and actor and
keeps it between API calls (canal.yaml read and checked, keys derived, once), and builds it again as soon
as anything it was read from changed: canal.yaml, a rule file, the approval, an enclosing project's
approval, the key ring, the project folder itself. No Docker: the calls used here touch the host only."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.host.approvals import Approver
from canal.host.keys import KeyStore
from canal.runtime.api import Canal
from canal.runtime.sandboxes.resources import Shared
from canal.runtime.services import Services
from canal.runtime.trust import ConfigUnapproved
from canal.server.kept import KeptCanals

PERSON = Approver(user="alice", how="tty")
LATER = 3600.0  # a clock this far ahead: every file read has settled


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    folder = tmp_path / "work" / "project"
    (folder / "policy").mkdir(parents=True)
    (folder / "policy" / "extra.yaml").write_text("name: extra\ndefault: allow\nrules: []\n")
    (folder / "canal.yaml").write_text("policy: {profile: standard, files: [policy/extra.yaml]}\n")
    approve(folder)
    return folder


@pytest.fixture
def shared() -> Iterator[Shared]:
    """The server's one set of resources, given to every Canal it keeps."""
    with Shared() as resources:
        yield resources


def approve(folder: Path) -> None:
    services = Services(folder)
    services.trust.approve(PERSON, services.trust.status().snapshot.digest)


def settled(shared: Shared) -> KeptCanals:
    return KeptCanals(shared, clock=lambda: time.time() + LATER)


def used(kept: KeptCanals, folder: Path, sandbox: str = "default", actor: str = "agent") -> Canal:
    with kept.use(folder, sandbox, actor) as canal:
        canal.checkpoints()  # a call that reads the settings and the keys
        return canal


def test_a_kept_canal_serves_the_next_call_while_nothing_changed(project: Path, shared: Shared) -> None:
    kept = settled(shared)
    first = used(kept, project)
    assert used(kept, project) is first
    assert kept.status() == {"api_canals": 1, "api_canal_builds": 1}
    assert used(kept, project, sandbox="other") is not first  # one per sandbox and actor
    assert used(kept, project, actor="someone") is not first


@pytest.mark.parametrize("change", ["canal.yaml", "rule file", "approval", "key ring", "folder"])
def test_what_the_settings_were_read_from_changing_makes_a_new_canal(project: Path, change: str,
                                                                     shared: Shared) -> None:
    kept = settled(shared)
    first = used(kept, project)
    if change == "canal.yaml":  # a tightening: it applies at once, recorded as config.accept
        (project / "canal.yaml").write_text("policy: {profile: strict, files: [policy/extra.yaml]}\n")
    elif change == "rule file":
        (project / "policy" / "extra.yaml").write_text("name: extra\ndefault: allow\nrules: []\n# edited\n")
        approve(project)
    elif change == "approval":
        os.utime(Services(project).state_dir / "trusted-config.json")  # rewritten: its ctime moves
    elif change == "key ring":
        KeyStore().rotate()
    else:  # the folder removed and made again: the sandbox's bind mount would point at the old one
        moved = project.with_name("old")
        project.rename(moved)
        shutil.copytree(moved, project)
    second = used(kept, project)
    assert second is not first
    assert kept.status()["api_canal_builds"] == 2
    if change == "canal.yaml":
        assert second.config.policy.profile == "strict"


def test_a_loosening_edit_is_refused_on_the_next_call_not_served_from_the_kept_one(project: Path,
                                                                                  shared: Shared) -> None:
    kept = settled(shared)
    used(kept, project)
    (project / "canal.yaml").write_text("policy: {profile: standard}\nunattended: true\n")
    with pytest.raises(ConfigUnapproved):
        used(kept, project)
    with pytest.raises(ConfigUnapproved):  # and again: what failed is not kept
        used(kept, project)


def test_an_enclosing_project_approved_later_binds_the_kept_canal(project: Path, shared: Shared) -> None:
    lone = project.parent / "lone"  # no canal.yaml, no approval: the defaults
    lone.mkdir()
    kept = settled(shared)
    used(kept, lone)
    (project.parent / "canal.yaml").write_text("policy: {profile: strict}\n")
    approve(project.parent)  # the defaults (standard) loosen the enclosing approval (strict) now
    with pytest.raises(ConfigUnapproved, match="inside the project"):
        used(kept, lone)


def test_files_changed_just_now_are_read_again_at_every_call(project: Path, shared: Shared) -> None:
    """Racy stamps: a file changed within the settling time may change again with the same stamp (the
    file system's clock is coarse), so what was read from it is not kept."""
    kept = KeptCanals(shared)
    (project / "canal.yaml").write_text("policy: {profile: strict, files: [policy/extra.yaml]}\n")
    first = used(kept, project)
    assert used(kept, project) is not first
    assert kept.status()["api_canals"] == 0


def test_the_kept_canals_are_bounded(project: Path, tmp_path: Path, shared: Shared) -> None:
    kept = KeptCanals(shared, clock=lambda: time.time() + LATER, limit=2)
    canals = [used(kept, project, sandbox=f"s{i}") for i in range(3)]
    assert kept.status()["api_canals"] == 2
    assert used(kept, project, sandbox="s2") is canals[2]
    assert used(kept, project, sandbox="s0") is not canals[0]  # the oldest went first
