"""Variables that change what runs, and every way a command assigns one.

A variable is execution-relevant when its value decides which program a name runs (PATH), is sourced or
expanded by a starting shell (BASH_ENV, ENV, PS4), is loaded into every program (LD_PRELOAD), or names a
command a tool runs (PAGER, EDITOR). Assignments come from ``NAME=value``, ``export``/``declare``/
``typeset``/``local``/``readonly``, ``printf -v``, ``read``, ``mapfile``, ``getopts``, ``wait -p``,
``for NAME in``, namerefs and arithmetic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from canal.policy.shell.model import Word

# The session class: they shape how every later command is found, started or split. Assigning one is
# confirmed under standard and never read-only under strict.
SESSION = re.compile(r"^(PATH|BASH_ENV|ENV|LD_\w+|DYLD_\w+|PROMPT_COMMAND|IFS|SHELLOPTS|BASHOPTS|PS[0-4]|"
                     r"CDPATH|GLOBIGNORE|EXECIGNORE|BASH_LOADABLES_PATH|BASH_XTRACEFD|BASH_COMPAT|"
                     r"GIT_CONFIG_\w+|GIT_CONFIG|GIT_EXEC_PATH|GIT_DIR|GIT_COMMON_DIR|GIT_WORK_TREE|"
                     r"GIT_TEMPLATE_DIR|GIT_ALLOW_PROTOCOL|\?)$")
# Values that are command strings: parsed and decided as commands.
COMMAND_VALUED = re.compile(r"^(PAGER|GIT_PAGER|MANPAGER|SYSTEMD_PAGER|EDITOR|VISUAL|GIT_EDITOR|SUDO_EDITOR|"
                            r"FCEDIT|GIT_SEQUENCE_EDITOR|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|PROMPT_COMMAND|"
                            r"BROWSER|GIT_PROXY_COMMAND|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS|GIT_SSH|"
                            r"LESSOPEN|LESSCLOSE)$")
# Values a starting shell expands ($(...) in them runs): BASH_ENV for bash, ENV for sh -i, prompts.
EXPANDED = re.compile(r"^(BASH_ENV|ENV|PS[0-4])$")
# Everything that makes a strict read-only command run something else.
EXEC = re.compile(r"^(PAGER|GIT_\w+|MANPAGER|SYSTEMD_PAGER|LESS\w*|EDITOR|VISUAL|SUDO_EDITOR|FCEDIT|LD_\w+|"
                  r"DYLD_\w+|PATH|CDPATH|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS[0-4]|PROMPT_COMMAND|IFS|GLOBIGNORE|"
                  r"EXECIGNORE|BASH_\S+|PYTHON\w*|PERL5?\w*|RUBY\w*|NODE_OPTIONS|NODE_PATH|JAVA_TOOL_OPTIONS|"
                  r"_JAVA_OPTIONS|BROWSER|RIPGREP_CONFIG_PATH|GREP_OPTIONS|TAR_OPTIONS|XARGS\w*|SSH_ASKPASS|"
                  r"SUDO_ASKPASS|LOCALDOMAIN|HOSTALIASES|TMPDIR|HOME|ZDOTDIR|XDG_CONFIG_HOME|MANOPT|"
                  r"MANPATH|TERMINFO\w*|\?)$")
UNKNOWN_NAME = "?"  # a name only known at run time (export "$n=x"): assumed to be the worst
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")
_DECLARE = frozenset({"declare", "typeset", "local", "export", "readonly"})
_ARITH_ASSIGN = re.compile(r"(?<![\w$])([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                           r"(?:\+\+|--)\s*([A-Za-z_]\w*)|([A-Za-z_]\w*)\s*(?:\+\+|--)")

Assigned = tuple[str, Word | None]  # (name, its value as written; None: not given; UNKNOWN: set at run time)
UNKNOWN = Word("", literal=False)


def _name(word: Word) -> str:
    found = _NAME.match(word.text)
    if not word.literal and not (found and word.text[found.end():found.end() + 1] == "="):
        return UNKNOWN_NAME
    return found.group(0) if found else ""


def _declare(words: Sequence[Word]) -> list[Assigned]:
    out: list[Assigned] = []
    nameref = False
    for word in words[1:]:
        text = word.text
        if word.literal and text[:1] in "-+" and len(text) > 1:
            nameref = nameref or "n" in text[1:]
            continue
        name = _name(word)
        if not name:
            continue
        _, eq, value = text.partition("=")
        out.append((name, Word(value, literal=word.literal) if eq else None))
        if nameref and eq:
            out.append((_name(Word(value, literal=word.literal)), UNKNOWN))
    return out


def _option_target(words: Sequence[Word], option: str) -> list[Assigned]:
    for i, word in enumerate(words[:-1]):
        if word.literal and word.text.startswith("-") and word.text.endswith(option) and i > 0:
            return [(_name(words[i + 1]), UNKNOWN)]
    return []


def _operands(words: Sequence[Word], values: str) -> list[Word]:
    out: list[Word] = []
    i = 1
    while i < len(words):
        text = words[i].text
        if words[i].literal and text.startswith("-") and len(text) > 1:
            i += 2 if text[-1] in values else 1
            continue
        out.append(words[i])
        i += 1
    return out


def assigned_by(words: Sequence[Word]) -> list[Assigned]:
    """Variables a builtin assigns, with literal values where the command spells them."""
    if not words or not words[0].literal:
        return []
    name = words[0].text
    if name in _DECLARE:
        return _declare(words)
    if name == "printf":
        return _option_target(words, "v")
    if name == "read":
        found = _option_target(words, "a")
        return found + [(_name(w), UNKNOWN) for w in _operands(words, "adinNptu")]
    if name in ("mapfile", "readarray"):
        operands = _operands(words, "dnOsuCc")
        return [(_name(operands[-1]), UNKNOWN)] if operands else [("MAPFILE", UNKNOWN)]
    if name == "getopts":
        operands = _operands(words, "")
        return [(_name(operands[1]), UNKNOWN)] if len(operands) > 1 else []
    if name == "wait":
        return _option_target(words, "p")
    if name == "let":
        return [(n, UNKNOWN) for w in words[1:] for n in arithmetic_assigned(w.text)]
    return []


def arithmetic_assigned(text: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _ARITH_ASSIGN.finditer(text)]


def session_names(names: Sequence[str], program: str) -> list[str]:
    """The session-class names among ``names``; ``IFS=`` before read/mapfile only splits that input."""
    return sorted({n for n in names if SESSION.match(n) and not (n == "IFS" and program in _IFS_READERS)})


_IFS_READERS = frozenset({"read", "mapfile", "readarray"})
