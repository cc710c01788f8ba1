"""Templates ``{{gate.<step>.<field>}}`` and ``{{result.<step>.<path>}}``: parsing, checking, rendering.

A template that is the whole value keeps the value's type; inside a longer string it is interpolated.
A missing reference is an error, never an empty string. Values reach commands only as whole argv
elements or environment variables: nothing here ever builds a shell string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from canal.core.mask import MASK
from canal.workflows.errors import TemplateError

_ANY = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_REF = re.compile(r"^(gate|result)\.([a-z0-9][a-z0-9-]*)((?:\.[A-Za-z0-9_-]+)*)$")
# In Markdown bodies only our own namespaces are templates; other ``{{...}}`` stays literal text.
_BODY = re.compile(r"\{\{\s*((?:gate|result)\.[^{}\s]*)\s*\}\}")


@dataclass(frozen=True)
class Ref:
    namespace: Literal["gate", "result"]
    step: str
    path: tuple[str, ...]
    raw: str

    def __str__(self) -> str:
        return "{{" + self.raw + "}}"


@dataclass(frozen=True)
class Context:
    """What templates can see: gate values and results of completed steps."""

    gate: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    results: Mapping[str, Any] = field(default_factory=dict)
    sensitive: frozenset[tuple[str, str]] = frozenset()  # (step, field) pairs masked on display


def parse_ref(inner: str) -> Ref:
    text = inner.strip()
    match = _REF.match(text)
    if not match:
        msg = (f"'{{{{{text}}}}}' is not a template: use {{{{gate.<step>.<field>}}}} "
               "or {{result.<step>.<path>}}")
        raise TemplateError(msg)
    namespace, step, rest = match.groups()
    path = tuple(rest.split(".")[1:]) if rest else ()
    if namespace == "gate" and not path:
        msg = f"'{{{{{text}}}}}' names no field: use {{{{gate.{step}.<field>}}}}"
        raise TemplateError(msg)
    return Ref("gate" if namespace == "gate" else "result", step, path, text)


def refs_in(text: str, *, strict: bool = True) -> list[Ref]:
    """Every template in ``text``. Strict (front matter): any ``{{...}}`` must be a valid reference."""
    if strict:
        return [parse_ref(m.group(1)) for m in _ANY.finditer(text)]
    return [parse_ref(m.group(1)) for m in _BODY.finditer(text)]


def walk_strings(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string inside nested lists and mappings, with its path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from walk_strings(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk_strings(item, (*path, index))


def _descend(value: Any, ref: Ref, path: tuple[str, ...]) -> Any:
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            msg = f"{ref}: no '{part}' in the value of {ref.namespace}.{ref.step}"
            raise TemplateError(msg, details={"template": str(ref)})
    return value


def resolve(ref: Ref, ctx: Context, *, masked: bool = False) -> Any:
    if ref.namespace == "gate":
        if ref.step not in ctx.gate or ref.path[0] not in ctx.gate[ref.step]:
            msg = f"{ref}: step '{ref.step}' has no gate value '{ref.path[0]}' yet"
            raise TemplateError(msg, details={"template": str(ref)})
        if masked and (ref.step, ref.path[0]) in ctx.sensitive:
            return MASK
        return _descend(ctx.gate[ref.step][ref.path[0]], ref, ref.path[1:])
    if ref.step not in ctx.results:
        msg = f"{ref}: step '{ref.step}' has no result yet"
        raise TemplateError(msg, details={"template": str(ref)})
    return _descend(ctx.results[ref.step], ref, ref.path)


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def render_value(value: Any, ctx: Context, *, masked: bool = False) -> Any:
    """Render templates inside ``value`` (strings, lists, mappings); a whole-value template keeps its type."""
    if isinstance(value, str):
        whole = _ANY.fullmatch(value.strip())
        if whole and value.strip().count("{{") == 1:
            return resolve(parse_ref(whole.group(1)), ctx, masked=masked)
        return _ANY.sub(lambda m: as_text(resolve(parse_ref(m.group(1)), ctx, masked=masked)), value)
    if isinstance(value, Mapping):
        return {key: render_value(item, ctx, masked=masked) for key, item in value.items()}
    if isinstance(value, list):
        return [render_value(item, ctx, masked=masked) for item in value]
    return value


def _scalar_text(value: Any, where: str) -> str:
    if isinstance(value, list | dict) or value is None:
        msg = f"{where} must be a single value, got {type(value).__name__}"
        raise TemplateError(msg)
    return as_text(value)


def render_argv(argv: list[str], ctx: Context) -> tuple[str, ...]:
    """Each element becomes exactly one argv element, whatever characters the values contain."""
    return tuple(_scalar_text(render_value(item, ctx), f"argv[{i}]") for i, item in enumerate(argv))


def render_env(env: Mapping[str, str], ctx: Context) -> dict[str, str]:
    return {name: _scalar_text(render_value(item, ctx), f"env {name}") for name, item in env.items()}


def render_body(text: str, ctx: Context) -> str:
    """Render a Markdown body for display: sensitive gate values masked; unresolved references kept as-is."""

    def one(match: re.Match[str]) -> str:
        try:
            return as_text(resolve(parse_ref(match.group(1)), ctx, masked=True))
        except TemplateError:
            return match.group(0)

    return _BODY.sub(one, text)
