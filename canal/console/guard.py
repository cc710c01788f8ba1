"""What every console request passes before any page sees it (an ASGI middleware):

- the peer is a loopback address (the console binds 127.0.0.1; this holds even if it were not);
- the Host header is ``localhost:PORT`` or ``127.0.0.1:PORT``: a page of another site that a DNS name
  rebinds to 127.0.0.1 sends its own name, and is refused (a GET on 127.0.0.1 is sent on to localhost,
  the only origin WebAuthn accepts here);
- a POST names the console's own Origin (``http://localhost:PORT``); one without an Origin is refused too.

Sessions and CSRF tokens are checked by each POST handler (``app.py``), which knows what it needs.
Every response carries a strict Content-Security-Policy (scripts from the console itself only), no
caching, and no framing.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from canal.console.errors import (
    CONSOLE_ORIGIN_REFUSED,
    CONSOLE_PEER_REFUSED,
    ConsoleError,
    ConsoleHostRefusedError,
)

SAFE_METHODS = ("GET", "HEAD")
HEADERS = (
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; "
                                 b"img-src 'self'; connect-src 'self'; form-action 'self'; "
                                 b"frame-ancestors 'none'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
Refused = Callable[[ConsoleError, Request], Response]


def own_origin(port: int) -> str:
    return f"http://localhost:{port}"


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check(request: Request, port: int) -> str | None:
    """Raise the refusal of a request that may not reach the console; a URL to redirect to, or None."""
    peer = request.client.host if request.client is not None else ""
    if not is_loopback(peer):
        msg = f"the console serves this machine only (127.0.0.1); a request came from {peer or 'nowhere'}"
        raise CONSOLE_PEER_REFUSED(msg, hint="open the console on the machine it runs on",
                                      details={"peer": peer})
    host = request.headers.get("host", "")
    if host not in (f"localhost:{port}", f"127.0.0.1:{port}"):
        msg = (f"the console answers to localhost:{port} only; this request names host {host[:100]!r} "
               "(a page of another site reaching it through DNS rebinding, or a proxy)")
        raise ConsoleHostRefusedError(msg, hint=f"open {own_origin(port)}/ in the browser",
                                      details={"host": host[:100]})
    if request.method in SAFE_METHODS:
        return f"{own_origin(port)}{request.url.path}" if host.startswith("127.") else None
    origin = request.headers.get("origin", "")
    if origin != own_origin(port):
        msg = (f"a {request.method} to the console must come from its own page ({own_origin(port)}); "
               f"this one names origin {origin[:100] or 'none'!r}")
        raise CONSOLE_ORIGIN_REFUSED(msg, hint=f"use the console's page at {own_origin(port)}/",
                                        details={"origin": origin[:100]})
    return None


class Guard:
    def __init__(self, app: ASGIApp, port: int, refused: Refused) -> None:
        self.app = app
        self.port = port
        self.refused = refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no websockets, no lifespan
        request = Request(scope)

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        response: Response | None = None
        try:
            target = check(request, self.port)
            if target is not None:
                response = RedirectResponse(target, status_code=303)
        except ConsoleError as exc:
            response = self.refused(exc, request)
        if response is not None:
            await response(scope, receive, secured)
            return
        await self.app(scope, receive, secured)
