"""Errors of the sandbox layer. Every ``docker.errors`` exception is translated into one of these.

Each class has a stable UPPER_SNAKE ``code`` (public API) and a process ``exit_code``; the message
says what happened, ``hint`` the next command to run, ``details`` the same for ``--json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar


class SandboxError(Exception):
    code: ClassVar[str] = "SANDBOX_ERROR"
    exit_code: ClassVar[int] = 125

    def __init__(self, message: str, *, hint: str = "", details: Mapping[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = dict(details or {})


class EngineUnavailable(SandboxError):
    code = "ENGINE_UNAVAILABLE"


class ImageNotFound(SandboxError):
    code = "IMAGE_NOT_FOUND"


class ImageBuildFailed(SandboxError):
    code = "IMAGE_BUILD_FAILED"
