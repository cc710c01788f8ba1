"""git inside the sandbox runs no program named by configuration the agent could have written.

git reads configuration from the repository (``.git/config``, which the workspace mount lets the
agent write), from ``~/.gitconfig`` (the sandbox's HOME, a tmpfs the agent writes) and from the
environment. Several keys make git run a program: hooks, ``core.fsmonitor``, ``core.pager``,
``diff.external``, ``filter.<driver>.clean``, ``alias.<name> = !cmd``... Every command therefore gets
overrides as ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` (git 2.31+; the image has
2.39), which beat every configuration file:

- fixed keys (``FIXED``): hooks off, no fsmonitor, pager ``cat``, no credential
  helper, editors ``false``, ``ssh`` and ``gpg`` themselves, no ``ext::`` transport;
- keys with a name in them (drivers, aliases, remotes, pagers per command): before each command the
  host reads the repository's configuration files inside the workspace (``.git/config``,
  ``config.worktree``, submodules' configs, includes that stay inside the workspace) and overrides the
  program of every driver, alias, remote and pager named there (an over-approximation: a name that is
  no driver costs nothing), and replaces a named external diff by git's own diff;
- ``GIT_CONFIG_GLOBAL=/dev/null`` (no ``~/.gitconfig``), ``GIT_CONFIG_PARAMETERS`` emptied, and the
  ``GIT_PAGER``, ``GIT_EDITOR``, ``GIT_SEQUENCE_EDITOR``, ``GIT_SSH_COMMAND``,
  ``GIT_ASKPASS`` variables pinned; ``GIT_EXTERNAL_DIFF``, when the session exported it or the request
  (a tool's or a step's ``env``) sets it, pinned to git's own diff.

An include that leaves the workspace (``~/x``, ``/tmp/x``) cannot be read from the host: the command
is refused (``GIT_CONFIG_UNSAFE``) until a person removes it. What is not covered (a command that
writes the configuration and runs git in one go, repositories outside the workspace, ``GIT_DIR`` set
by the command itself) is listed in docs/security.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from canal.core.errors import register
from canal.runtime.errors import ConfigError

NO_HOOKS = "/dev/null/canal-no-hooks"  # a path nothing can create: no hook ever runs
FIXED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", NO_HOOKS), ("core.fsmonitor", "false"), ("core.pager", "cat"),
    ("core.editor", "false"), ("sequence.editor", "false"), ("core.sshCommand", "ssh"),
    ("core.askPass", ""), ("core.alternateRefsCommand", ""),
    ("credential.helper", ""), ("gpg.program", "gpg"), ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"), ("gpg.ssh.program", "ssh-keygen"), ("gpg.ssh.defaultKeyCommand", ""),
    ("interactive.diffFilter", ""), ("protocol.ext.allow", "never"),
)
# git's own diff in place of an external diff program (git has no value that turns one off: an empty
# one is run as a program named ""), set only when the repository names one
GIT_DIFF = "sh -c 'git --no-pager diff --no-ext-diff --no-index -- \"$2\" \"$5\"; exit 0' canal-diff"
CONDITIONAL: dict[str, tuple[str, str]] = {"external": ("diff.external", GIT_DIFF)}
# per named section: the keys whose value is a program, and the value that runs none
NAMED: dict[str, tuple[tuple[str, str], ...]] = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("textconv", "cat"), ("command", GIT_DIFF)),
    "merge": (("driver", "false"),),
    "credential": (("helper", ""),),
    "remote": (("uploadpack", "git-upload-pack"), ("receivepack", "git-receive-pack"), ("vcs", "")),
    "mergetool": (("cmd", "false"),),
    "difftool": (("cmd", "false"),),
    "trailer": (("command", ""), ("cmd", "")),
    "submodule": (("update", "checkout"),),
    "browser": (("cmd", "false"),),
    "man": (("cmd", "false"),),
}
# every key name found anywhere may be an alias or a command's pager
PER_KEY: tuple[tuple[str, str], ...] = (("alias", ""), ("pager", "false"))
PINNED_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_PARAMETERS": "", "GIT_PAGER": "cat",
              "GIT_EDITOR": "false", "GIT_SEQUENCE_EDITOR": "false",
              "GIT_SSH_COMMAND": "ssh", "GIT_ASKPASS": "",
              # no optional lock: git status never refreshes .git/index, a write that a command the
              # policy proved read-only (so not checkpointed) would otherwise make
              "GIT_OPTIONAL_LOCKS": "0"}
# GIT_EXTERNAL_DIFF beats diff.external and every other setting; pinned only when something would set
# it (a value of its own would change every diff's headers), to git's own diff
EXTERNAL_DIFF = "GIT_EXTERNAL_DIFF"
MAX_OVERRIDES = 4000
MAX_CONFIG_BYTES = 1024 * 1024
MAX_FILES = 64
_HEADER = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\](.*)$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$")

GIT_CONFIG_UNSAFE = register(ConfigError, "GIT_CONFIG_UNSAFE", """
    The repository's git configuration includes a file outside the workspace: Canal cannot check it.
    """)


@dataclass
class Names:
    """Names found in git configuration files: sections' subsections and every key."""

    subsections: set[tuple[str, str]] = field(default_factory=set)  # (section, subsection)
    keys: set[str] = field(default_factory=set)
    includes: list[tuple[Path, int, str]] = field(default_factory=list)  # (file, line, path value)


