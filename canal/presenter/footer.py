"""The last line of every result: ``[exit:N | 1.23s]`` plus why it ended when it was not a normal exit."""

from __future__ import annotations

from collections.abc import Sequence

from canal.host.storage.usage import format_size as format_size
from canal.sandbox.result import EndReason, ExecResult


def _seconds(s: float) -> str:
    return f"{s:g}s"


def end_reason(result: ExecResult) -> str:
    """Why the command stopped, for a reader; empty for a normal exit."""
    detail = f" ({result.detail})" if result.detail else ""
    match result.reason:
        case EndReason.EXITED:
            return ""
        case EndReason.HARD_TIMEOUT:
            after = f" after {_seconds(result.timeout_s)}" if result.timeout_s is not None else ""
            return f"killed: hard timeout{after}"
        case EndReason.IDLE_TIMEOUT:
            if result.idle_timeout_s is None:
                return "killed: no output for too long"
            return f"killed: no output for {_seconds(result.idle_timeout_s)}"
        case EndReason.OOM_KILLED:
            limit = result.memory_limit_bytes
            return "killed: out of memory" + (f" (limit {format_size(limit)})" if limit else "")
        case EndReason.KILLED:
            return f"killed{detail}"
        case EndReason.WORKSPACE_QUOTA:
            limit = result.quota_bytes
            used = result.quota_used_bytes
            size = f" (limit {format_size(limit)}, used {format_size(used or 0)})" if limit else ""
            return f"killed: workspace quota exceeded{size}"
        case EndReason.SANDBOX_VANISHED:
            return f"sandbox vanished{detail}"
        case EndReason.INTERRUPTED:
            return f"interrupted{detail}"
    return f"ended: {result.reason}"  # pragma: no cover - a reason added to Layer 1 later


def capped_note(result: ExecResult) -> str:
    """Said when a stream passed storage.output_per_stream and its middle was not kept."""
    dropped = result.stdout.dropped + result.stderr.dropped
    if not dropped:
        return ""
    return (f"output capped: {format_size(dropped)} dropped from the middle "
            "(storage.output_per_stream; first and last parts kept)")


def render_footer(result: ExecResult, extra: Sequence[str] = ()) -> str:
    """``[exit:0 | 0.42s]``; ``extra`` parts (e.g. the checkpoint taken before) go after the reason."""
    code = "-" if result.exit_code is None else str(result.exit_code)
    parts = [f"exit:{code}", f"{result.duration_s:.2f}s"]
    if reason := end_reason(result):
        parts.append(reason)
    if note := capped_note(result):
        parts.append(note)
    parts.extend(extra)
    return "[" + " | ".join(parts) + "]"
