"""Unified diffs that match GNU ``diff -u``, including the ``\\ No newline at end of file`` marker.

``difflib.unified_diff`` emits a last line without its newline as is, so the next diff line runs
into it and the marker is missing. Lines here are split on ``\\n`` only (``str.splitlines`` would
also split on ``\\r``, form feeds and Unicode separators and produce a diff no tool agrees with),
kept with their endings, and a line that lacks one is followed by the marker, on either side.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from canal.host.ports import Redactor, no_redaction

NO_NEWLINE = "\\ No newline at end of file\n"
DEFAULT_MAX_LINES = 400
DEFAULT_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class Diff:
    """A redacted, capped unified diff; counts are of the full diff, before the cap."""

    text: str
    added: int
    removed: int
    truncated: bool
    total_lines: int


def split_lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept; a final line without one stays without one."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified_diff(old: str, new: str, *, old_label: str, new_label: str, context: int = 3) -> str:
    """The exact unified diff of two texts ("" when they are equal)."""
    out: list[str] = []
    raw = difflib.unified_diff(split_lines(old), split_lines(new), fromfile=old_label, tofile=new_label,
                               n=context, lineterm="\n")
    for line in raw:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n")
            out.append(NO_NEWLINE)
    return "".join(out)


def file_diff(old: str, new: str, *, path: str, created: bool = False, redactor: Redactor = no_redaction,
              max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> Diff:
    """The diff of one workspace file, git-style labels, redacted, then capped."""
    old_label = "/dev/null" if created else f"a/{path}"
    text = unified_diff(old, new, old_label=old_label, new_label=f"b/{path}")
    added, removed = _count(text)
    return cap(redactor(text), added=added, removed=removed, max_lines=max_lines, max_bytes=max_bytes)


def _count(text: str) -> tuple[int, int]:
    added = removed = 0
    for line in text.split("\n"):
        if line.startswith(("+++ ", "--- ")):
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed


def cap(text: str, *, added: int, removed: int, max_lines: int, max_bytes: int) -> Diff:
    lines = split_lines(text)
    kept: list[str] = []
    size = 0
    for line in lines[:max_lines]:
        size += len(line.encode("utf-8"))
        if size > max_bytes:
            break
        kept.append(line)
    truncated = len(kept) < len(lines)
    body = "".join(kept)
    if truncated:
        body += f"[diff truncated: {len(lines) - len(kept)} more lines not shown]\n"
    return Diff(body, added, removed, truncated, len(lines))
