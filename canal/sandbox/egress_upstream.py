"""The upstream proxy of a corporate network: Canal's egress proxy and image builds go out through it.

Its URL is a trusted setting (``sandbox.network.upstream_proxy: http://proxy.example.com:3128``) and never
carries credentials: a URL with ``user:password@`` is refused (``UPSTREAM_PROXY_CREDENTIALS_INLINE``), as
canal.yaml lives in the workspace the agent reads. They come from the environment of the process that
starts sandboxes and builds (``CANAL_UPSTREAM_PROXY_CREDENTIALS=user:password``) or from a file it names
(``CANAL_UPSTREAM_PROXY_CREDENTIALS_FILE``: the user's own, closed to others, one line ``user:password``).
They go into squid's ``cache_peer`` line in the egress proxy's container and into an image build's proxy
arguments (which Docker keeps out of the image and its history): never into a sandbox.

With an upstream proxy the egress proxy resolves no name itself: it sends every allowed request to the
peer (``never_direct``), which resolves it on its own network. The allowlist still decides what a sandbox
may reach; the address check against the host's own addresses (``egress_hosts``) has no lookup to check
and is the upstream proxy's business there, as everything else on that network is.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote, urlsplit

from canal.core.errors import SettingRefused
from canal.sandbox.errors import UPSTREAM_PROXY_CREDENTIALS_UNUSABLE

SETTING = "sandbox.network.upstream_proxy"
ENV_CREDENTIALS = "CANAL_UPSTREAM_PROXY_CREDENTIALS"
ENV_CREDENTIALS_FILE = "CANAL_UPSTREAM_PROXY_CREDENTIALS_FILE"
INLINE = "UPSTREAM_PROXY_CREDENTIALS_INLINE"
PEER_NAME = "canal_upstream"
MAX_CREDENTIALS = 4096
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*|\[[0-9A-Fa-f:.]+\]")


def check_upstream_url(value: str) -> str:
    """``http://HOST:PORT`` normalized; refused when it carries credentials or is anything else."""
    parts = urlsplit(value.strip())
    if "@" in parts.netloc:
        where = parts.netloc.rpartition("@")[2]
        msg = (f"{SETTING} carries credentials inline ({parts.scheme}://…@{where}); "
               f"canal.yaml is in the workspace the agent reads. Write only http://HOST:PORT there and give "
               f"them in {ENV_CREDENTIALS} or a file {ENV_CREDENTIALS_FILE} names (docs/egress.md)")
        raise SettingRefused(INLINE, msg)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or ""
    if parts.scheme != "http" or port is None or not _HOST.fullmatch(parts.netloc.rsplit(":", 1)[0]) \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        msg = f"{SETTING} must be http://HOST:PORT (a proxy's address, nothing more), got {value!r}"
        raise ValueError(msg)
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"


@dataclass(frozen=True)
class Upstream:
    """An upstream proxy with the credentials it was given (None: it asks for none)."""

    host: str
    port: int
    user: str | None = None
    password: str | None = None

    def squid_lines(self) -> list[str]:
        """squid sends every allowed request to the peer and never goes direct (so it resolves nothing)."""
        login = ""
        if self.user is not None:  # squid unescapes URL escapes in login= (%40 is @, %25 is %)
            login = f" login={quote(self.user, safe='')}:{quote(self.password or '', safe='')}"
        return [f"cache_peer {self.host} parent {self.port} 0 no-query no-digest no-netdb-exchange default "
                f"name={PEER_NAME}{login}", "never_direct allow all"]

    def url(self, *, with_credentials: bool) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        auth = ""
        if with_credentials and self.user is not None:
            auth = f"{quote(self.user, safe='')}:{quote(self.password or '', safe='')}@"
        return f"http://{auth}{host}:{self.port}"


def upstream(url: str | None, environ: Mapping[str, str] | None = None,
             forbidden: Sequence[Path] = ()) -> Upstream | None:
    """The upstream proxy ``url`` names with its credentials from ``environ`` (None: no upstream proxy).
    A credentials file inside one of ``forbidden`` (the project: the agent's workspace) is refused."""
    if url is None:
        return None
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or 0
    creds = _credentials(os.environ if environ is None else environ, forbidden)
    if creds is None:
        return Upstream(host, port)
    user, _, password = creds.partition(":")
    return Upstream(host, port, user, password)


def _credentials(environ: Mapping[str, str], forbidden: Sequence[Path]) -> str | None:
    given = environ.get(ENV_CREDENTIALS)
    if given is None and environ.get(ENV_CREDENTIALS_FILE):
        given = _read_file(Path(environ[ENV_CREDENTIALS_FILE]), forbidden)
    if given is None:
        return None
    given = given.strip("\r\n")
    if ":" not in given or not given.partition(":")[0] or any(c in given for c in "\r\n\0"):
        _refuse("are not one line user:password", "write them as user:password")
    return given


def _read_file(path: Path, forbidden: Sequence[Path]) -> str:
    real = Path(os.path.realpath(path))
    if any(real.is_relative_to(Path(os.path.realpath(f))) for f in forbidden):
        _refuse(f"are in a file inside the project ({path}), which the agent reads",
                f"move the file out of the project (e.g. ~/.config/canal/upstream-proxy) and point "
                f"{ENV_CREDENTIALS_FILE} at it")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        _refuse(f"cannot be read from {path} ({exc.strerror})", f"create {path} (mode 0600) or unset "
                f"{ENV_CREDENTIALS_FILE}")
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            _refuse(f"are in {path}, which is not a regular file of yours closed to others",
                    f"chmod 600 {path} (owned by you)")
        data = fh.read(MAX_CREDENTIALS + 1)
    if len(data) > MAX_CREDENTIALS:
        _refuse(f"in {path} are over {MAX_CREDENTIALS} bytes", "write one line user:password")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        _refuse(f"in {path} are not UTF-8 text", "write one line user:password")


def _refuse(why: str, fix: str) -> NoReturn:
    msg = f"The upstream proxy's credentials {why}; nothing was started or built."
    details = {"setting": SETTING, "env": [ENV_CREDENTIALS, ENV_CREDENTIALS_FILE]}
    raise UPSTREAM_PROXY_CREDENTIALS_UNUSABLE(msg, hint=f"{fix} (docs/egress.md)", details=details)
