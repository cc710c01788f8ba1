"""Audit records leave the host: an OTLP receiver on loopback gets the decision, approval and ending records
of real runs (sent by the Canal server and by ``canal approve``), and what it got, like a ``canal audit
export`` file, verifies against the local chain; an edited copy does not."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from otlp_receiver import Receiver, otlp_receiver

from canal.host.approvals import Approver
from canal.runtime.api import Canal

from .conftest import make_project
from .test_cli_run import canal_cli

CONFIG = """policy: {{approval: human}}
approvals:
  approvers:
    - {{name: alice, ssh_key: '{key}'}}
audit:
  otlp: {{endpoint: '{endpoint}', timeout_s: 5}}
"""


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as r:
        yield r


@pytest.fixture(scope="module")
def project(host_env: Path, receiver: Receiver) -> Iterator[Path]:
    key = host_env / "alice_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)], check=True)
    public = key.with_suffix(".pub").read_text().strip()
    project = make_project(host_env / "offhost", CONFIG.format(key=public, endpoint=receiver.endpoint))
    trust = Canal(project)._services.trust  # a person approves the first settings (no approver in force yet)
    trust.approve(Approver(user="root", how="tty"), trust.status().snapshot.digest)
    yield project
    with Canal(project) as c:
        c.down()


def events(records: list[dict[str, Any]]) -> list[str]:
    return [r["attributes"]["canal.event"] for r in records]


def test_decisions_approvals_and_endings_reach_the_collector(project: Path, receiver: Receiver,
                                                             host_env: Path, tmp_path: Path) -> None:
    assert canal_cli(project, "run", "--", "echo", "hi").returncode == 0
    asked = canal_cli(project, "run", "--", "rm", "-rf", "build")
    assert asked.returncode == 120, asked.stderr
    token = re.search(r"c_[a-z2-7]{12}", asked.stderr).group(0)  # type: ignore[union-attr]
    approved = canal_cli(project, "approve", token, "--ssh-key", str(host_env / "alice_ed25519"), "--yes")
    assert approved.returncode == 0, approved.stderr
    done = canal_cli(project, "run", "--confirm", token, "--", "rm", "-rf", "build")
    assert done.returncode == 0, done.stderr
    denied = canal_cli(project, "run", "--unattended", "--", "rm", "-rf", "notes.txt")
    assert denied.returncode == 121, denied.stderr

    got = receiver.wait_for(lambda rs: events(rs).count("run.completed") == 2 and "run.denied" in events(rs))
    by_seq = {r["attributes"]["canal.record.seq"]: r for r in got}
    ordered = [by_seq[seq] for seq in sorted(by_seq)]
    names = events(ordered)
    assert len(by_seq) == len(got)  # each record sent once
    for wanted in ("run.started", "run.completed", "approval.requested", "approval.approved",
                   "approval.redeemed", "run.denied"):
        assert wanted in names, names
    assert not [n for n in names if not n.startswith(("run.", "approval.", "config."))]
    approval = next(r for r in ordered if r["attributes"]["canal.event"] == "approval.approved")
    assert approval["attributes"]["canal.data"]["approver"] == "alice"
    assert approval["attributes"]["canal.data"]["how"] == "ssh"
    assert "token " + token in approval["attributes"]["canal.data"]["evidence"]["message"]
    confirmed = [r for r in ordered if r["attributes"]["canal.event"] == "run.started"][-1]
    assert confirmed["attributes"]["canal.data"]["decision"]["action"] == "confirm"
    assert confirmed["attributes"]["canal.data"]["approval"] == token
    ending = [r for r in ordered if r["attributes"]["canal.event"] == "run.completed"][-1]
    assert ending["attributes"]["canal.data"]["exit_code"] == 0
    refusal = next(r for r in ordered if r["attributes"]["canal.event"] == "run.denied")
    assert refusal["severityText"] == "WARN"

    # the collector has records, not the whole log; each one still verifies against the local chain
    for record in ordered[:3]:
        copy = tmp_path / f"one-{record['attributes']['canal.record.seq']}.jsonl"
        copy.write_text(record["attributes"]["canal.record"])
        checked = canal_cli(project, "audit", "verify", "--export", str(copy))
        assert checked.returncode == 0, checked.stderr


def test_the_jsonl_export_verifies_and_an_edited_one_does_not(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "siem.jsonl"
    made = canal_cli(project, "audit", "export", "--since", "1h", "--format", "jsonl", "-o", str(copy))
    assert made.returncode == 0, made.stderr
    lines = copy.read_text().splitlines()
    assert len(lines) > 5
    assert all({"seq", "prev_hash", "hash", "digest"} <= set(json.loads(line)) for line in lines)
    assert canal_cli(project, "audit", "verify", "--export", str(copy)).returncode == 0

    edited = [line.replace('"exit_code":0', '"exit_code":1') for line in lines]
    assert edited != lines
    copy.write_text("\n".join(edited) + "\n")
    refused = canal_cli(project, "audit", "verify", "--export", str(copy))
    assert refused.returncode == 1
    assert refused.stderr.startswith("AUDIT_TAMPERED")
    assert ": edited:" in refused.stderr
