"""Who may approve, from trusted configuration (``approvals.approvers`` in canal.yaml), and how each one
proves it. A terminal never counts: every method rests on something the agent's OS user cannot use.

- ``user``: another OS user. Their ``canal approve TOKEN --for AGENT`` reaches the agent's server on its
  approval door; the kernel tells the server the client's uid (SO_PEERCRED). The agent's own uid is
  refused whoever it claims to be.
- ``ssh_key``: an SSH public key (``ssh-keygen -Y sign``, as git's SSH signing; FIDO keys work too). The
  signature travels with the approval and the audit record, so a copy off the host verifies it.
- ``passkeys``: WebAuthn credentials for the web console (``canal console``), one line each,
  ``<credential-id-b64url>:<cose-public-key-b64url>``, as the console's /register page shows it. Only a
  line in trusted configuration makes a credential count: the console never trusts one by itself.
"""

from __future__ import annotations

import pwd
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Method = Literal["os-user", "ssh", "passkey"]
STRONG_METHODS: tuple[Method, ...] = ("os-user", "ssh", "passkey")
B64URL = re.compile(r"[A-Za-z0-9_-]+")
SSH_KEY = re.compile(r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|"
                     r"sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/=]{16,}( [^\n]*)?$")


class ApproverSpec(BaseModel):
    """One person who may approve, and the ways they prove it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
    user: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,31}$")
    ssh_key: str | None = None
    passkeys: tuple[str, ...] = ()
    passkey: bool = False  # the old spelling, refused with a pointer to ``passkeys``

    @field_validator("ssh_key")
    @classmethod
    def _one_key_line(cls, value: str | None) -> str | None:
        if value is not None and not SSH_KEY.match(value.strip()):
            msg = "ssh_key must be one public key line: 'ssh-ed25519 AAAA... comment'"
            raise ValueError(msg)
        return None if value is None else value.strip()

    @field_validator("passkey")
    @classmethod
    def _old_spelling(cls, value: bool) -> bool:
        if value:
            msg = ("'passkey: true' is not how a passkey is enrolled: register one in the console "
                   "(canal console, then its /register page) and add the line it shows under "
                   "passkeys: [...] (docs/approvals.md)")
            raise ValueError(msg)
        return value

    @field_validator("passkeys")
    @classmethod
    def _passkey_lines(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        lines = tuple(v.strip() for v in value)
        for line in lines:
            problem = passkey_line_problem(line)
            if problem:
                msg = f"passkeys: {problem}; each line is '<credential-id-b64url>:<cose-public-key-b64url>'"
                raise ValueError(msg)
        if len({line.split(":")[0] for line in lines}) != len(lines):
            msg = "passkeys: each credential once"
            raise ValueError(msg)
        return lines

    @model_validator(mode="after")
    def _has_a_method(self) -> ApproverSpec:
        if self.user is None and self.ssh_key is None and not self.passkeys:
            msg = f"approver {self.name} has no way to prove who they are: give user, ssh_key or passkeys"
            raise ValueError(msg)
        return self

    def methods(self) -> list[Method]:
        found: list[Method] = []
        if self.user is not None:
            found.append("os-user")
        if self.ssh_key is not None:
            found.append("ssh")
        if self.passkeys:
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

    def by_credential(self, credential_id: str) -> tuple[ApproverSpec, str] | None:
        """The approver whose ``passkeys`` hold ``credential_id`` (base64url), and its public key."""
        for approver in self.approvers:
            for line in approver.passkeys:
                cred, _, key = line.partition(":")
                if cred == credential_id:
                    return approver, key
        return None


def passkey_line_problem(line: str) -> str:
    """What is wrong with one ``passkeys`` line, or ''."""
    cred, sep, key = line.partition(":")
    if not sep or not B64URL.fullmatch(cred) or not B64URL.fullmatch(key):
        return f"{line[:40]!r} is not two base64url parts joined by ':'"
    if not 16 <= len(cred) <= 1400 or not 40 <= len(key) <= 2000:
        return f"{line[:40]!r}: a credential id or public key of an unlikely size"
    from webauthn.helpers import base64url_to_bytes, decode_credential_public_key  # only for passkeys

    try:
        decode_credential_public_key(base64url_to_bytes(key))
    except Exception:  # the library raises several kinds for a key it cannot read
        return f"{line[:40]!r}: the part after ':' is not a COSE public key"
    return ""
