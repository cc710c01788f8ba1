"""Approving changed trusted settings (canal.yaml) with a passkey, as ``canal config approve`` does with
another OS user or an SSH signature: the approvers that count are those of the settings approved last.

The assertion is over the SHA-256 of the text an SSH approver signs for the same change (decision
``approve-config``, project, digest, expiry five minutes ahead); it goes into the ``config.approve``
audit record as evidence. A refusal is a ``config.refused`` record with ``method: passkey``.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from canal.console.app import Console, guarded
from canal.console.ceremonies import Ceremonies, _approver, _credential, _sign_options, _take
from canal.console.sessions import Session
from canal.runtime.admin.person import ApprovalError, Approver
from canal.runtime.api import Canal

SIGN_WITHIN_S = 300


def _refused(canal: Canal, exc: ApprovalError, digest: str, approver: str | None) -> None:
    canal.audit.record("config.refused", {"code": exc.code, "message": exc.message, "digest": digest,
                                          "method": "passkey", "approver": approver}, actor="console")


class SettingsCeremony:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.ceremonies = Ceremonies(console)

    async def options(self, request: Request) -> Response:
        session, body = await self.console.posted(request, logged_in=True)
        return await run_in_threadpool(self._options, session, str(body.get("digest") or ""))

    def _options(self, session: Session, digest: str) -> Response:
        assert session.approver is not None
        with self.console.canal() as canal:
            try:
                approver = _approver(canal, session.approver, enrolled=True)
            except ApprovalError as exc:
                _refused(canal, exc, digest, session.approver)
                raise
            expires = int(time.time()) + SIGN_WITHIN_S
            message = canal.settings.message(digest, expires)
        return _sign_options(self.console, session, approver, "config", message, token=digest)

    async def verify(self, request: Request) -> Response:
        session, body = await self.console.posted(request, logged_in=True)
        return await run_in_threadpool(self._verify, session, _credential(body))

    def _verify(self, session: Session, credential: dict[str, Any]) -> Response:
        digest = ""
        with self.console.canal() as canal:
            try:
                challenge = _take(self.console, session, credential, "config")
                digest = challenge.token
                asserted = self.ceremonies._assert(canal, credential, challenge)
                approver = Approver(user=asserted.approver.name, how="passkey",
                                    key_name=asserted.credential_id[:16],
                                    evidence={**asserted.evidence, "message": challenge.message.decode()})
                record = canal.settings.approve_as(approver, digest)
            except ApprovalError as exc:
                _refused(canal, exc, digest, session.approver)
                raise
        return JSONResponse({"digest": record.digest, "approved_by": record.approved_by, "how": record.how,
                             "message": f"the settings {record.digest[:19]} are approved by "
                                        f"{record.approved_by} (passkey); they apply from the next command"})


def routes(console: Console) -> list[BaseRoute]:
    ceremony = SettingsCeremony(console)
    return [Route("/api/config/options", guarded(console, ceremony.options), methods=["POST"]),
            Route("/api/config/verify", guarded(console, ceremony.verify), methods=["POST"])]
