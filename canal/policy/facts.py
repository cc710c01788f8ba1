"""Facts handed to CEL for one segment, computed in Python (cel-python is slow; facts are cheap here)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

from canal.policy.shell.model import Segment

TRUSTED_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
_GIT_GLOBAL_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                                "--exec-path", "--super-prefix"})


# Variables that change what a program executes or loads (pagers, editors, loaders, interpreter hooks).
EXEC_VARIABLES = re.compile(r"^(PAGER|GIT_\w+|MANPAGER|SYSTEMD_PAGER|LESS\w*|EDITOR|VISUAL|LD_\w+|DYLD_\w+|"
                            r"PATH|"
                            r"BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|PYTHON\w*|PERL5?\w*|"
                            r"RUBY\w*|NODE_OPTIONS|NODE_PATH|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|BROWSER|"
                            r"RIPGREP_CONFIG_PATH|GREP_OPTIONS|TAR_OPTIONS|XARGS\w*|SSH_ASKPASS|SUDO_ASKPASS|"
                            r"LOCALDOMAIN|HOSTALIASES|TMPDIR|HOME|ZDOTDIR)$")
_SAFE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|mapper/|sr)")
MAX_STDIN_TEXT = 4096


def normalize_path(arg: str, cwd: str) -> str:
    """A path argument made absolute against ``cwd`` and normalised (``/tmp/..`` is ``/``)."""
    if not arg:
        return arg
    if not arg.startswith(("/", "~")):
        if not cwd:
            return arg
        arg = posixpath.join(cwd, arg)
    norm = posixpath.normpath(arg)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return norm


def split_args(args: tuple[str, ...]) -> tuple[list[str], list[str], dict[str, str], list[str]]:
    """(short flag letters, long flag names, long flag values, positionals); ``--`` ends options."""
    short: list[str] = []
    long_names: list[str] = []
    long_values: dict[str, str] = {}
    positionals: list[str] = []
    ended = False
    for arg in args:
        if ended or arg == "-" or not arg.startswith("-"):
            positionals.append(arg)
        elif arg == "--":
            ended = True
        elif arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            long_names.append(name)
            if eq:
                long_values[name] = value
        else:
            short.extend(ch for ch in arg[1:] if ch not in short)
    return short, long_names, long_values, positionals


def git_subcommand(args: tuple[str, ...]) -> str:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _GIT_GLOBAL_VALUES:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return arg
    return ""


def trusted_path(argv0: str, assignments: Mapping[str, str]) -> bool:
    if "/" not in argv0:
        return "PATH" not in assignments
    return posixpath.dirname(posixpath.normpath(argv0)) in TRUSTED_DIRS


def segment_facts(seg: Segment) -> dict[str, Any]:
    """Every fact has a value: a missing key would be a CEL evaluation error."""
    argv = seg.argv
    argv0 = argv[0] if argv else ""
    program = posixpath.basename(argv0) if seg.words and seg.words[0].literal else ""
    args = argv[1:]
    short, long_names, long_values, positionals = split_args(args)
    assignments = dict(seg.assignments)
    here = seg.cwd
    redirects = [{"op": r.op, "fd": r.fd,
                  "target": r.target if r.mode not in ("heredoc", "herestring") else "",
                  "mode": r.mode, "literal": r.literal} for r in seg.redirects]
    return {
        "program": program,
        "path": argv0,
        "trusted_path": bool(program) and trusted_path(argv0, assignments),
        "argv": list(argv),
        "args": list(args),
        "flags": short,
        "long_flags": long_names,
        "long_values": long_values,
        "positionals": positionals,
        "subcommand": git_subcommand(args) if program == "git" else (positionals[0] if positionals else ""),
        "paths": [normalize_path(p, here) for p in positionals],
        "redirects": redirects,
        "writes": [r.target for r in seg.redirects if r.mode in ("write", "append")],
        "file_writes": [r.target for r in seg.redirects
                        if r.mode in ("write", "append") and r.target not in _SAFE_SINKS],
        "writes_device": any(r.mode in ("write", "append") and _DEVICE.match(r.target)
                             for r in seg.redirects),
        "stdin_text": "\n".join(r.target for r in seg.redirects
                                if r.mode in ("heredoc", "herestring"))[:MAX_STDIN_TEXT],
        "reads": [r.target for r in seg.redirects if r.mode == "read"],
        "assignments": assignments,
        "exec_assignments": sorted(k for k in assignments if EXEC_VARIABLES.match(k)),
        "wrappers": list(seg.wrappers),
        "context": list(seg.context),
        "opaque": not all(w.literal for w in seg.words) or not all(r.literal for r in seg.redirects),
        "opaque_name": bool(seg.words) and not seg.words[0].literal,
        "substitution": any(w.substitution for w in seg.words),
        "code_exec": seg.code_exec,
        "dynamic_args": seg.dynamic_args,
        "background": seg.background,
        "stdin_piped": seg.stdin_piped,
        "recursive": bool(program) and program in seg.functions,
        "cwd": here,
        "text": seg.text,
    }
