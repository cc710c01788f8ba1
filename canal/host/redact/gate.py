"""Whether a rule with keywords can match a long text at all, for every such rule in one pass.

A rule runs when one of its keywords is in the text (gitleaks' semantics), and some keywords are
common by chance: ``://`` in log output, ``acca`` in hex digests, ``aws`` and ``sk`` in base64. Such a
rule's regex then ran over the whole block (1-9 ms a MiB). Here the rules' patterns, made larger
(``relax``: counted repeats opened, lookarounds dropped), are one Hyperscan database in which each
reports its first match only; a rule whose larger pattern matches nowhere cannot match, and is
skipped. Only ASCII text (Hyperscan's ``\\w``, ``\\s`` and ``\\b`` are then those of the rules), and
only texts of ``BATCH_MIN`` characters or more: the database is compiled with the first such text
(0.1-0.2 s for the built-in rules), not when a redactor is made, and short texts gain little.
Keyword-anchored rules are left to ``anchors``, rules without keywords to ``prefilter``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

from canal.host.redact.entropy import BATCH_MIN
from canal.host.redact.keywords import hyperscan
from canal.host.redact.prefilter import portable
from canal.host.redact.relax import relaxed
from canal.host.redact.rules import Rule


class RuleGate:
    def __init__(self, rules: Sequence[Rule]) -> None:
        self._wanted = tuple((i, p) for i, r in enumerate(rules) if r.keywords and not r.anchored
                             and (p := _larger(r.pattern.pattern)) is not None)
        self._db: Any = None
        self._index: list[int] = []
        self._built = False
        self._local = threading.local()  # a Hyperscan scratch space serves one scan at a time
        self.covered: frozenset[int] = frozenset()

    def possible(self, text: str) -> frozenset[int] | None:
        """Indexes of covered rules that may match ``text``; None when the gate does not apply
        (every rule whose keywords are present then runs)."""
        if hyperscan is None or len(text) < BATCH_MIN or not text.isascii():
            return None
        if not self._built:
            self._build()
        if self._db is None:
            return None
        found: set[int] = set()
        index = self._index

        def on_match(pattern: int, _start: int, _end: int, _flags: int, _context: object) -> None:
            found.add(index[pattern])

        self._db.scan(text.encode("ascii"), match_event_handler=on_match, scratch=self._scratch())
        return frozenset(found)

    def _build(self) -> None:
        patterns = tuple(p for _, p in self._wanted)
        try:
            usable = list(self._wanted)
            db = _database(patterns)
        except hyperscan.error:  # one pattern Hyperscan refuses: find it, keep the others
            usable = [(i, p) for i, p in self._wanted if _compiles(p)]
            db = _database(tuple(p for _, p in usable)) if usable else None
        self._db, self._index = db, [i for i, _ in usable]
        self.covered = frozenset(self._index) if db is not None else frozenset()
        self._built = True

    def _scratch(self) -> Any:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._db)
        return scratch


def _larger(pattern: str) -> str | None:
    if not pattern.isascii() or not portable(pattern):
        return None
    return relaxed(pattern)


_FLAGS = 0 if hyperscan is None else (hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_DOTALL
                                      | hyperscan.HS_FLAG_MULTILINE)


@cache
def _database(patterns: tuple[str, ...]) -> Any:
    """One database per set of patterns, compiled once per process; scanned from any thread."""
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[p.encode("ascii") for p in patterns], ids=list(range(len(patterns))),
               elements=len(patterns), flags=[_FLAGS] * len(patterns))
    return db


@cache
def _compiles(pattern: str) -> bool:
    try:
        _database((pattern,))
    except hyperscan.error:
        return False
    return True
