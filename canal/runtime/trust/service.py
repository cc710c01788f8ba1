"""Trusted configuration, in the spirit of direnv's ``allow``: settings take effect once a person approved
their exact content.

- No ``canal.yaml`` and no approval on record: the defaults (the hardened baseline) apply.
- The content on disk is the approved content (same digest): it applies.
- It differs, but every change tightens the approved settings (or the defaults, the first time): it
  applies and becomes the new baseline, recorded in the audit log as ``config.accept``.
- Anything else, including a removed ``canal.yaml`` whose defaults are looser than what was approved:
  ``CONFIG_UNAPPROVED`` naming each loosened setting, and nothing runs until a person runs
  ``canal config approve`` (audit record ``config.approve``).
- A project inside an approved one (``enclosing.py``) is also compared with each enclosing approval,
  unless a person approved its own content: loosening any of them is ``CONFIG_UNAPPROVED`` too, and
  the approvers who may approve it are the enclosing project's while it has none of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from canal.core.next import act
from canal.host.approvals.errors import APPROVER_UNKNOWN, APPROVER_UNVERIFIED
from canal.host.approvals.identities import STRONG_METHODS, ApprovalsSettings
from canal.host.approvals.model import Approver
from canal.host.approvals.sshsig import approval_message
from canal.host.paths import state_path_for
from canal.host.ports import AuditSink
from canal.runtime.settings.config import CanalConfig
from canal.runtime.settings.project import CONFIG_NAME
from canal.runtime.trust.compare import Change, compare
from canal.runtime.trust.enclosing import Enclosing, enclosing_approvals, enclosing_sources
from canal.runtime.trust.errors import ConfigUnapproved
from canal.runtime.trust.snapshot import Snapshot, defaults_snapshot, take_snapshot
from canal.runtime.trust.store import TrustRecord, TrustStore

State = Literal["defaults", "approved", "tightened", "unapproved"]
TIGHTENING = "tightening"


@dataclass(frozen=True)
class TrustStatus:
    state: State
    snapshot: Snapshot
    record: TrustRecord | None
    changes: list[Change] = field(default_factory=list)
    enclosing: Path | None = None  # the enclosing project whose approval these settings loosen

    @property
    def loosened(self) -> list[Change]:
        return [c for c in self.changes if c.loosens]

    def to_json(self) -> dict[str, object]:
        return {"state": self.state, "digest": self.snapshot.digest, "config_exists": self.snapshot.exists,
                "approved_digest": self.record.digest if self.record else None,
                "approved_by": self.record.approved_by if self.record else None,
                "approved_how": self.record.how if self.record else None,
                "changes": [c.to_json() for c in self.changes],
                "enclosing": str(self.enclosing) if self.enclosing else None}


class TrustedConfig:
    def __init__(self, project_dir: Path, state_dir: Path, key: bytes, audit: AuditSink | None = None,
                 clock: Callable[[], float] = time.time,
                 state_of: Callable[[Path], Path] = state_path_for,
                 earlier_keys: Sequence[bytes] = ()) -> None:
        """``earlier_keys``: the subkeys of the ring's older keys, which verify records made before a
        rotation (new records are signed under ``key``)."""
        self.project_dir = project_dir.resolve()
        self.store = TrustStore(state_dir, key, earlier_keys)
        self._earlier = tuple(earlier_keys)
        self.audit = audit
        self._clock = clock
        self._state_dir = state_dir
        self._state_of = state_of
        self._key = key

    def enclosing(self) -> list[Enclosing]:
        return enclosing_approvals(self.project_dir, self._state_dir, self._state_of, self._key,
                                   self._earlier)

    def sources(self) -> list[Path]:
        """The files the status is decided by besides the settings' own: this project's approval record
        and every enclosing project's canal.yaml and record."""
        return [self.store.path, *enclosing_sources(self.project_dir, self._state_dir, self._state_of)]

    def status(self) -> TrustStatus:
        snap = take_snapshot(self.project_dir)
        record = self.store.load(self.project_dir)
        if not (record is not None and record.digest == snap.digest and record.how != TIGHTENING):
            bound = self._bound(snap, record)  # a person's approval of this very content stands alone
            if bound is not None:
                return bound
        if record is None and not snap.exists:
            return TrustStatus("defaults", snap, None)
        if record is not None and record.digest == snap.digest:
            return TrustStatus("approved", snap, record)
        base = defaults_snapshot() if record is None else None
        changes = compare(base.settings if base else record.settings if record else {},
                          snap.settings, base.policy if base else record.policy if record else {},
                          snap.policy)
        state: State = "unapproved" if any(c.loosens for c in changes) else "tightened"
        return TrustStatus(state, snap, record, changes)

    def _bound(self, snap: Snapshot, record: TrustRecord | None) -> TrustStatus | None:
        """The status when ``snap`` loosens an enclosing project's approval; None when it loosens none."""
        for outer in self.enclosing():
            changes = compare(outer.record.settings, snap.settings, outer.record.policy, snap.policy)
            if any(c.loosens for c in changes):
                return TrustStatus("unapproved", snap, record, changes, enclosing=outer.project)
        return None

    def require(self) -> CanalConfig:
        """The configuration that may take effect now; ``CONFIG_UNAPPROVED`` when a person must look."""
        return self.require_snapshot().config

    def require_snapshot(self) -> Snapshot:
        """As ``require``, with the text of each policy file as read for the check (build from that)."""
        status = self.status()
        if status.state == "unapproved":
            raise unapproved_error(status, self.project_dir)
        if status.state == "tightened":
            self._record(status.snapshot, "canal", TIGHTENING, status.changes, event="config.accept")
        return status.snapshot

    def approvers(self) -> ApprovalsSettings:
        """Who may approve a change: the approvers of the settings approved last, never the new content's
        (an agent cannot name itself an approver and approve that). None yet: a person at a terminal
        bootstraps the first ones (docs/approvals.md says what that holds against)."""
        records = [self.store.load(self.project_dir), *(o.record for o in self.enclosing())]
        for record in records:  # its own, else the nearest enclosing project's that names approvers
            if record is not None:
                named = ApprovalsSettings.model_validate(record.settings.get("approvals") or {})
                if named.approvers:
                    return named
        return ApprovalsSettings()

    def message(self, digest: str, expires: int) -> bytes:
        """The exact text an approver signs with their SSH key to approve the settings ``digest``."""
        return approval_message({"decision": "approve-config", "project": str(self.project_dir),
                                 "digest": digest, "expires": expires})

    def approve(self, approver: Approver, expect_digest: str) -> TrustRecord:
        """Record the content on disk as approved by ``approver`` (a person, identified by the caller).

        ``expect_digest`` is the digest the person was shown: if the files changed since, nothing is
        recorded (an agent racing the approval cannot slip its own content in).
        """
        status = self.status()
        if status.snapshot.digest != expect_digest:
            msg = ("The settings changed while they were being approved "
                   f"(shown {expect_digest[:19]}, now {status.snapshot.digest[:19]}); nothing was approved.")
            raise ConfigUnapproved(msg, next=act("config.approve", "review the new content"),
                                   details={"expected": expect_digest, "found": status.snapshot.digest})
        in_force = self.approvers()
        if in_force.approvers and approver.how not in STRONG_METHODS:
            msg = (f"{approver.how} is not a way to approve settings here: the approved settings name "
                   "approvers, who prove who they are with another OS user, an SSH signature or a passkey")
            raise APPROVER_UNVERIFIED(msg, hint="see docs/approvals.md")
        if in_force.approvers and in_force.by_name(approver.user) is None:
            msg = f"{approver.user} is not an approver of the approved settings"
            raise APPROVER_UNKNOWN(msg, hint="an approver named in the approved canal.yaml approves it")
        return self._record(status.snapshot, approver.user, approver.how, status.changes,
                            event="config.approve", evidence=approver.evidence)

    def _record(self, snap: Snapshot, who: str, how: str, changes: list[Change], *,
                event: str, evidence: dict[str, object] | None = None) -> TrustRecord:
        record = TrustRecord(project=str(self.project_dir), digest=snap.digest, settings=snap.settings,
                             policy=snap.policy, approved_by=who, how=how, approved_at=self._clock())
        if self.audit is not None:  # the audit record first: an approval is never made unrecorded
            self.audit.append(event, {"digest": snap.digest, "config_exists": snap.exists, "how": how,
                                      "approved_by": who, "changes": [c.to_json() for c in changes],
                                      **({"evidence": evidence} if evidence else {})},
                              actor="canal" if how == TIGHTENING else who)
        self.store.save(record)
        return record


