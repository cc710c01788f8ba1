"""Where the server lives: a 0700 runtime folder of the user, one socket per server identity.

The folder is ``CANAL_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/canal``, else ``/tmp/canal-<uid>``. It must
be a real folder, owned by the user and closed to everyone else; anything else is refused with the fix
(never repaired silently: a folder someone else made could hold their socket).

A server's identity is what it cannot change per call: the variables that choose the engine, the state
and config folders and the keys. Clients with another identity get another server (another socket), so
a server never mixes two users' keys or two engines. The fingerprint is salted with a random value kept
in the private folder, so a socket's name says nothing about a key.
"""

from __future__ import annotations

import os
import stat
import sys

# Neither typing nor pathlib nor hashlib (its OpenSSL): together about 10 ms of every ``canal`` call's
# start-up. Paths are strings here; ``ServerPaths`` hands out ``Path`` objects to callers that want them.
TYPE_CHECKING = False  # mypy reads this name as typing.TYPE_CHECKING
if TYPE_CHECKING:
    from hashlib import _Hash
    from pathlib import Path
    from typing import TypeVar

    P = TypeVar("P", str, Path)

ENV_DIR = "CANAL_RUNTIME_DIR"
IDENTITY_VARS = ("CANAL_STATE_DIR", "CANAL_CONFIG_DIR", "CANAL_KEY", "CANAL_REDACT_RULES",
                 "CANAL_APPROVAL_DOOR", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CERT_PATH",
                 "DOCKER_TLS_VERIFY", "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                 # the upstream proxy's credentials (canal.sandbox.egress_upstream): a server uses its own
                 "CANAL_UPSTREAM_PROXY_CREDENTIALS", "CANAL_UPSTREAM_PROXY_CREDENTIALS_FILE")
SALT_FILE = "salt"


def runtime_dir(environ: dict[str, str] | None = None) -> Path:
    from pathlib import Path

    return Path(_runtime_dir(environ))


def _runtime_dir(environ: dict[str, str] | None) -> str:
    env = os.environ if environ is None else environ
    override = env.get(ENV_DIR)
    if override:
        return override
    xdg = env.get("XDG_RUNTIME_DIR", "")
    if xdg.startswith("/") and os.path.isdir(xdg):
        return os.path.join(xdg, "canal")
    return os.path.join(env.get("TMPDIR") or "/tmp", f"canal-{os.geteuid()}")


def _sha(data: bytes) -> _Hash:
    """A SHA-256 hasher from the interpreter's own module (the same digests): hashlib's import loads
    OpenSSL, 2-4 ms of every call's start-up."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]  # Python 3.11
        except ImportError:  # an interpreter built without them
            from hashlib import sha256
    hasher: _Hash = sha256(data)
    return hasher


def _unsafe(msg: str, hint: str, details: dict[str, object]) -> Exception:
    """``RUNTIME_DIR_UNSAFE``, imported only when raised: the error root costs the client's start-up."""
    from canal.client.errors import RUNTIME_DIR_UNSAFE

    return RUNTIME_DIR_UNSAFE(msg, hint=hint, details=details)


def ensure_private_dir(path: P) -> P:
    """Create ``path`` 0700 if missing; refuse it unless it is ours, a real folder, and closed to others."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        msg = f"Could not create Canal's runtime folder {path}: {exc.strerror or exc}."
        raise _unsafe(msg, f"export {ENV_DIR}=<a folder of yours>", {"path": str(path)}) from exc
    check_private(path, folder=True)
    return path


def check_private(path: str | Path, *, folder: bool) -> None:
    """``path`` is ours and nobody else's: owner, type and permissions, without following a symlink."""
    info = os.lstat(path)
    me = os.geteuid()
    what = "folder" if folder else "socket"
    kind_ok = stat.S_ISDIR(info.st_mode) if folder else stat.S_ISSOCK(info.st_mode)
    details = {"path": str(path), "owner_uid": info.st_uid, "mode": oct(stat.S_IMODE(info.st_mode))}
    if not kind_ok:
        msg = f"Canal's runtime {what} {path} is not a {what} (a symlink or another file?): refused."
        raise _unsafe(msg, f"rm -rf {path}   (or export {ENV_DIR}=<a folder of yours>)", details)
    if info.st_uid != me:
        msg = (f"Canal's runtime {what} {path} belongs to uid {info.st_uid}, not to you (uid {me}): "
               "whoever owns it could answer as your Canal server. Refused.")
        raise _unsafe(msg, f"sudo rm -rf {path}   (or export {ENV_DIR}=<a folder of yours>)", details)
    loose = stat.S_IMODE(info.st_mode) & 0o077
    if loose:
        msg = (f"Canal's runtime {what} {path} is open to other users "
               f"(mode {oct(stat.S_IMODE(info.st_mode))}); it must be yours alone. Refused.")
        raise _unsafe(msg, f"chmod {'700' if folder else '600'} {path}", details)


