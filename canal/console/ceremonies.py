"""The console's POSTs: the WebAuthn ceremonies, each an ``options`` call (the server makes and keeps a
one-time challenge in the session) and a ``verify`` call (the challenge the client data names is taken
from the session: unknown, used or stale is ``PASSKEY_REPLAYED``).

- register: for an approver named in canal.yaml; answers the ``passkeys`` line to add there. It makes
  nothing trusted: only the approved canal.yaml does.
- login: an assertion by one of the approver's configured passkeys; a new session on success.
- decide: an assertion over the SHA-256 of the decision's text (``ApprovalService.message`` with the
  reason's digest and a nonce), then ``decide_as`` with the evidence; refusals are ``approval.refused``.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from webauthn.helpers import bytes_to_base64url

from canal.console.app import Console, guarded
from canal.console.counts import SignCounts
from canal.console.errors import ConsoleBadRequestError
from canal.console.sessions import Challenge, Purpose, Session
from canal.runtime.admin.passkeys import (
    ENROL_HINT,
    ENROL_NEXT,
    Asserted,
    authentication_options,
    challenge_for,
    claimed_challenge,
    registration_options,
    verify_assertion,
    verify_registration,
)
from canal.runtime.admin.person import (
    APPROVER_UNKNOWN,
    PASSKEY_REPLAYED,
    ApprovalError,
    Approver,
    ApproverSpec,
    Decision,
)
from canal.runtime.api import Canal

REPLAY_HINT = "start again from the console's page: each challenge counts once, for two minutes"


def _approver(canal: Canal, name: object, *, enrolled: bool) -> ApproverSpec:
    """An approver of the settings approved last (never of an edit waiting for approval); to register
    (which trusts nothing), also one the edit on disk names, so a new approver can get their line."""
    wanted = str(name or "").strip()
    found = canal.settings.approvers().by_name(wanted)
    if found is None and not enrolled:
        found = canal.settings.status().snapshot.config.approvals.by_name(wanted)
    if found is None or (enrolled and not found.passkeys):
        what = "is not an approver of this project" if found is None else "has no passkey in canal.yaml"
        msg = f"{str(name)[:64]!r} {what}"
        if found is None:
            raise APPROVER_UNKNOWN(msg, hint="use a name under approvals.approvers in canal.yaml")
        raise APPROVER_UNKNOWN(msg, hint=ENROL_HINT, next=ENROL_NEXT)
    return found


def _credential(body: dict[str, Any]) -> dict[str, Any]:
    found = body.get("credential")
    if not isinstance(found, dict) or not isinstance(found.get("response"), dict):
        msg = "the request carries no passkey credential"
        raise ConsoleBadRequestError(msg, hint="use the console's page")
    return found


def _take(console: Console, session: Session, credential: dict[str, Any], purpose: Purpose) -> Challenge:
    claimed = claimed_challenge(credential)
    found = console.sessions.take(session, claimed, purpose)
    if found is None:
        msg = ("this passkey response answers a challenge the console did not hand to this session, or "
               "one already used or expired: a replayed or stale assertion")
        raise PASSKEY_REPLAYED(msg, hint=REPLAY_HINT)
    return found


def _issue(console: Console, session: Session, challenge: Challenge) -> None:
    console.sessions.remember(session, bytes_to_base64url(challenge.value), challenge)


def _sign_options(console: Console, session: Session, approver: ApproverSpec, purpose: Purpose,
                  message: bytes, **fields: str) -> Response:
    """The options of a passkey assertion over ``message`` (its SHA-256 is the challenge), remembered for
    this session with ``fields``; the page shows the message that is signed."""
    value = challenge_for(message)
    _issue(console, session, Challenge(purpose, value, approver.name, console.sessions.clock(),
                                       message=message, **fields))
    return JSONResponse({"publicKey": authentication_options(approver.passkeys, value),
                         "message": message.decode()})


class Ceremonies:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.clock = console.sessions.clock

    def counts(self, canal: Canal) -> SignCounts:
        return SignCounts(canal.host_folders["state"] / "console")

    async def register_options(self, request: Request) -> Response:
        session, body = await self.console.posted(request, logged_in=False)
        with self.console.canal() as canal:
            approver = await run_in_threadpool(_approver, canal, body.get("approver"), enrolled=False)
            value = secrets.token_bytes(32)
            _issue(self.console, session, Challenge("register", value, approver.name, self.clock()))
            return JSONResponse({"publicKey": registration_options(approver, canal.project_id, value)})

    async def register_verify(self, request: Request) -> Response:
        session, body = await self.console.posted(request, logged_in=False)
        challenge = _take(self.console, session, _credential(body), "register")
        line = verify_registration(_credential(body), challenge.value, self.console.port)
        with self.console.canal() as canal:
            await run_in_threadpool(canal.audit.record, "console.registered",
                                    {"approver": challenge.approver, "credential_id": line.split(":")[0]},
                                    actor="console")
        yaml = (f"approvals:\n  approvers:\n    - name: {challenge.approver}\n      passkeys:\n"
                f"        - \"{line}\"")
        return JSONResponse({"line": line, "yaml": yaml, "approver": challenge.approver,
                             "next": f"canal -C {self.console.project_dir} config approve (by an approver)"})

    async def login_options(self, request: Request) -> Response:
        session, body = await self.console.posted(request, logged_in=False)
        with self.console.canal() as canal:
            approver = await run_in_threadpool(_approver, canal, body.get("approver"), enrolled=True)
        value = secrets.token_bytes(32)
        _issue(self.console, session, Challenge("login", value, approver.name, self.clock()))
        return JSONResponse({"publicKey": authentication_options(approver.passkeys, value)})

    async def login_verify(self, request: Request) -> Response:
        session, body = await self.console.posted(request, logged_in=False)
        credential = _credential(body)
        challenge = _take(self.console, session, credential, "login")
        with self.console.canal() as canal:
            asserted = await run_in_threadpool(self._assert, canal, credential, challenge)
            fresh = self.console.sessions.log_in(session, asserted.approver.name)
            await run_in_threadpool(canal.audit.record, "console.login",
                                    {"approver": asserted.approver.name,
                                     "credential_id": asserted.credential_id},
                                    actor=asserted.approver.name)
        response = JSONResponse({"approver": asserted.approver.name, "next": "/approvals"})
        self.console.set_cookie(response, fresh)
        return response

    def _assert(self, canal: Canal, credential: dict[str, Any], challenge: Challenge) -> Asserted:
        counts = self.counts(canal)
        in_force = canal.settings.approvers()  # the approvers of the settings approved last
        asserted = verify_assertion(in_force, credential, challenge.value, self.console.port,
                                    counts.get(str(credential.get("id") or "")), only=challenge.approver)
        counts.set(asserted.credential_id, asserted.sign_count)
        return asserted

    async def decide_options(self, request: Request) -> Response:
        session, body = await self.console.posted(request, logged_in=True)
        decision: Decision = "deny" if body.get("decision") == "deny" else "approve"
        token, reason = str(body.get("token") or ""), str(body.get("reason") or "").strip()[:500]
        assert session.approver is not None
        return await run_in_threadpool(self._decide_options, session, session.approver, token, decision,
                                       reason)

    def _decide_options(self, session: Session, name: str, token: str, decision: Decision,
                        reason: str) -> Response:
        with self.console.canal() as canal:
            approvals = canal.approvals
            try:
                approver = _approver(canal, name, enrolled=True)
                message = approvals.message(token, decision, {
                    "approver": name, "reason-sha256": hashlib.sha256(reason.encode()).hexdigest(),
                    "nonce": secrets.token_hex(16)})
            except ApprovalError as exc:
                approvals.refused(exc, token=token, decision=decision, method="passkey", approver=name)
                raise
        return _sign_options(self.console, session, approver, "decide", message, token=token,
                             decision=decision, reason=reason)

    async def decide_verify(self, request: Request) -> Response:
        session, body = await self.console.posted(request, logged_in=True)
        return await run_in_threadpool(self._decide_verify, session, _credential(body))

    def _decide_verify(self, session: Session, credential: dict[str, Any]) -> Response:
        with self.console.canal() as canal:
            return self._decided(canal, session, credential)

    def _decided(self, canal: Canal, session: Session, credential: dict[str, Any]) -> Response:
        approvals = canal.approvals
        challenge: Challenge | None = None
        try:
            challenge = _take(self.console, session, credential, "decide")
            asserted = self._assert(canal, credential, challenge)
        except ApprovalError as exc:
            approvals.refused(exc, token=challenge.token if challenge else "", method="passkey",
                              decision=challenge.decision if challenge else "", approver=session.approver,
                              credential_id=str(credential.get("id") or "")[:200])
            raise
        approver = Approver(user=asserted.approver.name, how="passkey", key_name=asserted.credential_id[:16],
                            evidence={**asserted.evidence, "message": challenge.message.decode()})
        decision: Decision = "deny" if challenge.decision == "deny" else "approve"
        done = approvals.decide_as(challenge.token, decision, challenge.reason, approver)
        if done.status == "denied":
            words = f"denied {done.token}; the agent reads: {done.denied_reason}"
        else:
            words = (f"approved {done.token} as {done.approved_by}; the agent's re-run executes it once: "
                     f"canal run --confirm {done.token} -- {done.command}")
        return JSONResponse({"pending": done.to_json(), "message": words})


def routes(console: Console) -> list[BaseRoute]:
    c = Ceremonies(console)
    api = (("register/options", c.register_options), ("register/verify", c.register_verify),
           ("login/options", c.login_options), ("login/verify", c.login_verify),
           ("decide/options", c.decide_options), ("decide/verify", c.decide_verify))
    return [Route(f"/api/{path}", guarded(console, handler), methods=["POST"]) for path, handler in api]

