"""Human approval through the MCP client (elicitation), when the operator set ``policy.approval: human``.

The client shows the person the command, the rule and the reason, and asks yes or no and their name.
The answer is recorded by the approval service (who, how, when) and lands in the audit log. This
trusts the client to put the question in front of a person: a harness that answers elicitations
by itself would approve for them. Operators who cannot trust their client start the server with
``--no-elicit``, and the person approves with ``canal approve TOKEN`` in a terminal instead.
"""

from __future__ import annotations

import contextlib
import getpass
import os
from typing import Any

import mcp_types as types
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.session import ServerSession
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from canal.core.display import visible
from canal.core.errors import CanalError
from canal.runtime.admin.approvals import Approvals
from canal.runtime.admin.person import Approver, Pending

# The approval record's ``how`` names the channel; until it knows "elicitation", the person is
# recorded as a terminal user with the channel spelled out in their name.
ELICITATION_HOW = "elicitation"


class ApprovalAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    approve: bool = Field(description="Run this command now?")
    name: str = Field(default="", description="Your name, recorded in the audit log with this approval")


def client_can_elicit(session: ServerSession) -> bool:
    caps = session.client_capabilities
    if caps is None or caps.elicitation is None:
        return False
    form, url = caps.elicitation.form, caps.elicitation.url
    return form is not None or url is None  # an empty capability means form mode (spec, 2025-06-18)


def client_name(session: ServerSession) -> str:
    params = session.client_params
    info = params.client_info if params is not None else None
    return f"{info.name} {info.version}".strip() if info is not None else "an MCP client"


def question(pending: Pending, tool: str) -> str:
    rules = visible(", ".join(pending.rule_ids) or "-")
    return (f"The agent asks to run, through Canal ({tool}):\n\n  $ {visible(pending.command)}\n\n"
            f"sandbox {visible(pending.sandbox)}; rule {rules}: {visible(pending.reason)}\nApprove it?")


def approver_for(answer: ApprovalAnswer, session: ServerSession) -> Approver:
    person = answer.name.strip()[:80] or _os_user()
    client = client_name(session)
    return Approver(user=f"{person} (via {client})", how="elicitation")


def record_decline(approvals: Approvals, token: str, client: str) -> None:
    """A "no" in the client is the person's decision: the token leaves the pending list (``canal
    approvals``), and the agent re-running with it reads the refusal. Approvals that only count
    stronger proof refuse the record; the token then stays pending for an approver, as before."""
    person = Approver(user=f"{_os_user()} (via {client})", how="elicitation")
    with contextlib.suppress(CanalError):
        approvals.deny(token, person, f"declined when asked in {client}")


async def ask_person(session: ServerSession, pending: Pending, tool: str,
                     request_id: types.RequestId | None) -> ApprovalAnswer | None:
    """The person's answer, or None when they declined, dismissed, or sent something unreadable."""
    schema: Any = render_elicitation_schema(ApprovalAnswer)
    result = await session.elicit_form(question(pending, tool), schema, related_request_id=request_id)
    if result.action != "accept" or result.content is None:
        return None
    try:
        answer = ApprovalAnswer.model_validate(result.content)
    except ValidationError:
        return None
    return answer if answer.approve else None


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid:{os.getuid()}"
