"""Project images: ``canal.yaml``'s ``image:`` section extends the sandbox image declaratively.

Debian packages (a preset's and the project's own), pip and npm packages, and files of the project are
layered on the sandbox image (the same offline-capable base), by a generated Dockerfile whose every
value is a whole argv element of an exec-form ``RUN`` (nothing is spliced into a shell string). The
image is tagged by the hash of everything that goes into it (the base image's id included), so a build
whose hash exists is skipped; package installs reach Debian's mirror, PyPI and npm at build time only.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import docker
import docker.errors
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from canal.core.errors import SettingRefused
from canal.sandbox.docker.build_lock import build_lock
from canal.sandbox.docker.image import (
    DEFAULT_IMAGE,
    HASH_LABEL,
    VERSION,
    BuildEvent,
    BuiltImage,
    Progress,
    _build,
    _ignore,
    build_default_image,
)

PROJECT_REPOSITORY = "canal/project"
RECIPE_LABEL = "canal.image.recipe"
# What each preset adds: a toolchain, git, make and the build tools native extensions need.
PRESETS: dict[str, tuple[str, ...]] = {
    "python": ("python3-dev", "python3-pip", "python3-venv", "python-is-python3", "build-essential", "make",
               "pkg-config", "git"),
    "node": ("nodejs", "npm", "build-essential", "make", "python3", "git"),
}
MAX_PACKAGES = 200
INSTALLER = "/usr/local/lib/canal/install"
# Fixed text of ours: the packages reach it as "$@", whole arguments, never as code.
INSTALL_SCRIPT = """\
set -eu
kind=$1
shift
case $kind in
  apt)
    # a base that has them all already: nothing to fetch (no index, no proxy needed)
    if status=$(dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null) \
        && ! printf '%s\n' "$status" | grep -qvx 'install ok installed'; then
      echo "canal install: already installed: $*"
      exit 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "$@"
    apt-get clean
    rm -rf /var/lib/apt/lists/*
    ;;
  pip) python3 -m pip install --no-cache-dir --break-system-packages --root-user-action=ignore "$@" ;;
  npm) npm install --global --no-fund --no-audit --no-update-notifier "$@" ;;
  ca)
    if command -v update-ca-certificates >/dev/null 2>&1; then
      update-ca-certificates
    else
      mkdir -p /etc/ssl/certs
      cat /usr/local/share/ca-certificates/canal/*.crt >> /etc/ssl/certs/ca-certificates.crt
    fi
    ;;
  *) echo "canal install: unknown kind $kind" >&2; exit 2 ;;
esac
"""

_APT = re.compile(r"[a-z0-9][a-z0-9+.-]{0,99}(:[a-z0-9-]{1,20})?(=[A-Za-z0-9.+~:-]{1,100})?")
_OP = r"(===|==|~=|!=|<=|>=|<|>)[A-Za-z0-9.*+!-]{1,50}"
_PIP = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,99}}(\[[A-Za-z0-9._,-]{{1,100}}\])?({_OP}(,{_OP})*)?")
_NPM = re.compile(r"(@[a-z0-9][a-z0-9._-]{0,99}/)?[a-z0-9][a-z0-9._-]{0,99}(@[A-Za-z0-9.^~<>=*+-]{1,50})?")
_FORBIDDEN_TARGETS = ("/proc", "/sys", "/dev", "/workspace", "/canal")


def _matching(pattern: re.Pattern[str], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            msg = f"not a {what}: {value!r} (a name, optionally with a version; no options, URLs or paths)"
            raise ValueError(msg)
        return value

    return AfterValidator(check)


AptPackage = Annotated[str, _matching(_APT, "Debian package name")]
PipRequirement = Annotated[str, _matching(_PIP, "pip requirement")]
NpmPackage = Annotated[str, _matching(_NPM, "npm package")]


MIRROR_NOT_HTTPS = "MIRROR_NOT_HTTPS"
# no $ (a Dockerfile substitutes it even in quotes), quote, backslash or space: the URL is an ENV value
_URL_CHARS = re.compile(r"[A-Za-z0-9._~:/?#\[\]@!&'()*+,;=%-]{1,2000}")


def _mirror(setting: str) -> AfterValidator:
    """A package mirror's URL: https (packages from a plain-http index can be swapped on the way), a
    host, no credentials (canal.yaml is in the workspace the agent reads), no spaces or quotes."""

    def check(value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme != "https":
            msg = (f"{setting} must be an https URL (packages fetched over plain http can be swapped on the "
                   f"way), got {value!r}")
            raise SettingRefused(MIRROR_NOT_HTTPS, msg)
        if not _URL_CHARS.fullmatch(value) or not parts.hostname or "@" in parts.netloc:
            msg = f"{setting} must be https://HOST[:PORT]/PATH, without credentials or spaces: {value!r}"
            raise ValueError(msg)
        try:
            parts.port  # noqa: B018 - a bad port raises
        except ValueError as exc:
            msg = f"{setting}: {exc}: {value!r}"
            raise ValueError(msg) from None
        return value

    return AfterValidator(check)


def mirror_entry(url: str) -> str:
    """The allowlist entry (``host:port``) of a mirror's URL."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{'[' + host + ']' if ':' in host else host}:{parts.port or 443}"


def _relative_source(value: str) -> str:
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or str(path) in ("", ".") or str(path) != value:
        msg = f"source must be a normalized path inside the project, relative to it: {value!r}"
        raise ValueError(msg)
    return value


def _image_target(value: str) -> str:
    path = PurePosixPath(value)
    if not path.is_absolute() or ".." in path.parts or str(path) != value or value == "/" \
            or not re.fullmatch(r"[A-Za-z0-9_./+@-]+", value):
        msg = f"target must be a normalized absolute path in the image (letters, digits, _./+@-): {value!r}"
        raise ValueError(msg)
    if any(path.is_relative_to(p) for p in _FORBIDDEN_TARGETS):
        msg = f"target {value!r} is where the sandbox mounts or the kernel lives; copy elsewhere (/opt/...)"
        raise ValueError(msg)
    return value


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CopyFile(_Model):
    """A file of the project (``source``, relative to it) copied into the image at ``target``."""

    source: Annotated[str, AfterValidator(_relative_source)]
    target: Annotated[str, AfterValidator(_image_target)]


class ProjectImage(_Model):
    """canal.yaml's ``image:``: what the project's sandbox image adds to the sandbox image."""

    preset: Literal["python", "node"] | None = None
    apt: tuple[AptPackage, ...] = Field(default=(), max_length=MAX_PACKAGES)
    pip: tuple[PipRequirement, ...] = Field(default=(), max_length=MAX_PACKAGES)
    npm: tuple[NpmPackage, ...] = Field(default=(), max_length=MAX_PACKAGES)
    files: tuple[CopyFile, ...] = Field(default=(), max_length=MAX_PACKAGES)
    # package mirrors, for the build and for the sandbox (PIP_INDEX_URL, NPM_CONFIG_REGISTRY)
    index_url: Annotated[str, _mirror("image.index_url")] | None = None
    npm_registry: Annotated[str, _mirror("image.npm_registry")] | None = None

    @property
    def empty(self) -> bool:
        return self == ProjectImage()

    def apt_packages(self) -> tuple[str, ...]:
        """The preset's packages, the project's, and what pip and npm need, each once, in order."""
        wanted = [*PRESETS.get(self.preset or "", ()), *self.apt]
        if self.pip:
            wanted.append("python3-pip")
        if self.npm:
            wanted.append("npm")
        return tuple(dict.fromkeys(wanted))


@dataclass(frozen=True)
class StagedFile:
    """A file to copy, as read from the project: its bytes and whether it is executable."""

    target: str
    data: bytes
    executable: bool


CA_FOLDER = "/usr/local/share/ca-certificates/canal"
BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # Debian's system bundle, the CAs added to it
# what Python (ssl, requests, pip and its build isolation), curl, git and Node read for a CA bundle
CA_ENV = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
          "NODE_EXTRA_CA_CERTS")


@dataclass(frozen=True)
class BuildTrust:
    """What a build (and the sandboxes of its image) trusts, and how it reaches the outside.

    ``certificates``: CA certificates, one PEM certificate each, added to the system bundle before any
    ``RUN`` that fetches; ``proxy``: the upstream proxy a build goes out through, with its credentials:
    only the build's proxy arguments carry it (Docker keeps those out of the image and its history)."""

    certificates: tuple[bytes, ...] = ()
    described: tuple[str, ...] = ()  # what a person reads of them (canal image show, the audit record)
    proxy: str | None = field(default=None, repr=False)

    def buildargs(self) -> dict[str, str]:
        if self.proxy is None:
            return {}
        local = "localhost,127.0.0.1,::1"
        return {"HTTP_PROXY": self.proxy, "HTTPS_PROXY": self.proxy, "http_proxy": self.proxy,
                "https_proxy": self.proxy, "NO_PROXY": local, "no_proxy": local}


def image_env(image: ProjectImage, trust: BuildTrust) -> dict[str, str]:
    """The variables the image sets for its builds' later steps and for every sandbox started from it."""
    env = dict.fromkeys(CA_ENV, BUNDLE) if trust.certificates else {}
    if image.index_url:
        env["PIP_INDEX_URL"] = image.index_url
    if image.npm_registry:
        env["NPM_CONFIG_REGISTRY"] = image.npm_registry
    return env


def dockerfile(image: ProjectImage, base_id: str, files: Sequence[StagedFile], user: str,
               trust: BuildTrust = BuildTrust()) -> str:
    lines = [f"FROM {base_id}", "USER root", f"COPY canal-install {INSTALLER}"]
    if trust.certificates:  # before the first step that fetches: builds reach the index through them
        lines += ["COPY " + json.dumps(["ca/", f"{CA_FOLDER}/"]),
                  "RUN " + json.dumps(["/bin/sh", INSTALLER, "ca"])]
    env = image_env(image, trust)
    if env:  # values are fixed paths or validated URLs (no $, quote, backslash or space)
        lines.append("ENV " + " ".join(f"{name}={json.dumps(value)}" for name, value in env.items()))
    for kind, packages in (("apt", image.apt_packages()), ("pip", image.pip), ("npm", image.npm)):
        if packages:
            lines.append("RUN " + json.dumps(["/bin/sh", INSTALLER, kind, *packages]))
    for index, staged in enumerate(files):
        lines.append("COPY " + json.dumps([f"files/{index}", staged.target]))
    if user:
        lines.append(f"USER {json.dumps(user)[1:-1]}")
    return "\n".join(lines) + "\n"


def recipe_hash(text: str, files: Sequence[StagedFile], certificates: Sequence[bytes] = ()) -> str:
    digest = hashlib.sha256(f"{VERSION}\0{INSTALL_SCRIPT}\0{text}".encode())
    for staged in files:
        digest.update(f"\0{staged.target}\0{int(staged.executable)}\0".encode())
        digest.update(hashlib.sha256(staged.data).digest())
    for cert in certificates:
        digest.update(b"\0ca\0" + hashlib.sha256(cert).digest())
    return digest.hexdigest()


def project_tag(digest: str) -> str:
    return f"{PROJECT_REPOSITORY}:{digest[:16]}"


def build_project_image(client: docker.DockerClient, image: ProjectImage, files: Sequence[StagedFile], *,
                        base: str = DEFAULT_IMAGE, on_event: Progress = _ignore,
                        trust: BuildTrust = BuildTrust()) -> BuiltImage:
    """The project's image on ``base``, built unless one from the same recipe (and base) is present."""
    if base == DEFAULT_IMAGE:
        build_default_image(client, on_event=on_event)
    text, digest, tag = plan(client, image, files, base, trust)
    current = _present(client, tag, digest)
    if current is None:
        with build_lock(tag, digest, on_event):  # one builder; the others wait, then reuse it
            current = _present(client, tag, digest)
            if current is None:
                return _build_project(client, tag, text, digest, image, files, base, on_event, trust)
    on_event(BuildEvent("info", f"{tag} is up to date (cached)"))
    return BuiltImage(tag, current, cached=True, base=base)


def _build_project(client: docker.DockerClient, tag: str, text: str, digest: str, image: ProjectImage,
                   files: Sequence[StagedFile], base: str, on_event: Progress,
                   trust: BuildTrust) -> BuiltImage:
    on_event(BuildEvent("info", f"building the project image {tag} on {base}"))
    with tempfile.TemporaryDirectory(prefix="canal-project-image-") as tmp:
        folder = Path(tmp)
        (folder / "Dockerfile").write_text(text)
        (folder / "canal-install").write_text(INSTALL_SCRIPT)
        for sub, items in (("files", [(str(i), f.data, f.executable) for i, f in enumerate(files)]),
                           ("ca", [(f"canal-{i}.crt", c, False) for i, c in enumerate(trust.certificates)])):
            (folder / sub).mkdir()
            for name, data, executable in items:
                dest = folder / sub / name
                dest.write_bytes(data)
                dest.chmod(0o755 if executable else 0o644)
        recipe = describe(image, len(files), trust.described)
        labels = {HASH_LABEL: digest, RECIPE_LABEL: json.dumps(recipe, sort_keys=True)}
        image_id = _build(client, folder, tag, trust.buildargs(), labels, on_event)
    return BuiltImage(tag, image_id, cached=False, base=base)


def plan(client: docker.DockerClient, image: ProjectImage, files: Sequence[StagedFile],
         base: str, trust: BuildTrust = BuildTrust()) -> tuple[str, str, str]:
    """The Dockerfile, the recipe hash and the tag of the project image on ``base`` (which must exist)."""
    base_image = client.images.get(base)
    user = str((base_image.attrs.get("Config") or {}).get("User") or "")
    text = dockerfile(image, str(base_image.id), files, user, trust)
    digest = recipe_hash(text, files, trust.certificates)
    return text, digest, project_tag(digest)


def _present(client: docker.DockerClient, tag: str, digest: str) -> str | None:
    """The id of the image ``tag`` when it was built from the recipe ``digest``."""
    try:
        current = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None
    return str(current.id) if (current.labels or {}).get(HASH_LABEL) == digest else None


def built_project_image(client: docker.DockerClient, image: ProjectImage, files: Sequence[StagedFile],
                        base: str, trust: BuildTrust = BuildTrust()) -> tuple[str, str | None]:
    """The tag the project image has (or will have) and its id when it is built (None otherwise)."""
    try:
        _, digest, tag = plan(client, image, files, base, trust)
    except docker.errors.ImageNotFound:
        return "(after the base image is built)", None
    return tag, _present(client, tag, digest)


def describe(image: ProjectImage, file_count: int | None = None,
             certificates: Sequence[str] = ()) -> dict[str, Any]:
    """What the project image adds, as data (``canal doctor``, the image's label, the audit record);
    the CA certificates it trusts and the mirrors it uses only when it has some."""
    found: dict[str, Any] = {
        "preset": image.preset, "preset_packages": list(PRESETS.get(image.preset or "", ())),
        "apt": list(image.apt), "pip": list(image.pip), "npm": list(image.npm),
        "files": [f"{c.source} -> {c.target}" for c in image.files] if file_count is None else file_count}
    if certificates:
        found["ca_certificates"] = list(certificates)
    for name in ("index_url", "npm_registry"):
        if getattr(image, name):
            found[name] = getattr(image, name)
    return found
