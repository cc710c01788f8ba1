"""Forks: a sandbox whose /workspace is a copy-on-write view of the project at one checkpoint, for
autonomous subagents. Its changes come back as a patch; ``apply`` carries them to the real project
through the confirmation flow. See docs/checkpoints.md#forks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from canal.core.lazy import exports

if TYPE_CHECKING:
    from canal.host.forks.errors import (
        FORK_CONFLICT,
        FORK_EXISTS,
        FORK_NOT_FOUND,
        FORK_OF_FORK,
        FORK_UNSUPPORTED,
        ForkError,
    )
    from canal.host.forks.models import ApplyResult, Conflict, Fork, ForkChanges
    from canal.host.forks.store import ForkStore

__all__ = [
           "FORK_CONFLICT",
           "FORK_EXISTS",
           "FORK_NOT_FOUND",
           "FORK_OF_FORK",
           "FORK_UNSUPPORTED",
           "ApplyResult",
           "Conflict",
           "Fork",
           "ForkChanges",
           "ForkError",
           "ForkStore",
]

# each name is imported from its module when first used (canal.core.lazy)
__getattr__ = exports(__name__, {
    ".errors": (
        "FORK_CONFLICT", "FORK_EXISTS", "FORK_NOT_FOUND", "FORK_OF_FORK", "FORK_UNSUPPORTED", "ForkError",
    ),
    ".models": ("ApplyResult", "Conflict", "Fork", "ForkChanges"),
    ".store": ("ForkStore",),
})
