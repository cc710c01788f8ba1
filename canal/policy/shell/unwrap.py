"""What a simple command runs besides (or instead of) its program, from the program grammars.

``unwrap`` is pure: it looks at the words of one simple command and says what else runs: a wrapped
command (argv), shell scripts carried by options or operands, code it cannot see into, files an option
makes it write or delete. The parser analyses inner argvs and parses inner scripts recursively.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from canal.policy.shell.getopt import Scan, scan
from canal.policy.shell.grammar import Grammar, grammar_of
from canal.policy.shell.model import SHELLS, Unwrapped, Word, basename
from canal.policy.shell.payloads import NOTHING, Payload, payload
from canal.policy.shell.special import custom, special

__all__ = ["SHELLS", "Unwrapped", "basename", "unwrap"]
MAX_SUBCOMMAND_DEPTH = 3


def _merge(payloads: Sequence[Payload]) -> Payload:
    scripts = tuple(s for p in payloads for s in p.scripts)
    code = "embedded" if any(p.code == "embedded" for p in payloads) else (
        "inline" if any(p.code == "inline" for p in payloads) else "")
    moves = [p.cwd for p in payloads if p.cwd is not None]
    cwd = "" if "" in moves else (moves[-1] if moves else None)  # a login anywhere: its home, unknown
    return Payload(scripts=scripts, code=code, writes=tuple(w for p in payloads for w in p.writes),
                   deletes=any(p.deletes for p in payloads), dynamic=any(p.dynamic for p in payloads),
                   cwd=cwd)


def _roles(s: Scan, g: Grammar) -> Payload:
    found = [payload(g.roles[n], o.value) for o in s.options for n in o.names if n in g.roles]
    return _merge(found) if found else NOTHING


def _command(words: Sequence[Word], s: Scan, g: Grammar) -> tuple[tuple[Word, ...] | None, Word | None, bool]:
    """(inner argv, inner script, shell reading stdin) for a program whose operands are a command."""
    spec = g.command
    if spec is None or s.has(*g.no_command):
        return None, None, False
    if spec.with_option and not s.has(*spec.with_option):
        return None, None, False
    if spec.shell_args:
        if s.has("u", "user"):
            return (tuple(words[s.stop:]) or None), None, False
        user = 1 if s.operands and words[s.operands[0]].text == "-" else 0  # su - USER: a login
        rest = tuple(words[s.operands[user] + 1:]) if len(s.operands) > user else ()
        return (Word("sh"), *rest), None, False
    if len(s.operands) <= spec.skip:
        return None, None, spec.shell_if_empty
    start = s.operands[spec.skip]
    rest = tuple(words[start:]) if g.stop_at_operand else tuple(words[i] for i in s.operands[spec.skip:])
    if rest[0].literal and rest[0].text in spec.script_flags:
        return None, (rest[1] if len(rest) > 1 else None), False
    joined = (spec.join and not s.has(*spec.argv_with)) or s.has(*spec.join_with)
    if joined:
        return None, Word(" ".join(w.text for w in rest), literal=all(w.literal for w in rest)), False
    return rest, None, False


def _generic(name: str, words: Sequence[Word], g: Grammar, depth: int = 0) -> Unwrapped | None:
    s = scan(words, 1, g)
    if g.subcommands and s.operands and depth < MAX_SUBCOMMAND_DEPTH:
        first = s.operands[0]
        sub = g.subcommands.get(words[first].text)
        if sub is not None:
            sub_words = words[first:]
            inner = custom(sub.custom, sub_words) if sub.custom else _generic(name, sub_words, sub, depth + 1)
            outer = _roles(s, g)
            return _combine(name, outer, inner, words)
    inner_argv, script, reads_stdin = _command(words, s, g)
    found = _roles(s, g)
    cwd = "" if g.command is not None and (g.command.unknown_cwd or _login_dash(words, s, g)) else found.cwd
    deletes = tuple(words[i].text for i in s.operands) if found.deletes else ()
    is_wrapper = g.command is not None
    stdin = reads_stdin or (g.stdin_script and not _script_file(s, g))
    if inner_argv is None and script is None and not stdin and found == NOTHING:
        return None
    return Unwrapped(
        wrapper=name, inners=(inner_argv,) if inner_argv else (),
        scripts=found.scripts + ((script,) if script is not None else ()),
        keep_outer=not is_wrapper or bool(found.writes or found.code or found.deletes) or reads_stdin,
        dynamic=found.dynamic,
        stdin_script=stdin, code=found.code,
        writes=found.writes, deletes=deletes, cwd=cwd)


def _script_file(s: Scan, g: Grammar) -> bool:
    return any(g.roles.get(name) == "code-file" for opt in s.options for name in opt.names)


def _login_dash(words: Sequence[Word], s: Scan, g: Grammar) -> bool:
    """``su - USER``: the lone dash is --login (the shell starts in the user's home)."""
    return bool(g.command and g.command.shell_args and s.operands and words[s.operands[0]].text == "-")


def _combine(name: str, outer: Payload, inner: Unwrapped | None, words: Sequence[Word]) -> Unwrapped | None:
    if outer == NOTHING:
        return inner
    base = inner or Unwrapped(name, keep_outer=True)
    return Unwrapped(wrapper=name, inners=base.inners, scripts=outer.scripts + base.scripts, keep_outer=True,
                     dynamic=outer.dynamic or base.dynamic,
                     stdin_script=base.stdin_script, code=_merge([outer, Payload(code=base.code)]).code,
                     writes=outer.writes + base.writes, deletes=base.deletes, cwd=_then(outer.cwd, base.cwd))


def _then(first: str | None, second: str | None) -> str | None:
    """Where a command starts after two moves (``uv --directory A run --directory B``)."""
    if first is None or second is None:
        return second if first is None else first
    if "" in (first, second):
        return ""
    return posixpath.join(first, second)


def unwrap(words: Sequence[Word]) -> Unwrapped | None:
    """What the command in ``words`` runs besides its program, when the parser can tell; else None."""
    if not words:
        return None
    name = basename(words[0])
    found = special(name, words)
    if found is not None or name in SHELLS:
        return found
    g = grammar_of(name)
    if g is None or g.custom is not None:
        return None
    return _generic(name, words, g)