def parse_into(text: str, source: Path, names: Names) -> None:
    section = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        rest = line
        if header:
            name, sub, rest = header.group(1).lower(), header.group(2), header.group(3)
            section, _, dotted = name.partition(".")
            if sub is not None:
                names.subsections.add((section, re.sub(r"\\(.)", r"\1", sub)))
            elif dotted:
                names.subsections.add((section, dotted))
            section = f"{section}.{sub if sub is not None else dotted}" if (sub is not None or dotted) \
                else section
        key = _KEY.match(rest.split("#", 1)[0].split(";", 1)[0]) if rest.strip() else None
        if key:
            names.keys.add(key.group(1).lower())
            if key.group(1).lower() == "path" and section.split(".", 1)[0] in ("include", "includeif"):
                names.includes.append((source, number, _unquote(key.group(2) or "")))


def _unquote(value: str) -> str:
    value = value.strip()
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        value = value[1:-1]
    return re.sub(r"\\(.)", r"\1", value)


@dataclass(frozen=True)
class WorkspaceView:
    host: Path  # the project folder on the host
    inside: PurePosixPath  # where the sandbox sees it (/workspace)

    def to_host(self, sandbox_path: PurePosixPath) -> Path | None:
        normal = PurePosixPath(os.path.normpath(str(sandbox_path)))
        if not normal.is_relative_to(self.inside):
            return None
        return self.host.joinpath(*normal.relative_to(self.inside).parts)

    def to_sandbox(self, host_path: Path) -> PurePosixPath:
        return self.inside.joinpath(*host_path.relative_to(self.host).parts)


def _unsafe(source: Path, line: int, why: str) -> ConfigError:
    msg = (f"{source}:{line}: {why}; Canal cannot check what git would run from it, so nothing was run.")
    return GIT_CONFIG_UNSAFE(msg, hint=f"a person removes that line (or points it at a file inside the "
                           f"project), e.g. git config --file {source} --unset include.path",
                           details={"file": str(source), "line": line})


