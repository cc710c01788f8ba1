"""What one simple command hides in its data: variable values that are commands, strings bash
evaluates as code, arithmetic on run-time values, and every variable it assigns."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from canal.policy.shell.model import Segment, Word
from canal.policy.shell.produce import expands, expansion_probe, hidden_code
from canal.policy.shell.variables import COMMAND_VALUED, EXPANDED, assigned_by

_CONSTANT = re.compile(r"^(?:0[xX][0-9a-fA-F]+|[\s0-9+\-*/%()<>=!&|^~?:,])*+$")
_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_NAME_TAKERS = frozenset({"printf", "read", "unset", "wait", "mapfile", "readarray", "declare", "typeset",
                          "local", "export", "readonly", "getopts"})


@dataclass(frozen=True)
class Analysis:
    segment: Segment
    scripts: tuple[Word, ...] = ()  # variable values that are commands (PAGER='...')
    probes: tuple[str, ...] = ()  # scripts holding the substitutions bash runs inside strings
    code: str = ""  # embedded: a command-valued variable gets a value only known at run time


def _arith_opaque(seg: Segment) -> str:
    argv = seg.argv
    if not argv:
        return ""
    program = argv[0]
    if program in ("[[", "[", "test"):
        for i, arg in enumerate(argv[:-1]):
            arith = arg in _ARITH_TESTS and program == "[["
            if (arith or arg == "-v") and not _CONSTANT.match(argv[i + 1]):
                return "a variable's value is evaluated as arithmetic"
            if arith and i > 0 and not _CONSTANT.match(argv[i - 1]):
                return "a variable's value is evaluated as arithmetic"
    if program == "let" or (program in ("declare", "typeset", "local") and any(
            a.startswith("-") and "i" in a for a in argv[1:])):
        return "a variable's value is evaluated as arithmetic"
    if program in _NAME_TAKERS and any("[" in a for a in argv[1:]):
        return "an array subscript is evaluated as arithmetic"
    return ""


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
                scripts.append(Word(value.text))
            else:
                code = "embedded"
        if EXPANDED.match(name):
            if value.literal and value.text and expands(value.text):
                probes.append(expansion_probe(value.text))
            elif not value.literal and not value.text:
                code = "embedded"
    texts = [w.text for w in seg.words if w.literal] + [v for _, v in seg.assignments]
    if seg.argv[:1] in (("read",), ("mapfile",), ("readarray",)):  # data read into variables
        texts += [r.target for r in seg.redirects if r.literal and r.mode in ("heredoc", "herestring")]
    probes += [expansion_probe(t) for t in texts if hidden_code(t)]
    names = tuple(dict.fromkeys([*seg.assigned, *(n for n, _ in found)]))
    opaque = seg.opaque_reason or _arith_opaque(seg)
    return Analysis(dataclasses.replace(seg, assigned=names, opaque_reason=opaque), tuple(scripts),
                    tuple(probes), code)
