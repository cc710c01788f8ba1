"""Checkpoint records and manifests on disk: records HMAC'd with a host key, manifests named by hash.

Layout of ``<state dir>/checkpoints``::

    records/<seq>.json      one record per checkpoint (HMAC over its canonical JSON)
    manifests/<sha256>.z    the workspace's entries (zlib JSON), shared by checkpoints that agree
    objects/<xx>/<name>     file contents (see objects.py)
    index.json              the stat cache of the last scan (HMAC'd; a cache, rebuilt when it fails)
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import marshal
import os
import sys
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from canal.core.fsutil import atomic_write
from canal.core.next import act
from canal.host.checkpoints.errors import CheckpointStoreCorrupt
from canal.host.checkpoints.models import Checkpoint
from canal.host.checkpoints.scan import Entry, IndexItem

MAX_DEPTH = 32  # deltas in a row before a full manifest
MAX_CHAIN = 64  # deltas in a row a store may write while a full one is written off the command path
INDEX_TAG = f"canal-index/3 py{sys.version_info[0]}.{sys.version_info[1]}"
HINT = "nothing was restored from it; keep the store as evidence and undo to another checkpoint"


def canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def corrupt(what: str, why: str, **details: object) -> CheckpointStoreCorrupt:
    msg = f"The checkpoint store's {what} is corrupt or was tampered with: {why}."
    return CheckpointStoreCorrupt(msg, hint=HINT, next=act("checkpoints", "lists them"),
                                  details={"what": what, "why": why, **details})


class Keys:
    """HMAC keys by key id: the first signs, all verify (keys rotate)."""

    def __init__(self, primary_id: str, keys: Mapping[str, bytes]) -> None:
        self.primary_id = primary_id
        self.keys = dict(keys)

    def sign(self, payload: bytes) -> str:
        return hmac.new(self.keys[self.primary_id], payload, hashlib.sha256).hexdigest()

    def check(self, key_id: str, payload: bytes, mac: str) -> bool:
        key = self.keys.get(key_id)
        expected = hmac.new(key, payload, hashlib.sha256).hexdigest() if key is not None else ""
        return key is not None and hmac.compare_digest(expected, mac)


def sign_json(data: dict[str, Any], keys: Keys) -> bytes:
    """``data`` with ``key_id`` and an ``hmac`` over the rest, as canonical JSON."""
    body = {**data, "key_id": keys.primary_id}
    body.pop("hmac", None)
    return canonical({**body, "hmac": keys.sign(canonical(body))})


def check_json(raw: dict[str, Any], keys: Keys) -> bool:
    """The HMAC checked over the fields as stored (a field added to the model later keeps old files
    valid: the check never re-serialises through the model)."""
    body = dict(raw)
    mac = body.pop("hmac", "")
    key_id = str(body.get("key_id", ""))
    if not isinstance(mac, str):
        return False
    # files of the first release signed their body with an empty "hmac" field in it
    first_release = canonical({**body, "hmac": ""})
    return keys.check(key_id, canonical(body), mac) or keys.check(key_id, first_release, mac)


def write_record(path: Path, record: Checkpoint, keys: Keys, *, sync_folder: bool = True) -> Checkpoint:
    """``sync_folder=False``: a record rewritten in place whose old version is whole and may stand after
    a crash (atomic_write)."""
    payload = sign_json(record.model_dump(mode="json", exclude={"hmac"}), keys)
    atomic_write(path, payload, sync_folder=sync_folder)
    return Checkpoint.model_validate(json.loads(payload))


def read_record(path: Path, keys: Keys, data: bytes | None = None) -> Checkpoint:
    """The record at ``path`` (its bytes ``data`` when the caller read them), its HMAC checked."""
    try:
        raw = json.loads(path.read_bytes() if data is None else data)
        record = Checkpoint.model_validate(raw)
    except (OSError, ValueError, ValidationError) as exc:
        msg = f"record {path.name}"
        raise corrupt(msg, f"unreadable ({type(exc).__name__})", record=path.name) from None
    if not check_json(raw, keys):
        msg = f"record {record.id}"
        raise corrupt(msg, "its HMAC does not match", record=record.id)
    return record


class VerifiedRecords:
    """Records read and checked before, each kept with the identity of the file it came from (inode,
    size, mtime, ctime: a change of the file, or a new file in its place, moves its ctime, which no
    process can set back): one is read and checked again only when its file changed. Retention reads
    every record at each prune; this makes a prune of unchanged records cost a stat each."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self._kept: dict[str, tuple[tuple[int, int, int, int], Checkpoint]] = {}

    def read(self, path: Path) -> Checkpoint:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return read_record(path, self.keys)  # raises the record's error
        try:
            st = os.fstat(fd)
            identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            kept = self._kept.get(path.name)
            if kept is not None and kept[0] == identity:
                return kept[1]
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read()
        finally:
            os.close(fd)
        record = read_record(path, self.keys, data)
        self._kept[path.name] = (identity, record)
        return record

    def forget_others(self, names: set[str]) -> None:
        """Keep only the records named (the others were removed)."""
        for name in [n for n in self._kept if n not in names]:
            self._kept.pop(name, None)


