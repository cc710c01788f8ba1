"""Turn a proof into an ``Approver``: the peer uid of a client on the approval door, or an SSH signature.

Each check names the approver from trusted configuration and returns the evidence that goes into the
approval record and the audit log; a failed check raises its own code (the caller records the refusal).
"""

from __future__ import annotations

import os
import pwd

from canal.host.approvals.errors import (
    APPROVER_IS_AGENT,
    APPROVER_UNKNOWN,
    APPROVERS_NOT_CONFIGURED,
)
from canal.host.approvals.identities import ApprovalsSettings
from canal.host.approvals.model import Approver
from canal.host.approvals.sshsig import NAMESPACE, signature_digest, verify

CONFIGURE_HINT = "add approvals.approvers to canal.yaml (docs/approvals.md); a person approves that change"


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def require_configured(settings: ApprovalsSettings) -> None:
    if not settings.approvers:
        msg = "this project names no approvers, so no person can prove who they are"
        raise APPROVERS_NOT_CONFIGURED(msg, hint=CONFIGURE_HINT)


def by_peer_uid(settings: ApprovalsSettings, peer_uid: int, agent_uid: int) -> Approver:
    """The approver running as ``peer_uid`` (from SO_PEERCRED); never the agent's own uid."""
    if peer_uid == agent_uid:
        msg = (f"the approving client runs as {_user_name(peer_uid)} (uid {peer_uid}), the agent's own user: "
               "the agent cannot approve its own commands")
        raise APPROVER_IS_AGENT(msg, hint="an approver decides it as their own OS user, naming the "
                                   f"agent's user {_user_name(agent_uid)}, or signs it with their key")
    require_configured(settings)
    found = settings.by_uid(peer_uid)
    if found is None:
        msg = f"{_user_name(peer_uid)} (uid {peer_uid}) is not an approver of this project"
        raise APPROVER_UNKNOWN(msg, hint=CONFIGURE_HINT, details={"uid": peer_uid})
    evidence = {"uid": peer_uid, "os_user": _user_name(peer_uid)}
    return Approver(user=found.name, how="os-user", evidence=evidence)


def by_signature(settings: ApprovalsSettings, message: bytes, signature: str) -> Approver:
    """The approver whose configured SSH key signed exactly ``message``."""
    require_configured(settings)
    found = verify(message, signature, settings.approvers)
    return Approver(user=found.name, how="ssh", key_name=(found.ssh_key or "").split(" ")[0],
                    evidence={"namespace": NAMESPACE, "message": message.decode(),
                              "signature": signature.strip(),
                              "signature_sha256": signature_digest(signature)})


def approve_ways(project: str, settings: ApprovalsSettings) -> dict[str, object]:
    """How this project's approvers can decide a token, as data for the front ends' words."""
    methods = sorted({m for a in settings.approvers for m in a.methods()})
    return {"methods": methods, "project": project, "agent_user": _user_name(os.geteuid()),
            "console_port": settings.console.port}
