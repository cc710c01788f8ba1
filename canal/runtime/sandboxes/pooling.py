"""The server's warm pools: sandboxes made ahead, handed to a project at its first command.

Docker fixes a container's mounts when it is made, so a sandbox can be made ahead only for a spec that
mounts nothing of a particular project: ``workspace: none`` and no mounts of its own (and no egress
allowlist: its proxy is the project's). Such a spec has one
mount per sandbox, its output folder; the pool makes that folder in its own directory and, when it hands
the sandbox out, moves the folder into the project's state (a rename on the same filesystem: the
container's mount follows the folder) and the sandbox's running session to the project's backend.

A pool is kept per spec (image, limits, user, network...). The server starts one for each such spec it
creates a sandbox for, and fills it in the background, so the next new project with that spec starts in
a few milliseconds instead of a ``docker run``. Pooled sandboxes carry ``canal.pool=1`` and the pool's
owner; ``close()`` removes those not handed out, and a new server removes what a crashed one left (by
their pool names: one handed out carries its project's name and counts as the project's,
``canal.sandbox.backend.handed_to``, since Docker cannot change a container's labels).
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from canal.runtime.sandboxes.start import OUTPUT_MOUNT
from canal.sandbox.backend import LABEL_POOL, SandboxInfo, is_pooled_name
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.pool import WarmPool
from canal.sandbox.spec import Mount, SandboxSpec

log = logging.getLogger("canal.server")
POOL_OWNER = "canal-pool"
POOL_SIZE = 1
MAX_POOLS = 4


def pool_key(spec: SandboxSpec) -> SandboxSpec | None:
    """``spec`` without its output mount, or None when it cannot be made ahead: it mounts anything else,
    or its network is an egress allowlist (whose proxy belongs to the project's backend)."""
    others = [m for m in spec.mounts if m.target != OUTPUT_MOUNT]
    if others or spec.network.mode == "allowlist":
        return None
    return spec.model_copy(update={"mounts": ()})


class Pools:
    def __init__(self, backend: DockerBackend, root: Path, *, size: int = POOL_SIZE) -> None:
        self.backend = backend
        self.root = root
        self.size = size
        self._pools: dict[str, WarmPool] = {}
        self._lock = threading.Lock()

    def sweep_leftovers(self) -> list[str]:
        """Remove pooled sandboxes (and output folders) a stopped or crashed server left behind."""
        gone = []
        for info in self.backend.list():  # a sandbox it handed out is a project's now: left alone
            if info.labels.get(LABEL_POOL) == "1" and is_pooled_name(info.name):
                self.backend.remove(info.name)
                gone.append(info.name)
        shutil.rmtree(self.root, ignore_errors=True)
        return gone

    def _slot_spec(self, base: SandboxSpec, uid_gid: tuple[int, int] | None) -> Callable[[str], SandboxSpec]:
        def spec_for(name: str) -> SandboxSpec:
            out = self.root / name
            out.mkdir(mode=0o700, parents=True, exist_ok=True)
            if uid_gid is not None:
                os.chown(out, *uid_gid)
            mount = Mount(source=out, target=OUTPUT_MOUNT, read_only=True)
            return base.model_copy(update={"mounts": (mount,)})

        return spec_for

    def remember(self, spec: SandboxSpec, uid_gid: tuple[int, int] | None) -> None:
        """Keep a pool for ``spec`` from now on, filled in the background (if it can be made ahead)."""
        key = pool_key(spec)
        if key is None:
            return
        ident = key.model_dump_json()
        with self._lock:
            if ident in self._pools or len(self._pools) >= MAX_POOLS:
                return
            pool = self._pools[ident] = WarmPool(self.backend, key, size=self.size,
                                                  spec_for=self._slot_spec(key, uid_gid))
        threading.Thread(target=self._fill, args=(pool,), name="canal-pool-fill", daemon=True).start()

    @staticmethod
    def _fill(pool: WarmPool) -> None:
        try:
            pool.fill()
        except Exception:
            log.exception("filling a warm pool failed (sandboxes are made on demand meanwhile)")

    def take(self, spec: SandboxSpec, name: str, outputs: Path, project: DockerBackend) -> SandboxInfo | None:
        """A running sandbox named ``name`` for ``spec``, with its session, moved to ``project``'s
        backend and its output folder at ``outputs``; None when no ready one fits."""
        key = pool_key(spec)
        if key is None:
            return None
        with self._lock:
            pool = self._pools.get(key.model_dump_json())
        taken = None if pool is None else pool.take_ready(name)
        if taken is None:
            return None
        pooled, info = taken
        try:
            if outputs.exists():
                outputs.rmdir()  # made empty by sandbox_spec; the pooled sandbox's folder takes its place
            os.rename(self.root / pooled, outputs)
        except OSError as exc:
            log.warning("could not move %s's output folder into place (%s): not using it", pooled, exc)
            self.backend.remove(name)
            return None
        project.adopt(name, self.backend)
        return info

    def close(self) -> None:
        with self._lock:
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def status(self) -> dict[str, int]:
        with self._lock:
            ready = sum(p.ready_count() for p in self._pools.values())
            return {"pools": len(self._pools), "pooled_ready": ready}
