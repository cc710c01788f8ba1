"""Programs whose grammar does not fit the table: shells, env, xargs, find, eval, trap, alias, source,
vi/vim, gdb, parallel, socat, sed and ``git config``. Each handler says what else the command runs."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

from canal.policy.shell.getopt import scan
from canal.policy.shell.grammar import Grammar, grammar_of
from canal.policy.shell.model import SHELLS, Unwrapped, Word, basename
from canal.policy.shell.payloads import Payload, ex_command, gdb_command, git_config_value

_SHELL = Grammar(name="sh", short_values="oO", long={"rcfile": "=", "init-file": "=", "command": ""},
                 plus_options=True, stop_at_operand=True)
_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})
_PARALLEL_MARKERS = frozenset({":::", "::::", ":::+", "::::+"})
_SOCAT_CODE = re.compile(r"^(exec|system):(.*)$", re.I | re.S)
_SED_EXEC = re.compile(r"(^|[;{}\n]|\s)\s*(?:[0-9$,~+]*|/[^/]*/)?\s*!?\s*e(\s|;|$)"
                       r"|s(.).*?\3.*?\3[gpiImMw0-9]*e")


def _join(words: Sequence[Word]) -> Word:
    return Word(" ".join(w.text for w in words), literal=all(w.literal for w in words))


def _grammar(name: str) -> Grammar:
    return grammar_of(name) or Grammar(name=name)


def shell(name: str, words: Sequence[Word]) -> Unwrapped:
    s = scan(words, 1, _SHELL)
    command_flag = s.has("c", "command") or (len(words) > 1 and words[1].text == "-command")
    if command_flag:
        if s.stop < len(words):
            return Unwrapped(name, scripts=(words[s.stop],))
        # no script word: bash refuses, unless a wrapper appends it at run time (xargs sh -c)
        return Unwrapped(name, keep_outer=True, code="embedded")
    if s.stop < len(words) and not s.has("s") and words[s.stop].text not in _STDIN_FILES:
        script = words[s.stop]
        return Unwrapped(name, keep_outer=True, sources=(script,) if script.substitution else ())
    return Unwrapped(name, keep_outer=True, stdin_script=True)


def env(words: Sequence[Word]) -> Unwrapped | None:
    g = _grammar("env")
    s = scan(words, 1, Grammar(name="env", short_values=g.short_values, long=g.long, stop_at_operand=True))
    split = s.value("S", "split-string")
    chdir = s.value("C", "chdir")
    cwd = None if chdir is None else (chdir.text if chdir.literal else "")
    i = s.stop
    if i < len(words) and words[i].text == "-":  # env - CMD: env -i CMD
        i += 1
    assigns: list[tuple[str, str]] = []
    functions: list[Word] = []
    while i < len(words) and "=" in words[i].text[1:]:  # env takes any NAME=VALUE, not only shell names
        key, _, value = words[i].text.partition("=")
        assigns.append((key, value))
        if key.startswith("BASH_FUNC_") and key.endswith("%%"):  # an exported function bash imports
            functions.append(Word(f"{key[10:-2]} {value}", literal=words[i].literal))
        i += 1
    scripts = (*functions, *((_join([split, *words[i:]]),) if split is not None else ()))
    inners = (tuple(words[i:]),) if i < len(words) and split is None else ()
    if not scripts and not inners:
        return Unwrapped("env", keep_outer=True, assignments=tuple(assigns)) if assigns else None
    return Unwrapped("env", inners=inners, scripts=scripts, assignments=tuple(assigns), cwd=cwd)


def xargs(words: Sequence[Word]) -> Unwrapped:
    g = _grammar("xargs")
    s = scan(words, 1, Grammar(name="xargs", short_values=g.short_values, short_optional=g.short_optional,
                               long=g.long, stop_at_operand=True))
    inner = tuple(words[s.stop:]) or (Word("echo"),)
    given = s.value("I", "replace")
    replace = given.text if given is not None else ("{}" if s.has("i", "replace") else "")
    if replace:  # input lines spliced into the words: their text is known only at run time
        inner = tuple(Word(w.text, literal=False) if replace in w.text else w for w in inner)
    return Unwrapped("xargs", inners=(inner,), dynamic=True)


def find(words: Sequence[Word]) -> Unwrapped | None:
    inners: list[tuple[Word, ...]] = []
    writes: list[str] = []
    i = 1
    while i < len(words):
        text = words[i].text
        if text in _FIND_EXEC:
            j = i + 1
            while j < len(words) and words[j].text not in (";", "+"):
                j += 1
            if j > i + 1:
                inners.append(tuple(words[i + 1:j]))
            i = j
        elif text in _FIND_WRITES and i + 1 < len(words):
            writes.append(words[i + 1].text)
            i += 1
        i += 1
    # -delete, -exec rm {}: find deletes under its starting points
    deleting = any(w.text == "-delete" for w in words) or any(
        inner and basename(inner[0]) in _FIND_DELETERS for inner in inners)
    if not inners and not writes and not deleting:
        return None
    deletes = tuple(w.text for w in _find_roots(words)) or (".",) if deleting else ()
    return Unwrapped("find", inners=tuple(inners), keep_outer=True, dynamic=True, writes=tuple(writes),
                     deletes=deletes)


def _find_roots(words: Sequence[Word]) -> list[Word]:
    """find's starting points: the operands before its first expression word (after -H/-L/-P/-D/-O)."""
    i = 1
    while i < len(words) and (words[i].text in ("-H", "-L", "-P") or words[i].text[:2] in ("-D", "-O")):
        i += 2 if words[i].text in ("-D", "-O") else 1
    roots = []
    while i < len(words) and not words[i].text.startswith(("-", "(", "!", ")")):
        roots.append(words[i])
        i += 1
    return roots


