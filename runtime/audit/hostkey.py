"""Provisional source of host-side keys for the audit log and approval tokens.

The sealed-state KeyStore (issue 7) will supply these through ``KeyStore.derive(purpose)``; until it is
wired, the CLI takes a master key from ``CANAL_KEY`` (base64 of 32 bytes) or from a key file under the
config folder (created 0600 in a 0700 folder; a key file readable by others is refused, like ssh refuses
a private key), and derives one subkey per purpose with HKDF-SHA256. Keys never enter a container.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import secrets
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from runtime.audit.errors import AuditKeyError
from runtime.fsutil import FILE_MODE, fsync_dir, private_dir
from runtime.paths import config_dir

KEY_FILE = "audit-master.key"


def derive(master: bytes, purpose: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose.encode()).derive(master)


def key_id_of(master: bytes) -> str:
    return "k-" + hashlib.sha256(b"canal-key-id:" + master).hexdigest()[:10]


def host_key(purpose: str) -> tuple[bytes, str]:
    """The subkey for ``purpose`` (e.g. ``"audit-hmac"``) and the master key's id."""
    master = _master()
    return derive(master, purpose), key_id_of(master)


def _master() -> bytes:
    env = os.environ.get("CANAL_KEY")
    if env:
        try:
            raw = base64.b64decode(env, validate=True)
        except binascii.Error as exc:
            msg = "CANAL_KEY is not valid base64"
            raise AuditKeyError(msg, hint="export CANAL_KEY=$(head -c32 /dev/urandom | base64)") from exc
        if len(raw) != 32:
            msg = f"CANAL_KEY holds {len(raw)} bytes; it must hold 32"
            raise AuditKeyError(msg, hint="export CANAL_KEY=$(head -c32 /dev/urandom | base64)")
        return raw
    return _key_file(config_dir() / "keys" / KEY_FILE)


def _key_file(path: Path) -> bytes:
    try:
        private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        return _read_private(path)
    except OSError as exc:
        msg = f"cannot create the key file {path}: {exc.strerror}"
        raise AuditKeyError(msg, hint=f"fix permissions on {path.parent} or set CANAL_KEY") from exc
    with os.fdopen(fd, "wb") as fh:
        fh.write(secrets.token_bytes(32))
        fh.flush()
        os.fsync(fh.fileno())
    fsync_dir(path.parent)
    return _read_private(path)


def _read_private(path: Path) -> bytes:
    st = path.lstat()
    if st.st_mode & 0o077 or st.st_uid != os.getuid():
        msg = f"refusing key file {path}: it is readable by others or owned by another user"
        raise AuditKeyError(msg, hint=f"chmod 600 {path} (and chown it to yourself)")
    data = path.read_bytes()
    if len(data) != 32:
        msg = f"key file {path} holds {len(data)} bytes; it must hold 32"
        raise AuditKeyError(msg, hint=f"restore {path} from backup, or set CANAL_KEY")
    return data