def _salt(folder: str) -> bytes:
    path = os.path.join(folder, SALT_FILE)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        with open(path, "rb") as fh:
            return fh.read()
    value = os.urandom(16).hex().encode()
    try:
        os.write(fd, value)
    finally:
        os.close(fd)
    return value


class ServerPaths:
    """The files of one server identity inside the runtime folder (a plain class: ``dataclasses`` and
    the ``inspect`` it imports would cost the thin client's start-up more than this whole module)."""

    __slots__ = ("_folder", "name")

    def __init__(self, folder: str | Path, name: str) -> None:
        self._folder = os.fspath(folder)
        self.name = name  # server-<fingerprint>

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerPaths) and (self._folder, self.name) == (other._folder, other.name)

    def __hash__(self) -> int:
        return hash((self._folder, self.name))

    def __repr__(self) -> str:
        return f"ServerPaths({self._folder!r}, {self.name!r})"

    def file(self, suffix: str) -> str:
        """``<folder>/<name>.<suffix>`` as a string: what the thin client's own calls use (no pathlib)."""
        return os.path.join(self._folder, f"{self.name}.{suffix}")

    @property
    def folder(self) -> Path:
        from pathlib import Path

        return Path(self._folder)

    @property
    def socket(self) -> Path:
        return self.folder / f"{self.name}.sock"

    @property
    def lock(self) -> Path:
        """Held (flock) by the one living server of this identity."""
        return self.folder / f"{self.name}.lock"

    @property
    def spawn_lock(self) -> Path:
        """Held by a client while it checks for a server and starts one: two clients start one server."""
        return self.folder / f"{self.name}.spawn"

    @property
    def log(self) -> Path:
        return self.folder / f"{self.name}.log"


def identity(environ: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    return {name: env[name] for name in IDENTITY_VARS if name in env}


def server_paths(environ: dict[str, str] | None = None) -> ServerPaths:
    """The paths of the server for this environment; creates and checks the runtime folder."""
    folder = ensure_private_dir(_runtime_dir(environ))
    ident = identity(environ)
    digest = _sha(_salt(folder))
    for name in sorted(ident):
        digest.update(f"{name}\0{ident[name]}\0".encode(errors="surrogateescape"))
    return ServerPaths(folder, f"server-{digest.hexdigest()[:16]}")


def all_servers(folder: Path) -> list[ServerPaths]:
    """Every server identity with a socket or lock in ``folder``."""
    names = {p.stem for p in folder.glob("server-*") if p.suffix in (".sock", ".lock")}
    return [ServerPaths(folder, name) for name in sorted(names)]


_built: tuple[int, str] | None = None  # (pid, build id) of this process


def build_id() -> str:
    """This installation's code: version, environment, interpreter and every file of the package (path,
    mtime, size), taken once per process.

    A client and a server with different build ids never talk: the old server is replaced. Once per
    process because a process runs the code it imported: files changed later are another build, which
    the next process sees (and stat-ing the package, about 400 files, costs about 2 ms, which a
    long-lived client such as ``Canal.connect`` paid on every call).
    """
    global _built
    if _built is None or _built[0] != os.getpid():
        _built = (os.getpid(), _scan_build())
    return _built[1]


def _scan_build() -> str:
    from canal.core.version import __version__

    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # the canal package
    # the environment (sys.prefix: the venv) and the interpreter it runs, not the name it was called by
    interpreter = os.path.realpath(sys.executable)
    digest = _sha(f"{__version__}\0{sys.prefix}\0{interpreter}\0{root}\0".encode())
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                    continue
                info = entry.stat(follow_symlinks=False)
                digest.update(f"{entry.path}\0{info.st_mtime_ns}\0{info.st_size}\0".encode())
    return f"{__version__}+{digest.hexdigest()[:12]}"
