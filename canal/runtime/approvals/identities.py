"""Who may approve, from trusted configuration (``approvals.approvers`` in canal.yaml), and how each one
proves it. A terminal never counts: every method rests on something the agent's OS user cannot use.

- ``user``: another OS user. Their ``canal approve TOKEN --for AGENT`` reaches the agent's server on its
  approval door; the kernel tells the server the client's uid (SO_PEERCRED). The agent's own uid is
  refused whoever it claims to be.
- ``ssh_key``: an SSH public key (``ssh-keygen -Y sign``, as git's SSH signing; FIDO keys work too). The
  signature travels with the approval and the audit record, so a copy off the host verifies it.
- ``passkey``: reserved for the web console (WebAuthn), which is not built yet: ``passkey: true`` is refused.
"""

from __future__ import annotations

import pwd
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Method = Literal["os-user", "ssh", "passkey"]
STRONG_METHODS: tuple[Method, ...] = ("os-user", "ssh", "passkey")
SSH_KEY = re.compile(r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|"
                     r"sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/=]{16,}( [^\n]*)?$")


class ApproverSpec(BaseModel):
    """One person who may approve, and the ways they prove it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
    user: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,31}$")
    ssh_key: str | None = None
    passkey: bool = False

    @field_validator("ssh_key")
    @classmethod
    def _one_key_line(cls, value: str | None) -> str | None:
        if value is not None and not SSH_KEY.match(value.strip()):
            msg = "ssh_key must be one public key line: 'ssh-ed25519 AAAA... comment'"
            raise ValueError(msg)
        return None if value is None else value.strip()

    @field_validator("passkey")
    @classmethod
    def _console_not_served_yet(cls, value: bool) -> bool:
        if value:
            msg = ("passkey approval needs the web console, which this version of Canal does not serve yet: "
                   "give the approver a user or an ssh_key (docs/approvals.md)")
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _has_a_method(self) -> ApproverSpec:
        if self.user is None and self.ssh_key is None and not self.passkey:
            msg = f"approver {self.name} has no way to prove who they are: give user or ssh_key"
            raise ValueError(msg)
        return self

    def methods(self) -> list[Method]:
        found: list[Method] = []
        if self.user is not None:
            found.append("os-user")
        if self.ssh_key is not None:
            found.append("ssh")
        if self.passkey:
            found.append("passkey")
        return found

    def uid(self) -> int | None:
        """The uid of ``user`` on this host (a number is taken as a uid), or None when it does not exist."""
        if self.user is None:
            return None
        if self.user.isdigit():
            return int(self.user)
        try:
            return pwd.getpwnam(self.user).pw_uid
        except KeyError:
            return None


class ConsoleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    port: int = Field(default=8765, ge=1024, le=65535)  # served on 127.0.0.1 only
    session_ttl_s: int = Field(default=3600, ge=60, le=24 * 3600)


class ApprovalsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    approvers: tuple[ApproverSpec, ...] = ()
    console: ConsoleSettings = ConsoleSettings()

    @model_validator(mode="after")
    def _unique_names(self) -> ApprovalsSettings:
        names = [a.name for a in self.approvers]
        if len(names) != len(set(names)):
            msg = "approvals.approvers: each name once"
            raise ValueError(msg)
        return self

    def by_name(self, name: str) -> ApproverSpec | None:
        return next((a for a in self.approvers if a.name == name), None)

    def by_uid(self, uid: int) -> ApproverSpec | None:
        return next((a for a in self.approvers if a.user is not None and a.uid() == uid), None)

    def signers(self) -> list[ApproverSpec]:
        return [a for a in self.approvers if a.ssh_key is not None]
