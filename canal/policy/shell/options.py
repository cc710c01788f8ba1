"""Skipping a program's own options to find where the command it wraps begins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from canal.policy.shell.model import Word


@dataclass(frozen=True)
class OptionSpec:
    """Which short and long options take a value. Everything else is a flag."""

    short_values: str = ""
    long_values: frozenset[str] = frozenset()
    numeric_flags: bool = False  # accept -10 style options (nice)


@dataclass
class Scanned:
    index: int  # first positional (or len(words))
    seen: dict[str, str] = field(default_factory=dict)  # option letter/name -> value ("" for flags)


def scan(words: Sequence[Word], start: int, spec: OptionSpec) -> Scanned:
    """Walk options from ``start``; stop at ``--`` or the first positional."""
    out = Scanned(index=len(words))
    i = start
    while i < len(words):
        text = words[i].text
        if text == "--":
            out.index = i + 1
            return out
        if text.startswith("--") and len(text) > 2:
            name, eq, value = text[2:].partition("=")
            if not eq and name in spec.long_values and i + 1 < len(words):
                i += 1
                value = words[i].text
            out.seen["--" + name] = value
            i += 1
            continue
        if text.startswith("-") and len(text) > 1:
            if spec.numeric_flags and text[1:].isdigit():
                i += 1
                continue
            i = _short_cluster(words, i, spec, out)
            continue
        out.index = i
        return out
    return out


def _short_cluster(words: Sequence[Word], i: int, spec: OptionSpec, out: Scanned) -> int:
    text = words[i].text
    for pos in range(1, len(text)):
        letter = text[pos]
        if letter in spec.short_values:
            rest = text[pos + 1:]
            if rest:
                out.seen[letter] = rest
                return i + 1
            out.seen[letter] = words[i + 1].text if i + 1 < len(words) else ""
            return i + 2
        out.seen[letter] = ""
    return i + 1
