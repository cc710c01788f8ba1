"""Replacing every occurrence of each detected value, not only the one a rule saw in context.

Longer values are placed first; an occurrence overlapping one already placed is skipped, and the next
occurrence of the same value is looked for from the one after it (from the end of a placed one).

Searching the text once per value made a text with many findings quadratic: 8 MiB of base64 holds
~110,000 distinct high-entropy lines, each searched for through the rest of the text. A value made only
of token characters (``runs``), like every high-entropy token, can only occur inside a run of them at
least as long: those are found once, and each run is looked up in a set of the values of each length
(a run equal to a value is one look-up). Other values, and lengths whose look-ups would cost more than
a search of the text per value, are searched for with ``str.find`` as before. Plain literals either
way: compiling a pattern from a long value (a private key of several kB) costs up to seconds.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable

from canal.host.redact.keywords import occurrences as occurrences_of
from canal.host.redact.runs import run_spans, token_map
from canal.host.redact.spans import Spans

MIN_SHAPED = 8  # characters: shorter values are searched for in the whole text
MIN_LOOKUPS = 32  # token-shaped values: fewer are searched for like the others
TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/_=-]+")  # ``runs.TOKEN_CHARS``, whole values (``fullmatch``)
LOOKUP_COST = 50  # one slice and set look-up against one character of ``str.find``, roughly


def replacer(by_value: dict[str, str]) -> Callable[[str], str]:
    values = sorted(by_value, key=len, reverse=True)
    shaped: dict[int, set[str]] = defaultdict(set)
    long = [value for value in values if len(value) >= MIN_SHAPED]
    every = TOKEN_CHARS.fullmatch("".join(long)) is not None  # one check when all are (base64)
    for value in long:
        if every or TOKEN_CHARS.fullmatch(value):
            shaped[len(value)].add(value)
    if sum(map(len, shaped.values())) < MIN_LOOKUPS:
        shaped.clear()  # a few searches of the text cost less than finding its runs

    def apply(text: str) -> str:
        sizes, hits = _shaped_occurrences(text, shaped) if shaped else (set(), [])
        # every occurrence of every value, overlapping ones included: when no two overlap, each is
        # placed whatever the order, so they are rendered at once (thousands of values of base64)
        occurrences = [(at, end, by_value[value]) for at, end, value in hits]
        for value in values:
            if len(value) not in sizes or value not in shaped[len(value)]:
                occurrences += [(at, at + len(value), by_value[value]) for at in occurrences_of(text, value)]
        occurrences.sort()
        if all(a[1] <= b[0] for a, b in itertools.pairwise(occurrences)):
            return _render(text, occurrences)
        found: dict[str, list[int]] = defaultdict(list)
        for at, _, value in sorted(hits):
            found[value].append(at)
        taken = Spans(len(text))
        placed: list[tuple[int, int, str]] = []
        for value in values:
            if len(value) in sizes and value in shaped[len(value)]:
                _place_known(found.get(value, ()), value, by_value[value], taken, placed)
            else:
                _place_searched(text, value, by_value[value], taken, placed)
        return _render(text, placed)

    return apply


def _place_known(positions: Iterable[int], value: str, placeholder: str, taken: Spans,
                 placed: list[tuple[int, int, str]]) -> None:
    """``positions`` holds every occurrence, overlapping ones included; those the search would not
    reach (inside an occurrence just placed) are passed over."""
    after, size = 0, len(value)
    for at in positions:
        if at < after:
            continue
        if taken.take_if_free(at, at + size):
            placed.append((at, at + size, placeholder))
            after = at + size
        else:
            after = at + 1


def _place_searched(text: str, value: str, placeholder: str, taken: Spans,
                    placed: list[tuple[int, int, str]]) -> None:
    size = len(value)
    at = text.find(value)
    while at != -1:
        if taken.take_if_free(at, at + size):
            placed.append((at, at + size, placeholder))
            at = text.find(value, at + size)
        else:
            at = text.find(value, at + 1)


def _render(text: str, placed: list[tuple[int, int, str]]) -> str:
    if not placed:
        return text
    placed.sort()
    ends = [0, *(end for _, end, _ in placed)]
    out = [piece for (start, _, placeholder), pos in zip(placed, ends, strict=False)
           for piece in (text[pos:start], placeholder)]
    out.append(text[ends[-1]:])
    return "".join(out)


def _shaped_occurrences(text: str,
                        shaped: dict[int, set[str]]) -> tuple[set[int], list[tuple[int, int, str]]]:
    """The lengths worth looking up, and every occurrence ``(start, end, value)`` of each value of
    those lengths (overlapping ones included)."""
    starts, ends = run_spans(token_map(text), min(shaped))
    lengths = ends - starts
    sizes: set[int] = set()
    hits: list[tuple[int, int, str]] = []
    for size, group in shaped.items():
        fits = lengths >= size
        lookups = int((lengths[fits] - (size - 1)).sum())
        if lookups * LOOKUP_COST > len(group) * len(text):
            continue  # cheaper to search for each value of this length
        sizes.add(size)
        exact = lengths == size  # a run that is one value at most (every line of base64): one look-up
        hits += [(at, at + size, piece) for at in starts[exact].tolist()
                 if (piece := text[at:at + size]) in group]
        longer = fits & ~exact
        for start, end in zip(starts[longer].tolist(), ends[longer].tolist(), strict=True):
            hits += [(at, at + size, piece) for at in range(start, end - size + 1)
                     if (piece := text[at:at + size]) in group]
    return sizes, hits
