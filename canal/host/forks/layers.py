"""The lower layers of forks: one per checkpoint forked, kept in ``<checkpoints>/lowers/<manifest>``, each
either whole or a delta stacked on the newest layer there was (overlayfs stacks several lower
folders), so a fork after a change links only what changed since, even while other forks use the
layers below.

    lowers/<m>          the layer (hard links to the stored objects, folders, symlinks, whiteouts)
    lowers/<m>.below    the layer it stands on (absent: a whole layer); written before the layer
                        folder gets its name, so a layer that exists always knows what is below it
    lower-keys/<m>      the stat keys of the files the layer holds (HMAC'd, a cache)
    pins/@lower-<m>     its manifest, kept through retention while the layer exists (a delta is
                        worked out from the entries of the layer it stands on)

A stack is at most ``MAX_STACK`` layers: past that the next layer is whole, made from a whole layer no
fork uses (only what differs is unlinked and linked again) or from nothing. Layers are made, read
and removed under the caller's lock (forks/store.py ``_lowers_locked``); a layer is never changed
once named, and never removed while a fork's stack holds it (``collect``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from canal.core.fsutil import atomic_write, private_dir
from canal.host.checkpoints.errors import CheckpointError
from canal.host.checkpoints.records import corrupt, read_index, write_index
from canal.host.checkpoints.scan import Entry, IndexItem, Key
from canal.host.checkpoints.store import CheckpointStore
from canal.host.forks import overlay

MAX_STACK = 16  # lower layers of one checkpoint's stack (the mount options hold a page: ~65 bytes each)
KEYS_TAG = "layer-keys/1"
PIN = "@lower-"
OLD_SPARE = "@spare-lower"  # the pin of the one spare layer kept before layers were stacked
_NAME = re.compile(r"^[0-9a-f]{64}$")
_NO_ENTRY: Entry = ("f", 0, 0, 0, 0, 0, "")  # the keys file holds keys only (the index format wants both)


class Layers:
    def __init__(self, checkpoints: CheckpointStore) -> None:
        self.checkpoints = checkpoints
        self.root = checkpoints.root / "lowers"
        self.keys_dir = checkpoints.root / "lower-keys"

    def path(self, name: str) -> Path:
        return self.root / name

    # -- reading --------------------------------------------------------------------------------
    def stack(self, name: str) -> list[str] | None:
        """The layers a fork of manifest ``name`` mounts, top first; None when its layer is not made
        (or what it stands on is gone)."""
        out: list[str] = []
        part: str | None = name
        while part is not None:
            if len(out) >= MAX_STACK or not _NAME.match(part) or not self.path(part).is_dir():
                return None
            out.append(part)
            part = self._below(part)
        return out

    def _below(self, name: str) -> str | None:
        try:
            return (self.root / f"{name}.below").read_text().strip()
        except FileNotFoundError:
            return None

    def names(self) -> list[str]:
        """Every layer made, oldest first."""
        if not self.root.is_dir():
            return []
        found = [(p.stat().st_mtime_ns, p.name) for p in self.root.iterdir()
                 if _NAME.match(p.name) and p.is_dir()]
        return [name for _, name in sorted(found)]

    def entries(self, name: str) -> dict[str, Entry] | None:
        """The entries of a layer's manifest (None when it cannot be read: the layer is not stood on)."""
        with contextlib.suppress(CheckpointError, OSError):
            return self.checkpoints.read_manifest(name)
        return None

    def items(self, stack: list[str], entries: Mapping[str, Entry]) -> dict[str, IndexItem]:
        """A fork's stat cache: each path of ``entries`` with the key of the file the stack shows for it
        (the top layer holding it), folders with none. A key is a cache key: one that no longer
        matches (a link made or removed since moves the inode's ctime) makes a file be read again."""
        keys: dict[str, Key] = {}
        for name in reversed(stack):
            keys.update(self._keys(name))
        return {p: (None if e[0] == "d" else keys.get(p), e) for p, e in entries.items()}

    def _keys(self, name: str) -> dict[str, Key]:
        cache = self.keys_dir / name
        loaded = read_index(cache, KEYS_TAG, self.checkpoints.keys)
        if loaded is not None and loaded[0] == name:
            return {p: key for p, (key, _) in loaded[2].items() if key is not None}
        keys = overlay.layer_keys(self.path(name))
        private_dir(self.keys_dir)
        write_index(cache, KEYS_TAG, name, {p: (k, _NO_ENTRY) for p, k in keys.items()},
                    self.checkpoints.keys)
        return keys

    # -- making ---------------------------------------------------------------------------------
    def ensure(self, name: str, entries: Mapping[str, Entry], owner: tuple[int, int],
               used: Iterable[str]) -> list[str]:
        """The stack of manifest ``name`` (``entries``), its layer made if it is not: a delta on the
        newest layer when its stack has room, else whole. ``used``: the manifests forks use."""
        found = self.stack(name)
        if found is not None:
            return found
        if self.path(name).is_dir():  # made, but what it stands on is gone: never rebuilt under a fork
            msg = f"lower layer {name[:12]}"
            raise corrupt(msg, "a layer it stands on is gone", layer=name)
        private_dir(self.root)
        self._remove([name])  # what a build cut short left
        made = self.names()
        top = self.stack(made[-1]) if made else None
        if top is not None and len(top) < MAX_STACK and (below := self.entries(top[0])) is not None:
            tmp = self.root / f"{name}.tmp"
            overlay.delta(tmp, below, entries, self.checkpoints.objects, owner)
            atomic_write(self.root / f"{name}.below", top[0].encode())
            self._name(tmp, name)
            return [name, *top]
        spare = self._spare(self._held(used))
        overlay.materialize(self.path(name), entries, self.checkpoints.objects, owner, spare)
        self.checkpoints.pin(PIN + name, name)
        os.utime(self.path(name))  # the newest layer now (one made from a spare kept its old time)
        return [name]

    def _name(self, tmp: Path, name: str) -> None:
        """Give a layer made at ``tmp`` its name: pinned first (its manifest stays readable while it
        exists), then renamed (its mtime: the newest layer is the next one's base)."""
        self.checkpoints.pin(PIN + name, name)
        os.utime(tmp)
        os.rename(tmp, self.path(name))

    def _held(self, used: Iterable[str]) -> set[str]:
        """Every layer a fork's stack holds."""
        held: set[str] = set()
        for name in used:
            held.update(self.stack(name) or [name])
        return held

    def _spare(self, held: set[str]) -> tuple[Path, dict[str, Entry]] | None:
        """The newest whole layer no fork's stack holds, and its entries, for a new whole layer to be
        made from (only what differs is unlinked and linked again); the deltas stacked on it (no fork
        uses them either) are removed first. None when there is none."""
        for name in reversed(self.names()):
            if name in held or self._below(name) is not None:
                continue
            below = self.entries(name)
            if below is None:
                continue
            self._remove([d for d in self.names()
                          if d != name and d not in held and name in (self.stack(d) or [name])])
            self._remove_keys_and_pin(name)
            return self.path(name), below
        return None

    # -- removing -------------------------------------------------------------------------------
    def collect(self, used: Iterable[str]) -> None:
        """Remove the layers no fork's stack holds, but the newest layer's stack: the next fork after a
        change stacks on it."""
        keep = self._held(used)
        made = self.names()
        if made:
            keep.update(self.stack(made[-1]) or [])
        if self.root.is_dir():
            self._remove({_layer_of(p.name) for p in self.root.iterdir()} - keep)
        if self.keys_dir.is_dir():
            for cache in self.keys_dir.iterdir():
                if cache.name not in keep:
                    cache.unlink(missing_ok=True)
        pins = self.checkpoints.root / "pins"
        for pin in pins.iterdir() if pins.is_dir() else []:
            if (pin.name.startswith(PIN) and pin.name[len(PIN):] not in keep) or pin.name == OLD_SPARE:
                pin.unlink(missing_ok=True)

    def _remove(self, names: Iterable[str]) -> None:
        for name in names:
            for part in (self.path(name), self.root / f"{name}.tmp"):
                shutil.rmtree(part, ignore_errors=True)
            (self.root / f"{name}.below").unlink(missing_ok=True)
            self._remove_keys_and_pin(name)

    def _remove_keys_and_pin(self, name: str) -> None:
        (self.keys_dir / name).unlink(missing_ok=True)
        self.checkpoints.pin(PIN + name, None)


def _layer_of(file: str) -> str:
    """The layer a file of the lowers folder belongs to (``<m>``, ``<m>.tmp``, ``<m>.below``)."""
    return file.split(".", 1)[0]


def shows(merged: Path, stack: list[str], root: Path, entries: Mapping[str, Entry]) -> bool:
    """Whether the mounted workspace shows the layers' own inodes (checked on one file: on another
    layout, layers on two filesystems say, overlayfs shows other inode numbers, and the layers' keys
    would never match)."""
    path = next((p for p, e in entries.items() if e[0] != "d"), None)
    if path is None:
        return True
    for name in stack:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            st = os.lstat(root / name / path)
            with contextlib.suppress(OSError):
                return _key(os.lstat(merged / path)) == _key(st)
            return False
    return False


def _key(st: os.stat_result) -> Key:
    return st.st_mode, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_uid, st.st_gid
