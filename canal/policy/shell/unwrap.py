"""Wrapper programs: what command (argv) or script (string) each one really runs.

``unwrap`` is pure: it looks at the words of one simple command and says what runs inside it. The
parser then analyses the inner argv or parses the inner script recursively.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from canal.policy.shell.model import Word
from canal.policy.shell.options import OptionSpec, scan, short_value_word

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "rbash"})


@dataclass(frozen=True)
class Unwrapped:
    wrapper: str
    inners: tuple[tuple[Word, ...], ...] = ()
    scripts: tuple[Word, ...] = ()
    keep_outer: bool = False  # the wrapper itself also runs as a program (find, a shell reading a file)
    dynamic: bool = False  # inner argv gets arguments at run time
    assignments: tuple[tuple[str, str], ...] = ()
    stdin_script: bool = False  # a shell reading its script from stdin


_ARGV = {  # wrapper -> options taking a value; the inner command starts at the first positional
    "sudo": OptionSpec("ugChpDrtTU", frozenset({"user", "group", "close-from", "host", "prompt", "chdir",
                                                 "role", "type", "command-timeout", "other-user"})),
    "doas": OptionSpec("uC"),
    "nice": OptionSpec("n", frozenset({"adjustment"}), numeric_flags=True),
    "nohup": OptionSpec(),
    "setsid": OptionSpec(),
    "time": OptionSpec(),
    "builtin": OptionSpec(),
    "exec": OptionSpec("a"),
    "stdbuf": OptionSpec("ioe", frozenset({"input", "output", "error"})),
    "coproc": OptionSpec(),
    "busybox": OptionSpec(),
    "unbuffer": OptionSpec(),
}
_NO_INNER = {"sudo": set("elvkK") | {"--list", "--validate", "--edit"}, "command": {"v", "V"},
             "ionice": {"p", "P", "u", "--pid", "--pgid", "--uid"}}
_XARGS = OptionSpec("adEILnPs", frozenset({"arg-file", "delimiter", "max-lines", "max-args", "max-procs",
                                          "max-chars", "process-slot-var", "eof", "replace"}))
_TIMEOUT = OptionSpec("sk", frozenset({"signal", "kill-after"}))
_ENV = OptionSpec("uCS", frozenset({"unset", "chdir", "split-string"}))
_SU = OptionSpec("cgGsw", frozenset({"command", "group", "supp-group", "shell", "whitelist-environment",
                                     "session-command"}))
_SCRIPT = OptionSpec("cEIOBTmo", frozenset({"command", "echo", "log-in", "log-out", "log-io",
                                            "log-timing", "logging-format", "output-limit"}))
_WATCH = OptionSpec("nq", frozenset({"interval", "equexit"}))
_SHELL = OptionSpec("oO", frozenset({"rcfile", "init-file"}))
_IONICE = OptionSpec("cnpPu", frozenset({"class", "classdata", "pid", "pgid", "uid"}))
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def basename(word: Word) -> str:
    return posixpath.basename(word.text) if word.literal else ""


def _rest(words: Sequence[Word], start: int) -> tuple[Word, ...]:
    return tuple(words[start:])


def _join(words: Sequence[Word]) -> Word:
    return Word(" ".join(w.text for w in words), literal=all(w.literal for w in words))


def _argv_wrapper(name: str, words: Sequence[Word]) -> Unwrapped | None:
    spec = _ARGV[name]
    s = scan(words, 1, spec)
    if set(s.seen) & _NO_INNER.get(name, set()) or s.index >= len(words):
        return None
    return Unwrapped(name, inners=(_rest(words, s.index),))


def _with_no_inner(name: str, words: Sequence[Word], spec: OptionSpec, skip: int = 0) -> Unwrapped | None:
    s = scan(words, 1, spec)
    if set(s.seen) & _NO_INNER.get(name, set()) or s.index + skip >= len(words):
        return None
    return Unwrapped(name, inners=(_rest(words, s.index + skip),))


def _env(words: Sequence[Word]) -> Unwrapped | None:
    split = short_value_word(words, "S", 1, _ENV)
    s = scan(words, 1, _ENV)
    if "--split-string" in s.seen:
        split = Word(s.seen["--split-string"])
    i = s.index
    assigns: list[tuple[str, str]] = []
    while i < len(words) and _ASSIGN_RE.match(words[i].text):
        key, _, value = words[i].text.partition("=")
        assigns.append((key, value))
        i += 1
    scripts = (_join([split, *words[i:]]),) if split is not None else ()
    inners = (_rest(words, i),) if i < len(words) and split is None else ()
    if not scripts and not inners:
        return None
    return Unwrapped("env", inners=inners, scripts=scripts, assignments=tuple(assigns))


def _xargs(words: Sequence[Word]) -> Unwrapped:
    s = scan(words, 1, _XARGS)
    inner = _rest(words, s.index) or (Word("echo"),)
    return Unwrapped("xargs", inners=(inner,), dynamic=True)


def _find(words: Sequence[Word]) -> Unwrapped | None:
    inners: list[tuple[Word, ...]] = []
    i = 1
    while i < len(words):
        if words[i].text in _FIND_EXEC:
            j = i + 1
            while j < len(words) and words[j].text not in (";", "+"):
                j += 1
            if j > i + 1:
                inners.append(tuple(words[i + 1:j]))
            i = j
        i += 1
    return Unwrapped("find", inners=tuple(inners), keep_outer=True, dynamic=True) if inners else None


def _shell(name: str, words: Sequence[Word]) -> Unwrapped:
    # `+o opt` / `+x` turn options off; scan them like their `-` forms.
    words = [Word("-" + w.text[1:], w.literal) if w.text.startswith("+") and len(w.text) > 1 else w
             for w in words]
    s = scan(words, 1, _SHELL)
    command_flag = "c" in s.seen or "--command" in s.seen or "-command" in {w.text for w in words[1:2]}
    if command_flag:
        if s.index < len(words):
            return Unwrapped(name, scripts=(words[s.index],))
        return Unwrapped(name, keep_outer=True)
    if s.index < len(words) and "s" not in s.seen:
        return Unwrapped(name, keep_outer=True)  # runs a script file
    return Unwrapped(name, keep_outer=True, stdin_script=True)


def _script_flag(name: str, words: Sequence[Word], spec: OptionSpec, long_name: str) -> Unwrapped | None:
    value = short_value_word(words, "c", 1, spec)
    if value is None:
        s = scan(words, 1, spec)
        if long_name in s.seen:
            value = Word(s.seen[long_name])
    if value is None:
        return None
    return Unwrapped(name, scripts=(value,))


def _watch(words: Sequence[Word]) -> Unwrapped | None:
    s = scan(words, 1, _WATCH)
    if s.index >= len(words):
        return None
    if "x" in s.seen or "--exec" in s.seen:
        return Unwrapped("watch", inners=(_rest(words, s.index),))
    return Unwrapped("watch", scripts=(_join(words[s.index:]),))


def _trap(words: Sequence[Word]) -> Unwrapped | None:
    args = [w for w in words[1:] if w.text != "--"]
    if not args or args[0].text in ("-p", "-l", "-", ""):
        return None
    return Unwrapped("trap", scripts=(args[0],))


def unwrap(words: Sequence[Word]) -> Unwrapped | None:
    """What the command in ``words`` runs, when its program is a known wrapper; else None."""
    if not words:
        return None
    name = basename(words[0])
    result: Unwrapped | None
    if name in _ARGV:
        result = _argv_wrapper(name, words)
    elif name in SHELLS:
        result = _shell(name, words)
    elif name == "timeout":
        result = _with_no_inner(name, words, _TIMEOUT, skip=1)
    elif name == "ionice":
        result = _with_no_inner(name, words, _IONICE)
    elif name == "command":
        result = _with_no_inner(name, words, OptionSpec())
    elif name == "chroot":
        result = _with_no_inner(name, words, OptionSpec(), skip=1)
    else:
        result = _other(name, words)
    return result


def _other(name: str, words: Sequence[Word]) -> Unwrapped | None:
    if name == "env":
        return _env(words)
    if name == "xargs":
        return _xargs(words)
    if name == "find":
        return _find(words)
    if name == "eval":
        return Unwrapped("eval", scripts=(_join(words[1:]),)) if len(words) > 1 else None
    if name == "su":
        return _script_flag(name, words, _SU, "--command")
    if name == "script":
        return _script_flag(name, words, _SCRIPT, "--command")
    if name == "watch":
        return _watch(words)
    if name == "trap":
        return _trap(words)
    return None
