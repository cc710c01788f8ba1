"""``{{params.x}}`` templates in a tool's argv and env: parsing, placement checks, rendering.

A template is a whole argv element (``"{{params.path}}"``) or sits inside a literal element
(``"--name={{params.name}}"``). It never reaches a shell: an element that a program reads as code
(``bash -c CODE``, ``python -c CODE``, ``perl -e CODE``, an awk program, anything after ``ssh`` or
``watch``, which join their arguments into a shell string) may not hold a template at all.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

_TEMPLATE = re.compile(r"\{\{(.*?)\}\}")
_PARAM_REF = re.compile(r"\s*params\.([A-Za-z_][A-Za-z0-9_]*)\s*")

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox", "su", "script"})
_EVALUATORS = frozenset({"perl", "ruby", "node", "nodejs", "php", "lua", "osascript", "pwsh"})
_JOINERS = frozenset({"ssh", "watch"})  # join every following argument into one shell string
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_AWK_VALUE_FLAGS = frozenset({"-v", "-F", "-f"})
_CODE_FLAGS = re.compile(r"^(-[A-Za-z]*[cepr][A-Za-z]*|--command|--eval|--print)$")


class TemplateError(ValueError):
    """A template that is malformed, names an unknown parameter, or sits where code is read."""


def refs(text: str) -> list[str]:
    """Parameter names referenced in ``text``, in order; raises ``TemplateError`` on a bad reference."""
    names: list[str] = []
    for match in _TEMPLATE.finditer(text):
        ref = _PARAM_REF.fullmatch(match.group(1))
        if ref is None:
            msg = f"template {match.group(0)!r} is not of the form {{{{params.<name>}}}}"
            raise TemplateError(msg)
        names.append(ref.group(1))
    rest = _TEMPLATE.sub("", text)
    if "{{" in rest or "}}" in rest:
        msg = f"unbalanced template braces in {text!r}"
        raise TemplateError(msg)
    return names


def whole(text: str) -> str | None:
    """The parameter name when ``text`` is exactly one template, else None."""
    match = _TEMPLATE.fullmatch(text.strip())
    if match is None or text != text.strip():
        return None
    ref = _PARAM_REF.fullmatch(match.group(1))
    return ref.group(1) if ref else None


def _program(element: str) -> str:
    name = posixpath.basename(element)
    return "python" if name.startswith("python") else name


def code_positions(argv: Sequence[str]) -> set[int]:
    """Indexes of argv elements that some program in the argv reads as code or a shell string."""
    found: set[int] = set()
    for i, element in enumerate(argv):
        prog = _program(element)
        if prog in _JOINERS:
            found.update(range(i + 1, len(argv)))
        elif prog in _SHELLS or prog in _EVALUATORS or prog == "python":
            found.update(j + 1 for j in range(i + 1, len(argv) - 1) if _CODE_FLAGS.match(argv[j]))
        elif prog in _AWKS:
            found.update(_awk_program(argv, i))
    return found


def _awk_program(argv: Sequence[str], start: int) -> set[int]:
    j = start + 1
    while j < len(argv):
        if argv[j] in _AWK_VALUE_FLAGS:
            j += 2
        elif argv[j].startswith("-") and argv[j] != "--":
            j += 1
        else:
            return {j + 1} if argv[j] == "--" else {j}
    return set()


def check_argv(argv: Sequence[str], params: Mapping[str, object]) -> list[tuple[int, str]]:
    """Problems with the templates of ``argv``: ``(index, problem)`` pairs; empty when it is fine."""
    problems: list[tuple[int, str]] = []
    code = code_positions(argv)
    for i, element in enumerate(argv):
        try:
            names = refs(element)
        except TemplateError as exc:
            problems.append((i, str(exc)))
            continue
        if names and i in code:
            problems.append((i, f"argv[{i}] is read as code or a shell string; pass values as separate "
                                "argv elements (e.g. bash -c 'do \"$1\"' _ {{params.x}}) or through env:"))
        problems.extend((i, f"unknown parameter {n!r}") for n in names if n not in params)
    return problems


def as_text(value: Any) -> str:
    """How a validated value becomes argv or env text: JSON for lists and objects, true/false for bools."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def render(text: str, values: Mapping[str, Any]) -> str | None:
    """``text`` with every template replaced; None when it refers to a parameter that has no value."""
    names = refs(text)
    if any(n not in values for n in names):
        return None
    return _TEMPLATE.sub(lambda m: as_text(values[refs(m.group(0))[0]]), text)
