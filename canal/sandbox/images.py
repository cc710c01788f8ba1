"""Canal's images by name, and the events and results of building one: what callers need without the
Docker SDK (the building itself is ``canal.sandbox.docker.image``, behind ``SandboxBackend.ensure_image``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

VERSION = "0.1.0"
DEFAULT_IMAGE = f"canal/sandbox:{VERSION}"
EGRESS_IMAGE = f"canal/egress:{VERSION}"
CANAL_IMAGES = (DEFAULT_IMAGE, EGRESS_IMAGE)


@dataclass(frozen=True)
class BuildEvent:
    """A progress event for the caller to render: ``kind`` is info, step or log."""

    kind: str
    text: str
    step: int = 0
    steps: int = 0


@dataclass(frozen=True)
class BuiltImage:
    tag: str
    image_id: str
    cached: bool
    base: str


Progress = Callable[[BuildEvent], None]


@dataclass(frozen=True)
class PrunedImage:
    """An image ``canal gc`` removed: Canal's own, untagged, used by no container."""

    image_id: str
    size: int  # bytes the engine reported for it
