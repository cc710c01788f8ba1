from __future__ import annotations

import inspect

import docker.errors
import pytest

from canal.core.errors import ErrorCode
from canal.sandbox import errors
from canal.sandbox.docker.errors import ERROR_MAP, translate, translating
from canal.sandbox.errors import EngineError, ImageNotFound, SandboxError, SandboxExists, SandboxNotFound


def test_every_docker_exception_has_an_explicit_entry() -> None:
    defined = {
        cls
        for _, cls in inspect.getmembers(docker.errors, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == "docker.errors"
    }
    assert defined
    assert defined - set(ERROR_MAP) == set()


def test_translation_picks_the_most_specific_class() -> None:
    assert type(translate(docker.errors.ImageNotFound("x"), "create")) is ImageNotFound
    assert type(translate(docker.errors.NotFound("x"), "inspect")) is SandboxNotFound
    assert type(translate(docker.errors.DockerException("x"), "run")) is EngineError


def test_conflict_on_create_is_sandbox_exists() -> None:
    class Response:
        status_code = 409
        reason = "Conflict"
        url = "http://docker/containers/create"

    exc = docker.errors.APIError("Conflict", response=Response())  # type: ignore[arg-type]
    err = translate(exc, "create", name="canal-a")
    assert isinstance(err, SandboxExists)
    assert "canal-a" in err.hint


def test_translating_reraises_as_sandbox_error() -> None:
    with pytest.raises(SandboxError) as info, translating("inspect", name="canal-a"):
        raise docker.errors.NotFound("no such container")
    assert info.value.details == {"operation": "inspect", "engine_error": "NotFound", "sandbox": "canal-a"}


def test_error_codes_are_pinned() -> None:
    codes = {
        cls.__name__: (cls.code, cls.exit_code)
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, SandboxError)
    } | {name: (code.code, code.exit_code) for name, code in vars(errors).items()
         if isinstance(code, ErrorCode) and code.where == errors.__name__}
    assert codes == {
        "SandboxError": ("SANDBOX_ERROR", 125),
        "EngineUnavailable": ("ENGINE_UNAVAILABLE", 125),
        "ImageNotFound": ("IMAGE_NOT_FOUND", 125),
        "ImageBuildFailed": ("IMAGE_BUILD_FAILED", 125),
        "SpecInvalid": ("SANDBOX_SPEC_INVALID", 2),
        "MOUNT_REFUSED": ("MOUNT_REFUSED", 2),
        "RUNTIME_UNKNOWN": ("RUNTIME_UNKNOWN", 2),
        "RUNTIME_FAILED": ("RUNTIME_FAILED", 125),
        "EGRESS_PROXY_FAILED": ("EGRESS_PROXY_FAILED", 125),
        "SandboxNotFound": ("SANDBOX_NOT_FOUND", 125),
        "SandboxExists": ("SANDBOX_EXISTS", 125),
        "SandboxNotRunning": ("SANDBOX_NOT_RUNNING", 125),
        "FILE_TRANSFER_REFUSED": ("FILE_TRANSFER_REFUSED", 2),
        "SESSION_FAILED": ("SESSION_FAILED", 125),
        "EngineError": ("ENGINE_ERROR", 125),
        "TASK_START_FAILED": ("TASK_START_FAILED", 125),
        "UPSTREAM_PROXY_CREDENTIALS_UNUSABLE": ("UPSTREAM_PROXY_CREDENTIALS_UNUSABLE", 2),
    }
