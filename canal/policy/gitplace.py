"""Where a git command works: the folder it starts in (``-C``), the repository it uses (``--git-dir``,
``GIT_DIR``) and its work tree (``--work-tree``, ``GIT_WORK_TREE``), as the words spell them.

git reads the configuration of the repository it finds from its start folder (or the one ``--git-dir``
names); that configuration can name programs git runs. The host-side override scans the repositories
this names inside the workspace; a git command whose repository cannot be named here is confirmed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from canal.policy.shell.getopt import scan
from canal.policy.shell.grammar import grammar_of
from canal.policy.shell.model import Segment, basename

UNKNOWN = "?"
_PLACE_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")


@dataclass(frozen=True)
class GitPlace:
    start: str  # absolute folder git starts in (after -C); "" unknown
    git_dir: str = ""  # --git-dir / GIT_DIR, absolute; "" git discovers it from start; UNKNOWN
    work_tree: str = ""  # --work-tree / GIT_WORK_TREE, absolute; "" none given; UNKNOWN

    @property
    def known(self) -> bool:
        return bool(self.start) and UNKNOWN not in (self.git_dir, self.work_tree)


def _join(base: str, path: str) -> str:
    if path.startswith("/"):
        return posixpath.normpath(path)
    if not base or path.startswith("~"):
        return ""
    return posixpath.normpath(posixpath.join(base, path))


def _resolved(base: str, path: str) -> str:
    found = _join(base, path)
    return found or UNKNOWN


def git_place(seg: Segment, env: Mapping[str, str] | None = None) -> GitPlace | None:
    """None when ``seg`` does not run git. Relative ``--git-dir``/``GIT_DIR`` paths are relative to the
    folder the ``-C`` options lead to (git changes folder while it reads its options, and looks for the
    repository after). ``env``: the variables the session exported (its ``GIT_DIR`` holds unless the
    command sets its own); ``GIT_COMMON_DIR`` names a repository git reads configuration from: unknown."""
    words = seg.words
    if not words or basename(words[0]) != "git":
        return None
    grammar = grammar_of("git")
    assert grammar is not None  # shipped in programs.yaml
    start = seg.cwd
    given = {name: text for name, text in (env or {}).items() if name in _PLACE_VARIABLES}
    given.update((name, text) for name, text in seg.assignments if name in _PLACE_VARIABLES)
    if "GIT_COMMON_DIR" in given:
        given["GIT_DIR"] = "$"
    for opt in scan(words, 1, grammar).options:
        value = opt.value
        literal = value is not None and value.literal and not (seg.dynamic_args and "{}" in value.text)
        text = value.text if value is not None and literal else None
        if opt.name == "C":
            if text != "":  # -C "" leaves the folder as it is
                start = _join(start, text) if text is not None else ""
        elif opt.name in ("git-dir", "work-tree"):
            given["GIT_DIR" if opt.name == "git-dir" else "GIT_WORK_TREE"] = text if text is not None else "$"
    found = {name: UNKNOWN if "$" in text or "`" in text else _resolved(start, text)
             for name, text in given.items()}
    return GitPlace(start, found.get("GIT_DIR", ""), found.get("GIT_WORK_TREE", ""))


def repositories(segments: Iterable[Segment],
                 env: Mapping[str, str] | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(start folders, --git-dir repositories) of the git commands among ``segments``, known ones only,
    in order, once each: what the sandbox-side override scans before the command."""
    starts: dict[str, None] = {}
    dirs: dict[str, None] = {}
    for seg in segments:
        place = git_place(seg, env)
        if place is None:
            continue
        if place.git_dir:
            if place.git_dir != UNKNOWN:
                dirs[place.git_dir] = None
        elif place.start:
            starts[place.start] = None
    return tuple(starts), tuple(dirs)
