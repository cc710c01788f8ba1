"""The project's sandbox image (canal.yaml ``image:``): its files staged from the project exactly as a
person approved them, built on demand (cached by content), recorded in the audit log (``image.ready``)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canal.core.next import act
from canal.runtime.errors import ConfigError
from canal.runtime.paths import DEFAULT_SANDBOX
from canal.runtime.services import Services
from canal.runtime.trust.snapshot import read_image_file
from canal.sandbox.engine import docker_client
from canal.sandbox.image import (
    DEFAULT_IMAGE,
    BuildEvent,
    BuiltImage,
    container_image_id,
    default_packages,
    image_id,
)
from canal.sandbox.project_image import (
    ProjectImage,
    StagedFile,
    build_project_image,
    built_project_image,
    describe,
)


def stage_files(project_dir: Path, image: ProjectImage) -> list[StagedFile]:
    """The files ``image.files`` names, read the safe way (inside the project, no symlink, bounded)."""
    staged = []
    for item in image.files:
        data = read_image_file(project_dir, item.source)
        mode = os.lstat(project_dir / item.source).st_mode
        staged.append(StagedFile(item.target, data, executable=bool(mode & stat.S_IXUSR)))
    return staged


def _check_approved(services: Services, image: ProjectImage, staged: list[StagedFile]) -> None:
    """The bytes about to go into the image are the ones whose digests a person approved (a file
    changed since the settings were read is refused, not built)."""
    if services.config_given:
        return
    approved = services.trust.status().snapshot.settings.get("image", {}).get("files", [])
    wanted = [f.get("sha256") for f in approved]
    found = [hashlib.sha256(s.data).hexdigest() for s in staged]
    if wanted != found:
        changed = [f.source for f, w, h in zip(image.files, wanted, found, strict=False) if w != h]
        msg = (f"image files changed since canal.yaml's settings were approved ({', '.join(changed)}); "
               "no image was built and nothing ran.")
        raise ConfigError(msg, hint="a person approves the new content", next=(act("config.status"),
                          act("config.approve")), details={"files": changed})


def ensure_project_image(services: Services,
                         on_event: Callable[[BuildEvent], None] | None = None) -> BuiltImage | None:
    """The project image's tag (built if needed), or None when canal.yaml adds nothing to the image."""
    image = services.config.image
    if image.empty:
        return None
    staged = stage_files(services.project_dir, image)
    _check_approved(services, image, staged)
    client = docker_client()
    with contextlib.closing(client):
        built = build_project_image(client, image, staged, base=services.config.sandbox.image,
                                    on_event=on_event or _quiet)
    # at each sandbox start from it: the exact image (by id) and what went into it, built now or cached
    services.audit.append("image.ready", {"image": built.tag, "image_id": built.image_id, "base": built.base,
                                          "built": not built.cached, "recipe": describe(image)})
    return built


def _quiet(_: BuildEvent) -> None:
    return None


@dataclass(frozen=True)
class ImageReport:
    """What the project's sandboxes run: the base image, what canal.yaml adds, and whether it is built."""

    base: str
    base_id: str | None  # None: not built yet
    base_packages: tuple[str, ...]  # the default image's Debian packages (empty for another base)
    added: dict[str, Any] | None  # canal.yaml's image section (None: it adds nothing)
    tag: str  # the image the project's sandboxes start from
    image_id: str | None  # None: not built yet (the next command, or canal image build, builds it)
    running: str | None = None  # the image id the project's default sandbox runs (None: not started)

    def to_json(self) -> dict[str, object]:
        return {"base": self.base, "base_id": self.base_id, "base_packages": list(self.base_packages),
                "added": self.added, "image": self.tag, "image_id": self.image_id,
                "built": self.image_id is not None, "default_sandbox_image_id": self.running}


def image_report(services: Services) -> ImageReport:
    """The project's image as it stands (needs the engine; reads canal.yaml's approved settings)."""
    config = services.config
    base = config.sandbox.image
    packages = default_packages() if base == DEFAULT_IMAGE else ()
    client = docker_client(timeout=10)
    with contextlib.closing(client):
        base_id = image_id(client, base)
        running = container_image_id(client, f"canal-{services.project_id}-{DEFAULT_SANDBOX}")
        if config.image.empty:
            return ImageReport(base, base_id, packages, None, base, base_id, running)
        tag, built = built_project_image(client, config.image,
                                         stage_files(services.project_dir, config.image), base)
    return ImageReport(base, base_id, packages, describe(config.image), tag, built, running)
