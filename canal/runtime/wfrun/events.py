"""The engine's transitions as audit records: ``workflow.<...>`` events in the project's audit log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canal.host.ports import AuditSink
from canal.workflows.ports import EventHook


def audit_hook(audit: AuditSink, *, actor: str = "agent") -> EventHook:
    """An ``EventHook`` appending each event to ``audit``. Event data carries ids, statuses and field
    names only (the engine's contract), and the audit log redacts it again on the way in."""

    def on_event(name: str, data: Mapping[str, Any]) -> None:
        audit.append(name, dict(data), actor=actor)

    return on_event


def both(first: EventHook, second: EventHook) -> EventHook:
    """Each event to ``first`` (the audit record, which must not be skipped), then to ``second``."""

    def on_event(name: str, data: Mapping[str, Any]) -> None:
        first(name, data)
        second(name, data)

    return on_event
