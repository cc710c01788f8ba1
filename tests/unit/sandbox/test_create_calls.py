"""What making a sandbox asks of the engine (issue 33: each call is 5-40 ms of a new project's first
command, on a loaded host): create, start and one inspection; the engine's runtimes read only when
the choice needs them (gVisor) or the create failed; never an image pulled implicitly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import docker.errors
import pytest

from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.errors import RUNTIME_UNKNOWN, EngineError, ImageNotFound
from canal.sandbox.spec import SandboxSpec
from tests.error_codes import raises_code


class Container:
    def __init__(self, engine: Engine, name: str, kwargs: dict[str, Any]) -> None:
        self.engine, self.name, self.id = engine, name, f"id-{name}"
        self.status = "created"
        self.labels = dict(kwargs.get("labels") or {})
        self.attrs: dict[str, Any] = {
            "Config": {"Image": kwargs["image"], "User": kwargs.get("user"),
                       "WorkingDir": kwargs.get("working_dir"), "Labels": self.labels},
            "HostConfig": {"Init": kwargs.get("init"), "Memory": 0}, "Image": "sha256:img", "Created": None}

    def start(self) -> None:
        self.engine.calls.append("start")
        self.status = "running"

    def reload(self) -> None:
        self.engine.calls.append("inspect")

    def remove(self, **_: Any) -> None:
        self.engine.calls.append("remove")


class Engine:
    """The Docker SDK's client as far as ``DockerBackend.create`` uses it; every call recorded."""

    def __init__(self, *, runtimes: tuple[str, ...] = ("runc",), image: bool = True,
                 listed: tuple[str, ...] | None = None) -> None:
        self.calls: list[str] = []
        self.runtimes, self.image = runtimes, image
        self.listed = runtimes if listed is None else listed  # what docker info says it has
        self.made: dict[str, Container] = {}
        self.containers = self
        self.images = Images(self)

    # client.containers
    def create(self, **kwargs: Any) -> Container:
        self.calls.append(f"create runtime={kwargs['runtime']}")
        if not self.image:
            msg = "No such image"
            raise docker.errors.ImageNotFound(msg)
        if kwargs["runtime"] not in self.runtimes:
            msg = f"unknown or invalid runtime name: {kwargs['runtime']}"
            raise docker.errors.APIError(msg)
        container = self.made[kwargs["name"]] = Container(self, kwargs["name"], kwargs)
        return container

    def get(self, name: str) -> Container:
        self.calls.append("inspect")
        if name not in self.made:
            raise docker.errors.NotFound(name)
        return self.made[name]

    def run(self, **_: Any) -> Container:
        raise AssertionError("containers.run pulls a missing image")

    # client
    def info(self) -> dict[str, Any]:
        self.calls.append("info")
        return {"Runtimes": {name: {} for name in self.listed}}


class Images:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, tag: str) -> object:
        self.engine.calls.append("image")
        if not self.engine.image:
            raise docker.errors.ImageNotFound(tag)
        return object()

    def pull(self, *_: Any, **__: Any) -> None:
        raise AssertionError("an image is never pulled implicitly")


def _spec(tmp_path: Path, **update: Any) -> SandboxSpec:
    return SandboxSpec().model_copy(update=update)


def test_a_new_sandbox_is_a_create_a_start_and_one_inspection(tmp_path: Path) -> None:
    engine = Engine()
    backend = DockerBackend(engine)
    info = backend.create("canal-p-default", _spec(tmp_path))
    assert info.running
    assert engine.calls == ["create runtime=runc", "start", "inspect"]  # (the SDK's create inspects too)
    assert backend.ready("canal-p-default") is None  # no session yet: the engine is asked then
    engine.calls.clear()
    assert backend._handle("canal-p-default").container_id == "id-canal-p-default"  # its session needs
    assert engine.calls == []  # no inspection again


def test_gvisor_reads_the_engine_runtimes_to_choose_one(tmp_path: Path) -> None:
    engine = Engine(runtimes=("runc", "runsc", "runsc-none"))
    DockerBackend(engine).create("canal-p-g", _spec(tmp_path, runtime="runsc"))
    assert engine.calls[0] == "info"
    assert engine.calls[1] == "create runtime=runsc-none"  # the offline flavour, when the engine has it


def test_a_runtime_the_engine_lacks_is_named_as_such(tmp_path: Path) -> None:
    engine = Engine()
    backend = DockerBackend(engine)
    with raises_code(RUNTIME_UNKNOWN) as refused:
        backend.create("canal-p-x", _spec(tmp_path, runtime="nosuchrt"))
    assert "runc" in refused.value.message
    assert "info" in engine.calls


def test_an_engine_failure_with_a_known_runtime_is_the_engine_s(tmp_path: Path) -> None:
    engine = Engine(runtimes=(), listed=("runc",))  # the create fails; the engine lists runc
    backend = DockerBackend(engine)
    with pytest.raises(EngineError) as failed:
        backend.create("canal-p-y", _spec(tmp_path))
    assert not RUNTIME_UNKNOWN.matches(failed.value)


def test_a_missing_image_is_never_pulled(tmp_path: Path) -> None:
    engine = Engine(image=False)
    with pytest.raises(ImageNotFound):
        DockerBackend(engine).create("canal-p-z", _spec(tmp_path))
    assert "create runtime=runc" not in engine.calls[1:]  # not tried again, after a pull
