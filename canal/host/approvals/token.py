"""Confirmation tokens: ``c_`` + 8 random base32 characters (the record id) + a 4-character HMAC tag.

Short enough to type (``c_k3j9x2mqa7fe``); the tag lets a token not minted with this host's key be
refused before any lookup. What the token allows is bound by the stored, HMAC-signed record.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

from canal.core.next import act
from canal.host.approvals.errors import ApprovalForgedError

PREFIX = "c_"
TOKEN = re.compile(r"^c_([a-z2-7]{8})([a-z2-7]{4})$")


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode().rstrip("=").lower()


def _tag(key: bytes, token_id: str) -> str:
    return _b32(hmac.new(key, b"canal-token:" + token_id.encode(), hashlib.sha256).digest()[:5])[:4]


def mint(key: bytes) -> tuple[str, str]:
    """A new (token, token_id)."""
    token_id = _b32(secrets.token_bytes(5))
    return f"{PREFIX}{token_id}{_tag(key, token_id)}", token_id


def token_for(key: bytes, token_id: str) -> str:
    return f"{PREFIX}{token_id}{_tag(key, token_id)}"


def parse(key: bytes, token: str) -> str:
    """The token's record id; ``ApprovalForgedError`` when it is malformed or its tag is not ours."""
    found = TOKEN.match(token.strip().lower())
    if found is None or not hmac.compare_digest(_tag(key, found.group(1)), found.group(2)):
        msg = f"{token!r} is not a confirmation token issued by this host"
        raise ApprovalForgedError(msg, next=act("retry", fresh_token=True),
                                  details={"token": token})
    return found.group(1)
