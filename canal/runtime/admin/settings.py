"""``Canal.settings``: whether canal.yaml (and its policy files) is approved, and a verified person
approving it (``runtime/trust/``, docs/approvals.md).

``status`` and ``approvers`` only read (``SettingsAPI``: through the server too). Approving is in-process
only: ``approve`` checks a proof (the client's uid, an SSH signature, a person at a terminal while no
approvers are named) as ``canal config approve`` does; ``approve_as`` takes a person the caller identified
(a passkey the console checked); ``message`` is the exact text such a person signs.
"""

from __future__ import annotations

from canal.host.approvals import ApprovalsSettings, Approver
from canal.host.approvals.decide import Proof
from canal.runtime.services import Services
from canal.runtime.trust import TrustStatus, decide
from canal.runtime.trust.store import TrustRecord


class Settings:
    def __init__(self, services: Services) -> None:
        self._services = services

    # -- reading (SettingsAPI) ------------------------------------------------------------------
    def status(self) -> TrustStatus:
        """The settings on disk against the approval: ``defaults``, ``approved``, ``tightened`` or
        ``unapproved``, with each setting that changed (and whether it loosens)."""
        return self._services.trust.status()

    def approvers(self) -> ApprovalsSettings:
        """Who may approve: the approvers of the settings approved last (never the edit's own)."""
        return self._services.trust.approvers()

    # -- in-process only: a person approves -----------------------------------------------------
    def message(self, digest: str, expires: int) -> bytes:
        """The exact text an approver signs to approve the settings ``digest`` until ``expires``."""
        return self._services.trust.message(digest, expires)

    def approve(self, digest: str, proof: Proof, *, agent_uid: int, expires: int | None = None,
                terminal_user: str | None = None) -> TrustRecord:
        """Check ``proof`` against the approvers in force, then record the content ``digest`` as approved;
        refusals are recorded (``config.refused``). ``terminal_user``: the person at this terminal, who
        counts only while no approvers are named."""
        return decide.approve_config(self._services.trust, digest, proof, agent_uid, expires=expires,
                                     terminal_user=terminal_user)

    def approve_as(self, approver: Approver, digest: str) -> TrustRecord:
        """Record the content ``digest`` as approved by a person the caller identified."""
        return self._services.trust.approve(approver, digest)
