"""Errors of confirmation tokens and approvals. Codes are public API (docs/audit.md); tests pin them.

Every refusal of a token exits 122 (``APPROVAL_INVALID``): the token cannot be used as given. The one
exception is ``APPROVAL_PENDING`` (120, like ``CONFIRMATION_REQUIRED``): the token is good but a person
has not approved it yet, so the caller's next step is the same as for a fresh confirmation: wait for a
person, then re-run.
"""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


class ApprovalError(CanalError):
    code = "APPROVAL_INVALID"
    exit_code = ExitCode.APPROVAL_INVALID


APPROVAL_EXPIRED = register(ApprovalError, "APPROVAL_EXPIRED", "Approval expired.")

APPROVAL_REUSED = register(ApprovalError, "APPROVAL_REUSED", "Approval reused.")


class ApprovalForgedError(ApprovalError):
    """Unknown token, a token whose signature tag is wrong, or a stored record whose HMAC fails."""

    code = "APPROVAL_FORGED"


APPROVAL_MISMATCH = register(ApprovalError, "APPROVAL_MISMATCH", """
    The token was issued for another command, sandbox, working directory or policy.
    """)

APPROVAL_PENDING = register(ApprovalError, "APPROVAL_PENDING", """
    Human approval mode: the token is valid but no person has approved it yet.
    """, exit_code=ExitCode.CONFIRMATION_REQUIRED)

APPROVER_UNVERIFIED = register(ApprovalError, "APPROVER_UNVERIFIED", """
    An approval without any approver proof (a terminal is none), where approvers are needed.
    """)

APPROVAL_STORE_FAILED = register(ApprovalError, "APPROVAL_STORE_FAILED", """
    The approvals folder could not be read or written.
    """, exit_code=ExitCode.CANAL_ERROR)

APPROVER_IS_AGENT = register(ApprovalError, "APPROVER_IS_AGENT", """
    The approving client runs as the agent's own OS user (SO_PEERCRED): the agent cannot approve.
    """)

APPROVER_UNKNOWN = register(ApprovalError, "APPROVER_UNKNOWN", """
    The approving OS user is not an approver of this project (canal.yaml).
    """)

APPROVERS_NOT_CONFIGURED = register(ApprovalError, "APPROVERS_NOT_CONFIGURED", """
    Human approval needs ``approvals.approvers`` in canal.yaml: nobody can prove who they are.
    """)

SIGNATURE_INVALID = register(ApprovalError, "SIGNATURE_INVALID", """
    An SSH signature that does not verify (forged, tampered, another message or namespace).
    """)

SIGNER_NOT_ALLOWED = register(ApprovalError, "SIGNER_NOT_ALLOWED", """
    An SSH signature by a key that no approver of this project has (not in allowed_signers).
    """)

SIGNATURE_REPLAYED = register(ApprovalError, "SIGNATURE_REPLAYED", """
    A signature that was already used (the same approval sent twice, or an old one sent again).
    """)

PASSKEY_UNKNOWN = register(ApprovalError, "PASSKEY_UNKNOWN", """
    A passkey (WebAuthn credential) that no approver of this project has in canal.yaml.
    """)

PASSKEY_INVALID = register(ApprovalError, "PASSKEY_INVALID", """
    A passkey assertion or registration that does not verify (signature, origin, user verification,
    or a sign count that went back: a cloned authenticator).
    """)

PASSKEY_REPLAYED = register(ApprovalError, "PASSKEY_REPLAYED", """
    A passkey assertion whose challenge the console did not hand out, or already used, or that expired.
    """)

APPROVAL_DENIED = register(ApprovalError, "APPROVAL_DENIED", """
    A person denied the confirmation; the message carries their reason.
    """)

APPROVAL_DOOR_UNREACHABLE = register(ApprovalError, "APPROVAL_DOOR_UNREACHABLE", """
    ``canal approve --for USER``: no Canal server of that user answers on its approval door.
    """, exit_code=ExitCode.CANAL_ERROR)
