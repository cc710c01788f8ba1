"""JSON paths inside a document: RFC 6901 pointers on disk, dotted patterns from writers.

A pattern such as ``steps.*.result`` or ``gate.deploy.password`` names nodes; ``*`` matches any one
key or list index. A node that matches is sealed whole, whatever its type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Union

Segment = Union[str, int]  # noqa: UP007 - a runtime alias
Path = tuple[Segment, ...]
Sensitive = Union[Iterable[str], Callable[[Path], bool], None]  # noqa: UP007


def pointer(path: Path) -> str:
    """``("steps", 3, "a/b")`` -> ``/steps/3/a~1b``."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in path)


def unpointer(text: str) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in text[1:].split("/"))


def matcher(sensitive: Sensitive) -> Callable[[Path], bool]:
    if sensitive is None:
        return lambda _path: False
    if callable(sensitive):
        return sensitive
    patterns = [tuple(p.split(".")) for p in sensitive]

    def match(path: Path) -> bool:
        return any(len(p) == len(path) and all(a in ("*", str(b)) for a, b in zip(p, path, strict=True))
                   for p in patterns)

    return match
