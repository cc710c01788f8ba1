"""Canal's own images nobody can use any more: removed by ``canal gc``, and nothing else.

An image is a candidate only when it carries Canal's label (the build-context label every image Canal
builds carries, or the label of a base Canal bootstrapped) and this user's Canal recorded building it
(``build_lock.record_built``: a label alone proves nothing, an image built ``FROM`` Canal's inherits
it), it has no tag (a rebuild or a losing concurrent build left it behind: nothing can start from it
by name) and no container, running or not, was made from it. An image another image is built on is
kept (the engine refuses, and that is fine). Any other image is never touched, whoever made it.
"""

from __future__ import annotations

import docker
import docker.errors

from canal.sandbox.docker.build_lock import built_by_us, forget_built
from canal.sandbox.docker.image import BASE_LABEL, HASH_LABEL
from canal.sandbox.images import PrunedImage


def prune_images(client: docker.DockerClient, *, only_label: str | None = None) -> list[PrunedImage]:
    """Remove Canal's untagged, unused images; ``only_label`` narrows it to those also carrying that
    label (``key`` or ``key=value``)."""
    used = {c.attrs.get("Image") for c in client.containers.list(all=True, ignore_removed=True)}
    removed: list[PrunedImage] = []
    seen: set[str] = set()
    for label in (HASH_LABEL, BASE_LABEL):
        labels = [label, *([only_label] if only_label else [])]
        for image in client.images.list(filters={"dangling": True, "label": labels}):
            if image.id in seen or image.id in used or image.tags or not built_by_us(image.id):
                continue
            seen.add(image.id)
            size = int(image.attrs.get("Size") or 0)
            try:
                client.images.remove(image.id, noprune=False)
            except docker.errors.APIError:  # another image is built on it, or a container appeared
                continue
            forget_built(image.id)
            removed.append(PrunedImage(str(image.id), size))
    return removed