def unapproved_error(status: TrustStatus, project_dir: Path) -> ConfigUnapproved:
    loosened = status.loosened
    names = ", ".join(c.setting for c in loosened)
    where = project_dir / CONFIG_NAME
    if status.enclosing is not None:
        what = (f"{project_dir} is inside the project {status.enclosing}, and its settings "
                f"({where if status.snapshot.exists else 'the defaults: it has no ' + CONFIG_NAME}) "
                f"loosen that project's approved settings ({names})")
        msg = f"{what}. Nothing was run: run Canal in {status.enclosing}, or have a person approve these."
        return ConfigUnapproved(msg, hint="ask a person to review and approve them, in a terminal",
                                next=act("config.approve", project=str(project_dir)), details={
                                    "file": str(where), "enclosing": str(status.enclosing),
                                    "changes": [c.to_json() for c in status.changes],
                                    "digest": status.snapshot.digest,
                                    "approved_digest": status.record.digest if status.record else None})
    if not status.snapshot.exists:
        what = f"{where} was removed, and the defaults are looser than the approved settings ({names})"
    elif status.record is None:
        what = f"{where} is new and loosens the default settings ({names})"
    else:
        what = f"{where} changed since a person approved it, loosening: {names}"
    msg = f"{what}. Nothing was run: these settings take effect only once a person approves them."
    hint = "ask a person to review the change and approve it, in a terminal"
    approve = act("config.approve", project=str(project_dir))
    return ConfigUnapproved(msg, hint=hint, next=approve, details={
        "file": str(where), "changes": [c.to_json() for c in status.changes],
        "digest": status.snapshot.digest, "approved_digest": status.record.digest if status.record else None})
