"""The project file ``canal.yaml``: validated once at load; unknown keys are errors that name the line.

Example::

    sandbox:
      image: canal/sandbox:0.1.0
      user: auto             # the project folder's owner (1000:1000 when root owns it)
      network: none
      limits: {memory: 1g, cpus: 1, pids: 256}
    workspace: rw            # rw | ro | none: the project folder at /workspace
    policy:
      profile: standard      # standard | strict
      files: []              # extra rule files, relative to the project
      approval: agent        # agent | human (an approver must approve: docs/approvals.md)
    approvals:
      approvers:             # who may approve, and how they prove it (a terminal never counts)
        - {name: alice, user: alice, ssh_key: "ssh-ed25519 AAAA... alice@laptop"}
    audit:
      otlp: {endpoint: "http://127.0.0.1:4318"}   # send run, approval and config records (docs/audit.md)
    timeouts: {command: 120, idle: 60}
    tasks: {max_running: 4, timeout: 3600, output_cap: 64m}   # background tasks, docs/tasks.md
    limits: {sandboxes: 8}   # sandboxes of the project running at once (forks included)
    presenter: {max_lines: 200}
    checkpoints: {exclude: [data/], max_file_bytes: 67108864, keep: 100}   # docs/checkpoints.md
    # behind a corporate network (docs/images.md, docs/egress.md): sandbox.ca_certificates: [host],
    # sandbox.network.upstream_proxy: http://proxy.example.com:3128, image.index_url: https://...
    tools:                   # MCP backends whose tools canal discover lists (docs/tools.md)
      mcp_servers: {backend: {command: [python3, mcp/backend.py]}}
    unattended: false        # confirm becomes deny
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from canal.core.errors import SettingRefused
from canal.host.approvals.identities import ApprovalsSettings
from canal.host.audit.otlp import OtlpSettings
from canal.host.checkpoints.settings import CheckpointSettings
from canal.host.storage.limits import StorageLimits
from canal.presenter import PresenterConfig
from canal.runtime.corpnet.errors import CODED
from canal.runtime.errors import PROFILE_LOOSER_THAN_PROJECT, ConfigError
from canal.runtime.settings.config_hints import unknown_key_hint
from canal.runtime.settings.mcp_servers import ToolsSettings
from canal.runtime.settings.project import CONFIG_NAME
from canal.runtime.settings.safeyaml import load_yaml
from canal.sandbox.docker.project_image import ProjectImage, mirror_entry
from canal.sandbox.spec import Bytes, SandboxSpec


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PolicySettings(_Model):
    profile: Literal["standard", "strict"] = "standard"
    files: tuple[Path, ...] = ()
    approval: Literal["agent", "human"] = "agent"
    token_ttl_s: int = Field(default=600, ge=10, le=24 * 3600)


class Timeouts(_Model):
    command: float = Field(default=120.0, gt=0)
    idle: float | None = Field(default=None, gt=0)


class AuditSettings(_Model):
    otlp: OtlpSettings | None = None  # an OpenTelemetry collector that gets a copy of the records


class TaskSettings(_Model):
    """Background tasks (``canal task start``): docs/tasks.md."""

    max_running: int = Field(default=4, ge=1, le=64)  # at once, per sandbox
    timeout: float = Field(default=3600.0, gt=0, le=7 * 24 * 3600)  # default hard timeout, seconds
    output_cap: Bytes = 64 * 1024**2  # output kept per task; past it the task runs on, unrecorded


class ProjectLimits(_Model):
    """Limits over the whole project (a sandbox's own are ``sandbox.limits``): docs/config.md."""

    sandboxes: int = Field(default=8, ge=1, le=64)  # running at once, forks included


class CanalConfig(_Model):
    # user "auto": the project folder's owner (the image's agent, 1000:1000, when root owns it)
    sandbox: SandboxSpec = SandboxSpec(user="auto")
    workspace: Literal["rw", "ro", "none"] = "rw"
    policy: PolicySettings = PolicySettings()
    approvals: ApprovalsSettings = ApprovalsSettings()
    audit: AuditSettings = AuditSettings()
    timeouts: Timeouts = Timeouts()
    tasks: TaskSettings = TaskSettings()
    limits: ProjectLimits = ProjectLimits()
    presenter: PresenterConfig = PresenterConfig()
    checkpoints: CheckpointSettings = CheckpointSettings()
    storage: StorageLimits = StorageLimits()
    unattended: bool = False
    # what the project's sandbox image adds to sandbox.image (docs/images.md)
    image: ProjectImage = ProjectImage()
    # host folders a person allows extra mounts from (besides the project); see canal.runtime.settings.mounts
    mount_roots: tuple[Path, ...] = ()
    # tools from MCP backends (tools.mcp_servers; docs/tools.md)
    tools: ToolsSettings = ToolsSettings()

    @field_validator("sandbox", mode="before")
    @classmethod
    def _auto_user(cls, value: Any) -> Any:
        """A sandbox section that names no user gets ``auto`` too, like no section at all."""
        if isinstance(value, dict) and "user" not in value:
            return {**value, "user": "auto"}
        return value

    @model_validator(mode="before")
    @classmethod
    def _mirrors_allowed(cls, data: Any) -> Any:
        """``sandbox.network.allow_mirrors: true`` adds the hosts of ``image.index_url`` and
        ``image.npm_registry`` to the allowlist, as entries a person sees when approving."""
        network = data.get("sandbox", {}).get("network") if isinstance(data, dict) else None
        image = data.get("image") if isinstance(data, dict) else None
        if not isinstance(network, dict) or network.get("allow_mirrors") is not True \
                or not isinstance(image, dict) or not isinstance(network.get("allow", []), list):
            return data
        allow = list(network.get("allow", []))
        for name in ("index_url", "npm_registry"):
            url = image.get(name)
            if isinstance(url, str) and url.startswith("https://"):
                entry = mirror_entry(url)
                if entry not in allow:
                    allow.append(entry)
        return {**data, "sandbox": {**data["sandbox"], "network": {**network, "allow": allow}}}


def _line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """Walk the composed YAML tree along a pydantic error location; the deepest line found."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = [(k, v) for k, v in node.value if k.value == part]
            if not match:
                return line
            key, node = match[0]
            line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def parse_config(text: str, source: str = CONFIG_NAME) -> CanalConfig:
    data, tree = load_yaml(text, source)
    try:
        return CanalConfig.model_validate(data or {})
    except ValidationError as exc:
        problems, coded = [], []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            line = _line_of(tree, tuple(err["loc"]))
            unknown = err["type"] == "extra_forbidden"
            hint = unknown_key_hint(CanalConfig, tuple(err["loc"])) if unknown else ""
            problems.append(f"{source}:{line or '?'}: {where}: {err['msg']}" + (f" ({hint})" if hint else ""))
            refused = (err.get("ctx") or {}).get("error")
            if isinstance(refused, SettingRefused) and refused.code in CODED:
                coded.append((CODED[refused.code], where, line, str(refused)))
        msg = "Invalid configuration:\n" + "\n".join(problems)
        details = {"file": source, "errors": problems}
        if coded:  # a setting refused with a code of its own: that code, naming the setting and the line
            cls, where, line, why = coded[0]
            refusal = f"{source}:{line or '?'}: {why}; nothing was approved or run."
            raise cls(refusal, hint=f"edit {source} (see docs/config.md), then re-run",
                      details={**details, "setting": where}) from None
        raise ConfigError(msg, hint=f"edit {source} (see docs/config.md), then re-run",
                          details=details) from None


STRICTNESS = {"standard": 0, "strict": 1}


def with_profile(config: CanalConfig, profile: str | None) -> CanalConfig:
    """``config`` with the policy ``profile`` instead of its own: it may tighten the policy, not loosen it."""
    if profile is None:
        return config
    current = config.policy.profile
    if STRICTNESS[profile] < STRICTNESS[current]:
        msg = f"profile {profile} is looser than this project's policy profile {current} (canal.yaml)"
        raise PROFILE_LOOSER_THAN_PROJECT(msg, hint=f"use profile {current} or stricter, or change "
                                          "policy.profile in canal.yaml",
                                          details={"profile": profile, "project_profile": current})
    return config.model_copy(update={"policy": config.policy.model_copy(update={"profile": profile})})