def trap(words: Sequence[Word]) -> Unwrapped | None:
    args = [w for w in words[1:] if w.text != "--"]
    if not args or args[0].text in ("-p", "-l", "-", ""):
        return None
    return Unwrapped("trap", scripts=(args[0],))


def alias(words: Sequence[Word]) -> Unwrapped | None:
    """``alias name='body'``: the body runs wherever the name is used, so it is decided as a command."""
    bodies = []
    for word in words[1:]:
        _name, eq, body = word.text.partition("=")
        if eq:
            bodies.append(Word(body, literal=word.literal))
        elif not word.literal:
            bodies.append(word)
    return Unwrapped("alias", scripts=tuple(bodies)) if bodies else None


def source(words: Sequence[Word]) -> Unwrapped | None:
    operands = [w for w in words[1:] if w.text != "--"]
    if not operands:
        return None
    first = operands[0]
    if first.text in _STDIN_FILES:
        return Unwrapped(basename(words[0]) or "source", keep_outer=True, stdin_script=True)
    return Unwrapped(basename(words[0]) or "source", keep_outer=True,
                     sources=(first,) if first.substitution else (),
                     code="" if first.literal or first.substitution else "embedded")


def vim(words: Sequence[Word]) -> Unwrapped | None:
    payloads: list[Payload] = []
    for i, word in enumerate(words[1:], 1):
        text = word.text
        if text in ("-c", "--cmd") and i + 1 < len(words):
            payloads.append(ex_command(words[i + 1]))
        elif text.startswith("+") and len(text) > 1:
            payloads.append(ex_command(Word(text[1:], literal=word.literal)))
        elif text in ("-S", "-u", "-s", "--startuptime") and i + 1 < len(words):
            payloads.append(Payload(code="inline") if text in ("-S", "-s") else Payload())
    return _from_payloads("vim", payloads)


