"""Whether a shell command provably leaves the session's state alone (stdlib only; runs in the sandbox).

The session shell saves a command's working directory and exported variables when it ends, so that
``cd`` and ``export`` persist (``_agent_shell``). Saving costs about two milliseconds per command,
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


def words(command: str) -> list[str] | None:
    """The command's words with quotes removed, or None for anything outside the plain subset."""
    if len(command) > MAX_TEXT or "<<" in command:
        return None
    found: list[str] = []
    pos = 0
    while pos < len(command):
        match = _TOKEN.match(command, pos)
        if match is None:
            return None
        word = match.group("word")
        if word is not None:
            if _ASSIGNMENT.match(word):
                return None  # NAME=value, even as an argument: declaration builtins are refused anyway
            found.append(word.replace("'", "").replace('"', ""))
        pos = match.end()
    return found


def stateless(command: str) -> bool:
    """True only when running ``command`` cannot change its shell's working directory or variables."""
    found = words(command)
    return found is not None and not any(word in STATEFUL for word in found)
