"""The Docker implementation of ``SandboxBackend``: hardened containers, one persistent session each."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container

from canal.core.next import act
from canal.sandbox.backend import (
    LABEL_OWNER,
    LABEL_POOL,
    LABEL_QUOTA,
    LABEL_SANDBOX,
    MAX_TRANSFER_BYTES,
    OUTPUT_MEMORY_CAP,
    SandboxInfo,
    check_name,
    handed_to,
)
from canal.sandbox.docker.agent_program import AGENT_SOURCE
from canal.sandbox.docker.background import Background, Relay, StreamSink, TaskSink, TaskSpec
from canal.sandbox.docker.egress import EgressProxies
from canal.sandbox.docker.errors import translating
from canal.sandbox.docker.image import build_default_image, build_egress_image
from canal.sandbox.docker.image_gc import prune_images
from canal.sandbox.docker.info import info_of
from canal.sandbox.docker.session import (
    MAX_STDIN,
    OnOutput,
    Reader,
    Request,
    Session,
    command_deadline,
)
from canal.sandbox.docker.spec import canal_labels, run_kwargs
from canal.sandbox.docker.stdio import StdioChannel
from canal.sandbox.egress_squid import EgressRead, ProxyState
from canal.sandbox.egress_upstream import upstream
from canal.sandbox.errors import (
    FILE_TRANSFER_REFUSED,
    TASK_START_FAILED,
    EngineError,
    ImageNotFound,
    SandboxError,
    SandboxNotFound,
    SandboxNotRunning,
)
from canal.sandbox.files import pack, unpack
from canal.sandbox.images import DEFAULT_IMAGE, EGRESS_IMAGE, BuildEvent, BuiltImage, Progress, PrunedImage
from canal.sandbox.outcome import KILLED_EXIT, Call, to_result
from canal.sandbox.protocol import RunReply, SessionBroken, SpawnSpec, WorkspaceQuota, run_command
from canal.sandbox.result import EndReason, ExecResult, SessionState
from canal.sandbox.runtimes import candidates, engine_runtime, runtime_failure
from canal.sandbox.spec import SandboxSpec, check_mounts
from canal.sandbox.spool import Spool


@dataclass
class _Handle:
    """What the backend keeps per running sandbox: its session and the lock that serializes commands."""

    container_id: str
    user: str
    workdir: str
    init: bool
    memory: int | None
    info: SandboxInfo | None = None  # as inspected when the handle was made
    quota: WorkspaceQuota | None = None  # the bind-mounted workspace's quota
    lock: threading.Lock = field(default_factory=threading.Lock)
    session: Session | None = None
    background: Background | None = None  # tasks and relayed connections, beside the session
    bg_lock: threading.Lock = field(default_factory=threading.Lock)

    def spare(self) -> tuple[int, int] | None:
        """The background agent whose tree the session's sweeps leave alone, when there is one."""
        bg = self.background
        return None if bg is None else bg.identity

    def marks(self) -> tuple[str, ...]:
        """Its running tasks' markers: their processes outside its tree are spared too (gVisor)."""
        bg = self.background
        return () if bg is None else tuple(bg.marks())


def _handle_of(container: Container) -> _Handle:
    """A running sandbox's handle, from its inspection."""
    attrs: dict[str, Any] = container.attrs
    config, host = attrs["Config"], attrs["HostConfig"]
    return _Handle(container.id, user=config.get("User") or "0", workdir=config.get("WorkingDir") or "/",
                   init=bool(host.get("Init")), memory=host.get("Memory") or None, info=info_of(container),
                   quota=_quota(config.get("Labels") or {}, config.get("WorkingDir") or "/"))


