"""What a checkpoint sees of the workspace: a walk of everything, or, in a store a long-lived process
keeps (the server's, ``watch=True``), the last stored state amended by what an inotify watch saw
(watch.py; the folders it names are listed again by rescan.py). Whenever the watch cannot vouch, and
at least every ``VERIFY_S``, everything is walked, and ``note`` says why.

Raises what a scan raises (``Over``, ``OSError``): the store turns them into its errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from canal.host.checkpoints.objects import ObjectStore
from canal.host.checkpoints.rescan import rescan
from canal.host.checkpoints.scan import IndexItem, Scanner, ScanResult
from canal.host.checkpoints.settings import CheckpointSettings
from canal.host.checkpoints.watch import Watch, open_watch

VERIFY_S = 60.0  # a watching store still walks everything when its last walk is older than this


class Observer:
    def __init__(self, workspace: Path, settings: CheckpointSettings, objects: ObjectStore, *,
                 watching: bool) -> None:
        self.workspace = workspace
        self.settings = settings
        self.objects = objects
        self.watching = watching
        self.note = ""  # why the last checkpoint walked everything although it watches
        self._watch: Watch | None = None
        self._state: ScanResult | None = None  # the last stored scan, which the watch's events amend
        self._walked_at = 0.0
        self._rearm_at = 0.0  # after the watch limit was reached, no new watch before this (monotonic)
        # the minute's walk done off the command path (pruning.verify), when the store has a thread for it
        self.verify_later: Callable[[], None] | None = None
        # the copy of the last state's index the next partial scan amends, made off the command path
        # (``copy_later``: at 50,000 entries the copy alone is 4-8 ms, most of a one-file checkpoint)
        self.copy_later: Callable[[], None] | None = None
        self._copy: tuple[dict[str, IndexItem], dict[str, IndexItem]] | None = None  # (of that, the copy)
        self._must_walk = False  # that walk failed: the next checkpoint walks itself

    @property
    def armed(self) -> bool:
        return self._watch is not None

    def observe(self, items: dict[str, IndexItem], *, store: bool) -> ScanResult:
        """The workspace now: the last state amended by the watch's events when it vouches for them,
        else a walk of everything (arming a new watch when ``store``: the state it vouches from).
        ``items``: the stat cache the caller stands on (the last stored state's when it watches)."""
        state, watch = self._state, self._watch
        if store:
            self.note = ""
        if not self.watching or state is None or watch is None or state.index is not items:
            return self._walk(items, store=store)
        pending = watch.poll()
        overdue = time.monotonic() - self._walked_at > VERIFY_S
        if pending.lost or self._must_walk or (overdue and self.verify_later is None):
            self.note = pending.lost or (
                "the walk made beside the commands failed" if self._must_walk
                else f"the last walk is older than {VERIFY_S:.0f} s")
            return self._walk(items, store=store)
        if overdue and store:  # the walk runs beside the commands; what it finds, the next one reads
            self._walked_at = time.monotonic()
            assert self.verify_later is not None
            self.verify_later()
        if not pending.folders and not pending.reread:
            # the last state as it is (its dicts are never changed once stored), nothing touched
            return replace(state, added_bytes=0, hashed=0, dirty=False, walked=[], touched=set())
        scanner = Scanner(self.workspace, self.settings, self.objects if store else None, items,
                          watch=watch, reread=frozenset(pending.reread))
        made, self._copy = self._copy, None  # used once: the partial scan changes it
        result = rescan(scanner, state, pending.folders, made[1] if made and made[0] is state.index else None)
        if result is None:
            self.note = "a folder moved while it was listed"
            return self._walk(items, store=store)
        if store:
            watch.clear()
        return result

    def wrote(self, paths: list[str]) -> bool:
        """Canal itself wrote ``paths`` (an undo): the watch saw it as it sees anyone's writes, and each
        is named to it as well, so the next checkpoint lists their folders and reads them again. False
        when nothing watches: the caller then drops its stat cache."""
        if self._watch is None or self._state is None:
            return False
        self._watch.wrote(paths)
        return True

    def state(self) -> tuple[Watch, dict[str, IndexItem]] | None:
        """(Under the lock.) The watch and the stat cache of the state it vouches for, if it does."""
        if self._watch is None or self._state is None:
            return None
        return self._watch, self._state.index

    def verified(self, watch: Watch, paths: list[str] | None) -> None:
        """(Under the lock.) A walk made beside the commands found ``paths`` not as the state has them:
        the next checkpoint reads them. None: the walk failed, so the next checkpoint walks itself."""
        if paths is None:
            self._must_walk = True
        elif watch is self._watch:
            watch.wrote(paths)

    def stored(self, result: ScanResult) -> None:
        """``result`` is now the stored state: the watch's next events amend it."""
        self._state = result if self._watch is not None else None
        if self._state is not None and self.copy_later is not None:
            self.copy_later()

    def prepare(self) -> None:
        """(The store's upkeep thread.) Copy the last state's index for the next partial scan to amend.
        The state's own dicts are never changed once stored, so the copy needs no lock."""
        state, made = self._state, self._copy
        if state is not None and (made is None or made[0] is not state.index):
            self._copy = (state.index, dict(state.index))

    def drop(self) -> None:
        """Forget the watch and the state (a failed checkpoint, or a workspace Canal wrote itself)."""
        if self._watch is not None:
            self._watch.close()
        self._watch, self._state, self._copy = None, None, None

    def _walk(self, items: dict[str, IndexItem], *, store: bool) -> ScanResult:
        watch = None
        if self.watching and store and time.monotonic() >= self._rearm_at:
            self.drop()
            watch, why = open_watch()
            self.note = self.note or why
        scanner = Scanner(self.workspace, self.settings, self.objects if store else None, items, watch=watch)
        try:
            result = scanner.scan()
        except BaseException:
            if watch is not None:
                watch.close()
            raise
        if watch is not None:
            self._watch, self._walked_at, self._must_walk = watch, time.monotonic(), False
            if watch.poll().lost:  # the walk itself could not arm everything: nothing to vouch with
                self.note = watch.pending.lost
                if watch.exhausted:  # arming thousands of watches to lose them: not at every checkpoint
                    self._rearm_at = time.monotonic() + VERIFY_S
                self.drop()
        return result
