"""What a sandbox is made of: image, mounts, network, limits, user, runtime and hardening flags.

Every hardening flag is on unless a spec turns it off explicitly. ``check_mounts`` refuses any mount
that would expose the host (the Docker socket, system folders, Canal's own state).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from canal.core.errors import SettingRefused
from canal.sandbox.egress import NetworkSpec
from canal.sandbox.errors import MOUNT_REFUSED, SpecInvalid
from canal.sandbox.images import DEFAULT_IMAGE

DEFAULT_WORKDIR = "/workspace"
RESERVED_LABEL_PREFIX = "canal."

_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_SIZE = re.compile(r"^\s*(\d+)\s*([bkmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(value: object) -> object:
    """``512m``, ``1g``, ``1GiB`` or a plain integer of bytes -> bytes. Anything else is left to pydantic."""
    if isinstance(value, str):
        match = _SIZE.match(value)
        if match is None:
            msg = f"not a size: {value!r} (use bytes or a suffix k, m, g: 512m)"
            raise ValueError(msg)
        return int(match.group(1)) * _UNITS[match.group(2).lower()]
    return value


Bytes = Annotated[int, BeforeValidator(parse_size), Field(gt=0)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(_Model):
    """Resource limits. Sizes accept bytes or a suffix (``512m``)."""

    cpus: float = Field(default=1.0, gt=0, le=256)
    memory: Bytes = 1024**3
    pids: int = Field(default=256, ge=16)
    tmp_size: Bytes = 256 * 1024**2
    home_size: Bytes = 64 * 1024**2
    workspace_size: Bytes = 1024**3
    shm_size: Bytes = 64 * 1024**2  # /dev/shm (a tmpfs: its pages count against memory too)


def _check_container_path(value: str) -> str:
    path = PurePosixPath(value)
    if not path.is_absolute() or ".." in path.parts or str(path) != value.rstrip("/") or value == "/":
        msg = f"need a normalized absolute path inside the container (not /): {value!r}"
        raise ValueError(msg)
    if path.parts[1] in {"proc", "sys", "dev"}:
        msg = f"cannot mount over /{path.parts[1]}: {value!r}"
        raise ValueError(msg)
    if path.parts[1] == "tmp":  # the policy treats /tmp as the sandbox's own: nothing of the host there
        msg = f"cannot mount inside /tmp, the sandbox's own scratch space (a tmpfs): {value!r}; use /mnt/NAME"
        raise ValueError(msg)
    return value


CA_OUTSIDE = "CA_CERT_OUTSIDE_PROJECT"
HOST_BUNDLE = "host"  # sandbox.ca_certificates: the host's own system bundle, by name


def _ca_source(value: str) -> str:
    """``host``, or a PEM file of the project named relative to it (read and checked when the settings
    are approved: canal.runtime.corpnet)."""
    path = PurePosixPath(value)
    if value == HOST_BUNDLE:
        return value
    if path.is_absolute() or ".." in path.parts or value.startswith("~"):
        msg = (f"sandbox.ca_certificates: {value!r} is outside the project; name a PEM file inside it, "
               f"relative to it (certs/corp.pem), or {HOST_BUNDLE!r} for the host's system bundle")
        raise SettingRefused(CA_OUTSIDE, msg)
    if str(path) in ("", ".") or str(path) != value:
        msg = f"sandbox.ca_certificates: {value!r} is not a normalized path relative to the project"
        raise ValueError(msg)
    return value


class Mount(_Model):
    """A host folder or file bound into the sandbox. Read-only unless asked otherwise."""

    source: Path
    target: str
    read_only: bool = True

    _target = field_validator("target")(staticmethod(_check_container_path))


class SandboxSpec(_Model):
    image: str = DEFAULT_IMAGE
    workdir: str = DEFAULT_WORKDIR
    mounts: tuple[Mount, ...] = ()
    network: NetworkSpec = NetworkSpec()
    # CA certificates the sandbox and its image builds trust, in the system store (canal.runtime.corpnet)
    ca_certificates: tuple[Annotated[str, AfterValidator(_ca_source)], ...] = Field(default=(), max_length=32)
    limits: Limits = Limits()
    env: dict[str, str] = Field(default_factory=dict)
    user: str = "1000:1000"
    runtime: str = "runc"
    labels: dict[str, str] = Field(default_factory=dict)
    ttl_s: int = Field(default=3600, ge=1, le=30 * 24 * 3600)
    read_only_root: bool = True
    cap_drop_all: bool = True
    no_new_privileges: bool = True
    init: bool = True

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, value: str) -> str:
        return _check_container_path(value)

    @field_validator("user")
    @classmethod
    def _user(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)?", value):
            msg = f"user must be NAME or UID[:GID], got {value!r}"
            raise ValueError(msg)
        return value

    @field_validator("runtime")
    @classmethod
    def _runtime(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", value):
            msg = f"runtime must be a runtime name such as runc or runsc, got {value!r}"
            raise ValueError(msg)
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        for name, item in value.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or "\0" in item:
                msg = f"bad environment variable {name!r}"
                raise ValueError(msg)
        return value

    @field_validator("labels")
    @classmethod
    def _labels(cls, value: dict[str, str]) -> dict[str, str]:
        reserved = [key for key in value if key.startswith(RESERVED_LABEL_PREFIX)]
        if reserved:
            msg = f"labels starting with {RESERVED_LABEL_PREFIX!r} are Canal's own: {reserved}"
            raise ValueError(msg)
        return value

    @property
    def workdir_mounted(self) -> bool:
        return any(PurePosixPath(self.workdir).is_relative_to(m.target) for m in self.mounts)

    @property
    def workdir_writable_mount(self) -> bool:
        """A writable bind mount at, above or inside the workdir: the sandbox can grow a host folder
        there (a read-only workspace cannot, and needs no quota watch)."""
        workdir = PurePosixPath(self.workdir)
        return any(not m.read_only and (workdir.is_relative_to(m.target)
                                         or PurePosixPath(m.target).is_relative_to(workdir))
                   for m in self.mounts)


# Refused when the source is one of these or lies inside one of these.
# A baseline under the application's allowlist (canal.runtime.settings.mounts), which is stricter.
SYSTEM_DIRS: tuple[str, ...] = ("/etc", "/proc", "/sys", "/dev", "/boot", "/usr", "/bin", "/sbin", "/lib",
                                "/lib64", "/run", "/var/run", "/var/lib/docker", "/var/lib/containerd",
                                "/var/log")
# Refused when the source is one of these or contains one of these.
DOCKER_SOCKETS: tuple[str, ...] = ("/var/run/docker.sock", "/run/docker.sock")


def _docker_socket_paths() -> list[Path]:
    paths = [Path(p) for p in DOCKER_SOCKETS]
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        paths.append(Path(host.removeprefix("unix://")))
    return paths


def _refuse(mount: Mount, why: str, protected: Path) -> SpecInvalid:
    msg = f"Refused to mount {mount.source} at {mount.target}: {why} ({protected})."
    return MOUNT_REFUSED(msg, hint="mount a project folder that holds neither system files nor Canal state",
                        details={"source": str(mount.source), "target": mount.target,
                                 "protected": str(protected), "reason": why})


def check_mount(mount: Mount, protected: Iterable[Path] = ()) -> None:
    """Raise ``MOUNT_REFUSED`` if ``mount`` would expose the host. Symlinks are resolved first."""
    source = mount.source.expanduser().resolve()
    if source == Path("/"):
        raise _refuse(mount, "the host root folder", source)
    for system in SYSTEM_DIRS:
        folder = Path(system).resolve()
        if source.is_relative_to(folder):
            raise _refuse(mount, "a host system folder", folder)
    for sock in _docker_socket_paths():
        resolved = sock.resolve()
        if resolved.is_relative_to(source) or sock.is_relative_to(source):
            raise _refuse(mount, "the Docker socket, which grants root on the host", sock)
    for folder in protected:
        resolved = folder.expanduser().resolve()
        if source.is_relative_to(resolved) or resolved.is_relative_to(source):
            raise _refuse(mount, "Canal's host state", resolved)


def check_mounts(spec: SandboxSpec, protected: Sequence[Path] = ()) -> None:
    """Check every mount of ``spec``; the first refused one raises ``MOUNT_REFUSED``."""
    for mount in spec.mounts:
        check_mount(mount, protected)
