"""Pruning off the command path, for the store a long-lived process keeps (the server's, ``watch=True``).

The checkpoint that finds pruning due starts a thread and returns. The thread takes the project's lock
twice, briefly: to decide what goes and remove those records (after that no undo can pick them), and,
after a survey of what the kept states use made without the lock (the slow part: every chain of
manifests read), to add the states taken meanwhile and delete what nobody uses. A store over its size
is pruned on the command path as before: whether the checkpoint may be kept depends on it.

One thread at a time; a prune that fails is logged and the next checkpoint that finds pruning due tries
again (what it left behind is swept then). ``settle`` waits for the thread (``close`` does).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from canal.core.fsutil import atomic_write
from canal.host.checkpoints import retention, sweep
from canal.host.checkpoints.errors import CheckpointError
from canal.host.checkpoints.records import read_record

if TYPE_CHECKING:
    from canal.host.checkpoints.store import CheckpointStore

log = logging.getLogger("canal.checkpoints")


class Pruner:
    def __init__(self, store: CheckpointStore) -> None:
        self._store = store
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def start(self) -> None:
        """Prune in the background, unless a prune is running already."""
        with self._guard:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._run, name="canal-checkpoint-prune", daemon=True)
            self._thread.start()

    def settle(self) -> None:
        """Wait for the prune under way, if any."""
        with self._guard:
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        try:
            prune(self._store)
        except (CheckpointError, OSError) as exc:
            log.warning("checkpoints of %s: pruning failed, tried again at a later checkpoint: %s",
                        self._store.workspace, exc)


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
        pruned = decision.unlink()
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
            names.add(read_record(path, store.keys).manifest)
    return names
