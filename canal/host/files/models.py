"""Results of file operations: pydantic models for ``--json``, each with the text an agent reads."""

from __future__ import annotations

import shlex
from typing import Literal

from pydantic import BaseModel, ConfigDict

from canal.core.next import Say, act


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EditResult(_Model):
    status: Literal["edited"] = "edited"
    path: str
    replacements: int
    diff: str
    added: int
    removed: int
    diff_truncated: bool
    sha256_before: str
    sha256_after: str

    def to_text(self, say: Say | None = None) -> str:
        noun = "replacement" if self.replacements == 1 else "replacements"
        return f"{self.diff}[edited {self.path}: {self.replacements} {noun}, +{self.added} -{self.removed}]"


class WriteResult(_Model):
    status: Literal["created", "replaced", "unchanged"]
    path: str
    bytes: int
    lines: int
    diff: str | None
    diff_truncated: bool = False
    backup_id: str | None
    sha256: str

    def to_text(self, say: Say | None = None) -> str:
        noun = "line" if self.lines == 1 else "lines"
        head = f"[{self.status} {self.path}: {self.lines} {noun}, {self.bytes} bytes"
        if self.backup_id:
            restore = say(act("restore", trash_id=self.backup_id, to="PATH")) if say is not None else None
            head += f" | previous version kept: {restore or 'trash id ' + self.backup_id}"
        body = self.diff or ""
        return f"{body}{head}]"


class TextView(_Model):
    kind: Literal["text"] = "text"
    path: str
    start: int
    end: int
    total_lines: int
    lines: list[str]
    sha256: str
    note: str | None = None

    def to_text(self, say: Say | None = None) -> str:
        if self.total_lines == 0:
            return f"[{self.path}: empty file]"
        width = max(6, len(str(self.end)))
        body = "".join(f"{self.start + i:>{width}}\t{line}\n" for i, line in enumerate(self.lines))
        footer = f"[{self.path}: showing {self.start}-{self.end} of {self.total_lines} lines"
        if self.end < self.total_lines:
            step = self.end - self.start + 1
            lines = f"{self.end + 1}:{self.end + step}"
            more = say(act("view", path=self.path, range=lines)) if say is not None else None
            footer += f" | next: {more or 'lines ' + lines}"
        if self.note:
            footer += f" | {self.note}"
        return f"{body}{footer}]"


class BinaryView(_Model):
    kind: Literal["binary"] = "binary"
    path: str
    size: int
    sha256: str

    def to_text(self, say: Say | None = None) -> str:
        inspect = say(act("run", command=f"xxd {shlex.quote(self.path)} | head")) if say is not None else None
        return f"[{self.path}: binary file, {self.size} bytes, not shown" + (
            f" | inspect it with: {inspect}]" if inspect else "]")


class DirEntry(_Model):
    name: str
    kind: Literal["file", "dir", "symlink", "other"]
    size: int | None = None
    target: str | None = None


class DirView(_Model):
    kind: Literal["dir"] = "dir"
    path: str
    entries: list[DirEntry]
    total_entries: int

    def to_text(self, say: Say | None = None) -> str:
        lines = [_entry_line(e) for e in self.entries]
        footer = f"[{self.path}: folder, showing {len(self.entries)} of {self.total_entries} entries]"
        return "\n".join([*lines, footer])


def _entry_line(entry: DirEntry) -> str:
    if entry.kind == "dir":
        return f"{entry.name}/"
    if entry.kind == "symlink":
        return f"{entry.name} -> {entry.target}"
    if entry.kind == "other":
        return f"{entry.name} (special file)"
    return f"{entry.name}  ({entry.size} bytes)"


ViewResult = TextView | BinaryView | DirView
