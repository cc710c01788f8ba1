"""The keyword prefilter: which rule keywords a text holds, and where, in one pass.

gitleaks' semantics: a keyword is present if it is a substring of the lower-cased text. Scanning for
each of the ~100 keywords apart cost one pass over the text per keyword (18.8 MiB/s on log-like
output); one literal multi-pattern database (Hyperscan, ``hyperscan`` from PyPI) finds them all in one
pass at memory speed. Keywords that only decide whether a rule runs stop at their first hit
(``SINGLEMATCH``); the keywords of anchored rules report every occurrence, since those rules are tried
at each one.

Positions are those of the lower-cased text, as before: for ASCII text (the common case) that is the
text itself, scanned caselessly; otherwise ``text.lower()``, encoded one byte per character (anything
outside ASCII becomes ``?``, which no ASCII keyword contains). A rule set with a keyword outside ASCII,
or a machine without the library, scans the old way, one substring search per keyword.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

hyperscan: Any
try:
    import hyperscan
except ImportError:  # pragma: no cover - the wheel exists for Linux and macOS on x86-64 and arm64
    hyperscan = None


@dataclass
class Hits:
    """Keywords present in one text, and the positions of those whose positions were asked for."""

    present: set[str] = field(default_factory=set)
    positions: dict[str, list[int]] = field(default_factory=dict)


class KeywordScanner:
    def __init__(self, keywords: Iterable[str], *, positions: Iterable[str] = ()) -> None:
        self.keywords = sorted(set(keywords))
        self._want_positions = frozenset(positions) & set(self.keywords)
        usable = hyperscan is not None and self.keywords and all(k.isascii() and k for k in self.keywords)
        self._db: Any = _compile(tuple(self.keywords), self._want_positions) if usable else None
        self._local = threading.local()  # a Hyperscan scratch space serves one scan at a time

    @property
    def multi_pattern(self) -> bool:
        return self._db is not None

    def scan(self, text: str) -> Hits:
        if self._db is None:
            return self._scan_each(text.lower())
        data = text.encode("ascii") if text.isascii() else text.lower().encode("ascii", "replace")
        hits = Hits()
        keywords, want = self.keywords, self._want_positions

        def on_match(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
            word = keywords[index]
            hits.present.add(word)
            if word in want:
                hits.positions.setdefault(word, []).append(end - len(word))

        self._db.scan(data, match_event_handler=on_match, scratch=self._scratch())
        return hits

    def _scratch(self) -> Any:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._db)
        return scratch

    def _scan_each(self, lowered: str) -> Hits:
        hits = Hits(present={k for k in self.keywords if k in lowered})
        for word in self._want_positions & hits.present:
            hits.positions[word] = list(occurrences(lowered, word))
        return hits


def occurrences(text: str, word: str) -> Iterable[int]:
    """Every start of ``word`` in ``text``, overlapping ones included."""
    at = text.find(word)
    while at != -1:
        yield at
        at = text.find(word, at + 1)


@functools.lru_cache(maxsize=32)
def _compile(keywords: tuple[str, ...], want_positions: frozenset[str]) -> Any:
    """One database per keyword set, compiled once per process (1.4 ms each: a server made a redactor,
    and so compiled it, for every call). A database is immutable and Hyperscan scans it from any number
    of threads at once, each with its own scratch (``KeywordScanner._scratch``)."""
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    flags = [hyperscan.HS_FLAG_CASELESS | (0 if k in want_positions else hyperscan.HS_FLAG_SINGLEMATCH)
             for k in keywords]
    db.compile(expressions=[k.encode("ascii") for k in keywords], ids=list(range(len(keywords))),
               elements=len(keywords), flags=flags, literal=True)
    return db
