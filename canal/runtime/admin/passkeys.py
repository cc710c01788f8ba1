"""The steps of the web console's passkey ceremonies (WebAuthn): the options a browser signs with, and
checking what it answers against the approvers' configured passkeys (``host/approvals/passkey.py``). The
console verifies a person with them, then decides through ``Canal.approvals.decide_as`` or approves
settings through ``Canal.settings.approve_as``.
"""

from __future__ import annotations

from canal.host.approvals.passkey import (
    ENROL_HINT,
    ENROL_NEXT,
    Asserted,
    authentication_options,
    challenge_for,
    claimed_challenge,
    registration_options,
    verify_assertion,
    verify_registration,
)

__all__ = [
    "ENROL_HINT",
    "ENROL_NEXT",
    "Asserted",
    "authentication_options",
    "challenge_for",
    "claimed_challenge",
    "registration_options",
    "verify_assertion",
    "verify_registration",
]
