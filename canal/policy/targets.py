"""Filesystem paths a destructive command would delete or overwrite, for the host-side backup.

Options are read with the same grammar tables as the decision (``shell.getopt``: getopt_long prefixes,
options that take a value), and the segment's working directory is the one its wrappers and literal
``cd``s lead to, so a command backs up what it will really touch. Globs are kept as written (the caller
expands them in the sandbox). Over-reporting is harmless (an extra backup); missing one is not.
"""

from __future__ import annotations

import posixpath

from canal.policy.argfacts import arg_facts, split_args
from canal.policy.gitplace import UNKNOWN, git_place
from canal.policy.paths import normalize
from canal.policy.shell.getopt import Scan, scan
from canal.policy.shell.grammar import grammar_of
from canal.policy.shell.model import Segment, basename

_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "truncate"})
_COPIERS = frozenset({"mv", "cp", "install"})
_FIND_DELETING = frozenset({"rm", "rmdir", "unlink", "shred", "truncate"})
_MOVERS = frozenset({"mv", "tee", "ln"})  # mv takes its sources away; tee and ln replace their operands
_NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")


def _scan(seg: Segment, program: str) -> tuple[Scan | None, list[str]]:
    """The program's options (None without a grammar) and its operands, as it reads them."""
    grammar = grammar_of(program)
    if grammar is None:
        return None, split_args(tuple(w.text for w in seg.words[1:]))[3]
    found = scan(seg.words, 1, grammar)
    return found, [seg.words[i].text for i in found.operands]


def _copy_targets(seg: Segment, program: str) -> list[str]:
    found, operands = _scan(seg, program)
    target_dir = found.value("t", "target-directory") if found is not None else None
    if target_dir is not None:
        return [posixpath.join(target_dir.text, a.rstrip("/").rsplit("/", 1)[-1]) for a in operands]
    return operands[-1:] if len(operands) >= 2 else []


def _find_deletes(seg: Segment) -> bool:
    argv = seg.argv
    if "-delete" in argv:
        return True
    for i, arg in enumerate(argv):
        if (arg in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(argv)
                and argv[i + 1].rsplit("/", 1)[-1] in _FIND_DELETING):
            return True
    return False


def _git_targets(seg: Segment) -> list[str]:
    """``git clean`` deletes in the work tree: where -C, --work-tree or GIT_WORK_TREE put it."""
    place = git_place(seg)
    if place is None or "clean" not in seg.argv[1:]:
        return []
    if place.work_tree and place.work_tree != UNKNOWN:
        return [place.work_tree]
    return [place.start] if place.start else []


def _program_targets(seg: Segment, program: str) -> list[str]:
    if program in _DELETERS:
        return _scan(seg, program)[1]
    if program in _COPIERS:
        return _copy_targets(seg, program)
    if program == "find" and _find_deletes(seg):
        return [w.text for w in arg_facts(seg.words, "find").positionals] or ["."]
    if program == "git":
        return _git_targets(seg)
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


def changed_as_written(seg: Segment) -> list[str]:
    """Every path the segment deletes, truncates, overwrites or appends to, as written (not resolved):
    the backup's targets, ``>>`` targets, files its options write or delete, what mv takes away, and
    what tee and ln replace."""
    found = [r.target for r in seg.redirects if r.mode in ("write", "append")]
    found += [*seg.extra_writes, *seg.deletes]
    if seg.words and seg.words[0].literal and not seg.dynamic_args:
        program = basename(seg.words[0])
        found += _program_targets(seg, program)
        operands = [w.text for w in arg_facts(seg.words, program).positionals] if program in _MOVERS else []
        found += operands if program in ("mv", "tee") else operands[-1:]
        found += _unpacked_into(seg, program)
    return [p for p in found if p and not p.startswith(_NOT_FILES)]


_COMPRESSORS = frozenset({"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lzma",
                          "compress"})
_UNPACKERS = frozenset({"tar", "unzip", "rsync", "patch", *_COMPRESSORS})


def _value(found: Scan, *names: str) -> list[str]:
    word = found.value(*names)
    return [word.text] if word is not None else []


def _tar(seg: Segment, found: Scan) -> list[str]:
    """tar -x overwrites files in the folder it unpacks into; -c, -r, -u write the archive file."""
    mode = seg.argv[1] if len(seg.argv) > 1 and not seg.argv[1].startswith("-") else ""  # tar xf A
    if found.has("x", "extract", "get") or "x" in mode:
        return _value(found, "C", "directory") or ["."]
    if found.has("c", "create", "r", "append", "u", "update") or set("cru") & set(mode):
        archive = _value(found, "f", "file")
        if not archive and mode and "f" in mode:
            operands = [w.text for w in seg.words[2:] if not w.text.startswith("-")]
            archive = operands[:1]
        return archive
    return []


def _unpacked_into(seg: Segment, program: str) -> list[str]:
    """The folder an archive is unpacked into (its files are overwritten), and rsync's destination."""
    if program not in _UNPACKERS:
        return []
    found, operands = _scan(seg, program)
    if found is None:
        return []
    if program in _COMPRESSORS:  # each operand is replaced by its (de)compressed file, unless kept
        kept = found.has("c", "stdout", "to-stdout", "k", "keep", "t", "test", "l", "list")
        return [] if kept else operands
    if program == "patch":
        where = found.value("d", "directory")
        if found.has("dry-run"):
            return []
        return [*operands[:1], *([where.text] if where is not None else []), *_value(found, "o", "output")]
    if program == "tar":
        return _tar(seg, found)
    if program == "unzip":
        where = found.value("d")
        return [where.text if where is not None else "."]
    return operands[-1:] if program == "rsync" and len(operands) >= 2 else []


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
