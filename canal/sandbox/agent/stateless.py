"""Whether a shell command provably leaves the session's state alone (stdlib only; runs in the sandbox).

The session shell saves a command's working directory and exported variables when it ends, so that
``cd`` and ``export`` persist (``agent.shell``). Saving costs about two milliseconds per command,
most of the round trip of ``true``. A command whose every word is plain text, none of them a builtin
or keyword that can change a shell's variables or folder (``cd``, ``export``, ``read``, ``for``, an
assignment, ...), and which expands nothing (no ``$``, backquote, brace, parenthesis, backslash or
here-document) cannot change them: it runs programs, and a program cannot reach its shell's state.
For such a command the save is skipped.

The check only ever says "stateless" for text it fully understands, and a wrong "stateless" would
only lose a ``cd``: the session's state is the loop's, which the host's policy decides with, so
skipping a save never lets a command run with state the policy did not see.
"""

from __future__ import annotations

import re

# Builtins and keywords that can change the shell's variables or folder, or run text as code.
STATEFUL = frozenset({
    "cd", "pushd", "popd", "export", "declare", "typeset", "local", "readonly", "unset", "set", "source",
    ".", "eval", "exec", "builtin", "command", "enable", "read", "readarray", "mapfile", "printf",
    "getopts", "let", "shopt", "trap", "alias", "unalias", "fc", "history", "coproc", "function",
    "select", "for", "while", "until", "if", "case", "time", "!", "[[", "]]", "{", "}", "wait",
})
MAX_TEXT = 4096
_PLAIN = r"[A-Za-z0-9_./:@%+,=~*?\[\]^-]"  # unquoted characters that expand nothing but globs
_TOKEN = re.compile(
    rf"(?P<space>[ \t]+)|(?P<op>\|\||&&|[|;&\n]|[0-9]*(?:>>|>\||>&|<&|&>|>|<))"
    rf"|(?P<word>(?:{_PLAIN}|'[^']*'|\"[^\"$`\\!]*\")+)"
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


def _tokens(command: str) -> list[tuple[str, str]] | None:
    """``("word", text without quotes)`` and ``("op", text)`` pairs, or None for anything outside the
    plain subset."""
    if len(command) > MAX_TEXT or "<<" in command:
        return None
    found: list[tuple[str, str]] = []
    pos = 0
    while pos < len(command):
        match = _TOKEN.match(command, pos)
        if match is None:
            return None
        word, op = match.group("word"), match.group("op")
        if word is not None:
            if _ASSIGNMENT.match(word):
                return None  # NAME=value, even as an argument: declaration builtins are refused anyway
            found.append(("word", word.replace("'", "").replace('"', "")))
        elif op is not None:
            found.append(("op", op))
        pos = match.end()
    return found


def _stateless(tokens: list[tuple[str, str]] | None) -> bool:
    return tokens is not None and not any(kind == "word" and text in STATEFUL for kind, text in tokens)


def stateless(command: str) -> bool:
    """True only when running ``command`` cannot change its shell's working directory or variables."""
    return _stateless(_tokens(command))


# Builtins that only print or test: they may run in the session's loop itself (``inline``).
PURE = frozenset({"true", "false", ":", "echo", "test", "[", "pwd"})
# bash 5.2's builtins and keywords; the loop adds those of its own bash (``Shell.names``).
BASH_NAMES = frozenset({
    ".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
    "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
    "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local",
    "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set",
    "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit",
    "umask", "unalias", "unset", "wait", "if", "then", "else", "elif", "fi", "case", "esac", "for",
    "select", "while", "until", "do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc",
})
_JOINS = frozenset({"|", "||", "&&", ";", "\n"})
_EXPANDS = frozenset("*?[~")  # a glob or tilde in a command's name could become a builtin's name


def inline(command: str, names: frozenset[str]) -> bool:
    """True only when ``command`` may run in the session's loop itself rather than in a subshell of it
    (which saves a fork, two for a program: the subshell's and the program's; about a millisecond).

    It must be stateless, joined only by ``|``, ``||``, ``&&``, ``;`` and newlines (no redirection:
    the loop's own descriptors are open while a command runs in it; no ``&``), and every command's
    name must be a program (a path, or a name that is none of bash's builtins, keywords or the loop's
    functions: ``names``) or one of the ``PURE`` builtins, so that nothing but a printing or testing
    builtin ever runs in the loop's process.
    """
    tokens = _tokens(command)
    return _stateless(tokens) and _inline(tokens, names)


def mode(command: str, names: frozenset[str] | None) -> str:
    """``save`` unless ``command`` is stateless; then ``inline`` when it may run in the loop (and
    ``names`` are given: None when something else rules the loop out), else ``""``. One tokenizing."""
    tokens = _tokens(command)
    if not _stateless(tokens):
        return "save"
    return "inline" if names is not None and _inline(tokens, names) else ""


def _inline(tokens: list[tuple[str, str]] | None, names: frozenset[str]) -> bool:
    """The joins and command names of a stateless command's tokens (``inline``)."""
    if tokens is None:
        return False
    first = True
    for kind, text in tokens:
        if kind == "op":
            if text not in _JOINS or first:
                return False
            first = True
            continue
        if first and not _program_or_pure(text, names):
            return False
        first = False
    return not first or (bool(tokens) and tokens[-1][1] in {";", "\n"})


def _program_or_pure(name: str, names: frozenset[str]) -> bool:
    if name in PURE:
        return True
    if not name or any(c in _EXPANDS for c in name):
        return False
    if "/" in name:
        return True  # bash runs a name with a slash as a file, never as a builtin or function
    return name not in BASH_NAMES and name not in names and not name.startswith("__canal")