class DockerBackend:
    """Sandboxes as Docker containers labelled ``canal.owner=<owner>``."""

    def __init__(self, client: docker.DockerClient, *, owner: str = "canal",
                 protected_paths: Sequence[Path] = (), output_cap: int = OUTPUT_MEMORY_CAP,
                 egress_image: str = EGRESS_IMAGE, spool_limit: int | None = None) -> None:
        self.client = client
        self.egress_image = egress_image
        self.owner = owner
        self.protected_paths = tuple(protected_paths)
        self.output_cap = output_cap
        self.spool_limit = spool_limit  # bytes a spooled stream keeps (head and tail); None: all
        self._handles: dict[str, _Handle] = {}
        self._guard = threading.Lock()
        self._runtimes: list[str] | None = None

    # lifecycle -------------------------------------------------------------------------------
    def create(self, name: str, spec: SandboxSpec, *, extra_labels: Mapping[str, str] | None = None,
               extra_ttl_s: int = 0) -> SandboxInfo:
        check_name(name)
        check_mounts(spec, self.protected_paths)
        runtime = self._engine_runtime(spec)
        labels = {**canal_labels(spec, owner=self.owner, name=name, extra_ttl_s=extra_ttl_s),
                  **(extra_labels or {})}
        route = None
        if spec.network.mode == "allowlist":  # EGRESS_PROXY_FAILED stops here: never a wider network
            gateway = upstream(spec.network.upstream_proxy, forbidden=[m.source for m in spec.mounts])
            route = self.egress.ensure(spec.network.allow, gateway)
        try:
            with translating("create", name=name):
                # create, then start (containers.run would pull a missing image, and no registry may be
                # reachable: create raises ImageNotFound instead)
                container = self.client.containers.create(**run_kwargs(spec, name=name, labels=labels,
                                                                       runtime=runtime, route=route))
                container.start()
                container.reload()
        except EngineError as exc:
            self._discard_unstarted(name)
            self._installed_runtime(spec)  # RUNTIME_UNKNOWN when the engine has no such runtime
            raise runtime_failure(exc, runtime) from exc
        self._drop(name)  # a session of an earlier sandbox of this name (removed behind our back) is stale
        handle = _handle_of(container)
        if container.status == "running":  # its session starts without inspecting it again
            with self._guard:
                self._handles[name] = handle
        assert handle.info is not None
        return handle.info

    def _engine_runtime(self, spec: SandboxSpec) -> str:
        """The engine's registration for the spec's runtime. One with a single name (runc, or any but
        gVisor) is asked for by that name without reading the engine's list first (docker info, 20-40
        ms of a new sandbox): an engine without it refuses the create, then ``_installed_runtime`` says
        why; never another runtime instead."""
        wanted = candidates(spec.runtime, networked=spec.network.mode != "none")
        if self._runtimes is None and len(wanted) == 1:
            return wanted[0]
        return self._installed_runtime(spec)

    def _installed_runtime(self, spec: SandboxSpec) -> str:
        if self._runtimes is None:
            with translating("read the engine's runtimes"):
                self._runtimes = sorted(self.client.info().get("Runtimes", {}))
        return engine_runtime(spec.runtime, networked=spec.network.mode != "none", installed=self._runtimes)

    def _discard_unstarted(self, name: str) -> None:
        """A container the engine created but could not start is removed, not left behind."""
        container = self._container(name)
        if container is not None and container.status == "created":
            with contextlib.suppress(SandboxError), translating("remove", name=name):
                container.remove(force=True, v=True)

    def _container(self, name: str) -> Container | None:
        try:
            with translating("inspect", name=name):
                container = self.client.containers.get(name)
        except SandboxNotFound:
            return None
        labels = container.labels or {}
        return container if LABEL_SANDBOX in labels and LABEL_OWNER in labels else None

    def get(self, name: str) -> SandboxInfo | None:
        container = self._container(name)
        return None if container is None else info_of(container)

    def list(self, *, all_owners: bool = False, name_prefix: str = "") -> list[SandboxInfo]:
        """This owner's sandboxes (those a warm pool handed to it included: ``handed_to``), or every
        owner's; only names starting with ``name_prefix``."""
        label = LABEL_OWNER if all_owners else f"{LABEL_OWNER}={self.owner}"
        found = _listed(self.client, [label, LABEL_SANDBOX], name_prefix)
        if not all_owners:
            prefix = f"{self.owner}-" if f"{self.owner}-".startswith(name_prefix) else name_prefix
            seen = {f.id for f in found}
            found += [i for i in _listed(self.client, [f"{LABEL_POOL}=1", LABEL_SANDBOX], prefix)
                      if handed_to(i.labels, i.name, self.owner) and i.id not in seen]
        return found

    def stop(self, name: str) -> None:
        container = self._require(name)
        self._drop(name)
        with translating("stop", name=name):
            container.stop(timeout=1)

    def remove(self, name: str) -> None:
        self._drop(name)
        container = self._container(name)
        if container is None:
            return
        try:
            with translating("remove", name=name):
                container.remove(force=True, v=True)
        except SandboxNotFound:
            return

    def rename(self, old: str, new: str) -> None:
        """Give a sandbox a new name (the warm pool hands out sandboxes this way); keeps its session."""
        check_name(new)
        container = self._require(old)
        with translating("rename", name=old):
            container.rename(new)
        with self._guard:
            handle = self._handles.pop(old, None)
            if handle is not None:
                if handle.info is not None:
                    handle.info = dataclasses.replace(handle.info, name=new)
                self._handles[new] = handle

    def adopt(self, name: str, other: DockerBackend) -> None:
        """Take over ``other``'s warm session of sandbox ``name`` (a pooled sandbox handed to a project's
        backend keeps the session the pool started)."""
        with other._guard:
            handle = other._handles.pop(name, None)
        if handle is not None:
            with self._guard:
                self._handles[name] = handle

    # egress ---------------------------------------------------------------------------------------
    @property
    def egress(self) -> EgressProxies:
        return EgressProxies(self.client, self.owner, self.egress_image)

    def egress_read(self, cursors: Mapping[str, int]) -> EgressRead:
        return self.egress.read(cursors)

    def egress_prune(self, *, all_owners: bool = False) -> Sequence[str]:
        return self.egress.prune(all_owners=all_owners)

    def egress_states(self) -> Sequence[ProxyState]:
        return self.egress.states()

    def images_prune(self, *, only_label: str | None = None) -> Sequence[PrunedImage]:
        with translating("remove unused images"):
            return prune_images(self.client, only_label=only_label)

    def close(self) -> None:
        for name in list(self._handles):
            self._drop(name)

    def _require(self, name: str) -> Container:
        container = self._container(name)
        if container is None:
            msg = f"No Canal sandbox named {name!r}."
            raise SandboxNotFound(msg, hint="docker ps -a --filter label=canal.sandbox",
                                  details={"name": name})
        return container

    def _drop(self, name: str) -> None:
        with self._guard:
            handle = self._handles.pop(name, None)
        if handle is not None and handle.background is not None:
            handle.background.close("the sandbox's session was closed")
        if handle is not None and handle.session is not None:
            handle.session.close()

    # exec ------------------------------------------------------------------------------------
    def _handle(self, name: str) -> _Handle:
        with self._guard:
            handle = self._handles.get(name)
        if handle is not None:
            return handle
        container = self._require(name)
        if container.status != "running":
            msg = f"Sandbox {name!r} is {container.status}, not running."
            raise SandboxNotRunning(msg, hint=f"docker start {name}", details={"name": name})
        handle = _handle_of(container)
        with self._guard:
            return self._handles.setdefault(name, handle)

    def ensure_image(self, tag: str, *, force: bool = False, on_event: Progress | None = None) -> BuiltImage:
        """Build ``tag`` (the sandbox's or the egress proxy's image) with this backend's engine client."""
        builders = {DEFAULT_IMAGE: build_default_image, EGRESS_IMAGE: build_egress_image}
        if tag not in builders:
            msg = f"{tag} is not one of Canal's images ({', '.join(builders)}); Canal builds only those."
            raise ImageNotFound(msg, hint="build it yourself (docker build -t TAG CONTEXT), then retry",
                                details={"image": tag})
        return builders[tag](self.client, force=force, on_event=on_event or _no_progress)

    def warm(self, name: str) -> None:
        """Start the sandbox's session now so its first command does not pay for it."""
        handle = self._handle(name)
        with handle.lock:
            self._session(handle)

    def ready(self, name: str) -> SandboxInfo | None:
        """The sandbox as last inspected, when its session is up and says nothing is wrong (no engine
        call); None when the engine must be asked (no session yet, or it closed or spoke out of turn)."""
        with self._guard:
            handle = self._handles.get(name)
        if handle is None or handle.info is None or handle.session is None or handle.session.closed:
            return None
        if not handle.lock.acquire(blocking=False):
            return handle.info  # a command is running in it right now: it is there
        try:
            return handle.info if handle.session.alive() else None
        finally:
            handle.lock.release()

    def interrupt(self, name: str, signal: str) -> bool:
        """Kill the command running in ``name`` (its whole process tree); False when none is running."""
        with self._guard:
            handle = self._handles.get(name)
        session = None if handle is None else handle.session
        return session is not None and session.interrupt(signal)

    def _session(self, handle: _Handle) -> Session:
        if handle.session is None or handle.session.closed:
            handle.session = Session(self.client, handle.container_id, user=handle.user,
                                     workdir=handle.workdir, init=handle.init, quota=handle.quota)
        return handle.session

    def session_state(self, name: str) -> SessionState | None:
        """The session's cwd and changed variables, from its last reply (no round trip); a sandbox with
        no live session starts a fresh one in its working directory; None for one this backend never ran."""
        with self._guard:
            handle = self._handles.get(name)
        if handle is None:
            return None
        session = handle.session
        if session is not None and not session.closed and session.state is not None:
            return session.state
        return SessionState(cwd=handle.workdir)

    def exec(self, name: str, command: str | Sequence[str], *, timeout_s: float | None = None,
             idle_timeout_s: float | None = None, stdin: bytes | Reader | None = None,
             env: Mapping[str, str] | None = None, workdir: str | None = None,
             spool_dir: Path | None = None, on_output: OnOutput | None = None,
             expect_state: str | None = None, gate: Callable[[], None] | None = None) -> ExecResult:
        checked = run_command(command, timeout_s=timeout_s, idle_timeout_s=idle_timeout_s, env=env,
                              workdir=workdir, expect_state=expect_state)  # SpecInvalid before anything
        handle = self._handle(name)
        request = checked.model_copy(update={"quota": handle.quota, "spare": handle.spare(),
                                             "marks": handle.marks() or None})
        out = Spool(self.output_cap, spool_dir, "stdout", self.spool_limit)
        err = Spool(self.output_cap, spool_dir, "stderr", self.spool_limit)
        call = Call(timeout_s, idle_timeout_s, handle.memory)
        start = time.monotonic()
        with handle.lock:
            try:
                session = self._session(handle)
                reply = session.request(Request(request, stdin, command_deadline(timeout_s), gate), out, err,
                                        on_output)
                if session.stdin_cut:
                    cut = f"stdin was cut at {MAX_STDIN >> 20} MiB (the command saw end of file there)"
                    reply = reply.model_copy(update={"detail": "; ".join(filter(None, [reply.detail, cut]))})
            except SessionBroken as exc:
                reply = self._after_broken_session(name, handle, exc)
        return to_result(reply, out.finish(), err.finish(), time.monotonic() - start, call)

    def _after_broken_session(self, name: str, handle: _Handle, exc: SessionBroken) -> RunReply:
        """The reply the agent could not give: the sandbox is gone, or every process in it was killed."""
        handle.session = None
        container = self._container(name)
        if container is None or container.status != "running":
            self._drop(name)
            return RunReply(reason=EndReason.SANDBOX_VANISHED, exit_code=None,
                            detail=f"{exc.why}: the sandbox is gone or stopped")
        try:
            spare = handle.spare()
            environment = None if not spare else {"CANAL_SPARE": f"{spare[0]}:{spare[1]}",
                                                  "CANAL_SPARE_MARKS": ",".join(handle.marks())}
            with translating("clean up after a broken session in", name=name):
                swept = container.exec_run(["python3", "-c", AGENT_SOURCE, "sweep"], user=handle.user,
                                           environment=environment)
        except SandboxError:  # it stopped meanwhile (its keepalive was killed): gone, not an engine fault
            swept = None
        if swept is None or (swept.exit_code != 0 and self._stops(name)):
            self._drop(name)
            return RunReply(reason=EndReason.SANDBOX_VANISHED, exit_code=None,
                            detail=f"{exc.why}: the sandbox stopped")
        return RunReply(reason=EndReason.KILLED, exit_code=KILLED_EXIT,
                        detail=f"{exc.why}; every process in the sandbox was killed and a fresh session "
                               "starts with the next command (working directory and variables are reset)")

    def _stops(self, name: str, within_s: float = 5.0) -> bool:
        """Whether a sandbox whose sweep could not run is stopping: the engine may still call it running
        for a moment after its runtime died (gVisor's Sentry killed by the host's OOM killer)."""
        deadline = time.monotonic() + within_s
        while True:
            container = self._container(name)
            if container is None or container.status != "running":
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)

    # background tasks and relayed connections ------------------------------------------------
    def _background(self, handle: _Handle) -> Background:
        with handle.bg_lock:
            if handle.background is None or handle.background.closed:
                fsize = None if handle.quota is None else handle.quota.bytes
                handle.background = Background(self.client, handle.container_id, user=handle.user,
                                               workdir=handle.workdir, fsize=fsize)
            return handle.background

    def start_task(self, name: str, n: int, spec: TaskSpec, sink: TaskSink, *,
                   expect_state: str | None = None) -> int:
        """Start task ``n`` where the session is now (its cwd and exported variables); returns the pid of
        its runner. The session is asked only for a moment: the task never holds it."""
        handle = self._handle(name)
        bg = self._background(handle)
        request = SpawnSpec(expect_state=expect_state or None, quota=handle.quota, spare=bg.identity,
                            marks=tuple(bg.marks()) or None)
        err = Spool(4096, None, "stderr")
        with handle.lock:
            try:
                reply = self._session(handle).spawn_spec(request, err, deadline_s=30.0)
            except SessionBroken as exc:
                self._after_broken_session(name, handle, exc)
                raise _start_failed(name, f"the session broke ({exc.why}); start the task again") from exc
        if reply.exit_code != 0 or not reply.spec:
            said = err.finish().read_bytes().decode(errors="replace").strip().removeprefix("canal: ")
            raise _start_failed(name, said or "the session refused to hand over its state")
        try:
            return bg.start_task(n, spec, reply.spec, sink)
        except SessionBroken as exc:
            raise _start_failed(name, f"the background agent failed: {exc.why}") from exc

    def cancel_task(self, name: str, n: int, why: str) -> bool:
        with self._guard:
            handle = self._handles.get(name)
        bg = None if handle is None else handle.background
        return bg is not None and not bg.closed and bg.kill(n, why)

    def open_stream(self, name: str, port: int, sink: StreamSink) -> Relay:
        return self._background(self._handle(name)).open_stream(port, sink)

    def open_stdio(self, name: str, argv: Sequence[str], *,
                   env: Mapping[str, str] | None = None) -> StdioChannel:
        """``argv`` in sandbox ``name`` as its user, in its workdir, with stdin and stdout as a pipe."""
        handle = self._handle(name)
        return StdioChannel(self.client, handle.container_id, argv, user=handle.user, workdir=handle.workdir,
                            env=env)

    # files -----------------------------------------------------------------------------------
    def put_files(self, name: str, files: Mapping[str, bytes], *, dest: str = "/workspace",
                  max_bytes: int = MAX_TRANSFER_BYTES) -> None:
        data = pack(files, max_bytes=max_bytes)
        result = self.exec(name, ["tar", "-x", "--no-same-owner", "-C", dest, "-f", "-"], stdin=data)
        if not result.ok:
            msg = f"Could not write files under {dest} in {name}: {result.stderr.head(500)!r}"
            raise FILE_TRANSFER_REFUSED(msg, hint=f"check that {dest} exists and is writable",
                                      details={"dest": dest, "exit_code": result.exit_code})

    def get_files(self, name: str, path: str, *, max_bytes: int = MAX_TRANSFER_BYTES) -> dict[str, bytes]:
        size = self.exec(name, ["du", "-sb", "--", path])
        if not size.ok:
            msg = f"Could not read {path} in {name}: {size.stderr.head(500)!r}"
            raise FILE_TRANSFER_REFUSED(msg, hint="check the path with: ls -la", details={"path": path})
        if int(size.stdout.read_bytes().split()[0]) > max_bytes:
            msg = f"Refused to read {path}: larger than {max_bytes} bytes."
            raise FILE_TRANSFER_REFUSED(msg, hint="read a smaller path, or raise max_bytes",
                                      details={"path": path, "max_bytes": max_bytes})
        parent, base = str(Path(path).parent), Path(path).name
        result = self.exec(name, ["tar", "-c", "-C", parent, "--", base])
        with result.stdout.open() as stream:
            return unpack(stream, max_bytes=max_bytes)


def _listed(client: docker.DockerClient, labels: list[str], name_prefix: str) -> list[SandboxInfo]:
    filters: dict[str, Any] = {"label": labels}
    if name_prefix:
        filters["name"] = f"^/?{re.escape(name_prefix)}"  # the engine matches names by regex
    with translating("list sandboxes"):
        containers = client.containers.list(all=True, filters=filters)
    return [info_of(c) for c in containers if c.name.startswith(name_prefix)]


def _start_failed(name: str, why: str) -> SandboxError:
    return TASK_START_FAILED(f"The task did not start in {name}: {why}. Nothing runs.",
                           hint="start the task again", next=act("task.start"),
                           details={"sandbox": name, "why": why})


def _quota(labels: Mapping[str, str], workdir: str) -> WorkspaceQuota | None:
    value = labels.get(LABEL_QUOTA, "")
    return WorkspaceQuota(path=workdir, bytes=int(value)) if value.isdigit() else None


def _no_progress(_: BuildEvent) -> None:
    return None
