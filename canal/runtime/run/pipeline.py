"""One command through the pipeline of docs/architecture.md: policy, confirmation, backup, exec, presenter,
audit."""

from __future__ import annotations

import glob
import hashlib
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from canal.core.errors import POLICY_DENIED, ConfirmationRequired
from canal.core.mask import mask_exact
from canal.core.next import NextAction, Say, act, say_all
from canal.host.approvals import Approval, DecisionSummary
from canal.host.approvals.verify import approve_ways
from canal.host.audit import Decision as AuditDecision
from canal.host.audit import RunCompleted, RunStarted
from canal.host.audit.dangling import runner
from canal.host.checkpoints import Checkpoint, CheckpointError
from canal.host.files.errors import PathNotFound, PathOutsideWorkspace, SymlinkEscape
from canal.host.forks import ForkError
from canal.host.ports import Redactor
from canal.host.trash.errors import CannotTrashWorkspace
from canal.host.trash.limits import check_backup_size
from canal.policy.decision import Decision
from canal.policy.engine import Policy
from canal.presenter import Presentation, PresenterConfig, present
from canal.presenter.early import EarlySave
from canal.runtime.corpnet.offline import offline_footer
from canal.runtime.errors import format_error
from canal.runtime.recovery import recover_dangling
from canal.runtime.run import notices, uncovered
from canal.runtime.run.hints import failure_hints, soft_deletes
from canal.runtime.run.interrupt import current as current_interrupt
from canal.runtime.run.interrupt import on_interrupt, signal_name
from canal.runtime.run.link import Link
from canal.runtime.run.outputs_cap import outputs_note
from canal.runtime.run.result import (
    BackupView,
    CheckpointView,
    ConfirmationView,
    DecisionView,
    NotCoveredView,
    RunResult,
    Status,
    iso_time,
)
from canal.runtime.run.spooled import drop_spools, release_spools
from canal.runtime.run.typed import as_typed, text_of
from canal.runtime.sandboxes.egress import denied_footer
from canal.runtime.sandboxes.gitguard import guard_env
from canal.runtime.sandboxes.start import (
    OUTPUT_MOUNT,
    SandboxRef,
    ensure_sandbox,
    replaced_workspace,
    sandbox_user,
    uid_gid,
)
from canal.runtime.services import Services
from canal.sandbox.backend import OUTPUT_MEMORY_CAP, SandboxBackend
from canal.sandbox.errors import SandboxError
from canal.sandbox.images import BuildEvent
from canal.sandbox.result import EMPTY, EndReason, ExecResult, SessionState
from canal.sandbox.spool import kept_as_it_came


@dataclass(frozen=True)
class RunRequest:
    command: str | Sequence[str]  # a str runs in the sandbox's shell session; a sequence is an exact argv
    ref: SandboxRef
    timeout_s: float | None = None
    idle_timeout_s: float | None = None
    confirm: str | None = None
    unattended: bool = False
    env: Mapping[str, str] | None = None
    actor: str = "agent"
    presenter: PresenterConfig | None = None
    secrets: tuple[str, ...] = ()  # exact values (e.g. a workflow's sensitive gate fields) never shown
    stdin: bytes | BinaryIO | None = None  # a reader is streamed to the command as it reads (bounded)
    on_output: Callable[[str, bytes], None] | None = None  # raw chunks as they arrive (live display)
    say: Say | None = None  # the front end's words for next actions, in text composed for it
    task: str | None = None  # the background task this command starts (its intent record names it)
    # the task's own options (name, timeout, forwards), so a confirmation's rerun starts the same task
    task_options: Mapping[str, Any] | None = None

    @property
    def text(self) -> str:
        """The command as one string, as it runs."""
        return self.command if isinstance(self.command, str) else shlex.join(self.command)

    @property
    def decided(self) -> str | Sequence[str]:
        """What the policy decides: the command as typed with the request's own variables (typed.py)."""
        return as_typed(self.command, self.env)

    @property
    def decided_text(self) -> str:
        """``decided`` as one string: what the policy, confirmation tokens, the approver and the audit
        log see."""
        return text_of(self.decided)

