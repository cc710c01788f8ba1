"""Issue 30, finding 3: a dozen first runs at once each built the same image (about 12 unused 475 MB
images left on the engine). Builds of one content are serialised across processes by a lock keyed by
its digest: one builds, the others wait and reuse it. A fake engine counts the builds."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import docker.errors
import pytest

from canal.sandbox.docker.image import DEFAULT_IMAGE, UPSTREAM_BASE, build_default_image


class FakeEngine:
    """Just enough of docker.DockerClient for a build: images.get, and api.build streaming slowly."""

    def __init__(self) -> None:
        self.builds = 0
        self.tags: dict[str, Any] = {UPSTREAM_BASE: SimpleNamespace(id="sha256:base", labels={})}
        self.guard = threading.Lock()
        self.images = SimpleNamespace(get=self._get)
        self.api = SimpleNamespace(build=self._build)

    def _get(self, tag: str) -> Any:
        with self.guard:
            if tag not in self.tags:
                raise docker.errors.ImageNotFound(tag)
            return self.tags[tag]

    def _build(self, *, tag: str, labels: dict[str, str], **_: Any) -> Iterator[dict[str, str]]:
        with self.guard:
            self.builds += 1
            number = self.builds
        time.sleep(0.3)  # a build takes a while: the others start meanwhile
        with self.guard:
            self.tags[tag] = SimpleNamespace(id=f"sha256:built{number}", labels=labels)
        yield {"stream": "Step 1/1 : FROM base\n"}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_CACHE_DIR", str(tmp_path / "cache"))


def test_four_concurrent_first_builds_build_once() -> None:
    engine = FakeEngine()
    results: list[Any] = []
    threads = [threading.Thread(target=lambda: results.append(build_default_image(engine)))  # type: ignore[arg-type]
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert engine.builds == 1
    assert len(results) == 4
    assert {r.image_id for r in results} == {"sha256:built1"}
    assert sorted(r.cached for r in results) == [False, True, True, True]
    assert all(r.tag == DEFAULT_IMAGE for r in results)
