"""The runtime reaches the engine only through the backend protocol: warming a session and building
Canal's images are backend calls (the fake answers them; no Docker client is opened on the side)."""

from __future__ import annotations

from pathlib import Path

from canal.runtime.api import Canal
from canal.runtime.sandboxes.start import ensure_sandbox
from canal.runtime.settings.config import parse_config
from canal.sandbox.backend import SandboxInfo
from canal.sandbox.errors import ImageNotFound
from canal.sandbox.fake import FakeBackend
from canal.sandbox.images import DEFAULT_IMAGE, EGRESS_IMAGE
from canal.sandbox.spec import SandboxSpec


class FirstRunBackend(FakeBackend):
    """A fake on a machine where the default image was never built: the first create says so."""

    def __init__(self) -> None:
        super().__init__(owner="canal-test")
        self.warmed: list[str] = []
        self.missing = True

    def create(self, name: str, spec: SandboxSpec) -> SandboxInfo:
        if self.missing and spec.image == DEFAULT_IMAGE:
            self.missing = False
            msg = f"Image {spec.image} is not in the local engine."
            raise ImageNotFound(msg)
        return super().create(name, spec)

    def warm(self, name: str) -> None:
        self.warmed.append(name)
        super().warm(name)


def test_a_missing_default_image_is_built_through_the_backend(project: Path) -> None:
    backend = FirstRunBackend()
    with Canal(project, backend=backend) as canal:
        info = ensure_sandbox(canal._services, backend, canal.ref())
    assert info.running
    assert backend.images_built == [DEFAULT_IMAGE]


def test_an_allowlist_sandbox_gets_its_proxy_image_through_the_backend(project: Path) -> None:
    backend = FirstRunBackend()
    backend.missing = False
    config = parse_config("sandbox:\n  network: {mode: allowlist, allow: [pypi.org]}\n")
    with Canal(project, backend=backend, config=config) as canal:
        ensure_sandbox(canal._services, backend, canal.ref())
    assert backend.images_built == [EGRESS_IMAGE]


def test_up_warms_the_session_through_the_protocol(project: Path) -> None:
    backend = FirstRunBackend()
    backend.missing = False
    with Canal(project, backend=backend) as canal:
        canal.up()
        assert backend.warmed == [canal.ref().container]


def test_gc_removes_unused_images_through_the_backend_and_records_what_it_freed(project: Path) -> None:
    from canal.sandbox.images import PrunedImage

    backend = FakeBackend(owner="canal-test")
    backend.dangling_images = [PrunedImage("sha256:" + "a" * 64, 475_000_000)]
    with Canal(project, backend=backend) as canal:
        assert [p.size for p in canal.gc_images()] == [475_000_000]
        assert canal.gc_images() == []  # removed once
        lines = canal._services.audit.path.read_text().splitlines()
    gc = [line.replace(" ", "") for line in lines if '"image.gc"' in line]
    assert len(gc) == 1
    assert '"freed_bytes":475000000' in gc[0]
