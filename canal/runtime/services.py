"""The per-project services, built in one place from the host key store: audit log, approvals, trash,
redactor, sealed store. CLI commands and the Python API both get them from here, lazily."""

from __future__ import annotations

import hashlib
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from canal.host.audit.log import AuditLog, audit_path
from canal.host.forks.record import is_fork
from canal.host.keys import KeyStore
from canal.host.paths import PROJECTS, config_dir, project_key, state_dir_for, state_root
from canal.runtime.sandboxes.resources import Owned, Resources
from canal.runtime.settings.config import CanalConfig, with_profile
from canal.runtime.trust import TrustedConfig, policy_file_path
from canal.runtime.trust.snapshot import Snapshot, read_policy_text

# What the settings' approval check needs is imported above; each other store when it is first built
# (a project's first command checks its settings and starts its sandbox before it needs them).
if TYPE_CHECKING:
    from canal.host.approvals import ApprovalService
    from canal.host.checkpoints import CheckpointStore
    from canal.host.forks import ForkStore
    from canal.host.redact import Redactor
    from canal.host.sealed.store import SealedStore
    from canal.host.trash.store import Trash
    from canal.policy.parser_cache import VerifiedMarks
    from canal.runtime.sandboxes.egress import EgressRecorder

AUDIT_PURPOSE = "audit-hmac"
APPROVAL_PURPOSE = "approval-hmac"
TRUST_PURPOSE = "config-trust-hmac"
CHECKPOINT_PURPOSE = "checkpoint-hmac"
POLICY_PURPOSE = "policy-verified-hmac"
VERIFIED = "policy-verified"

# Folders of the state dir that no sandbox may ever see. outputs/<sandbox> is the one deliberate,
# read-only exception: each sandbox sees its own full outputs and nothing else.
OUTPUTS = "outputs"
FORKS = "forks"
# What only a run that wrote audit records can leave behind: with any of these, a missing or empty log
# is a deleted log, not a new project.
HISTORY_GLOBS = ("state/*.json", "trash/info/*.json", "approvals/*.json", "audit/revisions.json",
                 f"{OUTPUTS}/*/*")


