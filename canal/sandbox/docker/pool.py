"""A small warm pool: sandboxes created (and their sessions started) ahead of need.

``acquire(name)`` renames a ready sandbox and refills the pool in the background, so the caller does
not wait for ``docker run``. Pool sandboxes carry ``canal.pool=1`` and an expiry stretched by
``max_idle_s``; one idle longer than that is replaced, so an acquired sandbox keeps at least its
spec's time to live. ``close()`` removes what is left.

``spec_for`` (optional) gives each pooled sandbox its own spec from its pooled name: a mount that must be
one per sandbox (an output folder) is made for that name.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from canal.sandbox.backend import LABEL_POOL, POOLED_PREFIX, SandboxInfo
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.errors import SandboxNotFound
from canal.sandbox.spec import SandboxSpec


@dataclass(frozen=True)
class _Ready:
    name: str
    born: float


class WarmPool:
    def __init__(self, backend: DockerBackend, spec: SandboxSpec, *, size: int = 2,
                 max_idle_s: int = 600, spec_for: Callable[[str], SandboxSpec] | None = None) -> None:
        self.backend = backend
        self.spec = spec
        self.spec_for = spec_for
        self.size = size
        self.max_idle_s = max_idle_s
        self._ready: deque[_Ready] = deque()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def fill(self) -> None:
        """Create sandboxes until ``size`` are ready (blocking)."""
        while not self._closed and len(self._ready) < self.size:
            self._add_one()

    def _add_one(self) -> None:
        name = f"{POOLED_PREFIX}{secrets.token_hex(6)}"
        spec = self.spec if self.spec_for is None else self.spec_for(name)
        self.backend.create(name, spec, extra_labels={LABEL_POOL: "1"}, extra_ttl_s=self.max_idle_s)
        self.backend.warm(name)
        with self._lock:
            if self._closed:
                self.backend.remove(name)
                return
            self._ready.append(_Ready(name, time.monotonic()))

    def _take(self) -> str | None:
        with self._lock:
            while self._ready:
                ready = self._ready.popleft()
                if time.monotonic() - ready.born < self.max_idle_s:
                    return ready.name
                self.backend.remove(ready.name)
        return None

    def ready_count(self) -> int:
        with self._lock:
            return len(self._ready)

    def take_ready(self, name: str) -> tuple[str, SandboxInfo] | None:
        """A ready sandbox renamed to ``name`` with its pooled name, or None when none is ready (nothing
        is created then); refills in the background either way."""
        taken = self._take()
        self._refill_async()
        if taken is None:
            return None
        return taken, self._hand_out(taken, name)

    def acquire(self, name: str) -> SandboxInfo:
        """A running sandbox named ``name``: from the pool when one is ready, else created now."""
        taken = self._take()
        self._refill_async()
        if taken is None:
            return self.backend.create(name, self.spec)
        return self._hand_out(taken, name)

    def _hand_out(self, taken: str, name: str) -> SandboxInfo:
        self.backend.rename(taken, name)
        info = self.backend.ready(name) or self.backend.get(name)  # its session knows it: no inspect
        if info is None:
            msg = f"The pooled sandbox for {name!r} vanished while it was handed out."
            raise SandboxNotFound(msg, hint="retry the acquire", details={"name": name})
        return info

    def _refill_async(self) -> None:
        thread = threading.Thread(target=self.fill, name="canal-pool-refill", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def close(self) -> None:
        """Stop refilling, wait for refills in flight, remove every pooled sandbox."""
        with self._lock:
            self._closed = True
        for thread in self._threads:
            thread.join()
        with self._lock:
            names = [r.name for r in self._ready]
            self._ready.clear()
        for name in names:
            self.backend.remove(name)
