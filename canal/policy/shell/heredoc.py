"""Fallback for several heredocs on one line, which tree-sitter-bash parses to an ERROR node
(tree-sitter-bash: two heredocs on one command). Only used after ``bash -n`` accepted the text.

Each ``<<DELIM`` operator becomes a here-string holding a placeholder and the bodies are cut out, the
way bash reads them: after the line holding the operators, one body per operator, in order. An
unquoted body that expands anything (``$``, backquote) makes the fallback give up (fail closed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OP = re.compile(r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([A-Za-z0-9_.\-]+))")


@dataclass
class Rewritten:
    text: str
    bodies: dict[str, tuple[str, bool]] = field(default_factory=dict)  # placeholder -> (body, literal)


def _operators(line: str) -> list[tuple[int, int, str, bool, bool]]:
    """(start, end, delimiter, strip_tabs, quoted) for each heredoc operator outside quotes."""
    found: list[tuple[int, int, str, bool, bool]] = []
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                i += 1
        elif ch == "\\":
            i += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;&|"):
            break
        elif line.startswith("<<<", i):
            i += 3
            continue
        elif line.startswith("<<", i):
            m = _OP.match(line, i)
            if m is None:
                return []
            delim = m.group(2) if m.group(2) is not None else m.group(3) or m.group(4) or ""
            quoted = m.group(4) is None or line[i:m.end()].count("\\") > 0
            found.append((i, m.end(), delim, m.group(1) == "-", quoted))
            i = m.end()
            continue
        i += 1
    return found


def rewrite(text: str) -> Rewritten | None:
    lines = text.split("\n")
    out_lines: list[str] = []
    result = Rewritten(text="")
    i = 0
    while i < len(lines):
        line = lines[i]
        ops = _operators(line)
        i += 1
        keys = [f"__CANAL_HEREDOC_{len(result.bodies) + k + 1}__" for k in range(len(ops))]
        for (start, end, *_rest), key in reversed(list(zip(ops, keys, strict=True))):
            line = f"{line[:start]}<<< {key}{line[end:]}"
        for (_start, _end, delim, strip, quoted), key in zip(ops, keys, strict=True):
            body: list[str] = []
            while i < len(lines) and (lines[i].lstrip("\t") if strip else lines[i]) != delim:
                body.append(lines[i].lstrip("\t") if strip else lines[i])
                i += 1
            if i >= len(lines):
                return None  # unterminated: the caller fails closed
            i += 1
            joined = "\n".join(body) + "\n"
            if not quoted and any(c in joined for c in "$`"):
                return None
            result.bodies[key] = (joined, True)
        out_lines.append(line)
    result.text = "\n".join(out_lines)
    return result if result.bodies else None
