"""What a ``Canal`` builds once and uses again, passed in: ``Canal(project, resources=...)``.

Compiled policies (keyed by profile and the digest of the rule files' approved text: another text, and
the next call compiles it again), one sandbox backend per project, the projects' checkpoint stores and
background task managers, the warm pools, and when the audit log's records reach the disk. What differs
between in-process and server use is which of these two sets a ``Canal`` is given; nothing asks a
global which process it runs in:

- ``Owned`` (a ``Canal`` given none makes its own, and closes it with itself): in-process use. Its
  backend, sessions and background tasks end with the object ("closed"); each checkpoint store is
  built plainly; every audit record is on disk when the object closes.
- ``Shared``: the server builds one and gives it to every ``Canal`` it makes (the kept ones of the API,
  the CLI it runs, the web console), so every front door reaches the same sandbox session: its working
  directory and exported variables are the same whichever door a command came through. It outlives
  each of them (``lasting``): background tasks and consoles live on as its residents, each project's
  checkpoint store watches the workspace, the warm pools hand out sandboxes made ahead, and outcome
  records are put on disk by a group commit. It is closed when the server stops ("server_stopped").

Commands on one sandbox are serialised by the backend (one shell, one command at a time); different
sandboxes run in parallel.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

if TYPE_CHECKING:
    from canal.host.checkpoints import CheckpointStore
    from canal.policy.engine import Policy
    from canal.runtime.sandboxes.pooling import Pools
    from canal.sandbox.backend import SandboxBackend

PolicyKey = tuple[object, ...]
log = logging.getLogger("canal.server")


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
    """Something a set of resources keeps until it closes (a project's background tasks, a console):
    it keeps the server from stopping when idle while ``busy``, and is closed before the backends, with
    the reason its work ends (``Resources.ENDING``)."""

    def busy(self) -> bool: ...

    def close(self, why: str) -> object: ...


SYNC_EVERY_S = 1.0
K = TypeVar("K")
V = TypeVar("V")


class Resources:
    """What both sets keep by key until ``close``: compiled policies, backends, residents."""

    lasting: ClassVar[bool] = False  # outlives the Canals given it: their tasks and consoles live on
    ENDING: ClassVar[str] = "closed"  # why the residents' work ends when this closes

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._policies: dict[PolicyKey, Policy] = {}
        self._backends: dict[tuple[object, ...], SandboxBackend] = {}
        self._stores: dict[tuple[object, ...], CheckpointStore] = {}
        self._residents: dict[tuple[object, ...], Resident] = {}

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

    def resident(self, key: tuple[object, ...], build: Callable[[], Resident]) -> Resident:
        return self._kept(self._residents, key, build)

    def checkpoints(self, key: tuple[object, ...],
                    build: Callable[[bool], CheckpointStore]) -> CheckpointStore:
        """A project's checkpoint store; ``build(watch)`` makes one."""
        return build(False)

    def pools(self) -> Pools | None:
        """The warm pools (None: sandboxes are made on demand)."""
        return None

    def commit(self, log: Syncable) -> None:
        """Put ``log``'s records written without their own fsync on disk (a Canal closing)."""
        log.sync()

    def busy(self) -> bool:
        """True while a resident has work running (a background task): the server must not idle out."""
        with self._lock:
            residents = list(self._residents.values())
        return any(r.busy() for r in residents)

    def close(self) -> None:
        """Close what this set keeps: residents first (tasks end and are recorded before their sandboxes'
        sessions close), then backends and checkpoint stores. Closing twice is harmless."""
        with self._lock:
            residents = list(self._residents.values())
            self._residents.clear()
        for resident in residents:
            try:
                resident.close(self.ENDING)
            except Exception:
                log.exception("closing %r failed", resident)
        self._closing()
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

    def _closing(self) -> None:
        """What a set closes between its residents and its backends."""

    def status(self) -> dict[str, Any]:
        with self._lock:
            data: dict[str, Any] = {"policies": len(self._policies), "backends": len(self._backends),
                                    "checkpoint_stores": len(self._stores)}
            residents = list(self._residents.values())
        data["busy"] = any(r.busy() for r in residents)
        return data

    def __enter__(self) -> Resources:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Owned(Resources):
    """One ``Canal``'s own (in-process use): made by the ``Canal`` given none, and closed with it."""


class Shared(Resources):
    """The server's: given to every ``Canal`` it makes, closed when it stops. ``pool_owner``: the name of
    its warm pools' sandboxes (None: no pools)."""

    lasting = True
    ENDING = "server_stopped"

    def __init__(self, pool_owner: str | None = None) -> None:
        super().__init__()
        self.pool_owner = pool_owner
        self._pools: Pools | None = None
        self._unsynced: list[Syncable] = []
        self._flusher: threading.Thread | None = None
        self._closed = threading.Event()

    def checkpoints(self, key: tuple[object, ...],
                    build: Callable[[bool], CheckpointStore]) -> CheckpointStore:
        """One store per project (and settings and keys), watching the workspace: its stat cache and its
        watch live as long as the server, so "nothing changed" costs no walk."""
        return self._kept(self._stores, key, lambda: build(True))

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

    def commit(self, log: Syncable) -> None:
        """Within ``SYNC_EVERY_S`` (group commit): a call's outcome record costs no fsync of its own, and
        the next intent's fsync usually covers it first."""
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
        for log_ in pending:
            try:
                log_.sync()
            except Exception:  # the next durable append syncs the file anyway; never kill the flusher
                log.exception("syncing an audit log failed")

    def _closing(self) -> None:
        self._closed.set()
        self.flush()
        if self._pools is not None:
            self._pools.close()

    def status(self) -> dict[str, Any]:
        data = super().status()
        pools = self._pools
        return data if pools is None else {**data, **pools.status()}
