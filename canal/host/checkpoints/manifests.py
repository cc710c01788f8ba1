"""Reading a store's manifests without paying for the whole tree each time (issue 33: undo and diff at
20,000 files read the same full manifest again and again).

A manifest is a full one or a delta naming its parent by hash (records.py). ``Manifests`` keeps the
last full manifest it decoded and the last manifest it was asked for; each read hands out a copy. Every
part of a chain is checked against its hash when it is read; a part read before is checked again only
if its file's identity (inode, size, change and modification times, taken from the descriptor the bytes
were read through) is no longer the one it had then: a file written since, by anyone, has a new change
time, so a tampered manifest is still named.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path
from typing import Any

from canal.host.checkpoints.records import MAX_CHAIN, corrupt
from canal.host.checkpoints.scan import Entry

Identity = tuple[int, int, int, int, int]
FULL = b'{"depth":0,"entries":'  # how a full manifest's canonical JSON begins (records.write_manifest)


def identity(st: os.stat_result) -> Identity:
    """What tells one version of a file from another: a write moves the change time, which user space
    cannot set back; an atomic replace is a new inode."""
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Manifests:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._checked: dict[str, tuple[Identity, str | None]] = {}  # name -> (identity, parent)
        self._full: tuple[str, dict[str, Entry]] | None = None  # the last full manifest decoded
        self._last: tuple[str, dict[str, Entry]] | None = None  # the last manifest asked for

    def read(self, name: str) -> dict[str, Entry]:
        """The entries of manifest ``name`` (a copy: the caller may change it)."""
        if self._last is not None and self._last[0] == name:
            self.check(name)
            return dict(self._last[1])
        deltas: list[dict[str, Any]] = []
        part: str | None = name
        while part is not None:
            if self._full is not None and part == self._full[0]:
                self.check(part)
                entries = dict(self._full[1])
                break
            if len(deltas) > MAX_CHAIN:
                msg = f"manifest {name[:12]}"
                raise corrupt(msg, "its chain of deltas is longer than allowed",
                              manifest=name)
            doc = self._load(part)
            if "parent" not in doc:
                entries = {path: _entry(e) for path, e in doc["entries"].items()}
                self._full = (part, entries)
                entries = dict(entries)
                break
            deltas.append(doc)
            part = str(doc["parent"])
        for delta in reversed(deltas):
            for path in delta["del"]:
                entries.pop(path, None)
            entries.update({path: _entry(e) for path, e in delta["set"].items()})
        self._last = (name, entries)
        return dict(entries)

    def check(self, name: str) -> None:
        """Raise CheckpointStoreCorrupt unless manifest ``name`` and every part under it are the bytes
        their names hash to (parts whose files did not change since they were checked are not read)."""
        part: str | None = name
        for _ in range(MAX_CHAIN + 2):
            if part is None:
                return
            known = self._checked.get(part)
            try:
                same = known is not None and identity(os.stat(self.folder / f"{part}.z")) == known[0]
            except OSError:
                same = False
            if not same:
                part = self._verify(part)[1]
            else:
                assert known is not None
                part = known[1]
        msg = f"manifest {name[:12]}"
        raise corrupt(msg, "its chain of deltas is longer than allowed", manifest=name)

    def _load(self, name: str) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self._verify(name)[0])
        return doc

    def _verify(self, name: str) -> tuple[bytes, str | None]:
        """The manifest's bytes, checked against its name, and the parent it names (None: a full one,
        told by its first bytes without decoding it: canonical JSON puts ``del`` first in a delta)."""
        msg = f"manifest {name[:12]}"
        self._checked.pop(name, None)
        try:
            fd = os.open(self.folder / f"{name}.z", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as fh:
                seen = identity(os.fstat(fh.fileno()))
                payload = zlib.decompress(fh.read())
        except (OSError, zlib.error) as exc:
            raise corrupt(msg, f"unreadable ({type(exc).__name__})", manifest=name) from None
        if hashlib.sha256(payload).hexdigest() != name:
            raise corrupt(msg, "its bytes do not match its hash", manifest=name)
        parent = None
        if not payload.startswith(FULL):
            doc = json.loads(payload)
            parent = str(doc["parent"]) if "parent" in doc else None
        self._checked[name] = (seen, parent)
        return payload, parent


def _entry(raw: list[Any]) -> Entry:
    """An entry as stored: its file matched its hash, and the record naming the chain its HMAC, so the
    fields are the ones Canal wrote (kind, mode, size, mtime, uid, gid, ref)."""
    if len(raw) != 7:
        msg = "manifest entry"
        raise corrupt(msg, f"an entry has {len(raw)} fields, not 7")
    return tuple(raw)
