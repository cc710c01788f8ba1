"""Errors of the checkpoint store. Codes are public API (pinned by a test)."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


class CheckpointError(CanalError):
    code = "CHECKPOINT_ERROR"


CHECKPOINT_NOT_FOUND = register(CheckpointError, "CHECKPOINT_NOT_FOUND", """
    No checkpoint has that id (never taken, or pruned by retention).
    """, exit_code=ExitCode.USAGE)


CHECKPOINT_FAILED = register(CheckpointError, "CHECKPOINT_FAILED", """
    A checkpoint could not be written (disk full, store unwritable, file unreadable); the command that
    needed it did not run.
    """)


class CheckpointStoreCorrupt(CheckpointError):
    """A checkpoint record, manifest or stored file fails its check (corrupt or tampered); nothing was
    restored from it."""

    code = "CHECKPOINT_STORE_CORRUPT"


WORKSPACE_TOO_BIG = register(CheckpointError, "WORKSPACE_TOO_BIG", """
    The workspace exceeds the checkpoint caps (files or bytes); nothing ran unprotected.
    """, exit_code=ExitCode.USAGE)

CHECKPOINT_PRUNED = register(CheckpointError, "CHECKPOINT_PRUNED", """
    That checkpoint was pruned by retention (older than the oldest kept); nothing was restored.
    """, exit_code=ExitCode.USAGE)

NOTHING_TO_UNDO = register(CheckpointError, "NOTHING_TO_UNDO", """
    ``undo`` with no checkpoint named found none after which anything changed; nothing was restored.
    """, exit_code=ExitCode.USAGE)

CHECKPOINT_STORE_FULL = register(CheckpointError, "CHECKPOINT_STORE_FULL", """
    The checkpoint store would go past ``max_store_bytes``, and every checkpoint it could drop is inside
    the retention floor or pinned; the command did not run and no older checkpoint was dropped.
    """)

CHECKPOINT_LIMIT_INVALID = register(CheckpointError, "CHECKPOINT_LIMIT_INVALID", """
    A listing of checkpoints was asked for fewer than one (``limit``); nothing was read.
    """, exit_code=ExitCode.USAGE)

CHECKPOINT_PRUNE_REFUSED = register(CheckpointError, "CHECKPOINT_PRUNE_REFUSED", """
    Pruning inside the retention floor is a person's act (at a terminal); nothing was pruned.
    """, exit_code=ExitCode.USAGE)
