"""Filesystem paths a destructive command would delete or overwrite, for the host-side backup.

Paths are resolved against the segment's working directory; globs are kept as written (the caller
expands them in the sandbox). Over-reporting is harmless (an extra backup); missing one is not.
"""

from __future__ import annotations

from canal.policy.argfacts import arg_facts
from canal.policy.paths import normalize
from canal.policy.shell.model import Segment, basename
from canal.policy.shell.options import OptionSpec, scan

_DELETERS = {"rm": OptionSpec(), "rmdir": OptionSpec(), "unlink": OptionSpec(),
             "shred": OptionSpec("nsu", frozenset({"iterations", "size", "random-source"})),
             "truncate": OptionSpec("sr", frozenset({"size", "reference"}))}
_COPIERS = {"mv": OptionSpec("tS", frozenset({"target-directory", "suffix"})),
            "cp": OptionSpec("tS", frozenset({"target-directory", "suffix"})),
            "install": OptionSpec("tSmogt", frozenset({"target-directory", "suffix", "mode", "owner",
                                                       "group"}))}
_FIND_DELETING = frozenset({"rm", "rmdir", "unlink", "shred", "truncate"})
_NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")


def _after_options(seg: Segment, spec: OptionSpec) -> list[str]:
    words = seg.words
    s = scan(words, 1, spec)
    rest = [w.text for w in words[s.index:]]
    # options may follow operands (GNU): keep only non-option words
    return [a for a in rest if not a.startswith("-") or a == "-"] if "--" not in rest else rest


def _copy_targets(seg: Segment, spec: OptionSpec) -> list[str]:
    s = scan(seg.words, 1, spec)
    operands = _after_options(seg, spec)
    target_dir = s.seen.get("t") or s.seen.get("--target-directory")
    if target_dir:
        return [f"{target_dir.rstrip('/')}/{a.rstrip('/').rsplit('/', 1)[-1]}" for a in operands]
    return operands[-1:] if len(operands) >= 2 else []


def _find_roots(argv: tuple[str, ...]) -> list[str]:
    roots: list[str] = []
    for arg in argv[1:]:
        if arg.startswith(("-", "(", "!")):
            break
        roots.append(arg)
    return roots or ["."]


def _find_deletes(seg: Segment) -> bool:
    argv = seg.argv
    if "-delete" in argv:
        return True
    for i, arg in enumerate(argv):
        if (arg in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(argv)
                and argv[i + 1].rsplit("/", 1)[-1] in _FIND_DELETING):
            return True
    return False


def _program_targets(seg: Segment, program: str) -> list[str]:
    if program in _DELETERS:
        return _after_options(seg, _DELETERS[program])
    if program in _COPIERS:
        return _copy_targets(seg, _COPIERS[program])
    if program == "find" and _find_deletes(seg):
        return _find_roots(seg.argv)
    if program == "git" and "clean" in seg.argv[1:]:
        return ["."]
    if program == "dd":
        return [a[3:] for a in seg.argv[1:] if a.startswith("of=")]
    if program == "sed":
        parsed = arg_facts(seg.words, "sed")
        if "i" in parsed.flags or "in-place" in parsed.long_flags:
            positionals = [w.text for w in parsed.positionals]
            scripted = bool({"e", "f"} & set(parsed.flags) or {"expression", "file"} & set(parsed.long_flags))
            return positionals if scripted else positionals[1:]
    return list(seg.deletes)


def segment_targets(seg: Segment) -> list[str]:
    """Paths a command deletes or overwrites (what a confirmed destructive command backs up first)."""
    if not seg.words or not seg.words[0].literal:
        return []
    found = [] if seg.dynamic_args else _program_targets(seg, basename(seg.words[0]))
    found += [r.target for r in seg.redirects if r.mode == "write"]
    cwd = seg.cwd
    return [normalize(p, cwd) for p in found if p and not p.startswith(_NOT_FILES)]


_WRITERS = frozenset({"tee", "ln", "chmod", "chown", "chgrp", "touch", "patch", "install"})


def write_targets(seg: Segment) -> list[str]:
    """Every path a command writes (created, replaced, appended to, or its mode changed), normalised."""
    found = [r.target for r in seg.redirects if r.mode in ("write", "append")]
    if seg.words and seg.words[0].literal:
        program = basename(seg.words[0])
        found += _program_targets(seg, program) if program not in ("find", "git") else []
        if program in _WRITERS:
            found += [w.text for w in arg_facts(seg.words, program).positionals]
    return [normalize(p, seg.cwd) for p in found if p and not p.startswith(_NOT_FILES)]
