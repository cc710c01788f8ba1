"""``KeyStore``: the key-encryption keys and the subkeys derived from them.

One key is primary (new seals use it); rotated-out keys stay ``decrypt-only`` until retired, when
their material is destroyed. ``derive(purpose)`` gives a stable HKDF-SHA256 subkey of the primary
key for another part of Canal (``"audit-hmac"``, ``"approval-token"``, ``"output-hash"``, ...).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from canal.core.locking import file_lock
from canal.core.next import act
from canal.host.keys.errors import (
    KEY_ENV_INVALID,
    KEY_RETIRE_REFUSED,
    KEY_ROTATE_UNAVAILABLE,
    KEY_UNKNOWN,
    KeyStoreError,
)
from canal.host.keys.keyfile import (
    KeyRecord,
    KeyRing,
    KeyState,
    create_ring_exclusive,
    read_ring,
    write_ring,
)
from canal.host.paths import config_dir

ENV_VAR = "CANAL_KEY"
RING_FILE = "keyring.json"
KEY_BYTES = 32
NEW_KEY_HINT = "export CANAL_KEY=$(head -c32 /dev/urandom | base64)"


def key_id_of(material: bytes) -> str:
    """A key's public id: a hash of its material (the same scheme the audit log uses)."""
    return "k-" + hashlib.sha256(b"canal-key-id:" + material).hexdigest()[:10]


def hkdf(material: bytes, purpose: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose.encode()).derive(material)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class KeyInfo:
    """What may be shown about a key: never its material."""

    id: str
    state: KeyState
    created: str
    source: Literal["env", "file"]
    retired: str | None = None


class KeyStore:
    """Keys from ``CANAL_KEY`` when set, else from the key ring file (created on first use)."""

    def __init__(self, folder: Path | None = None, *, env: Mapping[str, str] | None = None) -> None:
        self._folder = folder
        self._env = os.environ if env is None else env
        self._records: list[KeyRecord] | None = None
        self._material: dict[str, bytes] = {}

    @property
    def folder(self) -> Path:
        return self._folder if self._folder is not None else config_dir() / "keys"

    @property
    def ring_path(self) -> Path:
        return self.folder / RING_FILE

    @property
    def source(self) -> Literal["env", "file"]:
        return "env" if self._env.get(ENV_VAR) else "file"

    def sources(self) -> list[Path]:
        """The file the keys are read from (none when they come from the environment, which a process
        reads once)."""
        return [] if self.source == "env" else [self.ring_path]

    def keys(self) -> list[KeyInfo]:
        return [KeyInfo(r.id, r.state, r.created, self.source, r.retired) for r in self._load()]

    @property
    def primary_id(self) -> str:
        return next(r.id for r in self._load() if r.state == "primary")

    def material(self, key_id: str) -> bytes:
        """The raw key for wrapping or unwrapping data keys (primary or decrypt-only)."""
        self._load()
        try:
            return self._material[key_id]
        except KeyError:
            raise self._unknown(key_id) from None

    def has(self, key_id: str) -> bool:
        self._load()
        return key_id in self._material

    def derive(self, purpose: str, key_id: str | None = None) -> bytes:
        """The HKDF-SHA256 subkey of the primary key (or of ``key_id``) for ``purpose``."""
        return hkdf(self.material(key_id or self.primary_id), purpose)

    def derive_all(self, purpose: str) -> dict[str, bytes]:
        """The subkey for ``purpose`` under every usable key, by key id (to verify old records)."""
        self._load()
        return {kid: hkdf(m, purpose) for kid, m in self._material.items()}

    def rotate(self) -> KeyInfo:
        """Make a new primary key; the old primary stays decrypt-only until retired."""
        self._require_file("rotate")
        with file_lock(self.folder / ".keyring.lock"):
            ring = read_ring(self.ring_path)
            material = secrets.token_bytes(KEY_BYTES)
            new = _record(material, "primary")
            kept = [r.model_copy(update={"state": "decrypt-only"}) if r.state == "primary" else r
                    for r in ring.keys]
            write_ring(self.ring_path, KeyRing(keys=[*kept, new]))
        self._records = None
        return KeyInfo(new.id, new.state, new.created, "file")

    def retire(self, key_id: str) -> KeyInfo:
        """Destroy a decrypt-only key's material. Callers first check that no sealed file uses it."""
        self._require_file("retire")
        with file_lock(self.folder / ".keyring.lock"):
            ring = read_ring(self.ring_path)
            target = next((r for r in ring.keys if r.id == key_id and r.state != "retired"), None)
            if target is None:
                raise self._unknown(key_id)
            if target.state == "primary":
                msg = f"{key_id} is the primary key; rotate first so that another key becomes primary"
                raise KEY_RETIRE_REFUSED(msg, next=act("key.rotate", f"then retire {key_id} again"))
            done = target.model_copy(update={"state": "retired", "material": None, "retired": _now()})
            write_ring(self.ring_path, KeyRing(keys=[done if r is target else r for r in ring.keys]))
        self._records = None
        return KeyInfo(done.id, done.state, done.created, "file", done.retired)

    def _require_file(self, verb: str) -> None:
        if self.source == "env":
            msg = f"cannot {verb} a key given in {ENV_VAR}; only the key ring file can be rotated here"
            raise KEY_ROTATE_UNAVAILABLE(msg, hint=f"unset {ENV_VAR} to use the key ring, or set a new "
                                            f"{ENV_VAR} after re-sealing with the old one")

    def _unknown(self, key_id: str) -> KeyStoreError:
        known = ", ".join(sorted(self._material)) or "none"
        msg = f"no usable key {key_id} (keys here: {known}); it was retired or belongs to another setup"
        return KEY_UNKNOWN(msg, next=act("key.show"), details={"key_id": key_id, "known": known})

    def _load(self) -> list[KeyRecord]:
        if self._records is None:
            self._records = self._from_env() if self.source == "env" else self._from_file()
            self._material = {r.id: base64.b64decode(r.material) for r in self._records if r.material}
        return self._records

    def _from_env(self) -> list[KeyRecord]:
        value = self._env[ENV_VAR]
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            msg = f"{ENV_VAR} is not valid base64"
            raise KEY_ENV_INVALID(msg, hint=NEW_KEY_HINT) from exc
        if len(raw) != KEY_BYTES:
            msg = f"{ENV_VAR} holds {len(raw)} bytes; it must hold {KEY_BYTES}"
            raise KEY_ENV_INVALID(msg, hint=NEW_KEY_HINT)
        return [KeyRecord(id=key_id_of(raw), state="primary", created="", material=value)]

    def _from_file(self) -> list[KeyRecord]:
        if not self.ring_path.exists():
            create_ring_exclusive(self.ring_path, KeyRing(keys=[_record(secrets.token_bytes(KEY_BYTES),
                                                                        "primary")]))
        return read_ring(self.ring_path).keys


def _record(material: bytes, state: KeyState) -> KeyRecord:
    return KeyRecord(id=key_id_of(material), state=state, created=_now(),
                     material=base64.b64encode(material).decode())
