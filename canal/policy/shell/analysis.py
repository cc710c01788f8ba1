"""What one simple command hides in its data: variable values that are commands, strings bash
evaluates as code, arithmetic on run-time values, and every variable it assigns.

Array subscripts in a string run the substitutions in them only where bash evaluates the string as a
name or an arithmetic expression. A string is checked at once (``probes``) where that happens in this
command (``printf -v``, ``read``, ``unset``, ``declare``, ``let``, ``wait -p``, ``test -v``, ``[[ -eq ]]``,
arithmetic and subscripts in expansions) or where it is stored in a variable (every assignment, a
``for`` list), since a later command may evaluate the variable. Any other string is ``deferred``: the
parser checks it only if the whole command evaluates or stores run-time data (``sinks``), because
only then can it reach such a place (``echo 'a[$(cmd)]' | { read x; echo $((x)); }``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from canal.policy.shell.model import Segment, Word
from canal.policy.shell.produce import expands, expansion_probe, hidden_code
from canal.policy.shell.variables import COMMAND_VALUED, EXPANDED, assigned_by

_CONSTANT = re.compile(r"^(?:0[xX][0-9a-fA-F]+|[\s0-9+\-*/%()<>=!&|^~?:,])*+$")
_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# builtins whose operands bash reads as variable names (with subscripts) or arithmetic: every operand
_EVALUATES = frozenset({"read", "unset", "wait", "mapfile", "readarray", "declare", "typeset", "local",
                        "export", "readonly", "getopts", "let"})
# builtins that store data known only at run time into variables
_READERS = frozenset({"read", "mapfile", "readarray", "getopts"})
_TESTS = frozenset({"[[", "[", "test"})
_NAME_TESTS = frozenset({"-v", "-R"})
# expansions that evaluate a value as arithmetic or as a name: $(( )), $[ ], (( )), ${a[i]}, ${!x},
# ${x:offset}, ${x=default}
_EVALUATING_SYNTAX = re.compile(r"\$\(\(|\$\[|\(\(|\$\{[#!]|\$\{\w+\s*[\[:=]")


@dataclass(frozen=True)
class Analysis:
    segment: Segment
    scripts: tuple[Word, ...] = ()  # variable values that are commands (PAGER='...')
    probes: tuple[str, ...] = ()  # scripts holding the substitutions bash runs inside strings
    deferred: tuple[str, ...] = ()  # probes that matter only if the command evaluates run-time data
    code: str = ""  # embedded: a command-valued variable gets a value only known at run time


def _arith_opaque(seg: Segment) -> str:
    argv = seg.argv
    if not argv:
        return ""
    program = argv[0]
    if program in _TESTS:
        for i, arg in enumerate(argv[:-1]):
            arith = arg in _ARITH_TESTS and program == "[["
            if (arith or arg == "-v") and not _CONSTANT.match(argv[i + 1]):
                return "a variable's value is evaluated as arithmetic"
            if arith and i > 0 and not _CONSTANT.match(argv[i - 1]):
                return "a variable's value is evaluated as arithmetic"
    if program == "let" or (program in ("declare", "typeset", "local") and any(
            a.startswith("-") and "i" in a for a in argv[1:])):
        return "a variable's value is evaluated as arithmetic"
    if any("[" in argv[i] for i in _evaluated(seg)):
        return "an array subscript is evaluated as arithmetic"
    return ""


def _evaluated(seg: Segment) -> set[int]:
    """Indices of the words bash reads as names or arithmetic in this command."""
    words = seg.words
    program = words[0].text if words and words[0].literal else ""
    if program in _EVALUATES or (program == "printf" and any(w.text == "-v" for w in words[1:])):
        return set(range(1, len(words)))
    if program not in _TESTS:
        return set()
    found: set[int] = set()
    for i, word in enumerate(words[:-1]):
        if word.text in _NAME_TESTS:
            found.add(i + 1)
        elif program == "[[" and word.text in _ARITH_TESTS:
            found.update((i - 1, i + 1))
    return found


def _strings(seg: Segment) -> tuple[list[str], list[str]]:
    """(strings bash evaluates or stores now, strings that are data unless something evaluates them)."""
    evaluated = _evaluated(seg)
    now: list[str] = [v for _, v in seg.assignments] + [n for n, _ in seg.assignments if "[" in n]
    later: list[str] = []
    for i, word in enumerate(seg.words):
        if not word.literal and _EVALUATING_SYNTAX.search(word.text):
            now.append(_unquoted(word.text))  # as written: bash removes quotes inside arithmetic
        elif i in evaluated:
            now.append(word.text)
        elif i:
            later.append(word.text)
    if seg.argv[:1] in (("read",), ("mapfile",), ("readarray",)):  # data read into variables
        now += [r.target for r in seg.redirects if r.literal and r.mode in ("heredoc", "herestring")]
    return [t for t in now if hidden_code(t)], [t for t in later if hidden_code(t)]


def _unquoted(text: str) -> str:
    """A word as written, quotes dropped, so a probe sees ``$(...)`` inside ``$(( 'a[$(cmd)]' ))``."""
    return text.replace("'", "").replace('"', "")


def sink(seg: Segment) -> bool:
    """Whether this command evaluates a value known only at run time as a name or arithmetic, or stores
    run-time data in a variable (where a later command may evaluate it)."""
    if seg.opaque_reason:
        return True
    program = seg.words[0].text if seg.words and seg.words[0].literal else ""
    if program in _READERS:
        return True
    if (program in _EVALUATES or program in _TESTS or program == "printf") and not all(
            w.literal for w in seg.words):
        return True
    return any(not w.literal and _EVALUATING_SYNTAX.search(w.text) for w in seg.words)


def analyse(seg: Segment) -> Analysis:
    found = assigned_by(seg.words)
    found += [(name, Word(value)) for name, value in seg.assignments]
    scripts: list[Word] = []
    probes: list[str] = []
    code = ""
    for name, value in found:
        if value is None:
            continue
        if COMMAND_VALUED.match(name):
            if value.literal or value.text:
                # less runs LESSOPEN "|cmd %s" / "||cmd" / "|-cmd" through the shell
                text = value.text.lstrip("|-") if name in ("LESSOPEN", "LESSCLOSE") else value.text
                scripts.append(Word(text))
            else:
                code = "embedded"
        if name in ("BASH_ENV", "ENV") and "<(" in value.text:
            scripts.append(Word(value.text, literal=False))  # a startup file fed by a substitution
        elif EXPANDED.match(name):
            if value.literal and value.text and expands(value.text):
                probes.append(expansion_probe(value.text))
            elif not value.literal and not value.text:
                code = "embedded"
    now, later = _strings(seg)
    probes += [expansion_probe(t) for t in now]
    names = tuple(dict.fromkeys([*seg.assigned, *(n for n, _ in found)]))
    opaque = seg.opaque_reason or _arith_opaque(seg)
    return Analysis(dataclasses.replace(seg, assigned=names, opaque_reason=opaque), tuple(scripts),
                    tuple(probes), tuple(expansion_probe(t) for t in later), code)
