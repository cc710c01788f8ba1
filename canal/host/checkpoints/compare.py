"""Differences between two states of the workspace, and the patch that shows them.

Text files get a unified diff (git's ``a/`` ``b/`` labels, names quoted as git quotes them, so ``git
apply`` accepts it and recreates any name exactly); binary files,
mode changes, symlinks, type changes and deletions of binary files are lines of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from canal.core.display import git_quoted
from canal.host.checkpoints.models import Change, ChangeSummary
from canal.host.checkpoints.scan import Entry
from canal.host.files.diff import unified_diff
from canal.host.files.fileio import is_binary

KIND_NAMES = {"f": "file", "l": "symlink", "d": "folder"}
SUMMARY_PATHS = 10
MAX_PATCH_BYTES = 4 * 1024 * 1024

Loader = Callable[[str, Entry], bytes]  # (path, entry) -> the file's bytes in that state


def changes(old: Mapping[str, Entry], new: Mapping[str, Entry]) -> list[Change]:
    out: list[Change] = []
    differ = [p for p, e in new.items() if old.get(p) != e] + [p for p in old if p not in new]
    for path in sorted(differ):
        change = _one(path, old.get(path), new.get(path))
        if change is not None:
            out.append(change)
    return out


def differs(old: Mapping[str, Entry], new: Mapping[str, Entry]) -> bool:
    """Whether ``changes(old, new)`` would name anything, stopping at the first change found."""
    get = old.get
    for path, entry in new.items():
        before = get(path)
        if before != entry and _one(path, before, entry) is not None:
            return True
    return any(path not in new for path in old)


def _one(path: str, a: Entry | None, b: Entry | None) -> Change | None:
    if a is None:
        assert b is not None
        return Change(path=path, kind="added", detail=_describe(b))
    if b is None:
        return Change(path=path, kind="deleted", detail=_describe(a))
    if a[0] != b[0]:
        return Change(path=path, kind="type", detail=f"{KIND_NAMES[a[0]]} -> {KIND_NAMES[b[0]]}")
    if a[0] == "l" and a[6] != b[6]:
        return Change(path=path, kind="symlink", detail=f"-> {a[6]} now -> {b[6]}")
    if a[0] == "f" and _content(a) != _content(b):
        mode = f" (mode {a[1]:04o} -> {b[1]:04o})" if a[1] != b[1] else ""
        return Change(path=path, kind="modified", detail=mode.strip(" ()"))
    if a[1] != b[1]:
        return Change(path=path, kind="mode", detail=f"mode {a[1]:04o} -> {b[1]:04o}")
    return None  # only times or owners differ: not a change a patch carries


def _content(e: Entry) -> str:
    return e[6].split("-", 1)[0]


def _describe(e: Entry) -> str:
    if e[0] == "l":
        return f"symlink -> {e[6]}"
    if e[0] == "d":
        return "folder"
    return f"file, {e[2]} bytes, mode {e[1]:04o}"


def summary(found: list[Change]) -> ChangeSummary:
    counts = {"added": 0, "modified": 0, "deleted": 0}
    for c in found:
        counts["added" if c.kind == "added" else "deleted" if c.kind == "deleted" else "modified"] += 1
    return ChangeSummary(**counts, paths=[c.path for c in found[:SUMMARY_PATHS]])


def patch(found: list[Change], old: Mapping[str, Entry], new: Mapping[str, Entry], load_old: Loader,
          load_new: Loader) -> tuple[str, list[Change]]:
    """A git-apply-compatible patch of the text changes; returns it and the changes marked binary."""
    parts: list[str] = []
    marked: list[Change] = []
    size = 0
    for c in found:
        a, b = old.get(c.path), new.get(c.path)
        text, binary = _file_patch(c.path, a, b, load_old, load_new)
        marked.append(c.model_copy(update={"binary": binary}) if binary else c)
        if text and size + len(text) <= MAX_PATCH_BYTES:
            parts.append(text)
            size += len(text)
    return "".join(parts), marked


def _file_patch(path: str, a: Entry | None, b: Entry | None, load_old: Loader,
                load_new: Loader) -> tuple[str, bool]:
    fa = a if a is not None and a[0] == "f" else None
    fb = b if b is not None and b[0] == "f" else None
    old_name, new_name = git_quoted(f"a/{path}"), git_quoted(f"b/{path}")
    header = f"diff --git {old_name} {new_name}\n"
    if fa is None and fb is None:
        return "", False
    old_bytes = load_old(path, fa) if fa is not None else b""
    new_bytes = load_new(path, fb) if fb is not None else b""
    if is_binary(old_bytes) or is_binary(new_bytes):
        return "", True
    meta = _git_meta(fa, fb)
    if old_bytes == new_bytes:
        return (header + meta if meta and fa is not None and fb is not None else ""), False
    body = unified_diff(old_bytes.decode(), new_bytes.decode(),
                        old_label="/dev/null" if fa is None else old_name,
                        new_label="/dev/null" if fb is None else new_name)
    return header + meta + body, False


def _git_meta(fa: Entry | None, fb: Entry | None) -> str:
    def mode(e: Entry) -> str:
        return "100755" if e[1] & 0o111 else "100644"

    if fa is None and fb is not None:
        return f"new file mode {mode(fb)}\n"
    if fb is None and fa is not None:
        return f"deleted file mode {mode(fa)}\n"
    if fa is not None and fb is not None and mode(fa) != mode(fb):
        return f"old mode {mode(fa)}\nnew mode {mode(fb)}\n"
    return ""
