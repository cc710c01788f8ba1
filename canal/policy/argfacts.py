"""Options and operands of one segment as its program reads them (grammar table), or by a plain split."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from canal.policy.shell.getopt import scan
from canal.policy.shell.grammar import Grammar, grammar_of
from canal.policy.shell.model import Word

_GIT_GLOBAL_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                                "--exec-path", "--super-prefix"})


@dataclass
class ArgFacts:
    flags: list[str] = field(default_factory=list)  # short option letters
    long_flags: list[str] = field(default_factory=list)  # long option names, resolved (every candidate)
    long_values: dict[str, str] = field(default_factory=dict)
    positionals: list[Word] = field(default_factory=list)
    values: list[Word] = field(default_factory=list)  # option values (what a short cluster may hold)


def split_args(args: tuple[str, ...]) -> tuple[list[str], list[str], dict[str, str], list[str]]:
    """Without a grammar: (short letters, long names, long values, positionals); ``--`` ends options."""
    short: list[str] = []
    long_names: list[str] = []
    long_values: dict[str, str] = {}
    positionals: list[str] = []
    ended = False
    for arg in args:
        if ended or arg == "-" or not arg.startswith("-"):
            positionals.append(arg)
        elif arg == "--":
            ended = True
        elif arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            long_names.append(name)
            if eq:
                long_values[name] = value
        else:
            short.extend(ch for ch in arg[1:] if ch not in short)
    return short, long_names, long_values, positionals


def _guessed_values(words: Sequence[Word]) -> list[Word]:
    """Without a grammar, which option takes a value is unknown: ``--x=v`` gives ``v``, and every tail
    of a short cluster may be a glued value (``-f.env`` may be ``-f`` reading ``.env``)."""
    out: list[Word] = []
    for word in words:
        text = word.text
        if word.text == "--":
            break
        if text.startswith("--"):
            _name, eq, value = text[2:].partition("=")
            if eq:
                out.append(Word(value, word.literal, word.substitution, word.glob))
        elif text.startswith("-") and len(text) > 2:
            out.extend(Word(text[i:], word.literal, word.substitution, word.glob)
                       for i in range(2, len(text)))
    return out


def git_subcommand(args: tuple[str, ...]) -> str:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _GIT_GLOBAL_VALUES:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return arg
    return ""


def _add(out: ArgFacts, words: Sequence[Word], start: int, g: Grammar) -> list[int]:
    s = scan(words, start, g)
    for opt in s.options:
        if opt.value is not None:
            out.values.append(opt.value)
        if opt.long:
            out.long_flags.extend(n for n in opt.names if n not in out.long_flags)
            if opt.value is not None and len(opt.names) == 1:
                out.long_values[opt.names[0]] = opt.value.text
        elif opt.names[0] not in out.flags and opt.names[0] != "#":
            out.flags.append(opt.names[0])
    return list(s.operands)


def _unknown_subcommand(out: ArgFacts, rest: Sequence[Word]) -> None:
    """A subcommand the tables do not describe (git cat-file, git rev-parse): its options are read by a
    plain split, so a rule or the read-only table still sees ``--textconv`` (an abbreviation stays as
    written, and the table treats it as a prefix)."""
    short, long_names, values, _ = split_args(tuple(w.text for w in rest))
    out.flags.extend(f for f in short if f not in out.flags)
    out.long_flags.extend(n for n in long_names if n not in out.long_flags)
    out.long_values.update({k: v for k, v in values.items() if k not in out.long_values})
    out.values.extend(_guessed_values(rest))


def arg_facts(words: Sequence[Word], program: str) -> ArgFacts:
    g = grammar_of(program) if program else None
    if program == "find":  # operands are the roots, up to the expression
        end = next((i for i, w in enumerate(words) if i and w.text[:1] in ("-", "(", "!")), len(words))
        short, long_names, values, _ = split_args(tuple(w.text for w in words[end:]))
        return ArgFacts(short, long_names, values, list(words[1:end]))
    if g is None or g.custom in ("vim", "gdb"):
        short, long_names, values, positionals = split_args(tuple(w.text for w in words[1:]))
        by_text = {w.text: w for w in words[1:]}
        return ArgFacts(short, long_names, values, [by_text.get(p, Word(p)) for p in positionals],
                        _guessed_values(words[1:]))
    out = ArgFacts()
    operands = _add(out, words, 1, g)
    while g.subcommands and operands:
        sub = g.subcommands.get(words[operands[0]].text)
        if sub is None:
            _unknown_subcommand(out, words[operands[0] + 1:])
            break
        g = sub
        operands = _add(out, words, operands[0] + 1, g)
    out.positionals = [words[i] for i in operands]
    return out
