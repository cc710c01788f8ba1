"""Errors of the sandbox layer. Every ``docker.errors`` exception is translated into one of these.

Each class has a stable UPPER_SNAKE ``code`` (public API) and a process ``exit_code``; the message
says what happened, ``hint`` the next command to run, ``details`` the same for ``--json``.
"""

from __future__ import annotations

from typing import ClassVar

from canal.core.errors import CanalError


class SandboxError(CanalError):
    code: ClassVar[str] = "SANDBOX_ERROR"
    exit_code: ClassVar[int] = 125


class EngineUnavailable(SandboxError):
    code = "ENGINE_UNAVAILABLE"


class ImageNotFound(SandboxError):
    code = "IMAGE_NOT_FOUND"


class ImageBuildFailed(SandboxError):
    code = "IMAGE_BUILD_FAILED"


class SpecInvalid(SandboxError):
    """A sandbox spec asks for something that cannot be honoured safely or at all."""

    code = "SANDBOX_SPEC_INVALID"
    exit_code = 2


class MountRefused(SpecInvalid):
    """A mount would expose the host: the Docker socket, a system folder, or Canal's own state."""

    code = "MOUNT_REFUSED"


class RuntimeUnknown(SpecInvalid):
    """The spec names a container runtime the engine does not have."""

    code = "RUNTIME_UNKNOWN"


class RuntimeFailed(SandboxError):
    """The container runtime refused to start a sandbox the engine accepted (a runsc that cannot run
    this kind of sandbox on this host, for example)."""

    code = "RUNTIME_FAILED"


class EgressProxyFailed(SandboxError):
    """The egress proxy of an allowlist sandbox did not start; the sandbox was not started either (never
    with a wider network instead)."""

    code = "EGRESS_PROXY_FAILED"


class SandboxNotFound(SandboxError):
    code = "SANDBOX_NOT_FOUND"


class SandboxExists(SandboxError):
    code = "SANDBOX_EXISTS"


class SandboxNotRunning(SandboxError):
    code = "SANDBOX_NOT_RUNNING"


class FileTransferRefused(SandboxError):
    """A put or get of files was too large or named a path outside what is allowed."""

    code = "FILE_TRANSFER_REFUSED"
    exit_code = 2


class SessionFailed(SandboxError):
    """The in-container session could not be started or answered with something unreadable."""

    code = "SESSION_FAILED"


class EngineError(SandboxError):
    """The engine refused or failed a request (any docker API error without a more precise class)."""

    code = "ENGINE_ERROR"


class TaskStartFailed(SandboxError):
    """A background task could not be started (the session moved, or its background agent failed)."""

    code = "TASK_START_FAILED"


class UpstreamCredentialsUnusable(SandboxError):
    """The upstream proxy's credentials (``CANAL_UPSTREAM_PROXY_CREDENTIALS`` or the file
    ``CANAL_UPSTREAM_PROXY_CREDENTIALS_FILE`` names) cannot be used: unreadable, open to others, or not
    ``user:password``. Nothing was started or built."""

    code = "UPSTREAM_PROXY_CREDENTIALS_UNUSABLE"
    exit_code = 2
