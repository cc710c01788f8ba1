"""Errors of confirmation tokens and approvals. Codes are public API (docs/audit.md); tests pin them.

Every refusal of a token exits 122 (``APPROVAL_INVALID``): the token cannot be used as given. The one
exception is ``APPROVAL_PENDING`` (120, like ``CONFIRMATION_REQUIRED``): the token is good but a person
has not approved it yet, so the caller's next step is the same as for a fresh confirmation: wait for a
person, then re-run.
"""

from __future__ import annotations

from typing import ClassVar

from canal.core.errors import CanalError, ExitCode


class ApprovalError(CanalError):
    code: ClassVar[str] = "APPROVAL_INVALID"
    exit_code: ClassVar[int] = ExitCode.APPROVAL_INVALID


class ApprovalExpiredError(ApprovalError):
    code = "APPROVAL_EXPIRED"


class ApprovalReusedError(ApprovalError):
    code = "APPROVAL_REUSED"


class ApprovalForgedError(ApprovalError):
    """Unknown token, a token whose signature tag is wrong, or a stored record whose HMAC fails."""

    code = "APPROVAL_FORGED"


class ApprovalMismatchError(ApprovalError):
    """The token was issued for another command, sandbox, working directory or policy."""

    code = "APPROVAL_MISMATCH"


class ApprovalPendingError(ApprovalError):
    """Human approval mode: the token is valid but no person has approved it yet."""

    code = "APPROVAL_PENDING"
    exit_code = ExitCode.CONFIRMATION_REQUIRED


class ApproverUnverifiedError(ApprovalError):
    """An approval without any approver proof (a terminal is none), where approvers are needed."""

    code = "APPROVER_UNVERIFIED"


class ApprovalStoreError(ApprovalError):
    """The approvals folder could not be read or written."""

    code = "APPROVAL_STORE_FAILED"
    exit_code = ExitCode.CANAL_ERROR


class ApproverIsAgentError(ApprovalError):
    """The approving client runs as the agent's own OS user (SO_PEERCRED): the agent cannot approve."""

    code = "APPROVER_IS_AGENT"


class ApproverUnknownError(ApprovalError):
    """The approving OS user is not an approver of this project (canal.yaml)."""

    code = "APPROVER_UNKNOWN"


class ApproversNotConfiguredError(ApprovalError):
    """Human approval needs ``approvals.approvers`` in canal.yaml: nobody can prove who they are."""

    code = "APPROVERS_NOT_CONFIGURED"


class SignatureInvalidError(ApprovalError):
    """An SSH signature that does not verify (forged, tampered, another message or namespace)."""

    code = "SIGNATURE_INVALID"


class SignerNotAllowedError(ApprovalError):
    """An SSH signature by a key that no approver of this project has (not in allowed_signers)."""

    code = "SIGNER_NOT_ALLOWED"


class SignatureReplayedError(ApprovalError):
    """A signature that was already used (the same approval sent twice, or an old one sent again)."""

    code = "SIGNATURE_REPLAYED"


class PasskeyUnknownError(ApprovalError):
    """A passkey (WebAuthn credential) that no approver of this project has in canal.yaml."""

    code = "PASSKEY_UNKNOWN"


class PasskeyInvalidError(ApprovalError):
    """A passkey assertion or registration that does not verify (signature, origin, user verification,
    or a sign count that went back: a cloned authenticator)."""

    code = "PASSKEY_INVALID"


class PasskeyReplayedError(ApprovalError):
    """A passkey assertion whose challenge the console did not hand out, or already used, or that expired."""

    code = "PASSKEY_REPLAYED"


class ApprovalDeniedError(ApprovalError):
    """A person denied the confirmation; the message carries their reason."""

    code = "APPROVAL_DENIED"


class ApprovalDoorUnreachableError(ApprovalError):
    """``canal approve --for USER``: no Canal server of that user answers on its approval door."""

    code = "APPROVAL_DOOR_UNREACHABLE"
    exit_code = ExitCode.CANAL_ERROR
