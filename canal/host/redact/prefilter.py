r"""A prefilter for the rules that have no keywords, which would otherwise run their regex over every
text (``discord-bot-token`` among the built-in ones: a lookbehind tried at every position, the most
expensive rule on ordinary output).

Their patterns are compiled into one Hyperscan database in prefilter mode (once per process for a
given set of patterns), which may report a match that the real pattern would not make but never
misses one; a rule it reports nothing for is skipped, any other runs its own regex as before. It is
made broader still (``.`` matches a line break, ``^``/``$`` match at every line), and only applies to
ASCII text, where Hyperscan's byte semantics (ASCII ``\w``, ``\b``, ``\s``) are those of the rules
(``regex`` in ASCII mode). A pattern that might read differently (``regex`` VERSION1 set operations in
a class: ``--``, ``&&``, ``||``, ``~~``), that is not ASCII, or that Hyperscan cannot compile is not
prefiltered: its rule always runs. Rules with keywords are left to the keyword scan: prefiltering
them all would be faster still on ordinary output (one more pass instead of each common keyword's
rule over the whole block), but compiling some of the built-in patterns in prefilter mode takes
seconds, which every process would pay at start.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

from canal.host.redact.keywords import hyperscan
from canal.host.redact.rules import Rule

SET_OPERATIONS = ("--", "&&", "||", "~~")


class PatternSet:
    """Rule patterns in one Hyperscan database, each reporting its first match only: which of them
    match a text at all. A pattern Hyperscan refuses is left out (its rule is not covered)."""

    def __init__(self, flags: int) -> None:
        self._flags = flags
        self._db: Any = None
        self._index: list[int] = []
        self._local = threading.local()  # a Hyperscan scratch space serves one scan at a time
        self.covered: frozenset[int] = frozenset()

    def _use(self, wanted: Sequence[tuple[int, str]]) -> None:
        """Compile the patterns of ``wanted`` (rule index, pattern) that Hyperscan accepts."""
        try:
            usable = list(wanted)
            db = _database(tuple(p for _, p in usable), self._flags) if usable else None
        except hyperscan.error:  # one pattern Hyperscan refuses: find it, keep the others
            usable = [(i, p) for i, p in wanted if _compiles(p, self._flags)]
            db = _database(tuple(p for _, p in usable), self._flags) if usable else None
        self._db, self._index = db, [i for i, _ in usable]
        self.covered = frozenset(self._index) if db is not None else frozenset()

    def _matching(self, text: str) -> frozenset[int]:
        found: set[int] = set()
        index = self._index

        def on_match(pattern: int, _start: int, _end: int, _flags: int, _context: object) -> None:
            found.add(index[pattern])

        self._db.scan(text.encode("ascii"), match_event_handler=on_match, scratch=self._scratch())
        return frozenset(found)

    def _scratch(self) -> Any:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._db)
        return scratch


class RulePrefilter(PatternSet):
    def __init__(self, rules: Sequence[Rule]) -> None:
        super().__init__(_FLAGS)
        if hyperscan is not None:
            self._use([(i, r.expression) for i, r in enumerate(rules)
                       if not r.keywords and r.expression.isascii() and portable(r.expression)])

    def possible(self, text: str) -> frozenset[int] | None:
        """Indexes of covered rules that may match ``text``; None when the prefilter does not apply
        (every rule then runs)."""
        if self._db is None or not text.isascii():
            return None
        return self._matching(text)


def portable(pattern: str) -> bool:
    return not any(op in pattern for op in SET_OPERATIONS)


_FLAGS = 0 if hyperscan is None else (hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_SINGLEMATCH
                                      | hyperscan.HS_FLAG_DOTALL | hyperscan.HS_FLAG_MULTILINE)


@cache
def _database(patterns: tuple[str, ...], flags: int) -> Any:
    """One database per set of patterns and flags, compiled once per process; scanned from any
    thread, each with its own scratch."""
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[p.encode("ascii") for p in patterns], ids=list(range(len(patterns))),
               elements=len(patterns), flags=[flags] * len(patterns))
    return db


@cache
def _compiles(pattern: str, flags: int) -> bool:
    try:
        _database((pattern,), flags)
    except hyperscan.error:
        return False
    return True
