"""Policy files: the YAML schema (pydantic, extra=forbid) and loading with file/rule/position errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from canal.policy.errors import PolicyLoadError

Positions = dict[tuple[Any, ...], tuple[int, int]]
# libyaml's loader when PyYAML has it: the same safe constructor, a tenth of the pure-Python parser's time
# (the shipped profile took 80 ms to read and locate at every policy load)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Examples(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = ()


class RuleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)
    description: str = ""
    decision: Literal["allow", "confirm", "deny"]
    expression: str = Field(min_length=1, max_length=4000)
    programs: tuple[str, ...] = ()  # index hint: program basename, or "program subcommand"
    when: tuple[Literal["trusted_path", "opaque", "opaque_name", "substitution", "dynamic_args",
                        "background", "stdin_piped", "recursive", "code_exec", "writes_device"], ...] = ()
    # "tool": a call to an MCP backend's tool (facts: server, tool, args, read_only, destructive,
    # idempotent, open_world, unattended); its examples are JSON objects of those facts
    scope: Literal["segment", "command", "step", "tool"] = "segment"
    # In a fork nobody is asked: a confirm rule allows there (the workspace is a copy), unless this says
    # deny (the rule guards something a fork still reaches: secrets the output would show, the network).
    in_fork: Literal["deny"] | None = None
    message: str = ""
    examples: Examples = Examples()


class PolicyFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    version: Literal[1] = 1
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    description: str = ""
    extends: str | None = None
    default: Literal["allow", "confirm"]
    # "none": a command the rules say to confirm runs without asking (the autonomous profile of forks,
    # whose workspace is a copy: nothing outside it can be harmed). Deny rules still deny.
    confirmations: Literal["ask", "none"] = "ask"
    rules: tuple[RuleSpec, ...] = ()


def _positions(text: str) -> Positions:
    """(key path) -> (line, column), 1-based, for the rules list and each rule's fields."""
    out: Positions = {}
    root = yaml.compose(text, Loader=LOADER)
    if not isinstance(root, yaml.MappingNode):
        return out
    for key, value in root.value:
        out[(key.value,)] = (key.start_mark.line + 1, key.start_mark.column + 1)
        if key.value == "rules" and isinstance(value, yaml.SequenceNode):
            for i, item in enumerate(value.value):
                out[("rules", i)] = (item.start_mark.line + 1, item.start_mark.column + 1)
                if isinstance(item, yaml.MappingNode):
                    for k, v in item.value:
                        out[("rules", i, k.value)] = (v.start_mark.line + 1, v.start_mark.column + 1)
    return out


def _nearest(positions: Positions, loc: tuple[Any, ...]) -> tuple[int, int]:
    for n in range(len(loc), 0, -1):
        if loc[:n] in positions:
            return positions[loc[:n]]
    return (1, 1)


def read_policy_file(path: Path, text: str | None = None) -> tuple[PolicyFile, Positions]:
    """Parse and validate one policy file; raise PolicyLoadError naming file, rule and position."""
    try:
        text = path.read_text(encoding="utf-8") if text is None else text
    except OSError as exc:
        msg = f"cannot read policy file {path}: {exc.strerror}"
        raise PolicyLoadError(msg, file=str(path)) from None
    try:
        raw = yaml.load(text, Loader=LOADER)
        positions = _positions(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        msg = f"{path}:{line}:{col}: not valid YAML: {getattr(exc, 'problem', exc)}"
        raise PolicyLoadError(msg,
                              file=str(path), line=line, column=col) from None
    try:
        return PolicyFile.model_validate(raw), positions
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        line, col = _nearest(positions, loc)
        rule = _rule_id(raw, loc)
        where = ".".join(str(p) for p in loc) or "(top level)"
        msg = f"{path}:{line}:{col}: {where}: {first['msg']}"
        raise PolicyLoadError(msg, file=str(path), rule=rule,
                              line=line, column=col) from None


def _rule_id(raw: Any, loc: tuple[Any, ...]) -> str:
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int) and isinstance(raw, dict):
        rules = raw.get("rules")
        if isinstance(rules, list) and loc[1] < len(rules) and isinstance(rules[loc[1]], dict):
            return str(rules[loc[1]].get("id", f"#{loc[1] + 1}"))
    return ""
