"""``apply``: a fork's changes reach the real project only through the confirmation flow.

The approval is bound to the exact change set (a digest of every path and its new entry): if the
fork changes after the person said yes, the token no longer fits and nothing is applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from canal.core.errors import ConfirmationRequired
from canal.core.next import act
from canal.runtime.approvals import DecisionSummary
from canal.runtime.forks import ApplyResult

if TYPE_CHECKING:
    from canal.runtime.api import Canal

APPLY_CWD = "/workspace"
SHOWN_FILES = 50


def apply_fork(canal: Canal, name: str, paths: tuple[str, ...], confirm: str | None) -> ApplyResult:
    forks, approvals = canal.services.forks, canal.services.approvals
    chosen, digest = forks.plan(name, paths)
    if not chosen:
        return ApplyResult(fork=name, applied=[], checkpoint="")
    text = " ".join(["apply fork", name, *paths])  # what the token is bound to and a person is shown
    bound = f"changes:{digest}"
    if confirm is None:
        files = [f"{c.kind} {c.path}" + (f" ({c.detail})" if c.detail else "") for c in chosen]
        reason = f"apply {len(chosen)} change(s) from fork {name} to the real project"
        pending = approvals.request(text, name, APPLY_CWD, bound, DecisionSummary(("fork-apply",), reason),
                                    display=text)
        who = "human" if pending.needs_human else "agent"
        shown = "\n".join(f"  {f}" for f in files[:SHOWN_FILES])
        extra = len(files) - SHOWN_FILES
        more = f"\n  … and {extra} more (the fork's changes list them all)" if extra > 0 else ""
        msg = f"{reason}:\n{shown}{more}\nNothing was applied."
        again = act("fork.apply", name=name, paths=list(paths) or None, token=pending.token, approval=who)
        raise ConfirmationRequired(msg, hint="" if pending.needs_human else "ask the user", next=again,
                                   details={"token": pending.token, "files": files, "approval": who})
    approval = approvals.redeem(confirm, text, name, APPLY_CWD, bound)
    result = forks.apply(name, paths, actor=canal.actor, expect=digest)
    canal.services.audit.append("fork.applied", {
        "fork": name, "checkpoint": result.checkpoint, "changes": len(result.applied),
        "approver": f"{approval.approver} ({approval.how})", "approval": approval.token}, actor=canal.actor)
    return result
