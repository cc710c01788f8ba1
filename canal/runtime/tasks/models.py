"""A background task's record: what ``canal task list --json`` prints and what the state folder keeps.

One 0600 JSON file per task (``<state>/tasks/<id>.json``, schema ``v``), rewritten atomically when the
task starts and when it ends. The command is stored redacted.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TaskState = Literal["running", "exited", "killed", "timed_out"]

# why a task ended (its ``reason``) -> the state list shows
REASON_STATE: dict[str, TaskState] = {
    "exited": "exited",
    "hard_timeout": "timed_out",
    "cancelled": "killed",
    "sandbox_down": "killed",
    "server_stopped": "killed",
    "closed": "killed",
    "lost": "killed",
    "killed": "killed",
}
REASON_TEXT = {
    "cancelled": "cancelled",
    "sandbox_down": "killed: its sandbox was removed",
    "server_stopped": "killed: the Canal server stopped",
    "closed": "killed: the Canal object that ran it was closed",
    "lost": "killed: the sandbox's background agent ended",
    "killed": "killed",
}


def new_task_id() -> str:
    """``t-`` and 6 random hex digits: short to type, unlikely to repeat across projects."""
    return f"t-{secrets.token_hex(3)}"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ForwardView(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str  # 127.0.0.1:8080
    port: int  # inside the sandbox


class TaskRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[1] = 1
    id: str
    project: str  # the project folder it belongs to
    name: str | None = None
    sandbox: str
    command: str  # redacted
    state: TaskState = "running"
    exit_code: int | None = None
    reason: str = ""  # "" while it runs; a key of REASON_STATE once it ended
    detail: str = ""
    started_at: str
    ended_at: str | None = None
    duration_s: float | None = None  # once it ended
    timeout_s: float
    output_bytes: int = 0
    dropped_bytes: int = 0  # past the output cap, not kept
    output_cap: int
    output_file: str  # where the sandbox sees the whole output (read-only)
    forwards: list[ForwardView] = Field(default_factory=list)
    checkpoint: str | None = None
    audit_started: str
    audit_ended: str | None = None
    actor: str = "agent"
    runner: dict[str, Any] = Field(default_factory=dict)  # the Canal process it runs in (audit/dangling.py)
    marks: list[tuple[float, int]] = Field(default_factory=list)  # (unix time, output offset) samples

    @property
    def running(self) -> bool:
        return self.state == "running"

    def ending(self) -> str:
        """Why it ended, for a reader ("" while it runs or after a normal exit)."""
        if self.reason == "hard_timeout":
            text = f"killed: hard timeout after {self.timeout_s:g}s"
        else:
            text = REASON_TEXT.get(self.reason, "")
        return f"{text} ({self.detail})" if text and self.detail else text or self.detail

    def summary(self) -> dict[str, Any]:
        """The columns of ``canal task list``."""
        return {"id": self.id, "name": self.name, "sandbox": self.sandbox, "state": self.state,
                "exit_code": self.exit_code, "duration_s": self.duration_s, "output_bytes": self.output_bytes,
                "command": self.command, "ending": self.ending()}

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude={"marks", "runner"})
        data["ending"] = self.ending()
        return data
