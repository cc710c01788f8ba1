"""Turn the agent's final reply (a checked ``protocol.RunReply``) into an ``ExecResult``: exit code, end
reason, limits hit (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from canal.sandbox.protocol import RunReply
from canal.sandbox.result import CapturedOutput, EndReason, ExecResult

TIMEOUT_EXIT = 124
KILLED_EXIT = 137
SIGNAL_NUMBERS = {"HUP": 1, "INT": 2, "TERM": 15, "PIPE": 13}


@dataclass(frozen=True)
class Call:
    """What was asked, for the result's record."""

    timeout_s: float | None
    idle_timeout_s: float | None
    memory_limit_bytes: int | None


def limits_hit(reply: RunReply) -> tuple[str, ...]:
    hit = []
    if reply.oom_kills > 0:
        hit.append("memory")
    if reply.pid_limit_hits > 0:
        hit.append("pids")
    return tuple(hit)


def _reason_and_detail(reply: RunReply, call: Call) -> tuple[EndReason, str]:
    reason = reply.reason
    hit = limits_hit(reply)
    notes = [reply.detail] if reply.detail else []
    if reason is EndReason.HARD_TIMEOUT:
        notes.append(f"hard timeout after {call.timeout_s}s; every process of the command was killed")
    elif reason is EndReason.IDLE_TIMEOUT:
        notes.append(f"no output for {call.idle_timeout_s}s; every process of the command was killed")
    elif reason is EndReason.INTERRUPTED:
        notes.append(f"{_interrupted_by(reply)}; every process of the command was killed")
    if "memory" in hit:
        notes.append(f"memory limit of {call.memory_limit_bytes} bytes reached: a process was OOM-killed")
        if reason is EndReason.EXITED and reply.exit_code == KILLED_EXIT:
            reason = EndReason.OOM_KILLED
    if "pids" in hit:
        notes.append("the process limit was reached (a fork bomb?); every process it started was killed")
        if reason is EndReason.EXITED:
            reason = EndReason.KILLED
    if reason is EndReason.WORKSPACE_QUOTA:
        notes.append("the workspace grew past its quota; every process of the command was killed")
    if reply.swept:
        notes.append(f"{reply.swept} process(es) the command left running were killed when it ended")
    if reply.survivors:
        notes.append(f"processes survived the kill: {list(reply.survivors)}")
    return reason, "; ".join(notes)


def _interrupted_by(reply: RunReply) -> str:
    signal = reply.signal or ""
    if signal in SIGNAL_NUMBERS:
        return f"SIG{signal} from the client"
    return "the client went away"


def to_result(reply: RunReply, stdout: CapturedOutput, stderr: CapturedOutput, duration_s: float,
              call: Call) -> ExecResult:
    reason, detail = _reason_and_detail(reply, call)
    code = reply.exit_code
    if reason in (EndReason.HARD_TIMEOUT, EndReason.IDLE_TIMEOUT):
        code = TIMEOUT_EXIT
    elif reason in (EndReason.KILLED, EndReason.WORKSPACE_QUOTA) and code is None:
        code = KILLED_EXIT
    elif reason is EndReason.INTERRUPTED:
        code = 128 + SIGNAL_NUMBERS.get(reply.signal or "", 9)
    return ExecResult(stdout=stdout, stderr=stderr, exit_code=code,
                      duration_s=duration_s, reason=reason, timeout_s=call.timeout_s,
                      idle_timeout_s=call.idle_timeout_s, memory_limit_bytes=call.memory_limit_bytes,
                      detail=detail, limits_hit=limits_hit(reply),
                      survivors=tuple(reply.survivors),
                      quota_bytes=reply.quota.limit if reply.quota else None,
                      quota_used_bytes=reply.quota.used if reply.quota else None,
                      session=reply.state.session() if reply.state else None)
