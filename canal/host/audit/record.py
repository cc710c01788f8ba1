"""One audit record: its canonical form, its digest and its HMAC.

A record on disk is one line of canonical JSON::

    {"actor":"agent","data":{...},"digest":"<sha256>","event":"run.started","hash":"<hmac>",
     "key_id":"k1","prev_hash":"<hash of the previous record>","seq":42,
     "ts":"2025-01-01T00:00:00.000000Z","v":1}

``digest`` is SHA-256 over the canonical body (every field but ``digest`` and ``hash``) and ``hash`` is
HMAC-SHA256 over the same bytes with the host key. The pair lets verification tell a naive edit (the
body no longer matches its digest) from a forgery (a self-consistent record signed with another key).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1
GENESIS_HASH = "0" * 64
OPENED_EVENT = "audit.opened"  # the first record of a project's log: its project id and key id
SIGNATURE_FIELDS = ("digest", "hash")
BODY_FIELDS = frozenset({"v", "seq", "ts", "event", "actor", "key_id", "data", "prev_hash"})
EVENT_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")


def canonical(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no spaces, UTF-8, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def sign(key: bytes, payload: bytes) -> str:
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def record_id(seq: int) -> str:
    return f"a-{seq:06d}"


@dataclass(frozen=True)
class Record:
    """A parsed record; ``raw`` keeps every field as read, ``body`` is what was signed."""

    seq: int
    ts: str
    event: str
    actor: str
    key_id: str
    data: Mapping[str, Any]
    prev_hash: str
    digest: str
    hash: str
    body: bytes

    @property
    def id(self) -> str:
        return record_id(self.seq)

    def digest_ok(self) -> bool:
        return hmac.compare_digest(hashlib.sha256(self.body).hexdigest(), self.digest)

    def hmac_ok(self, key: bytes) -> bool:
        return hmac.compare_digest(sign(key, self.body), self.hash)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "seq": self.seq, "ts": self.ts, "event": self.event, "actor": self.actor,
                "data": dict(self.data), "key_id": self.key_id, "prev_hash": self.prev_hash,
                "hash": self.hash}


def build_line(body: Mapping[str, Any], key: bytes) -> tuple[bytes, str]:
    """The record line (with its trailing newline) and its hash: the canonical body, signed, and the
    canonical body with its two signature fields. (Two encodings of the whole: each ``json.dumps`` call
    costs more to set up than to encode a record, so this beats encoding each field once.)"""
    payload = canonical(body)
    digest = hashlib.sha256(payload).hexdigest()
    mac = sign(key, payload)
    return canonical({**body, "digest": digest, "hash": mac}) + b"\n", mac


class MalformedRecord(ValueError):
    """A line that is not a well-formed record (not JSON, missing or mistyped fields)."""


def parse_line(line: bytes) -> Record:
    try:
        raw = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        msg = f"not JSON ({exc.__class__.__name__})"
        raise MalformedRecord(msg) from exc
    if not isinstance(raw, dict):
        msg = "not a JSON object"
        raise MalformedRecord(msg)
    fields = set(raw)
    expected = BODY_FIELDS | set(SIGNATURE_FIELDS)
    if fields != expected:
        msg = f"fields differ from the record schema: missing {sorted(expected - fields)}, " \
              f"unknown {sorted(fields - expected)}"
        raise MalformedRecord(msg)
    return _typed(raw)


def _typed(raw: dict[str, Any]) -> Record:
    strings = ("ts", "event", "actor", "key_id", "prev_hash", "digest", "hash")
    if not isinstance(raw["seq"], int) or isinstance(raw["seq"], bool) or raw["seq"] < 1:
        msg = "seq is not a positive integer"
        raise MalformedRecord(msg)
    if any(not isinstance(raw[f], str) for f in strings) or not isinstance(raw["data"], dict):
        msg = "a field has the wrong type"
        raise MalformedRecord(msg)
    if raw["v"] != SCHEMA_VERSION:
        msg = f"unknown schema version {raw['v']!r} (this Canal reads {SCHEMA_VERSION})"
        raise MalformedRecord(msg)
    body = {k: v for k, v in raw.items() if k not in SIGNATURE_FIELDS}
    return Record(seq=raw["seq"], ts=raw["ts"], event=raw["event"], actor=raw["actor"],
                  key_id=raw["key_id"], data=raw["data"], prev_hash=raw["prev_hash"],
                  digest=raw["digest"], hash=raw["hash"], body=canonical(body))
