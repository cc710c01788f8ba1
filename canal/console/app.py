"""The console's ASGI application: one project, one port, sessions in memory.

Requests pass the ``Guard`` (loopback peer, Host, Origin) first. Pages are GETs; the only POSTs are the
WebAuthn ceremonies (``ceremonies.py``) and logging out, each with a live session and its CSRF token.
Every refusal is recorded in the project's audit log (``console.refused``) and shown with its code.
Settings (approvers, passkeys) are read from the approved canal.yaml at each request, so an approved
change counts at once.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from canal.console.errors import (
    CONSOLE_CSRF_INVALID,
    ConsoleBadRequestError,
    ConsoleError,
    ConsoleSessionMissingError,
)
from canal.console.guard import Guard
from canal.console.sessions import Session, Sessions
from canal.console.templates import Pages
from canal.core.errors import CanalError
from canal.runtime.errors import error_json

if TYPE_CHECKING:
    from canal.runtime.api import Canal
    from canal.runtime.sandboxes.resources import Resources

log = logging.getLogger("canal.console")
COOKIE = "canal_console_{port}"  # cookies are not kept apart by port: each console has its own name
MAX_BODY = 64 * 1024
AUDITED = ("/api/login/", "/api/register/")
STATIC = {"console.js": "text/javascript", "console.css": "text/css"}


class RefusalBudget:
    """At most ``limit`` refusal records per ``window_s``: anyone on loopback can make refused requests,
    and each record is a durable write to the audit log the agent's commands also write. The refusals
    over the budget are counted; the next record after the window carries how many (``suppressed``)."""

    def __init__(self, limit: int = 30, window_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self._lock = threading.Lock()
        self._start = clock()
        self._used = 0
        self.suppressed = 0

    def take(self) -> int | None:
        """None: do not record this one; else the number suppressed before it (then reset)."""
        with self._lock:
            now = self.clock()
            if now - self._start >= self.window_s:
                self._start, self._used = now, 0
            if self._used >= self.limit:
                if not self.suppressed:
                    log.warning("more than %d refused console requests in %.0f s: recording no more of them "
                                "until the window ends", self.limit, self.window_s)
                self.suppressed += 1
                return None
            self._used += 1
            before, self.suppressed = self.suppressed, 0
            return before


class Console:
    def __init__(self, project_dir: Path, port: int, session_ttl_s: float,
                 resources: Resources | None = None) -> None:
        """``resources``: those of the Canal server it runs in (None: each page's Canal owns its own)."""
        self.project_dir = project_dir
        self.resources = resources
        self.port = port
        self.sessions = Sessions(session_ttl_s)
        self.pages = Pages()
        self.cookie = COOKIE.format(port=port)
        self.budget = RefusalBudget()

    @contextmanager
    def canal(self) -> Iterator[Canal]:
        """The project's ``Canal`` as canal.yaml says now (a fresh read of the approved settings), closed
        when the block ends."""
        from canal.runtime.api import Canal

        with Canal(self.project_dir, actor="console", resources=self.resources) as canal:
            yield canal

    # sessions --------------------------------------------------------------------------------
    def session(self, request: Request) -> Session | None:
        return self.sessions.get(request.cookies.get(self.cookie))

    def set_cookie(self, response: Response, session: Session) -> None:
        response.set_cookie(self.cookie, session.id, max_age=int(self.sessions.ttl_s), path="/",
                            httponly=True, samesite="strict")

    async def posted(self, request: Request, *, logged_in: bool) -> tuple[Session, dict[str, Any]]:
        """The session and body of a POST, after its session and CSRF token were checked."""
        session = self.session(request)
        if session is None or (logged_in and session.approver is None):
            why = "no live console session" if session is None else "this session has not logged in"
            ttl = int(self.sessions.ttl_s)
            msg = f"{why}: a {request.url.path} request needs one (sessions last {ttl} s)"
            raise ConsoleSessionMissingError(msg, hint=f"open http://localhost:{self.port}/login and log in")
        body = await self._body(request)
        given = request.headers.get("x-csrf-token") or body.get("csrf")
        if not session.csrf_ok(given if isinstance(given, str) else None):
            msg = "the request's CSRF token is missing or is not this session's"
            raise CONSOLE_CSRF_INVALID(msg, hint="reload the console's page and try again")
        return session, body

    async def _body(self, request: Request) -> dict[str, Any]:
        raw = await request.body()
        hint = "use the console's page"
        if len(raw) > MAX_BODY:
            msg = "the request is too large"
            raise ConsoleBadRequestError(msg, hint=hint)
        if request.headers.get("content-type", "").startswith("application/json"):
            try:
                data = json.loads(raw or b"{}")
            except ValueError as exc:
                msg = "the request is not JSON"
                raise ConsoleBadRequestError(msg, hint=hint) from exc
            if not isinstance(data, dict):
                msg = "the request is not a JSON object"
                raise ConsoleBadRequestError(msg, hint=hint)
            return data
        try:  # a form of the console's own pages (log out): urlencoded, one value per field
            fields = parse_qs(raw.decode(), max_num_fields=8, strict_parsing=False)
        except (UnicodeDecodeError, ValueError) as exc:
            msg = "the form is not one of the console's"
            raise ConsoleBadRequestError(msg, hint=hint) from exc
        return {k: v[0] for k, v in fields.items()}

    # refusals --------------------------------------------------------------------------------
    def audit_refusal(self, exc: CanalError, request: Request, **extra: Any) -> None:
        suppressed = self.budget.take()
        if suppressed is None:
            return
        details = {"code": exc.code, "message": exc.message, "method": request.method,
                   "path": request.url.path[:200],
                   "peer": request.client.host if request.client is not None else "", **extra}
        if suppressed:
            details["suppressed"] = suppressed  # refusals not recorded since the last record
        try:
            with self.canal() as canal:
                canal.audit.record("console.refused", details, actor="console")
        except CanalError:
            log.exception("could not record a refused console request")

    def refused(self, exc: CanalError, request: Request) -> Response:
        """Record a refusal and answer it: JSON to the page's script, a page to a browser."""
        if isinstance(exc, ConsoleError) or request.url.path.startswith(AUDITED):
            self.audit_refusal(exc, request)  # a decision's refusals are approval.refused (decide.py)
        return self.error_response(exc, request)

    def error_response(self, exc: CanalError, request: Request) -> Response:
        status = exc.status if isinstance(exc, ConsoleError) else 400
        error = error_json(exc)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": error}, status_code=status)
        session = self.sessions.get(request.cookies.get(self.cookie))
        return self.pages.render("error", status, title="Refused", page="", error=error,
                                 project=self.project_dir.name, csrf=session.csrf if session else "",
                                 approver=session.approver if session else None)


Handler = Callable[[Request], Awaitable[Response]]


def guarded(console: Console, handler: Handler) -> Handler:
    """``handler`` with Canal's errors turned into their refusal (recorded when it is the console's)."""
    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except CanalError as exc:
            return console.refused(exc, request)
    return run


def build(console: Console) -> Guard:
    from canal.console import ceremonies, pages, settings_ceremony

    async def static(request: Request) -> Response:
        name = str(request.path_params["name"])
        if name not in STATIC:
            return Response("not found", status_code=404)
        body = resources.files("canal.console").joinpath("static", name).read_bytes()
        return Response(body, media_type=STATIC[name])

    async def logout(request: Request) -> Response:
        session, _ = await console.posted(request, logged_in=False)
        console.sessions.drop(session)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(console.cookie, path="/")
        return response

    async def no_icon(request: Request) -> Response:
        return Response(status_code=204)

    routes: list[BaseRoute] = [Route("/static/{name}", static), Route("/favicon.ico", no_icon),
                               Route("/logout", guarded(console, logout), methods=["POST"])]
    routes += pages.routes(console) + ceremonies.routes(console) + settings_ceremony.routes(console)
    app = Starlette(routes=routes)
    return Guard(app, console.port, console.refused)
