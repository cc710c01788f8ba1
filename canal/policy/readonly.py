"""The ``read_only`` fact: a conservative proof that a command can neither write a file nor run other code.

True for a segment only when its program is in ``shell/data/readonly.yaml``, found on a trusted path,
with every word and redirect literal, no substitution, no code, no wrapper, no run-time arguments, no
execution-relevant assignment (in the command or earlier in the session), no redirect that writes (but
to /dev/null), and no option that writes or runs code: the table's own, and every option whose role in
the grammar tables runs a command, code or writes or deletes a file. A command is read-only when every
segment is. Anything else, and every doubt, is "not read-only": the pipeline then checkpoints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict

from canal.policy.sedscript import only_prints
from canal.policy.shell.getopt import scan
from canal.policy.shell.grammar import DATA, Grammar, grammar_of
from canal.policy.shell.model import Segment

_QUIET = frozenset({"/dev/null"})
_HARMLESS_ROLES = frozenset({"ssh-option"})  # every other role runs code or touches files


class _Rules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    forbid: tuple[str, ...] = ()
    forbid_words: tuple[str, ...] = ()
    max_operands: int | None = None
    script: Literal["", "sed"] = ""
    subcommands: dict[str, _Rules] = {}


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    version: int
    programs: dict[str, _Rules]


@lru_cache(maxsize=1)
def table() -> dict[str, _Rules]:
    text = (DATA / "readonly.yaml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return _Table.model_validate(yaml.load(text, Loader=loader)).programs


def segment_read_only(seg: Segment, facts: Mapping[str, Any]) -> bool:
    """Whether this one segment provably writes nothing and runs nothing but itself."""
    rules = table().get(str(facts["program"]))
    if rules is None or not _plain(seg, facts):
        return False
    if not all(r.mode in ("read", "heredoc", "herestring", "dup") or
               (r.mode in ("write", "append") and r.target in _QUIET) for r in seg.redirects):
        return False
    return not risky_args(seg, facts)


def risky_args(seg: Segment, facts: Mapping[str, Any]) -> bool:
    """Whether the table cannot vouch for this segment's options and operands: a program it does not
    list, a subcommand it does not, or an option or operand that writes or runs code (strict's rules
    ask this of every program they allow, so a long or abbreviated spelling is caught like a short)."""
    rules = table().get(str(facts["program"]))
    argv = seg.argv
    if rules is None:
        return True
    if rules.subcommands:
        sub = rules.subcommands.get(argv[1]) if len(argv) > 1 else None
        if sub is None:
            return True  # a global option first, or a subcommand not known to be read-only
        return not _options_ok(sub, facts, seg, _roles(grammar_of(argv[0]), argv[1]))
    return not _options_ok(rules, facts, seg, _roles(grammar_of(argv[0]), None))


def command_read_only(segments: Sequence[Segment], facts: Sequence[Mapping[str, Any]]) -> bool:
    return bool(segments) and all(segment_read_only(s, f) for s, f in zip(segments, facts, strict=True))


def _plain(seg: Segment, facts: Mapping[str, Any]) -> bool:
    return (bool(facts["trusted_path"]) and not facts["opaque"] and not facts["substitution"]
            and not seg.code_exec and not seg.dynamic_args and not seg.wrappers and not facts["recursive"]
            and not facts["exec_assignments"] and not facts["session_env"] and not seg.extra_writes
            and not seg.deletes and not facts["writes_device"])


def _options_ok(rules: _Rules, facts: Mapping[str, Any], seg: Segment, roles: frozenset[str]) -> bool:
    argv = seg.argv
    forbidden = set(rules.forbid) | roles
    if any(letter in forbidden for letter in facts["flags"]):
        return False
    longs = [name for name in forbidden if len(name) > 1]
    # an abbreviation of a forbidden long option is that option (getopt_long, git's parse-options)
    if any(name.startswith(flag) for flag in facts["long_flags"] for name in longs):
        return False
    if any(word in rules.forbid_words for word in argv[1:]):
        return False
    positionals: list[str] = facts["positionals"]
    if rules.max_operands is not None and len(positionals) > rules.max_operands:
        return False
    return not rules.script or _sed_only_prints(seg)


def _sed_only_prints(seg: Segment) -> bool:
    """Every script sed runs (each -e, else the first operand) only prints; -f's file is not visible."""
    grammar = grammar_of("sed")
    if grammar is None:
        return False
    found = scan(seg.words, 1, grammar)
    if found.has("f", "file"):
        return False
    scripts = [o.value for o in found.options
               if o.value is not None and ("e" in o.names or "expression" in o.names)]
    if not scripts:
        scripts = [seg.words[found.operands[0]]] if found.operands else []
    return bool(scripts) and all(w is not None and w.literal and only_prints(w.text) for w in scripts)


def _roles(grammar: Grammar | None, sub: str | None) -> frozenset[str]:
    """Options of the program (and the subcommand) whose role runs code or writes or deletes files."""
    if grammar is None:
        return frozenset()
    found = {name for name, role in grammar.roles.items() if role not in _HARMLESS_ROLES}
    inner = grammar.subcommands.get(sub) if sub is not None else None
    if inner is not None:
        found |= {name for name, role in inner.roles.items() if role not in _HARMLESS_ROLES}
    return frozenset(found)
