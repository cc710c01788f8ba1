"""Files in and out of a sandbox as tar streams, with size and path checks (no Docker here)."""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import BinaryIO

from canal.sandbox.errors import FILE_TRANSFER_REFUSED, SandboxError


def _refuse(message: str, **details: object) -> SandboxError:
    return FILE_TRANSFER_REFUSED(message, hint="send fewer or smaller files, or raise max_bytes",
                               details=details)


def check_relative(path: str) -> str:
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or "\0" in path:
        msg = f"File names must be relative paths without '..': {path!r}"
        raise _refuse(msg, path=path)
    return str(pure)


def pack(files: Mapping[str, bytes], *, max_bytes: int, uid: int = 1000, gid: int = 1000) -> bytes:
    """A tar of ``files`` (relative path -> content); refuses a total above ``max_bytes``."""
    total = sum(len(data) for data in files.values())
    if total > max_bytes:
        msg = f"Refused to send {total} bytes: the limit is {max_bytes}."
        raise _refuse(msg, size=total,
                      max_bytes=max_bytes)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(check_relative(name))
            info.size, info.mode, info.uid, info.gid, info.mtime = len(data), 0o644, uid, gid, time.time()
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def unpack(stream: BinaryIO, *, max_bytes: int) -> dict[str, bytes]:
    """Regular files of a tar stream; links and devices are skipped; refuses more than ``max_bytes``."""
    out: dict[str, bytes] = {}
    total = 0
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            if not member.isfile():
                continue
            total += member.size
            if total > max_bytes:
                msg = f"Refused to receive more than {max_bytes} bytes."
                raise _refuse(msg, max_bytes=max_bytes)
            fh = tar.extractfile(member)
            if fh is not None:
                out[check_relative(member.name)] = fh.read()
    return out
