"""Errors of forks. Codes are public API (pinned by a test)."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


class ForkError(CanalError):
    code = "FORK_ERROR"


FORK_NOT_FOUND = register(ForkError, "FORK_NOT_FOUND", """No fork has that name.""", exit_code=ExitCode.USAGE)

FORK_EXISTS = register(ForkError, "FORK_EXISTS", """
    A fork (or the project's own sandbox) already has that name.
    """, exit_code=ExitCode.USAGE)

FORK_OF_FORK = register(ForkError, "FORK_OF_FORK", """
    A fork is made from the project (now, or a checkpoint of it), never from another fork.
    """, exit_code=ExitCode.USAGE)

FORK_CONFLICT = register(ForkError, "FORK_CONFLICT", """
    The real project changed, since the fork was made, at paths the fork also changed; nothing was
    applied.
    """)

FORK_UNSUPPORTED = register(ForkError, "FORK_UNSUPPORTED", """
    This host cannot give a fork its copy-on-write workspace (kernel overlayfs needs root).
    """)

FORK_NO_SPACE = register(ForkError, "FORK_NO_SPACE", """
    The project's paths no checkpoint holds (gitignored folders, files over the size cap) do not fit the
    state disk for the fork's copy of them; nothing was made.
    """)
