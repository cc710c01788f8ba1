"""The egress allowlist is trusted configuration: the agent cannot widen it; narrowing it is accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.host.approvals import Approver
from canal.runtime.trust import ConfigUnapproved, TrustedConfig, compare

KEY = b"k" * 32


def trust(project: Path) -> TrustedConfig:
    return TrustedConfig(project, project.parent / "state", KEY)


def approved(tmp_path: Path, text: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "canal.yaml").write_text(text)
    t = trust(project)
    t.approve(Approver(user="alice", how="tty"), t.status().snapshot.digest)
    return project


LIST = "sandbox:\n  network: {mode: allowlist, allow: [pypi.org, '*.pythonhosted.org', 'github.com:443']}\n"
ALLOW = "sandbox:\n  network: {mode: allowlist, allow: [%s]}\n"


@pytest.mark.parametrize("after", [
    "sandbox: {network: bridge}\n",
    ALLOW % "pypi.org, '*.pythonhosted.org', 'github.com:443', evil.example",
    ALLOW % "pypi.org, '*.pythonhosted.org', github.com",
    ALLOW % "pypi.org, {host: '*.*.pythonhosted.org', wide: true}",
    ALLOW % "pypi.org, {host: '*', wide: true}",
])
def test_widening_the_allowlist_waits_for_a_person(tmp_path: Path, after: str) -> None:
    project = approved(tmp_path, LIST)
    (project / "canal.yaml").write_text(after)
    with pytest.raises(ConfigUnapproved) as info:
        trust(project).require()
    changes = info.value.details["changes"]  # type: ignore[index]
    assert [(c["setting"], c["loosens"]) for c in changes] == [("sandbox.network", True)]  # type: ignore[index]


@pytest.mark.parametrize("after", [
    "sandbox: {network: none}\n",
    ALLOW % "pypi.org",
    ALLOW % "'pypi.org:443', files.pythonhosted.org",
    ALLOW % "",
])
def test_narrowing_the_allowlist_is_accepted_alone(tmp_path: Path, after: str) -> None:
    project = approved(tmp_path, LIST)
    (project / "canal.yaml").write_text(after)
    assert trust(project).status().state == "tightened"
    trust(project).require()


def test_an_allowlist_instead_of_a_bridge_tightens_and_no_network_instead_loosens(tmp_path: Path) -> None:
    project = approved(tmp_path, "sandbox: {network: bridge}\n")
    (project / "canal.yaml").write_text(LIST)
    assert trust(project).status().state == "tightened"
    trust(project).require()
    listed = {"mode": "allowlist", "allow": [{"host": "pypi.org", "port": None, "wide": False}]}
    assert compare({"sandbox": {"network": "none"}}, {"sandbox": {"network": listed}}, {}, {})[0].loosens


def test_an_unreadable_network_value_loosens() -> None:
    changes = compare({"sandbox": {"network": "none"}}, {"sandbox": {"network": {"mode": "wat"}}}, {}, {})
    assert [c.loosens for c in changes] == [True]


def test_a_word_network_approved_before_allowlists_keeps_its_digest(tmp_path: Path) -> None:
    """The saved settings of ``network: none`` are the word, as before: no re-approval after upgrade."""
    project = approved(tmp_path, "sandbox: {network: none}\n")
    status = trust(project).status()
    assert status.state == "approved"
    assert status.snapshot.settings["sandbox"]["network"] == "none"
