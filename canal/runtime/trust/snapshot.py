"""The trusted settings as they are on disk now: ``canal.yaml`` and the policy files it names.

Read the safe way (no symlink followed, size bounded, UTF-8, no repeated key); policy files must lie
inside the project or inside Canal's own config folder. The digest covers both, so an edited rule file
needs approval just like an edited ``canal.yaml``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from canal.core.errors import CanalError
from canal.host.files.confine import Workspace, open_parent
from canal.host.files.errors import PathNotFound
from canal.host.paths import config_dir
from canal.runtime.corpnet.cacerts import load as load_cas
from canal.runtime.errors import ConfigError
from canal.runtime.settings.config import CanalConfig, parse_config
from canal.runtime.settings.mcp_servers import McpServerSettings
from canal.runtime.settings.project import CONFIG_NAME
from canal.runtime.settings.safeyaml import decode_settings, read_settings_bytes
from canal.runtime.trust.compare import FREE_SECTIONS
from canal.sandbox.spec import HOST_BUNDLE

MAX_IMAGE_FILE = 16 * 1024 * 1024
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
LATER_SECTIONS = ("approvals", "audit", "limits", "tools")
SERVER_DEFAULTS = {k: v for k, v in McpServerSettings(command=("python3",)).model_dump(mode="json").items()
                   if k != "command"}


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def trusted_settings(config: CanalConfig, image_files: dict[str, str] | None = None,
                     ca_files: list[dict[str, object]] | None = None,
                     server_files: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """The settings that need a person's approval: everything but the free sections. A project image's
    files carry the sha256 of their content (``image_files``), and so do the CA certificate files, with
    their certificates' subjects (``ca_files``), so an edited file needs approval too; an empty ``image``
    section and an empty CA list are left out (approvals made before they existed stay valid). The files
    an MCP server's command names carry theirs too (``server_files``: server -> file -> sha256)."""
    data = config.model_dump(mode="json")
    settings = {k: v for k, v in data.items() if k not in FREE_SECTIONS}
    sandbox = settings.get("sandbox", {})
    if not sandbox.get("ca_certificates"):
        sandbox.pop("ca_certificates", None)
    elif ca_files is not None:
        sandbox["ca_certificates"] = ca_files
    # sections added after projects were approved count only where set: an upgrade keeps every digest
    defaults = CanalConfig().model_dump(mode="json")
    for name in (n for n in LATER_SECTIONS if n in settings):
        settings[name] = _set_only(data[name], defaults[name])
        if not settings[name]:
            del settings[name]
    servers = settings.get("tools", {}).get("mcp_servers", {})
    for name, entry in servers.items():  # a setting added later leaves approvals made before it valid
        servers[name] = {k: v for k, v in entry.items()
                         if k not in SERVER_DEFAULTS or v != SERVER_DEFAULTS[k]}
    for name, files in (server_files or {}).items():
        if files:
            servers[name]["files"] = files
    image = {k: v for k, v in settings.pop("image", {}).items() if v not in (None, [])}
    if image_files is not None and image.get("files"):
        image["files"] = [{**f, "sha256": image_files.get(f["source"])} for f in image["files"]]
    if image:
        settings["image"] = image  # only what the section sets: a person reads just those lines
    return settings


