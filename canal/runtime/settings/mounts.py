"""Which host folders a sandbox may see: an allowlist, then folders refused whatever the config says.

Allowed: a folder or file inside the project, or inside a root a person listed in ``mount_roots``
(trusted configuration: listing one needs ``canal config approve``). Refused even then, when the
source is, lies inside, or contains:

- the host's system folders (``/etc``, ``/usr``, ``/bin``, ``/lib``, ``/boot``, ``/run``, ``/var/lib``...),
- the container engine's sockets and folders (``/run/docker``, ``/run/containerd``,
  ``/var/lib/containerd``, ``docker.sock``, ``$DOCKER_HOST``...),
- Canal's own state, keys and server socket (every project's state folder, the config folder, the
  runtime folder) and Canal's install
  (its virtual environment, the Python it runs on),
- credentials folders in any home (``~/.ssh``, ``~/.gnupg``, ``~/.aws``, ``~/.docker``, ...).

Home folders themselves (``/root``, ``/home/alice``, ``/home``) are refused as sources; a folder inside
one is fine when the allowlist says so (projects usually live in a home). Every verdict says why.
"""

from __future__ import annotations

import os
import pwd
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from canal.client.paths import runtime_dir
from canal.core.next import act
from canal.host.paths import config_dir, data_root, state_root
from canal.sandbox.errors import MOUNT_REFUSED, SpecInvalid
from canal.sandbox.spec import Mount

SYSTEM = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev", "/proc",
          "/sys", "/run", "/var/run", "/var/lib", "/var/log", "/var/cache", "/var/spool", "/var/mail",
          "/var/backups", "/snap")
ENGINE = ("/run/docker", "/run/containerd", "/var/lib/containerd", "/var/lib/docker", "/run/docker.sock",
          "/var/run/docker.sock", "/run/podman", "/run/user")
CREDENTIALS = (".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc",
               ".git-credentials", ".password-store", ".local/share/keyrings", ".pypirc", ".npmrc")
HOME_PARENTS = ("/home",)


@dataclass(frozen=True)
class Verdict:
    mount: Mount
    allowed: bool
    reason: str  # why, in words
    rule: str  # allowlist | system | engine | canal-state | canal-install | home | credentials | ...
    protected: str = ""  # the folder the rule is about

    def to_json(self) -> dict[str, object]:
        return {"source": str(self.mount.source), "target": self.mount.target,
                "read_only": self.mount.read_only, "allowed": self.allowed, "reason": self.reason,
                "rule": self.rule, "protected": self.protected}


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def _homes() -> list[Path]:
    homes = {Path(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir not in ("", "/")}
    homes.add(Path.home())
    return sorted(homes)


def _engine_paths() -> list[Path]:
    paths = [Path(p) for p in ENGINE]
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        sock = Path(host.removeprefix("unix://"))
        paths += [sock, sock.parent]
    return paths


def _install_paths() -> list[Path]:
    package = Path(__file__).resolve().parents[2]  # canal/, wherever it is installed
    return [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), package]


def refused_folders(state_dir: Path) -> list[tuple[str, Path, str]]:
    """(rule, folder, why) for every folder no mount may be, lie inside, or contain."""
    engine = "the container engine's socket or folder (root on the host)"
    out = [("engine", p, engine) for p in _engine_paths()]
    out += [("canal-state", p, "Canal's host state, keys or server socket")
            for p in (data_root(), state_root(), config_dir(), state_dir, runtime_dir())]
    out += [("canal-install", p, "Canal's own installation") for p in _install_paths()]
    out += [("credentials", home / name, "a credentials folder") for home in _homes() for name in CREDENTIALS]
    out += [("system", Path(p), "a host system folder") for p in SYSTEM]  # last: the most specific first
    return [(rule, _real(folder), why) for rule, folder, why in out]


def verdict(mount: Mount, project_dir: Path, roots: Sequence[Path], state_dir: Path) -> Verdict:
    source = _real(mount.source)
    if source == Path("/"):
        return Verdict(mount, False, "the host's root folder", "system", "/")
    for rule, folder, why in refused_folders(state_dir):
        if source.is_relative_to(folder) or folder.is_relative_to(source):
            return Verdict(mount, False, f"{why}: {folder}", rule, str(folder))
    for home in [*(_real(h) for h in HOME_PARENTS), *(_real(h) for h in _homes())]:
        if home.is_relative_to(source):
            return Verdict(mount, False, f"a home folder, or a folder holding one: {home}", "home", str(home))
    project = _real(project_dir)
    if source.is_relative_to(project):
        return Verdict(mount, True, f"inside the project {project}", "allowlist", str(project))
    for root in roots:
        real_root = _real(root)
        if source.is_relative_to(real_root):
            return Verdict(mount, True, f"inside the mount root {real_root} (canal.yaml mount_roots)",
                           "allowlist", str(real_root))
    return Verdict(mount, False, "outside the project and every mount root a person listed in canal.yaml "
                   "(mount_roots)", "not-allowlisted", str(project))


def verdicts(mounts: Iterable[Mount], project_dir: Path, roots: Sequence[Path],
             state_dir: Path) -> list[Verdict]:
    return [verdict(m, project_dir, roots, state_dir) for m in mounts]


def check_user_mounts(mounts: Iterable[Mount], project_dir: Path, roots: Sequence[Path],
                      state_dir: Path) -> None:
    """Raise ``MOUNT_REFUSED`` for the first mount the allowlist or the refused folders reject."""
    for found in verdicts(mounts, project_dir, roots, state_dir):
        if not found.allowed:
            raise refusal(found)


def refusal(found: Verdict) -> SpecInvalid:
    mount = found.mount
    msg = f"Refused to mount {mount.source} at {mount.target}: {found.reason}. Nothing was started."
    hint = ("mount a folder inside the project, or inside a root a person lists under mount_roots in "
            "canal.yaml (the settings then need a person's approval)")
    see = [act("config.approve"), act("doctor", "shows every mount's verdict")]
    return MOUNT_REFUSED(msg, hint=hint, next=see, details=found.to_json())