MAX_SHOWN_COMMAND = 2000


@dataclass(frozen=True)
class Admitted:
    """A command the pipeline let through: it is checkpointed and its intent is on record."""

    state: SessionState
    decision: DecisionView
    backups: list[BackupView]
    redact: Redactor
    checkpoint: CheckpointView | None
    started: str  # the intent record's id
    git_env: Mapping[str, str]  # overrides that keep git from running what its configuration names
    notice: bool = False  # the footer says what the checkpoint did not cover (news for this session)
    notices: tuple[str, ...] = ()  # for the result's notices (a sandbox made again, and why)
    link: Link | None = None  # the checkpoint's link to ``started``, being written (admit's ``link_later``)


def _shown(command: str) -> str:
    """What errors and the audit log repeat of a command: all of it, or its head when it is over-long."""
    if len(command) <= MAX_SHOWN_COMMAND:
        return command
    digest = hashlib.sha256(command.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{command[:200]}... ({len(command)} characters, sha256 {digest}...)"


class Pipeline:
    def __init__(self, services: Services, policy: Policy, backend: SandboxBackend,
                 on_build: Callable[[BuildEvent], None] | None = None,
                 fork_policy: Callable[[], Policy] | None = None) -> None:
        self.services = services
        self.policy = policy
        self.fork_policy = fork_policy  # the autonomous profile, for sandboxes that are forks
        self.backend = backend
        self.on_build = on_build

    def session(self, req: RunRequest) -> SessionState:
        """The state the command will really run in: the session's cwd and changed variables, as its
        last reply left them (no round trip); a sandbox without a session starts in the workdir."""
        state = self.backend.session_state(req.ref.container)
        return state if state is not None else SessionState(cwd=self.services.config.sandbox.workdir)

    def run(self, req: RunRequest) -> RunResult:
        notices = recover_dangling(self.services)
        result = self._run(req)
        return result.model_copy(update={"notices": [*notices, *result.notices]}) if notices else result

    def _run(self, req: RunRequest) -> RunResult:
        admitted = self.admit(req, link_later=True)
        if isinstance(admitted, RunResult):
            return admitted
        unlinked: str | None = None
        try:
            saved = self._saved_redactor(req)
            early = self._early_save(req, saved)
            try:
                result = self._exec(req, admitted.state, admitted.git_env, early)
                done = self._complete(req, admitted, result, saved, early)
            finally:
                if early is not None:
                    early.close()
        finally:
            if admitted.link is not None:
                unlinked = admitted.link.wait(req.say)
        return done if unlinked is None else done.model_copy(update={"notices": [*done.notices, unlinked]})

    def _early_save(self, req: RunRequest, saved: Redactor) -> EarlySave | None:
        """Stdout's save, begun while it arrives once it is longer than the sandbox layer holds in
        memory (presenter/early.py), up to where its spool would drop the middle; None when the
        presenter config says not to (``save_while_running``)."""
        config = req.presenter or self.services.config.presenter
        if not config.save_while_running:
            return None
        return EarlySave(self.services.outputs_dir(req.ref.name), saved, config,
                         start_after=OUTPUT_MEMORY_CAP,
                         stop_at=kept_as_it_came(self.services.config.storage.output_per_stream))

    def admit(self, req: RunRequest, *, link_later: bool = False) -> Admitted | RunResult:
        """Everything before the command runs: policy, confirmation, the sandbox, backups, checkpoint and
        the intent record. A refusal (denied, confirmation required) comes back as its ``RunResult``.
        ``link_later``: the checkpoint's link to the intent record is written while the command runs
        (``Admitted.link``: the caller waits for it), not before it starts."""
        replaced = self._drop_replaced(req)  # first: a sandbox made again has a new session's state
        state = self.session(req)
        cwd = state.cwd
        decision = self._decide(req, state)
        early: Checkpoint | None = None
        if decision.action == "allow":  # taken first: it names the files undo could not put back
            early = self._checkpoint(req, decision, self._redactor(req))
            # (no checkpoint, nothing uncovered: a read-only command builds no checkpoint store)
            if early is not None and self.services.config.checkpoints.uncovered_writes == "confirm":
                decision = uncovered.guard(decision, early, self.services.config.sandbox.workdir,
                                           unattended=req.unattended,
                                           left_out=self.services.checkpoints.left_out)
        view = _decision_view(decision)
        approval: Approval | None = None
        if decision.action == "deny":
            return self._refused(req, decision, view, state)
        if decision.action == "confirm":
            if req.confirm is None:
                return self._ask(req, decision, view, cwd)
            approval = self.services.approvals.redeem(req.confirm, req.decided_text, req.ref.name, cwd,
                                                      decision.policy_hash)
        # GIT_CONFIG_UNSAFE before anything is changed
        git_env = self._git_env(req, self.services.config.sandbox.workdir, decision, state)
        info = self.backend.ready(req.ref.container) or ensure_sandbox(self.services, self.backend, req.ref,
                                                                        self.on_build, replaced)
        backups = self._backup(decision, req) if approval is not None else []
        redact = self._redactor(req)
        checkpoint = early if early is not None else self._checkpoint(req, decision, redact)
        started = self.services.audit.append(RunStarted.event, RunStarted(
            sandbox=req.ref.name, container_id=info.id, image_digest=info.image_digest or info.image,
            command=redact(req.decided_text), cwd=cwd, decision=_audit_decision(decision),
            approver=None if approval is None else f"{approval.approver} ({approval.how})",
            approval=None if approval is None else approval.token,
            checkpoint=None if checkpoint is None else checkpoint.id, runner=runner(), task=req.task,
            env={k: redact(v) for k, v in sorted((req.env or {}).items())} or None).data(),
            actor=req.actor, durable=False)  # on disk before the command starts: the gate of _exec
        link: Link | None = None
        if checkpoint is not None:
            store = self.services.checkpoints
            if link_later:
                link = Link(lambda: store.attach(checkpoint, started), checkpoint.id)
            else:
                store.attach(checkpoint, started)
        shown = _checkpoint_view(checkpoint)
        return Admitted(state=state, decision=view, backups=backups, redact=redact, checkpoint=shown,
                        started=started, git_env=git_env,
                        notice=notices.due(self.services.state_dir, req.ref.name, info.id, shown),
                        notices=tuple(replaced), link=link)

    def _drop_replaced(self, req: RunRequest) -> list[str]:
        """Remove the sandbox when its live session sees a project folder since replaced; the notice.
        (A sandbox without a live session is checked when ``ensure_sandbox`` looks it up.)"""
        info = self.backend.ready(req.ref.container)
        why = replaced_workspace(self.services, info) if info is not None else None
        if why is None:
            return []
        self.backend.remove(req.ref.container)
        return [why]

    def _complete(self, req: RunRequest, admitted: Admitted, result: ExecResult, saved: Redactor,
                  early: EarlySave | None = None) -> RunResult:
        redact, view_cp, backups, say = admitted.redact, admitted.checkpoint, admitted.backups, req.say
        hints = failure_hints(req.text, result, cwd=admitted.state.cwd,
                              workdir=self.services.config.sandbox.workdir)
        notes = [redact(f"[Hint: {say_all(h.next, say, lead=h.text) if say else h.text}]") for h in hints]
        footer = checkpoint_footer(view_cp, say, notice=admitted.notice)
        shown, result = self._present(req, result, redact, saved, footer, notes, early)
        size, digest = _digest(result)
        audit_id = self.services.audit.append(RunCompleted.event, RunCompleted(
            started=admitted.started, sandbox=req.ref.name, exit_code=result.exit_code,
            reason=result.reason.value, duration_ms=int(result.duration_s * 1000), output_bytes=size,
            output_sha256=digest).data(),
            actor=req.actor, durable=False)  # the intent is on disk; a lost outcome reads as interrupted
        text = shown.text + outputs_note(self.services, req.ref.name, result, shown)
        text += "".join(f"\n{line}" for line in backup_lines(backups, say))
        return RunResult(
            status=_status(result), exit_code=result.exit_code,
            reason=shown.end_reason or result.reason.value, duration_s=round(result.duration_s, 3),
            output=shown.output, stderr=shown.stderr,
            output_file=shown.output_file, decision=admitted.decision, backups=backups, checkpoint=view_cp,
            sandbox=req.ref.name, notices=list(admitted.notices),
            audit_id=audit_id, text=text, exec_result=result)

    def _present(self, req: RunRequest, result: ExecResult, redact: Redactor, saved: Redactor,
                 footer: list[str], notes: list[str],
                 early: EarlySave | None) -> tuple[Presentation, ExecResult]:
        """What the agent reads, and the result once its spool files are gone (runtime.run.spooled): they
        hold the output as printed, secrets and all, and go even when presenting fails."""
        folder = self.services.outputs_dir(req.ref.name)
        try:
            egress = [redact(part) for part in self._egress_footer(req, result)]  # a host may carry a secret
            shown = present(result, config=req.presenter or self.services.config.presenter,
                            output_dir=folder, sandbox_output_dir=OUTPUT_MOUNT, redact=redact,
                            file_owner=_file_owner(self.services), name_hint=req.ref.name,
                            redact_saved=saved, footer_extra=[*footer, *egress],
                            command=req.text, say=req.say, notes=notes, early=early)
        except BaseException:
            drop_spools(result)
            raise
        return shown, release_spools(result, shown, folder)

    def _checkpoint(self, req: RunRequest, decision: Decision, redact: Redactor) -> Checkpoint | None:
        """Record the workspace before a command that may change it. A failure stops the command:
        it never runs unprotected (the refusal is in the audit log and the error says what to do)."""
        if self.services.config.workspace != "rw" or decision.read_only:
            return None
        if self.services.is_fork(req.ref.name):
            return None  # a fork's workspace is a copy: the project is not reachable from it
        try:
            # before a destructive or opaque command: pinned, so retention can only age it out
            pinned = bool(decision.targets) or decision.opaque
            return self.services.checkpoints.take(kind="run", command=redact(req.text), actor=req.actor,
                                                  pinned=pinned)
        except CheckpointError as exc:
            self.services.audit.append("run.refused", {
                "sandbox": req.ref.name, "command": redact(req.text), "code": exc.code,
                "reason": exc.message}, actor=req.actor)
            raise

    def _egress_footer(self, req: RunRequest, result: ExecResult) -> list[str]:
        """Record what an allowlist sandbox's proxy saw; name what this sandbox was refused (or, in a
        sandbox without a network, that it has none, when a command failed trying)."""
        mode = self.services.config.sandbox.network.mode
        if mode == "none":
            return offline_footer(result, req.say)
        if mode != "allowlist":
            return []
        try:
            attempts = self.services.egress.collect(self.backend)
        except SandboxError as exc:  # the command ran: its outcome is still recorded and shown
            log = req.say(act("egress.log")) if req.say is not None else None
            return [f"egress attempts not read yet ({exc.code})" + (f"; {log} reads them" if log else "")]
        return denied_footer(attempts, req.ref.container, req.say)

    def _git_env(self, req: RunRequest, workdir: str, decision: Decision,
                 state: SessionState) -> dict[str, str]:
        """Overrides that keep git from running programs its configuration names (sandboxes.gitguard): the
        workspace's repository and those inside it the decision's git commands start in or name, and
        the program variables the session or the request would pass on."""
        starts, dirs = decision.git_starts, decision.git_dirs
        given = sorted({*(req.env or {}), *state.env()})
        if self.services.is_fork(req.ref.name):
            return guard_env(self.services.forks.workspace(req.ref.name), workdir, starts, dirs, given)
        mounted = self.services.config.workspace != "none"
        return guard_env(self.services.project_dir if mounted else None, workdir, starts, dirs, given)

    def _exec(self, req: RunRequest, state: SessionState, git_env: Mapping[str, str],
              early: EarlySave | None) -> ExecResult:
        """Run it; an interrupt of the request (Ctrl-C, SIGTERM, a client gone) kills it in the sandbox.
        ``early`` is fed stdout as it arrives."""
        live = req.on_output
        on_output = live
        if early is not None:
            def on_output(stream: str, chunk: bytes) -> None:
                if stream == "stdout":
                    early.feed(chunk)
                if live is not None:
                    live(stream, chunk)

        timeouts = self.services.config.timeouts
        container = req.ref.container
        with on_interrupt(lambda why: self.backend.interrupt(container, signal_name(why))):
            interrupt = current_interrupt()
            if interrupt is not None and interrupt.fired:
                return ExecResult(EMPTY, EMPTY, exit_code=None, duration_s=0.0, reason=EndReason.INTERRUPTED,
                                  detail=f"{interrupt.reason} before it started; nothing ran")
            return self.backend.exec(
                container, req.command, timeout_s=req.timeout_s or timeouts.command,
                idle_timeout_s=req.idle_timeout_s or timeouts.idle, env={**(req.env or {}), **git_env},
                stdin=req.stdin, spool_dir=self.services.outputs_dir(req.ref.name), on_output=on_output,
                expect_state=state.digest(), gate=self.services.audit.sync)

    def _decide(self, req: RunRequest, state: SessionState) -> Decision:
        policy = self.policy
        if self.services.is_fork(req.ref.name):
            if self.fork_policy is None:
                msg = f"{req.ref.name} is a fork, and this pipeline has no policy for forks."
                raise ForkError(msg, next=act("run", command="CMD", sandbox=req.ref.name))
            policy = self.fork_policy()
        env = state.env()
        decided = req.decided
        workspace = self.services.config.sandbox.workdir
        if isinstance(decided, str):
            return policy.decide(decided, cwd=state.cwd, env=env, unattended=req.unattended,
                                 workspace=workspace)
        return policy.decide_argv(list(decided), cwd=state.cwd, env=env, unattended=req.unattended,
                                  workspace=workspace)

    def _redactor(self, req: RunRequest) -> Redactor:
        """The services' secret redactor, after masking the request's exact secrets."""
        base = self.services.redactor
        if not req.secrets:
            return base
        secrets = req.secrets
        return lambda text: base(mask_exact(text, secrets))

    def _saved_redactor(self, req: RunRequest) -> Redactor:
        """For saved full outputs: secrets replaced, line numbers kept (hints point into them)."""
        keep = self.services.redactor.redact_keep_lines
        secrets = req.secrets
        return (lambda text: keep(mask_exact(text, secrets))) if secrets else keep

    def _refused(self, req: RunRequest, decision: Decision, view: DecisionView,
                 state: SessionState) -> RunResult:
        redact = self._redactor(req)
        redacted = redact(_shown(req.decided_text))
        audit_id = self.services.audit.append("run.denied", {
            "sandbox": req.ref.name, "command": redacted, "decision": view.model_dump()}, actor=req.actor)
        rules = ", ".join(decision.rule_ids) or decision.source
        why = decision.reason or "the policy refuses it"
        hint = "ask the user to run it outside the sandbox, or use a command the policy allows"
        # the check decides with what this decision used: the session's cwd and changed variables
        session = [f"{k}={v}" if v else k for k, v in sorted(state.env().items())]
        actions = [*soft_deletes(decision.targets, decision.rule_ids, self.services.config.sandbox.workdir),
                   act("policy.check", "to see why", command=redacted, cwd=state.cwd,
                       session_env=[redact(v) for v in session] or None, unattended=req.unattended or None)]
        if len(req.text) > MAX_SHOWN_COMMAND:
            hint, actions = "write it to a script file and run that, or split it into shorter commands", []
        shown = redact(_shown(decision.segment or req.decided_text))
        message = f"{shown} matches {rules} ({why}). Nothing was run."
        # the whole text passes the redactor: a hint may quote what the agent typed
        text = redact(_refusal(POLICY_DENIED.code, message, hint, actions, req.say))
        return RunResult(status="denied", exit_code=None, reason=why, duration_s=0.0, decision=view,
                         sandbox=req.ref.name, audit_id=audit_id, text=text, hint=hint, next=actions)

    def _ask(self, req: RunRequest, decision: Decision, view: DecisionView, cwd: str) -> RunResult:
        redact = self._redactor(req)
        pending = self.services.approvals.request(
            req.decided_text, req.ref.name, cwd, decision.policy_hash,
            DecisionSummary(rule_ids=decision.rule_ids, reason=decision.reason),
            display=redact(req.decided_text))
        human = pending.needs_human
        confirmation = ConfirmationView(
            token=pending.token, reason=decision.reason, rule_ids=list(decision.rule_ids),
            expires_at=iso_time(pending.expires_at), approval="human" if human else "agent")
        audit_id = self.services.audit.append("run.confirmation_required", {
            "sandbox": req.ref.name, "command": redact(req.decided_text), "token": pending.token,
            "decision": view.model_dump(), "approval": confirmation.approval}, actor=req.actor)
        rules = ", ".join(decision.rule_ids) or decision.source
        shown = redact(decision.segment or req.decided_text)
        hint = "" if human else "ask the user"
        secret = redact(req.decided_text) != req.decided_text
        ways = approve_ways(str(self.services.project_dir), self.services.config.approvals) if human else None
        actions = [_confirm_action(req, pending.token, confirmation.approval, holds_secret=secret, ways=ways)]
        message = f"{shown} matches {rules} ({decision.reason}). Nothing was run."
        text = redact(_refusal(ConfirmationRequired.code, message, hint, actions, req.say))
        return RunResult(status="confirmation_required", exit_code=None, reason=decision.reason,
                         duration_s=0.0, decision=view, confirmation=confirmation, sandbox=req.ref.name,
                         audit_id=audit_id, text=text, hint=hint, next=actions)

    def _backup(self, decision: Decision, req: RunRequest) -> list[BackupView]:
        """Copy what a confirmed destructive command targets into the host-side trash, before it runs."""
        out: list[BackupView] = []
        hosts = _host_targets(self.services, decision.targets)
        check_backup_size(hosts, self.services.config.storage.backup_per_command, self.services.project_dir)
        for host in hosts:
            out.extend(self._backup_one(host, req.actor))
        return out

    def _backup_one(self, host: Path, actor: str) -> list[BackupView]:
        trash, root = self.services.trash, self.services.project_dir
        try:
            entry = trash.put(host, workspace=root, move=False, actor=actor)
        except CannotTrashWorkspace:
            return [v for child in sorted(host.iterdir()) for v in self._backup_one(child, actor)]
        except (PathNotFound, PathOutsideWorkspace, SymlinkEscape):
            return []  # nothing there yet, or not the workspace's to keep: nothing to back up
        # any other failure (disk full, unreadable file) propagates: no backup, so the command won't run
        return [BackupView(trash_id=entry.id, path=entry.rel_path)]


def warm_up() -> None:
    """What a command's first big output would pay for (the redactor's numpy and rule gate), done
    ahead: a server calls this once no request waits."""
    # imported here: importing it with this module moved the server's start-up imports about, and a
    # request importing the policy during them could meet a partly imported one (canal.policy)
    from canal.host.redact import warm_up as warm_redactor

    warm_redactor()


def _host_targets(services: Services, targets: Sequence[str]) -> list[Path]:
    """Targets inside the mounted workspace, as host paths. Others live only in the sandbox (tmpfs)."""
    config = services.config
    if config.workspace != "rw":
        return []
    workdir = PurePosixPath(config.sandbox.workdir)
    hosts: list[Path] = []
    for target in targets:
        path = PurePosixPath(os.path.normpath(target))
        if not (path == workdir or path.is_relative_to(workdir)):
            continue
        rel = path.relative_to(workdir).as_posix()
        if glob.has_magic(rel):  # rm -rf /workspace/build/* : back up what the glob names now
            pattern = os.path.join(glob.escape(str(services.project_dir)), rel)
            hosts.extend(Path(p) for p in sorted(glob.glob(pattern)))
        else:
            hosts.append(services.project_dir / rel)
    return hosts


def _checkpoint_view(cp: Checkpoint | None) -> CheckpointView | None:
    if cp is None:
        return None
    return CheckpointView(id=cp.id,
                          not_covered=[NotCoveredView(path=n.path, reason=n.reason) for n in cp.not_covered],
                          not_covered_total=cp.not_covered_total)


def checkpoint_footer(cp: CheckpointView | None, say: Say | None = None, *, notice: bool = True) -> list[str]:
    """Footer parts: ``checkpoint cp-12 (undo: canal undo cp-12)`` (the undo in the front end's words,
    when it has some) and, when ``notice`` (news for the session, runtime.run.notices), how much it did not
    cover."""
    if cp is None:
        return []
    undo = say(act("undo", checkpoint=cp.id)) if say is not None else None
    parts = [f"checkpoint {cp.id}" + (f" (undo: {undo})" if undo else "")]
    if notice and cp.not_covered_total:
        listing = say(act("checkpoints")) if say is not None else None
        parts.append(notices.short(cp) + (f": {listing}" if listing else ""))
    return parts


def backup_lines(backups: Sequence[BackupView], say: Say | None = None) -> list[str]:
    """``[backup of build/: canal restore t2025...]`` for each backup (the restore in the front end's
    words; its trash id otherwise)."""
    lines = []
    for b in backups:
        restore = say(act("restore", trash_id=b.trash_id)) if say is not None else None
        lines.append(f"[backup of {b.path}: {restore or 'trash id ' + b.trash_id}]")
    return lines


def _confirm_action(req: RunRequest, token: str, approval: str, *, holds_secret: bool,
                    ways: dict[str, object] | None = None) -> NextAction:
    """The refused call again with its token. A command that holds a secret is not repeated: the words
    would carry the secret in clear, and a redacted copy would not match the token. ``ways``: how this
    project's approvers can decide it (human approval)."""
    if not isinstance(req.command, str):
        return act("confirm", token=token, approval=approval, call=True, approvers=ways)
    return act("confirm", token=token, approval=approval, sandbox=req.ref.name,
               command=None if holds_secret else req.command, secret=holds_secret or None, approvers=ways,
               task=True if req.task else None, task_options=dict(req.task_options or {}) or None)


def _refusal(code: str, message: str, hint: str, actions: list[NextAction], say: Say | None) -> str:
    """CODE, what happened, and, in the front end's words when it gave some, what to do next."""
    return format_error(code, message, say_all(actions, say, lead=hint) if say is not None else "")


def _status(result: ExecResult) -> Status:
    if result.reason is EndReason.EXITED:
        return "ok" if result.exit_code == 0 else "failed"
    if result.reason in (EndReason.HARD_TIMEOUT, EndReason.IDLE_TIMEOUT):
        return "timeout"
    if result.reason in (EndReason.OOM_KILLED, EndReason.KILLED, EndReason.INTERRUPTED,
                         EndReason.WORKSPACE_QUOTA):
        return "killed"
    return "error"


def _digest(result: ExecResult) -> tuple[int, str]:
    if result.stdout.sha256:  # taken by the sandbox layer as the bytes arrived
        return result.stdout.size, result.stdout.sha256
    sha = hashlib.sha256()
    with result.stdout.open() as fh:
        while chunk := fh.read(1 << 20):
            sha.update(chunk)
    return result.stdout.size, sha.hexdigest()


def _file_owner(services: Services) -> tuple[int, int] | None:
    return uid_gid(sandbox_user(services)) if os.geteuid() == 0 else None


def _decision_view(d: Decision) -> DecisionView:
    return DecisionView(action=d.action, rule_ids=list(d.rule_ids), reasons=list(d.reasons), source=d.source,
                        policy_hash=d.policy_hash)


def _audit_decision(d: Decision) -> AuditDecision:
    return AuditDecision(action=d.action, rule_ids=d.rule_ids, source=d.profile or d.source,
                         policy_hash=d.policy_hash, reason=d.reason)

