"""Building Canal's sandbox images, with or without a reachable registry.

When the Dockerfile's base cannot be pulled, a base is bootstrapped from Debian's package mirror
(``debootstrap --variant=minbase`` into a temp folder, then ``docker import``). Builds are cached: the
image carries a label with the hash of its build context, and a build whose hash matches is skipped.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections import deque
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import docker
import docker.errors

from canal.core.next import act
from canal.sandbox.docker.build_lock import build_lock, record_built
from canal.sandbox.errors import ImageBuildFailed
from canal.sandbox.images import DEFAULT_IMAGE as DEFAULT_IMAGE
from canal.sandbox.images import EGRESS_IMAGE as EGRESS_IMAGE
from canal.sandbox.images import VERSION as VERSION
from canal.sandbox.images import BuildEvent as BuildEvent
from canal.sandbox.images import BuiltImage as BuiltImage
from canal.sandbox.images import Progress as Progress

UPSTREAM_BASE = "debian:bookworm-slim"
BOOTSTRAP_BASE = "canal/base:bookworm"
HASH_LABEL = "canal.image.context-sha256"
BASE_LABEL = "canal.image.base"  # on a base Canal bootstrapped itself
DEFAULT_MIRROR = "http://deb.debian.org/debian"
_STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)$")


def _ignore(_: BuildEvent) -> None:
    return None


def context_dir(name: str = "sandbox") -> Path:
    """An image's build folder: in the wheel ``canal/_images/NAME``; in an editable install of a clone,
    the repository's own ``images/NAME`` beside ``canal/``."""
    try:
        return Path(str(resources.files("canal._images").joinpath(name)))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[3] / "images" / name


