from __future__ import annotations

import json
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from canal.core.errors import ExitCode
from canal.host.approvals import (
    APPROVAL_EXPIRED,
    APPROVAL_MISMATCH,
    APPROVAL_PENDING,
    APPROVAL_REUSED,
    ApprovalForgedError,
    ApprovalService,
    Approver,
    DecisionSummary,
)
from tests.error_codes import raises_code

KEY = b"a" * 32
CMD = "rm -rf build/ && curl -H 'Authorization: Bearer sk-live-123' x"
SUMMARY = DecisionSummary(rule_ids=("rm-recursive",), reason="recursive delete")
BINDING = {"sandbox": "default", "cwd": "/workspace", "policy_hash": "p1"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Sink:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any], str]] = []

    def append(self, event: str, data: Mapping[str, Any], *, actor: str = "agent") -> str:
        self.events.append((event, dict(data), actor))
        return f"a-{len(self.events):06d}"


def redact(text: str) -> str:
    return text.replace("sk-live-123", "[REDACTED_SECRET:bearer:1]")


@pytest.fixture
def clock() -> Clock:
    return Clock()


def service(tmp_path: Path, clock: Clock, **kwargs: Any) -> ApprovalService:
    return ApprovalService(tmp_path, KEY, clock=clock, redact=redact, **kwargs)


def test_token_round_trip_in_agent_mode(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock)
    pending = svc.request(CMD, "default", "/workspace", "p1", SUMMARY)
    assert pending.token.startswith("c_")
    assert len(pending.token) == 14
    assert pending.expires_at == clock.now + 600
    assert not pending.needs_human
    approval = svc.redeem(pending.token, CMD, **BINDING)
    assert (approval.approver, approval.how) == ("agent", "token")
    assert approval.rule_ids == ("rm-recursive",)


def test_stored_record_is_private_and_holds_no_secret(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock)
    pending = svc.request(CMD, "default", "/workspace", "p1", SUMMARY)
    files = list((tmp_path / "approvals").glob("*.json"))
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    raw = files[0].read_text()
    assert "sk-live-123" not in raw
    assert json.loads(raw)["command"] == redact(CMD)
    assert pending.token not in raw  # the file names the record id; the tag needs the key


def test_same_token_twice_is_reused(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock)
    token = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    svc.redeem(token, CMD, **BINDING)
    with raises_code(APPROVAL_REUSED) as info:
        svc.redeem(token, CMD, **BINDING)
    assert info.value.code == "APPROVAL_REUSED"
    assert info.value.exit_code == ExitCode.APPROVAL_INVALID
    assert [(a.kind, a.args.get("fresh_token")) for a in info.value.next] == [("retry", True)]


def test_expired_token(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock, ttl_s=10)
    token = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    clock.now += 10
    with raises_code(APPROVAL_EXPIRED) as info:
        svc.redeem(token, CMD, **BINDING)
    assert info.value.code == "APPROVAL_EXPIRED"


@pytest.mark.parametrize(("field", "value"), [("command", "rm -rf src/"), ("sandbox", "other"),
                                              ("cwd", "/workspace/sub"), ("policy_hash", "p2")])
def test_token_for_anything_else_is_a_mismatch(tmp_path: Path, clock: Clock, field: str, value: str) -> None:
    svc = service(tmp_path, clock)
    token = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    args = {"command": CMD, **BINDING, field: value}
    with raises_code(APPROVAL_MISMATCH) as info:
        svc.redeem(token, **args)
    assert info.value.details["differs"] == [field]
    assert "sk-live-123" not in info.value.message
    assert svc.redeem(token, CMD, **BINDING).token == token  # a mismatch does not burn the token


@pytest.mark.parametrize("token", ["c_aaaaaaaaaaaa", "c_", "x", "c_AAAAAAAAAAAA1", ""])
def test_made_up_tokens_are_forged(tmp_path: Path, clock: Clock, token: str) -> None:
    with pytest.raises(ApprovalForgedError) as info:
        service(tmp_path, clock).redeem(token, CMD, **BINDING)
    assert info.value.code == "APPROVAL_FORGED"


def test_token_from_another_host_key_is_forged(tmp_path: Path, clock: Clock) -> None:
    token = service(tmp_path, clock).request(CMD, "default", "/workspace", "p1", SUMMARY).token
    other = ApprovalService(tmp_path, b"b" * 32, clock=clock)
    with pytest.raises(ApprovalForgedError):
        other.redeem(token, CMD, **BINDING)


def test_edited_record_is_forged(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock, mode="human")
    token = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    path = next((tmp_path / "approvals").glob("*.json"))
    raw = json.loads(path.read_text())
    raw["status"] = "approved"
    raw["approved_by"] = {"user": "agent", "how": "tty", "key_name": None, "at": clock.now}
    path.write_text(json.dumps(raw))
    with pytest.raises(ApprovalForgedError) as info:
        svc.redeem(token, CMD, **BINDING)
    assert "signature" in info.value.message


def test_unknown_but_well_signed_token_is_forged(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock)
    token = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    for path in (tmp_path / "approvals").glob("*.json"):
        path.unlink()
    with pytest.raises(ApprovalForgedError) as info:
        svc.redeem(token, CMD, **BINDING)
    assert "unknown" in info.value.message


