"""Warm state shared by every ``Canal`` of a long-lived process (the server installs one).

Compiled policies (keyed by profile and the digest of the rule files' approved text: another text, and
the next call compiles it again) and one backend per project, so every front door (the CLI, MCP, the
Python API through the server) reaches the same sandbox session: its working directory and exported
variables are the same whichever door a command came through. Commands on one sandbox are serialised by
the backend (one shell, one command at a time); different sandboxes run in parallel.

Without an installed ``Warm`` (in-process use) each ``Canal`` owns its policy and backend, as before.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from canal.policy.engine import Policy
from canal.sandbox.backend import SandboxBackend

if TYPE_CHECKING:
    from canal.host.checkpoints import CheckpointStore
    from canal.runtime.sandboxes.pooling import Pools

PolicyKey = tuple[object, ...]


def policy_key(profile: str, texts: Mapping[Path, str]) -> PolicyKey:
    """The profile and each rule file's path and the digest of the text it is compiled from: another
    text is another key (never a file's modification time: the text is what was approved).

    Nothing of the project beyond its rule files: projects with the same rules share one compiled
    policy (a new project's first call compiles nothing; its examples already passed in this process)."""
    return (profile, tuple((str(path), hashlib.sha256(text.encode()).hexdigest())
                           for path, text in texts.items()))


class Syncable(Protocol):
    def sync(self) -> None: ...


class Resident(Protocol):
    """Something that lives as long as the server (a project's background tasks): it keeps the server
    from stopping when idle while ``busy``, and is closed before the backends."""

    def busy(self) -> bool: ...

    def close(self) -> object: ...


SYNC_EVERY_S = 1.0
K = TypeVar("K")
V = TypeVar("V")


class Warm:
    def __init__(self, pool_owner: str | None = None) -> None:
        self.pool_owner = pool_owner  # None: no warm pools
        self._pools: Pools | None = None
        self._lock = threading.Lock()
        self._policies: dict[PolicyKey, Policy] = {}
        self._backends: dict[tuple[object, ...], SandboxBackend] = {}
        self._stores: dict[tuple[object, ...], CheckpointStore] = {}
        self._residents: dict[tuple[object, ...], Resident] = {}
        self._unsynced: list[Syncable] = []
        self._flusher: threading.Thread | None = None
        self._closed = threading.Event()

    def sync_later(self, log: Syncable) -> None:
        """Put ``log``'s unsynced records on disk within ``SYNC_EVERY_S`` (group commit): a call's
        outcome record costs no fsync of its own, and the next intent's fsync usually covers it first."""
        with self._lock:
            self._unsynced.append(log)
            if self._flusher is None:
                self._flusher = threading.Thread(target=self._flush_loop, name="canal-audit-sync",
                                                 daemon=True)
                self._flusher.start()

    def _flush_loop(self) -> None:
        while not self._closed.wait(SYNC_EVERY_S):
            self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._unsynced = self._unsynced, []
        for log in pending:
            try:
                log.sync()
            except Exception:  # the next durable append syncs the file anyway; never kill the flusher
                logging.getLogger("canal.server").exception("syncing an audit log failed")

    def _kept(self, kept: dict[K, V], key: K, build: Callable[[], V]) -> V:
        """``kept[key]``, built once (under the lock: two requests never build the same thing twice)."""
        with self._lock:
            found = kept.get(key)
            if found is None:
                found = kept[key] = build()
            return found

    def policy(self, key: PolicyKey, build: Callable[[], Policy]) -> Policy:
        return self._kept(self._policies, key, build)

    def backend(self, key: tuple[object, ...], build: Callable[[], SandboxBackend]) -> SandboxBackend:
        return self._kept(self._backends, key, build)

    def checkpoints(self, key: tuple[object, ...], build: Callable[[], CheckpointStore]) -> CheckpointStore:
        """One checkpoint store per project (and settings and keys): its stat cache and its workspace
        watch live as long as the server, so "nothing changed" costs no walk."""
        return self._kept(self._stores, key, build)

    def pools(self) -> Pools | None:
        """The warm pools (made on first use: a Docker client, and leftovers of a crashed server removed)."""
        if self.pool_owner is None:
            return None
        with self._lock:
            if self._pools is None:
                from canal.host.paths import config_dir, data_root
                from canal.runtime.sandboxes.pooling import Pools
                from canal.sandbox.docker.backend import DockerBackend
                from canal.sandbox.docker.engine import docker_client

                backend = DockerBackend(docker_client(), owner=self.pool_owner,
                                        protected_paths=(config_dir(),))
                self._pools = Pools(backend, data_root() / "pool" / self.pool_owner)
                self._pools.sweep_leftovers()
            return self._pools

    def resident(self, key: tuple[object, ...], build: Callable[[], Resident]) -> Resident:
        return self._kept(self._residents, key, build)

    def busy(self) -> bool:
        """True while a resident has work running (a background task): the server must not idle out."""
        with self._lock:
            residents = list(self._residents.values())
        return any(r.busy() for r in residents)

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            residents = list(self._residents.values())
            self._residents.clear()
        for resident in residents:  # tasks end (and are recorded) before their sandboxes' sessions close
            try:
                resident.close()
            except Exception:
                logging.getLogger("canal.server").exception("closing %r failed", resident)
        self.flush()
        if self._pools is not None:
            self._pools.close()
        with self._lock:
            backends = list(self._backends.values())
            stores = list(self._stores.values())
            self._backends.clear()
            self._stores.clear()
            self._policies.clear()
        for backend in backends:
            backend.close()
        for store in stores:
            store.close()

    def status(self) -> dict[str, Any]:
        with self._lock:
            data: dict[str, Any] = {"policies": len(self._policies), "backends": len(self._backends),
                                    "checkpoint_stores": len(self._stores)}
            pools = self._pools
            residents = list(self._residents.values())
        data["busy"] = any(r.busy() for r in residents)
        return data if pools is None else {**data, **pools.status()}


_installed: Warm | None = None


def install(warm: Warm | None) -> None:
    global _installed
    _installed = warm


def installed() -> Warm | None:
    return _installed
