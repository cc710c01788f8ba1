"""Upkeep off the command path, for the store a long-lived process keeps (the server's, ``watch=True``):
pruning, and the full manifest that starts a new chain of deltas.

Pruning: the checkpoint that finds it due asks for it and returns. The thread takes the project's lock
twice, briefly: to decide what goes and remove those records (after that no undo can pick them), and,
after a survey of what the kept states use made without the lock (the slow part: every chain of
manifests read), to add the states taken meanwhile and delete what nobody uses. A store over its size
is pruned on the command path as before: whether the checkpoint may be kept depends on it.

Rebasing: a chain of deltas ``MAX_DEPTH`` long asks for the last state written as a full manifest (at
20,000 files its canonical JSON is about 100 ms: it used to be paid by every 33rd command; it is
encoded a thousand entries at a time, so the commands get the GIL between). The thread writes it
durably without the lock, then, under the lock and if the file is still there (a prune on the command
path could have swept it), stands the next delta on it: on the full manifest itself if its state is
still the last one, else on the last state written as a delta of it. Until then the store goes on
writing deltas, up to ``MAX_CHAIN``.

The minute's walk: the watch cannot see writes through a shared mapping held open, so a watching
store walks everything at least once a minute. In the server that walk runs here, beside the commands
(a full walk and new watches cost about 300 ms at 20,000 files: every 60th command paid it): every path
whose recorded entry is not the last state's, or that came or went, is named to the watch, and the
next checkpoint reads it. A walk
that fails makes the next checkpoint walk on the command path, as before.

One thread at a time, for all three; a task that fails is logged and the next checkpoint that finds it due
asks again (what a failed prune left behind is swept then). ``settle`` waits for the thread (``close``
does).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from canal.core.fsutil import atomic_write
from canal.host.checkpoints import retention, sweep
from canal.host.checkpoints.errors import CheckpointError
from canal.host.checkpoints.records import index_bytes, write_manifest
from canal.host.checkpoints.scan import Over, Scanner, entries_of

if TYPE_CHECKING:
    from canal.host.checkpoints.store import CheckpointStore

log = logging.getLogger("canal.checkpoints")
PRUNE, REBASE, VERIFY = "pruning", "writing a full manifest", "the minute's walk"
INDEX, COPY = "writing the stat cache", "copying the index"


class Upkeep:
    def __init__(self, store: CheckpointStore) -> None:
        self._store = store
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self._wanted: list[str] = []

    def start(self, task: str = PRUNE) -> None:
        """Do ``task`` in the background (after the one under way, if any); asked twice, done once."""
        with self._guard:
            if task not in self._wanted:
                self._wanted.append(task)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="canal-checkpoint-upkeep", daemon=True)
                self._thread.start()

    def settle(self) -> None:
        """Wait until nothing is under way or asked for."""
        while True:
            with self._guard:
                thread = self._thread
            if thread is None:
                return
            thread.join()

    def _run(self) -> None:
        tasks: dict[str, Callable[[CheckpointStore], object]] = {PRUNE: prune, REBASE: rebase,
                                                                  VERIFY: verify, INDEX: write_index,
                                                                  COPY: copy}
        try:
            while True:
                with self._guard:
                    if not self._wanted:
                        self._thread = None
                        return
                    task = self._wanted.pop(0)
                try:
                    tasks[task](self._store)
                except (CheckpointError, OSError) as exc:
                    log.warning("checkpoints of %s: %s failed, tried again at a later checkpoint: %s",
                                self._store.workspace, task, exc)
        finally:  # anything else ends the thread, logged by threading: the next checkpoint starts another
            with self._guard:
                if self._thread is threading.current_thread():
                    self._thread = None


def verify(store: CheckpointStore) -> None:
    """The walk that bounds what the watch cannot see (writes through a shared mapping), made beside
    the commands: every path whose recorded entry is not the state's, or that came or went, is named to
    the watch, and the next checkpoint reads it. A walk that fails leaves the next checkpoint to walk."""
    with store.locked():
        state = store.observer.state()
    if state is None:
        return
    watch, items = state
    try:
        found = Scanner(store.workspace, store.settings, None, items).scan().index
    except (Over, OSError) as exc:
        with store.locked():
            store.observer.verified(watch, None)  # the next checkpoint walks, and says what it found
        if isinstance(exc, OSError):
            raise
        return
    # by entry, not stat key: a file read within 50 ms of its write has no key kept (racily clean) and
    # is read again by every walk; it moved only if what a checkpoint records of it did
    moved = [path for path, item in found.items() if (old := items.get(path)) is None or old[1] != item[1]]
    moved += [path for path in items if path not in found]
    with store.locked():
        store.observer.verified(watch, moved)


def copy(store: CheckpointStore) -> None:
    """Copy the last state's index for the next checkpoint's partial scan (Observer.prepare), once the
    checkpoint that stored it is done: the lock is taken only to wait for it (the copy holds the GIL
    for milliseconds)."""
    with store.locked():
        pass
    store.observer.prepare()


def write_index(store: CheckpointStore) -> None:
    """Write the stat cache (index.json) of the last stored state: made without the lock (30-46 ms of
    marshal and HMAC at 20,000 entries, once every 30 s on the command path before), written under it
    if the manifest it names is still there (a prune on the command path could have swept it: the next
    checkpoint's delta would stand on nothing). Commands gone on meanwhile leave it behind: asked again
    30 s later, as a cache it only has to name a state that exists."""
    with store.locked():
        state = store._cache
    if state is None:
        return
    manifest, depth, items = state
    payload = index_bytes(store.settings_hash, manifest, items, store.keys, depth)
    with store.locked():
        if store._cache is None or not (store.manifests_dir / f"{manifest}.z").exists():
            return
        store._write_index(manifest, depth, items, payload)
        store._index_behind = store._cache is not state


def rebase(store: CheckpointStore) -> None:
    """Write the last stored state as a full manifest and stand the next delta on it."""
    with store.locked():  # (the checkpoint that asked for it is done first: its command does not share
        state = store._cache  # the GIL with this thread's encoding)
    if state is None:
        return
    entries = entries_of(state[2])
    full, _ = write_manifest(store.manifests_dir, entries)
    with store.locked():
        now = store._cache
        if now is None or not (store.manifests_dir / f"{full}.z").exists():
            return  # dropped, or swept by a prune on the command path: a later checkpoint asks again
        if now is not state:  # commands went on meanwhile: the last state as a delta of the full one
            mine = entries_of(now[2])
            name, depth = write_manifest(store.manifests_dir, mine, (full, 0, entries))
            if depth == 0:
                return  # too far from it for a delta: a later checkpoint asks again
            store.rebased(name, depth)
        else:
            store.rebased(full, 0)


def prune(store: CheckpointStore) -> list[str]:
    """Retention as ``retention.prune`` applies it, holding the lock only to decide and to delete."""
    with store.locked():
        paths = store._record_paths()
        if not paths:
            return []
        newest = int(paths[-1].stem)
        if retention.usage(store) > store.settings.max_store_bytes:
            return retention.prune(store, newest)  # the size decides what goes: all under the lock
        decision = retention.decide(store, newest)
        retention.write_kept(store, len(decision.kept))
        if not decision.doomed:
            return []
        try:
            pruned = decision.unlink(store.on_prune)
        except retention.PruneNotRecorded as exc:
            log.warning("checkpoints of %s: a prune of %s could not be recorded, nothing removed: %s",
                        store.workspace, ", ".join(exc.args[0]), exc.__cause__)
            return []
        names = decision.names() | sweep.roots(store)
        counted = retention.usage(store)  # takes from here on add to it
    found = sweep.survey(store, names)
    with store.locked():
        sweep.extend(store, found, _since(store, newest))
        kept_bytes = sweep.sweep(store, found) + max(0, retention.usage(store) - counted)
        atomic_write(store.root / retention.USAGE, str(kept_bytes).encode(), durable=False)
    return pruned


def _since(store: CheckpointStore, newest: int) -> set[str]:
    """The manifests taken after the record ``newest``, and the roots as they are now. A record that
    fails its check raises: its manifest is unknown, so nothing may be deleted."""
    names = sweep.roots(store)
    for path in store._record_paths():
        if int(path.stem) > newest:
            names.add(store.verified.read(path).manifest)
    return names
