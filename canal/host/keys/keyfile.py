"""The key ring file: private on disk (0600 in a 0700 folder), checked like ssh checks a private key.

Creation is exclusive (temp file, fsync, ``link``), so two processes that start at once agree on one
key ring instead of each sealing under a key the other overwrote.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from canal.core.fsutil import FILE_MODE, atomic_write, fsync_dir, private_dir
from canal.host.keys.errors import KEY_FILE_INSECURE, KEY_FILE_INVALID

RING_FORMAT = "canal.keyring/1"
KeyState = Literal["primary", "decrypt-only", "retired"]


class KeyRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    state: KeyState
    created: str
    retired: str | None = None
    material: str | None = None  # base64; None once retired (the material is destroyed)


class KeyRing(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    format: Literal["canal.keyring/1"] = "canal.keyring/1"
    keys: list[KeyRecord]


def check_private(path: Path, *, folder: bool = False) -> None:
    """Refuse a key file (or folder) that another user owns or that others can read or write."""
    st = path.lstat()
    kind_ok = stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)
    loose = st.st_mode & (0o022 if folder else 0o077)
    mode = "700" if folder else "600"
    if not kind_ok:
        msg = f"refusing {path}: it is not a plain {'folder' if folder else 'file'} (a symlink?)"
        raise KEY_FILE_INSECURE(msg, hint=f"replace {path} with a real {'folder' if folder else 'file'}",
                                   details={"path": str(path)})
    if st.st_uid != os.getuid():
        msg = f"refusing {path}: it is owned by uid {st.st_uid}, not by you (uid {os.getuid()})"
        raise KEY_FILE_INSECURE(msg, hint=f"chown $(id -u) {path} && chmod {mode} {path}",
                                   details={"path": str(path), "owner": st.st_uid})
    if loose:
        msg = (f"refusing {path}: its mode {stat.S_IMODE(st.st_mode):o} lets other users "
               f"{'write to' if folder else 'read'} it; a key must stay private")
        raise KEY_FILE_INSECURE(msg, hint=f"chmod {mode} {path}",
                                   details={"path": str(path), "mode": f"{stat.S_IMODE(st.st_mode):o}"})


def read_ring(path: Path) -> KeyRing:
    check_private(path.parent, folder=True)
    check_private(path)
    raw = path.read_bytes()
    try:
        return KeyRing.model_validate_json(raw)
    except ValidationError as exc:
        msg = f"the key ring {path} cannot be read: {exc.errors()[0]['msg']}"
        raise KEY_FILE_INVALID(msg, hint=f"restore {path} from a backup, or set CANAL_KEY",
                                  details={"path": str(path)}) from exc


def write_ring(path: Path, ring: KeyRing) -> None:
    check_private(path.parent, folder=True)
    atomic_write(path, ring.model_dump_json(indent=2).encode())


def create_ring_exclusive(path: Path, ring: KeyRing) -> bool:
    """Publish ``ring`` at ``path`` unless one exists; True when this call created it."""
    private_dir(path.parent)
    check_private(path.parent, folder=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".keyring.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(ring.model_dump_json(indent=2).encode())
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        fsync_dir(path.parent)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
