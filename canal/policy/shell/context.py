"""Where a simple command sits while the tree is walked: nesting, inherited redirects, wrappers, pipes."""

from __future__ import annotations

import dataclasses

from canal.policy.shell.model import Redirect, ShellParseFailure


@dataclasses.dataclass(frozen=True)
class Ctx:
    context: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    wrappers: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    stdin_piped: bool = False
    piped_text: str | None = None  # what the previous pipeline stage visibly prints
    dynamic: bool = False  # commands get arguments at run time (a program run by sort --compress-program)
    background: bool = False
    nesting: int = 0

    def inside(self, label: str, **changes: object) -> Ctx:
        return dataclasses.replace(self, context=(*self.context, label), **changes)  # type: ignore[arg-type]


def fail(reason: str) -> ShellParseFailure:
    return ShellParseFailure(reason)


def strongest(*codes: str) -> str:
    """The most severe code-execution marker among ``codes``."""
    for kind in ("embedded", "stdin", "inline"):
        if kind in codes:
            return kind
    return ""
