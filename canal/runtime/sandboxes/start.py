"""The project's sandboxes: names, the spec made from canal.yaml, and starting one on demand.

A project's sandbox ``NAME`` is the container ``canal-<project key>-<NAME>``; it mounts the project at
/workspace (as configured) and its own output folder read-only at /canal/output.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from canal.core.next import act
from canal.host.paths import DEFAULT_SANDBOX as DEFAULT_SANDBOX  # re-exported: the CLI and api use it
from canal.host.paths import project_key
from canal.runtime.errors import SANDBOX_LIMIT_REACHED, STATE_DIR_UNUSABLE, ConfigError
from canal.runtime.sandboxes.gitguard import guard_env
from canal.runtime.sandboxes.images import ensure_project_image
from canal.runtime.services import Services
from canal.runtime.settings.mounts import check_user_mounts
from canal.runtime.trust.snapshot import settings_files
from canal.sandbox.backend import SandboxBackend, SandboxInfo
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.errors import ImageNotFound, SandboxExists
from canal.sandbox.images import DEFAULT_IMAGE, EGRESS_IMAGE, BuildEvent
from canal.sandbox.spec import Mount, SandboxSpec

if TYPE_CHECKING:
    from canal.runtime.sandboxes.pooling import Pools

OUTPUT_MOUNT = "/canal/output"
LOCKS = "locks"  # in the state folder: one lock file per sandbox, for starting it
PROJECT_LOCK = "project.lock"  # in LOCKS: counting the project's sandboxes and starting one more
AUTO_USER = "auto"
HOME = "/home/agent"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$")
# which folder a sandbox's workspace mount was made from (device and inode): a bind mount keeps the
# folder it was made from, so a project folder deleted and made again would leave it on the old one
LABEL_WORKSPACE = "canal.workspace-folder"


@dataclass(frozen=True)
class SandboxRef:
    """A project-level sandbox name and the container it maps to."""

    name: str
    container: str
    workspace: str | None = None  # rw | ro | none instead of canal.yaml's (an MCP server's sandbox)


def sandbox_ref(project_dir: Path, name: str) -> SandboxRef:
    if not _NAME.match(name):
        msg = f"Bad sandbox name {name!r}: use letters, digits, '_', '.', '-' (at most 41 characters)."
        raise ConfigError(msg, next=act("up", sandbox="default"))
    return SandboxRef(name, f"canal-{project_key(project_dir)}-{name}")


def sandbox_spec(services: Services, ref: SandboxRef) -> SandboxSpec:
    """canal.yaml's sandbox section plus the workspace and output mounts, checked against host state."""
    config = services.config
    base = config.sandbox
    # the configured mounts: from the project or a listed root, never system, engine, Canal or credentials
    check_user_mounts(base.mounts, services.project_dir, config.mount_roots, services.state_dir)
    mounts = list(base.mounts)
    workspace = ref.workspace or config.workspace
    if workspace != "none":
        _state_outside(services)
        if services.is_fork(ref.name):  # the fork's copy-on-write view; the project itself is not mounted
            source = services.forks.ensure_mounted(ref.name)
            mounts.append(Mount(source=source, target=base.workdir, read_only=False))
        else:
            mounts.append(Mount(source=services.project_dir, target=base.workdir,
                                read_only=workspace == "ro"))
            made_from = {LABEL_WORKSPACE: folder_identity(services.project_dir)}
            base = base.model_copy(update={"labels": {**base.labels, **made_from}})
        mounts += settings_mounts(services.project_dir, base.workdir)
    out = services.outputs_dir(ref.name)
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    user = sandbox_user(services)
    if os.geteuid() == 0:
        # the sandbox user must traverse its own output folder; the files in it stay 0600
        os.chown(out, *uid_gid(user))
    mounts.append(Mount(source=out, target=OUTPUT_MOUNT, read_only=True))
    # a uid missing from the image's passwd would get HOME=/; git's fixed overrides hold for every
    # process (the pipeline adds the per-repository ones to each command)
    env = {"HOME": HOME, **base.env, **guard_env(None, base.workdir)}
    return base.model_copy(update={"mounts": tuple(mounts), "user": user, "env": env})


def folder_identity(folder: Path) -> str:
    info = folder.stat()
    return f"{info.st_dev}:{info.st_ino}"


