"""The second opinion: the host's ``bash -n`` parses the command too, and the two must agree.

tree-sitter-bash accepts some input bash rejects (``ls ;; pwd``). ``bash -n`` executes nothing; the
command goes in on stdin, never into an argument or a string.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from functools import lru_cache

SyntaxChecker = Callable[[str], str]  # returns "" when bash accepts the text, else bash's complaint

BASH_TIMEOUT_S = 2.0
# A command made only of plain words and simple quotes cannot hold a syntax error bash would see and
# tree-sitter would not; skip the 2 ms subprocess for it.
# Each alternative starts with a different character class, so matching is linear (no backtracking).
_PLAIN = re.compile(r"""^(?:[A-Za-z0-9_./:=,@%+\-~^ \t]|'[^'\n]*'|"[^"$`\\!\n]*")*$""")
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do",
                       "done", "function", "select", "time", "coproc", "in", "!", "{", "}", "[[", "]]"})


def is_plain(text: str) -> bool:
    if not _PLAIN.match(text):
        return False
    first = text.split(None, 1)
    return not first or first[0] not in _RESERVED


@lru_cache(maxsize=1)
def _bash() -> str:
    return shutil.which("bash") or ""


@lru_cache(maxsize=4096)
def bash_n(text: str) -> str:
    """Ask the host's bash to parse ``text`` without running it."""
    if is_plain(text):
        return ""
    bash = _bash()
    if not bash:
        return "bash is not installed on this host, so the parse cannot be double-checked"
    try:
        proc = subprocess.run([bash, "--norc", "--noprofile", "-n"],
                              input=text.encode("utf-8", "surrogateescape"),
                              capture_output=True, timeout=BASH_TIMEOUT_S, check=False,
                              env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bash -n did not answer: {exc}"
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return msg[0] if msg else f"bash -n exited {proc.returncode}"
    return ""
