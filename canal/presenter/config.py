"""Thresholds of the presenter: the ``presenter:`` section of ``canal.yaml``, overridable per call.

Example::

    presenter:
      max_lines: 200          # more lines than this: show head_lines + tail_lines and save the rest
      max_bytes: 16384        # more bytes than this: the same, so one huge line cannot flood
      show_stderr_on_success: false
      stderr_on_success: auto  # a runner's (or a silent stdout's) stderr tail on success

Per call: ``config.model_copy(update={"max_lines": 500})``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from canal.presenter.runners import DEFAULT_RUNNERS

KIB = 1024


@dataclass(frozen=True)
class StreamLimits:
    """How much of one stream (stdout or stderr) is shown."""

    max_lines: int
    head_lines: int
    tail_lines: int
    max_bytes: int
    head_bytes: int
    tail_bytes: int
    max_line_bytes: int


class PresenterConfig(BaseModel):
    """What the model sees of each command's output. Every size counts raw bytes of the output."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_lines: int = Field(default=200, ge=1)
    head_lines: int = Field(default=50, ge=1)
    tail_lines: int = Field(default=20, ge=0)
    max_bytes: int = Field(default=16 * KIB, ge=256)
    head_bytes: int = Field(default=10 * KIB, ge=64)
    tail_bytes: int = Field(default=5 * KIB, ge=0)
    max_line_bytes: int = Field(default=4 * KIB, ge=64)

    show_stderr_on_success: bool = False  # true: all of stderr on success, as on failure
    # auto: on success, the last lines of stderr when stdout is empty or the command is a known test or
    # build runner (their summaries go to stderr: presenter/success.py); never: stderr only on failure
    stderr_on_success: Literal["auto", "never"] = "auto"
    stderr_success_lines: int = Field(default=20, ge=1)
    stderr_success_bytes: int = Field(default=3 * KIB, ge=256)
    stderr_runners: tuple[str, ...] = DEFAULT_RUNNERS
    stderr_max_lines: int = Field(default=60, ge=1)
    stderr_head_lines: int = Field(default=20, ge=1)
    stderr_tail_lines: int = Field(default=30, ge=0)
    stderr_max_bytes: int = Field(default=8 * KIB, ge=256)

    binary_sample_bytes: int = Field(default=8 * KIB, ge=64, le=1024 * KIB)
    binary_threshold: float = Field(default=0.30, gt=0, le=1)
    chunk_bytes: int = Field(default=1024 * KIB, ge=4 * KIB, le=64 * 1024 * KIB)
    # A spooled output is hard-linked into the output folder when it is on the same filesystem
    # (no copy of a 1 GB log); false always copies (in the kernel when it can).
    link_spooled: bool = True
    # Save a long text output redacted while it still arrives (presenter/early.py). Off: on two shared
    # cores it measured no faster, up to 14% slower under load (docs/benchmarks.md, "Big outputs"); it
    # can only gain where a core is free for it while the output arrives
    save_while_running: bool = False

    @model_validator(mode="after")
    def _fits(self) -> PresenterConfig:
        if self.head_lines + self.tail_lines > self.max_lines:
            msg = "head_lines + tail_lines must not exceed max_lines"
            raise ValueError(msg)
        if self.head_bytes + self.tail_bytes > self.max_bytes:
            msg = "head_bytes + tail_bytes must not exceed max_bytes"
            raise ValueError(msg)
        if self.stderr_head_lines + self.stderr_tail_lines > self.stderr_max_lines:
            msg = "stderr_head_lines + stderr_tail_lines must not exceed stderr_max_lines"
            raise ValueError(msg)
        return self

    def stdout_limits(self) -> StreamLimits:
        return StreamLimits(self.max_lines, self.head_lines, self.tail_lines, self.max_bytes,
                            self.head_bytes, self.tail_bytes, self.max_line_bytes)

    def stderr_limits(self) -> StreamLimits:
        total = self.stderr_max_bytes
        head = total * 2 // 5  # the end of stderr (a traceback's last lines) matters most
        return StreamLimits(self.stderr_max_lines, self.stderr_head_lines, self.stderr_tail_lines, total,
                            head, total - head, min(self.max_line_bytes, total // 2))