class Services:
    """Everything host-side that belongs to one project. Cheap to make; each part is built on first use."""

    def __init__(self, project_dir: Path, *, config: CanalConfig | None = None,
                 keys: KeyStore | None = None, profile: str | None = None,
                 resources: Resources | None = None) -> None:
        """``resources``: the set its checkpoint store and warm pools come from (``Canal`` passes its
        own); without one, a plain store and no pools."""
        self.project_dir = project_dir.resolve()
        self.resources = Owned() if resources is None else resources
        self._config = config
        self._keys = keys
        # where the state, settings and keys are: read once, now (a variable changed later by the
        # process moves nothing of this object's)
        self.state_root = state_root()
        self.config_dir = config_dir()
        self._env = dict(os.environ)
        self._profile = profile

    @property
    def config_given(self) -> bool:
        """True when the configuration was given in code (not read from canal.yaml and its approval)."""
        return self._config is not None

    @cached_property
    def config(self) -> CanalConfig:
        """The configuration in force: the one given in code, else canal.yaml once a person approved it
        (or the defaults), with ``profile`` tightening its policy. Read once per object, so a long-lived
        server keeps what it started with."""
        config = with_profile(self._settings[0], self._profile)
        if config.audit.otlp is not None:  # from now on, records go to the collector too
            from canal.host.audit.shipper import shipper_for

            shipper = shipper_for(self.audit.path, config.audit.otlp, self.project_id)
            self.audit.listeners.append(shipper.notify)
        return config

    @cached_property
    def _settings(self) -> tuple[CanalConfig, dict[str, str] | None]:
        """(configuration, rule file as written -> the text checked and approved; None: given in code)."""
        snap = self.approved_snapshot
        if snap is None:
            assert self._config is not None
            return self._config, None
        return snap.config, snap.policy_texts

    @cached_property
    def approved_snapshot(self) -> Snapshot | None:
        """The settings as checked against the approval, once per object (None: given in code); its
        ``settings`` hold the approved digests of the files they name (CA files, MCP servers' files)."""
        return None if self._config is not None else self.trust.require_snapshot()

    def sources(self) -> list[Path] | None:
        """Every file this object's settings, approval and keys were read from, present or not, the
        project folder first; None for settings given in code. Reads the settings (and so raises what
        reading them raises): a long-lived server keeps the object while none of these changed."""
        snap = self.approved_snapshot
        if snap is None:
            return None
        return [self.project_dir, *snap.sources, *self.trust.sources(), *self.keys.sources()]

    @cached_property
    def policy_texts(self) -> dict[Path, str]:
        """Each rule file of the configuration in force -> its text: exactly the bytes read when the
        settings were checked against the approval (one read: a file swapped since cannot slip in); for
        a configuration given in code, read now, once, the same safe way (inside the project, no link)."""
        config, approved = self._settings
        out: dict[Path, str] = {}
        for name in config.policy.files:
            text = (approved or {}).get(str(name))
            if text is None:
                text = read_policy_text(policy_file_path(self.project_dir, name))[1]
            out[self.project_dir / name] = text
        return out

    @cached_property
    def trust(self) -> TrustedConfig:
        key = self.keys.derive(TRUST_PURPOSE)
        earlier = [k for k in self.keys.derive_all(TRUST_PURPOSE).values() if k != key]
        return TrustedConfig(self.project_dir, self.state_dir, key, self.audit, earlier_keys=earlier)

    @cached_property
    def verified_policies(self) -> VerifiedMarks:
        """Marks of the policies whose inline examples passed (``canal.policy.parser_cache``), under a key of
        the user's: in the private cache folder, shared by every project (a new project's first command
        runs no example another project's already passed), else in this project's state folder."""
        from canal.policy.parser_cache import VerifiedMarks, cache_dir

        folder = cache_dir()
        root = folder / VERIFIED if folder is not None else self.state_dir / VERIFIED
        return VerifiedMarks(root, self.keys.derive(POLICY_PURPOSE))

    @cached_property
    def state_dir(self) -> Path:
        return state_dir_for(self.project_dir, self.state_root)

    @cached_property
    def keys(self) -> KeyStore:
        return self._keys or KeyStore(self.config_dir / "keys", env=self._env)

    @cached_property
    def redactor(self) -> Redactor:
        from canal.host.redact import Redactor

        return Redactor.from_keys(self.keys)

    @cached_property
    def audit(self) -> AuditLog:
        keys = self.keys
        # the redactor is compiled when the first record is written (a settings check writes none)
        return AuditLog(audit_path(self.state_dir), keys.derive(AUDIT_PURPOSE), keys.primary_id,
                        redact=lambda text: self.redactor(text), earlier_keys=keys.derive_all(AUDIT_PURPOSE),
                        project_id=self.project_id)

    @cached_property
    def project_id(self) -> str:
        """The id the audit log's first record names (the project folder's name and path hash)."""
        return project_key(self.project_dir)

    def has_history(self) -> bool:
        """True when the state folder holds anything a run records in the audit log."""
        return any(next(self.state_dir.glob(pattern), None) is not None for pattern in HISTORY_GLOBS)

    @cached_property
    def egress(self) -> EgressRecorder:
        """Egress attempts of allowlist sandboxes, recorded in the audit log."""
        from canal.runtime.sandboxes.egress import EgressRecorder

        return EgressRecorder(self.state_dir, self.audit)

    @cached_property
    def approvals(self) -> ApprovalService:
        from canal.host.approvals import ApprovalService

        settings = self.config.policy
        return ApprovalService(self.state_dir, self.keys.derive(APPROVAL_PURPOSE), ttl_s=settings.token_ttl_s,
                               mode=settings.approval, redact=self.redactor, audit=self.audit,
                               settings=self.config.approvals, project_id=self.project_id)

    @cached_property
    def trash(self) -> Trash:
        from canal.host.trash.store import Trash

        return Trash(self.state_dir / "trash", self.audit, max_total=self.config.storage.trash_total)

    @cached_property
    def sealed(self) -> SealedStore:
        """Sealed JSON documents (workflow runs and other host state); revisions recorded in the audit log."""
        from canal.host.sealed.store import SealedStore

        return SealedStore(self.state_dir / "state", self.keys, self.audit, redactor=self.redactor)

    @cached_property
    def checkpoints(self) -> CheckpointStore:
        """The workspace's checkpoints (host-side, outside every mount); records HMAC'd with a host key.
        The server's resources keep one store per project as long as the server lives: its stat cache
        and its workspace watch make a checkpoint where nothing changed cost no walk."""
        from canal.host.checkpoints import CheckpointStore, Keys

        keys = self.keys
        derived = keys.derive_all(CHECKPOINT_PURPOSE)
        settings = self.config.checkpoints
        root = self.state_dir / "checkpoints"
        key = (str(root), str(self.project_dir), settings.model_dump_json(), keys.primary_id,
               tuple(sorted((k, hashlib.sha256(v).hexdigest()) for k, v in derived.items())))
        audit = self.audit

        def retired(ids: list[str]) -> None:  # before they go: every prune is in the audit log
            audit.append("checkpoint.pruned", {"pruned": ids, "by": "retention"}, actor="canal")

        return self.resources.checkpoints(key, lambda watch: CheckpointStore(
            root, self.project_dir, settings, Keys(keys.primary_id, derived), watch=watch, on_prune=retired))

    @cached_property
    def forks(self) -> ForkStore:
        """Forks of the project: copy-on-write workspaces for autonomous subagents."""
        from canal.host.forks import ForkStore

        return ForkStore(self.state_dir / FORKS, self.checkpoints,
                         protected=lambda: [self.state_dir, *self.protected_paths()])

    def is_fork(self, sandbox: str) -> bool:
        """True when ``sandbox`` is one of the project's forks (the fork store is not built for it)."""
        return is_fork(self.state_dir / FORKS, sandbox)

    def outputs_dir(self, sandbox: str) -> Path:
        return self.state_dir / OUTPUTS / sandbox

    def protected_paths(self) -> list[Path]:
        """Host folders no sandbox mount may touch: keys and every state folder but outputs."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        inner = [p for p in self.state_dir.iterdir() if p.name not in (OUTPUTS, FORKS)]
        # a fork's merged workspace is its sandbox's /workspace; everything else of the fork is not
        forks = self.state_dir / FORKS
        inner += [part for fork in (forks.iterdir() if forks.is_dir() else ()) if fork.is_dir()
                  for part in fork.iterdir() if part.name != "merged"]
        fixed = [self.state_dir / name for name in ("audit", "trash", "approvals", "state", "checkpoints")]
        return [self.config_dir, *fixed, *inner]

    def all_state_dirs(self) -> list[Path]:
        """This project's state folder and every other project's under the state root that holds
        sealed state."""
        return sorted({self.state_dir, *(p for p in self.project_state_dirs() if (p / "state").is_dir())})

    def project_state_dirs(self) -> list[Path]:
        """Every project's folder under the state root, whatever it holds (this one's included)."""
        projects = self.state_root / PROJECTS
        found = {self.state_dir}
        if projects.is_dir():
            found.update(p for p in projects.iterdir() if p.is_dir())
        return sorted(found)


def sealed_store_for(state_dir: Path, keys: KeyStore, project_id: str | None = None) -> SealedStore:
    """The sealed store of any project's state folder, with its audit log as the revision ledger.
    Under the state root the state folder's name is the project id."""
    from canal.host.sealed.store import SealedStore

    if project_id is None and state_dir.parent == state_root() / PROJECTS:
        project_id = state_dir.name
    ledger = AuditLog(audit_path(state_dir), keys.derive(AUDIT_PURPOSE), keys.primary_id,
                      earlier_keys=keys.derive_all(AUDIT_PURPOSE), project_id=project_id)
    return SealedStore(state_dir / "state", keys, ledger)
