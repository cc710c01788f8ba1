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


def matcher(sensitive: Sensitive, *, also: Iterable[str] = ()) -> Callable[[Path], bool]:
    """A test for "is this node sealed": the writer's patterns or predicate, plus pointers ``also``
    (paths sealed in an earlier revision stay sealed)."""
    declared = sensitive if callable(sensitive) else None
    texts = [] if callable(sensitive) or sensitive is None else [tuple(t.split(".")) for t in sensitive]
    exact = {p for p in texts if "*" not in p} | {unpointer(w) for w in also}
    wild: dict[tuple[int, str], list[tuple[str, ...]]] = {}  # by (length, last segment)
    for parts in texts:
        if "*" in parts:
            wild.setdefault((len(parts), parts[-1]), []).append(parts)
    lengths = {len(p) for p in exact} | {n for n, _ in wild}

    seen: dict[Path, bool] = {}  # a save walks the tree three times; decide each node once

    def match(path: Path) -> bool:
        known = seen.get(path)
        if known is None:
            known = seen[path] = decide(path)
        return known

    def decide(path: Path) -> bool:
        if declared is not None and declared(path):
            return True
        if len(path) not in lengths:
            return False
        keys = tuple(s if isinstance(s, str) else str(s) for s in path)
        if keys in exact:
            return True
        candidates = wild.get((len(keys), keys[-1]), []) + wild.get((len(keys), "*"), [])
        return any(all(a == "*" or a == b for a, b in zip(p, keys, strict=True)) for p in candidates)

    return match
