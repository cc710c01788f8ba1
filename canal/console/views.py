"""What the console's pages show, gathered from the project's services (data only; templates word it)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from canal.core.errors import CanalError
from canal.host.audit import parse_line, summarize, verify_log
from canal.host.audit.record import MalformedRecord
from canal.host.checkpoints.models import Checkpoint
from canal.policy.shell import parse
from canal.policy.targets import segment_targets
from canal.runtime.services import AUDIT_PURPOSE, Services

MAX_RECORDS = 300


def targets(command: str, cwd: str) -> list[str]:
    """The paths the command would delete or overwrite (as the policy sees them)."""
    parsed = parse(command, cwd=cwd or "/workspace")
    found: list[str] = []
    for seg in parsed.segments:
        found += [t for t in segment_targets(seg) if t not in found]
    return found


def pending_rows(services: Services) -> list[dict[str, Any]]:
    """Confirmations in human mode not yet used: waiting for a decision, or approved and not yet re-run."""
    return [{**p.to_json(), "targets": targets(p.command, p.cwd)} for p in services.approvals.pending()
            if p.mode == "human"]


def latest_checkpoint(services: Services) -> Checkpoint | None:
    with contextlib.suppress(CanalError, OSError):
        kept = services.checkpoints.list()
        return kept[-1] if kept else None
    return None


@dataclass(frozen=True)
class AuditView:
    report: dict[str, Any]
    kinds: list[str]
    shown: list[dict[str, str]]
    matched: int


def audit_view(services: Services, kind: str, text: str) -> AuditView:
    """The records of ``kind`` (an event or its prefix) holding ``text``, newest first; the verify report."""
    log = services.audit
    keys = services.keys
    report = verify_log(log.path, keys.derive(AUDIT_PURPOSE), keys.primary_id,
                        earlier_keys=keys.derive_all(AUDIT_PURPOSE), project_id=log.project_id)
    kinds: set[str] = set()
    matched: list[dict[str, str]] = []
    needle = text.lower()
    for line in log.lines():
        try:
            rec = parse_line(line.text)
        except MalformedRecord:
            continue
        kinds.add(rec.event)
        if kind and not (rec.event == kind or rec.event.startswith(kind.rstrip(".") + ".")):
            continue
        if needle and needle not in line.text.decode(errors="replace").lower():
            continue
        matched.append({"id": rec.id, "ts": rec.ts, "event": rec.event, "actor": rec.actor,
                        "summary": summarize(rec)})
    shown = list(reversed(matched[-MAX_RECORDS:]))
    return AuditView(report.to_json(), sorted(kinds), shown, len(matched))