def test_human_mode_blocks_until_a_person_approves(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock, mode="human")
    pending = svc.request(CMD, "default", "/workspace", "p1", SUMMARY)
    assert pending.needs_human
    with raises_code(APPROVAL_PENDING) as info:
        svc.redeem(pending.token, CMD, **BINDING)
    assert info.value.exit_code == ExitCode.CONFIRMATION_REQUIRED
    assert [(a.kind, a.args["token"]) for a in info.value.next] == [("approve", pending.token)]
    approved = svc.approve(pending.token, Approver(user="alice", how="tty"))
    assert approved.approved_by == "alice (tty)"
    approval = svc.redeem(pending.token, CMD, **BINDING)
    assert (approval.approver, approval.how) == ("alice", "tty")
    assert approval.approved_at == clock.now


def test_record_minted_in_human_mode_stays_human(tmp_path: Path, clock: Clock) -> None:
    token = service(tmp_path, clock, mode="human").request(CMD, "default", "/workspace", "p1", SUMMARY).token
    with raises_code(APPROVAL_PENDING):
        service(tmp_path, clock, mode="agent").redeem(token, CMD, **BINDING)


def test_service_switched_to_human_requires_approval_of_old_tokens(tmp_path: Path, clock: Clock) -> None:
    token = service(tmp_path, clock).request(CMD, "default", "/workspace", "p1", SUMMARY).token
    with raises_code(APPROVAL_PENDING):
        service(tmp_path, clock, mode="human").redeem(token, CMD, **BINDING)


def test_approving_a_used_or_expired_token_fails(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock, ttl_s=5)
    used = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    svc.redeem(used, CMD, **BINDING)
    with raises_code(APPROVAL_REUSED):
        svc.approve(used, Approver(user="alice", how="tty"))
    late = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    clock.now += 6
    with raises_code(APPROVAL_EXPIRED):
        svc.approve(late, Approver(user="alice", how="tty"))


def test_pending_lists_live_tokens_only(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock, ttl_s=100)
    first = svc.request("rm a", "default", "/workspace", "p1", SUMMARY).token
    clock.now += 1
    used = svc.request("rm b", "default", "/workspace", "p1", SUMMARY).token
    svc.redeem(used, "rm b", **BINDING)
    clock.now += 1
    third = svc.request("rm c", "default", "/workspace", "p1", SUMMARY).token
    listed = svc.pending()
    assert [p.token for p in listed] == [first, third]
    assert listed[0].age_s == 2
    assert listed[0].to_json()["rule_ids"] == ["rm-recursive"]
    clock.now += 99
    assert [p.token for p in svc.pending()] == [third]


def test_old_records_are_purged(tmp_path: Path, clock: Clock) -> None:
    svc = service(tmp_path, clock, ttl_s=10)
    svc.request("rm a", "default", "/workspace", "p1", SUMMARY)
    clock.now += 2 * 24 * 3600
    svc.request("rm b", "default", "/workspace", "p1", SUMMARY)
    assert len(list((tmp_path / "approvals").glob("*.json"))) == 1


def test_audit_events_are_written(tmp_path: Path, clock: Clock) -> None:
    sink = Sink()
    svc = service(tmp_path, clock, mode="human", audit=sink)
    token = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    svc.approve(token, Approver(user="alice", how="approver-key", key_name="alice-laptop"))
    svc.redeem(token, CMD, **BINDING)
    assert [e[0] for e in sink.events] == ["approval.requested", "approval.approved", "approval.redeemed"]
    assert sink.events[1][2] == "alice"
    assert sink.events[1][1]["key_name"] == "alice-laptop"
    assert all("sk-live-123" not in json.dumps(e) for e in sink.events)
    assert all(token not in json.dumps(e) for e in sink.events)  # only the record id, not the bearer token


def test_a_real_record_id_with_a_wrong_tag_is_forged_by_the_tag(tmp_path: Path, clock: Clock) -> None:
    """Issue 35: the tag is checked before any lookup. Every other forged token here also fails at the
    record (unknown id, other key); this one names a live, well-signed record, so only the tag stops it."""
    svc = service(tmp_path, clock)
    token = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    record_id, tag = token[2:10], token[10:]
    wrong = "".join("a" if c != "a" else "b" for c in tag)
    with pytest.raises(ApprovalForgedError) as info:
        svc.redeem(f"c_{record_id}{wrong}", CMD, **BINDING)
    assert "not a confirmation token issued by this host" in info.value.message
    assert svc.redeem(token, CMD, **BINDING).token == token  # the record itself was good


@pytest.mark.parametrize("how", ["tty", "elicitation", "approver-key", "token"])
def test_with_approvers_named_a_weak_method_is_refused(tmp_path: Path, clock: Clock, how: str) -> None:
    """Issue 35: with approvers configured, only another OS user, an SSH signature or a passkey count;
    a terminal or a client's form (MCP elicitation) is refused, and the token stays pending."""
    from canal.host.approvals import APPROVER_UNVERIFIED
    from canal.host.approvals.identities import ApprovalsSettings

    named = ApprovalsSettings.model_validate({"approvers": [{"name": "bob", "user": "4242"}]})
    svc = service(tmp_path, clock, mode="human", settings=named)
    token = svc.request(CMD, "default", "/workspace", "p1", SUMMARY).token
    with raises_code(APPROVER_UNVERIFIED):
        svc.approve(token, Approver(user="bob", how=how))  # type: ignore[arg-type]
    assert svc.show(token).status == "pending"
    assert svc.approve(token, Approver(user="bob", how="os-user")).status == "approved"
