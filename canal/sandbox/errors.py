"""Errors of the sandbox layer. Every ``docker.errors`` exception is translated into one of these.

Each class has a stable UPPER_SNAKE ``code`` (public API) and a process ``exit_code``; the message
says what happened, ``hint`` the next command to run, ``details`` the same for ``--json``.
"""

from __future__ import annotations

from canal.core.errors import CanalError, register


class SandboxError(CanalError):
    code = "SANDBOX_ERROR"
    exit_code = 125


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


MOUNT_REFUSED = register(SpecInvalid, "MOUNT_REFUSED", """
    A mount would expose the host: the Docker socket, a system folder, or Canal's own state.
    """)

RUNTIME_UNKNOWN = register(SpecInvalid, "RUNTIME_UNKNOWN", """
    The spec names a container runtime the engine does not have.
    """)

RUNTIME_FAILED = register(SandboxError, "RUNTIME_FAILED", """
    The container runtime refused to start a sandbox the engine accepted (a runsc that cannot run
    this kind of sandbox on this host, for example).
    """)

EGRESS_PROXY_FAILED = register(SandboxError, "EGRESS_PROXY_FAILED", """
    The egress proxy of an allowlist sandbox did not start; the sandbox was not started either (never
    with a wider network instead).
    """)


class SandboxNotFound(SandboxError):
    code = "SANDBOX_NOT_FOUND"


class SandboxExists(SandboxError):
    code = "SANDBOX_EXISTS"


class SandboxNotRunning(SandboxError):
    code = "SANDBOX_NOT_RUNNING"


FILE_TRANSFER_REFUSED = register(SandboxError, "FILE_TRANSFER_REFUSED", """
    A put or get of files was too large or named a path outside what is allowed.
    """, exit_code=2)

SESSION_FAILED = register(SandboxError, "SESSION_FAILED", """
    The in-container session could not be started or answered with something unreadable.
    """)


class EngineError(SandboxError):
    """The engine refused or failed a request (any docker API error without a more precise class)."""

    code = "ENGINE_ERROR"


TASK_START_FAILED = register(SandboxError, "TASK_START_FAILED", """
    A background task could not be started (the session moved, or its background agent failed).
    """)

UPSTREAM_PROXY_CREDENTIALS_UNUSABLE = register(SandboxError, "UPSTREAM_PROXY_CREDENTIALS_UNUSABLE", """
    The upstream proxy's credentials (``CANAL_UPSTREAM_PROXY_CREDENTIALS`` or the file
    ``CANAL_UPSTREAM_PROXY_CREDENTIALS_FILE`` names) cannot be used: unreadable, open to others, or not
    ``user:password``. Nothing was started or built.
    """, exit_code=2)
