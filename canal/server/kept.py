"""One ``Canal`` per project, sandbox and actor, kept by the server between API calls.

Building a ``Canal`` reads canal.yaml and every file it names, checks them against the approval (and
each enclosing project's), reads the key ring and derives the keys: about 2 ms, more than the rest of a
warm ``run("true")``. A kept one is used again while every file it was read from (``Canal.sources``)
has the stamp it had when it was built; any change (an edit, an approval, a key rotation, the project
folder made again) builds a new one, so the next call sees it exactly as a fresh ``Canal`` would: a
loosening edit is refused at once, never served from what was kept.

A stamp is the kernel's word on the file (device, inode, size, modification and change times; for a
folder its device and inode only): the change time cannot be set by whoever writes the file. The file
system's clock is coarse, so a file changed within ``SETTLE_S`` of a build could change again with the
same stamp ("racy" entries, as git calls them): what was read from such a file is used for that call
only, and kept from a later build once everything has settled.

Calls on one kept ``Canal`` may run at once from several connections: what it holds between calls is
built once (settings, policy, the shared resources' backend) and read after, and every call of the public
API takes its arguments and nothing else from the object. After each call its audit records are put on
disk by the resources' group commit, as when each call had its own ``Canal``.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from canal.core.errors import CanalError

if TYPE_CHECKING:
    from canal.runtime.api import Canal
    from canal.runtime.sandboxes.resources import Resources

log = logging.getLogger("canal.server")
SETTLE_S = 2.0
MAX_KEPT = 64
Stamp = tuple[int, ...] | None
Key = tuple[str, str, str]


def stamp(path: Path) -> Stamp:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None  # absent (or unreadable): appearing later is a change too
    if stat.S_ISDIR(info.st_mode):
        return (info.st_dev, info.st_ino)  # its entries come and go with the workspace's files
    return (info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def stamps(paths: list[Path]) -> tuple[Stamp, ...]:
    return tuple(stamp(path) for path in paths)


def settled(found: tuple[Stamp, ...], before_ns: int) -> bool:
    """True when no file was changed at or after ``before_ns`` (nanoseconds since the epoch)."""
    return all(s is None or len(s) == 2 or max(s[4], s[5]) < before_ns for s in found)


@dataclass(frozen=True)
class _Kept:
    canal: Canal
    sources: list[Path]
    stamps: tuple[Stamp, ...]


class KeptCanals:
    """``resources``: the server's one set, given to every ``Canal`` built here."""

    def __init__(self, resources: Resources, *, clock: Callable[[], float] = time.time,
                 settle_s: float = SETTLE_S, limit: int = MAX_KEPT) -> None:
        self._resources = resources
        self._clock = clock
        self._settle_s = settle_s
        self._limit = limit
        self._lock = threading.Lock()
        self._kept: OrderedDict[Key, _Kept] = OrderedDict()
        self.builds = 0

    @contextmanager
    def use(self, project: Path, sandbox: str, actor: str) -> Iterator[Canal]:
        """The kept ``Canal`` of ``project`` while nothing it was read from changed, else a new one
        (kept when everything it was read from has settled)."""
        key = (str(project), sandbox, actor)
        canal = self._current(key)
        if canal is None:
            canal = self._build(key, project, sandbox, actor)
        try:
            yield canal
        except CanalError:
            raise
        except BaseException:  # something unforeseen: the next call starts from a new Canal
            self._drop(key, canal)
            raise
        finally:
            canal.close()  # its records on disk soon (group commit); the resources keep the rest

    def _current(self, key: Key) -> Canal | None:
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
        if kept is None:
            return None
        if stamps(kept.sources) == kept.stamps:
            return kept.canal
        self._drop(key, kept.canal)
        return None

    def _build(self, key: Key, project: Path, sandbox: str, actor: str) -> Canal:
        from canal.runtime.api import Canal  # not on the server's start path

        started_ns = int((self._clock() - self._settle_s) * 1e9)
        canal = Canal(project, sandbox=sandbox, actor=actor, resources=self._resources)
        with self._lock:
            self.builds += 1
        try:
            sources = canal.sources()  # the settings read and checked now, once
            canal.policy  # noqa: B018  # compiled (or taken from the resources) once, not by each call
        except CanalError:
            return canal  # the call raises the same again, as a fresh Canal would: nothing is kept
        if sources is None:
            return canal
        found = stamps(sources)
        if settled(found, started_ns):
            with self._lock:
                self._kept[key] = _Kept(canal, sources, found)
                self._kept.move_to_end(key)
                while len(self._kept) > self._limit:
                    self._kept.popitem(last=False)
        return canal

    def _drop(self, key: Key, canal: Canal) -> None:
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept.canal is canal:
                del self._kept[key]

    def status(self) -> dict[str, int]:
        with self._lock:
            return {"api_canals": len(self._kept), "api_canal_builds": self.builds}
