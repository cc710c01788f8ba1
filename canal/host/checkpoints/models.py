"""What the checkpoint store returns: records, changes and what a checkpoint did not cover.

These are the shapes ``--json`` prints and the Python API returns.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["run", "undo", "file", "workflow", "tool", "apply", "fork", "manual"]
ChangeKind = Literal["added", "modified", "deleted", "mode", "type", "symlink"]
SHOWN_NOT_COVERED = 50  # a record keeps the first N paths it left out, and the total


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NotCovered(_Model):
    path: str
    reason: str


class Change(_Model):
    """One path that differs between two states (a checkpoint, another, or the workspace now)."""

    path: str
    kind: ChangeKind
    detail: str = ""  # e.g. "mode 0644 -> 0755", "-> ../target", "file -> folder"
    binary: bool = False


class ChangeSummary(_Model):
    added: int = 0
    modified: int = 0
    deleted: int = 0
    paths: list[str] = Field(default_factory=list)  # the first few, for a listing

    @property
    def total(self) -> int:
        return self.added + self.modified + self.deleted


class Checkpoint(_Model):
    version: Literal[1] = 1
    id: str
    seq: int
    created_at: str
    kind: Kind
    command: str = ""  # redacted text of the command that followed
    actor: str = ""
    audit_id: str | None = None  # the audit record of what followed
    manifest: str
    files: int
    bytes: int
    added_bytes: int = 0
    changes: ChangeSummary = ChangeSummary()  # since the previous checkpoint
    not_covered: list[NotCovered] = Field(default_factory=list)
    not_covered_total: int = 0
    note: str = ""
    # taken before a command the policy saw as destructive or could not read: outside the floor it goes
    # only by age (keep_days), never by count or the store's size
    pinned: bool = False
    # every path left out as over the size cap (or unreadable): undo never deletes what it has no copy of
    uncovered: list[str] = Field(default_factory=list)
    key_id: str = ""
    hmac: str = ""


class HistoryRow(_Model):
    """One line of ``canal checkpoints``: the checkpoint and what changed after it (by the command that
    followed, and anything else until the next checkpoint; for the newest, until now)."""

    checkpoint: Checkpoint
    changed_after: ChangeSummary


class CorruptRecord(_Model):
    """A checkpoint record that failed its check: named, never listed as a checkpoint, never restored
    from."""

    id: str  # cp-N, from the record's file name
    record: str  # its file name under records/
    why: str


class History(_Model):
    """``canal checkpoints``: the kept checkpoints that verify, oldest first, and the records that do not
    (of the newest only, when a limit was given: ``older`` counts the records not read)."""

    rows: list[HistoryRow]
    corrupt: list[CorruptRecord] = Field(default_factory=list)
    older: int = 0  # kept records older than the rows, not read (a listing of the newest only)


class UndoResult(_Model):
    status: Literal["restored"] = "restored"
    restored_to: str  # the checkpoint id
    before_undo: str  # the checkpoint taken first: `canal undo <it>` reverts this undo
    changes: list[Change]
    left_alone: list[NotCovered] = Field(default_factory=list)  # not covered, so not touched
    stripped: list[str] = Field(default_factory=list)  # restored without their setuid/setgid bits
    command: str = ""  # the command that followed the checkpoint restored to: what this undid
    kind: Kind = "run"  # that checkpoint's kind
    skipped: list[str] = Field(default_factory=list)  # newer checkpoints after which nothing changed


class DiffResult(_Model):
    checkpoint: str
    against: str  # "workspace" or a checkpoint id
    changes: list[Change]
    patch: str  # unified diff of text files; binary, mode, symlink and deletion lines in changes
    truncated: bool = False
