"""The result of one ``canal run``: the same model the Python API returns and ``--json`` prints."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from canal.core.errors import ExitCode
from canal.core.next import NextAction
from canal.sandbox.result import ExecResult

Status = Literal["ok", "failed", "confirmation_required", "denied", "timeout", "killed", "error"]


class DecisionView(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    action: Literal["allow", "confirm", "deny"]
    rule_ids: list[str] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    source: str = "rule"
    policy_hash: str = ""


class ConfirmationView(BaseModel):
    """The one shape of a confirmation in every JSON result and MCP ``_meta`` that asks for one (run,
    apply, tool calls, tasks, workflow steps): ``rerun`` is the front end's words for the same call
    with the token (filled in by the front end; empty in the library's own result)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token: str
    reason: str
    rule_ids: list[str] = Field(default_factory=list)
    expires_at: str
    approval: Literal["agent", "human"] = "agent"
    rerun: str = ""


def iso_time(ts: float) -> str:
    """A confirmation's ``expires_at``: ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


class BackupView(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    trash_id: str  # what ``restore`` takes to put it back
    path: str


class NotCoveredView(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    reason: str


class CheckpointView(BaseModel):
    """The checkpoint taken before the command: how to undo it, and what it did not cover."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str  # what ``undo`` takes to put the workspace back as it was before this command
    not_covered: list[NotCoveredView] = Field(default_factory=list)
    not_covered_total: int = 0


class RunResult(BaseModel):
    """What one command did. ``text`` is the presenter's view (what an agent reads); for a refusal, the
    code and what happened, with the next step in the words of the front end that asked (``say``)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    status: Status
    exit_code: int | None
    reason: str
    duration_s: float
    output: str = ""
    stderr: str = ""
    output_file: str | None = None
    decision: DecisionView | None = None
    confirmation: ConfirmationView | None = None
    backups: list[BackupView] = Field(default_factory=list)
    checkpoint: CheckpointView | None = None
    sandbox: str = ""
    audit_id: str | None = None
    notices: list[str] = Field(default_factory=list)  # e.g. an earlier run left without its outcome
    hint: str = ""  # for a refusal: what to do, in words for every reader
    next: list[NextAction] = Field(default_factory=list)  # for a refusal: the actions, as data
    text: str = Field(default="", exclude=True)
    exec_result: ExecResult | None = Field(default=None, exclude=True)

    @property
    def refused(self) -> bool:
        """Nothing ran: the policy denied it, or it waits for a confirmation (front ends print it on
        stderr, leaving stdout to what commands print)."""
        return self.status in ("confirmation_required", "denied")

    def process_exit_code(self) -> int:
        """The exit status of ``canal run``: the command's own, or Canal's documented code."""
        if self.status in ("ok", "failed") and self.exit_code is not None:
            return self.exit_code
        if self.reason.startswith("interrupted") and self.exit_code is not None:
            return self.exit_code  # 128 + the client's signal, as a shell reports it
        return {
            "confirmation_required": ExitCode.CONFIRMATION_REQUIRED,
            "denied": ExitCode.POLICY_DENIED,
            "timeout": ExitCode.TIMEOUT,
            "killed": ExitCode.KILLED,
        }.get(self.status, ExitCode.CANAL_ERROR)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @model_serializer(mode="wrap")
    def _keep_text_on_the_wire(self, handler: SerializerFunctionWrapHandler,
                               info: SerializationInfo) -> dict[str, Any]:
        """The API through the server carries ``text`` too (``runtime.calls``); ``--json`` does not."""
        data: dict[str, Any] = handler(self)
        if isinstance(info.context, dict) and info.context.get("wire"):
            data["text"] = self.text
        return data
