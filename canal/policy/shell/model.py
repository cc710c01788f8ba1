"""Value objects the shell parser produces: words, redirects and command segments."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

# Limits that bound parsing and, through the facts, CEL evaluation (cel-python has no cost limit).
MAX_COMMAND_CHARS = 10_000
MAX_NODE_DEPTH = 200
MAX_SCRIPT_NESTING = 8
MAX_SEGMENTS = 256
MAX_ARGV = 256
MAX_ARG_CHARS = 4096


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal. ``literal`` is False when expansions decide its value."""

    text: str
    literal: bool = True
    substitution: bool = False  # contains $(...), `...` or <(...)/>(...)
    glob: bool = False  # unquoted *, ?, [ or a brace expansion
    # not literal only through $( ), backquotes or <( ): what they make is what a command printed, and
    # that command is a segment of its own (variables, arithmetic and the unknown leave this False)
    substitution_only: bool = False


@dataclass(frozen=True)
class Redirect:
    op: str  # the operator as written: >, >>, <, >|, &>, <<, <<<, >&, ...
    fd: str  # the file descriptor as written, "" for the default
    target: str  # destination text after quote removal (or the body for here-strings)
    mode: str  # read | write | append | dup | heredoc | herestring
    literal: bool = True


@dataclass(frozen=True)
class Segment:
    """One simple command, wherever it sits in the script, after unwrapping wrappers."""

    words: tuple[Word, ...]
    text: str
    assignments: tuple[tuple[str, str], ...] = ()
    redirects: tuple[Redirect, ...] = ()
    context: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    stdin_piped: bool = False
    background: bool = False
    dynamic_args: bool = False  # arguments appended at run time (xargs, find -exec {})
    code_exec: str = ""  # "" | inline | stdin | embedded
    functions: tuple[str, ...] = ()  # enclosing function definitions
    cwd: str = ""  # working directory after literal `cd`s earlier in the same list, "" if unknown
    assigned: tuple[str, ...] = ()  # variables it assigns by any route (export, read, printf -v, for...)
    extra_writes: tuple[str, ...] = ()  # files its options make it write (sort -o, find -fprint)
    deletes: tuple[str, ...] = ()  # files its options make it delete (tar --remove-files)
    opaque_reason: str = ""  # why its meaning depends on run-time values (arithmetic on variables)
    name_unknown: bool = False  # the parser cannot vouch for where bash splits its words (control chars)

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words)


@dataclass(frozen=True)
class ParseResult:
    segments: tuple[Segment, ...] = ()
    failure: str = ""  # non-empty: why the command could not be parsed (decided fail-closed)
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.failure


class ShellParseFailure(Exception):
    """Raised inside the parser; turned into ParseResult.failure at the boundary."""


SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "rbash"})


def basename(word: Word) -> str:
    return posixpath.basename(word.text) if word.literal else ""


@dataclass(frozen=True)
class Unwrapped:
    """What a simple command runs besides (or instead of) its program."""

    wrapper: str
    inners: tuple[tuple[Word, ...], ...] = ()
    scripts: tuple[Word, ...] = ()
    keep_outer: bool = False  # the program itself also runs (find, tar --to-command, a shell reading a file)
    dynamic: bool = False  # inner argv gets arguments at run time
    assignments: tuple[tuple[str, str], ...] = ()
    stdin_script: bool = False  # a shell reading its script from stdin
    code: str = ""  # code the parser cannot see into: inline | embedded
    writes: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    sources: tuple[Word, ...] = ()  # files run as scripts (source FILE, bash <(...)): resolved by the parser
    cwd: str | None = None  # where what it runs starts: None where it runs, "" unknown, else a path (env -C)
