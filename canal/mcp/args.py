"""Argument shapes models actually produce, normalised before validation.

Models send a list where a string is expected and the reverse, numbers as strings, objects as JSON
inside a string, and sandbox paths (``/workspace/src/app.py``) where the host expects project paths.
Each coercion below accepts those shapes and leaves anything else for pydantic to reject, so an
invalid call still fails with the field's constraint.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo, WithJsonSchema

SANDBOX_WORKDIR = "/workspace"  # the default; a project's canal.yaml may move it (``sandbox.workdir``)
_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?)?\s*$", re.IGNORECASE)
_RANGE = re.compile(r"^\s*(\d*)\s*(?::|-|,|\.\.)\s*(\d*)\s*$")


def _json_if_bracketed(value: str, opener: str) -> Any:
    text = value.strip()
    if text.startswith(opener):
        try:
            return json.loads(text)
        except ValueError:
            return value
    return value


def to_command(value: Any) -> Any:
    """A shell command: a string as is; an argv list joined with shell quoting, each element whole."""
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return shlex.join(str(v) for v in value)
    return value


def to_str_list(value: Any) -> Any:
    """A list of strings from a list, a JSON array in a string, or a space-separated string (quotes kept)."""
    if isinstance(value, str):
        parsed = _json_if_bracketed(value, "[")
        if isinstance(parsed, list):
            return to_str_list(parsed)
        try:
            return shlex.split(value)
        except ValueError:
            return value.split()
    if isinstance(value, list):
        return [str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in value]
    return value


def in_workdir(text: str, workdir: str) -> str:
    """``text`` (a description the agent reads) with the default folder named as the project's own."""
    if workdir == SANDBOX_WORKDIR:
        return text
    # not where the name goes on (/workspaces, /workspace.d); a dot that ends a sentence does not
    return re.sub(re.escape(SANDBOX_WORKDIR) + r"(?![\w-]|\.[\w.-])", lambda _: workdir, text)


def workdir_of(info: ValidationInfo) -> str:
    """The project's folder in the sandbox: the validation context's ``workdir`` (``parse_args``), else
    the default."""
    context = info.context
    found = context.get("workdir") if isinstance(context, Mapping) else None
    return (found.rstrip("/") or "/") if isinstance(found, str) and found.startswith("/") else SANDBOX_WORKDIR


def to_project_path(value: Any, info: ValidationInfo) -> Any:
    """A sandbox path under the project's folder in the sandbox (``/workspace`` unless canal.yaml moved
    it) becomes the same path relative to the project folder."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    workdir = workdir_of(info)
    if text == workdir or text == workdir + "/":
        return "."
    if text.startswith(workdir + "/"):
        return text[len(workdir) + 1:] or "."
    return text


def to_path_list(value: Any, info: ValidationInfo) -> Any:
    listed = to_str_list(value)
    if isinstance(listed, list):
        return [to_project_path(v, info) for v in listed]
    return listed


def to_seconds(value: Any) -> Any:
    """Seconds from a number, ``"30"``, ``"30s"`` or ``"2m"``."""
    if isinstance(value, str):
        match = _SECONDS.match(value)
        if match is None:
            return value
        number = float(match.group(1))
        unit = (match.group(2) or "s").lower()
        return number * 60 if unit.startswith("m") else number
    return value


def to_object(value: Any) -> Any:
    """A JSON object, also when sent as JSON text inside a string; an empty string is no object."""
    if isinstance(value, str):
        if not value.strip():
            return {}
        return _json_if_bracketed(value, "{")
    return value


def to_range(value: Any) -> Any:
    """Lines ``[start, end]`` from ``"10:40"``, ``"10-40"``, ``"10,40"``, ``[10, 40]``, ``{"start": 10, ...}``
    or a single line number; an open end (``"10:"``) stays open."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return [int(value), int(value)]
    if isinstance(value, dict):
        return [value.get("start"), value.get("end")]
    if isinstance(value, str):
        return _range_from_text(value)
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return [value[0], value[0]]
    return value


def _range_from_text(value: str) -> Any:
    parsed = _json_if_bracketed(value, "[")
    if isinstance(parsed, list):
        return to_range(parsed)
    if value.strip().isdigit():
        line = int(value)
        return [line, line]
    match = _RANGE.match(value)
    if match is None:
        return value
    first, last = match.groups()
    return [int(first) if first else None, int(last) if last else None]


def _to_bool(value: str) -> Any:
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "1", "on"):
        return True
    if lowered in ("false", "no", "0", "off"):
        return False
    return value


def to_field_type(value: Any, kind: str) -> Any:
    """One gate or tool field value in the type its schema declares, when a model sent it as text.

    Only unambiguous text converts (``"2"`` for an integer, ``"true"`` for a boolean, JSON for an array
    or object); anything else stays as sent, so the field's own validation names the problem."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if kind == "integer" and re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if kind == "number" and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        return float(text)
    if kind == "boolean":
        return _to_bool(text)
    if kind == "array":
        return to_str_list(value)
    if kind == "object":
        return to_object(value)
    return value


def coerce_fields(values: Mapping[str, Any], kinds: Mapping[str, str]) -> dict[str, Any]:
    """Field values with text converted to each field's declared type; unknown fields pass as sent."""
    return {name: to_field_type(v, kinds[name]) if name in kinds else v for name, v in values.items()}


def to_stripped(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


# The schemas declare the alternative shapes each type accepts (docs/mcp.md, "Argument shapes"), as a
# list of types rather than anyOf: one flat object per field (each keyword applies to its own type).
Command = Annotated[str, BeforeValidator(to_command), WithJsonSchema(
    {"type": ["string", "array"], "items": {"type": "string"}, "minLength": 1, "minItems": 1})]
ProjectPath = Annotated[str, BeforeValidator(to_project_path)]
PathList = Annotated[list[str], BeforeValidator(to_path_list), WithJsonSchema(
    {"type": ["array", "string"], "items": {"type": "string"}})]
Seconds = Annotated[float, BeforeValidator(to_seconds), WithJsonSchema(
    {"type": ["number", "string"], "pattern": r"^\s*\d+(\.\d+)?\s*[smh]?\s*$"})]
JsonObject = Annotated[dict[str, Any], BeforeValidator(to_object)]
LineRange = Annotated[tuple[int | None, int | None], BeforeValidator(to_range)]
Token = Annotated[str, BeforeValidator(to_stripped)]
