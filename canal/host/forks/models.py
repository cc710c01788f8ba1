"""What forks return: the fork record, its changes, and an apply."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from canal.host.checkpoints.models import Change, NotCovered


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fork(_Model):
    version: Literal[1] = 1
    name: str
    base: str  # the checkpoint of the project the fork started from
    manifest: str  # that checkpoint's manifest
    created_at: str
    mode: Literal["overlay", "copy"]
    note: str = ""  # why a fork is a full copy rather than copy-on-write
    # the working tree's paths no checkpoint holds (.venv, node_modules, files over the cap): hard links
    # under the copy-on-write layer, or a copy; never written back to the project
    ignored: Literal["linked", "copied", "none"] = "none"
    ignored_files: int = 0
    ignored_bytes: int = 0
    key_id: str = ""
    hmac: str = ""


class ForkChanges(_Model):
    fork: str
    base: str
    changes: list[Change]
    patch: str  # git-apply-compatible, text files only; the rest are lines in `changes`
    not_carried: list[NotCovered] = Field(default_factory=list)  # in the fork, but apply cannot carry it


class Conflict(_Model):
    path: str
    fork: str  # what the fork did there
    project: str  # what changed in the real project since the fork


class ApplyResult(_Model):
    status: Literal["applied"] = "applied"
    fork: str
    applied: list[Change]
    checkpoint: str  # taken first: `canal undo <it>` reverts the apply
    left_alone: list[NotCovered] = Field(default_factory=list)
    stripped: list[str] = Field(default_factory=list)  # written without their setuid/setgid bits
