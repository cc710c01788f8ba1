"""Lossless results of a command run in a sandbox (Layer 1).

Nothing here truncates or decodes: stdout and stderr are bytes, kept apart, held in memory up to a cap
and spooled to a file past it. Text for a model is derived later, by the presenter in ``runtime``.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO


class EndReason(StrEnum):
    """Why a command stopped running."""

    EXITED = "exited"
    HARD_TIMEOUT = "hard_timeout"
    IDLE_TIMEOUT = "idle_timeout"
    KILLED = "killed"
    OOM_KILLED = "oom_killed"
    WORKSPACE_QUOTA = "workspace_quota"  # the workspace grew past limits.workspace_size
    SANDBOX_VANISHED = "sandbox_vanished"
    INTERRUPTED = "interrupted"  # the client asked: Ctrl-C, SIGTERM, or it went away


@dataclass(frozen=True)
class CapturedOutput:
    """One output stream: either ``data`` in memory or a spool file at ``path`` (never both)."""

    size: int
    data: bytes | None = None
    path: Path | None = None
    sha256: str = ""  # hex digest of every byte, taken as they arrived ("" when not known)
    dropped: int = 0  # bytes cut from the middle of the spool file (the stream passed its cap)

    @classmethod
    def of(cls, data: bytes) -> CapturedOutput:
        return cls(size=len(data), data=data, sha256=hashlib.sha256(data).hexdigest())

    @property
    def spooled(self) -> bool:
        return self.path is not None

    def open(self) -> BinaryIO:
        """A binary reader over the whole stream; reads spooled output incrementally."""
        if self.path is not None:
            return self.path.open("rb")
        return io.BytesIO(self.data or b"")

    def head(self, limit: int) -> bytes:
        with self.open() as fh:
            return fh.read(limit)

    def read_bytes(self) -> bytes:
        """All bytes. Loads a spooled stream into memory: use ``open()`` for large outputs."""
        with self.open() as fh:
            return fh.read()


EMPTY = CapturedOutput(size=0, data=b"")


@dataclass(frozen=True)
class SessionState:
    """What a sandbox's shell session keeps between commands, as the next command will see it.

    ``changed``: exported variables whose values differ from the session's start (names only, so no
    secret value travels); ``path``: PATH's value when it changed. The agent sends this with every reply.
    """

    cwd: str
    changed: tuple[str, ...] = ()
    path: str = ""

    def digest(self) -> str:
        """Computed identically by the in-container agent (``agent.main.state_digest``)."""
        blob = json.dumps([self.cwd, sorted(self.changed), self.path], separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:32]

    def env(self) -> Mapping[str, str]:
        """Changed variables as the policy takes them: name -> value (only PATH's value is known)."""
        return {name: (self.path if name == "PATH" else "") for name in self.changed}


@dataclass(frozen=True)
class ExecResult:
    """What one command did. A non-zero exit is data, not an exception."""

    stdout: CapturedOutput
    stderr: CapturedOutput
    exit_code: int | None
    duration_s: float
    reason: EndReason = EndReason.EXITED
    timeout_s: float | None = None
    idle_timeout_s: float | None = None
    memory_limit_bytes: int | None = None
    detail: str = ""
    limits_hit: tuple[str, ...] = ()  # "memory" (an OOM kill) and/or "pids" (the process limit)
    survivors: tuple[int, ...] = ()  # processes still alive after a timeout kill (empty when it worked)
    quota_bytes: int | None = None  # the workspace's limit for this command, when it was passed
    quota_used_bytes: int | None = None
    session: SessionState | None = field(default=None, compare=False)  # the session after the command

    @property
    def ok(self) -> bool:
        return self.reason is EndReason.EXITED and self.exit_code == 0
