"""A software WebAuthn authenticator for tests: one EC P-256 key, ``none`` attestation, a sign counter.

It does what a browser and a platform authenticator do together: builds clientDataJSON for the origin,
authenticatorData for the rp id (user present and verified), and signs authenticatorData ||
sha256(clientDataJSON) with ECDSA-SHA256. The JSON it returns is what the console's script posts.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import struct
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from webauthn.helpers import encode_cbor

UP, UV, AT = 0x01, 0x04, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SoftAuthenticator:
    def __init__(self, origin: str, rp_id: str = "localhost", *, user_verified: bool = True) -> None:
        self.origin = origin
        self.rp_id = rp_id
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = secrets.token_bytes(32)
        self.counter = 0
        self.user_verified = user_verified

    @property
    def id(self) -> str:
        return b64url(self.credential_id)

    def cose_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return encode_cbor({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"),
                            -3: numbers.y.to_bytes(32, "big")})

    def line(self) -> str:
        """This credential's line for canal.yaml's ``passkeys``."""
        return f"{self.id}:{b64url(self.cose_key())}"

    def _client_data(self, kind: str, challenge: str) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": self.origin,
                           "crossOrigin": False}).encode()

    def _auth_data(self, flags: int, extra: bytes = b"") -> bytes:
        self.counter += 1
        flags |= UV if self.user_verified else 0
        rp_hash = hashlib.sha256(self.rp_id.encode()).digest()
        return rp_hash + bytes([flags]) + struct.pack(">I", self.counter) + extra

    def create(self, options: dict[str, Any]) -> dict[str, Any]:
        """navigator.credentials.create: the registration response for ``options["publicKey"]``."""
        public = options["publicKey"]
        client = self._client_data("webauthn.create", public["challenge"])
        cred = self.credential_id
        attested = bytes(16) + struct.pack(">H", len(cred)) + cred + self.cose_key()
        auth = self._auth_data(UP | AT, attested)
        attestation = encode_cbor({"fmt": "none", "attStmt": {}, "authData": auth})
        return {"id": self.id, "rawId": self.id, "type": "public-key",
                "response": {"clientDataJSON": b64url(client), "attestationObject": b64url(attestation),
                             "transports": ["internal"]}}

    def get(self, options: dict[str, Any], *, origin: str | None = None) -> dict[str, Any]:
        """navigator.credentials.get: an assertion over ``options["publicKey"]["challenge"]``."""
        public = options["publicKey"]
        allowed = [c["id"] for c in public.get("allowCredentials") or []]
        assert not allowed or self.id in allowed, "the console asked for another credential"
        client = json.dumps({"type": "webauthn.get", "challenge": public["challenge"],
                             "origin": origin or self.origin, "crossOrigin": False}).encode()
        auth = self._auth_data(UP)
        signature = self.key.sign(auth + hashlib.sha256(client).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": self.id, "rawId": self.id, "type": "public-key",
                "response": {"clientDataJSON": b64url(client), "authenticatorData": b64url(auth),
                             "signature": b64url(signature), "userHandle": None}}