def _set_only(value: Any, default: Any) -> Any:
    """``value`` without the entries that equal their defaults (walking into mappings)."""
    if not isinstance(value, dict) or not isinstance(default, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in default and item == default[key]:
            continue
        out[key] = _set_only(item, default.get(key))
    return out


@dataclass(frozen=True)
class Snapshot:
    config: CanalConfig
    settings: dict[str, Any]
    policy: dict[str, str]  # policy file as written in canal.yaml -> sha256 of its bytes
    exists: bool  # canal.yaml is there (else: the defaults)
    # policy file as written -> the text read (the bytes the digest covers): what the policy is built from
    policy_texts: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    # every file the settings were read from (canal.yaml, rule files, image, CA and servers' files),
    # present or not: a long-lived server keeps what it built from them while none of them changed
    sources: tuple[Path, ...] = field(default=(), compare=False, repr=False)

    @property
    def digest(self) -> str:
        body = canonical({"settings": self.settings, "policy": self.policy})
        return "sha256:" + hashlib.sha256(body.encode()).hexdigest()


def policy_roots(project_dir: Path) -> list[Path]:
    """Where rule files may live: the project, and Canal's own config folder."""
    return [project_dir.resolve(), Path(os.path.realpath(config_dir()))]


def policy_file_path(project_dir: Path, name: Path) -> Path:
    """``name`` (relative to the project, or absolute) as a path inside an allowed root; else refused.

    The folder is resolved through symlinks; the file itself must not be one (checked when read).
    """
    joined = Path(os.path.normpath(project_dir / name))
    real = Path(os.path.realpath(joined.parent)) / joined.name
    roots = policy_roots(project_dir)
    if not any(real.is_relative_to(root) for root in roots):
        msg = (f"policy file {name} is at {real}, outside the project and Canal's config folder; "
               "nothing was run.")
        raise ConfigError(msg, hint="move the rule file into the project (e.g. policy/extra.yaml) and "
                          f"list it relative to the project in {CONFIG_NAME}",
                          details={"file": str(name), "resolved": str(real),
                                   "allowed": [str(r) for r in roots], "reason": "outside"})
    return real


def read_image_file(project_dir: Path, source: str, setting: str = "image.files") -> bytes:
    """A file the project image copies (``image.files``): inside the project, reached one folder at a time
    without following a symlink (the agent writes this folder: a component swapped for a link while we
    read makes the read fail instead of leading out; what is read goes into the agent's image), a
    regular file of at most 16 MiB; else ``CONFIG_INVALID`` naming it."""
    try:
        loc = Workspace.at(project_dir).locate(source)
        with open_parent(loc) as parent:
            fd = os.open(loc.rel.name, _FILE_FLAGS, dir_fd=parent)
    except (FileNotFoundError, PathNotFound):
        fd = -1
    except (CanalError, OSError) as exc:
        why = exc.message if isinstance(exc, CanalError) else exc.strerror
        msg = f"{setting}: {source} cannot be read without leaving the project ({why}); nothing was run."
        hint = f"name only regular files inside the project ({setting} in {CONFIG_NAME})"
        raise ConfigError(msg, hint=hint, details={"file": source, "reason": "unsafe"}) from None
    if fd < 0:
        msg = f"{setting}: {source} (named in {CONFIG_NAME}) does not exist; nothing was run."
        raise ConfigError(msg, hint=f"create it, or remove it from {setting} in {CONFIG_NAME}",
                          details={"file": source, "reason": "missing"})
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        data = fh.read(MAX_IMAGE_FILE + 1) if stat.S_ISREG(info.st_mode) else None
    if data is None or len(data) > MAX_IMAGE_FILE:
        what = "not a regular file" if data is None else f"over {MAX_IMAGE_FILE} bytes"
        msg = f"{setting}: {source} is {what}; nothing was run."
        hint = f"name only regular files of at most 16 MiB ({setting} in {CONFIG_NAME})"
        raise ConfigError(msg, hint=hint, details={"file": source,
                                                   "reason": "not-a-file" if data is None else "too-large"})
    return data


def server_file_digests(project_dir: Path, config: CanalConfig) -> dict[str, dict[str, str]]:
    """server -> (file its command names -> sha256 of its bytes), for the servers whose command names
    files of the project (an argument that names none, such as ``-m``, is left out)."""
    out: dict[str, dict[str, str]] = {}
    for name, server in config.tools.mcp_servers.items():
        setting = f"tools.mcp_servers.{name}.command"
        found = {part: hashlib.sha256(read_image_file(project_dir, part, setting)).hexdigest()
                 for part in server.project_files() if (project_dir / part).is_file()}
        if found:
            out[name] = found
    return out


def read_policy_text(path: Path) -> tuple[str, str]:
    """(sha256 of the bytes, their text): one safe read, so what is approved is what is compiled."""
    data = read_settings_bytes(path)
    if data is None:
        msg = f"policy file {path} (named in {CONFIG_NAME}) does not exist; nothing was run."
        raise ConfigError(msg, hint=f"create it, or remove it from policy.files in {CONFIG_NAME}",
                          details={"file": str(path), "reason": "missing"})
    return hashlib.sha256(data).hexdigest(), decode_settings(data, path)


def read_policy_digest(path: Path) -> str:
    return read_policy_text(path)[0]


@functools.lru_cache(maxsize=64)
def _parsed(data: bytes | None, source: str) -> tuple[CanalConfig, str]:
    """canal.yaml's content (None: no file) parsed and validated, with its trusted settings (image files
    aside) as JSON. Keyed by the content itself, never by a file's name or time: a long-lived server
    reads the bytes at every call and parses only content it has not seen. Validation reads nothing but
    the text, so equal bytes always give an equal (frozen) configuration; errors are not kept."""
    config = CanalConfig() if data is None else parse_config(decode_settings(data, Path(source)), source)
    return config, json.dumps(trusted_settings(config), ensure_ascii=False)


def take_snapshot(project_dir: Path) -> Snapshot:
    path = project_dir / CONFIG_NAME
    data = read_settings_bytes(path)
    config, settings = _parsed(data, str(path))
    read = {str(name): read_policy_text(policy_file_path(project_dir, name)) for name in config.policy.files}
    files = {f.source: hashlib.sha256(read_image_file(project_dir, f.source)).hexdigest()
             for f in config.image.files}
    loaded = load_cas(project_dir, config.sandbox.ca_certificates)
    cas = [f.approved_form() for f in loaded]
    servers = server_file_digests(project_dir, config)
    digests = {name: digest for name, (digest, _) in read.items()}
    trusted = trusted_settings(config, files, cas, servers) if files or cas or servers \
        else json.loads(settings)  # its own
    sources = (path, *(policy_file_path(project_dir, name) for name in config.policy.files),
               *(project_dir / f.source for f in config.image.files), *(Path(f.path) for f in loaded),
               *(project_dir / part for server in config.tools.mcp_servers.values()
                 for part in server.project_files()))
    return Snapshot(config, trusted, digests, exists=data is not None,
                    policy_texts={name: text for name, (_, text) in read.items()}, sources=sources)


def defaults_snapshot() -> Snapshot:
    config = CanalConfig()
    return Snapshot(config, trusted_settings(config), {}, exists=False)


def settings_files(project_dir: Path) -> list[PurePosixPath]:
    """canal.yaml and the policy files inside the project that the current or approved settings name,
    relative to the project (best effort: a broken canal.yaml still protects canal.yaml itself)."""
    root = project_dir.resolve()
    names: set[Path] = set()
    with contextlib.suppress(ConfigError):
        config = take_snapshot(root).config
        names.update(config.policy.files)
        names.update(Path(f.source) for f in config.image.files)
        names.update(Path(s) for s in config.sandbox.ca_certificates if s != HOST_BUNDLE)
    found = [PurePosixPath(CONFIG_NAME)]
    for name in names:
        path = Path(os.path.normpath(root / name))
        real = Path(os.path.realpath(path.parent)) / path.name
        if real.is_relative_to(root):
            found.append(PurePosixPath(real.relative_to(root).as_posix()))
    return sorted(set(found))
