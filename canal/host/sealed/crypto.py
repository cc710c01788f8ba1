"""The cryptography of one sealed file (SOPS's model, getsops/sops, with AES-256-GCM throughout).

* a fresh 256-bit data key per write, wrapped by the key-encryption key; the wrap's associated data
  names the format, document and key id;
* each sealed value ``ENC[AES256_GCM,data:...,iv:...,tag:...,type:str|json]`` under the data key,
  its associated data binding format, document, key id and the value's JSON pointer, so a value
  cannot be moved to another field or file;
* an HMAC-SHA256 (key derived from the data key) over the canonical plaintext, so an added, deleted
  or edited readable field is caught too.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from canal.host.keys.store import hkdf

FORMAT = "canal.sealed/1"
PREFIX = "ENC[AES256_GCM,"
NONCE = 12
TAG = 16


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _aad(doc_id: str, key_id: str, where: str) -> bytes:
    return f"{FORMAT}|{doc_id}|{key_id}|{where}".encode()


def new_data_key() -> bytes:
    return AESGCM.generate_key(bit_length=256)


def wrap(kek: bytes, key_id: str, doc_id: str, data_key: bytes) -> str:
    nonce = os.urandom(NONCE)
    return _b64(nonce + AESGCM(kek).encrypt(nonce, data_key, _aad(doc_id, key_id, "#data-key")))


def unwrap(kek: bytes, key_id: str, doc_id: str, wrapped: str) -> bytes:
    """Raises ``cryptography.exceptions.InvalidTag`` (or ValueError) when it does not authenticate."""
    raw = base64.b64decode(wrapped, validate=True)
    return AESGCM(kek).decrypt(raw[:NONCE], raw[NONCE:], _aad(doc_id, key_id, "#data-key"))


def encrypt_value(aead: AESGCM, doc_id: str, key_id: str, where: str, value: Any) -> str:
    kind = "str" if isinstance(value, str) else "json"
    plain = value.encode() if isinstance(value, str) else canonical(value)
    nonce = os.urandom(NONCE)
    sealed = aead.encrypt(nonce, plain, _aad(doc_id, key_id, where))
    return (f"{PREFIX}data:{_b64(sealed[:-TAG])},iv:{_b64(nonce)},tag:{_b64(sealed[-TAG:])},"
            f"type:{kind}]")


def decrypt_value(aead: AESGCM, doc_id: str, key_id: str, where: str, text: str) -> Any:
    """Raises InvalidTag when the value does not authenticate at ``where``; ValueError when malformed."""
    fields = parse_enc(text)
    data = base64.b64decode(fields["data"]) + base64.b64decode(fields["tag"])
    plain = aead.decrypt(base64.b64decode(fields["iv"]), data, _aad(doc_id, key_id, where))
    if fields["type"] == "str":
        return plain.decode()
    return json.loads(plain)


def parse_enc(text: str) -> dict[str, str]:
    if not (isinstance(text, str) and text.startswith(PREFIX) and text.endswith("]")):
        msg = "not a sealed value"
        raise ValueError(msg)
    parts = dict(p.split(":", 1) for p in text[len(PREFIX):-1].split(","))
    if set(parts) != {"data", "iv", "tag", "type"} or parts["type"] not in ("str", "json"):
        msg = "malformed sealed value"
        raise ValueError(msg)
    return parts


def mac(data_key: bytes, payload: Any) -> str:
    return hmac.new(hkdf(data_key, "canal.sealed mac"), canonical(payload), hashlib.sha256).hexdigest()


def mac_matches(data_key: bytes, payload: Any, expected: str) -> bool:
    return hmac.compare_digest(mac(data_key, payload), expected)
