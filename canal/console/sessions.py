"""Console sessions, held in the server's memory only: a random id (the cookie), a CSRF token, the
approver once logged in, and the WebAuthn challenges handed out to it (each usable once, briefly).

Logging in makes a new session (new id, new CSRF token) and drops the anonymous one, so an id seen
before the login is worth nothing after it.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Purpose = Literal["register", "login", "decide", "config"]
CHALLENGE_TTL_S = 180.0  # the ceremony's own timeout is 120 s
MAX_CHALLENGES = 8  # per session; the oldest goes first
MAX_SESSIONS = 512  # anyone on loopback may open one: what they can make us hold is bounded


@dataclass(frozen=True)
class Challenge:
    purpose: Purpose
    value: bytes
    approver: str
    created: float
    token: str = ""
    decision: str = ""
    reason: str = ""
    message: bytes = b""


@dataclass
class Session:
    id: str
    csrf: str
    expires: float
    approver: str | None = None
    challenges: dict[str, Challenge] = field(default_factory=dict)

    def csrf_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(self.csrf.encode(), given.encode())


class Sessions:
    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.time) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}

    def _new(self, approver: str | None) -> Session:
        session = Session(id=secrets.token_urlsafe(32), csrf=secrets.token_urlsafe(32),
                          expires=self.clock() + self.ttl_s, approver=approver)
        self._by_id[session.id] = session
        while len(self._by_id) > MAX_SESSIONS:  # anonymous ones go first: a flood of visits logs nobody out
            anonymous = next((sid for sid, s in self._by_id.items() if s.approver is None), None)
            self._by_id.pop(anonymous or next(iter(self._by_id)))
        return session

    def open(self) -> Session:
        """A new anonymous session (before login: it carries the login's CSRF token and challenge)."""
        with self._lock:
            self._purge()
            return self._new(None)

    def get(self, session_id: str | None) -> Session | None:
        """The live session of this id, or None (unknown or expired)."""
        if not session_id:
            return None
        with self._lock:
            found = self._by_id.get(session_id)
            if found is not None and found.expires <= self.clock():
                del self._by_id[session_id]
                return None
            return found

    def log_in(self, old: Session, approver: str) -> Session:
        with self._lock:
            self._by_id.pop(old.id, None)
            return self._new(approver)

    def drop(self, session: Session) -> None:
        with self._lock:
            self._by_id.pop(session.id, None)

    def any_logged_in(self) -> bool:
        now = self.clock()
        with self._lock:
            return any(s.approver is not None and s.expires > now for s in self._by_id.values())

    def remember(self, session: Session, key: str, challenge: Challenge) -> None:
        with self._lock:
            session.challenges[key] = challenge
            while len(session.challenges) > MAX_CHALLENGES:
                session.challenges.pop(next(iter(session.challenges)))

    def take(self, session: Session, key: str, purpose: Purpose) -> Challenge | None:
        """The challenge ``key`` of this session for ``purpose``, removed: it counts once. None when it
        was never handed out, was used already, or is older than ``CHALLENGE_TTL_S``."""
        with self._lock:
            found = session.challenges.get(key)
            if found is None or found.purpose != purpose:
                return None
            del session.challenges[key]
        if self.clock() - found.created > CHALLENGE_TTL_S:
            return None
        return found

    def _purge(self) -> None:
        now = self.clock()
        for sid in [sid for sid, s in self._by_id.items() if s.expires <= now]:
            del self._by_id[sid]
