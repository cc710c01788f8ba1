"""Passkeys (WebAuthn) of approvers, checked with py_webauthn: registration, login and signed decisions.

A credential counts only when its line (``<credential-id-b64url>:<cose-public-key-b64url>``) is in the
approver's ``passkeys`` in trusted configuration. Every ceremony asks for user verification. A decision
is signed over a challenge that is the SHA-256 of the same kind of text an SSH approver signs (decision,
token, project, command digest, expiry), plus the digest of the reason and a one-time nonce: the text
and the assertion go into the audit record, so a copy of the log off the host verifies the decision
with the public key alone (``verify_evidence``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from canal.core.next import act
from canal.host.approvals.errors import PASSKEY_INVALID, PASSKEY_UNKNOWN
from canal.host.approvals.identities import ApprovalsSettings, ApproverSpec

RP_ID = "localhost"
RP_NAME = "Canal"
TIMEOUT_MS = 120_000
ENROL_HINT = ("register it on the console's /register page and add the line it shows to the approver's "
              "passkeys in canal.yaml; an approver approves that change")
ENROL_NEXT = act("config.approve", "once the passkey's line is in canal.yaml")


@dataclass(frozen=True)
class Asserted:
    """A verified assertion: whose credential, its new sign count, and the evidence for the record."""

    approver: ApproverSpec
    credential_id: str
    sign_count: int
    evidence: dict[str, Any]


def origin_for(port: int) -> str:
    return f"http://{RP_ID}:{port}"


def challenge_for(message: bytes) -> bytes:
    """The WebAuthn challenge that binds a decision: the SHA-256 of its signed text."""
    return hashlib.sha256(message).digest()


def _descriptors(lines: tuple[str, ...]) -> list[PublicKeyCredentialDescriptor]:
    return [PublicKeyCredentialDescriptor(id=base64url_to_bytes(line.split(":")[0])) for line in lines]


def registration_options(approver: ApproverSpec, project_id: str, challenge: bytes) -> dict[str, Any]:
    """``PublicKeyCredentialCreationOptions`` for ``navigator.credentials.create`` (JSON, base64url)."""
    user_id = hashlib.sha256(f"canal-approver:{project_id}:{approver.name}".encode()).digest()[:16]
    options = generate_registration_options(
        rp_id=RP_ID, rp_name=RP_NAME, user_name=approver.name, user_id=user_id, challenge=challenge,
        timeout=TIMEOUT_MS, exclude_credentials=_descriptors(approver.passkeys),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.DISCOURAGED,
            user_verification=UserVerificationRequirement.REQUIRED))
    loaded: dict[str, Any] = json.loads(options_to_json(options))
    return loaded


def verify_registration(credential: dict[str, Any], challenge: bytes, port: int) -> str:
    """The ``passkeys`` line of a new credential, once its registration verifies."""
    try:
        done = verify_registration_response(credential=credential, expected_challenge=challenge,
                                            expected_rp_id=RP_ID, expected_origin=origin_for(port),
                                            require_user_verification=True)
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        msg = f"the new passkey's registration does not verify: {exc}"
        raise PASSKEY_INVALID(msg, hint="register again; the authenticator must verify the user") from exc
    return f"{bytes_to_base64url(done.credential_id)}:{bytes_to_base64url(done.credential_public_key)}"


def authentication_options(lines: tuple[str, ...], challenge: bytes) -> dict[str, Any]:
    """``PublicKeyCredentialRequestOptions`` for ``navigator.credentials.get``, for these credentials."""
    options = generate_authentication_options(
        rp_id=RP_ID, challenge=challenge, timeout=TIMEOUT_MS, allow_credentials=_descriptors(lines),
        user_verification=UserVerificationRequirement.REQUIRED)
    loaded: dict[str, Any] = json.loads(options_to_json(options))
    return loaded


def claimed_challenge(credential: dict[str, Any]) -> str:
    """The challenge (base64url) the client data of an assertion names, before anything is verified."""
    try:
        raw = base64url_to_bytes(str(credential["response"]["clientDataJSON"]))
        challenge = json.loads(raw)["challenge"]
    except (KeyError, TypeError, ValueError) as exc:
        msg = "the passkey response carries no readable client data"
        raise PASSKEY_INVALID(msg, hint="use the console's own page to sign") from exc
    return str(challenge)


def verify_assertion(settings: ApprovalsSettings, credential: dict[str, Any], challenge: bytes, port: int,
                     sign_count: int, *, only: str | None = None) -> Asserted:
    """Check an assertion by a credential in trusted configuration (of approver ``only``, when given)."""
    cred_id = str(credential.get("id") or "")
    found = settings.by_credential(cred_id)
    if found is None or (only is not None and found[0].name != only):
        who = f"approver {only}" if only else "any approver"
        msg = f"the passkey {cred_id[:16]}... is not one of {who}'s in canal.yaml"
        raise PASSKEY_UNKNOWN(msg, hint=ENROL_HINT, next=ENROL_NEXT, details={"credential_id": cred_id})
    approver, key = found
    try:
        done = verify_authentication_response(
            credential=credential, expected_challenge=challenge, expected_rp_id=RP_ID,
            expected_origin=origin_for(port), credential_public_key=base64url_to_bytes(key),
            credential_current_sign_count=sign_count, require_user_verification=True)
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        msg = f"the passkey assertion of {approver.name} does not verify: {exc}"
        raise PASSKEY_INVALID(msg, hint="sign again on the console's page",
                                  details={"credential_id": cred_id}) from exc
    response = credential["response"]
    evidence = {"credential_id": cred_id, "rp_id": RP_ID, "origin": origin_for(port),
                "authenticator_data": str(response["authenticatorData"]),
                "client_data_json": str(response["clientDataJSON"]),
                "signature": str(response["signature"]), "sign_count": done.new_sign_count,
                "signature_sha256": hashlib.sha256(str(response["signature"]).encode()).hexdigest()}
    return Asserted(approver, cred_id, done.new_sign_count, evidence)


def verify_evidence(evidence: dict[str, Any], public_key: str) -> None:
    """Check a recorded passkey decision with the public key alone (off the host): the assertion's
    signature, user verification, and that its challenge is the digest of the recorded ``message``."""
    credential = {"id": evidence["credential_id"], "rawId": evidence["credential_id"], "type": "public-key",
                  "response": {"authenticatorData": evidence["authenticator_data"],
                               "clientDataJSON": evidence["client_data_json"],
                               "signature": evidence["signature"]}}
    try:
        verify_authentication_response(
            credential=credential, expected_challenge=challenge_for(str(evidence["message"]).encode()),
            expected_rp_id=str(evidence["rp_id"]), expected_origin=str(evidence["origin"]),
            credential_public_key=base64url_to_bytes(public_key), credential_current_sign_count=0,
            require_user_verification=True)
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        msg = f"the recorded passkey decision does not verify: {exc}"
        raise PASSKEY_INVALID(msg, hint="the record was altered, or signed by another key") from exc
