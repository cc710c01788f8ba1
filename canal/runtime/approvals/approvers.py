"""Who may approve: a person at a terminal, or the holder of a registered approver key.

An approver key is 32 random bytes (base64 in a 0600 file) given to a person, never to the agent. The
registry keeps only each key's SHA-256 under the person's name, in a file signed with the host key so
an agent cannot add its own approver by editing it. Registering a key needs a terminal.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from canal.core.fsutil import atomic_write
from canal.core.next import act
from canal.runtime.approvals.errors import ApprovalStoreError, ApproverUnverifiedError
from canal.runtime.approvals.model import Approver

NO_TERMINAL_HINT = "a person approves it themselves, from a terminal, or with a registered approver key"
NO_TERMINAL_NEXT = (act("approve", token="TOKEN"),
                    act("approvals.add_approver", "registers a key", name="NAME"))


def from_terminal(stdin_tty: bool, stdout_tty: bool, user: str) -> Approver:
    """The person at this terminal; refused when stdin or stdout is not a terminal (an agent's pipe)."""
    if not (stdin_tty and stdout_tty):
        msg = ("approving needs a person: stdin and stdout are not both a terminal, "
               "and no approver key was given")
        raise ApproverUnverifiedError(msg, hint=NO_TERMINAL_HINT, next=NO_TERMINAL_NEXT)
    return Approver(user=user, how="tty")


def identify_person(key_file: Path | None, user: str, *, terminal: tuple[bool, bool],
                    registry: Callable[[], ApproverRegistry]) -> Approver:
    """The one place a person proves who they are, for confirmations and for trusted configuration.

    Today: the holder of a registered approver key, or whoever has a terminal on stdin and stdout.
    The terminal check holds against an agent that only reaches Canal through ``canal run``, MCP or a
    harness's pipes; it does NOT hold against a program running on the host as this user, which can
    fake a terminal (``script -c``). An approver identity the agent's OS user cannot use (another uid,
    a signature key, a passkey) plugs in here.
    """
    if key_file is not None:
        return registry().identify(key_file, user)
    return from_terminal(*terminal, user)


class ApproverRegistry:
    def __init__(self, path: Path, key: bytes) -> None:
        self.path = path
        self._key = key

    def add(self, name: str, key_out: Path, added_by: str) -> None:
        """Make a new approver key, write it to ``key_out`` (0600, never overwriting) and register it."""
        secret = secrets.token_bytes(32)
        try:
            fd = os.open(key_out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            msg = f"cannot create the approver key file {key_out}: {exc.strerror}"
            raise ApprovalStoreError(msg, hint="pick a path that does not exist yet") from exc
        with os.fdopen(fd, "wb") as fh:
            fh.write(base64.b64encode(secret) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        entries = self._entries()
        entries[name] = {"sha256": hashlib.sha256(secret).hexdigest(), "added_at": time.time(),
                         "added_by": added_by}
        body = {"v": 1, "approvers": entries}
        atomic_write(self.path, json.dumps({**body, "mac": self._sign(body)}, sort_keys=True).encode())

    def names(self) -> list[str]:
        return sorted(self._entries())

    def identify(self, key_file: Path, user: str) -> Approver:
        """The approver whose key is in ``key_file``; refused for unknown keys or loose permissions."""
        hint = "ask the operator for an approver key"
        add = act("approvals.add_approver", name="NAME")
        try:
            st = key_file.stat()
            secret = base64.b64decode(key_file.read_bytes().strip(), validate=True)
        except (OSError, binascii.Error) as exc:
            msg = f"cannot read the approver key {key_file}: {exc}"
            raise ApproverUnverifiedError(msg, hint=hint, next=add) from exc
        if st.st_mode & 0o077:
            msg = f"refusing approver key {key_file}: it is readable by others"
            raise ApproverUnverifiedError(msg, hint=f"chmod 600 {key_file}")
        digest = hashlib.sha256(secret).hexdigest()
        for name, entry in self._entries().items():
            if hmac.compare_digest(str(entry.get("sha256", "")), digest):
                return Approver(user=user, how="approver-key", key_name=name)
        msg = f"the key in {key_file} is not a registered approver key"
        raise ApproverUnverifiedError(msg, hint=hint, next=add)

    def _sign(self, body: dict[str, Any]) -> str:
        payload = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        return hmac.new(self._key, b"canal-approvers:" + payload, hashlib.sha256).hexdigest()

    def _entries(self) -> dict[str, dict[str, Any]]:
        try:
            raw: Any = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            msg = f"the approver registry {self.path} is unreadable"
            hint = f"remove {self.path} and register approvers again"
            raise ApproverUnverifiedError(msg, hint=hint) from exc
        mac = raw.pop("mac", "") if isinstance(raw, dict) else ""
        if not isinstance(mac, str) or not hmac.compare_digest(mac, self._sign(raw)):
            msg = f"the approver registry {self.path} fails its signature check (edited outside Canal)"
            raise ApproverUnverifiedError(msg, hint=f"remove {self.path} and register approvers again")
        return dict(raw["approvers"])
