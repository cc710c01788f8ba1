"""Options as the program itself reads them: getopt_long (and git's parse-options) semantics.

A long option may be written as any unambiguous prefix (``rm --rec`` is ``--recursive``). Resolution uses
the program's table of long options: an exact or unique prefix match names one option; an ambiguous
prefix names every candidate (the program refuses it, but the policy assumes the most severe); a long
option the table does not know names itself and every long option of the program, because a table that
lags the program's version must never make a command look milder than it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from canal.policy.shell.grammar import Grammar
from canal.policy.shell.model import Word


@dataclass(frozen=True)
class Opt:
    names: tuple[str, ...]  # a short letter, or the long names it may be (one when resolved)
    value: Word | None
    index: int  # the word holding the option
    long: bool

    @property
    def name(self) -> str:
        return self.names[0] if len(self.names) == 1 else ""


@dataclass(frozen=True)
class Scan:
    options: tuple[Opt, ...]
    operands: tuple[int, ...]  # word indices
    stop: int  # first word after the options (stop_at_operand grammars), else len(words)

    def has(self, *names: str) -> bool:
        return any(n in o.names for o in self.options for n in names)

    def value(self, *names: str) -> Word | None:
        for opt in self.options:
            if opt.value is not None and any(n in opt.names for n in names):
                return opt.value
        return None


def resolve_long(grammar: Grammar, given: str) -> tuple[str, ...]:
    """The long option names ``--given`` may stand for."""
    if given in grammar.long:
        return (given,)
    if grammar.exact_long:
        return (given,)
    found = tuple(name for name in grammar.long if name.startswith(given))
    if found:
        return found
    return (given, *grammar.long)


def _long(words: Sequence[Word], i: int, grammar: Grammar, out: list[Opt]) -> int:
    text = words[i].text
    given, eq, value = text[2:].partition("=")
    names = resolve_long(grammar, given)
    kinds = {grammar.long.get(n, "") for n in names}
    if eq:
        out.append(Opt(names, Word(value, literal=words[i].literal), i, long=True))
        return i + 1
    if kinds == {"="} and i + 1 < len(words):
        out.append(Opt(names, words[i + 1], i, long=True))
        return i + 2
    out.append(Opt(names, None, i, long=True))
    return i + 1


def _short(words: Sequence[Word], i: int, grammar: Grammar, out: list[Opt]) -> int:
    word = words[i]
    text = word.text
    if grammar.numeric and text[1:].isdigit():
        out.append(Opt(("#",), Word(text[1:]), i, long=False))
        return i + 1
    for pos in range(1, len(text)):
        letter = text[pos]
        rest = text[pos + 1:]
        if letter in grammar.short_values:
            if rest:
                out.append(Opt((letter,), Word(rest, literal=word.literal), i, long=False))
                return i + 1
            value = words[i + 1] if i + 1 < len(words) else None
            out.append(Opt((letter,), value, i, long=False))
            return i + 2
        if letter in grammar.short_optional:
            out.append(Opt((letter,), Word(rest, literal=word.literal) if rest else None, i, long=False))
            return i + 1
        out.append(Opt((letter,), None, i, long=False))
    return i + 1


def _short_option(word: Word, grammar: Grammar) -> bool:
    text = word.text
    if not word.literal or len(text) < 2:
        return False
    return (text[0] == "-" and not grammar.no_short) or (text[0] == "+" and grammar.plus_options)


def scan(words: Sequence[Word], start: int, grammar: Grammar) -> Scan:
    """Options and operands of ``words[start:]`` under ``grammar``."""
    options: list[Opt] = []
    operands: list[int] = []
    i = start
    stop = len(words)
    while i < len(words):
        word = words[i]
        text = word.text
        if text == "--" and word.literal:
            operands.extend(range(i + 1, len(words)))
            stop = i + 1
            break
        if word.literal and text.startswith("--") and len(text) > 2:
            i = _long(words, i, grammar, options)
        elif _short_option(word, grammar):
            i = _short(words, i, grammar, options)
        else:
            if grammar.stop_at_operand:
                stop = i
                operands.extend(range(i, len(words)))
                break
            operands.append(i)
            i += 1
    return Scan(tuple(options), tuple(operands), stop)
