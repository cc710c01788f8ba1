"""The typed form of a workflow definition: ``WorkFlow.md`` front matter and one model per step file.

Parsed once at load (extra keys are refused); the engine never touches raw YAML after that. A run keeps
a dump of its ``Definition`` so it finishes with the version it started with.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from canal.workflows.fields import FieldSpec

StepType = Literal["interactive", "automated", "notification"]
ResultFormat = Literal["json", "text"]

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
STEP_ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
FIELD_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class WorkflowMeta(_Strict):
    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field(min_length=1, max_length=200)
    version: str = "1"

    @model_validator(mode="before")
    @classmethod
    def _version_as_text(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("version"), int | float):
            data = {**data, "version": str(data["version"])}
        return data


class Gate(_Strict):
    fields: dict[str, FieldSpec] = Field(default_factory=dict, alias="schema")


class RetryPolicy(_Strict):
    attempts: int = Field(default=1, ge=1, le=10)
    backoff_s: float = Field(default=0.0, ge=0.0, le=300.0)
    backoff_factor: float = Field(default=2.0, ge=1.0, le=10.0)

    def delay_before(self, attempt: int) -> float:
        """Seconds to wait before ``attempt`` (2, 3, ...): backoff_s, then multiplied by the factor."""
        return float(self.backoff_s * self.backoff_factor ** max(0, attempt - 2))


class Automation(_Strict):
    tool: str | None = None
    run: list[str] | None = Field(default=None, min_length=1)
    input_mapping: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    result: ResultFormat = "text"
    timeout_s: float | None = Field(default=None, gt=0, le=86400)

    @model_validator(mode="after")
    def _one_action(self) -> Automation:
        if (self.tool is None) == (self.run is None):
            msg = "automation needs exactly one of 'tool' or 'run'"
            raise ValueError(msg)
        if self.run is not None and self.input_mapping:
            msg = "'input_mapping' applies to 'tool' steps; a 'run' step puts values in its argv or env"
            raise ValueError(msg)
        return self


class StepFront(_Strict):
    """The YAML front matter of one step file."""

    id: str = Field(pattern=STEP_ID_PATTERN)
    type: StepType
    title: str = ""
    gate: Gate | None = None
    automation: Automation | None = None
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    on_failure: str = "stop"
    idempotent: bool = False
    compensation: bool = False

    @model_validator(mode="after")
    def _shape(self) -> StepFront:
        if self.type == "automated" and self.automation is None:
            msg = "an automated step needs an 'automation' block"
            raise ValueError(msg)
        if self.type != "automated" and self.automation is not None:
            msg = f"'automation' applies to automated steps, not {self.type}"
            raise ValueError(msg)
        if self.type != "interactive" and self.gate is not None:
            msg = f"'gate' applies to interactive steps, not {self.type}"
            raise ValueError(msg)
        if self.compensation and self.type != "automated":
            msg = "a compensation step must be automated"
            raise ValueError(msg)
        return self


class StepDef(StepFront):
    """A step with where it came from and its instructions (the Markdown body)."""

    order: int
    file: str
    instructions: str = ""

    @property
    def fields(self) -> dict[str, FieldSpec]:
        return self.gate.fields if self.gate else {}


class Definition(_Strict):
    meta: WorkflowMeta
    steps: list[StepDef]
    digest: str
    overview: str = ""

    def step(self, step_id: str) -> StepDef:
        for step in self.steps:
            if step.id == step_id:
                return step
        msg = f"no step {step_id!r} in workflow {self.meta.name!r}"
        raise KeyError(msg)

    def main_steps(self) -> list[StepDef]:
        """The normal sequence: every step except compensation steps, in file order."""
        return [s for s in self.steps if not s.compensation]

    def next_main_step(self, step_id: str) -> StepDef | None:
        main = self.main_steps()
        ids = [s.id for s in main]
        index = ids.index(step_id)
        return main[index + 1] if index + 1 < len(main) else None
