"""Path operands as bash would expand them, matched against the paths rules care about.

A rule such as "deny a recursive delete of /usr" must see ``/us*``, ``/u?r``, ``/[u]sr``, ``/{usr,etc}``,
``~root`` and ``/usr/../etc`` for what they name. Braces are expanded (bracex), tildes resolved, ``..``
and the working directory folded in, and a glob is kept as written plus every well-known path it
matches (wcmatch, with bash's rules: ``*`` never crosses ``/`` nor matches a leading dot).
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache

import bracex
from wcmatch import glob

MAX_EXPANSIONS = 64
# Paths the shipped rules protect or treat as secret, as the sandbox lays them out.
SYSTEM_PATHS = ("/", "/*", "/bin", "/boot", "/dev", "/etc", "/home", "/home/*", "/lib", "/lib32", "/lib64",
                "/libx32", "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys",
                "/tmp",
                "/usr", "/var", "/workspace", "/proc/1/environ", "/proc/self/environ",
                "/proc/thread-self/environ", "/proc/self/task/1/environ", "/root/.ssh/id_rsa", "/etc/shadow",
                "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers",
                "/root/.ssh/id_ed25519")
SECRET_NAMES = (".env", ".env.local", ".env.production", ".env.development", ".dev.vars", ".netrc",
                ".git-credentials", ".npmrc", ".pypirc", ".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/id_ecdsa",
                ".aws/credentials", ".kube/config", ".docker/config.json", "id_rsa", "id_ed25519", "key.pem",
                "server.key", "cert.p12")
_GLOB_CHARS = frozenset("*?[")
# `$HOME`, `${HOME}` (quotes removed) and a literal tail: what bash makes of it is the home folder
# (also `${HOME:?}`, `${HOME%/}` and other operators on it: the value is HOME's or, unset, a default;
# the home folder is the reading that fails closed)
_HOME_WORD = re.compile(r"^\$(?:HOME(?![A-Za-z0-9_])|\{HOME(?:[^A-Za-z0-9_}][^}]*)?\})((?:/[^$`'\\]*)?)$")
_HOME = "/__home__"  # a stand-in root to see whether `..` climbs out of the home folder


def home_text(text: str, *, literal: bool) -> str:
    """A non-literal word that is ``$HOME`` or ``${HOME}`` (quoted or not) with a literal tail, as the
    ``~`` spelling the rules name; anything else unchanged. The session may have moved HOME: the word
    still names a home folder, and the catastrophic reading is the one that fails closed."""
    if literal:
        return text
    found = _HOME_WORD.match(text.replace('"', ""))
    return "~" + found.group(1) if found else text


def normalize(arg: str, cwd: str) -> str:
    """``arg`` made absolute against ``cwd`` and normalised (``/tmp/..`` is ``/``)."""
    if not arg:
        return arg
    if arg == "~" or arg.startswith("~/"):
        return _home_relative(arg)
    if not arg.startswith(("/", "~")):
        if not cwd:
            return arg
        arg = posixpath.join(cwd, arg)
    norm = posixpath.normpath(arg)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm


def _home_relative(arg: str) -> str:
    """``~/x/..`` is ``~``; ``~/..`` climbs out of the home folder, to /home or / (taken as /: the
    stricter reading)."""
    norm = posixpath.normpath(_HOME + arg[1:])
    if norm == _HOME:
        return "~"
    if norm.startswith(_HOME + "/"):
        return "~" + norm[len(_HOME):]
    return norm


def tilde(arg: str, cwd: str) -> str:
    """``~root`` is /root, ``~name`` a home under /home, ``~+`` the cwd; ``~`` and ``~/x`` stay as rules
    name them."""
    if not arg.startswith("~") or arg == "~" or arg.startswith("~/"):
        return arg
    head, sep, rest = arg[1:].partition("/")
    if head == "+" and cwd:
        home = cwd
    elif head == "root":
        home = "/root"
    elif head and head.replace("-", "").replace("_", "").replace(".", "").isalnum():
        home = f"/home/{head}"
    else:
        return arg
    return home + (sep + rest if sep else "")


def braces(arg: str) -> list[str]:
    if "{" not in arg:
        return [arg]
    try:
        found = bracex.expand(arg, limit=MAX_EXPANSIONS)
    except (ValueError, RuntimeError):  # more expansions than the limit: keep it whole (opaque enough)
        return [arg]
    return list(dict.fromkeys(found)) or [arg]


@lru_cache(maxsize=4096)
def _matches(pattern: str, cwd: str) -> tuple[str, ...]:
    candidates = SYSTEM_PATHS + tuple(posixpath.join(cwd, n) for n in SECRET_NAMES) if cwd else SYSTEM_PATHS
    out = []
    for candidate in candidates:
        try:
            if glob.globmatch(candidate, pattern):
                out.append(candidate)
        except ValueError:
            continue
    return tuple(out)


def expand(arg: str, cwd: str, *, is_glob: bool) -> list[str]:
    """What ``arg`` may name: its normalised spellings, plus the known paths a glob in it matches."""
    out: list[str] = []
    for alt in braces(arg) if is_glob else [arg]:
        path = normalize(tilde(alt, cwd), cwd)
        out.append(path)
        if is_glob and _GLOB_CHARS & set(path):
            out.extend(_matches(path, cwd))
    return list(dict.fromkeys(out))
