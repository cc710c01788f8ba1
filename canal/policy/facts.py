"""Facts handed to CEL for one segment, computed in Python (cel-python is slow; facts are cheap here)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from canal.policy.argfacts import arg_facts, git_subcommand
from canal.policy.gitplace import UNKNOWN, git_place
from canal.policy.named import named_paths, recursive_secrets
from canal.policy.outside import WORKSPACE, outside_targets
from canal.policy.paths import expand, home_text, normalize
from canal.policy.readonly import risky_args
from canal.policy.shell.gitconfig import CODE_CONFIG_PATH
from canal.policy.shell.model import Segment
from canal.policy.shell.variables import EXEC, session_names
from canal.policy.targets import write_targets

TRUSTED_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
EXEC_VARIABLES = EXEC
_SAFE_DEVICES = re.compile(r"^/dev/(null|zero|full|u?random|tty|stdin|stdout|stderr|ptmx|console|"
                           r"fd/.*|pts/.*|"
                           r"shm(/.*)?|mqueue(/.*)?)$")
# Where a write lands in no file: anything else (/dev/shm, /dev/mqueue, /dev/fd/3, a pts of another
# session's making) keeps what is written, so strict counts it as a file write.
_QUIET_SINKS = re.compile(r"^/dev/(null|zero|full|u?random|tty|stdout|stderr|fd/[12])$")
_DEVICE_WRITERS = frozenset({"dd", "cp", "tee", "cat", "shred", "install", "pv", "truncate", "blkdiscard"})
MAX_STDIN_TEXT = 4096


@dataclass(frozen=True)
class Session:
    """What the policy knows of the shell session a command runs in (its real state, from the sandbox)."""

    cwd: str = WORKSPACE
    env: Mapping[str, str] = field(default_factory=dict)  # exported variables it changed: name -> value
    workspace: str = WORKSPACE  # where the workspace is mounted (canal.yaml's sandbox.workdir)

    def exec_changed(self) -> list[str]:
        """Execution-relevant variables the session changed; PATH only when it leaves the trusted folders."""
        names = sorted(n for n in self.env if EXEC.match(n))
        return [n for n in names if n != "PATH" or not self.path_trusted()]

    def path_trusted(self) -> bool:
        path = self.env.get("PATH")
        return path is None or (bool(path) and all(p in TRUSTED_DIRS for p in path.split(":")))


DEFAULT_SESSION = Session()


def trusted_path(argv0: str, assignments: Mapping[str, str], session: Session = DEFAULT_SESSION) -> bool:
    if "/" not in argv0:
        return "PATH" not in assignments and session.path_trusted()
    return posixpath.dirname(posixpath.normpath(argv0)) in TRUSTED_DIRS


def _is_device(path: str) -> bool:
    return path.startswith("/dev/") and not _SAFE_DEVICES.match(path)


def _device_writes(seg: Segment, program: str, paths: list[str]) -> bool:
    if any(r.mode in ("write", "append") and _is_device(normalize(r.target, seg.cwd)) for r in seg.redirects):
        return True
    if program == "dd":
        return any(_is_device(normalize(a[3:], seg.cwd)) for a in seg.argv[1:] if a.startswith("of="))
    return program in _DEVICE_WRITERS and program != "dd" and any(_is_device(p) for p in paths)


def segment_facts(seg: Segment, session: Session = DEFAULT_SESSION) -> dict[str, Any]:
    """Every fact has a value: a missing key would be a CEL evaluation error."""
    argv = seg.argv
    argv0 = argv[0] if argv else ""
    program = posixpath.basename(argv0) if seg.words and seg.words[0].literal else ""
    args = argv[1:]
    parsed = arg_facts(seg.words, program)
    positionals = [w.text for w in parsed.positionals]
    here = seg.cwd
    paths = [p for w in parsed.positionals
             for p in expand(home_text(w.text, literal=w.literal), here, is_glob=w.glob)]
    assignments = dict(seg.assignments)
    names = [*assignments, *seg.assigned]
    redirects = [{"op": r.op, "fd": r.fd,
                  "target": r.target if r.mode not in ("heredoc", "herestring") else "",
                  "mode": r.mode, "literal": r.literal} for r in seg.redirects]
    file_writes = [r.target for r in seg.redirects
                   if r.mode in ("write", "append") and not _QUIET_SINKS.match(normalize(r.target, here))]
    file_writes += list(seg.extra_writes)
    writes = write_targets(seg) + [normalize(w, here) for w in seg.extra_writes]
    facts: dict[str, Any] = {
        "program": program,
        "path": argv0,
        "trusted_path": bool(program) and trusted_path(argv0, assignments, session),
        "argv": list(argv),
        "args": list(args),
        "flags": parsed.flags,
        "long_flags": parsed.long_flags,
        "long_values": parsed.long_values,
        "positionals": positionals,
        "subcommand": git_subcommand(args) if program == "git" else (positionals[0] if positionals else ""),
        "paths": paths,
        "named_paths": named_paths(program, parsed, here) + recursive_secrets(program, parsed, paths, here),
        "redirects": redirects,
        "writes": [r.target for r in seg.redirects if r.mode in ("write", "append")],
        "file_writes": file_writes,
        "writes_device": _device_writes(seg, program, paths),
        "code_writes": sorted({w for w in writes if CODE_CONFIG_PATH.search(w)}),
        "deletes": [normalize(home_text(d, literal=False), here) for d in seg.deletes],
        "outside_targets": outside_targets(seg, session.workspace),
        "stdin_text": "\n".join(r.target for r in seg.redirects
                                if r.mode in ("heredoc", "herestring"))[:MAX_STDIN_TEXT],
        "reads": [normalize(r.target, here) for r in seg.redirects if r.mode == "read"],
        "assignments": assignments,
        "exec_assignments": sorted({k for k in names if EXEC.match(k)}),
        "session_assignments": session_names(names, program),
        "session_env": session.exec_changed(),
        "wrappers": list(seg.wrappers),
        "context": list(seg.context),
        "opaque": not all(w.literal for w in seg.words) or not all(r.literal for r in seg.redirects)
        or bool(seg.opaque_reason),
        "opaque_name": (bool(seg.words) and not seg.words[0].literal) or seg.name_unknown,
        "substitution": any(w.substitution for w in seg.words),
        "expansion": any(not (w.literal or w.substitution_only) for w in seg.words)
        or not all(r.literal for r in seg.redirects) or bool(seg.opaque_reason),
        "code_exec": seg.code_exec,
        "dynamic_args": seg.dynamic_args,
        "background": seg.background,
        "stdin_piped": seg.stdin_piped,
        "recursive": bool(program) and program in seg.functions,
        "cwd": here,
        "workspace": session.workspace,
        "git_repo": _git_repo(seg, session),
        "text": seg.text,
    }
    facts["risky_args"] = risky_args(seg, facts)
    return facts


def _git_repo(seg: Segment, session: Session) -> str:
    """Where git finds the repository whose configuration it reads: --git-dir/GIT_DIR, else the folder
    it starts in; "" when not git or known only at run time."""
    place = git_place(seg, session.env)
    if place is None:
        return ""
    found = place.git_dir or place.start
    return "" if found == UNKNOWN else found