def replaced_workspace(services: Services, info: SandboxInfo) -> str | None:
    """A notice when ``info``'s workspace mount was made from a folder that is no longer the project
    folder (deleted and made again, or replaced by a move), else None."""
    made = info.labels.get(LABEL_WORKSPACE)
    try:
        now = folder_identity(services.project_dir)
    except OSError:
        return None  # no project folder: what runs next says so
    if made is None or made == now:
        return None
    name = info.name.removeprefix(f"canal-{project_key(services.project_dir)}-")
    return (f"the project folder {services.project_dir} was replaced since sandbox {name} started (it "
            "still saw the old folder); it was started again on the folder as it is now, with a new shell "
            "session")


def settings_mounts(project_dir: Path, workdir: str) -> list[Mount]:
    """canal.yaml and the policy files inside the project, bound read-only over themselves: the
    sandbox can read its rules but not rewrite, replace or delete them (a mount point cannot be
    renamed or unlinked). Only regular files that exist now; a symlink is never bound."""
    mounts = []
    for rel in settings_files(project_dir):
        source = project_dir.joinpath(*rel.parts)
        if source.is_file() and not source.is_symlink():
            target = str(PurePosixPath(workdir, *rel.parts))
            mounts.append(Mount(source=source, target=target, read_only=True))
    return mounts


def _state_outside(services: Services) -> None:
    """The workspace mount must not carry Canal's host state or keys into the sandbox."""
    for what, folder in (("state", services.state_dir), ("config and keys", services.config_dir)):
        if folder.resolve().is_relative_to(services.project_dir):
            msg = (f"Canal's {what} folder {folder} is inside the project {services.project_dir}, "
                   "which the sandbox mounts at /workspace; nothing was started.")
            variable = "CANAL_STATE_DIR" if what == "state" else "CANAL_CONFIG_DIR"
            hint = f"export {variable}=<a folder outside the project> (or unset it)"
            if services.project_dir == Path.home().resolve():
                hint = ("your home folder is not a project: cd into your project's folder (canal init there "
                        "makes it one), or name it: canal -C DIR ...")
            raise STATE_DIR_UNUSABLE(msg, hint=hint,
                                details={"folder": str(folder), "project": str(services.project_dir)})


def sandbox_user(services: Services) -> str:
    """canal.yaml's sandbox.user; ``auto`` is the project folder's owner, so the sandbox can write the
    workspace as its owner would. For a root-owned project that is uid 0 inside the container, with
    every capability dropped, no-new-privileges and a read-only root: it owns the workspace's files
    and nothing else (no chown, mknod, mount, or reading others' files). Without a user namespace it
    is still uid 0 on the host's kernel: use runtime runsc (gVisor) for agents you do not trust."""
    user = services.config.sandbox.user
    if user != AUTO_USER:
        return user
    info = services.project_dir.stat()
    return f"{info.st_uid}:{info.st_gid}"


def uid_gid(user: str) -> tuple[int, int]:
    name, _, group = user.partition(":")
    uid = int(name) if name.isdigit() else 1000
    gid = int(group) if group.isdigit() else uid
    return uid, gid


_creating: dict[str, threading.Lock] = {}
_creating_guard = threading.Lock()


def ensure_sandbox(services: Services, backend: SandboxBackend, ref: SandboxRef,
                   on_event: Callable[[BuildEvent], None] | None = None,
                   notices: list[str] | None = None) -> SandboxInfo:
    """The running sandbox for ``ref``, created (and the default image built) when missing, or made
    again when its workspace is a project folder since replaced (``notices`` gets why).

    Calls for one sandbox take turns in this process (a server serving two clients at once), so the
    second finds the sandbox the first one made instead of failing to create it again."""
    with _turn(services, ref):
        # one whose session is up (made by ``make_new`` while this call waited its turn): no engine call
        known = backend.ready(ref.container) or backend.get(ref.container)
        return _ensure(services, backend, ref, on_event, notices, known)


def make_new(services: Services, backend: SandboxBackend, ref: SandboxRef,
             on_event: Callable[[BuildEvent], None] | None = None) -> bool:
    """Make and start ``ref``'s sandbox and its session when none of its name exists (True); one that
    exists, running, stopped or on a replaced folder, is left as it is (False: ``ensure_sandbox`` says
    why it makes it again). Takes turns with ``ensure_sandbox``, which then finds the session up."""
    with _turn(services, ref):
        if backend.get(ref.container) is not None:
            return False
        _ensure(services, backend, ref, on_event, None, None)
        backend.warm(ref.container)
        return True


@contextlib.contextmanager
def _turn(services: Services, ref: SandboxRef) -> Iterator[None]:
    with _creating_guard:
        lock = _creating.setdefault(ref.container, threading.Lock())
    with lock, _across_processes(services.state_dir / LOCKS / f"{ref.container}.lock"):
        yield


