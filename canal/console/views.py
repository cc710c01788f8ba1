"""What the console's pages show, gathered through the project's ``Canal`` (data only; templates word it)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from canal.core.errors import CanalError
from canal.policy.shell import parse
from canal.policy.targets import segment_targets
from canal.runtime.api import Canal
from canal.runtime.surface import Checkpoint

MAX_RECORDS = 300


def targets(command: str, cwd: str) -> list[str]:
    """The paths the command would delete or overwrite (as the policy sees them)."""
    parsed = parse(command, cwd=cwd or "/workspace")
    found: list[str] = []
    for seg in parsed.segments:
        found += [t for t in segment_targets(seg) if t not in found]
    return found


def pending_rows(canal: Canal) -> list[dict[str, Any]]:
    """Confirmations in human mode not yet used: waiting for a decision, or approved and not yet re-run."""
    return [{**p.to_json(), "targets": targets(p.command, p.cwd)} for p in canal.approvals.pending()
            if p.mode == "human"]


def latest_checkpoint(canal: Canal) -> Checkpoint | None:
    with contextlib.suppress(CanalError, OSError):
        return canal.latest_checkpoint()
    return None


@dataclass(frozen=True)
class AuditView:
    report: dict[str, Any]
    kinds: list[str]
    shown: list[dict[str, str]]
    matched: int


def audit_view(canal: Canal, kind: str, text: str) -> AuditView:
    """The records of ``kind`` (an event or its prefix) holding ``text``, newest first; the verify report."""
    found = canal.audit.search(kind=kind, text=text, limit=MAX_RECORDS)
    shown = [{"id": e.id, "ts": e.ts, "event": e.event, "actor": e.actor, "summary": e.summary}
             for e in found.shown]
    return AuditView(found.report.to_json(), found.kinds, shown, found.matched)
