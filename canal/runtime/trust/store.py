"""The approved trusted settings of one project: one HMAC-signed JSON file in its host state folder.

The file lives outside every sandbox mount (the state folder is refused as a mount and refused inside
the project). Its MAC is keyed with a subkey of the host key ring and binds the project path, so the
agent can neither write an approval nor copy one from another project.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from canal.core.fsutil import atomic_write
from canal.core.next import act
from canal.runtime.errors import ConfigError
from canal.runtime.trust.errors import CONFIG_TRUST_INVALID
from canal.runtime.trust.snapshot import canonical

TRUST_FILE = "trusted-config.json"
FORMAT = "canal.trust/1"


class TrustRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str = FORMAT
    project: str
    digest: str
    settings: dict[str, Any]
    policy: dict[str, str]
    approved_by: str
    how: str  # tty | approver-key | tightening (accepted without a person: nothing was loosened)
    approved_at: float


class TrustStore:
    """``key`` signs new records; a record signed under it or under one of ``earlier`` (the subkeys of
    the ring's decrypt-only keys: approvals made before ``canal key rotate``) verifies."""

    def __init__(self, state_dir: Path, key: bytes, earlier: Sequence[bytes] = ()) -> None:
        self.path = state_dir / TRUST_FILE
        self._key = key
        self._earlier = tuple(earlier)

    def _mac(self, body: dict[str, Any], key: bytes | None = None) -> str:
        signed = b"canal-trust:" + canonical(body).encode()
        return hmac.new(self._key if key is None else key, signed, hashlib.sha256).hexdigest()

    def _verifies(self, mac: str, body: dict[str, Any]) -> bool:
        return any(hmac.compare_digest(mac, self._mac(body, key)) for key in (self._key, *self._earlier))

    def load(self, project: Path) -> TrustRecord | None:
        try:
            raw: Any = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            msg = "is unreadable"
            raise self._invalid(msg) from exc
        mac = raw.pop("mac", "") if isinstance(raw, dict) else ""
        if not isinstance(mac, str) or not self._verifies(mac, raw):
            msg = "fails its signature check (written outside Canal, or under another key)"
            raise self._invalid(msg)
        try:
            record = TrustRecord.model_validate(raw)
        except ValidationError as exc:
            msg = "has an unknown shape"
            raise self._invalid(msg) from exc
        if record.project != str(project) or record.format != FORMAT:
            msg = f"belongs to another project ({record.project})"
            raise self._invalid(msg)
        return record

    def save(self, record: TrustRecord) -> None:
        body = record.model_dump(mode="json")
        atomic_write(self.path, canonical({**body, "mac": self._mac(body)}).encode())

    def _invalid(self, what: str) -> ConfigError:
        msg = f"The record of approved settings {self.path} {what}; nothing was run."
        return CONFIG_TRUST_INVALID(msg, hint=f"a person checks canal.yaml and removes {self.path}",
                                  next=act("config.approve"), details={"file": str(self.path)})
