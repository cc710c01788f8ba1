"""Forks of one project: ``<state dir>/forks/<name>/`` holds the record, the upper layer, overlayfs's
work folder, the mount point and the stat cache of the fork's workspace.

The fork's changes are found the way checkpoints find theirs: a scan of the fork's workspace against a
stat cache seeded, when the fork is made, with the checkpoint it started from; only files the fork
touched are read. Apply goes through the checkpoint store too: the real project is checkpointed, the
paths both sides changed are conflicts, and the rest is restored from the fork's state.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from canal.core.fsutil import atomic_write, private_dir
from canal.core.next import act
from canal.host.checkpoints import compare
from canal.host.checkpoints.models import Change, NotCovered
from canal.host.checkpoints.records import (
    canonical,
    check_json,
    corrupt,
    read_index,
    sign_json,
    write_index,
    write_manifest,
)
from canal.host.checkpoints.restore import restore, unprivileged
from canal.host.checkpoints.scan import Entry, IndexItem, Scanner
from canal.host.checkpoints.store import CheckpointStore
from canal.host.forks import overlay
from canal.host.forks.errors import FORK_CONFLICT, FORK_EXISTS, FORK_NOT_FOUND, FORK_OF_FORK, ForkError
from canal.host.forks.ignored import Carried, carry, match_folders
from canal.host.forks.layers import Layers, shows
from canal.host.forks.models import ApplyResult, Conflict, Fork, ForkChanges
from canal.host.forks.plan import conflicts, selected
from canal.host.forks.record import RECORD, is_fork

RESERVED = ("default",)


class ForkStore:
    def __init__(self, root: Path, checkpoints: CheckpointStore,
                 protected: Callable[[], builtins.list[Path]] = list) -> None:
        self.root = root
        self.checkpoints = checkpoints
        self.protected = protected  # host folders a fork never carries (Canal's state and keys)
        self.layers = Layers(checkpoints)
        self.lowers = self.layers.root

    # -- paths ----------------------------------------------------------------------------------
    def folder(self, name: str) -> Path:
        return self.root / name

    def workspace(self, name: str) -> Path:
        """The fork's /workspace on the host (the overlay mount point)."""
        return self.folder(name) / "merged"

    def is_fork(self, name: str) -> bool:
        return is_fork(self.root, name)

    # -- lifecycle ------------------------------------------------------------------------------
    def create(self, name: str, *, from_id: str | None = None, actor: str = "agent",
               mode: Literal["overlay", "copy"] | None = None) -> Fork:
        """A fork of the project now (a checkpoint is taken) or at checkpoint ``from_id``.

        ``mode``: kernel overlayfs where this process can mount it (root), else a full copy of the
        checkpoint (slower to make, the same isolation); the fork's ``mode`` says which it got."""
        if name in RESERVED or self.is_fork(name):
            msg = f"A sandbox named {name} already exists" + (" (a fork)" if self.is_fork(name) else "") + "."
            raise FORK_EXISTS(msg, hint="pick another name, or discard the old fork",
                             next=act("fork.discard", name=name), details={"name": name})
        if from_id is not None and self.is_fork(from_id):
            msg = f"{from_id} is a fork; a fork is made from the project or one of its checkpoints."
            raise FORK_OF_FORK(msg, hint="apply it first, then fork the project",
                             next=act("fork.apply", name=from_id),
                             details={"from": from_id})
        cp = (self.checkpoints.get(from_id) if from_id is not None
              else self.checkpoints.take(kind="fork", command=f"fork {name}", actor=actor))
        entries = self.checkpoints.manifest(cp)
        # paths a later checkpoint covers are not "ignored": a fork of an old checkpoint does not get them
        newest = self.checkpoints.get() if from_id is not None else cp
        last = newest.manifest == cp.manifest
        covered = entries if last else {**self.checkpoints.manifest(newest), **entries}
        left = self.checkpoints.not_covered(cp.manifest) if last else None  # what the scan left out
        chosen = mode or ("overlay" if overlay.supported() is None else "copy")
        fork = Fork(name=name, base=cp.id, manifest=cp.manifest, created_at=_now(), mode=chosen,
                    note="" if chosen == "overlay" else f"a full copy: {overlay.supported() or 'as asked'}")
        private_dir(self.folder(name))
        self.checkpoints.pin(name, cp.manifest)
        try:
            with self._lowers_locked():  # no other process takes a lower layer before the record names it
                carried = self._make_workspace(fork, entries, covered, left)
                fork = fork.model_copy(update={"ignored": carried.way, "ignored_files": carried.files,
                                               "ignored_bytes": carried.bytes})
                self._seed(fork, entries)
                self._write(fork)
        except BaseException:
            self._remove(name)
            raise
        return fork

    def get(self, name: str) -> Fork:
        path = self.folder(name) / RECORD
        try:
            raw = json.loads(path.read_bytes())
            fork = Fork.model_validate(raw)
        except FileNotFoundError:
            msg = f"No fork named {name}."
            raise FORK_NOT_FOUND(msg, next=[act("ps", "lists the sandboxes, forks included"),
                                          act("fork.start", "makes one", name="NAME")],
                               details={"name": name}) from None
        except (ValueError, ValidationError):
            raise corrupt("fork record " + name, "unreadable") from None
        if not check_json(raw, self.checkpoints.keys):
            raise corrupt("fork record " + name, "its HMAC does not match")
        return fork

    def list(self) -> builtins.list[Fork]:
        if not self.root.is_dir():
            return []
        return [self.get(p.name) for p in sorted(self.root.iterdir()) if (p / RECORD).is_file()]

    def ensure_mounted(self, name: str) -> Path:
        """The fork's workspace, mounted again when the host lost the mount (a reboot)."""
        fork = self.get(name)
        merged = self.workspace(name)
        if fork.mode == "overlay" and not os.path.ismount(merged):
            with self._lowers_locked():
                self._make_workspace(fork, self.checkpoints.read_manifest(fork.manifest))
        return merged

    def discard(self, name: str) -> Fork:
        fork = self.get(name)
        with self._lowers_locked():
            self._remove(name)
            self.layers.collect(f.manifest for f in self.list())
        return fork

    # -- changes and apply ----------------------------------------------------------------------
    def state(self, name: str) -> tuple[Fork, dict[str, Entry], dict[str, Entry], builtins.list[NotCovered]]:
        """(fork, its base entries as the fork shows them, its entries now, what apply cannot carry).
        Changed files are stored."""
        fork = self.get(name)
        merged = self.ensure_mounted(name)
        base = as_shown(self.checkpoints.read_manifest(fork.manifest), fork.mode)
        index = self.folder(name) / "index"
        cached = read_index(index, fork.manifest, self.checkpoints.keys)
        items = cached[2] if cached else self._seed_items(fork, base)
        with self.checkpoints.locked():  # no pruning between storing the fork's files and pinning them
            scanner = Scanner(merged, self.checkpoints.settings, self.checkpoints.objects, items)
            try:
                result = scanner.scan()
            except BaseException:
                self.checkpoints.objects.discard()
                raise
            if result.dirty or cached is None:
                write_index(index, fork.manifest, fork.manifest, result.index, self.checkpoints.keys)
            self.checkpoints.objects.flush()  # on disk before a manifest names them
            state, _ = write_manifest(self.checkpoints.manifests_dir, result.entries)
            self.checkpoints.pin(f"{name}@state", state)
        skipped = [NotCovered(path=p, reason=r) for p, r in result.not_covered]
        return fork, base, result.entries, skipped

    def changes(self, name: str) -> ForkChanges:
        fork, base, now, skipped = self.state(name)
        found = compare.changes(base, now)
        text, marked = compare.patch(found, base, now, self._load, self._load)
        return ForkChanges(fork=name, base=fork.base, changes=marked, patch=text, not_carried=skipped)

    def plan(self, name: str, paths: tuple[str, ...] = ()) -> tuple[builtins.list[Change], str]:
        """What ``apply`` would write, and a digest of it (an approval is bound to exactly this)."""
        _, base, now, _ = self.state(name)
        chosen = selected(compare.changes(base, now), paths, base, now)
        return chosen, _digest([[c.path, c.kind, now.get(c.path)] for c in chosen])

    def apply(self, name: str, paths: tuple[str, ...] = (), *, actor: str = "agent",
              expect: str | None = None) -> ApplyResult:
        """Make the real project match the fork at the chosen paths; refuse on conflicts, and when
        ``expect`` (the approved change set's digest) no longer describes the fork."""
        fork, base, now, _ = self.state(name)
        chosen = selected(compare.changes(base, now), paths, base, now)
        if expect is not None and _digest([[c.path, c.kind, now.get(c.path)] for c in chosen]) != expect:
            msg = f"Fork {name} changed after its changes were approved; nothing was applied."
            raise FORK_CONFLICT(msg, next=act("fork.changes", "review again, then apply", name=name))
        checkpoint = self.checkpoints.take(kind="apply", command=f"apply {name}", actor=actor)
        real = self.checkpoints.manifest(checkpoint)
        clash = conflicts(chosen, compare.changes(self.checkpoints.read_manifest(fork.manifest), real))
        if clash:
            raise _conflict(name, clash, checkpoint.id)
        target = dict(real)
        for change in chosen:
            if change.path in now:
                target[change.path] = now[change.path]
            else:
                target.pop(change.path, None)
        applied, left, stripped = restore(self.checkpoints.workspace, target, real, self.checkpoints.objects,
                                          paths={c.path for c in chosen})
        self.checkpoints.forget_cache()
        return ApplyResult(fork=fork.name, applied=applied, checkpoint=checkpoint.id, left_alone=left,
                           stripped=stripped)

    # -- plumbing -------------------------------------------------------------------------------
    def _load(self, _: str, entry: Entry) -> bytes:
        return self.checkpoints.objects.open_verified(entry[6])

    def _make_workspace(self, fork: Fork, entries: dict[str, Entry], covered: dict[str, Entry] | None = None,
                        left: builtins.list[tuple[str, str]] | None = None) -> Carried:
        """The fork's workspace; ``covered`` (when it is made, not mounted again): what the checkpoints
        hold, so every other path of the project is carried too (forks/ignored.py); ``left``: those
        paths as the checkpoint's scan found them, when it knows."""
        project = self.checkpoints.workspace
        if fork.mode == "copy":
            merged = self.workspace(fork.name)
            merged.mkdir(mode=project.stat().st_mode & 0o777, exist_ok=True)
            restore(merged, entries, {}, self.checkpoints.objects)
            if covered is None:
                return Carried(fork.ignored, fork.ignored_files, fork.ignored_bytes)
            return carry(project, covered, merged, link=False, protected=self.protected(), left=left)
        root_st = self.checkpoints.workspace.stat()
        used = [f.manifest for f in self.list() if f.name != fork.name]
        stack = self.layers.ensure(fork.manifest, entries, (root_st.st_uid, root_st.st_gid), used)
        folder = self.folder(fork.name)
        carried = Carried(fork.ignored, fork.ignored_files, fork.ignored_bytes)
        if covered is not None:
            private_dir(folder / "ignored")
            carried = carry(project, covered, folder / "ignored", link=True, protected=self.protected(),
                            left=left)
        elif carried.way != "none":  # mounted again: its folders as the checkpoint has them
            match_folders(folder / "ignored", entries)
        ignored = folder / "ignored" if carried.way != "none" else None
        overlay.mount([self.layers.path(n) for n in stack], folder / "upper", folder / "work",
                      folder / "merged", root_st, ignored)
        return carried

    def _seed(self, fork: Fork, entries: dict[str, Entry]) -> None:
        """The fork's stat cache: stat keys of its fresh workspace, each paired with the checkpoint
        entry it shows, so ``changes`` reads only what the fork touched.

        In an overlay fork on one filesystem they are the lower layers' own keys (overlayfs shows an
        untouched lower file with its inode's attributes and number): put together when ``changes``
        first needs them (``_seed_items``), not here, so a fork costs what its new layer costs. Where
        the workspace does not show them (layers on two filesystems), and in a copy, each key is read
        through the workspace now, while the fork has touched nothing."""
        merged = self.workspace(fork.name)
        if fork.mode == "overlay":
            stack = self.layers.stack(fork.manifest)
            if stack is not None and shows(merged, stack, self.lowers, entries):
                return
        index = self.folder(fork.name) / "index"
        items = _items(str(merged), as_shown(entries, fork.mode))
        write_index(index, fork.manifest, fork.manifest, items, self.checkpoints.keys)

    def _seed_items(self, fork: Fork, entries: dict[str, Entry]) -> dict[str, IndexItem]:
        """The seed of an overlay fork, from its layers' keys (none: every file is read)."""
        if fork.mode != "overlay":
            return {}
        with self._lowers_locked():
            stack = self.layers.stack(fork.manifest)
            return self.layers.items(stack, entries) if stack is not None else {}

    def _write(self, fork: Fork) -> None:
        payload = sign_json(fork.model_dump(mode="json", exclude={"hmac"}), self.checkpoints.keys)
        atomic_write(self.folder(fork.name) / RECORD, payload)

    def _remove(self, name: str) -> None:
        self.checkpoints.pin(name, None)
        self.checkpoints.pin(f"{name}@state", None)
        folder = self.folder(name)
        with contextlib.suppress(FileNotFoundError):
            overlay.unmount(folder / "merged")
        shutil.rmtree(folder, ignore_errors=True)

    @contextlib.contextmanager
    def _lowers_locked(self) -> Iterator[None]:
        private_dir(self.checkpoints.root)
        fd = os.open(self.checkpoints.root / "lowers.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _conflict(name: str, clash: list[Conflict], checkpoint: str) -> ForkError:
    shown = "; ".join(f"{c.path} (fork: {c.fork}; project: {c.project})" for c in clash[:10])
    more = f" and {len(clash) - 10} more" if len(clash) > 10 else ""
    msg = (f"The real project changed since fork {name} was made, at paths the fork changed too: "
           f"{shown}{more}. Nothing was applied.")
    hint = "look at both, then apply only the other paths or discard the fork"
    look = [act("fork.changes", name=name), act("diff", checkpoint=checkpoint),
            act("fork.apply", name=name, paths=["PATH..."])]
    return FORK_CONFLICT(msg, hint=hint, next=look, details={"conflicts": [c.model_dump() for c in clash]})


def as_shown(entries: dict[str, Entry], mode: str) -> dict[str, Entry]:
    """A checkpoint's entries as its fork shows them: never a setuid or setgid bit (restore.py), and in
    an overlay fork a file is its stored object, which has its permission bits only. What the fork
    did is what differs from this (a fork that never touched a setuid file has changed nothing)."""
    out = {}
    for path, entry in entries.items():
        kind, perm = entry[0], entry[1]
        shown = unprivileged(perm) if kind == "d" or mode == "copy" else perm & 0o777 if kind == "f" else perm
        out[path] = entry if shown == perm else (kind, shown, *entry[2:])
    return out


def _key(st: os.stat_result) -> tuple[int, int, int, int, int, int, int]:
    return st.st_mode, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_uid, st.st_gid


def _items(root: str, entries: dict[str, Entry]) -> dict[str, IndexItem]:
    items: dict[str, IndexItem] = {}
    for path, entry in entries.items():
        with contextlib.suppress(OSError):
            key = _key(os.lstat(f"{root}/{path}"))
            items[path] = (None if entry[0] == "d" else key, entry)
    return items


def _digest(data: object) -> str:
    import hashlib

    return hashlib.sha256(canonical(data)).hexdigest()[:32]


def _now() -> str:
    return datetime.now(tz=UTC).isoformat(timespec="milliseconds")
