"""The one place ``docker.errors`` exceptions become sandbox errors. A test checks the map is complete."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import docker.errors
import requests.exceptions

from canal.core.next import NextAction, act
from canal.sandbox.docker.engine import ENGINE_HINT
from canal.sandbox.errors import (
    EngineError,
    EngineUnavailable,
    ImageBuildFailed,
    ImageNotFound,
    SandboxError,
    SandboxExists,
    SandboxNotFound,
    SpecInvalid,
)

# Every exception class docker.errors defines, most specific first (looked up along the MRO).
ERROR_MAP: dict[type[BaseException], type[SandboxError]] = {
    docker.errors.ImageNotFound: ImageNotFound,
    docker.errors.NotFound: SandboxNotFound,
    docker.errors.APIError: EngineError,
    docker.errors.BuildError: ImageBuildFailed,
    docker.errors.ImageLoadError: ImageBuildFailed,
    docker.errors.ContainerError: EngineError,
    docker.errors.InvalidArgument: SpecInvalid,
    docker.errors.InvalidRepository: SpecInvalid,
    docker.errors.NullResource: SpecInvalid,
    docker.errors.InvalidVersion: EngineUnavailable,
    docker.errors.InvalidConfigFile: EngineUnavailable,
    docker.errors.TLSParameterError: EngineUnavailable,
    docker.errors.ContextException: EngineUnavailable,
    docker.errors.ContextAlreadyExists: EngineUnavailable,
    docker.errors.ContextNotFound: EngineUnavailable,
    docker.errors.MissingContextParameter: EngineUnavailable,
    docker.errors.DeprecatedMethod: EngineError,
    docker.errors.StreamParseError: EngineError,
    docker.errors.DockerException: EngineError,
    requests.exceptions.ConnectionError: EngineUnavailable,
}
CONFLICT = 409


def translate(exc: BaseException, what: str, *, name: str | None = None) -> SandboxError:
    """The sandbox error for ``exc``, raised while doing ``what`` (to sandbox ``name`` if any)."""
    target = next((ERROR_MAP[cls] for cls in type(exc).__mro__ if cls in ERROR_MAP), EngineError)
    if isinstance(exc, docker.errors.APIError) and exc.status_code == CONFLICT and what == "create":
        target = SandboxExists
    explanation = getattr(exc, "explanation", None) or str(exc)
    details: dict[str, object] = {"operation": what, "engine_error": type(exc).__name__}
    if name is not None:
        details["sandbox"] = name
    return target(f"Docker failed to {what}{f' {name}' if name else ''}: {explanation}",
                  hint=_hint(target, name), next=_next(target), details=details)


def _hint(target: type[SandboxError], name: str | None) -> str:
    if target is EngineUnavailable:
        return ENGINE_HINT
    if target is ImageNotFound:
        return "build the image, then retry"
    if target is SandboxExists:
        return f"pick another name, or remove the old one: docker rm -f {name}"
    if target is SandboxNotFound:
        return "docker ps -a --filter label=canal.sandbox   (the sandboxes that exist)"
    return "docker info   (check the engine), then retry"


def _next(target: type[SandboxError]) -> list[NextAction]:
    return [act("image.build")] if target is ImageNotFound else []


@contextlib.contextmanager
def translating(what: str, *, name: str | None = None) -> Iterator[None]:
    """Re-raise any Docker SDK or connection failure inside the block as a ``SandboxError``."""
    try:
        yield
    except SandboxError:
        raise
    except (docker.errors.DockerException, docker.errors.StreamParseError,
            requests.exceptions.ConnectionError) as exc:
        raise translate(exc, what, name=name) from exc