def _read(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None  # missing, a symlink or a folder: git would not read a symlinked config from us
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise _unsafe(path, 1, f"is over {MAX_CONFIG_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


def _git_dirs(ws: WorkspaceView, dot: Path) -> Iterator[Path]:
    """The folders git reads configuration from for the repository ``dot`` (a ``.git`` folder, a
    ``gitdir:`` file, or a folder --git-dir names): itself, its common folder, its submodules'."""
    if dot.is_symlink():
        raise _unsafe(dot, 1, f"{dot.name} is a symlink")
    if dot.is_file():
        text = _read(dot) or ""
        target = text.strip().removeprefix("gitdir:").strip()
        base = ws.to_sandbox(dot.parent)
        host = ws.to_host(base / target if not target.startswith("/") else PurePosixPath(target))
        if host is None:
            raise _unsafe(dot, 1, f"the repository lives outside the workspace ({target})")
        dot = host
    if not dot.is_dir():
        return
    yield dot
    common = _read(dot / "commondir")
    if common is not None:
        inside = ws.to_sandbox(dot) / common.strip()
        host = ws.to_host(inside)
        if host is None:
            raise _unsafe(dot / "commondir", 1, "the common git folder lies outside the workspace")
        yield host
    modules = dot / "modules"
    if modules.is_dir():
        yield from (p.parent for p in sorted(modules.rglob("config"))[:MAX_FILES])


def _unlinked(ws: WorkspaceView, folder: PurePosixPath, why: str) -> Path | None:
    """``folder`` (a sandbox path) on the host when it lies in the workspace, else None; refused when a
    folder on the way is a symlink (it would lead the host somewhere else than the sandbox)."""
    host = ws.to_host(folder)
    if host is None:
        return None
    step = ws.host
    for part in host.relative_to(ws.host).parts:
        step = step / part
        if step.is_symlink():
            raise _unsafe(step, 1, f"{why} {folder} is reached through the symlink {ws.to_sandbox(step)}")
    return host


def _discovered(ws: WorkspaceView, start: PurePosixPath) -> Iterator[Path]:
    """The repositories git may find from ``start``: every ``.git`` between it and the workspace's top
    (git takes the nearest valid one; reading them all over-approximates)."""
    host = _unlinked(ws, start, "git starts in")
    if host is None:
        return
    while host != ws.host:
        dot = host / ".git"
        if dot.is_symlink() or dot.exists():
            yield from _git_dirs(ws, dot)
        host = host.parent


def scan(ws: WorkspaceView, starts: Sequence[str] = (), git_dirs: Sequence[str] = ()) -> Names:
    """Every name in the configuration files (and their includes) of the workspace's repository and of
    the repositories inside it that git commands starting in ``starts`` or given ``git_dirs`` (sandbox
    paths, from the policy's decision) would read."""
    names = Names()
    found = list(_git_dirs(ws, ws.host / ".git"))
    for folder in starts:
        found += _discovered(ws, PurePosixPath(folder))
    for given in git_dirs:
        host = _unlinked(ws, PurePosixPath(given), "the repository")
        found += _git_dirs(ws, host) if host is not None else []
    queue = [d / name for d in dict.fromkeys(found) for name in ("config", "config.worktree")]
    seen: set[Path] = set()
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        if len(seen) > MAX_FILES:
            raise _unsafe(path, 1, f"more than {MAX_FILES} configuration files")
        text = _read(path)
        if text is None:
            continue
        start = len(names.includes)
        parse_into(text, path, names)
        for source, line, value in names.includes[start:]:
            queue.append(_include_host(ws, source, line, value))
    return names


def _include_host(ws: WorkspaceView, source: Path, line: int, value: str) -> Path:
    if value.startswith("~") or value.startswith("%(prefix)"):
        raise _unsafe(source, line, f"it includes {value}, outside the workspace")
    base = ws.to_sandbox(source).parent
    host = ws.to_host(PurePosixPath(value) if value.startswith("/") else base / value)
    if host is None:
        raise _unsafe(source, line, f"it includes {value}, outside the workspace")
    return host


def overrides(names: Names) -> list[tuple[str, str]]:
    pairs = list(FIXED) + [CONDITIONAL[key] for key in sorted(names.keys & CONDITIONAL.keys())]
    for section, sub in sorted(names.subsections):
        pairs += [(f"{section}.{sub}.{key}", value) for key, value in NAMED.get(section, ())]
    for key in sorted(names.keys):
        pairs += [(f"{prefix}.{key}", value) for prefix, value in PER_KEY]
    return pairs


def guard_env(project_dir: Path | None, workdir: str = "/workspace", starts: Sequence[str] = (),
              git_dirs: Sequence[str] = (), given: Sequence[str] = ()) -> dict[str, str]:
    """The environment that neutralises git's code-running configuration for one command; ``starts``
    and ``git_dirs``: where its git commands start and the repositories they name (Decision); ``given``:
    the names of the variables the command would otherwise get from its session or its request."""
    view = WorkspaceView(project_dir, PurePosixPath(workdir)) if project_dir is not None else None
    names = Names() if view is None else scan(view, starts, git_dirs)
    pairs = overrides(names)
    if len(pairs) > MAX_OVERRIDES:
        raise _unsafe(project_dir or Path("."), 1, f"the git configuration names more than "
                      f"{MAX_OVERRIDES} drivers and keys")
    env = dict(PINNED_ENV)
    if EXTERNAL_DIFF in given:  # git has no value that turns it off: its own diff instead
        env[EXTERNAL_DIFF] = GIT_DIFF
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env
