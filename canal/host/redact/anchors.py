r"""Where a keyword-anchored rule can match at all, found in one Hyperscan pass.

A keyword-anchored rule (``generic-secret`` among the built-in ones) is a prefix of at most ``L``
characters of ``[\w.-]`` and a rest that starts with one of its keywords. The detector tries it once
at each keyword occurrence (``detector._windowed``): ~2,000 attempts per MiB of log output, where
``pass`` and ``key`` stand in ``PASSED`` and ``KeyError``, nearly all failing. Here the rests of
these rules are compiled into one Hyperscan database that reports, for each end of a match, the
leftmost start (``SOM_LEFTMOST``), each rest made larger first (``relax``: counted repeats opened,
lookarounds dropped; Hyperscan refuses both here, and a larger language only reports more).

Why skipping the other occurrences changes nothing: an attempt at the occurrence ``p`` starts at some
``s`` with ``p - L <= s <= p``, and succeeds only if the rest matches at some ``q`` with
``s <= q <= s + L``, ending at ``e > q``; Hyperscan then reports ``e`` with a start ``f <= q``. So a
successful attempt has a report with ``f <= p + L`` and ``e > p - L``: an occurrence farther than
``L`` from every reported span is one whose attempt fails, and failing attempts change nothing.

Start of match makes a scan ~8x slower, and most texts have no match at all: a scan of the same rests
without it (each reporting its first match only) says so first, and the scan with it runs only for
a text where some rest matches.

Only ASCII text (Hyperscan's ``\w``, ``\s`` and ``\b`` are then those of the rules) of ``BATCH_MIN``
characters or more, and only rules whose rest Hyperscan compiles as written (no ``regex`` set
operations, no lookaround, no back reference) are covered; the others are tried at every occurrence
as before. The databases are compiled with the first such text (30-50 ms: a process whose texts are
all short, a new project's first command among them, never pays it; a short text has few occurrences).
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
from canal.host.redact.rules import ANCHORED_PREFIXES, Rule

CASELESS_PREFIX = ANCHORED_PREFIXES[0]
Spans = list[tuple[int, int]]


class AnchorFilter:
    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules = rules
        self._built = False
        self._db: Any = None
        self._any: Any = None  # the same rests without start of match: whether each matches at all
        self._ids: list[int] = []
        self._local = threading.local()  # a Hyperscan scratch space serves one scan at a time
        self.covered: frozenset[int] = frozenset()  # known once built (``spans`` of a long text)

    def _build(self) -> None:
        rules = self._rules
        rests = {i: rest for i, r in enumerate(rules) if r.anchored and (rest := _rest(r)) is not None}
        usable = [i for i, (rest, caseless) in rests.items() if _compiles(rest, caseless)]
        if usable:
            self._db = _database(tuple(rests[i] for i in usable))
            self._any = _database(tuple(rests[i] for i in usable), som=False)
            self._ids = usable
            self.covered = frozenset(usable)
        self._built = True

    def spans(self, text: str) -> dict[int, Spans] | None:
        """For each covered rule, the spans of its rest's matches (merged where they overlap), in
        order; None when the filter does not apply to ``text`` (every occurrence is then tried)."""
        if hyperscan is None or len(text) < BATCH_MIN or not text.isascii():
            return None
        if not self._built:
            self._build()
        if self._db is None:
            return None
        found: dict[int, Spans] = {i: [] for i in self._ids}
        ids = self._ids
        data = text.encode("ascii")
        # start of match costs ~8x a plain scan: most texts have no match at all, known by a plain one
        matched: list[int] = []
        self._any.scan(data, match_event_handler=lambda pattern, *_: matched.append(pattern),
                       scratch=self._scratch(self._any, "plain"))
        if not matched:
            return found

        def on_match(pattern: int, start: int, end: int, _flags: int, _context: object) -> None:
            spans = found[ids[pattern]]
            if spans and spans[-1][0] == start:  # one start's ends come in order: keep the last
                spans[-1] = (start, end)
            else:
                spans.append((start, end))

        self._db.scan(data, match_event_handler=on_match, scratch=self._scratch(self._db, "som"))
        return {i: _merged(spans) for i, spans in found.items()}

    def _scratch(self, db: Any, name: str) -> Any:
        scratch = getattr(self._local, name, None)
        if scratch is None:
            scratch = hyperscan.Scratch(db)
            setattr(self._local, name, scratch)
        return scratch


def _merged(spans: Spans) -> Spans:
    """Reports come by end, not by start: sort, and merge what overlaps."""
    out: Spans = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _rest(rule: Rule) -> tuple[str, bool] | None:
    """The pattern after the rule's prefix, its counted repeats opened, and whether it is caseless."""
    pattern = rule.expression
    prefix = next((p for p in ANCHORED_PREFIXES if pattern.startswith(p)), None)
    if prefix is None or rule.prefix_limit != 50 or not pattern.isascii() or not portable(pattern):
        return None
    rest = relaxed(pattern[len(prefix):])
    return None if rest is None else (rest, prefix == CASELESS_PREFIX)


_FLAGS = 0 if hyperscan is None else hyperscan.HS_FLAG_DOTALL | hyperscan.HS_FLAG_MULTILINE


@cache
def _database(rests: tuple[tuple[str, bool], ...], *, som: bool = True) -> Any:
    """One database per set of rests, compiled once per process; scanned from any thread. Without
    start of match, each pattern reports its first match only."""
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    mode = hyperscan.HS_FLAG_SOM_LEFTMOST if som else hyperscan.HS_FLAG_SINGLEMATCH
    flags = [_FLAGS | mode | (hyperscan.HS_FLAG_CASELESS if caseless else 0) for _, caseless in rests]
    db.compile(expressions=[rest.encode("ascii") for rest, _ in rests], ids=list(range(len(rests))),
               elements=len(rests), flags=flags)
    return db


@cache
def _compiles(rest: str, caseless: bool) -> bool:
    try:
        _database(((rest, caseless),))
    except hyperscan.error:
        return False
    return True
