r"""A rule's pattern made larger for Hyperscan: every match of the rule is a match of the result.

Hyperscan decides, in one pass over a text, where (``anchors``) or whether (``prefilter.RuleGate``)
a rule can match; it is only ever asked to rule places out, so what it is given may match more than
the rule but never less. Hyperscan refuses lookaround and compiles large counted repeats slowly or
not at all, so both go: a lookaround group is dropped with all it holds (one constraint fewer), and
``{m,n}`` becomes ``{m,}``. Character classes are copied as they are (``{`` and ``(`` mean nothing
there). A pattern this reading cannot be sure of is refused (None): a class inside a class (``regex``
VERSION1 sets), ``{,n}`` (``{0,n}`` to ``regex``, a literal to Hyperscan), an unbalanced group.
"""

from __future__ import annotations

import re

_COUNTED = re.compile(r"\{(\d+),\d+\}")
_LOOKAROUNDS = ("(?=", "(?!", "(?<=", "(?<!")


def relaxed(pattern: str) -> str | None:
    out: list[str] = []
    at = 0
    while at < len(pattern):
        if pattern.startswith(_LOOKAROUNDS, at):
            at = _group_end(pattern, at)
            if at < 0:
                return None
            continue
        c = pattern[at]
        if c == "\\":
            out.append(pattern[at:at + 2])
            at += 2
        elif c == "[":
            end = _class_end(pattern, at)
            if end < 0:
                return None
            out.append(pattern[at:end])
            at = end
        elif c == "{" and pattern.startswith("{,", at):
            return None
        elif c == "{" and (m := _COUNTED.match(pattern, at)):
            out.append(f"{{{m.group(1)},}}")
            at = m.end()
        else:
            out.append(c)
            at += 1
    return "".join(out)


def _class_end(pattern: str, at: int) -> int:
    """Where the class opening at ``at`` ends (after its ``]``); -1 when not plain."""
    at += 1
    if pattern[at:at + 1] == "^":
        at += 1
    if pattern[at:at + 1] == "]":  # a "]" first in a class is a literal
        at += 1
    while at < len(pattern):
        c = pattern[at]
        if c == "\\":
            at += 2
        elif c == "[":
            return -1
        elif c == "]":
            return at + 1
        else:
            at += 1
    return -1


def _group_end(pattern: str, at: int) -> int:
    """Where the group opening at ``at`` ends (after its ``)``); -1 when unbalanced or not plain."""
    depth = 0
    while at < len(pattern):
        c = pattern[at]
        if c == "\\":
            at += 2
            continue
        if c == "[":
            at = _class_end(pattern, at)
            if at < 0:
                return -1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return -1
