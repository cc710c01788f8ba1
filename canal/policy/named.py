"""Paths a command reads that are not its operands: option values, git's ``REV:path``, the environment.

A program reads the file an option names (``date --file=F``, ``grep -fF``, ``wc --files0-from=F``) as
surely as an operand; git reads the blob ``HEAD:path`` or ``:path`` names; a program that prints the
environment (``jq env``, ``printenv``, ``export -p``) hands out what /proc/self/environ holds. Each is
given as the path it amounts to, resolved like an operand, so strict's secret rule decides ``.env``
however it is reached. Which words are option values comes from the grammar tables (programs.yaml,
options.json); without a grammar every tail of a short cluster counts, since any letter may take one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from fnmatch import fnmatchcase

from canal.policy.argfacts import ArgFacts
from canal.policy.paths import SECRET_NAMES, expand
from canal.policy.shell.model import Word

ENVIRON = "/proc/self/environ"
# jq's `env` builtin and `$ENV` (not `.env`, a key, nor `environment`)
_JQ_ENV = re.compile(r"(?<![\w.$])env\b|\$ENV\b")
_DECLARERS = frozenset({"export", "declare", "typeset", "readonly", "local"})
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_PATTERN_CHARS = frozenset("*?[")
_MAGIC = re.compile(r"^:(\([^)]*\)|[!^/]+)")  # git pathspec magic: :(glob), :!, :/


_GREPS = frozenset({"grep", "egrep", "fgrep", "rgrep"})
_HOME_DIR = re.compile(r"^(~[^/]*|/root|/home(/[^/]+)?)$")


def recursive_secrets(program: str, parsed: ArgFacts, paths: Sequence[str], cwd: str) -> list[str]:
    """What a recursive read of a folder that holds system secrets reads: ``grep -r x /root`` reads
    its SSH keys, ``grep -r . /proc/self`` the environment, ``rg x /etc`` /etc/shadow (readable to a
    sandbox running as uid 0). The workspace's own secrets are the redactor's (docs/policy.md)."""
    if not _reads_recursively(program, parsed):
        return []
    out: list[str] = []
    for path in [*paths, *_searched_cwd(program, parsed, cwd)]:
        root = path.rstrip("/") or "/"
        if root in ("/", "/proc") or root.startswith("/proc/"):
            out.append(ENVIRON)
        if root in ("/", "/etc", "/etc/ssh"):
            out += ["/etc/shadow", "/etc/ssh/ssh_host_ed25519_key"]
        if root in ("/", "/home") or _HOME_DIR.match(root):
            out.append(("/home/user" if root in ("/", "/home") else root) + "/.ssh/id_rsa")
    return out


def _searched_cwd(program: str, parsed: ArgFacts, cwd: str) -> list[str]:
    """The folder searched when no operand names one (``rg KEY``, ``grep -r KEY``): the cwd, and
    ``/`` when it is unknown (the stricter reading)."""
    given = {"e", "f"} & set(parsed.flags) or {"regexp", "file"} & set(parsed.long_flags)
    operands = parsed.positionals if given or program == "diff" else parsed.positionals[1:]
    return [] if operands else [cwd or "/"]


def _reads_recursively(program: str, parsed: ArgFacts) -> bool:
    if program == "rg":
        return True  # a folder operand is searched through
    if program in _GREPS:
        return program == "rgrep" or bool({"r", "R"} & set(parsed.flags)) or any(
            f in ("recursive", "dereference-recursive") for f in parsed.long_flags) or any(
            v.text == "recurse" for v in parsed.values)
    return program == "diff" and ("r" in parsed.flags or "recursive" in parsed.long_flags)


def named_paths(program: str, parsed: ArgFacts, cwd: str) -> list[str]:
    """Resolved paths the segment reads through option values, revision paths or an environment dump."""
    words = list(parsed.values)
    patterns = [w.text for w in words]  # --include='*.env', -g '.e*': the program matches names with them
    if program == "git":
        revisions = _revision_paths([*parsed.positionals, *parsed.values])
        words += revisions
        patterns += [w.text for w in (*parsed.positionals, *revisions)]  # pathspecs are patterns
    out = [p for w in words for p in expand(w.text, cwd, is_glob=w.glob)]
    out += [name for text in patterns for name in _secret_matches(text)]
    if _dumps_environment(program, parsed):
        out.append(ENVIRON)
    return list(dict.fromkeys(out))


def _secret_matches(text: str) -> list[str]:
    """The secret names a pattern the program itself matches may select (fnmatch, as git pathspecs and
    grep's --include: ``*`` crosses ``/`` and matches a leading dot)."""
    pattern = _MAGIC.sub("", text).removeprefix("./")
    if not _PATTERN_CHARS & set(pattern):
        return []
    return [name for name in SECRET_NAMES
            if fnmatchcase(name, pattern) or fnmatchcase("d/" + name, pattern)
            or fnmatchcase(posixpath.basename(name), pattern)]


def _revision_paths(words: Sequence[Word]) -> list[Word]:
    """``HEAD:.env``, ``:0:.env``, ``-L1,9:.env``: every text after a colon may be a path in the tree
    (the top of the work tree, or the cwd with ``./``; a name's secret shape shows either way)."""
    out: list[Word] = []
    for word in words:
        text = word.text
        at = text.find(":")
        while at != -1:
            if at + 1 < len(text):
                out.append(Word(text[at + 1:], word.literal, word.substitution, word.glob))
            at = text.find(":", at + 1)
    return out


def _dumps_environment(program: str, parsed: ArgFacts) -> bool:
    positionals = [w.text for w in parsed.positionals]
    if program == "printenv":
        return True
    if program == "env":  # a segment named env ran no command: it prints the environment
        return True
    if program in _DECLARERS:
        return not positionals or "p" in parsed.flags
    if program == "set":
        return not positionals
    if program == "jq":
        if {"f", "L"} & set(parsed.flags) or {"from-file", "library-path"} & set(parsed.long_flags):
            return True  # the filter, or modules it may load, in a file: what it does is not visible
        if any(re.search(r"\b(import|include)\b", p) for p in positionals):
            return True
        return any(_JQ_ENV.search(p) for p in positionals)  # --arg NAME VALUE shifts the filter
    if program in _AWKS:
        return any("ENVIRON" in p for p in positionals)
    return False
