"""What the approval door answers: show a pending token (and the text an SSH approver signs), decide it,
and the same for changed trusted settings. The proof is the client's uid from the kernel, or a signature.
Only a configured approver's uid, or the agent's own, is shown a pending token or changed settings.

The project is named by the caller; it must be a folder with Canal state already (the door never makes
state for a path it is handed), and a token must carry this host's tag before anything is looked up.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from canal.core.errors import CanalError
from canal.host.approvals.decide import Decision, Proof, decide
from canal.host.approvals.errors import ApprovalError, ApprovalForgedError
from canal.host.approvals.verify import by_peer_uid
from canal.runtime.errors import error_json

log = logging.getLogger("canal.server")


def _services(request: dict[str, Any]) -> Any:
    from canal.host.paths import state_path_for
    from canal.runtime.services import Services

    project = Path(str(request.get("project") or "")).resolve()
    known = state_path_for(project)
    if not project.is_dir() or not known.is_dir():
        msg = f"{project} is not a project this Canal server knows"
        raise ApprovalForgedError(msg, hint="pass the project folder the agent's message names (-C DIR)")
    return Services(project)


def handle(peer_uid: int, request: dict[str, Any]) -> dict[str, Any]:
    try:
        return _dispatch(peer_uid, request)
    except CanalError as exc:
        log.info("approval door refused uid %d: %s", peer_uid, exc.code)
        return {"error": error_json(exc)}


def _dispatch(peer_uid: int, request: dict[str, Any]) -> dict[str, Any]:
    op = str(request.get("op") or "")
    services = _services(request)
    if op in ("show", "decide"):
        approvals = services.approvals
        token = str(request.get("token") or "")
        if op == "show":
            _may_see(approvals, token, peer_uid)
            pending = approvals.show(token)
            return {"pending": pending.to_json(), "agent_uid": os.geteuid(),
                    "messages": {d: approvals.message(token, d).decode() for d in ("approve", "deny")}}
        decision: Decision = "deny" if request.get("decision") == "deny" else "approve"
        signature = request.get("signature")
        proof = Proof(peer_uid=peer_uid, signature=str(signature) if signature else None)
        done = decide(approvals, token, decision, str(request.get("reason") or ""), proof, os.geteuid())
        return {"pending": done.to_json()}
    if op in ("config-show", "config-approve"):
        return _config(services, op, peer_uid, request)
    msg = f"the approval door has no operation {op!r}"
    raise ApprovalForgedError(msg, hint="update canal on the approver's side")


def _may_see(approvals: Any, token: str, peer_uid: int) -> None:
    """A pending approval (its command, rule, reason and the text to sign) is shown to the agent's own
    uid and to a configured approver's uid only: any local user may knock and the project path is in
    the agent's messages. Anyone else is refused (APPROVER_UNKNOWN, or APPROVERS_NOT_CONFIGURED), audited."""
    try:
        _viewer(approvals.settings, peer_uid)
    except ApprovalError as exc:
        approvals.refused(exc, token=token, op="show", method="os-user", peer_uid=peer_uid)
        raise


def _viewer(settings: Any, peer_uid: int) -> None:
    if peer_uid != os.geteuid():
        by_peer_uid(settings, peer_uid, os.geteuid())


def _config(services: Any, op: str, peer_uid: int, request: dict[str, Any]) -> dict[str, Any]:
    from canal.runtime.trust.decide import approve_config

    trust = services.trust
    status = trust.status()
    if op == "config-show":  # the changed settings, shown as to an approver: the same viewers as show
        try:
            _viewer(trust.approvers(), peer_uid)
        except ApprovalError as exc:
            if trust.audit is not None:
                details = {"code": exc.code, "message": exc.message, "op": op, "peer_uid": peer_uid,
                           "method": "os-user"}
                trust.audit.append("config.refused", details, actor="canal")
            raise
        expires = int(request.get("expires") or 0)
        message = trust.message(status.snapshot.digest, expires).decode()
        return {"status": status.to_json(), "message": message}
    signature = request.get("signature")
    proof = Proof(peer_uid=peer_uid, signature=str(signature) if signature else None)
    record = approve_config(trust, str(request.get("digest") or ""), proof, os.geteuid(),
                            expires=int(request.get("expires") or 0) or None)
    return {"approved": {"digest": record.digest, "approved_by": record.approved_by, "how": record.how}}
