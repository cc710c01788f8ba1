"""Image builds: cached when nothing changed; a failing step is named with the end of its log."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from canal.sandbox.docker.image import DEFAULT_IMAGE, _build, build_default_image, ensure_base
from canal.sandbox.errors import ImageBuildFailed


def test_second_build_is_cached(docker_client, sandbox_image: str) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    built = build_default_image(docker_client)
    assert built.cached
    assert built.tag == sandbox_image == DEFAULT_IMAGE
    assert time.monotonic() - start < 30  # "finishes in seconds"; the figure is about 2 ms


def test_failing_step_is_named_with_its_log(docker_client, sandbox_image: str,  # type: ignore[no-untyped-def]
                                            tmp_path: Path) -> None:
    base = ensure_base(docker_client)
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base}\nRUN echo preparing-the-step\nRUN echo about-to-fail && exit 3\n")
    with pytest.raises(ImageBuildFailed) as failed:
        _build(docker_client, tmp_path, "canal/test-broken:latest", {}, {}, lambda _e: None)
    err = failed.value
    assert "RUN echo about-to-fail && exit 3" in err.message
    assert "about-to-fail" in "\n".join(err.details["log"])  # type: ignore[arg-type]
    assert [a.kind for a in err.next] == ["image.build"]
    assert err.code == "IMAGE_BUILD_FAILED"
