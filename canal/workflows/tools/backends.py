"""Backend tools in the catalog: what ``canal discover`` listed from each MCP server, as tool definitions.

Each server's listing is kept as it came (``.canal/discover/mcp/<server>.json``: the tools' names,
descriptions, input schemas and annotations); definitions are derived from it the same way at discover
time and at every load. A tool keeps its server's name unless another server or a local tool has it,
then it is ``server.tool``. A tool whose schema Canal cannot turn into fields is left out with a note
(``MCP_TOOL_SCHEMA_INVALID``); the rest of the listing stands. The listing decides nothing: a call
checks its tool against the server's live listing (schema and annotations) before the policy sees it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from canal.core.display import visible
from canal.workflows.fields import FieldSpec
from canal.workflows.tools.layout import discover_dir, refuse_symlink
from canal.workflows.tools.model import MCP_NAME_PATTERN, McpBinding, ToolDefinition

LISTING_VERSION = 1
_TYPES = ("string", "integer", "number", "boolean", "array", "object")
_SENSITIVE_NAME = re.compile(r"(?i)(pass(word|wd)?|secret|token|api[_-]?key|credential)")
_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class SkippedTool:
    server: str
    tool: str
    problem: str
    code: str = "MCP_TOOL_SCHEMA_INVALID"


def listings_dir(project_dir: Path) -> Path:
    return discover_dir(project_dir) / "mcp"


def listing_path(project_dir: Path, server: str) -> Path:
    return listings_dir(project_dir) / f"{server}.json"


def listing_text(server: str, tools: Iterable[Mapping[str, Any]]) -> str:
    return json.dumps({"version": LISTING_VERSION, "server": server, "tools": list(tools)},
                      indent=2, sort_keys=True) + "\n"


def read_listings(project_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """server -> its tools as last listed (a file that cannot be read counts as no listing)."""
    folder = refuse_symlink(listings_dir(project_dir), project_dir)
    if not folder.is_dir():
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(refuse_symlink(path, project_dir).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("tools"), list) and data.get("server") == path.stem:
            out[path.stem] = [t for t in data["tools"] if isinstance(t, dict)]
    return out


def schema_sha256(schema: Any) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _one_line(text: Any, limit: int) -> str:
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    first = visible(lines[0]) if lines else ""
    return first if len(first) <= limit else first[:limit - 3] + "..."


def _field_type(prop: Mapping[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind in _TYPES:
        return str(kind)
    values = prop.get("enum") or ([prop["default"]] if "default" in prop else [])
    for sample, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
        if values and all(isinstance(v, sample) for v in values):
            return name
    if kind is None:
        return "string"
    msg = f"type {kind!r} is not one of {', '.join(_TYPES)}"
    raise ValueError(msg)


def fields_of(schema: Any) -> dict[str, FieldSpec]:
    """The tool's fields from its input schema (a JSON Schema object); ValueError naming the problem."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        msg = "its inputSchema is not an object schema"
        raise ValueError(msg)
    props = {} if schema.get("properties") is None else schema["properties"]
    required = [] if schema.get("required") is None else schema["required"]
    if not isinstance(props, dict) or not isinstance(required, list):
        msg = "its inputSchema's properties (or required) are malformed"
        raise ValueError(msg)
    fields: dict[str, FieldSpec] = {}
    for name, prop in props.items():
        if not _PARAM_NAME.match(str(name)) or not isinstance(prop, dict):
            msg = f"parameter {name!r} has a name or schema Canal cannot take"
            raise ValueError(msg)
        kind = _field_type(prop)
        try:
            fields[name] = FieldSpec(
                type=kind,  # type: ignore[arg-type]
                required=name in required, desc=_one_line(prop.get("description") or prop.get("title"), 300),
                enum=prop["enum"] if isinstance(prop.get("enum"), list) else None,
                default=prop.get("default"),
                pattern=prop["pattern"] if kind == "string" and isinstance(prop.get("pattern"), str)
                else None,
                sensitive=bool(prop.get("writeOnly")) or prop.get("format") == "password"
                or bool(_SENSITIVE_NAME.search(name)))
        except ValidationError as exc:
            msg = f"parameter {name!r}: {exc.errors()[0]['msg']}"
            raise ValueError(msg) from None
    return fields


def definition(server: str, raw: Mapping[str, Any], name: str) -> ToolDefinition:
    """One listed tool as a definition named ``name``; ValueError when its schema cannot be used."""
    schema = raw.get("inputSchema")
    given = raw.get("annotations")
    annotations: dict[str, Any] = given if isinstance(given, dict) else {}
    description = _one_line(raw.get("description") or raw.get("title") or raw.get("name"), 200)
    try:
        return ToolDefinition(
            name=name, description=description or str(raw.get("name")), parameters=fields_of(schema),
            idempotent=annotations.get("idempotentHint") is True,
            result="json" if isinstance(raw.get("outputSchema"), dict) else "text",
            mcp=McpBinding(server=server, tool=str(raw.get("name")), annotations=dict(annotations),
                           schema_sha256=schema_sha256(schema)))
    except ValidationError as exc:
        first = exc.errors()[0]
        msg = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
        raise ValueError(msg) from None


def backend_tools(listings: Mapping[str, list[dict[str, Any]]],
                  taken: Iterable[str]) -> tuple[dict[str, ToolDefinition], list[SkippedTool]]:
    """Every listed tool as a definition, names plain unless taken by a local tool or another server
    (then ``server.tool``); with the tools left out and why."""
    local = set(taken)
    counts: dict[str, int] = {}
    for tools in listings.values():
        for name in {str(t.get("name")) for t in tools}:
            counts[name] = counts.get(name, 0) + 1
    out: dict[str, ToolDefinition] = {}
    skipped: list[SkippedTool] = []
    for server, tools in sorted(listings.items()):
        seen: set[str] = set()
        for raw in tools:
            remote = str(raw.get("name"))
            name = remote if counts.get(remote) == 1 and remote not in local else f"{server}.{remote}"
            problem = ""
            if remote in seen:
                problem = "the server lists it twice"
            elif not re.match(MCP_NAME_PATTERN, name):
                problem = f"its name does not match {MCP_NAME_PATTERN}"
            seen.add(remote)
            if not problem:
                try:
                    out[name] = definition(server, raw, name)
                    continue
                except ValueError as exc:
                    problem = str(exc)
            skipped.append(SkippedTool(server, visible(remote[:80]), problem))
    return out, skipped