def write_manifest(folder: Path, entries: Mapping[str, Entry],
                   parent: tuple[str, int, Mapping[str, Entry]] | None = None, *,
                   durable: bool = True, max_depth: int = MAX_DEPTH) -> tuple[str, int]:
    """Store ``entries``; returns (name, depth). With a ``parent`` (name, depth, its entries) and few
    differences, only the differences are written (a delta naming its parent by hash); every
    ``max_depth`` deltas (at most ``MAX_CHAIN``) a full manifest starts a new chain."""
    delta = None
    if parent is not None and deltas_left(parent[1], max_depth):
        prev = parent[2]
        delta = Delta({p: e for p, e in entries.items() if prev.get(p) != e},
                      [p for p in prev if p not in entries], len(entries))
    return write_delta(folder, parent[:2] if parent else None, delta, lambda: entries, durable=durable)


class RecordSpan(NamedTuple):
    """The records folder at a glance: how many records, the oldest's and the newest's file names."""

    records: int
    oldest: str
    newest: str

    @property
    def next_seq(self) -> int:
        return int(self.newest[:-5]) + 1 if self.records else 1

    def adding(self, name: str) -> RecordSpan:
        """The span once the newest record ``name`` is written."""
        return RecordSpan(self.records + 1, self.oldest or name, name)


class Delta(NamedTuple):
    """What differs from a parent state: the entries set (new or changed) and the paths gone, and how
    many entries the new state has (a delta is written only when it is small beside that)."""

    set: Mapping[str, Entry]
    gone: list[str]
    total: int


def deltas_left(depth: int, max_depth: int = MAX_DEPTH) -> bool:
    """Whether a delta may stand on a manifest of ``depth`` (else a full one starts a new chain)."""
    return depth < min(max_depth, MAX_CHAIN)


