"""Egress attempts into the audit log, and the proxies' lifetime around the project's sandboxes.

The backend's proxies log every request, CONNECT and DNS query an allowlist sandbox makes; this reads
what they logged since the last read (a cursor per proxy, host-side), writes one ``egress.attempt``
audit record per attempt, and keeps the cursor. Reads happen after every command of an allowlist
sandbox, before a proxy is removed (``canal down``, ``canal gc``) and before ``canal egress log``. What
never reaches a proxy (a connection to an IP address, IPv6) fails inside the sandbox and leaves no
record: docs/egress.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from canal.core.fsutil import FILE_MODE, atomic_write, private_dir
from canal.core.next import Say, act
from canal.host.audit import AuditLog, parse_line
from canal.host.audit.record import MalformedRecord
from canal.sandbox.backend import SandboxBackend
from canal.sandbox.egress_squid import EgressAttempt, Kind

EVENT = "egress.attempt"
PROXY_REMOVED = "egress.proxy_removed"
ACTOR = "sandbox"
SETTING = "sandbox.network.allow"


class EgressRecord(BaseModel):
    """One attempt as the audit log keeps it (what ``canal egress log --json`` prints)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = ""  # the audit record id
    at: str
    sandbox: str | None = None
    client: str
    kind: Kind
    method: str
    host: str
    port: int | None = None
    allowed: bool
    status: str
    http_status: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0

    @property
    def destination(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"


class EgressLog(BaseModel):
    """``canal egress log``: the attempts, and why the newest ones could not be read (no engine)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    records: list[EgressRecord]
    unread: str | None = None
    allowlist: bool = False  # the project's settings (on disk, approved or not) give an allowlist


def record_data(attempt: EgressAttempt) -> dict[str, Any]:
    at = datetime.fromtimestamp(attempt.at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # as audit `ts`
    return {"at": at, **attempt.model_dump(mode="json", exclude={"at"})}


class EgressRecorder:
    """The project's egress audit: ``collect`` after commands, ``prune`` at down/gc, ``history``."""

    def __init__(self, state_dir: Path, audit: AuditLog) -> None:
        self.folder = state_dir / "egress"
        self.audit = audit

    def collect(self, backend: SandboxBackend) -> list[EgressAttempt]:
        """Record what the proxies logged since the last collection; returns those attempts."""
        with self._locked():
            cursors = self._cursors()
            attempts, after = backend.egress_read(cursors)
            for attempt in attempts:
                self.audit.append(EVENT, record_data(attempt), actor=ACTOR, durable=False)
            if attempts:
                self.audit.sync()  # the records are on disk before the cursor moves past them
            if after != cursors:
                atomic_write(self.folder / "cursors.json", json.dumps(after, sort_keys=True).encode())
        return attempts

    def prune(self, backend: SandboxBackend, *, all_owners: bool = False, actor: str = "agent") -> list[str]:
        """Remove the proxies no sandbox uses, after recording what they logged."""
        self.collect(backend)
        removed = list(backend.egress_prune(all_owners=all_owners))
        if removed:
            self.audit.append(PROXY_REMOVED, {"proxies": removed}, actor=actor)
        return removed

    def history(self, *, since: str = "", denied_only: bool = False, sandbox: str | None = None,
                limit: int | None = None) -> list[EgressRecord]:
        """The recorded attempts, oldest first (the newest ``limit`` when given)."""
        found = []
        for line in self.audit.lines():
            try:
                rec = parse_line(line.text)
            except MalformedRecord:
                continue  # canal audit verify names it; the egress view shows what it can read
            if rec.event != EVENT:
                continue
            entry = EgressRecord.model_validate({**rec.data, "id": rec.id})
            if entry.at < since or (denied_only and entry.allowed):
                continue
            if sandbox is not None and entry.sandbox != sandbox:
                continue
            found.append(entry)
        return found[-limit:] if limit else found

    def _cursors(self) -> dict[str, int]:
        try:
            data = json.loads((self.folder / "cursors.json").read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable: read every line again (duplicates beat a gap)
        return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One collector at a time per project (the server and an in-process CLI may both collect)."""
        private_dir(self.folder)
        fd = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def denied_footer(attempts: Sequence[EgressAttempt], container: str, say: Say | None = None,
                  shown: int = 3) -> list[str]:
    """Footer parts naming what this sandbox tried and was refused, and the setting that decides it
    (what to run next in the front end's words, when it gave some)."""
    mine = [a for a in attempts if not a.allowed and a.sandbox in (container, None)]
    if not mine:
        return []
    names = list(dict.fromkeys(a.destination if a.kind != "dns" else f"{a.host} (DNS)" for a in mine))
    more = f", +{len(names) - shown} more" if len(names) > shown else ""
    approve = say(act("config.approve")) if say is not None else None
    log = say(act("egress.log", denied=True)) if say is not None else None
    if approve and log:
        return [f"egress denied: {', '.join(names[:shown])}{more} (not in {SETTING}; a person adds it in "
                f"canal.yaml and runs {approve}; every attempt: {log})"]
    return [f"egress denied: {', '.join(names[:shown])}{more} (not in {SETTING}; a person can add it in "
            "canal.yaml and approve the settings; the audit log has every attempt)"]
