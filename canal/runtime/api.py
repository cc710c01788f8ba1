"""The Python API: ``Canal(project_dir).run(command)`` returns the same ``RunResult`` that ``--json`` prints.

One ``Canal`` object keeps the policy compiled and each sandbox's session warm between calls; harnesses,
the MCP server and the benchmarks use it::

    from canal import Canal

    with Canal("/path/to/project") as canal:
        result = canal.run("ls -la")
        print(result.text)
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO

from canal.host.paths import project_key
from canal.runtime.sandboxes.early import started_early
from canal.runtime.sandboxes.resources import Owned, Resources, policy_key
from canal.runtime.sandboxes.start import DEFAULT_SANDBOX, SandboxRef, ensure_sandbox, sandbox_ref
from canal.runtime.services import OUTPUTS, Services
from canal.runtime.settings.project import find_project_dir
from canal.sandbox.docker.backend import DockerBackend

FORK_PROFILE = "autonomous"

# Only what a project's first command needs before its sandbox starts is imported above: the rest (the
# pipeline, the policy engine, checkpoints, the presenter...) loads while the engine makes the sandbox
# (runtime.sandboxes.early), or when a method needs it. Types only: below.
if TYPE_CHECKING:
    from canal.core.next import Say
    from canal.host.checkpoints import Checkpoint, DiffResult, History, UndoResult
    from canal.host.forks import ApplyResult, Fork, ForkChanges
    from canal.policy.engine import Policy
    from canal.presenter import PresenterConfig
    from canal.runtime.admin.approvals import Approvals
    from canal.runtime.admin.audit import Audit
    from canal.runtime.admin.keys import Keys
    from canal.runtime.admin.settings import Settings
    from canal.runtime.admin.state import State
    from canal.runtime.fileops import FileOps
    from canal.runtime.run.pipeline import Pipeline, RunRequest
    from canal.runtime.run.result import RunResult
    from canal.runtime.sandboxes.egress import EgressLog
    from canal.runtime.sandboxes.images import ImageReport
    from canal.runtime.settings.config import CanalConfig
    from canal.runtime.surface import CanalAPI, DownReport
    from canal.runtime.tasks import TaskManager, TaskRecord, Tasks
    from canal.runtime.tools import Tools
    from canal.sandbox.backend import SandboxBackend, SandboxInfo
    from canal.sandbox.images import BuildEvent, BuiltImage, PrunedImage
    from canal.workflows.engine import Engine


OUTPUT_RETENTION_S = 24 * 3600  # full outputs older than this go at `canal gc`


def purge_outputs(root: Path, older_than_s: float) -> int:
    """Delete saved full outputs older than ``older_than_s``; returns how many went."""
    cutoff = time.time() - older_than_s
    gone = 0
    for path in root.glob("*/*"):
        if path.is_file() and not path.is_symlink() and path.lstat().st_mtime < cutoff:
            path.unlink(missing_ok=True)
            gone += 1
    return gone


class Canal:
    """Canal for one project. Not thread-safe: use one object per thread."""

    def __init__(self, project_dir: str | Path | None = None, *, sandbox: str = DEFAULT_SANDBOX,
                 unattended: bool | None = None, actor: str = "agent", config: CanalConfig | None = None,
                 backend: SandboxBackend | None = None,
                 on_build: Callable[[BuildEvent], None] | None = None, profile: str | None = None,
                 resources: Resources | None = None) -> None:
        """``profile``: a policy profile stricter than the project's (a looser one is refused).
        ``resources``: what this object builds once and uses again (policies, backends, checkpoint stores,
        background tasks; ``runtime/sandboxes/resources.py``): the server gives every Canal it makes its
        one ``Shared`` set; without one, this object owns its own and closes it with itself."""
        start = Path(project_dir) if project_dir is not None else None
        self.project_dir = find_project_dir(start) if start is None else start.resolve()
        self._owns_resources = resources is None
        self._resources = Owned() if resources is None else resources
        self._services = Services(self.project_dir, config=config, profile=profile, resources=self._resources)
        self.sandbox = sandbox
        self._refs: dict[str, SandboxRef] = {}
        self.actor = actor
        self._unattended = unattended
        self._backend = backend
        self._on_build = on_build

    @staticmethod
    def connect(project_dir: str | Path | None = None, *, sandbox: str = DEFAULT_SANDBOX,
                actor: str = "agent") -> CanalAPI:
        """This project's Canal through the per-user server (started on demand): the same sandbox
        sessions as ``canal run`` and ``canal mcp``, so ``cd`` and ``export`` carry over between them."""
        from canal.runtime.remote import connect

        return connect(project_dir, sandbox=sandbox, actor=actor)

    # -- wiring ---------------------------------------------------------------------------------
    @property
    def config(self) -> CanalConfig:
        return self._services.config

    def sources(self) -> list[Path] | None:
        """Every file this object's settings, approval and keys were read from (the project folder
        first), present or not; None for settings given in code. Reads the settings, so raises what
        reading them raises: a process that keeps a Canal uses it again while none of these changed."""
        return self._services.sources()

    @property
    def host_folders(self) -> dict[str, Path]:
        """Canal's own folders on the host: ``config`` (its settings and keys) and ``state`` (this
        project's state), for a front end that must not show an agent where they are."""
        return {"config": self._services.config_dir, "state": self._services.state_dir}

    @property
    def project_id(self) -> str:
        """The project's id (its folder's name and path hash), as its audit log and sandboxes name it."""
        return self._services.project_id

    @property
    def redactor(self) -> Callable[[str], str]:
        """What Canal shows of a text: every secret it knows of masked (in-process: for a live view of
        ``run``'s ``on_output`` chunks, or a file read whole)."""
        return self._services.redactor

    @property
    def unattended(self) -> bool:
        return self.config.unattended if self._unattended is None else self._unattended

    @cached_property
    def policy(self) -> Policy:
        return self._load_policy(self.config.policy.profile)

    def _load_policy(self, profile: str, *, fork: bool = False) -> Policy:
        """``profile`` plus the project's rule files, compiled from the text that was checked against the
        approval (never read again from disk); ``fork``: derived for a fork (``load_fork_policy``)."""
        from canal.policy.loader import load_fork_policy, load_policy

        texts = self._services.policy_texts
        files = list(texts)
        verified = self._services.verified_policies
        load = load_fork_policy if fork else load_policy
        return self._resources.policy(policy_key(f"{FORK_PROFILE}:{profile}" if fork else profile, texts),
                                      lambda: load(profile, files, verified=verified, texts=texts))

    @cached_property
    def backend(self) -> SandboxBackend:
        if self._backend is not None:
            return self._backend
        owner = f"canal-{project_key(self.project_dir)}"
        protected = tuple(self._services.protected_paths())
        limit = self._services.config.storage.output_per_stream
        from canal.sandbox.docker.engine import docker_client

        backend = self._resources.backend(
            (owner, str(self._services.state_dir)),
            lambda: DockerBackend(docker_client(), owner=owner, protected_paths=protected, spool_limit=limit))
        if isinstance(backend, DockerBackend):  # one kept by shared resources was built by another Canal
            backend.protected_paths = protected  # state folders made since it was built are protected too
            backend.spool_limit = limit  # canal.yaml may have changed since it was built
        return backend

    @cached_property
    def pipeline(self) -> Pipeline:
        from canal.runtime.run.pipeline import Pipeline

        return Pipeline(self._services, self.policy, self.backend, self._on_build,
                        fork_policy=lambda: self.fork_policy)

    @cached_property
    def fork_policy(self) -> Policy:
        """Forks run the project's own profile and approved rule files, derived for a copy
        (``load_fork_policy``): deny rules kept, confirmations waived, ``in_fork: deny`` rules (strict's
        secret reads) denied."""
        return self._load_policy(self.config.policy.profile, fork=True)

    @cached_property
    def task_manager(self) -> TaskManager:
        """This project's background tasks, a resident of the resources: the server's (shared by every
        door, outliving this object, so it reads the project's state itself), or, in-process, this
        object's own (its tasks end when it closes)."""
        from canal.runtime.tasks import TaskError, TaskManager
        from canal.sandbox.docker.background import BackgroundBackend

        backend = self.backend
        if not isinstance(backend, BackgroundBackend):
            msg = f"This sandbox backend ({type(backend).__name__}) runs no background tasks."
            raise TaskError(msg, hint="use the Docker backend (the default)")
        key = ("tasks", str(self.project_dir), str(self._services.state_dir))
        services = None if self._resources.lasting else self._services
        manager = self._resources.resident(key, lambda: TaskManager(self.project_dir, backend, services))
        assert isinstance(manager, TaskManager)
        return manager

    @cached_property
    def tasks(self) -> Tasks:
        """Background tasks: ``canal.tasks.start("npm run dev")``, then ``show``, ``read``, ``follow``,
        ``wait``, ``cancel``, ``list``; ``forward("8080:3000")`` relays a host port to the sandbox."""
        from canal.runtime.tasks import Tasks

        return Tasks(self.pipeline, self._services, self.task_manager, self.ref, actor=self.actor,
                     unattended=self.unattended, persistent=self._resources.lasting)

    @cached_property
    def files(self) -> FileOps:
        """View, edit, write, remove and restore workspace files (reversible, audited)."""
        from canal.runtime.fileops import FileOps

        return FileOps(self._services, self.actor)

    @cached_property
    def tools(self) -> Tools:
        """The project's tools (tools/*.yaml): list, get, meta and call."""
        from canal.runtime.tools import Tools

        return Tools(self)

    def call_tool(self, name: str, args: Mapping[str, Any], *, confirm: str | None = None,
                  **options: Any) -> RunResult:
        """Run the project's tool ``name`` with ``args`` (a JSON object of its fields), through the same
        pipeline as a command; ``confirm`` is the token a CONFIRMATION_REQUIRED result gave. Options:
        ``env``, ``timeout_s``, ``unattended``, ``secrets``, ``say`` (see ``Tools.call``)."""
        return self.tools.call(name, args, confirm=confirm, **options)

    @cached_property
    def workflows(self) -> Engine:
        """The workflow engine of this project: start, advance, current, show, abort, runs, list."""
        from canal.runtime.wfrun import open_engine  # the engine loads only when a command needs it

        return open_engine(self)

    @cached_property
    def audit(self) -> Audit:
        """The project's audit log: show, search, verify, export (and, in-process, checkpoint, ship,
        verify_copy, record)."""
        from canal.runtime.admin.audit import Audit

        return Audit(self._services)

    @cached_property
    def approvals(self) -> Approvals:
        """Confirmations waiting for a person: pending, show (and, in-process, a verified person's
        decide, decide_as, approve, deny)."""
        from canal.runtime.admin.approvals import Approvals

        return Approvals(self._services)

    @cached_property
    def settings(self) -> Settings:
        """Trusted settings: status, approvers (and, in-process, a verified person's approve)."""
        from canal.runtime.admin.settings import Settings

        return Settings(self._services)

    @cached_property
    def keys(self) -> Keys:
        """The keys that seal state and sign records: list (and, in-process, rotate, retire)."""
        from canal.runtime.admin.keys import Keys

        return Keys(self._services)

    @cached_property
    def state(self) -> State:
        """Sealed state files: show (masked; in-process, ``reveal=True``), verify."""
        from canal.runtime.admin.state import State

        return State(self._services)

    def ref(self, name: str | None = None) -> SandboxRef:
        name = name or self.sandbox
        known = self._refs.get(name)
        if known is None:  # the container name hashes the resolved project folder: once per name
            known = self._refs[name] = sandbox_ref(self.project_dir, name)
        return known

    # -- commands -------------------------------------------------------------------------------
    def run(self, command: str, *, sandbox: str | None = None, timeout_s: float | None = None,
            idle_timeout_s: float | None = None, confirm: str | None = None,
            unattended: bool | None = None, presenter: PresenterConfig | None = None,
            stdin: bytes | BinaryIO | None = None,
            on_output: Callable[[str, bytes], None] | None = None, say: Say | None = None) -> RunResult:
        """Run a shell command in the sandbox's session (cwd and env persist like a terminal).

        ``stdin``: bytes, or a binary reader streamed to the command as it reads (at most 16 MiB).
        ``on_output(stream, chunk)``: raw stdout/stderr chunks as they arrive ("stdout" or "stderr"),
        before redaction: for a live view, pass each through ``redactor`` first.
        ``say``: the caller's words for next actions in ``text`` (undo, restore, a refusal's next step);
        without them ``text`` names ids only, and ``next`` holds the actions as data.
        """
        return self._run(command, sandbox, unattended, timeout_s=timeout_s, idle_timeout_s=idle_timeout_s,
                         confirm=confirm, presenter=presenter, stdin=stdin, on_output=on_output, say=say)

    def run_argv(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 sandbox: str | None = None, timeout_s: float | None = None, confirm: str | None = None,
                 unattended: bool | None = None, secrets: Sequence[str] = (),
                 say: Say | None = None) -> RunResult:
        """Run an exact argv with no shell: each element reaches the program whole.

        ``secrets``: exact values (e.g. sensitive gate fields) masked in everything written or shown.
        """
        return self._run(list(argv), sandbox, unattended, env=env, timeout_s=timeout_s, confirm=confirm,
                         secrets=tuple(secrets), say=say)

    def _run(self, command: str | list[str], sandbox: str | None, unattended: bool | None,
             **fields: Any) -> RunResult:
        ref = self.ref(sandbox)
        if "pipeline" in self.__dict__:
            return self.pipeline.run(self._request(command, ref, unattended, fields))
        # the first command: its sandbox is made while the pipeline and the policy load and the policy
        # compiles (runtime.sandboxes.early)
        with started_early(self._services, lambda: self.backend, ref, self._on_build):
            return self.pipeline.run(self._request(command, ref, unattended, fields))

    def _request(self, command: str | list[str], ref: SandboxRef, unattended: bool | None,
                 fields: dict[str, Any]) -> RunRequest:
        from canal.runtime.run.pipeline import RunRequest

        return RunRequest(command=command, ref=ref, actor=self.actor,
                          unattended=self.unattended if unattended is None else unattended, **fields)

    # -- checkpoints ----------------------------------------------------------------------------
    def checkpoints(self, limit: int | None = None) -> History:
        """The workspace's checkpoints, oldest first, each with what changed after it (``rows``), and
        the records that failed their check (``corrupt``: named, never restored from). ``limit``: the
        newest ``limit`` only (``older`` counts the kept ones not read); CHECKPOINT_LIMIT_INVALID below 1."""
        return self._services.checkpoints.history(limit)

    def latest_checkpoint(self) -> Checkpoint | None:
        """The newest checkpoint whose record verifies (None: none yet), with nothing compared."""
        kept = self._services.checkpoints.list()
        return kept[-1] if kept else None

    def diff(self, checkpoint: str | None = None) -> DiffResult:
        """What changed in the workspace since ``checkpoint`` (the newest when None)."""
        return self._services.checkpoints.diff(checkpoint)

    def undo(self, checkpoint: str | None = None, *, last_command: bool = False) -> UndoResult:
        """Put the workspace back as it was at ``checkpoint``; when None, before the newest command that
        changed something (``result.command`` names it; ``last_command``: before the newest command,
        whatever it did). A checkpoint is taken first, so ``undo(result.before_undo)`` reverts this."""
        result = self._services.checkpoints.undo(checkpoint, actor=self.actor, last_command=last_command)
        self._services.audit.append("checkpoint.undo", {
            "restored_to": result.restored_to, "before_undo": result.before_undo,
            "changes": len(result.changes)}, actor=self.actor)
        return result

    def prune_checkpoints(self, *, before: str | None = None, person: bool = False) -> list[str]:
        """Apply retention now (never inside the floor); ``before``: also drop every checkpoint older
        than that one, which inside the floor only a person may (``person``: a front end that verified
        one, as for ``apply``). Returns the pruned ids."""
        pruned = self._services.checkpoints.prune(before=before, person=person)
        if pruned:
            self._services.audit.append("checkpoint.pruned", {"pruned": pruned, "before": before,
                                                             "person": person}, actor=self.actor)
        return pruned

    # -- forks ----------------------------------------------------------------------------------
    def fork(self, name: str, *, from_checkpoint: str | None = None) -> Fork:
        """Start sandbox ``name`` on a copy-on-write view of the project now (or at a checkpoint).
        It runs the autonomous profile; the real project is not mounted in it."""
        self.ref(name)  # the name is checked before anything is made
        fork = self._services.forks.create(name, from_id=from_checkpoint, actor=self.actor)
        try:
            self.up(name)
        except BaseException:
            self._services.forks.discard(name)
            raise
        self._services.audit.append("fork.created", {"fork": name, "base": fork.base}, actor=self.actor)
        return fork

    def forks(self) -> list[Fork]:
        return self._services.forks.list()

    def changes(self, name: str) -> ForkChanges:
        """What fork ``name`` changed since it was made: patch plus binary/mode/symlink/deletion list."""
        return self._services.forks.changes(name)

    def apply(self, name: str, paths: Sequence[str] = (), *, confirm: str | None = None,
              person: bool = False) -> ApplyResult:
        """Make the real project match fork ``name`` (at ``paths``, all when empty). Needs a confirmation
        token for exactly this change set (``ConfirmationRequired`` carries it). Changes to canal.yaml,
        policy files, .git/ or .gitattributes are refused (``PATH_PROTECTED``) unless ``person``: only a
        front end that verified a person runs the command (the CLI's approver check) may pass it."""
        from canal.runtime.fork_apply import apply_fork

        return apply_fork(self, name, tuple(paths), confirm, person=person)

    def discard(self, name: str) -> Fork:
        """Remove fork ``name``: its sandbox and its workspace (nothing reaches the project)."""
        self._services.forks.get(name)
        self.down(name)
        fork = self._services.forks.discard(name)
        self._services.audit.append("fork.discarded", {"fork": name}, actor=self.actor)
        return fork

    # -- lifecycle ------------------------------------------------------------------------------
    def build_images(self, *, egress: bool = False, force: bool = False,
                     on_event: Callable[[BuildEvent], None] | None = None) -> list[BuiltImage]:
        """Canal's sandbox image (and the egress proxy's), built unless one from the same build context is
        there already; ``force`` rebuilds."""
        from canal.sandbox.images import DEFAULT_IMAGE, EGRESS_IMAGE

        tags = [DEFAULT_IMAGE, *([EGRESS_IMAGE] if egress else [])]
        progress = on_event or self._on_build
        return [self.backend.ensure_image(tag, force=force, on_event=progress) for tag in tags]

    def build_project_image(self, *,
                            on_event: Callable[[BuildEvent], None] | None = None) -> BuiltImage | None:
        """The project's own image (canal.yaml's ``image:`` section, its CA certificates), built unless one
        from the same content is there; None when canal.yaml adds nothing to Canal's image."""
        from canal.runtime.sandboxes.images import ensure_project_image

        return ensure_project_image(self._services, on_event or self._on_build)

    def image_report(self) -> ImageReport:
        """The image this project's sandboxes start from: its base, what canal.yaml adds, whether it is
        built, and which image the default sandbox runs (needs the engine)."""
        from canal.runtime.sandboxes.images import image_report

        return image_report(self._services)

    def up(self, name: str | None = None) -> SandboxInfo:
        """Start the sandbox (create it if needed) and warm its session."""
        ref = self.ref(name)
        info = ensure_sandbox(self._services, self.backend, ref, self._on_build)
        self.backend.warm(ref.container)
        self._services.audit.append("sandbox.up", {"sandbox": ref.name, "container_id": info.id},
                                   actor=self.actor)
        return info

    def down(self, name: str | None = None) -> bool:
        """Remove the sandbox; False when there was none."""
        return self.down_report(name).removed

    def down_report(self, name: str | None = None) -> DownReport:
        """Remove the sandbox, ending its background tasks first; says what was ended."""
        from canal.runtime.surface import DownReport

        ref = self.ref(name)
        ended = self._end_tasks(ref.name)
        existed = self.backend.get(ref.container) is not None
        self._services.egress.collect(self.backend)  # while the sandbox still holds its address
        self.backend.remove(ref.container)
        self._services.egress.prune(self.backend, actor=self.actor)  # its proxy, if no sandbox uses it
        # full outputs were for this sandbox's next commands only; they may hold what commands printed
        shutil.rmtree(self._services.outputs_dir(ref.name), ignore_errors=True)
        if existed:
            data = {"sandbox": ref.name, "tasks_ended": [t.id for t in ended]}
            self._services.audit.append("sandbox.down", data, actor=self.actor)
        return DownReport(existed, ended)

    def _end_tasks(self, sandbox: str) -> list[TaskRecord]:
        from canal.sandbox.docker.background import BackgroundBackend

        if not isinstance(self.backend, BackgroundBackend):
            return []
        return self.task_manager.end_sandbox(sandbox)

    def ps(self) -> list[dict[str, Any]]:
        prefix = f"canal-{project_key(self.project_dir)}-"
        rows = []
        # by name: a sandbox a warm pool handed out carries the pool's owner label, not the project's
        for info in self.backend.list(all_owners=True, name_prefix=prefix):
            rows.append({"name": info.name.removeprefix(prefix), "container": info.name, "id": info.id[:12],
                         "status": info.status.value, "image": info.image,
                         "expires_at": info.expires_at.isoformat() if info.expires_at else None})
        return rows

    def gc(self, *, all_projects: bool = False) -> list[str]:
        """Remove expired or orphaned Canal sandboxes (only containers Canal can prove it owns), then the
        egress proxies no sandbox uses (this project's attempts recorded first)."""
        from canal.sandbox.reaper import reap

        removed = reap(self.backend, all_owners=all_projects)
        removed += self._services.egress.prune(self.backend, all_owners=all_projects, actor=self.actor)
        purged = purge_outputs(self._services.state_dir / OUTPUTS, OUTPUT_RETENTION_S)
        if removed or purged:
            self._services.audit.append("sandbox.gc", {"removed": removed, "outputs_purged": purged},
                                       actor=self.actor)
        return removed

    def gc_images(self) -> list[PrunedImage]:
        """Remove Canal's own images that nothing can use (untagged: left by a rebuild or by builds
        that raced before the build lock; used by no container); never an image Canal did not label."""
        pruned = list(self.backend.images_prune())
        if pruned:
            self._services.audit.append("image.gc", {"removed": [p.image_id for p in pruned],
                                                    "freed_bytes": sum(p.size for p in pruned)},
                                       actor=self.actor)
        return pruned

    # -- egress -----------------------------------------------------------------------------------
    def egress_log(self, *, since: str = "", denied_only: bool = False, sandbox: str | None = None,
                   limit: int | None = None) -> EgressLog:
        """Every attempt of the project's allowlist sandboxes to leave (recorded in the audit log),
        oldest first; what the proxies logged since the last command is recorded first."""
        from canal.runtime.sandboxes.egress import EgressLog
        from canal.runtime.trust.errors import ConfigUnapproved
        from canal.sandbox.errors import SandboxError

        unread = None
        try:
            self._services.egress.collect(self.backend)
        except SandboxError as exc:  # no engine: the recorded attempts are still worth showing
            unread = f"{exc.code}: {exc.message}"
        except ConfigUnapproved as exc:  # reading a log loosens nothing: what is recorded is shown
            unread = f"{exc.code}: the proxies are read once canal.yaml is approved"
        status = self._services.trust.status()
        settings = self.config if status.state != "unapproved" else status.snapshot.config
        prefix = f"canal-{project_key(self.project_dir)}-"
        records = self._services.egress.history(since=since, denied_only=denied_only, limit=limit,
                                               sandbox=self.ref(sandbox).container if sandbox else None)
        # the audit record names the container; the API names sandboxes as `canal run --sandbox` does
        named = [r.model_copy(update={"sandbox": r.sandbox.removeprefix(prefix) if r.sandbox else None})
                 for r in records]
        return EgressLog(records=named, unread=unread, allowlist=settings.sandbox.network.mode == "allowlist")

    def close(self) -> None:
        if "audit" in self._services.__dict__:  # outcome records are written without their own fsync
            self._resources.commit(self._services.audit)
        if self._owns_resources:  # in-process: this object's tasks end, its backend and sessions close
            self._resources.close()
        if self._backend is not None and "backend" in self.__dict__:
            self._backend.close()

    def __enter__(self) -> Canal:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


if TYPE_CHECKING:
    _IMPLEMENTS: type[CanalAPI] = Canal  # mypy checks that Canal offers the whole public API