def write_delta(folder: Path, parent: tuple[str, int] | None, delta: Delta | None,
                entries: Callable[[], Mapping[str, Entry]], *, durable: bool = True) -> tuple[str, int]:
    """``write_manifest`` with the differences already known (the watched store finds them among the
    paths its scan touched): a delta of ``parent`` (name, depth) when it is small enough, else the full
    manifest of ``entries()``."""
    small = delta is not None and len(delta.set) + len(delta.gone) <= max(16, delta.total // 8)
    if parent is not None and delta is not None and small:
        doc = {"version": 1, "parent": parent[0], "depth": parent[1] + 1, "set": dict(delta.set),
               "del": sorted(delta.gone)}
        return _put(folder, doc, durable), parent[1] + 1
    return _put(folder, {"version": 1, "depth": 0, "entries": entries()}, durable), 0


CHUNK = 1000  # entries per json.dumps call of a full manifest, per marshal.dumps call of the stat cache


def canonical_manifest(doc: Mapping[str, Any]) -> bytes:
    """``canonical(doc)``, byte for byte, with a full manifest's entries encoded a thousand at a time:
    json.dumps holds the GIL for the whole call (~80 ms at 20,000 entries), and the server's thread
    that writes it must not stall the commands for that long."""
    entries = doc.get("entries")
    if not isinstance(entries, Mapping) or len(entries) <= CHUNK:
        return canonical(doc)
    keys = sorted(entries)
    body = b",".join(canonical({k: entries[k] for k in keys[i:i + CHUNK]})[1:-1]
                     for i in range(0, len(keys), CHUNK))
    head = canonical({**doc, "entries": {}})
    cut = head.index(b'"entries":{}') + len(b'"entries":{')
    return head[:cut] + body + head[cut:]


def _put(folder: Path, doc: Mapping[str, Any], durable: bool) -> str:
    payload = canonical_manifest(doc)
    name = hashlib.sha256(payload).hexdigest()
    path = folder / f"{name}.z"
    if not path.exists():
        atomic_write(path, zlib.compress(payload, 1), durable=durable)
    return name


def _load(folder: Path, name: str) -> dict[str, Any]:
    msg = f"manifest {name[:12]}"
    try:
        payload = zlib.decompress((folder / f"{name}.z").read_bytes())
    except (OSError, zlib.error) as exc:
        raise corrupt(msg, f"unreadable ({type(exc).__name__})", manifest=name) from None
    if hashlib.sha256(payload).hexdigest() != name:
        raise corrupt(msg, "its bytes do not match its hash", manifest=name)
    data: dict[str, Any] = json.loads(payload)
    return data


def manifest_chain(folder: Path, name: str, *,
                   skip: set[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The manifest and the parents its deltas stand on, newest first; each checked against its hash.
    ``skip``: stop at a part already read (retention walks many chains that share their base)."""
    if skip is not None and name in skip:
        return []
    chain = [(name, _load(folder, name))]
    while "parent" in chain[-1][1]:
        if len(chain) > MAX_CHAIN + 1:
            msg = f"manifest {name[:12]}"
            raise corrupt(msg, "its chain of deltas is longer than allowed", manifest=name)
        parent = str(chain[-1][1]["parent"])
        if skip is not None and parent in skip:
            break
        chain.append((parent, _load(folder, parent)))
    return chain


def read_manifest(folder: Path, name: str) -> dict[str, Entry]:
    chain = manifest_chain(folder, name)
    entries = {path: parse_entry(e) for path, e in chain[-1][1]["entries"].items()}
    for _, delta in reversed(chain[:-1]):
        for path in delta["del"]:
            entries.pop(path, None)
        entries.update({path: parse_entry(e) for path, e in delta["set"].items()})
    return entries


def parse_entry(raw: list[Any]) -> Entry:
    kind, mode, size, mtime, uid, gid, ref = raw
    return (str(kind), int(mode), int(size), int(mtime), int(uid), int(gid), str(ref))


def write_index(path: Path, settings_hash: str, manifest: str, items: Mapping[str, IndexItem],
                keys: Keys, depth: int = 0) -> None:
    """The stat cache (``index_bytes``). It is a cache: not synced (after a crash an old or torn one is
    still safe: stat keys, then its HMAC)."""
    atomic_write(path, index_bytes(settings_hash, manifest, items, keys, depth), durable=False)


def index_bytes(settings_hash: str, manifest: str, items: Mapping[str, IndexItem], keys: Keys,
                depth: int = 0) -> bytes:
    """The stat cache as stored: ``marshal`` (several times faster than JSON for 20,000 entries), a
    thousand entries per call (marshal holds the GIL for a whole call, ~12 ms at 20,000 entries, and
    the server's thread that writes it must not stall the commands that long), then its HMAC. Another
    Python version's file, or one failing its HMAC, is ignored and rebuilt from the files."""
    pairs = list(items.items())
    chunks = [marshal.dumps(pairs[i:i + CHUNK]) for i in range(0, len(pairs), CHUNK)]
    payload = marshal.dumps((INDEX_TAG, settings_hash, manifest, depth, chunks))
    return keys.primary_id.encode() + b"\n" + keys.sign(payload).encode() + b"\n" + payload


def read_index(path: Path, settings_hash: str, keys: Keys) -> tuple[str, int, dict[str, IndexItem]] | None:
    """The last scan's manifest and stat cache; None when absent, stale or failing its HMAC."""
    with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
        key_id, mac, payload = path.read_bytes().split(b"\n", 2)
        if not keys.check(key_id.decode(), payload, mac.decode()):
            return None
        tag, settings, manifest, depth, chunks = marshal.loads(payload)  # only after the HMAC matched
        if tag != INDEX_TAG or settings != settings_hash:
            return None
        items: dict[str, IndexItem] = {}
        for chunk in chunks:
            items.update(marshal.loads(chunk))
        return str(manifest), int(depth), items
    return None
