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


class CheckpointPruned(CheckpointNotFound):
    """That checkpoint was pruned by retention (older than the oldest kept); nothing was restored."""

    code = "CHECKPOINT_PRUNED"


class NothingToUndo(CheckpointError):
    """``undo`` with no checkpoint named found none after which anything changed; nothing was restored."""

    code = "NOTHING_TO_UNDO"
    exit_code = ExitCode.USAGE


class CheckpointStoreFull(CheckpointError):
    """The checkpoint store would go past ``max_store_bytes``, and every checkpoint it could drop is inside
    the retention floor or pinned; the command did not run and no older checkpoint was dropped."""

    code = "CHECKPOINT_STORE_FULL"


class PruneRefused(CheckpointError):
    """Pruning inside the retention floor is a person's act (at a terminal); nothing was pruned."""

    code = "CHECKPOINT_PRUNE_REFUSED"
    exit_code = ExitCode.USAGE