def context_hash(folder: Path) -> str:
    digest = hashlib.sha256(VERSION.encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def default_packages() -> tuple[str, ...]:
    """The Debian packages the default sandbox image installs (read from its Dockerfile)."""
    text = (context_dir() / "Dockerfile").read_text().replace("\\\n", " ")
    for line in text.splitlines():
        if "apt-get install" in line:
            words = line.split("apt-get install", 1)[1].split("&&", 1)[0].split()
            return tuple(w for w in words if not w.startswith("-"))
    return ()


def image_id(client: docker.DockerClient, tag: str) -> str | None:
    """The id of the image ``tag``, or None when there is none."""
    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        return None


def container_image_id(client: docker.DockerClient, name: str) -> str | None:
    """The id of the image the container ``name`` was created from, or None when there is none."""
    try:
        return str(client.containers.get(name).attrs.get("Image") or "") or None
    except docker.errors.NotFound:
        return None


def image_present(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def build_default_image(
    client: docker.DockerClient, *, force: bool = False, on_event: Progress = _ignore
) -> BuiltImage:
    """Build ``canal/sandbox:<version>`` unless an image from the same build context is present."""
    return _build_context(client, "sandbox", DEFAULT_IMAGE, force, on_event)


def build_egress_image(client: docker.DockerClient, *, force: bool = False,
                       on_event: Progress = _ignore) -> BuiltImage:
    """Build ``canal/egress:<version>`` (Debian's squid and dnsmasq) unless the same build context is
    present."""
    return _build_context(client, "egress", EGRESS_IMAGE, force, on_event)


def _build_context(client: docker.DockerClient, name: str, tag: str, force: bool,
                   on_event: Progress) -> BuiltImage:
    folder = context_dir(name)
    wanted = context_hash(folder)
    if not force:
        cached = _cached(client, tag, wanted, on_event)
        if cached is not None:
            return cached
    with build_lock(tag, f"{tag}\0{wanted}", on_event):  # one builder; the others wait, then reuse it
        if not force:  # the holder before us may have built it
            cached = _cached(client, tag, wanted, on_event)
            if cached is not None:
                return cached
        base = ensure_base(client, on_event)
        image_id = _build(client, folder, tag, {"BASE": base}, {HASH_LABEL: wanted}, on_event)
    return BuiltImage(tag, image_id, cached=False, base=base)


def _cached(client: docker.DockerClient, tag: str, wanted: str, on_event: Progress) -> BuiltImage | None:
    try:
        current = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None
    if (current.labels or {}).get(HASH_LABEL) != wanted:
        return None
    on_event(BuildEvent("info", f"{tag} is up to date (cached)"))
    return BuiltImage(tag, current.id, cached=True, base="")


def ensure_base(client: docker.DockerClient, on_event: Progress = _ignore) -> str:
    """A usable base: the upstream image if present or pullable, else a bootstrapped one."""
    for tag in (UPSTREAM_BASE, BOOTSTRAP_BASE):
        if image_present(client, tag):
            return tag
    with build_lock("a base image", BOOTSTRAP_BASE, on_event):  # one pull or bootstrap at a time
        for tag in (UPSTREAM_BASE, BOOTSTRAP_BASE):
            if image_present(client, tag):
                return tag
        return _fetch_base(client, on_event)


def _fetch_base(client: docker.DockerClient, on_event: Progress) -> str:
    on_event(BuildEvent("info", f"pulling {UPSTREAM_BASE}"))
    try:
        client.images.pull(UPSTREAM_BASE)
    except docker.errors.APIError as exc:
        on_event(BuildEvent("info", f"cannot pull {UPSTREAM_BASE} ({_first_line(exc)}); bootstrapping"))
    else:
        return UPSTREAM_BASE
    bootstrap_base(client, on_event)
    return BOOTSTRAP_BASE


def debian_mirror() -> str:
    """The mirror this host's apt uses (deb822 or one-line format), else Debian's default."""
    for src in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for line in src.read_text(errors="replace").splitlines():
            if line.startswith("URIs:") and "security" not in line:
                return line.split()[1]
    legacy = Path("/etc/apt/sources.list")
    if legacy.is_file():
        for line in legacy.read_text(errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "deb" and "security" not in parts[1]:
                return parts[1]
    return DEFAULT_MIRROR


def bootstrap_base(client: docker.DockerClient, on_event: Progress = _ignore) -> None:
    """debootstrap a minimal bookworm into a temp folder and import it as ``canal/base:bookworm``."""
    tool = shutil.which("debootstrap")
    if tool is None or os.geteuid() != 0:
        why = "debootstrap is not installed" if tool is None else "bootstrapping needs root"
        msg = f"No base image is available ({UPSTREAM_BASE} cannot be pulled) and {why}."
        raise ImageBuildFailed(msg, hint="install debootstrap as root (apt-get install debootstrap)",
                               next=act("image.build", "as root"), details={"base": UPSTREAM_BASE})
    mirror = debian_mirror()
    with tempfile.TemporaryDirectory(prefix="canal-bootstrap-") as tmp:
        root = Path(tmp) / "rootfs"
        on_event(BuildEvent("info", f"debootstrap minbase bookworm from {mirror} (about a minute)"))
        _run_logged([tool, "--variant=minbase", "bookworm", str(root), mirror], "debootstrap")
        archive = Path(tmp) / "rootfs.tar"
        _run_logged(["tar", "-C", str(root), "-cf", str(archive), "."], "tar")
        on_event(BuildEvent("info", f"importing {BOOTSTRAP_BASE}"))
        repo, tag = BOOTSTRAP_BASE.split(":")
        # labelled as Canal's, so canal gc may remove it once untagged and unused
        client.api.import_image_from_file(str(archive), repository=repo, tag=tag,
                                          changes=[f"LABEL {BASE_LABEL}=bootstrap"])
        record_built(str(client.images.get(BOOTSTRAP_BASE).id))


def _run_logged(argv: list[str], what: str) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        msg = f"{what} failed with exit code {proc.returncode}. Last lines:\n{tail}"
        raise ImageBuildFailed(msg, hint="check the network to Debian's mirror", next=act("image.build"))


def _build(
    client: docker.DockerClient,
    folder: Path,
    tag: str,
    buildargs: dict[str, str],
    labels: dict[str, str],
    on_event: Progress,
) -> str:
    recent: deque[str] = deque(maxlen=20)
    current = "(before the first step)"
    stream: Iterator[dict[str, Any]] = client.api.build(
        path=str(folder), tag=tag, buildargs=buildargs, labels=labels, decode=True, rm=True, forcerm=True
    )
    error = ""
    try:
        for chunk in stream:  # read to the end even after an error, so the connection is released
            if "error" in chunk:
                error = error or str(chunk["error"])
                continue
            for line in str(chunk.get("stream", "")).splitlines():
                if not line.strip():
                    continue
                step = _STEP.match(line)
                if step:
                    current = line
                    on_event(BuildEvent("step", step[3], int(step[1]), int(step[2])))
                else:
                    recent.append(line)
                    on_event(BuildEvent("log", line))
    except docker.errors.APIError as exc:
        _fail(tag, current, recent, _first_line(exc))
    if error:
        _fail(tag, current, recent, error)
    built = str(client.images.get(tag).id)
    record_built(built)  # canal gc removes it once nothing can use it (untagged, no container)
    return built


def _fail(tag: str, step: str, recent: deque[str], error: str) -> None:
    log = "\n".join(recent) or "(no output)"
    msg = f"Building {tag} failed at {step}: {error.strip()}\nLast lines of its log:\n{log}"
    raise ImageBuildFailed(msg, hint="fix the step above", next=act("image.build"),
                           details={"step": step, "error": error.strip(), "log": list(recent)})


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
