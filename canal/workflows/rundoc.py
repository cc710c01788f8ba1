"""The run document: everything the engine knows about one run, persisted through a ``RunStore``.

Structure stays readable at rest (which step, which status); the values that may carry secrets are
listed by ``sensitive_paths`` so the store seals them: gate fields marked sensitive, every step result,
the presented output and errors of steps, the pending confirmation and the failure reason.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from canal.workflows.model import Definition
from canal.workflows.ports import JsonPath, OutcomeStatus

SCHEMA_VERSION = 1

RunStatus = Literal["waiting_input", "ready", "running", "waiting_confirmation", "needs_attention",
                    "completed", "failed", "aborted"]
StepStatus = Literal["pending", "started", "completed", "failed", "awaiting_confirmation", "interrupted"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "aborted"})


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_run_id() -> str:
    return "wr_" + secrets.token_hex(6)


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class Owner(_Doc):
    """The process running automated steps; used to tell a crash from a run still in progress."""

    host: str
    pid: int
    start_ticks: int | None = None


class StepRecord(_Doc):
    status: StepStatus = "pending"
    attempts: int = 0
    started_at: str | None = None
    finished_at: str | None = None
    outcome: OutcomeStatus | None = None
    exit_code: int | None = None
    output: str | None = None
    error: str | None = None


class Confirmation(_Doc):
    step: str
    token: str
    reason: str
    # added for the one confirmation shape (issue 32); a run saved before has the defaults
    rule_ids: list[str] = Field(default_factory=list)
    expires_at: str = ""
    approval: Literal["agent", "human"] = "agent"


class Failure(_Doc):
    step: str
    code: str
    reason: str
    compensated_by: str | None = None


class RunDoc(_Doc):
    schema_version: Literal[1] = 1
    run_id: str
    workflow: str
    version: str
    definition_digest: str
    definition: Definition
    status: RunStatus
    current_step: str | None
    unattended: bool = False
    owner: Owner | None = None
    created_at: str = Field(default_factory=now)
    updated_at: str = Field(default_factory=now)
    gate: dict[str, dict[str, Any]] = Field(default_factory=dict)
    results: dict[str, Any] = Field(default_factory=dict)
    steps: dict[str, StepRecord] = Field(default_factory=dict)
    confirmation: Confirmation | None = None
    failure: Failure | None = None
    attention: str | None = None

    def record(self, step_id: str) -> StepRecord:
        return self.steps.setdefault(step_id, StepRecord())

    def to_json(self) -> dict[str, Any]:
        """The document as JSON data. The definition part is shared: a store must not mutate it."""
        data = self.model_dump(mode="json", by_alias=True, exclude={"definition"})
        data["definition"] = _definition_json(self.definition)
        return data

    def sensitive_values(self) -> list[str]:
        """Sensitive gate values as text, longest first: masked wherever they show up in output."""
        found: list[str] = []
        for step_id, values in self.gate.items():
            fields = self.definition.step(step_id).fields
            for name, value in values.items():
                if name in fields and fields[name].sensitive and isinstance(value, str) and value:
                    found.append(value)
        return sorted(set(found), key=len, reverse=True)


def sensitive_paths(doc: RunDoc) -> list[JsonPath]:
    paths: list[JsonPath] = []
    for step_id, values in doc.gate.items():
        fields = doc.definition.step(step_id).fields
        paths.extend(("gate", step_id, name) for name in values if name in fields and fields[name].sensitive)
    paths.extend(("results", step_id) for step_id in doc.results)
    for step_id, record in doc.steps.items():
        if record.output is not None:
            paths.append(("steps", step_id, "output"))
        if record.error is not None:
            paths.append(("steps", step_id, "error"))
    if doc.confirmation is not None:
        paths.extend([("confirmation", "token"), ("confirmation", "reason")])
    if doc.failure is not None:
        paths.append(("failure", "reason"))
    if doc.attention is not None:
        paths.append(("attention",))
    return paths


# A pinned definition never changes, and it is most of a run document: parse and dump it once per
# process (keyed by content digest, confirmed by equality) instead of on every load and save.
_PARSED: dict[str, tuple[dict[str, Any], Definition]] = {}


def _definition_json(definition: Definition) -> dict[str, Any]:
    cached = _PARSED.get(definition.digest)
    if cached is not None and cached[1] is definition:
        return cached[0]
    return definition.model_dump(mode="json", by_alias=True)


def _cached_definition(raw: Any) -> Definition:
    digest = raw.get("digest") if isinstance(raw, dict) else None
    cached = _PARSED.get(digest) if isinstance(digest, str) else None
    if cached is not None and cached[0] == raw:
        return cached[1]
    definition = Definition.model_validate(raw)
    _PARSED[definition.digest] = (definition.model_dump(mode="json", by_alias=True), definition)
    return definition


def parse_doc(data: dict[str, Any]) -> RunDoc:
    return RunDoc.model_validate({**data, "definition": _cached_definition(data.get("definition"))})