def gdb(words: Sequence[Word]) -> Unwrapped | None:
    payloads: list[Payload] = []
    inners: tuple[tuple[Word, ...], ...] = ()
    i = 1
    while i < len(words):
        name, eq, value = words[i].text.lstrip("-").partition("=")
        dashed = words[i].text.startswith("-")
        if dashed and name == "args":
            inners = (tuple(words[i + 1:]),) if i + 1 < len(words) else ()
            break
        if dashed and name in ("ex", "eval-command", "iex", "init-eval-command"):
            nxt = words[i + 1] if i + 1 < len(words) else None
            arg = Word(value, literal=words[i].literal) if eq else nxt
            if arg is not None:
                payloads.append(gdb_command(arg))
            i += 1 if eq else 2
            continue
        if dashed and name in ("x", "command", "ix", "init-command"):
            payloads.append(Payload(code="inline"))
        i += 1
    found = _from_payloads("gdb", payloads)
    if inners:
        base = found or Unwrapped("gdb")
        return Unwrapped("gdb", inners=inners, scripts=base.scripts, keep_outer=True, code=base.code)
    return found


def parallel(words: Sequence[Word]) -> Unwrapped | None:
    """``parallel CMD ::: ARGS``: CMD with each argument, through a shell; without CMD each ARG is one."""
    g = _grammar("parallel")
    s = scan(words, 1, Grammar(name="parallel", short_values=g.short_values or "jJSanNIdEX", long=g.long,
                               stop_at_operand=True))
    rest = list(words[s.stop:])
    cut = next((k for k, w in enumerate(rest) if w.text in _PARALLEL_MARKERS), len(rest))
    template, args = rest[:cut], [w for w in rest[cut + 1:] if w.text not in _PARALLEL_MARKERS]
    if not template:
        return Unwrapped("parallel", scripts=tuple(args)) if args else None
    text = _join(template)
    # parallel quotes each argument it puts in the command (a name with spaces stays one word)
    scripts = [Word(text.text.replace("{}", shlex.quote(a.text)) if "{}" in text.text
                    else f"{text.text} {shlex.quote(a.text)}", literal=text.literal and a.literal)
               for a in args] or [text]
    return Unwrapped("parallel", scripts=tuple(scripts), dynamic=not args)


def socat(words: Sequence[Word]) -> Unwrapped | None:
    scripts = []
    for word in words[1:]:
        found = _SOCAT_CODE.match(word.text)
        if found is not None:
            scripts.append(Word(found.group(2).split(",", 1)[0], literal=word.literal))
    return Unwrapped("socat", scripts=tuple(scripts), keep_outer=True) if scripts else None


def sed(words: Sequence[Word]) -> Unwrapped | None:
    """GNU sed runs commands with its ``e`` command and the ``e`` flag of ``s``: code it hides."""
    g = _grammar("sed")
    s = scan(words, 1, g)
    scripts = [o.value for o in s.options
               if o.value is not None and ("expression" in o.names or "e" in o.names)]
    if not scripts and s.operands and not s.has("f", "file"):
        scripts = [words[s.operands[0]]]
    hidden = any(w is not None and (not w.literal or _SED_EXEC.search(w.text)) for w in scripts)
    return Unwrapped("sed", keep_outer=True, code="embedded") if hidden else None


def gitconfig(words: Sequence[Word]) -> Unwrapped | None:
    """``git config [set] KEY VALUE``: setting a code-executing key is running its value later."""
    s = scan(words, 1, _grammar("git").subcommands.get("config") or Grammar(name="config"))
    operands = [words[i] for i in s.operands]
    if s.has("rename-section") or (operands and operands[0].text == "rename-section"):
        # a section renamed into a driver, alias or core section: its values become code git runs
        return Unwrapped("git config", keep_outer=True, code="embedded")
    if operands and operands[0].text in ("set", "get", "unset", "list", "edit", "remove-section"):
        if operands[0].text != "set":
            return None
        operands = operands[1:]
    if len(operands) < 2 or s.has("get", "get-all", "get-regexp", "unset", "unset-all", "list"):
        return None
    found = git_config_value(operands[0].text, operands[1], literal_key=operands[0].literal)
    if not found.scripts and not found.code:
        return None
    return Unwrapped("git config", scripts=found.scripts, keep_outer=True, code=found.code)


