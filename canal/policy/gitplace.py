"""Where a git command works: the folder it starts in (``-C``), the repository it uses (``--git-dir``,
``GIT_DIR``) and its work tree (``--work-tree``, ``GIT_WORK_TREE``), as the words spell them.

git reads the configuration of the repository it finds from its start folder (or the one ``--git-dir``
names); that configuration can name programs git runs. The host-side override scans the repositories
this names inside the workspace; a git command whose repository cannot be named here is confirmed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from canal.policy.shell.getopt import scan
from canal.policy.shell.grammar import grammar_of
from canal.policy.shell.model import Segment, basename

UNKNOWN = "?"


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


def git_place(seg: Segment) -> GitPlace | None:
    """None when ``seg`` does not run git. Relative ``--git-dir``/``GIT_DIR`` paths are relative to the
    folder the ``-C`` options lead to (git changes folder while it reads its options, and looks for the
    repository after)."""
    words = seg.words
    if not words or basename(words[0]) != "git":
        return None
    grammar = grammar_of("git")
    assert grammar is not None  # shipped in programs.yaml
    start = seg.cwd
    given = {name: text for name, text in seg.assignments if name in ("GIT_DIR", "GIT_WORK_TREE")}
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
