"""``Canal.approvals``: confirmations waiting for a person, and a verified person deciding them
(``host/approvals/``, docs/approvals.md).

``pending`` and ``show`` only read (``ApprovalsAPI``: through the server too). Deciding is in-process only,
for a front end that verified the person: ``decide`` checks a proof (the client's uid, an SSH signature)
the way the approval door does; ``decide_as``, ``approve`` and ``deny`` take a person already identified
(a passkey the console checked, an answer the MCP client asked for); ``message`` is the exact text such a
person signs; ``refused`` records an attempt that failed before a decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canal.core.errors import CanalError
from canal.host.approvals import Approver, Pending
from canal.host.approvals.decide import Decision, Proof, decide, decide_as
from canal.runtime.services import Services


class Approvals:
    def __init__(self, services: Services) -> None:
        self._services = services

    # -- reading (ApprovalsAPI) -----------------------------------------------------------------
    def pending(self) -> list[Pending]:
        """Confirmations not yet used and not expired, oldest first (their commands redacted)."""
        return self._services.approvals.pending()

    def show(self, token: str) -> Pending:
        """What a usable token confirms (for a person about to decide it)."""
        return self._services.approvals.show(token)

    # -- in-process only: a person decides ------------------------------------------------------
    def message(self, token: str, decision: Decision, extra: Mapping[str, str | int] | None = None) -> bytes:
        """The exact text an approver signs to ``decision`` ``token`` (``extra`` lines follow it)."""
        return self._services.approvals.message(token, decision, extra)

    def decide(self, token: str, decision: Decision, reason: str, proof: Proof, *, agent_uid: int) -> Pending:
        """Check ``proof`` against the approvers (``agent_uid``'s own never counts), then record the
        decision; every refusal is recorded (``approval.refused``)."""
        return decide(self._services.approvals, token, decision, reason, proof, agent_uid)

    def decide_as(self, token: str, decision: Decision, reason: str, approver: Approver) -> Pending:
        """Record the decision of a person the caller identified; a refusal is recorded."""
        return decide_as(self._services.approvals, token, decision, reason, approver)

    def approve(self, token: str, approver: Approver) -> Pending:
        return self._services.approvals.approve(token, approver)

    def deny(self, token: str, approver: Approver, reason: str) -> Pending:
        return self._services.approvals.deny(token, approver, reason)

    def refused(self, error: CanalError, **details: Any) -> None:
        """Record an approval attempt refused before any decision (who tried, how, the code it got)."""
        self._services.approvals.refused(error, **details)