@contextlib.contextmanager
def _across_processes(path: Path) -> Iterator[None]:
    """Processes starting one sandbox take turns too (eight harness processes on a fresh project):
    an flock on a file in the host state folder, released when the holder ends, however it ends."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _ensure(services: Services, backend: SandboxBackend, ref: SandboxRef,
            on_event: Callable[[BuildEvent], None] | None, notices: list[str] | None,
            info: SandboxInfo | None) -> SandboxInfo:
    replaced = replaced_workspace(services, info) if info is not None else None
    if info is not None and info.running and replaced is None:
        return info
    if replaced is not None and notices is not None:
        notices.append(replaced)
    if info is not None:
        backend.remove(ref.container)
    spec = sandbox_spec(services, ref)
    if spec.network.mode == "allowlist":
        services.egress.collect(backend)  # a dead proxy replaced now takes its unread lines with it
        backend.ensure_image(EGRESS_IMAGE, on_event=on_event)  # the proxy's, built (or rebuilt) when needed
    built = ensure_project_image(services, on_event)
    if built is not None:
        spec = spec.model_copy(update={"image": built.tag})
    with _across_processes(services.state_dir / LOCKS / PROJECT_LOCK):
        check_sandbox_limit(services, backend, ref)
        return _start(services, backend, ref, spec, on_event)


def running_sandboxes(services: Services, backend: SandboxBackend) -> list[str]:
    """The names of the project's running sandboxes (forks included), as ``canal ps`` lists them."""
    prefix = f"canal-{project_key(services.project_dir)}-"
    # by name: a sandbox a warm pool handed out carries the pool's owner label, not the project's
    found = backend.list(all_owners=True, name_prefix=prefix)
    return sorted(info.name.removeprefix(prefix) for info in found if info.running)


def check_sandbox_limit(services: Services, backend: SandboxBackend, ref: SandboxRef) -> None:
    """``SANDBOX_LIMIT_REACHED`` when starting ``ref`` would pass canal.yaml's limits.sandboxes."""
    limit = services.config.limits.sandboxes
    running = [name for name in running_sandboxes(services, backend) if name != ref.name]
    if len(running) < limit:
        return
    msg = (f"Project {services.project_dir} already runs {len(running)} sandbox(es) ({', '.join(running)}), "
           f"the most canal.yaml's limits.sandboxes allows ({limit}). Sandbox {ref.name} was not started.")
    raise SANDBOX_LIMIT_REACHED(msg, hint="use one of them, or remove one no longer needed",
                       next=[act("ps"), act("down", sandbox="NAME")],
                       details={"sandbox": ref.name, "limit": limit, "running": running})


def _start(services: Services, backend: SandboxBackend, ref: SandboxRef, spec: SandboxSpec,
           on_event: Callable[[BuildEvent], None] | None) -> SandboxInfo:
    pools = _pools(services, backend, spec)
    if pools is not None and isinstance(backend, DockerBackend):
        pooled = pools.take(spec, ref.container, services.outputs_dir(ref.name), backend)
        if pooled is not None:
            return pooled
    info = _create(backend, ref, spec, on_event)
    if pools is not None:  # the next project with this spec starts from a sandbox made ahead
        pools.remember(spec, uid_gid(spec.user) if os.geteuid() == 0 else None)
    return info


def _pools(services: Services, backend: SandboxBackend, spec: SandboxSpec) -> Pools | None:
    """The warm pools of the Canal's resources (the server's; in-process use has none), for a Docker
    backend and a spec one can serve. Not for another spec: made the first time, they cost a Docker
    client and a sweep (0.1 s of a new project's first command, for nothing when its spec mounts the
    project)."""
    from canal.runtime.sandboxes.pooling import pool_key  # it imports this module

    if not isinstance(backend, DockerBackend) or pool_key(spec) is None:
        return None
    return services.resources.pools()


def _create(backend: SandboxBackend, ref: SandboxRef, spec: SandboxSpec,
            on_event: Callable[[BuildEvent], None] | None) -> SandboxInfo:
    try:
        return _create_once(backend, ref, spec)
    except ImageNotFound:
        if spec.image != DEFAULT_IMAGE:
            raise
    # first run on this machine: build the default image (with progress), then create
    backend.ensure_image(DEFAULT_IMAGE, on_event=on_event)
    return _create_once(backend, ref, spec)


def _create_once(backend: SandboxBackend, ref: SandboxRef, spec: SandboxSpec) -> SandboxInfo:
    """Create the sandbox; one that another process made meanwhile (outside our lock: another state
    folder for the same project) is used as it is when it runs."""
    try:
        return backend.create(ref.container, spec)
    except SandboxExists:
        info = backend.get(ref.container)
        if info is None or not info.running:
            raise
        return info
