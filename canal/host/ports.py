"""Small interfaces inside ``runtime`` so its parts can be built and tested apart, then wired together."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

# Replaces secrets in text by stable placeholders ``[REDACTED_SECRET:<rule>:<id>]``.
Redactor = Callable[[str], str]
PLACEHOLDER_START = "[REDACTED_SECRET:"


def no_redaction(text: str) -> str:
    return text


# An ordered map of texts through one redactor's ``redact_keep_lines``, redacting ahead elsewhere
# (``host.redact.pool``); it raises ``SpreadFailed`` when it cannot go on.
Spread = Callable[[Iterable[str]], Iterator[str]]


class SpreadFailed(Exception):
    """The redacting ahead stopped (its workers gone, or never started): the caller redacts itself."""


class AuditSink(Protocol):
    """Appends one event to the tamper-evident audit log and returns its record id (e.g. ``a-000042``)."""

    def append(self, event: str, data: Mapping[str, Any], *, actor: str = "agent") -> str: ...


class RevisionLedger(Protocol):
    """Remembers the newest revision of each sealed document, so a rolled-back file is caught on load.

    The audit log implements it: every write of a sealed document is an audit record.
    """

    def record_revision(self, doc_id: str, revision: int, digest: str) -> None: ...

    def latest_revision(self, doc_id: str) -> tuple[int, str] | None: ...
