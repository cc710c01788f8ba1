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
from canal.host.paths import DEFAULT_SANDBOX
from canal.runtime.corpnet.cacerts import check_unchanged
from canal.runtime.corpnet.cacerts import load as load_cas
from canal.runtime.errors import ConfigError
from canal.runtime.services import Services
from canal.runtime.trust.snapshot import read_image_file
from canal.sandbox.docker.engine import docker_client
from canal.sandbox.docker.image import (
    DEFAULT_IMAGE,
    BuildEvent,
    BuiltImage,
    container_image_id,
    default_packages,
    image_id,
)
from canal.sandbox.docker.project_image import (
    BuildTrust,
    ProjectImage,
    StagedFile,
    build_project_image,
    built_project_image,
    describe,
)
from canal.sandbox.egress_upstream import upstream
from canal.sandbox.errors import ImageBuildFailed


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


def build_trust(services: Services, *, proxy: bool = True) -> BuildTrust:
    """The CA certificates the project's image trusts (as a person approved them) and the upstream proxy
    its build goes out through (with the credentials from the environment: never from canal.yaml)."""
    sandbox = services.config.sandbox
    cas = load_cas(services.project_dir, sandbox.ca_certificates)
    if not services.config_given:
        approved = services.trust.status().snapshot.settings.get("sandbox", {}).get("ca_certificates", [])
        changed = check_unchanged(cas, approved)
        if changed:
            msg = (f"CA certificate files changed since canal.yaml's settings were approved "
                   f"({', '.join(changed)}); no image was built and nothing ran.")
            raise ConfigError(msg, hint="a person approves the new content", next=(act("config.status"),
                              act("config.approve")), details={"files": changed})
    found = upstream(sandbox.network.upstream_proxy, forbidden=[services.project_dir]) if proxy else None
    return BuildTrust(certificates=tuple(c for f in cas for c in f.certificates),
                      described=tuple(f.described() for f in cas),
                      proxy=found.url(with_credentials=True) if found is not None else None)


def adds_to_image(services: Services) -> bool:
    """Whether the project's sandboxes need an image of their own: canal.yaml adds packages, files or
    mirrors, or CA certificates to trust."""
    return not services.config.image.empty or bool(services.config.sandbox.ca_certificates)


def ensure_project_image(services: Services,
                         on_event: Callable[[BuildEvent], None] | None = None) -> BuiltImage | None:
    """The project image's tag (built if needed), or None when canal.yaml adds nothing to the image."""
    image = services.config.image
    if not adds_to_image(services):
        return None
    staged = stage_files(services.project_dir, image)
    _check_approved(services, image, staged)
    trust = build_trust(services)
    client = docker_client()
    with contextlib.closing(client):
        try:
            built = build_project_image(client, image, staged, base=services.config.sandbox.image,
                                        on_event=on_event or _quiet, trust=trust)
        except ImageBuildFailed as exc:
            raise _with_network_hint(exc, services) from exc
    # at each sandbox start from it: the exact image (by id) and what went into it, built now or cached
    recipe = describe(image, certificates=trust.described)
    services.audit.append("image.ready", {"image": built.tag, "image_id": built.image_id, "base": built.base,
                                          "built": not built.cached, "recipe": recipe})
    return built


# what pip, npm, curl and apt print when a TLS-intercepting proxy or mirror presents a CA they do not know
_UNTRUSTED = ("CERTIFICATE_VERIFY_FAILED", "self-signed certificate in certificate chain",
              "unable to get local issuer certificate", "SELF_SIGNED_CERT_IN_CHAIN",
              "UNABLE_TO_GET_ISSUER_CERT",
              "server certificate verification failed")


def _with_network_hint(exc: ImageBuildFailed, services: Services) -> ImageBuildFailed:
    """A build that failed on an unknown CA says which setting trusts one (the rest as it was)."""
    if not any(sign in exc.message for sign in _UNTRUSTED):
        return exc
    have = services.config.sandbox.ca_certificates
    setting = (f"sandbox.ca_certificates (now {list(have)}) does not hold the CA that signed the index's "
               "certificate" if have else
               "the index's certificate is signed by a CA the image does not trust")
    hint = (f"{setting}: a person adds the CA's PEM file or the host's bundle (sandbox.ca_certificates: "
            "[host]) to canal.yaml and approves it; docs/images.md, 'Behind a corporate network'")
    return ImageBuildFailed(exc.message, hint=hint, next=(act("config.approve"),),
                            details={**exc.details, "setting": "sandbox.ca_certificates"})


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
        if not adds_to_image(services):
            return ImageReport(base, base_id, packages, None, base, base_id, running)
        trust = build_trust(services, proxy=False)
        tag, built = built_project_image(client, config.image,
                                         stage_files(services.project_dir, config.image), base, trust)
    return ImageReport(base, base_id, packages, describe(config.image, certificates=trust.described), tag,
                       built, running)
