"""Exact text replacement in one workspace file; the result is a redacted unified diff."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from canal.core.next import act
from canal.host.files.confine import Located, Workspace
from canal.host.files.diff import file_diff, split_lines
from canal.host.files.errors import (
    AMBIGUOUS_MATCH,
    EMPTY_OLD_STRING,
    FILE_CHANGED,
    NO_CHANGE,
    STRING_NOT_FOUND,
    FileOpError,
)
from canal.host.files.fileio import (
    DEFAULT_MAX_BYTES,
    Snapshot,
    decode_text,
    read_file,
    replace_file,
    sha256_hex,
)
from canal.host.files.models import EditResult
from canal.host.files.protect import Protected
from canal.host.ports import AuditSink, Redactor, no_redaction

CLOSEST_CUTOFF = 0.5
CLOSEST_COUNT = 3
_SHOWN_LINE_CHARS = 200


def edit_file(workspace: Workspace, path: Path | str, old: str, new: str, *, replace_all: bool = False,
              base: Path | None = None, expect_sha256: str | None = None, redactor: Redactor = no_redaction,
              audit: AuditSink | None = None, actor: str = "agent",
              max_bytes: int = DEFAULT_MAX_BYTES, guard: Protected | None = None) -> EditResult:
    """Replace ``old`` by ``new`` (once, or every occurrence with ``replace_all``), atomically.

    Refuses (nothing written): empty or unchanged text, text not found (with the closest lines),
    several occurrences without ``replace_all`` (with their line numbers), binary or huge files, and
    a file that changed since ``expect_sha256`` or since it was read here.
    """
    loc = workspace.locate(path, base=base, follow=True)
    if guard is not None:
        guard.check(loc, "edit")
    snap = read_file(loc, max_bytes=max_bytes)
    _check_expected(loc, snap, expect_sha256)
    text = decode_text(snap, loc, "edit")
    _check_strings(loc, old, new)
    positions = _occurrences(text, old)
    if not positions:
        raise _not_found(loc, text, old, redactor)
    if len(positions) > 1 and not replace_all:
        raise _ambiguous(loc, text, positions)
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    data = updated.encode("utf-8")
    replace_file(loc, data, mode=snap.mode, expect_sha256=snap.sha256, max_bytes=max_bytes)
    count = len(positions) if replace_all else 1
    after = sha256_hex(data)
    if audit is not None:
        audit.append("file.edit", {"path": loc.display, "replacements": count,
                                   "sha256_before": snap.sha256, "sha256_after": after}, actor=actor)
    diff = file_diff(text, updated, path=loc.display, redactor=redactor)
    return EditResult(path=loc.display, replacements=count, diff=diff.text, added=diff.added,
                      removed=diff.removed, diff_truncated=diff.truncated, sha256_before=snap.sha256,
                      sha256_after=after)


def _check_expected(loc: Located, snap: Snapshot, expect_sha256: str | None) -> None:
    if expect_sha256 is not None and expect_sha256 != snap.sha256:
        msg = f"{loc.display} changed since you read it (sha256 {snap.sha256[:12]}, expected " \
              f"{expect_sha256[:12]}); nothing was written."
        raise FILE_CHANGED(msg, next=act("view", "read it again, then retry", path=loc.display),
                          details={"path": loc.display, "expected_sha256": expect_sha256,
                                   "found_sha256": snap.sha256})


def _check_strings(loc: Located, old: str, new: str) -> None:
    if not old:
        msg = f"The old text for {loc.display} is empty; there is nothing to find."
        raise EMPTY_OLD_STRING(msg, next=act("write", "to replace the whole file", path=loc.display),
                             details={"path": loc.display})
    if old == new:
        msg = f"The old and new text are the same; {loc.display} was not changed."
        raise NO_CHANGE(msg, next=act("view", path=loc.display), details={"path": loc.display})


def _occurrences(text: str, old: str) -> list[int]:
    found: list[int] = []
    pos = text.find(old)
    while pos != -1:
        found.append(pos)
        pos = text.find(old, pos + len(old))
    return found


def line_numbers(text: str, positions: Sequence[int]) -> list[int]:
    """1-based line number of each (ascending) character position."""
    numbers: list[int] = []
    line, last = 1, 0
    for pos in positions:
        line += text.count("\n", last, pos)
        last = pos
        numbers.append(line)
    return numbers


def _ambiguous(loc: Located, text: str, positions: list[int]) -> FileOpError:
    lines = line_numbers(text, positions)
    shown = ", ".join(map(str, lines[:20])) + (", ..." if len(lines) > 20 else "")
    msg = f"The old text occurs {len(positions)} times in {loc.display} (lines {shown}); nothing was changed."
    return AMBIGUOUS_MATCH(msg, hint="add surrounding lines to the old text so it matches once, or replace "
                          "every one", next=act("edit", path=loc.display, all=True),
                          details={"path": loc.display, "count": len(positions), "lines": lines})


def closest_lines(text: str, old: str, *, count: int = CLOSEST_COUNT,
                  cutoff: float = CLOSEST_CUTOFF) -> list[tuple[int, str]]:
    """The windows of the file most similar to ``old`` (same number of lines), best first."""
    lines = [line.rstrip("\n") for line in split_lines(text)]
    width = max(1, len(split_lines(old)))
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(old.strip("\n"))
    scored: list[tuple[float, int, str]] = []
    for start in range(max(1, len(lines) - width + 1)):
        window = "\n".join(lines[start:start + width])
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            ratio = matcher.ratio()
            if ratio >= cutoff:
                scored.append((ratio, start + 1, window))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(line, window) for _, line, window in scored[:count]]


def _not_found(loc: Located, text: str, old: str, redactor: Redactor) -> FileOpError:
    close = closest_lines(text, old)
    shown = [(line, redactor(window)) for line, window in close]
    msg = f"The old text was not found in {loc.display}; nothing was changed."
    if shown:
        msg += " Closest lines:\n" + "\n".join(_numbered(line, window) for line, window in shown)
    return STRING_NOT_FOUND(msg, next=act("view", "copy the exact text, whitespace included",
                            path=loc.display),
                          details={"path": loc.display,
                                   "closest": [{"line": line, "text": window} for line, window in shown]})


def _numbered(first: int, window: str) -> str:
    rows = []
    for i, row in enumerate(window.split("\n")):
        cut = row if len(row) <= _SHOWN_LINE_CHARS else row[:_SHOWN_LINE_CHARS] + "..."
        rows.append(f"{first + i:>6}\t{cut}")
    return "\n".join(rows)