def _from_payloads(name: str, payloads: Sequence[Payload]) -> Unwrapped | None:
    scripts = tuple(s for p in payloads for s in p.scripts)
    code = "embedded" if any(p.code == "embedded" for p in payloads) else (
        "inline" if any(p.code == "inline" for p in payloads) else "")
    return Unwrapped(name, scripts=scripts, keep_outer=True, code=code) if scripts or code else None


def zip_(words: Sequence[Word]) -> Unwrapped | None:
    """zip's two-letter ``-TT cmd`` (test with this unzip command) and ``-m`` (delete what was zipped)."""
    g = _grammar("zip")
    tt = next((words[i + 1] for i in range(1, len(words) - 1) if words[i].text == "-TT"), None)
    rest = [w for w in words if w.text != "-TT" and w is not tt]
    s = scan(rest, 1, g)
    scripts = (tt,) if tt is not None else ()
    deletes = tuple(rest[i].text for i in s.operands[1:]) if s.has("m", "move") else ()
    if not scripts and not deletes and not s.has("unzip-command"):
        return None
    value = s.value("unzip-command")
    return Unwrapped("zip", scripts=scripts + ((value,) if value is not None else ()), keep_outer=True,
                     dynamic=True, deletes=deletes)


# bubblewrap: options with two values, with one; any other option is a flag (--unshare-all, --clearenv)
_BWRAP_TWO = frozenset({"--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try",
                        "--symlink", "--setenv", "--file", "--bind-data", "--ro-bind-data", "--chmod"})
_BWRAP_ONE = frozenset(f"--{name}" for name in (
    "chdir", "dir", "tmpfs", "proc", "dev", "mqueue", "remount-ro", "unsetenv", "hostname", "uid", "gid",
    "lock-file", "sync-fd", "info-fd", "json-status-fd", "block-fd", "userns-block-fd", "seccomp",
    "add-seccomp-fd", "exec-label", "file-label", "userns", "userns2", "pidns", "cap-add", "cap-drop",
    "perms", "size", "argv0", "overlay-src", "tmp-overlay", "ro-overlay", "level-prefix"))


def bwrap(words: Sequence[Word]) -> Unwrapped | None:
    """``bwrap [OPTIONS] COMMAND``: the command, in --chdir's folder; ``--args FD`` (options read from a
    file descriptor) and an unknown option's values: opaque."""
    i, cwd = 1, None
    while i < len(words) and words[i].text.startswith("--"):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if text == "--args" or not words[i].literal:
            return Unwrapped("bwrap", keep_outer=True, code="embedded")
        if text == "--chdir" and i + 1 < len(words):
            cwd = words[i + 1].text if words[i + 1].literal else ""
        i += 1 + (2 if text in _BWRAP_TWO else 1 if text in _BWRAP_ONE else 0)
    inner = tuple(words[i:])
    return Unwrapped("bwrap", inners=(inner,), cwd=cwd) if inner else None


_CUSTOM: dict[str, Callable[[Sequence[Word]], Unwrapped | None]] = {
    "env": env, "xargs": xargs, "find": find, "vim": vim, "gdb": gdb, "parallel": parallel, "socat": socat,
    "sed": sed, "gitconfig": gitconfig, "zip": zip_,
}
_BY_NAME: dict[str, Callable[[Sequence[Word]], Unwrapped | None]] = {
    "trap": trap, "alias": alias, "source": source, ".": source, "bwrap": bwrap,
    "eval": lambda w: Unwrapped("eval", scripts=(_join(w[1:]),)) if len(w) > 1 else None,
}


def custom(kind: str, words: Sequence[Word]) -> Unwrapped | None:
    handler = _CUSTOM.get(kind)
    return handler(words) if handler is not None else None


def special(name: str, words: Sequence[Word]) -> Unwrapped | None:
    """The handler's answer for programs outside the table's generic model; None for the others."""
    if name in SHELLS:
        return shell(name, words)
    if name in _BY_NAME:
        return _BY_NAME[name](words)
    g = grammar_of(name)
    if g is not None and g.custom is not None:
        return custom(g.custom, words)
    return None
