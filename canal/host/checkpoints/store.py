"""The checkpoint store of one project: take, list, diff, undo, prune, verify.

Lives in ``<state dir>/checkpoints``, on the host, outside every sandbox mount. One lock serialises
checkpoints and undos of a project (two commands at once cannot interleave their records).
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import functools
import hashlib
import itertools
import os
import stat
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from canal.core.fsutil import atomic_write, private_dir
from canal.core.next import act
from canal.host.checkpoints import compare, pruning, retention
from canal.host.checkpoints.errors import (
    CHECKPOINT_FAILED,
    CHECKPOINT_LIMIT_INVALID,
    CHECKPOINT_NOT_FOUND,
    CHECKPOINT_PRUNED,
    WORKSPACE_TOO_BIG,
    CheckpointError,
    CheckpointStoreCorrupt,
)
from canal.host.checkpoints.ignore import Ignorer
from canal.host.checkpoints.manifests import Manifests, identity
from canal.host.checkpoints.models import (
    SHOWN_NOT_COVERED,
    Change,
    ChangeSummary,
    Checkpoint,
    CorruptRecord,
    DiffResult,
    History,
    HistoryRow,
    Kind,
    NotCovered,
    UndoResult,
)
from canal.host.checkpoints.objects import ObjectStore, failed
from canal.host.checkpoints.observe import Observer
from canal.host.checkpoints.picking import pick_undo, prune_refused, store_full, uncovered
from canal.host.checkpoints.records import (
    MAX_CHAIN,
    MAX_DEPTH,
    Delta,
    Keys,
    RecordSpan,
    VerifiedRecords,
    deltas_left,
    read_index,
    write_delta,
    write_index,
    write_manifest,
    write_record,
)
from canal.host.checkpoints.restore import restore
from canal.host.checkpoints.scan import Entry, IndexItem, Over, ScanResult, entries_of
from canal.host.checkpoints.settings import CheckpointSettings

ID_PREFIX = "cp-"
_T = TypeVar("_T")
INDEX_EVERY_S = 30.0  # a watched store keeps its stat cache in memory; on disk this often (and at close)


def parse_id(text: str) -> int | None:
    raw = text.removeprefix(ID_PREFIX)
    return int(raw) if raw.isdigit() else None


class CheckpointStore:
    """``watch=True`` (a long-lived process: the server keeps one store per project): an inotify watch
    over the workspace lets a checkpoint list again only the folders where something happened, and
    nothing at all when nothing did; whenever the watch cannot vouch, everything is walked (watch.py)."""

    def __init__(self, root: Path, workspace: Path, settings: CheckpointSettings, keys: Keys, *,
                 watch: bool = False, on_prune: Callable[[builtins.list[str]], object] | None = None) -> None:
        """``on_prune``: told the ids of the checkpoints retention is about to remove (the audit log);
        when it raises, they stay."""
        self.root = root
        self.on_prune = on_prune
        self.workspace = workspace
        self.settings = settings
        self.keys = keys
        self.objects = ObjectStore(root / "objects")
        self.records_dir = root / "records"
        self._span: RecordSpan | None = None  # the records folder as this store left it (span())
        self.verified = VerifiedRecords(keys)  # records read and checked, kept while their files stay
        self.manifests_dir = root / "manifests"
        self.index_path = root / "index.json"
        # (manifest, its delta depth, stat cache): kept between calls in one process
        self._cache: tuple[str, int, dict[str, IndexItem]] | None = None
        self.settings_hash = hashlib.sha256(settings.model_dump_json().encode()).hexdigest()[:16]
        self.observer = Observer(workspace, settings, self.objects, watching=watch)
        self._index_at = 0.0  # when the stat cache was last written (monotonic)
        self._index_behind = False  # the in-memory stat cache is newer than index.json
        self._excluded = Ignorer.make(settings.exclude, False)
        self._index_known: tuple[tuple[int, ...], str | None] | None = None  # (index.json's stat, manifest)
        self._manifests = Manifests(self.manifests_dir)  # what was read last, kept
        self._left: tuple[str, builtins.list[tuple[str, str]]] | None = None  # the last state's not_covered
        # a long-lived process prunes, starts new chains and verifies off the command path (pruning.py)
        self._upkeep = pruning.Upkeep(self) if watch else None
        if self._upkeep is not None:
            self.observer.verify_later = functools.partial(self._upkeep.start, pruning.VERIFY)
            self.observer.copy_later = functools.partial(self._upkeep.start, pruning.COPY)

    @property
    def watch_note(self) -> str:
        """Why the last checkpoint walked everything although the store watches ("" when it did not)."""
        return self.observer.note

    # -- taking ---------------------------------------------------------------------------------
    def take(self, *, kind: Kind, command: str = "", actor: str = "agent",
             pinned: bool = False) -> Checkpoint:
        """Record the workspace now. Raises CHECKPOINT_FAILED, WORKSPACE_TOO_BIG or CHECKPOINT_STORE_FULL:
        never half-done. ``pinned``: the command that follows is destructive or opaque (retention.py)."""
        with self.locked():
            return self._take(kind, command, actor, pinned=pinned)

    def _take(self, kind: Kind, command: str, actor: str, *, prune: bool = True,
              pinned: bool = False) -> Checkpoint:
        last, depth, items, note = self._load_cache()
        self.objects.discard()
        try:
            result = self._guarded(lambda: self.observer.observe(items, store=True), True)
        except BaseException:
            self.objects.discard()
            self.observer.drop()  # what the watch saw is no longer matched by a stored state
            raise
        try:
            manifest, depth, found = self._manifest_for(result, last, depth, items)
            # the objects and the manifest reach the disk before a record names them
            self.objects.flush([self.manifests_dir / f"{manifest}.z", self.manifests_dir]
                               if manifest != last else [])
            if result.dirty or manifest != last:
                self._index_behind = True
            if self._index_behind and self._index_due():
                if self._upkeep is not None and self.observer.armed:
                    self._index_at = time.monotonic()  # asked for: once per INDEX_EVERY_S
                    self._upkeep.start(pruning.INDEX)  # written off the command path
                else:
                    self._write_index(manifest, depth, result.index)
            span = self.span()
            record = self._record(kind, command, actor, manifest, result, found, note, pinned, span.next_seq)
            record = write_record(self._record_path(record.seq), record, self.keys)
            span = self._span = span.adding(self._record_path(record.seq).name)
            self._cache = (manifest, depth, result.index)
            self._left = (manifest, result.not_covered)
            self.observer.stored(result)
            if self._upkeep is not None and depth >= MAX_DEPTH:
                self._upkeep.start(pruning.REBASE)  # the next full manifest, off the command path
        except OSError as exc:
            self.objects.discard()
            self.observer.drop()
            raise failed(exc, self.root) from None
        retention.add_usage(self, result.added_bytes)
        if prune and retention.due(self, span):
            if self._upkeep is not None and retention.usage(self) <= self.settings.max_store_bytes:
                self._upkeep.start()  # it waits for this lock: the command does not wait for it
                return record
            retention.prune(self, record.seq)
            if retention.usage(self) > self.settings.max_store_bytes:
                self._refuse_full(record)
        return record

    def _refuse_full(self, record: Checkpoint) -> None:
        """The floor and the pins alone are past the store's cap: this checkpoint is dropped (its files
        collected) and the command does not run, rather than older damage made permanent."""
        self._record_path(record.seq).unlink(missing_ok=True)
        self.forget_span()
        self._cache = None
        self.observer.drop()
        newest = self._record_paths()
        retention.prune(self, int(newest[-1].stem) if newest else 0)
        raise store_full(self, record)

    def _load_cache(self) -> tuple[str | None, int, dict[str, IndexItem], str]:
        if self._cache is not None and (self.manifests_dir / f"{self._cache[0]}.z").exists():
            return (*self._cache, "")
        self.observer.drop()  # another process pruned what this one's state stood on: start over
        loaded = read_index(self.index_path, self.settings_hash, self.keys)
        if loaded is not None:
            return (*loaded, "")
        note = ("the stat cache failed its check and was rebuilt from the files"
                if self.index_path.exists() else "")
        return None, 0, {}, note

    def _index_due(self) -> bool:
        return not self.observer.armed or time.monotonic() - self._index_at >= INDEX_EVERY_S

    def _write_index(self, manifest: str, depth: int, index: dict[str, IndexItem],
                     payload: bytes | None = None) -> None:
        """(Under the lock.) ``payload``: the file's bytes, made beforehand (pruning.write_index)."""
        if payload is None:
            write_index(self.index_path, self.settings_hash, manifest, index, self.keys, depth)
        else:
            atomic_write(self.index_path, payload, durable=False)
        self._index_at, self._index_behind = time.monotonic(), False
        self._index_known = (_identity(self.index_path), manifest)

    def rebased(self, name: str, depth: int) -> None:
        """(Under the lock.) Manifest ``name`` (a full one, or a delta of one) holds the last stored
        state's entries: the next delta stands on it (pruning.rebase)."""
        assert self._cache is not None
        self._cache = (name, depth, self._cache[2])
        self._index_behind = True

    def index_manifest(self) -> str | None:
        """The manifest index.json names (under the lock), read again only when the file changed."""
        identity = _identity(self.index_path)
        if not identity:
            return None
        if self._index_known is None or self._index_known[0] != identity:
            loaded = read_index(self.index_path, self.settings_hash, self.keys)
            self._index_known = (identity, loaded[0] if loaded is not None else None)
        return self._index_known[1]

    def settle(self) -> None:
        """Wait for the upkeep running in the background (a watched store's), if any."""
        if self._upkeep is not None:
            self._upkeep.settle()

    def close(self) -> None:
        """Write the stat cache if it is behind, and release the watch (a long-lived process closing)."""
        self.settle()
        with self.locked():
            if self._index_behind and self._cache is not None:
                with contextlib.suppress(OSError):
                    self._write_index(*self._cache)
            self.observer.drop()

    def _guarded(self, scan: Callable[[], _T], store: bool) -> _T:
        try:
            if store:
                private_dir(self.objects.root)
            return scan()
        except Over as exc:
            msg = f"The workspace {self.workspace} is too big to checkpoint: {exc}. Nothing ran."
            hint = ("exclude build outputs or data in canal.yaml (checkpoints.exclude) or raise the cap "
                    "(docs/checkpoints.md), then run again")
            raise WORKSPACE_TOO_BIG(msg, hint=hint,
                                  details={"workspace": str(self.workspace), "cap": str(exc)}) from None
        except OSError as exc:
            raise failed(exc, self.root) from None

    def _manifest_for(self, result: ScanResult, last: str | None, depth: int,
                      items: dict[str, IndexItem]) -> tuple[str, int, builtins.list[Change]]:
        """The manifest (written when new, as a delta of the last one when it can), its depth, and
        what changed since the last scan."""
        if last is None:
            private_dir(self.manifests_dir)
            return (*write_manifest(self.manifests_dir, result.entries, durable=False), [])
        if not result.dirty:
            return last, depth, []
        max_depth = MAX_CHAIN if self._upkeep is not None else MAX_DEPTH
        if result.touched is not None:  # a partial scan: what changed is among the paths it touched
            return self._delta_for(result, result.touched, last, depth, items, max_depth)
        entries = result.entries
        prev = entries_of(items)
        if prev == entries:
            return last, depth, []
        private_dir(self.manifests_dir)
        name, new_depth = write_manifest(self.manifests_dir, entries, (last, depth, prev), durable=False,
                                         max_depth=max_depth)
        return name, new_depth, compare.changes(prev, entries)

    def _delta_for(self, result: ScanResult, touched: set[str], last: str, depth: int,
                   items: dict[str, IndexItem], max_depth: int) -> tuple[str, int, builtins.list[Change]]:
        """``_manifest_for`` from the touched paths alone: the same manifest, byte for byte."""
        old = {p: items[p][1] for p in touched if p in items}
        new = {p: result.index[p][1] for p in touched if p in result.index}
        changed = {p: e for p, e in new.items() if old.get(p) != e}
        gone = [p for p in old if p not in new]
        if not changed and not gone:
            return last, depth, []
        private_dir(self.manifests_dir)
        delta = Delta(changed, gone, len(result.index)) if deltas_left(depth, max_depth) else None
        name, new_depth = write_delta(self.manifests_dir, (last, depth), delta, lambda: result.entries,
                                      durable=False)
        return name, new_depth, compare.changes(old, new)

    def _record(self, kind: Kind, command: str, actor: str, manifest: str, result: ScanResult,
                found: builtins.list[Change], note: str, pinned: bool, seq: int) -> Checkpoint:
        skipped = [NotCovered(path=p, reason=r) for p, r in result.not_covered]
        return Checkpoint(id=f"{ID_PREFIX}{seq}", seq=seq, created_at=_now(), kind=kind, command=command,
                          actor=actor, manifest=manifest, files=result.files, bytes=result.bytes,
                          added_bytes=result.added_bytes, changes=compare.summary(found),
                          not_covered=skipped[:SHOWN_NOT_COVERED], not_covered_total=len(skipped), note=note,
                          pinned=pinned, uncovered=uncovered(result.not_covered))

    def attach(self, checkpoint: Checkpoint, audit_id: str) -> Checkpoint:
        """Link the checkpoint to the audit record of the command that followed it. The record was made
        durable by ``take``; the link's rename is not synced on the command path (the audit record
        names the checkpoint as well): after a crash the record holds it or not, whole either way, and
        the next checkpoint's record, synced with its folder, makes it last."""
        with self.locked():
            return write_record(self._record_path(checkpoint.seq),
                                checkpoint.model_copy(update={"audit_id": audit_id}), self.keys,
                                sync_folder=False)

    # -- reading --------------------------------------------------------------------------------
    def list(self) -> list[Checkpoint]:
        """The kept checkpoints whose records verify, oldest first (``records`` names the others)."""
        return self.records()[0]

    def records(self) -> tuple[builtins.list[Checkpoint], builtins.list[CorruptRecord]]:
        """(records that verify, records that do not): one bad record hides none of the others."""
        good: builtins.list[Checkpoint] = []
        bad: builtins.list[CorruptRecord] = []
        for path in self._record_paths():
            try:
                good.append(self.verified.read(path))
            except CheckpointStoreCorrupt as exc:
                bad.append(_corrupt(path, exc))
        return good, bad

    def newest_first(self) -> Iterator[Checkpoint]:
        """The kept checkpoints whose records verify, newest first, each read when it is reached."""
        for path in reversed(self._record_paths()):
            try:
                record = self.verified.read(path)
            except CheckpointStoreCorrupt:
                continue
            yield record

    def get(self, cp_id: str | None = None) -> Checkpoint:
        """The checkpoint ``cp_id`` (the newest when None), its record verified."""
        paths = self._record_paths()
        if cp_id is None:
            if not paths:
                msg = "This project has no checkpoint yet."
                raise CHECKPOINT_NOT_FOUND(msg, hint="run a command first: a checkpoint is taken before it")
            return self.verified.read(paths[-1])
        seq = parse_id(cp_id)
        path = self._record_path(seq) if seq is not None else None
        if path is None or not path.exists():
            raise _not_found(cp_id, seq, paths)
        return self.verified.read(path)

    def history(self, limit: int | None = None) -> History:
        """Every kept checkpoint, oldest first, with what changed after it; corrupt records named.
        ``limit``: the newest ``limit`` that verify only (and the corrupt records among them), read
        newest first: a day of commands keeps thousands, and a listing should not read them all."""
        older = 0
        if limit is None:
            records, bad = self.records()
        else:
            records, bad, older = self._newest(limit)
        skipped = {c.id for c in bad}
        rows = [HistoryRow(checkpoint=a, changed_after=self._between(a, b, skipped))
                for a, b in itertools.pairwise(records)]
        if records:
            newest = records[-1]
            now = compare.changes(self.manifest(newest), self.current().entries)
            rows.append(HistoryRow(checkpoint=newest, changed_after=compare.summary(now)))
        return History(rows=rows, corrupt=bad, older=older)

    def _newest(self, limit: int) -> tuple[builtins.list[Checkpoint], builtins.list[CorruptRecord], int]:
        """(the newest ``limit`` records that verify, the corrupt ones between them, how many records
        are older than those read), each list oldest first."""
        if limit < 1:
            msg = f"A listing of checkpoints needs a limit of at least 1 (got {limit}). Nothing was read."
            raise CHECKPOINT_LIMIT_INVALID(msg, hint="ask for 1 or more, or for all of them (no limit)")
        paths = self._record_paths()
        good: builtins.list[Checkpoint] = []
        bad: builtins.list[CorruptRecord] = []
        left = len(paths)
        while left and len(good) < limit:
            left -= 1
            path = paths[left]
            try:
                good.append(self.verified.read(path))
            except CheckpointStoreCorrupt as exc:
                bad.append(_corrupt(path, exc))
        return good[::-1], bad[::-1], left

    def _between(self, a: Checkpoint, b: Checkpoint, corrupt: set[str]) -> ChangeSummary:
        """What changed from ``a`` to the next good record ``b``: ``b``'s own summary, unless a corrupt
        record lies between them (then the two manifests are compared)."""
        if not any(f"{ID_PREFIX}{seq}" in corrupt for seq in range(a.seq + 1, b.seq)):
            return b.changes
        return compare.summary(compare.changes(self.manifest(a), self.manifest(b)))

    def manifest(self, checkpoint: Checkpoint) -> dict[str, Entry]:
        return self.read_manifest(checkpoint.manifest)

    def read_manifest(self, name: str) -> dict[str, Entry]:
        """The entries of manifest ``name`` (a copy: the caller may change it). The last stored state's
        come from the stat cache, which holds them; others from ``Manifests``, which keeps the last read
        and the full manifest under it. Either way the files are checked against their hashes (again
        only when they changed since), so a tampered manifest is named whoever holds its entries."""
        cache = self._cache
        if cache is not None and cache[0] == name:
            self._manifests.check(name)
            return entries_of(cache[2])
        return self._manifests.read(name)

    def pin(self, owner: str, manifest: str | None) -> None:
        """Keep ``manifest`` (and its files) through retention while ``owner`` (a fork) uses it."""
        path = self.root / "pins" / owner
        if manifest is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, manifest.encode())

    def pinned(self) -> set[str]:
        folder = self.root / "pins"
        return {p.read_text().strip() for p in folder.iterdir()} if folder.is_dir() else set()

    def left_out(self, rel: str) -> bool:
        """Whether the path ``rel`` of the workspace exists and the last checkpoint this store took has
        no copy of it (.gitignore'd, over the cap...; not when ``exclude`` names it: a person's choice).
        After a checkpoint, from memory: its stat cache holds every covered path."""
        try:
            st = os.lstat(self.workspace / rel)
        except OSError:
            return False
        is_dir = stat.S_ISDIR(st.st_mode)
        if self._cache is None:
            return True  # nothing vouches for it: undo may not have it
        return not (rel in self._cache[2] or self._excluded.configured_reason(rel, is_dir) is not None)

    def not_covered(self, manifest: str) -> builtins.list[tuple[str, str]] | None:
        """Every path the last stored state left out, with why (its scan's list, not the record's
        first few), when ``manifest`` is still that state's; else None."""
        left, cache = self._left, self._cache
        if left is None or cache is None or left[0] != manifest or cache[0] != manifest:
            return None
        return left[1]

    def forget_cache(self) -> None:
        """The workspace was written by Canal itself: the next scan starts from the cache on disk."""
        self._cache = None  # the next take (under the lock) drops the watch's state too

    def current(self) -> ScanResult:
        """The workspace now, without storing anything."""
        with self.locked():
            _, _, items, _ = self._load_cache()
            return self._guarded(lambda: self.observer.observe(items, store=False), False)

    def changed_since(self, checkpoint: Checkpoint) -> bool:
        """Whether the workspace now differs from ``checkpoint``: no comparison when it is the last
        stored state and the scan found nothing new (what ``_take`` relies on too)."""
        with self.locked():
            _, _, items, _ = self._load_cache()
            now = self._guarded(lambda: self.observer.observe(items, store=False), False)
            cache = self._cache
            if not now.dirty and cache is not None and cache[0] == checkpoint.manifest and now.index is items:
                return False
        return compare.differs(self.manifest(checkpoint), now.entries)

    def diff(self, cp_id: str | None = None) -> DiffResult:
        cp = self.get(cp_id)
        old = self.manifest(cp)
        new = self.current().entries
        found = compare.changes(old, new)
        text, marked = compare.patch(found, old, new, self._load_object, self._load_workspace)
        return DiffResult(checkpoint=cp.id, against="workspace", changes=marked, patch=text)

    def _load_object(self, _: str, entry: Entry) -> bytes:
        return self.objects.open_verified(entry[6])

    def _load_workspace(self, path: str, _: Entry) -> bytes:
        with contextlib.suppress(OSError):
            fd = os.open(self.workspace / path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as fh:
                return fh.read()
        return b""

    # -- undo -----------------------------------------------------------------------------------
    def undo(self, cp_id: str | None = None, *, actor: str = "agent",
             last_command: bool = False) -> UndoResult:
        """Put the workspace back to ``cp_id``; with none, to the newest checkpoint after which something
        changed (``last_command``: the newest, whatever followed it)."""
        if cp_id is None and not last_command:
            target_cp, skipped = pick_undo(self)
        else:
            target_cp, skipped = self.get(cp_id), []
        with self.locked():
            if not self._record_path(target_cp.seq).exists():  # pruned since it was picked
                raise _not_found(target_cp.id, target_cp.seq, self._record_paths())
            target = self.manifest(target_cp)  # checked before anything else happens
            # no pruning until the restore is done: it could take the target's files away
            before = self._take("undo", f"undo {target_cp.id}", actor, prune=False)
            current = self.manifest(before)
            found, left, stripped = restore(self.workspace, target, current, self.objects,
                                            keep=set(target_cp.uncovered))
            if not self.observer.wrote([c.path for c in found]):
                self.forget_cache()  # the workspace changed under the cache: rescan
            if retention.due(self):
                retention.prune(self, before.seq)
        return UndoResult(restored_to=target_cp.id, before_undo=before.id, changes=found, left_alone=left,
                          stripped=stripped, command=target_cp.command, kind=target_cp.kind, skipped=skipped)

    # -- retention ------------------------------------------------------------------------------
    def prune(self, *, before: str | None = None, person: bool = False) -> builtins.list[str]:
        """Apply retention now (never inside the floor). ``before``: also every checkpoint older than
        that one; when any of them is inside the floor or pinned only a person may (PRUNE_REFUSED)."""
        with self.locked():
            paths = self._record_paths()
            newest = parse_id(paths[-1].stem) if paths else None
            limit = None
            if before is not None:
                limit = self.get(before).seq
                inside = retention.floor_ids(self, limit)
                if inside and not person:
                    raise prune_refused(inside, before)
            return retention.prune(self, newest or 0, before=limit, automatic=False)  # the caller records it

    # -- plumbing -------------------------------------------------------------------------------
    def _record_path(self, seq: int) -> Path:
        return self.records_dir / f"{seq:010d}.json"

    def _record_paths(self) -> builtins.list[Path]:
        """Every record, oldest first."""
        return [self.records_dir / n for n in sorted(self._listed())]  # zero-padded: sorted as strings

    def _listed(self) -> builtins.list[str]:
        try:
            return [n for n in os.listdir(self.records_dir) if n.endswith(".json") and n[:-5].isdigit()]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def forget_span(self) -> None:
        self._span = None

    def span(self) -> RecordSpan:
        """How many records there are, the oldest's and the newest's names (under the lock). What this
        store knew after its last take is used while it holds: its newest record is there and no newer
        one (a record another process took makes it list again, so no sequence number repeats; a prune
        forgets it). Otherwise one listing, no sort, no path objects: O(records), ~1.5 ms at 5,000."""
        known = self._span
        if (known is not None and known.records and self._record_path(known.next_seq - 1).exists()
                and not self._record_path(known.next_seq).exists()):
            return known
        names = self._listed()
        self._span = RecordSpan(len(names), min(names), max(names)) if names else RecordSpan(0, "", "")
        return self._span

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        try:
            private_dir(self.records_dir)
            fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise failed(exc, self.root) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _corrupt(path: Path, exc: CheckpointStoreCorrupt) -> CorruptRecord:
    return CorruptRecord(id=f"{ID_PREFIX}{int(path.stem)}", record=path.name,
                         why=str(exc.details.get("why", exc.message)))


def _not_found(cp_id: str, seq: int | None, paths: builtins.list[Path]) -> CheckpointError:
    oldest = int(paths[0].stem) if paths else None
    newest = int(paths[-1].stem) if paths else None
    details = {"id": cp_id, "oldest": oldest, "newest": newest}
    kept = [act("checkpoints", "lists the ones kept")] if newest else []
    if seq is not None and oldest is not None and seq < oldest:
        msg = (f"Checkpoint {cp_id}: it was pruned (the oldest kept is {ID_PREFIX}{oldest}). "
               "Nothing was restored.")
        return CHECKPOINT_PRUNED(msg, hint="undo to a checkpoint that is kept", next=kept, details=details)
    msg = f"Checkpoint {cp_id}: no checkpoint has that id. Nothing was restored."
    hint = "pick one from the list" if newest else "run a command first: a checkpoint is taken before it"
    return CHECKPOINT_NOT_FOUND(msg, hint=hint, next=kept, details=details)


def _identity(path: Path) -> tuple[int, ...]:
    """What tells one version of a file from another (manifests.identity); () when there is none."""
    try:
        return identity(os.stat(path))
    except OSError:
        return ()


def _now() -> str:
    return datetime.now(tz=UTC).isoformat(timespec="milliseconds")


__all__ = ["CHECKPOINT_FAILED", "CheckpointStore", "parse_id"]
