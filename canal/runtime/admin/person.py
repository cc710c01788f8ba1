"""What a front end that verifies a person uses with the in-process methods of ``Canal.approvals`` and
``Canal.settings``: the proof it saw (``Proof``: the client's uid, an SSH signature), the person it
identified (``Approver``), signing with an SSH key, and the errors they raise. The steps of the console's
passkey ceremonies are in ``passkeys`` (they load the WebAuthn library, which the CLI never needs).

The checks themselves live with the approvals (``host/approvals/``: ``verify``, ``sshsig``, ``passkey``);
this module is the one door the front ends take to them, so they never import the stores.
"""

from __future__ import annotations

from canal.host.approvals import (
    APPROVER_UNKNOWN,
    ApprovalError,
    ApprovalsSettings,
    Approver,
    ApproverSpec,
    Pending,
)
from canal.host.approvals.decide import Decision, Proof
from canal.host.approvals.errors import APPROVAL_DOOR_UNREACHABLE, PASSKEY_REPLAYED
from canal.host.approvals.sshsig import sign

__all__ = [
    "APPROVAL_DOOR_UNREACHABLE",
    "APPROVER_UNKNOWN",
    "PASSKEY_REPLAYED",
    "ApprovalError",
    "ApprovalsSettings",
    "Approver",
    "ApproverSpec",
    "Decision",
    "Pending",
    "Proof",
    "sign",
]
