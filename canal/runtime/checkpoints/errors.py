"""Errors of the checkpoint store. Codes are public API (pinned by a test)."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class CheckpointError(CanalError):
    code = "CHECKPOINT_ERROR"


class CheckpointNotFound(CheckpointError):
    """No checkpoint has that id (never taken, or pruned by retention)."""

    code = "CHECKPOINT_NOT_FOUND"
    exit_code = ExitCode.USAGE


class CheckpointFailed(CheckpointError):
    """A checkpoint could not be written (disk full, store unwritable, file unreadable); the command that
    needed it did not run."""

    code = "CHECKPOINT_FAILED"


class CheckpointStoreCorrupt(CheckpointError):
    """A checkpoint record, manifest or stored file fails its check (corrupt or tampered); nothing was
    restored from it."""

    code = "CHECKPOINT_STORE_CORRUPT"


class WorkspaceTooBig(CheckpointError):
    """The workspace exceeds the checkpoint caps (files or bytes); nothing ran unprotected."""

    code = "WORKSPACE_TOO_BIG"
    exit_code = ExitCode.USAGE
