"""The HTTP side of ``canal swerex serve``: SWE-ReX's routes, its API key header, its error shape.

An error SWE-ReX's client re-raises travels as status 511 with ``{"swerexception": {message, class_path,
traceback, extra_info}}``; a wrong or missing key is 401 with ``{"detail": "Invalid API Key"}``, as
SWE-ReX's own server answers. Every refusal is in the audit log (``swerex.refused``) with what was asked.
Each request runs in a worker thread (the pipeline blocks).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from canal.swerex.service import ACTOR, VALUE_ERROR, SwerexError, SwerexService

API_KEY_HEADER = "X-API-Key"
MAX_BODY = 64 * 1024 * 1024
Handler = Callable[[dict[str, Any]], dict[str, Any]]
Endpoint = Callable[[Request], Awaitable[Response]]


class _Gate:
    """The API key check and the refusal shape, shared by every route."""

    def __init__(self, service: SwerexService, api_key: str) -> None:
        self.audit = service.canal.audit
        self.key = api_key.encode()

    def refused(self, route: str, err: SwerexError) -> JSONResponse:
        record = {"route": route, "class": err.class_path, "message": err.message[:2000]}
        self.audit.record("swerex.refused", record, actor=ACTOR)
        return JSONResponse({"swerexception": err.transfer()}, status_code=511)

    def guarded(self, route: str, inner: Endpoint) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            if not hmac.compare_digest(request.headers.get(API_KEY_HEADER, "").encode(), self.key):
                self.audit.record("swerex.refused", {"route": route, "class": "unauthorized"}, actor=ACTOR)
                return JSONResponse({"detail": "Invalid API Key"}, status_code=401)
            try:
                return await inner(request)
            except SwerexError as err:
                return self.refused(route, err)

        return endpoint


def _json(handler: Handler) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_BODY:
            raise SwerexError(VALUE_ERROR, f"request body over {MAX_BODY} bytes")
        try:
            data = json.loads(body or b"{}")
        except ValueError as exc:
            raise SwerexError(VALUE_ERROR, f"malformed request: {exc}") from None
        if not isinstance(data, dict):
            raise SwerexError(VALUE_ERROR, "the request body is not a JSON object")
        return JSONResponse(await run_in_threadpool(handler, data))

    return endpoint


def _upload(service: SwerexService) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        async with request.form(max_files=1, max_fields=8, max_part_size=MAX_BODY) as form:
            file, target = form.get("file"), form.get("target_path")
            if file is None or isinstance(file, str) or not isinstance(target, str):
                raise SwerexError(VALUE_ERROR, "an upload needs a file and a target_path")
            data = await file.read()
            unzip = str(form.get("unzip", "false")).lower() == "true"
        return JSONResponse(await run_in_threadpool(service.upload, target, data, unzip=unzip))

    return endpoint


async def _alive(_: Request) -> Response:
    return JSONResponse({"is_alive": True, "message": ""})


async def _root(_: Request) -> Response:
    return JSONResponse({"message": "hello world"})


def make_app(service: SwerexService, api_key: str) -> Starlette:
    gate = _Gate(service, api_key)
    handlers: dict[str, Handler] = {
        "/create_session": service.create_session, "/run_in_session": service.run_in_session,
        "/close_session": service.close_session, "/execute": service.execute,
        "/read_file": service.read_file, "/write_file": service.write_file,
        "/close": lambda _: service.close()}
    routes = [Route("/", _root), Route("/is_alive", gate.guarded("/is_alive", _alive)),
              Route("/upload", gate.guarded("/upload", _upload(service)), methods=["POST"])]
    routes += [Route(path, gate.guarded(path, _json(handler)), methods=["POST"])
               for path, handler in handlers.items()]
    return Starlette(routes=routes)
