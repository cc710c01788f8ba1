"""The field schema shared by workflow gates and tool parameters, and validation of submitted data.

A field: ``{type, required, desc, enum, default, pattern, sensitive}``. Validation never raises on bad
data: it returns what was accepted, what is missing, what is wrong, and what was dropped, so the
reply to an agent can list every problem at once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from canal.core.display import refuse_hidden

FieldType = Literal["string", "integer", "number", "boolean", "array", "object"]

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: FieldType = "string"
    required: bool = False
    desc: str = ""
    enum: list[Any] | None = None
    default: Any = None
    pattern: str | None = None
    sensitive: bool = False

    @field_validator("desc")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return refuse_hidden(value, "desc")

    @model_validator(mode="after")
    def _check(self) -> FieldSpec:
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:  # not a ValueError: pydantic would let it escape unreported
                msg = f"pattern {self.pattern!r} is not a valid regular expression: {exc}"
                raise ValueError(msg) from None
        if self.pattern is not None and self.type != "string":
            msg = "pattern applies to string fields only"
            raise ValueError(msg)
        return self


Schema = Mapping[str, FieldSpec]


@dataclass(frozen=True)
class FieldProblem:
    field: str
    problem: str


@dataclass(frozen=True)
class ValidationOutcome:
    values: dict[str, Any]
    missing: list[tuple[str, str]] = field(default_factory=list)  # (name, description)
    errors: list[FieldProblem] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.errors


def _type_ok(spec: FieldSpec, value: Any) -> bool:
    if spec.type in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _PY_TYPES[spec.type])


def _check_value(name: str, spec: FieldSpec, value: Any) -> str | None:
    if not _type_ok(spec, value):
        return f"expected {spec.type}, got {type(value).__name__}"
    if spec.enum is not None and value not in spec.enum:
        return f"must be one of {spec.enum}"
    if spec.pattern is not None and not re.fullmatch(spec.pattern, value):
        return f"must match pattern {spec.pattern}"
    return None


def validate_fields(schema: Schema, data: Mapping[str, Any]) -> ValidationOutcome:
    """Check ``data`` against ``schema``; defaults fill absent optional fields."""
    values: dict[str, Any] = {}
    missing: list[tuple[str, str]] = []
    errors: list[FieldProblem] = []
    for name, spec in schema.items():
        if name not in data or data[name] is None:
            if spec.required:
                missing.append((name, spec.desc))
            elif spec.default is not None:
                values[name] = spec.default
            continue
        problem = _check_value(name, spec, data[name])
        if problem:
            errors.append(FieldProblem(name, problem))
        else:
            values[name] = data[name]
    dropped = sorted(k for k in data if k not in schema)
    return ValidationOutcome(values=values, missing=missing, errors=errors, dropped=dropped)
