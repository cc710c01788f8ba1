"""``apply``: a fork's changes reach the real project only through the confirmation flow.

The approval is bound to the exact change set (a digest of every path and its new entry): if the
fork changes after the person said yes, the token no longer fits and nothing is applied. The trusted
configuration guard of the file operations holds here too: a change to canal.yaml (at any depth), the
project's policy files, anything under .git/ or a .gitattributes is refused (``PATH_PROTECTED``, each
named) unless a person runs the apply (``person=True``: the front end's person check).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

from canal.core.display import visible
from canal.core.errors import ConfirmationRequired
from canal.core.next import act
from canal.host.approvals import DecisionSummary
from canal.host.approvals.verify import approve_ways
from canal.host.checkpoints import Change
from canal.host.files import Protected
from canal.host.files.errors import PATH_PROTECTED
from canal.host.forks import ApplyResult
from canal.runtime.run.result import ConfirmationView, iso_time
from canal.runtime.trust.snapshot import settings_files

if TYPE_CHECKING:
    from canal.runtime.api import Canal

APPLY_CWD = "/workspace"
SHOWN_FILES = 50


def apply_fork(canal: Canal, name: str, paths: tuple[str, ...], confirm: str | None, *,
               person: bool = False) -> ApplyResult:
    forks, approvals = canal._services.forks, canal._services.approvals
    chosen, digest = forks.plan(name, paths)
    if not chosen:
        return ApplyResult(fork=name, applied=[], checkpoint="")
    if not person:
        _refuse_protected(canal, name, chosen)
    text = " ".join(["apply fork", name, *paths])  # what the token is bound to and a person is shown
    bound = f"changes:{digest}"
    if confirm is None:
        files = [visible(f"{c.kind} {c.path}" + (f" ({c.detail})" if c.detail else "")) for c in chosen]
        reason = f"apply {len(chosen)} change(s) from fork {name} to the real project"
        pending = approvals.request(text, name, APPLY_CWD, bound, DecisionSummary(("fork-apply",), reason),
                                    display=text)
        who: Literal["agent", "human"] = "human" if pending.needs_human else "agent"
        shown = "\n".join(f"  {f}" for f in files[:SHOWN_FILES])
        extra = len(files) - SHOWN_FILES
        more = f"\n  … and {extra} more (the fork's changes list them all)" if extra > 0 else ""
        msg = f"{reason}:\n{shown}{more}\nNothing was applied."
        settings = canal._services.config.approvals
        ways = approve_ways(str(canal.project_dir), settings) if who == "human" else None
        again = act("fork.apply", name=name, paths=list(paths) or None, token=pending.token, approval=who,
                    approvers=ways)
        confirmation = ConfirmationView(token=pending.token, reason=reason, rule_ids=["fork-apply"],
                                        expires_at=iso_time(pending.expires_at), approval=who)
        raise ConfirmationRequired(msg, hint="" if pending.needs_human else "ask the user", next=again,
                                   details={"token": pending.token, "files": files, "approval": who,
                                            "confirmation": confirmation.model_dump(mode="json")})
    approval = approvals.redeem(confirm, text, name, APPLY_CWD, bound)
    result = forks.apply(name, paths, actor=canal.actor, expect=digest)
    canal._services.audit.append("fork.applied", {
        "fork": name, "checkpoint": result.checkpoint, "changes": len(result.applied),
        "approver": f"{approval.approver} ({approval.how})", "approval": approval.token}, actor=canal.actor)
    return result


def _refuse_protected(canal: Canal, name: str, chosen: Sequence[Change]) -> None:
    """The agent's apply may not carry changes to Canal's settings or git's code-running files."""
    guard = Protected.of(settings_files(canal._services.project_dir))
    hits = [(c.path, why) for c in chosen if (why := guard.why(PurePosixPath(c.path))) is not None]
    if not hits:
        return
    shown = "; ".join(f"{visible(path)} ({why})" for path, why in hits[:SHOWN_FILES])
    more = f"; and {len(hits) - SHOWN_FILES} more" if len(hits) > SHOWN_FILES else ""
    msg = (f"Fork {name} changes protected files: {shown}{more}. The agent's apply may not carry them; "
           "nothing was applied.")
    others = sorted({c.path for c in chosen} - {path for path, _ in hits})
    actions = [act("fork.apply", name=name, paths=others[:20])] if others else []
    raise PATH_PROTECTED(msg, hint="a person applies them (the same apply, run in a terminal), or apply "
                        "only the other paths", next=actions,
                        details={"fork": name, "protected": [path for path, _ in hits], "others": others})
