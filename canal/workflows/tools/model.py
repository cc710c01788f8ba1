"""The tool definition: one ``tools/<name>.yaml`` of a project, parsed once into a frozen model."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from canal.core.display import refuse_hidden
from canal.workflows.fields import FieldSpec
from canal.workflows.tools import templates

NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,63}$"
# a backend tool keeps its server's name (``server.tool`` when two collide): wider, still a file name
MCP_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_.-]{0,127}$"
_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PARAMS_ENV = "CANAL_TOOL_PARAMS"  # where a ``script:`` tool finds its parameters, as one JSON object

Loc = tuple[int | str, ...]


class McpBinding(BaseModel):
    """Where a backend tool lives: its server (``tools.mcp_servers``), its name there, its annotations
    as listed, and the sha256 of its input schema when the catalog was written (a call checks it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server: str
    tool: str
    annotations: dict[str, Any] = Field(default_factory=dict)
    schema_sha256: str


class ToolDefinition(BaseModel):
    """What a tool takes and what runs. Exactly one of ``run`` (an argv template), ``script`` or ``mcp``
    (a backend's tool, written by ``canal discover``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=MCP_NAME_PATTERN)
    description: str = Field(min_length=1, max_length=200)
    parameters: dict[str, FieldSpec] = Field(default_factory=dict)
    run: list[str] | None = None
    script: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    image: str | None = None
    timeout_s: float | None = Field(default=None, gt=0, le=86400)
    idempotent: bool = False
    result: Literal["json", "text"] = "text"
    mcp: McpBinding | None = None

    @field_validator("description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return refuse_hidden(value.strip(), "description")

    @field_validator("parameters")
    @classmethod
    def _param_names(cls, value: dict[str, FieldSpec]) -> dict[str, FieldSpec]:
        bad = [n for n in value if not _PARAM_NAME.match(n)]
        if bad:
            msg = f"parameter names must match {_PARAM_NAME.pattern}: {bad}"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _one_runner(self) -> ToolDefinition:
        if self.mcp is not None:
            if self.run is not None or self.script is not None:
                msg = "a backend tool (mcp:) has no run: or script:"
                raise ValueError(msg)
            return self
        if not re.match(NAME_PATTERN, self.name):
            msg = f"name must match {NAME_PATTERN}"
            raise ValueError(msg)
        if (self.run is None) == (self.script is None):
            msg = "give exactly one of run: (an argv list) or script: (a path inside the image)"
            raise ValueError(msg)
        if self.run is not None and not self.run:
            msg = "run: must have at least the program"
            raise ValueError(msg)
        if self.script is not None and not self.script.startswith("/"):
            msg = "script: must be an absolute path inside the image"
            raise ValueError(msg)
        return self


def placement_problems(tool: ToolDefinition) -> list[tuple[Loc, str]]:
    """Template problems the model alone cannot see: located so the loader can name the line."""
    problems: list[tuple[Loc, str]] = []
    if tool.run is not None:
        problems.extend((("run", i), p) for i, p in templates.check_argv(tool.run, tool.parameters))
        if not _has_problem(problems, 0) and templates.refs(tool.run[0]):
            problems.append((("run", 0), "the program (argv[0]) must be literal, not a template"))
        problems.extend(_sensitive_in_argv(tool))
    if tool.script is not None and "{{" in tool.script:
        problems.append((("script",), "script: is a literal path; parameters reach it through "
                                      f"the {PARAMS_ENV} environment variable"))
    for key, value in tool.env.items():
        if not _ENV_NAME.match(key) or key == PARAMS_ENV:
            problems.append((("env", key), f"invalid or reserved environment variable name {key!r}"))
        problems.extend(_env_refs(tool, key, value))
    return problems


def _has_problem(problems: list[tuple[Loc, str]], index: int) -> bool:
    return any(loc == ("run", index) for loc, _ in problems)


def _sensitive_in_argv(tool: ToolDefinition) -> list[tuple[Loc, str]]:
    found: list[tuple[Loc, str]] = []
    for i, element in enumerate(tool.run or []):
        try:
            names = templates.refs(element)
        except templates.TemplateError:
            continue
        found.extend((("run", i), f"parameter {n!r} is sensitive: pass it through env:, never argv "
                                  "(argv is visible in process lists and the audit log)")
                     for n in names if n in tool.parameters and tool.parameters[n].sensitive)
    return found


def _env_refs(tool: ToolDefinition, key: str, value: str) -> list[tuple[Loc, str]]:
    try:
        names = templates.refs(value)
    except templates.TemplateError as exc:
        return [(("env", key), str(exc))]
    return [(("env", key), f"unknown parameter {n!r}") for n in names if n not in tool.parameters]
