"""The only ways the engine reaches the world: protocols that ``runtime`` implements.

- ``StepExecutor`` runs one automated step through the run pipeline (policy, sandbox, presenter, audit).
- ``RunStore`` keeps run documents, sealing the values at ``sensitive_paths``, with compare-and-swap.
- ``ToolCatalog`` answers what a tool takes and whether it is idempotent.
- ``EventHook`` receives every transition for the audit log. Event data never carries gate values or
  results: only ids, statuses, field names and exit codes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from canal.workflows.errors import WorkflowError
from canal.workflows.fields import FieldSpec

OutcomeStatus = Literal["ok", "failed", "confirmation_required", "denied", "error"]
JsonPath = tuple[str, ...]
EventHook = Callable[[str, Mapping[str, Any]], None]


def no_events(name: str, data: Mapping[str, Any]) -> None:
    """The default hook: drops events (the runtime passes its audit log instead)."""


@dataclass(frozen=True)
class StepRequest:
    """One attempt of one automated step. Exactly one of ``argv`` and ``tool`` is set.

    ``argv`` elements are final: each is passed as one argument, never through a shell. ``inputs``
    are the tool's rendered input mapping (values keep their types). ``result_format`` says how a
    ``run`` step's stdout becomes its result (tools declare their own). ``secrets`` are the sensitive
    gate values of the run: the runtime masks them in audit records and presented output.
    """

    run_id: str
    step_id: str
    attempt: int
    argv: tuple[str, ...] | None = None
    tool: str | None = None
    inputs: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    result_format: Literal["json", "text"] = "text"
    timeout_s: float | None = None
    confirm_token: str | None = None
    unattended: bool = False
    secrets: tuple[str, ...] = ()


@dataclass(frozen=True)
class StepOutcome:
    """What happened. ``failed`` = it ran and failed (non-zero exit); ``error`` = it could not run or its
    result could not be parsed; ``denied`` = policy refused; ``confirmation_required`` = nothing ran and
    the run must wait for ``confirmation_token``. ``output`` is the presented (already redacted) text."""

    status: OutcomeStatus
    exit_code: int | None = None
    result: Any = None
    output: str = ""
    reason: str = ""
    confirmation_token: str | None = None
    confirmation_reason: str | None = None
    confirmation_rule_ids: tuple[str, ...] = ()
    confirmation_expires_at: str = ""
    confirmation_approval: Literal["agent", "human"] = "agent"
    code: str | None = None  # for ``error``: the code of what stopped it (TOOL_ARGS_INVALID, ...)


class StepExecutor(Protocol):
    def execute(self, request: StepRequest) -> StepOutcome: ...


@dataclass(frozen=True)
class StoredRun:
    doc: dict[str, Any]  # unsealed
    revision: int


class RunStore(Protocol):
    """Run documents by id. ``sensitive_paths`` are JSON paths (keys) whose values must be sealed at rest.

    ``create`` raises ``RUN_CONFLICT`` when the id exists; ``load`` raises ``RUN_NOT_FOUND``;
    ``save`` raises ``RUN_CONFLICT`` when the stored revision is not ``expected_revision``.
    Revisions start at 1 and grow by one per save.
    """

    def create(self, run_id: str, doc: Mapping[str, Any], *, sensitive_paths: Sequence[JsonPath]) -> int: ...

    def load(self, run_id: str) -> StoredRun: ...

    def save(self, run_id: str, doc: Mapping[str, Any], *, expected_revision: int,
             sensitive_paths: Sequence[JsonPath]) -> int: ...

    def list_ids(self) -> list[str]: ...


class ToolInfo(Protocol):
    @property
    def parameters(self) -> Mapping[str, FieldSpec]: ...

    @property
    def idempotent(self) -> bool: ...


class ToolCatalog(Protocol):
    """``get`` returns ``None``, or raises ``LookupError`` or a ``TOOL_NOT_FOUND`` error, for an unknown tool.

    ``workflows.tools.registry.ToolRegistry`` has this shape.
    """

    def get(self, name: str) -> ToolInfo | None: ...


def lookup_tool(catalog: ToolCatalog, name: str) -> ToolInfo | None:
    try:
        return catalog.get(name)
    except LookupError:
        return None
    except WorkflowError as exc:
        if exc.code == "TOOL_NOT_FOUND":
            return None
        raise


@dataclass(frozen=True)
class StaticTool:
    parameters: Mapping[str, FieldSpec] = field(default_factory=dict)
    idempotent: bool = False


@dataclass(frozen=True)
class StaticCatalog:
    """A fixed catalog: for tests and for projects that have no tools."""

    tools: Mapping[str, StaticTool] = field(default_factory=dict)

    def get(self, name: str) -> StaticTool | None:
        return self.tools.get(name)
