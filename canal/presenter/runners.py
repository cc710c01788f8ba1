"""Which commands are test or build runners: their summaries and progress go to stderr even when they
succeed (``python3 -m unittest``'s "Ran N tests ... OK", cargo's "Finished", make's own lines), so the
presenter shows the end of their stderr on success."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Collection

# Programs (by name) and Python modules (``python3 -m NAME``) whose stderr tail is worth reading.
DEFAULT_RUNNERS = (
    "pytest", "py.test", "unittest", "tox", "nox", "make", "gmake", "ninja", "cmake", "ctest", "meson",
    "go", "cargo", "rustc", "npm", "pnpm", "yarn", "npx", "jest", "vitest", "mvn", "gradle", "gradlew",
    "dotnet", "mix", "rake", "rspec", "phpunit", "bazel", "swift", "gcc", "cc", "clang", "mypy", "ruff",
)
# Words that run the next word as the command.
_WRAPPERS = frozenset({"env", "time", "nice", "nohup", "command", "exec", "sudo", "xvfb-run"})
_LAUNCHERS = frozenset({"uv", "poetry", "pdm", "hatch", "pipenv", "rye"})  # ``uv run pytest``
_SPLIT = re.compile(r"&&|\|\||[;|&\n]")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def is_runner(command: str, runners: Collection[str]) -> bool:
    """Whether any simple command of ``command`` (split at ``&&``, ``;``, pipes) runs a runner."""
    return any(_runs(part, runners) for part in _SPLIT.split(command))


def _runs(segment: str, runners: Collection[str]) -> bool:
    try:
        words = shlex.split(segment)
    except ValueError:
        return False
    words = _program(words)
    if not words:
        return False
    name = os.path.basename(words[0])
    if re.fullmatch(r"python[0-9.]*", name):
        return "-m" in words[:-1] and words[words.index("-m") + 1] in runners
    return name in runners


def _program(words: list[str]) -> list[str]:
    """The words from the program on: assignments, wrappers and launchers skipped."""
    while words:
        head = os.path.basename(words[0])
        if _ASSIGN.match(words[0]) or head in _WRAPPERS or (head.startswith("-") and len(words) > 1):
            words = words[1:]
        elif head in _LAUNCHERS and len(words) > 1 and words[1] in ("run", "exec"):
            words = words[2:]
        else:
            return words
    return words
