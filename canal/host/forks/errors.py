"""Errors of forks. Codes are public API (pinned by a test)."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class ForkError(CanalError):
    code = "FORK_ERROR"


class ForkNotFound(ForkError):
    """No fork has that name."""

    code = "FORK_NOT_FOUND"
    exit_code = ExitCode.USAGE


class ForkExists(ForkError):
    """A fork (or the project's own sandbox) already has that name."""

    code = "FORK_EXISTS"
    exit_code = ExitCode.USAGE


class ForkOfFork(ForkError):
    """A fork is made from the project (now, or a checkpoint of it), never from another fork."""

    code = "FORK_OF_FORK"
    exit_code = ExitCode.USAGE


class ForkConflict(ForkError):
    """The real project changed, since the fork was made, at paths the fork also changed; nothing was
    applied."""

    code = "FORK_CONFLICT"


class ForkUnsupported(ForkError):
    """This host cannot give a fork its copy-on-write workspace (kernel overlayfs needs root)."""

    code = "FORK_UNSUPPORTED"


class ForkNoSpace(ForkError):
    """The project's paths no checkpoint holds (gitignored folders, files over the size cap) do not fit the
    state disk for the fork's copy of them; nothing was made."""

    code = "FORK_NO_SPACE"
