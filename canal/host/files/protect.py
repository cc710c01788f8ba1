"""Files the agent's own file operations (edit, write, rm, restore) may not change; a person may.

- Canal's trusted settings: ``canal.yaml`` (at any depth: a subfolder's would be a project of its
  own when Canal runs from there) and the policy files it names (changing them would change
  the rules the agent runs under; ``canal config approve`` is still needed for any change to apply).
- git files that make git run programs: anything under a ``.git`` folder (config, hooks, info/...)
  and every ``.gitattributes`` (it picks the filter and diff drivers that run).

Reading them stays allowed. An operation on a folder is refused when a protected file lies inside it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from canal.core.next import act
from canal.host.files.confine import Located
from canal.host.files.errors import PATH_PROTECTED

CONFIG_NAME = "canal.yaml"  # runtime.settings.project's; files sits below it in the layers
GIT_FOLDER = ".git"
GIT_ATTRIBUTES = ".gitattributes"
_WALK_LIMIT = 100_000  # entries looked at inside a folder before giving up (and refusing)


@dataclass(frozen=True)
class Protected:
    """What is protected in one workspace; ``settings`` are paths relative to its root."""

    settings: frozenset[PurePosixPath]

    @classmethod
    def of(cls, settings: Iterable[PurePosixPath | str]) -> Protected:
        return cls(frozenset(PurePosixPath(p) for p in settings))

    def why(self, rel: PurePosixPath) -> str | None:
        if rel in self.settings:
            return "Canal's trusted settings (the rules the agent runs under)"
        if rel.name == CONFIG_NAME:
            return "a Canal settings file (a project root when Canal runs from that folder)"
        if GIT_FOLDER in rel.parts:
            return "a git repository's internals (its config and hooks make git run programs)"
        if rel.name == GIT_ATTRIBUTES:
            return "git attributes (they pick the filter and diff drivers git runs)"
        return None

    def check(self, loc: Located, action: str, content: Path | None = None) -> None:
        """Refuse ``action`` on ``loc`` if it is protected, holds a protected file, or if ``content``
        (a folder about to be put there) holds one."""
        why = self.why(loc.rel)
        inner = None if why else self._inside(loc.rel, loc.path) or (
            self._inside(loc.rel, content) if content is not None else None)
        if why is None and inner is None:
            return
        shown = loc.display if why else f"{loc.display} (it holds {inner})"
        reason = why or self.why(PurePosixPath(inner or ""))
        msg = f"{shown} is {reason}: the agent's file operations may not {action} it. Nothing was changed."
        hint = "ask a person to make this change (they run the same command in a terminal)"
        approve = act("config.approve", "a change to canal.yaml or a policy file needs this too")
        raise PATH_PROTECTED(msg, hint=hint, next=approve,
                            details={"path": loc.display, "protected": inner or loc.display,
                                                     "action": action})

    def _inside(self, rel: PurePosixPath, folder: Path | None) -> str | None:
        for setting in sorted(self.settings):
            if setting != rel and (not rel.parts or setting.is_relative_to(rel)):
                return str(setting)
        if folder is None or folder.is_symlink() or not folder.is_dir():
            return None
        return _walk_for_git(folder, rel)


def _walk_for_git(folder: Path, rel: PurePosixPath) -> str | None:
    seen = 0
    for here, dirs, files in os.walk(folder, followlinks=False):
        seen += len(dirs) + len(files)
        for name in (*dirs, *files):
            if name in (GIT_FOLDER, GIT_ATTRIBUTES, CONFIG_NAME):
                return str(rel / Path(here, name).relative_to(folder))
        if seen > _WALK_LIMIT:
            return f"{rel} (more than {_WALK_LIMIT} entries: not checked)"
    return None
